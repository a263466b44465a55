//! The Sessions view on a 1,000-request session whose last body is about 2 MB (the generated
//! agent session of `support/prefix_session.rs`, stored in a real SQLite file the way the app
//! stores sessions), driven through egui_kittest with the real UI code (no GPU):
//!
//! 1. Open: from the Open command to the first frame that shows the table, the prefix badges
//!    and the charts (the rows, then the analysis, arrive from a worker). Target ≤ 1 s.
//! 2. Frames of the prefix view while the pointer sweeps the strip and the charts and the pair
//!    diff scrolls: the egui pass plus tessellation, as `frames.rs` measures. Target p95 ≤ 16 ms.
//!
//! Prints medians (open) and p50/p95/max (frames). The database is built once per target dir.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use egui_kittest::Harness;
use promptwire::app::session_view::{MainView, SessionCommand};
use promptwire::app::{AppCommand, AppOptions, AppState, Settings, command_channel};
use promptwire::store::{
    NewRequest, NewSession, OutcomeRecord, RecordedState, ResponseMeta, Source, Store,
};
use promptwire::ui::sessions::{SessionsUi, sessions_ui};
use serde_json::{Value, json};

#[path = "support/prefix_session.rs"]
mod prefix_session;

/// Bumped when the generated database changes.
const DB_NAME: &str = "sessions-bench-v2.sqlite";

struct Bench {
    state: AppState,
    ui: SessionsUi,
    tx: promptwire::app::CommandSender,
    rx: promptwire::app::CommandReceiver,
}

/// Writes the generated session (and a small one to switch away to) into `path`.
fn build_db(path: &Path) {
    let synthetic = prefix_session::generate();
    let building = path.with_extension("building");
    let _ = std::fs::remove_file(&building);
    let mut store = Store::open(&building).expect("bench db");
    let small = store
        .create_session(&NewSession {
            name: "small".to_string(),
            source: Source::Import,
            provider: None,
            model: Some("gpt-5.5".to_string()),
            created_us: 1_000,
        })
        .expect("session");
    let big = store
        .create_session(&NewSession {
            name: "agent-1000".to_string(),
            source: Source::Import,
            provider: None,
            model: Some("gpt-5.5".to_string()),
            created_us: 2_000,
        })
        .expect("session");
    for (i, (head, items)) in synthetic.requests.iter().enumerate() {
        let mut body = synthetic.heads[*head].clone();
        body.insert(
            "input".to_string(),
            Value::Array(
                items
                    .iter()
                    .map(|id| synthetic.items[*id as usize].clone())
                    .collect(),
            ),
        );
        let bytes = serde_json::to_vec(&Value::Object(body)).expect("body");
        for session in [big, small].into_iter().take(if i < 3 { 2 } else { 1 }) {
            let id = store
                .add_request(
                    session,
                    &NewRequest {
                        dialect: Some("standard".to_string()),
                        rules: None,
                        provider: Some("openai".to_string()),
                        method: "POST".to_string(),
                        url: "https://api.openai.com/v1/responses".to_string(),
                        body: &bytes,
                        headers: &[],
                        extra: None,
                        started_us: Some(1_700_000_000_000_000 + i as i64 * 20_000_000),
                    },
                )
                .expect("request");
            store
                .set_response(
                    id,
                    &ResponseMeta {
                        status: Some(200),
                        wait_us: Some(300_000),
                        total_us: Some(4_000_000),
                        ..ResponseMeta::default()
                    },
                )
                .expect("response");
            let input = (bytes.len() / 4) as u64;
            store
                .set_outcome(
                    id,
                    &OutcomeRecord {
                        state: RecordedState::Completed,
                        usage: Some(json!({"input_tokens": input,
                            "input_tokens_details": {"cached_tokens": input / 1024 * 1024},
                            "output_tokens": 200})),
                        events: 40,
                        first_event_us: Some(310_000),
                        total_us: Some(4_000_000),
                        ..OutcomeRecord::default()
                    },
                )
                .expect("outcome");
        }
    }
    drop(store);
    std::fs::rename(&building, path).expect("db in place");
    eprintln!(
        "built {}: last body {} bytes",
        path.display(),
        synthetic.body_bytes(synthetic.requests.len() - 1)
    );
}

