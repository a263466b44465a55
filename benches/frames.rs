//! Frame CPU time of the workbench with a 5 MB prompt shown in four compiled columns with their
//! structural diff (rows aligned across columns, marks, scrolling together), measured through
//! egui_kittest (the real UI code, no GPU): each frame is the egui pass plus tessellation of its
//! shapes, while the columns scroll. Target: p95 ≤ 16 ms. Prints p50/p95/max.

use std::time::{Duration, Instant};

use egui_kittest::Harness;
use promptwire::app::settings::{Column, ColumnDialect, Settings, ViewKind};
use promptwire::app::{AppOptions, AppState, command_channel};
use promptwire::core::prompt::Prompt;
use promptwire::core::provider::ProviderKind;
use promptwire::ui::{UiState, workbench_ui};
use serde_json::json;

/// What the bench drives: the app state, the panels' state and the command channel, drawn and
/// updated the way `PromptwireApp` does each frame.
struct Bench {
    state: AppState,
    ui_state: UiState,
    tx: promptwire::app::CommandSender,
    rx: promptwire::app::CommandReceiver,
}

/// A prompt of about 5 MB: 500 items of ~10 KB, 20 tools.
fn five_megabyte_prompt() -> Prompt {
    let filler =
        "Compiler output: warning: unused variable `x` in src/main.rs line 42. ".repeat(280);
    let mut items = Vec::new();
    for i in 0..250 {
        items.push(json!({"type":"function_call","status":"completed","id":format!("fc_{i}"),
            "name":"shell","arguments":format!("{{\"cmd\":\"cargo build -p crate_{i}\"}}"),"call_id":format!("call_{i}")}));
        items.push(json!({"type":"function_call_output","id":format!("fco_{i}"),"call_id":format!("call_{i}"),"output":filler}));
    }
    let tools: Vec<_> = (0..20)
        .map(|i| json!({"type":"function","name":format!("tool_{i}"),"description":"Does one thing.","strict":false,
            "parameters":{"type":"object","properties":{"path":{"type":"string"}}}}))
        .collect();
    let text = json!({"model":"gpt-5.5","base_instructions":"You are a coding agent.","input":items,"tools":tools,
        "thread_id":"0196d000-0000-7000-8000-000000000001"})
    .to_string();
    Prompt::from_json_str(&text).expect("bench prompt")
}

fn main() {
    let prompt = five_megabyte_prompt();
    let size = serde_json::to_vec(&prompt).map(|b| b.len()).unwrap_or(0);
    let settings = Settings {
        columns: [ProviderKind::Openai, ProviderKind::Azure]
            .into_iter()
            .flat_map(|p| {
                [ColumnDialect::Primary, ColumnDialect::Alternate].map(|d| Column {
                    dialect: d,
                    provider: Some(p),
                    view: ViewKind::Body,
                })
            })
            .collect(),
        ..Settings::default()
    };
    let mut state = AppState::new(settings, AppOptions::default());
    state.replace_prompt(prompt, None);
    let (tx, rx) = command_channel(None);
    let bench = Bench {
        state,
        ui_state: UiState::default(),
        tx,
        rx,
    };
    let mut harness = Harness::builder()
        .with_size(egui::vec2(1600.0, 1000.0))
        .build_ui_state(
            |ui, b: &mut Bench| {
                b.state.poll();
                workbench_ui(ui, &b.state, &mut b.ui_state, &b.tx);
                b.state.handle_all(&b.rx);
            },
            bench,
        );

    // Wait for the worker to compile and render the four columns.
    let started = Instant::now();
    loop {
        harness.step();
        let s = &harness.state().state;
        // Steady state: compiled, rendered, and token counts in (the worker is idle).
        if s.views.len() == 4
            && s.views_revision == s.revision
            && s.views.iter().all(|v| v.tokens.is_some())
        {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "compile timed out"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let lines: usize = harness
        .state()
        .state
        .views
        .iter()
        .map(|v| v.line_count())
        .sum();
    eprintln!(
        "prompt {size} bytes; 4 columns, {lines} lines; compile+render {:.0} ms; ready after {:.1} s",
        harness.state().state.compile_millis,
        started.elapsed().as_secs_f64()
    );
    harness.run_steps(5);

    let ctx = harness.ctx.clone();
    let mut times = Vec::new();
    for frame in 0..300 {
        // Scroll the compiled columns (pointer over the right half), down then up.
        let x = 1100.0 + (frame % 4) as f32 * 110.0;
        harness.event(egui::Event::PointerMoved(egui::pos2(x, 500.0)));
        let dy = if frame < 150 { -120.0 } else { 120.0 };
        harness.event(egui::Event::MouseWheel {
            unit: egui::MouseWheelUnit::Point,
            delta: egui::vec2(0.0, dy),
            modifiers: egui::Modifiers::NONE,
            phase: egui::TouchPhase::Move,
            source: egui::MouseWheelSource::Unknown,
        });
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
        "frames_5MB_four_columns: p50 {:.2} ms, p95 {:.2} ms, max {:.2} ms over {} frames",
        pct(0.50),
        pct(0.95),
        pct(1.0),
        times.len()
    );
}
