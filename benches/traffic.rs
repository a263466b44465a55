//! Frame CPU time of the Traffic view (the live flow list), measured through egui_kittest (the
//! real UI code, no GPU) at 1024×700: each frame is the app applying that frame's proxy events,
//! the egui pass and the tessellation of its shapes — as `benches/timeline.rs` measures.
//!
//! - Live: 10,000 rows kept, 20 new requests a second (one every third frame at 60 Hz), each
//!   ending half a second after it started, the list following the newest. Target: p95 ≤ 8 ms.
//! - Filtering while it goes on: the same stream, and every frame the filter changes (a model
//!   typed and erased letter by letter, the status class switched, a text searched), so the
//!   shown rows are computed again over all 10,000. Target: no frame over 16 ms.
//!
//! Prints p50/p95/max of each, as frame CPU time (the thread's CPU clock) and as wall time.

use std::time::Instant;

use egui_kittest::Harness;
use promptwire::app::proxy::{RecordEvent, ServerKind};
use promptwire::app::session_view::filter::StatusClass;
use promptwire::app::traffic::{TrafficCommand, TrafficFilter};
use promptwire::app::{
    AppCommand, AppEvent, AppOptions, AppState, CommandReceiver, CommandSender, Settings,
    command_channel,
};
use promptwire::store::{OutcomeRecord, RecordedState};
use promptwire::transport::proxy::ProxyEvent;
use promptwire::ui::traffic::{TrafficUi, list_ui};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Rows the list holds when the measure starts.
const ROWS: u64 = 10_000;
/// Frames measured per scenario (ten seconds at 60 Hz).
const FRAMES: usize = 600;
/// A request starts every this many frames (20 a second at 60 Hz).
const EVERY: usize = 3;
/// Frames from a request's start to its end.
const LASTS: usize = 30;

struct Panel {
    state: AppState,
    ui: TrafficUi,
    tx: CommandSender,
    rx: CommandReceiver,
}

const MODELS: [&str; 4] = ["gpt-5.5", "gpt-5.5-mini", "gpt-6.2-sol", "gpt-5.3-codex"];

fn proxy(event: ProxyEvent) -> AppEvent {
    AppEvent::Record(RecordEvent::Event {
        kind: ServerKind::Proxy,
        event: Box::new(event),
    })
}

fn started(state: &mut AppState, n: u64) {
    state.apply_event(proxy(ProxyEvent::RequestStarted {
        exchange: n,
        method: "POST".to_string(),
        url: format!("https://api.openai.com/v1/responses?turn={n}"),
        dialect: Some("standard".to_string()),
    }));
}

fn ended(state: &mut AppState, n: u64) {
    let failed = n.is_multiple_of(17);
    let outcome = OutcomeRecord {
        state: if failed {
            RecordedState::Failed
        } else {
            RecordedState::Completed
        },
        server_model: Some(MODELS[(n % 4) as usize].to_string()),
        usage: Some(serde_json::json!({
            "input_tokens": 20_000 + n,
            "input_tokens_details": {"cached_tokens": 19_456},
            "output_tokens": 310
        })),
        total_us: Some(1_200_000 + (n as i64 % 900) * 1000),
        ..OutcomeRecord::default()
    };
    state.apply_event(proxy(ProxyEvent::Outcome {
        exchange: n,
        status: Some(if failed { 500 } else { 200 }),
        outcome: Box::new(outcome),
        turn: None,
    }));
}

fn harness() -> Harness<'static, Panel> {
    let (tx, rx) = command_channel(None);
    let mut state = AppState::new(Settings::default(), AppOptions::default());
    let t0 = Instant::now();
    for n in 1..=ROWS {
        started(&mut state, n);
        ended(&mut state, n);
    }
    eprintln!(
        "{ROWS} rows ingested in {:.0} ms",
        t0.elapsed().as_secs_f64() * 1000.0
    );
    Harness::builder()
        .with_size(egui::vec2(1024.0, 700.0))
        .build_ui_state(
            |ui, panel: &mut Panel| {
                list_ui(ui, &panel.state, &mut panel.ui, &panel.tx);
                panel.state.handle_all(&panel.rx);
            },
            Panel {
                state,
                ui: TrafficUi::default(),
                tx,
                rx,
            },
        )
}

