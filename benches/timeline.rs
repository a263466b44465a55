//! Frame CPU time of the timeline panel, measured through egui_kittest (the real UI code, no
//! GPU): each frame is the egui pass plus tessellation of its shapes.
//!
//! - Scrolling a timeline of 100,000 events (a recorded tool-call stream, replayed end to end
//!   until there are that many) with the wheel, down then up. Target: p95 ≤ 8 ms.
//! - Appending 5,000 events/s live while following the tail: each frame ingests the events of
//!   one 60 Hz frame (84) and is drawn; the ingest is part of the frame. Target: no frame over
//!   16 ms.
//!
//! Prints p50/p95/max of each, as frame CPU time (the thread's CPU clock, which time spent
//! waiting for a core on a busy machine does not inflate) and as wall time.

use std::time::{Duration, Instant};

use egui_kittest::Harness;
use promptwire::app::timeline::{TimelineCommand, TimelineModel, TimelineUpdate};
use promptwire::core::stream::{TimelineEntry, read_all};
use promptwire::ui::timeline::{TimelinePanelState, timeline_ui};

struct Panel {
    model: TimelineModel,
    ui: TimelinePanelState,
}

/// `count` events: the recorded stream's events over and over, 200 µs apart, seq increasing.
fn events(count: usize) -> Vec<TimelineEntry> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/sse/tool-calls-crlf.sse"
    );
    let bytes = std::fs::read(path).expect("recorded SSE");
    let (entries, _) = read_all(&bytes, Duration::ZERO);
    (0..count)
        .map(|i| {
            let mut entry = entries[i % entries.len()].clone();
            entry.raw.seq = i as u64;
            entry.raw.received_at = Duration::from_micros(200 * i as u64);
            entry
        })
        .collect()
}

fn harness(model: TimelineModel) -> Harness<'static, Panel> {
    Harness::builder()
        .with_size(egui::vec2(1600.0, 1000.0))
        .build_ui_state(
            |ui, panel: &mut Panel| {
                for command in timeline_ui(ui, &panel.model, &mut panel.ui) {
                    panel.model.handle(&command);
                }
            },
            Panel {
                model,
                ui: TimelinePanelState::default(),
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

/// One frame: step, then tessellate; returns its (CPU, wall) duration in milliseconds.
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

fn scroll_100k() {
    let t0 = Instant::now();
    let mut model = TimelineModel::new();
    model.apply(TimelineUpdate::AttemptStarted { attempt: 1 });
    for entry in events(100_000) {
        model.push(entry);
    }
    eprintln!(
        "100,000 events ingested in {:.0} ms",
        t0.elapsed().as_secs_f64() * 1000.0
    );
    // Scroll from the top, as a user reading a loaded recording does.
    model.handle(&TimelineCommand::Follow(false));
    let mut harness = harness(model);
    harness.run_steps(5);
    let mut times = Vec::new();
    for i in 0..300 {
        harness.event(egui::Event::PointerMoved(egui::pos2(500.0, 500.0)));
        let dy = if i < 150 { -400.0 } else { 400.0 };
        harness.event(egui::Event::MouseWheel {
            unit: egui::MouseWheelUnit::Point,
            delta: egui::vec2(0.0, dy),
            modifiers: egui::Modifiers::NONE,
            phase: egui::TouchPhase::Move,
            source: egui::MouseWheelSource::Unknown,
        });
        times.push(frame(&mut harness, |_| {}));
    }
    report("timeline_100k_scroll", &times);
}

fn live_append() {
    const PER_FRAME: usize = 5_000 / 60 + 1;
    let mut incoming = events(PER_FRAME * 600).into_iter();
    let mut model = TimelineModel::new();
    model.apply(TimelineUpdate::AttemptStarted { attempt: 1 });
    let mut harness = harness(model);
    harness.run_steps(3);
    let mut times = Vec::new();
    for _ in 0..600 {
        let batch: Vec<TimelineEntry> = incoming.by_ref().take(PER_FRAME).collect();
        times.push(frame(&mut harness, move |panel| {
            for entry in batch {
                panel.model.apply(TimelineUpdate::Entry(Box::new(entry)));
            }
        }));
    }
    let slow: Vec<(usize, f64)> = times
        .iter()
        .map(|(cpu, _)| *cpu)
        .enumerate()
        .filter(|(_, cpu)| *cpu > 16.0)
        .collect();
    eprintln!(
        "{} events appended over {} frames; frames over 16 ms CPU (frame, ms): {slow:.1?}",
        harness.state().model.rows().len(),
        times.len()
    );
    report("timeline_live_5000_per_s", &times);
}

fn main() {
    scroll_100k();
    live_append();
}