fn db_path() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let path = dir.join(DB_NAME);
    if !path.exists() {
        build_db(&path);
    }
    path
}

fn step_until(harness: &mut Harness<'_, Bench>, what: &str, done: impl Fn(&AppState) -> bool) {
    let started = Instant::now();
    loop {
        harness.step();
        if done(&harness.state().state) {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{what} timed out"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn send(harness: &mut Harness<'_, Bench>, command: SessionCommand) {
    harness.state().tx.send(AppCommand::Sessions(command));
}

fn median(times: &mut [f64]) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn main() {
    // `cargo bench --bench sessions -- cache`: only the cache simulator;
    // `-- inspector`: only the inspector and the table filter.
    if std::env::args().skip(1).any(|a| a == "cache") {
        cache_simulator();
        return;
    }
    if std::env::args().skip(1).any(|a| a == "inspector") {
        return inspector();
    }
    if std::env::args().skip(1).any(|a| a == "anatomy") {
        return anatomy();
    }
    let path = db_path();
    let state = AppState::new(
        Settings::default(),
        AppOptions {
            db: Some(path),
            ctx: None,
        },
    );
    let (tx, rx) = command_channel(None);
    let bench = Bench {
        state,
        ui: SessionsUi::default(),
        tx,
        rx,
    };
    let mut harness = Harness::builder()
        .with_size(egui::vec2(1600.0, 1000.0))
        .build_ui_state(
            |ui, b: &mut Bench| {
                b.state.poll();
                let layout = &b.state.settings.panes;
                let mut panes = promptwire::ui::panes::PanesUi::default();
                sessions_ui(ui, &b.state, layout, &mut b.ui, &mut panes, &b.tx);
                b.state.handle_all(&b.rx);
            },
            bench,
        );
    send(&mut harness, SessionCommand::ShowView(MainView::Sessions));
    step_until(&mut harness, "list", |s| s.sessions.sessions.len() == 2);
    let big = harness.state().state.sessions.sessions[0].id;
    let small = harness.state().state.sessions.sessions[1].id;

    let mut open_ms = Vec::new();
    let mut analysis_ms = Vec::new();
    for _ in 0..5 {
        send(&mut harness, SessionCommand::Open(small));
        step_until(&mut harness, "small", |s| s.browser.analysis.is_some());
        let t0 = Instant::now();
        send(&mut harness, SessionCommand::Open(big));
        step_until(&mut harness, "open", |s| {
            s.sessions.rows.len() == prefix_session::REQUESTS
                && s.browser
                    .analysis
                    .as_ref()
                    .is_some_and(|a| a.session == big)
        });
        // The frame that draws the table, badges and charts with the analysis in.
        harness.step();
        open_ms.push(t0.elapsed().as_secs_f64() * 1000.0);
        let analysis = harness
            .state()
            .state
            .browser
            .analysis
            .as_ref()
            .map_or(0.0, |a| a.millis);
        analysis_ms.push(analysis);
    }
    println!(
        "sessions_open_1000_requests_2MB: median {:.0} ms (max {:.0} ms) to table + badges + charts; analysis on the worker median {:.0} ms",
        median(&mut open_ms),
        open_ms.last().copied().unwrap_or(0.0),
        median(&mut analysis_ms)
    );
    step_until(&mut harness, "pair diff", |s| s.browser.pair_diff.is_some());
    harness.run_steps(3);

    let ctx = harness.ctx.clone();
    let mut times = Vec::new();
    for frame in 0..300 {
        // Sweep the strip and the charts, and scroll the pair diff.
        let x = 260.0 + (frame % 60) as f32 * 20.0;
        let y = match frame % 3 {
            0 => 330.0,
            1 => 450.0,
            _ => 650.0,
        };
        harness.event(egui::Event::PointerMoved(egui::pos2(x, y)));
        if frame % 3 == 2 {
            harness.event(egui::Event::MouseWheel {
                unit: egui::MouseWheelUnit::Point,
                delta: egui::vec2(0.0, if frame < 150 { -60.0 } else { 60.0 }),
                modifiers: egui::Modifiers::NONE,
                phase: egui::TouchPhase::Move,
                source: egui::MouseWheelSource::Unknown,
            });
        }
        let t0 = Instant::now();
        harness.step();
        let shapes = harness.output().shapes.clone();
        let ppp = harness.output().pixels_per_point;
        let primitives = ctx.tessellate(shapes, ppp);
        let elapsed = t0.elapsed();
        std::hint::black_box(primitives);
        times.push(elapsed.as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    let pct = |p: f64| times[((times.len() as f64 - 1.0) * p).round() as usize];
    println!(
        "sessions_prefix_view_frames: p50 {:.2} ms, p95 {:.2} ms, max {:.2} ms over {} frames",
        pct(0.50),
        pct(0.95),
        pct(1.0),
        times.len()
    );
}

/// The ledger (issue 29) over the generated 1,000-request session (last body ~2 MB): pushing the
/// requests onto a `Session` as opening does (items hashed and measured once), then the whole
/// ledger — the rendered view with every distinct segment tokenized once, the comparisons, the
/// simulation, prices and hazards (what opening adds; target ≤ 100 ms) — and one what-if
/// against it (an explicit breakpoint after an early item; target ≤ 200 ms), under the
/// session's own cache model (gpt-5.5: prefix) and with every request on the breakpoint model.
/// Prints medians of 7 runs.
fn cache_simulator() {
    use promptwire::core::ledger::{self, CacheModels, Edit, Rules};
    use promptwire::core::prefix::{RequestMeta, Session};

    let synthetic = prefix_session::generate();
    let push = || {
        let mut session = Session::default();
        let ids: Vec<_> = synthetic
            .items
            .iter()
            .map(|item| session.intern_item(item))
            .collect();
        for (i, (head, items)) in synthetic.requests.iter().enumerate() {
            let input: Vec<_> = items.iter().map(|id| ids[*id as usize]).collect();
            let sent = 1_700_000_000_000 + i as i64 * 20_000;
            let meta = RequestMeta {
                sent_at_ms: Some(sent),
                finished_at_ms: Some(sent + 4_000),
                ..RequestMeta::default()
            };
            session
                .push_parts(&synthetic.heads[*head], &input, meta)
                .expect("request");
        }
        session
    };
    let mut push_ms = Vec::new();
    let mut session = push();
    for _ in 0..5 {
        let t0 = Instant::now();
        session = push();
        push_ms.push(t0.elapsed().as_secs_f64() * 1000.0);
    }
    println!(
        "session_push_1000_requests_2MB: median {:.1} ms (items hashed and measured, requests pushed)",
        median(&mut push_ms)
    );
    let _ = promptwire::core::prefix::Tokenizer::o200k().count("warm up");
    let all_breakpoints =
        CacheModels::from_json(r#"{"models":[{"prefix":"g","cache_model":"breakpoints"}]}"#)
            .expect("models");
    let edit: Vec<Edit> = vec!["breakpoint-after:3".parse().expect("edit")];
    for (name, models) in [
        ("own model", CacheModels::default()),
        ("breakpoints", all_breakpoints),
    ] {
        let mut report_ms = Vec::new();
        let mut what_if_ms = Vec::new();
        let mut read = 0;
        let rules = Rules {
            cache_models: models,
            ..Rules::bundled()
        };
        for _ in 0..7 {
            let t0 = Instant::now();
            let ledger = ledger::ledger(&session, &rules);
            report_ms.push(t0.elapsed().as_secs_f64() * 1000.0);
            read = ledger.summary.totals.read_tokens;
            let t0 = Instant::now();
            let what_if = ledger.what_if(&session, &rules, &edit).expect("what-if");
            what_if_ms.push(t0.elapsed().as_secs_f64() * 1000.0);
            std::hint::black_box(&what_if);
            std::hint::black_box(&ledger);
        }
        println!(
            "ledger_1000_requests_2MB ({name}): ledger median {:.1} ms (max {:.1}); what-if median {:.1} ms (max {:.1}); {read} tokens read",
            median(&mut report_ms),
            report_ms.last().copied().unwrap_or(0.0),
            median(&mut what_if_ms),
            what_if_ms.last().copied().unwrap_or(0.0),
        );
    }
}

/// The request inspector on the 1,000-request session (`cargo bench --bench sessions --
/// inspector`): (1) from selecting a ~2 MB request to the end of the frame in which the
/// inspector draws it (read, pretty-printed and split into lines on a worker; the frame's
/// tessellation included), target ≤ 100 ms, median of 7 selects in a row (each while the
/// previous request's tokens may still be counted) and of 5 from idle, with the longest UI
/// frame while it is read (short: the read is off the UI thread), and where the read's time
/// goes;
/// (2) from a change of the request table's filter to the frame that draws its rows (errors
/// only: none; a model from the middle date on: half; a text, sorted by bytes: all, reordered;
/// none), the command handled plus the egui pass and tessellation, target p95 ≤ 16 ms.
fn inspector() {
    use promptwire::app::session_view::filter::{RowFilter, SortColumn, StatusClass};
    let state = AppState::new(
        Settings::default(),
        AppOptions {
            db: Some(db_path()),
            ctx: None,
        },
    );
    let (tx, rx) = command_channel(None);
    let bench = Bench {
        state,
        ui: SessionsUi::default(),
        tx,
        rx,
    };
    let mut harness = Harness::builder()
        .with_size(egui::vec2(1600.0, 1000.0))
        .build_ui_state(
            |ui, b: &mut Bench| {
                b.state.poll();
                let layout = &b.state.settings.panes;
                let mut panes = promptwire::ui::panes::PanesUi::default();
                sessions_ui(ui, &b.state, layout, &mut b.ui, &mut panes, &b.tx);
                b.state.handle_all(&b.rx);
            },
            bench,
        );
    send(&mut harness, SessionCommand::ShowView(MainView::Sessions));
    step_until(&mut harness, "list", |s| s.sessions.sessions.len() == 2);
    let big = harness.state().state.sessions.sessions[0].id;
    send(&mut harness, SessionCommand::Open(big));
    step_until(&mut harness, "open", |s| {
        s.sessions.rows.len() == prefix_session::REQUESTS && s.browser.analysis.is_some()
    });
    let last = prefix_session::REQUESTS - 1;
    let bytes = harness.state().state.sessions.rows[last].body_bytes;
    let mut open_ms = Vec::new();
    // Up to one more frame after it, as this bench measured before the inspector said what it
    // drew (the frame that receives the read already draws it).
    let mut next_frame_ms = Vec::new();
    let mut frames = Frames::default();
    for round in 0..7 {
        // Alternate between the two largest requests: each select reads a new one, at once
        // (the previous one's tokens may still be being counted).
        let (drawn, next) = select_and_draw(&mut harness, last - (round % 2), &mut frames);
        open_ms.push(drawn);
        next_frame_ms.push(next);
    }
    // The same from idle: each select once the previous request's tokens are counted.
    let mut idle_ms = Vec::new();
    for round in 0..5 {
        step_until(&mut harness, "tokens counted", |s| {
            s.browser.inspect.tokens.is_some()
        });
        let (drawn, _) = select_and_draw(&mut harness, last - (round % 2), &mut frames);
        idle_ms.push(drawn);
    }
    step_until(&mut harness, "tokens counted", |s| {
        s.browser.inspect.tokens.is_some()
    });
    println!(
        "inspector_open frames: median {:.1} ms; select to drawn from idle: median {:.1} ms; select to drawn plus one more frame (this bench's measure before): median {:.1} ms",
        median(&mut frames.all),
        median(&mut idle_ms),
        median(&mut next_frame_ms)
    );
    let longest_frame_ms = frames.longest;
    let store = Store::open_read_only(db_path()).expect("store");
    let id = harness.state().state.sessions.rows[last].id;
    let mut read_ms = Vec::new();
    for _ in 0..5 {
        let t0 = Instant::now();
        let read =
            promptwire::app::session_view::inspect::read_inspected(&store, big, id).expect("read");
        std::hint::black_box(read);
        read_ms.push(t0.elapsed().as_secs_f64() * 1000.0);
    }
    println!(
        "inspector_read_2MB_request (worker part alone): median {:.1} ms",
        median(&mut read_ms)
    );
    read_parts(&store, id);
    let rows = harness.state().state.sessions.rows.clone();
    let mut apply_ms = Vec::new();
    for _ in 0..100 {
        let t0 = Instant::now();
        let shown = RowFilter {
            status: StatusClass::Failed,
            text: "gpt".to_string(),
            ..RowFilter::default()
        }
        .apply(&rows);
        std::hint::black_box(shown);
        apply_ms.push(t0.elapsed().as_secs_f64() * 1000.0);
    }
    println!(
        "inspector_filter_apply_1000_rows (filter alone): median {:.3} ms",
        median(&mut apply_ms)
    );
    println!(
        "inspector_open_2MB_request: median {:.1} ms (max {:.1} ms) for a {} byte body, select to drawn; longest UI frame meanwhile {:.1} ms",
        median(&mut open_ms),
        open_ms.last().copied().unwrap_or(0.0),
        bytes,
        longest_frame_ms
    );
    // Filters that show none, some and all of the rows, and a sort (every row moves).
    let middle = rows[rows.len() / 2].started_us;
    let filters = [
        RowFilter {
            status: StatusClass::Failed,
            ..RowFilter::default()
        },
        RowFilter {
            model: "gpt".to_string(),
            from_us: middle,
            ..RowFilter::default()
        },
        RowFilter {
            text: "completed".to_string(),
            sort: Some((SortColumn::Bytes, true)),
            ..RowFilter::default()
        },
        RowFilter::default(),
    ];
    let ctx = harness.ctx.clone();
    let mut times = Vec::new();
    let mut shown = vec![0; filters.len()];
    for frame in 0..200 {
        send(
            &mut harness,
            SessionCommand::Filter(filters[frame % filters.len()].clone()),
        );
        // From the filter change to the frame that shows its rows: the command handled (the
        // app handles a frame's commands at its end, the next frame draws them), then that
        // next frame drawn and tessellated.
        let t0 = Instant::now();
        {
            let b = harness.state_mut();
            b.state.handle_all(&b.rx);
        }
        shown[frame % filters.len()] = harness.state().state.browser.visible.len();
        harness.step();
        let shapes = harness.output().shapes.clone();
        let ppp = harness.output().pixels_per_point;
        let primitives = ctx.tessellate(shapes, ppp);
        let elapsed = t0.elapsed();
        std::hint::black_box(primitives);
        times.push(elapsed.as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    let pct = |p: f64| times[((times.len() as f64 - 1.0) * p).round() as usize];
    println!(
        "inspector_filter_1000_requests_frames: p50 {:.2} ms, p95 {:.2} ms, max {:.2} ms over {} frames (filter change to drawn; rows shown per filter {shown:?} of {})",
        pct(0.50),
        pct(0.95),
        pct(1.0),
        times.len(),
        rows.len()
    );
}

/// Where the inspector's read of request `id` goes: the worker's store open, the stored body
/// rebuilt (its items joined and parsed as JSON), the JSON parse alone, the text view's
/// pretty-printing and its line index (serde_json's, and the one-pass re-indent the read
/// uses); medians of 5.
fn read_parts(store: &Store, id: i64) {
    let mut parts: [Vec<f64>; 7] = Default::default();
    let path = db_path();
    for _ in 0..5 {
        let t = Instant::now();
        let opened = promptwire::store::seed::open_seeded(&path).expect("open");
        parts[0].push(t.elapsed().as_secs_f64() * 1000.0);
        drop(opened);
        let t = Instant::now();
        let body = store.body(id).expect("body");
        parts[1].push(t.elapsed().as_secs_f64() * 1000.0);
        let t = Instant::now();
        let value: Value = serde_json::from_slice(&body.bytes).expect("json");
        parts[2].push(t.elapsed().as_secs_f64() * 1000.0);
        let t = Instant::now();
        let text = serde_json::to_string_pretty(&value).expect("pretty");
        parts[3].push(t.elapsed().as_secs_f64() * 1000.0);
        let t = Instant::now();
        let lines = text.bytes().filter(|b| *b == b'\n').count();
        parts[4].push(t.elapsed().as_secs_f64() * 1000.0);
        let t = Instant::now();
        let indented = promptwire::core::pretty::pretty(&body.bytes);
        parts[5].push(t.elapsed().as_secs_f64() * 1000.0);
        let t = Instant::now();
        let rest = (
            store.request(id).expect("request"),
            store.outcome(id).expect("outcome"),
            store.event_count(id).expect("count"),
            store
                .events(id, promptwire::store::Page::first(20_000))
                .expect("events"),
        );
        parts[6].push(t.elapsed().as_secs_f64() * 1000.0);
        std::hint::black_box((value, lines, indented, rest));
    }
    let [open, body, parse, pretty, lines, indented, rest] = parts.map(|mut p| median(&mut p));
    println!(
        "inspector_read_parts: store open {open:.1} ms, body rebuilt {body:.1} ms (of which JSON parse ~{parse:.1} ms), serde_json pretty-print {pretty:.1} ms + line count {lines:.1} ms; core::pretty (re-indent and line index in one pass) {indented:.1} ms; headers, outcome and events {rest:.1} ms"
    );
}

/// Frame times of the inspector bench.
#[derive(Default)]
struct Frames {
    all: Vec<f64>,
    longest: f64,
}

/// Selects row `index` and steps frames until the inspector draws its read (that frame's
/// tessellation included, as `frames.rs` counts a frame); returns the milliseconds from the
/// select to then, and to the end of one more frame.
fn select_and_draw(
    harness: &mut Harness<'_, Bench>,
    index: usize,
    frames: &mut Frames,
) -> (f64, f64) {
    let want = harness.state().state.sessions.rows[index].id;
    let ctx = harness.ctx.clone();
    let t0 = Instant::now();
    send(harness, SessionCommand::Select(index));
    loop {
        let frame = Instant::now();
        harness.step();
        let took = frame.elapsed().as_secs_f64() * 1000.0;
        frames.all.push(took);
        frames.longest = frames.longest.max(took);
        if harness.state().ui.inspector.drawn == Some(want) {
            let shapes = harness.output().shapes.clone();
            let ppp = harness.output().pixels_per_point;
            std::hint::black_box(ctx.tessellate(shapes, ppp));
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "inspected timed out"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    let drawn = t0.elapsed().as_secs_f64() * 1000.0;
    harness.step();
    (drawn, t0.elapsed().as_secs_f64() * 1000.0)
}

/// The anatomy (issue 30) of the generated 1,000-request session (`cargo bench --bench sessions
/// -- anatomy`): (1) the anatomy on top of the ledger — sources and tools per request from the
/// ledger's rendered view, findings, compactions — median of 7, target ≤ 50 ms; (2) frames of
/// the anatomy chart alone (the painter chart of 1,000 requests, 1,200×260, the pointer sweeping
/// it: the egui pass and tessellation), target p95 ≤ 4 ms.
fn anatomy() {
    use promptwire::core::anatomy;
    use promptwire::core::ledger::{self, Rules};
    use promptwire::core::models::ModelCatalog;
    use promptwire::core::prefix::{RequestMeta, Session};

    let synthetic = prefix_session::generate();
    let mut session = Session::default();
    let ids: Vec<_> = synthetic
        .items
        .iter()
        .map(|item| session.intern_item(item))
        .collect();
    for (i, (head, items)) in synthetic.requests.iter().enumerate() {
        let input: Vec<_> = items.iter().map(|id| ids[*id as usize]).collect();
        let sent = 1_700_000_000_000 + i as i64 * 20_000;
        let meta = RequestMeta {
            sent_at_ms: Some(sent),
            finished_at_ms: Some(sent + 4_000),
            ..RequestMeta::default()
        };
        session
            .push_parts(&synthetic.heads[*head], &input, meta)
            .expect("request");
    }
    let ledger = ledger::ledger(&session, &Rules::bundled());
    let catalog = ModelCatalog::bundled();
    let mut ms = Vec::new();
    let mut result = None;
    for _ in 0..7 {
        let t0 = Instant::now();
        let a = anatomy::with_catalog(&session, &ledger, &catalog);
        ms.push(t0.elapsed().as_secs_f64() * 1000.0);
        result = Some(a);
    }
    let a = std::sync::Arc::new(result.expect("anatomy"));
    println!(
        "anatomy_1000_requests_2MB: median {:.1} ms (max {:.1}) on top of the ledger; {} tools, {} unused",
        median(&mut ms),
        ms.last().copied().unwrap_or(0.0),
        a.tools.len(),
        a.findings.unused_tools.len()
    );

    // The chart alone.
    let marks = promptwire::ui::sessions::anatomy_chart::Marks::default();
    let mut harness = Harness::builder()
        .with_size(egui::vec2(1260.0, 300.0))
        .build_ui_state(
            |ui, cache: &mut promptwire::ui::sessions::anatomy_chart::ChartCache| {
                promptwire::ui::sessions::anatomy_chart::chart_ui(
                    ui,
                    &a,
                    &marks,
                    Some(500),
                    cache,
                    260.0,
                );
            },
            promptwire::ui::sessions::anatomy_chart::ChartCache::default(),
        );
    let ctx = harness.ctx.clone();
    let frame_ms = |harness: &mut Harness<'_, _>, x: f32, y: f32| {
        harness.event(egui::Event::PointerMoved(egui::pos2(x, y)));
        let t0 = Instant::now();
        harness.step();
        let shapes = harness.output().shapes.clone();
        let ppp = harness.output().pixels_per_point;
        std::hint::black_box(ctx.tessellate(shapes, ppp));
        t0.elapsed().as_secs_f64() * 1000.0
    };
    let mut times: Vec<f64> = (0..300)
        .map(|f| {
            frame_ms(
                &mut harness,
                60.0 + (f % 100) as f32 * 11.5,
                40.0 + (f % 7) as f32 * 30.0,
            )
        })
        .collect();
    times.sort_by(f64::total_cmp);
    let pct = |t: &[f64], p: f64| t[((t.len() as f64 - 1.0) * p).round() as usize];
    println!(
        "anatomy_chart_frames (1,000 requests): p50 {:.2} ms, p95 {:.2} ms, max {:.2} ms over {} frames",
        pct(&times, 0.50),
        pct(&times, 0.95),
        pct(&times, 1.0),
        times.len()
    );
}