/// CPU time used by this thread so far, in milliseconds.
fn thread_cpu_millis() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant the kernel knows.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    ts.tv_sec as f64 * 1000.0 + ts.tv_nsec as f64 / 1e6
}

/// One frame: `before` (the app applying this frame's events and commands), step, tessellate;
/// its (CPU, wall) duration in milliseconds.
fn frame(harness: &mut Harness<'static, Panel>, before: impl FnOnce(&mut Panel)) -> (f64, f64) {
    let ctx = harness.ctx.clone();
    let cpu0 = thread_cpu_millis();
    let t0 = Instant::now();
    before(harness.state_mut());
    harness.step();
    let shapes = harness.output().shapes.clone();
    let ppp = harness.output().pixels_per_point;
    std::hint::black_box(ctx.tessellate(shapes, ppp));
    (
        thread_cpu_millis() - cpu0,
        t0.elapsed().as_secs_f64() * 1000.0,
    )
}

fn report(name: &str, frames: &[(f64, f64)]) {
    for (clock, pick) in [("CPU", 0), ("wall", 1)] {
        let mut times: Vec<f64> = frames
            .iter()
            .map(|f| if pick == 0 { f.0 } else { f.1 })
            .collect();
        times.sort_by(f64::total_cmp);
        let pct = |p: f64| times[((times.len() as f64 - 1.0) * p).round() as usize];
        println!(
            "{name} ({clock}): p50 {:.2} ms, p95 {:.2} ms, max {:.2} ms over {} frames",
            pct(0.50),
            pct(0.95),
            pct(1.0),
            times.len()
        );
    }
}

/// The frame's arrivals: a request starts every [`EVERY`] frames, and the one started
/// [`LASTS`] frames ago ends.
fn arrivals(panel: &mut Panel, frame: usize, next: &mut u64) {
    if frame.is_multiple_of(EVERY) {
        *next += 1;
        started(&mut panel.state, *next);
    }
    if frame >= LASTS && (frame - LASTS).is_multiple_of(EVERY) {
        let n = ROWS + 1 + ((frame - LASTS) / EVERY) as u64;
        ended(&mut panel.state, n);
    }
}

fn live() {
    let mut harness = harness();
    harness.run_steps(5);
    let mut next = ROWS;
    let mut times = Vec::with_capacity(FRAMES);
    for i in 0..FRAMES {
        times.push(frame(&mut harness, |panel| arrivals(panel, i, &mut next)));
    }
    let panel = harness.state();
    eprintln!(
        "{} rows kept, {} drawn in the last frame",
        panel.state.traffic.len(),
        panel.ui.rows_drawn
    );
    report("traffic_10k_live_20_per_s", &times);
}

/// The filter of frame `i`: a model typed and erased letter by letter, with the status class
/// and a text search switched in between.
fn filter_of(i: usize) -> TrafficFilter {
    const TYPED: &str = "gpt-6.2-sol";
    let cycle = 2 * TYPED.len();
    let k = i % cycle;
    let letters = if k < TYPED.len() { k + 1 } else { cycle - k };
    let status = match (i / cycle) % 3 {
        0 => StatusClass::All,
        1 => StatusClass::Ok,
        _ => StatusClass::Failed,
    };
    TrafficFilter {
        model: TYPED[..letters].to_string(),
        status,
        text: if (i / cycle) % 2 == 1 {
            "turn=1".to_string()
        } else {
            String::new()
        },
        ..TrafficFilter::default()
    }
}

fn filtering() {
    let mut harness = harness();
    harness.run_steps(5);
    let mut next = ROWS;
    let mut times = Vec::with_capacity(FRAMES);
    for i in 0..FRAMES {
        times.push(frame(&mut harness, |panel| {
            arrivals(panel, i, &mut next);
            panel
                .tx
                .send(AppCommand::Traffic(TrafficCommand::Filter(filter_of(i))));
        }));
    }
    let slow: Vec<(usize, f64)> = times
        .iter()
        .map(|(cpu, _)| *cpu)
        .enumerate()
        .filter(|(_, cpu)| *cpu > 16.0)
        .collect();
    eprintln!("frames over 16 ms CPU while filtering (frame, ms): {slow:.1?}");
    report("traffic_10k_filtering", &times);
}

fn main() {
    live();
    filtering();
}
