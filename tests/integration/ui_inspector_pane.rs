//! The request inspector as a pane of its own on the whole app (egui_kittest, 1024×700) over a
//! real SQLite file holding Codex-shaped recordings (a dozen request headers, a Codex body, a
//! usage with cached tokens): the Request tab scrolls as a whole, so the body's Tree / Text /
//! Raw selector and its first lines come into view without collapsing Headers; the pane
//! collapses (its header, then Alt+6) giving the request table its width back, is maximised and
//! restored, and keeps a width it was dragged to; the Response tab shows the request's cost as
//! core prices it (gpt-5.5), or "price unknown" (gpt-5.4, an unchecked price).

use crate::support::ui as ui_support;

use std::path::PathBuf;

use egui::accesskit::Role;
use egui::{Key, Modifiers, Pos2};
use egui_kittest::kittest::Queryable as _;
use pretty_assertions::assert_eq;
use promptwire::app::panes::PaneId;
use promptwire::core::ledger::PriceTable;
use promptwire::core::ledger::models::family_kind;
use promptwire::store::seed::open_seeded;
use promptwire::store::{
    NewRequest, NewSession, OutcomeRecord, RecordedState, ResponseMeta, Source,
};
use serde_json::json;
use ui_support::{App, app_with, pane_rect, scratch_dir, state, wait_until};

/// Input, cached and output tokens of the recorded usage.
const USAGE: (u64, u64, u64) = (123_456, 98_304, 2_048);

/// The headers Codex sends (as the proxy stores them: no Authorization).
fn codex_headers() -> Vec<(String, String)> {
    [
        ("host", "api.openai.com"),
        ("content-type", "application/json"),
        ("accept", "text/event-stream"),
        ("accept-encoding", "gzip, br"),
        ("openai-beta", "responses=experimental"),
        ("originator", "codex_cli_rs"),
        ("version", "0.58.0"),
        ("session_id", "0199d3a4-7c1e-7d52-9f0e-5b8f1a2c3d4e"),
        ("conversation_id", "0199d3a4-7c1e-7d52-9f0e-5b8f1a2c3d4e"),
        ("chatgpt-account-id", "acct-0123456789"),
        ("x-codex-beta-features", "unified_exec"),
        (
            "user-agent",
            "codex_cli_rs/0.58.0 (Ubuntu 24.4.0; x86_64) xterm-256color",
        ),
        ("content-length", "1234"),
    ]
    .into_iter()
    .map(|(n, v)| (n.to_string(), v.to_string()))
    .collect()
}

/// A Codex-shaped Responses body for `model`.
fn codex_body(model: &str, turn: usize) -> String {
    json!({
        "model": model,
        "instructions": "You are Codex, based on GPT-5. You are running as a coding agent in the Codex CLI on a user's computer.",
        "input": [
            {"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "<environment_context>\n  <cwd>/work/project</cwd>\n</environment_context>"}]},
            {"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": format!("turn {turn}: fix the failing test")}]}
        ],
        "tools": [{"type": "function", "name": "shell", "description": "Runs a shell command",
            "strict": false, "parameters": {"type": "object", "properties": {
                "command": {"type": "array", "items": {"type": "string"}}},
                "required": ["command"], "additionalProperties": false}}],
        "tool_choice": "auto",
        "parallel_tool_calls": false,
        "reasoning": {"effort": "medium", "summary": "auto"},
        "store": false,
        "stream": true,
        "include": ["reasoning.encrypted_content"],
        "prompt_cache_key": "0199d3a4-7c1e-7d52-9f0e-5b8f1a2c3d4e"
    })
    .to_string()
}

/// Adds a session named `name` of `requests` Codex requests of `model`, each completed with
/// [`USAGE`]; returns its id.
fn add_session(
    store: &mut promptwire::store::Store,
    name: &str,
    model: &str,
    requests: usize,
    created_us: i64,
) -> i64 {
    let session = store
        .create_session(&NewSession {
            name: name.to_string(),
            source: Source::Proxy,
            provider: Some("openai".to_string()),
            model: Some(model.to_string()),
            created_us,
        })
        .expect("session");
    let headers = codex_headers();
    let (input, cached, output) = USAGE;
    for i in 0..requests {
        let body = codex_body(model, i);
        let id = store
            .add_request(
                session,
                &NewRequest {
                    dialect: Some("standard".to_string()),
                    provider: Some("openai".to_string()),
                    headers: &headers,
                    started_us: Some(created_us + i as i64 * 1_000_000),
                    ..NewRequest::post("https://api.openai.com/v1/responses", body.as_bytes())
                },
            )
            .expect("request");
        store
            .set_response(
                id,
                &ResponseMeta {
                    status: Some(200),
                    headers: vec![("x-request-id".to_string(), format!("req_{i}"))],
                    wait_us: Some(100_000),
                    total_us: Some(900_000),
                    ..ResponseMeta::default()
                },
            )
            .expect("response");
        store
            .set_outcome(
                id,
                &OutcomeRecord {
                    state: RecordedState::Completed,
                    usage: Some(json!({"input_tokens": input,
                        "input_tokens_details": {"cached_tokens": cached},
                        "output_tokens": output, "total_tokens": input + output})),
                    ..OutcomeRecord::default()
                },
            )
            .expect("outcome");
    }
    session
}

/// A seeded database plus a gpt-5.5 session (two requests) and a gpt-5.4 one (one request):
/// the path and the two session ids.
fn database(name: &str) -> (PathBuf, i64, i64) {
    let db = scratch_dir(name).join("promptwire.sqlite");
    let mut store = open_seeded(&db).expect("seeded database");
    let priced = add_session(
        &mut store,
        "codex-priced",
        "gpt-5.5",
        2,
        1_900_000_000_000_000,
    );
    let unpriced = add_session(
        &mut store,
        "codex-unpriced",
        "gpt-5.4",
        1,
        1_900_000_100_000_000,
    );
    (db, priced, unpriced)
}

/// Clicks session `id` (named `name`, of `requests` requests of `model`) in the list and waits
/// until its first request is inspected and the session analysed.
fn open_session(harness: &mut App, id: i64, name: &str, requests: usize, model: &str) {
    harness
        .get_by_label(&format!("#{id} {name} · {requests} req · {model}"))
        .click();
    wait_until(harness, "first request inspected and analysed", move |s| {
        s.sessions.open == Some(id)
            && s.sessions.rows.len() == requests
            && s.browser.analysis.as_ref().is_some_and(|a| a.session == id)
            && s.browser
                .inspect
                .result
                .as_ref()
                .is_some_and(|i| Some(i.request) == s.sessions.rows.first().map(|r| r.id))
    });
}

/// The app at 1024×700 in the Sessions view on `db`.
fn sessions_app(db: PathBuf) -> App {
    let mut harness = app_with((1024.0, 700.0), Some(db));
    ui_support::show_sessions(&mut harness);
    harness
}

/// True when a node labelled `label` lies wholly inside the inspector (as drawn, in the window).
fn in_inspector(harness: &App, label: &str) -> bool {
    let inspector = pane_rect(harness, PaneId::Inspector);
    harness
        .query_all_by_label(label)
        .any(|node| inspector.contains_rect(node.rect()))
}

/// True when a node labelled `label` starts inside the inspector and lies within its height (a
/// body line longer than the pane runs on past its right edge, the body view scrolls sideways).
fn line_in_inspector(harness: &App, label: &str) -> bool {
    let inspector = pane_rect(harness, PaneId::Inspector);
    harness.query_all_by_label(label).any(|node| {
        let rect = node.rect();
        inspector.contains(rect.left_top()) && inspector.contains(rect.left_bottom())
    })
}

/// A wheel of `dy` points with the pointer at `at`.
fn wheel(harness: &mut App, at: Pos2, dy: f32) {
    harness.hover_at(at);
    harness.run_steps(1);
    for _ in 0..10 {
        harness.event(egui::Event::MouseWheel {
            unit: egui::MouseWheelUnit::Point,
            delta: egui::vec2(0.0, dy / 10.0),
            modifiers: Modifiers::NONE,
            phase: egui::TouchPhase::Move,
            source: egui::MouseWheelSource::Unknown,
        });
        harness.run_steps(1);
    }
    harness.run_steps(4);
}

#[test]
fn the_body_of_a_codex_request_is_reachable_at_1024_by_700_with_headers_open() {
    let (db, priced, _) = database("inspector-pane-body");
    let mut harness = sessions_app(db);
    open_session(&mut harness, priced, "codex-priced", 2, "gpt-5.5");
    let lines: Vec<String> = {
        let found = state(&harness)
            .browser
            .inspect
            .result
            .clone()
            .expect("inspected");
        assert_eq!(found.record.headers.len(), 13);
        (0..6).map(|i| found.line(i).to_string()).collect()
    };
    // Headers are open: every one is listed.
    harness.get_by_label("Headers (13)");
    harness.get_by_label("originator");
    harness.get_by_label("x-codex-beta-features");
    // The wheel over the top of the tab (its headers) scrolls the tab down to the body; the
    // body stays where it starts (the pointer stays above it).
    let tabs = harness
        .get_by_role_and_label(Role::Button, "Request")
        .rect();
    assert!(
        !in_inspector(&harness, "Raw bytes"),
        "the body's selector starts out of view"
    );
    wheel(
        &mut harness,
        Pos2::new(tabs.center().x, tabs.bottom() + 24.0),
        -2000.0,
    );
    assert!(
        harness.query_by_label("originator").is_some(),
        "Headers stayed open"
    );
    for label in ["Body:", "Tree", "Text", "Raw bytes"] {
        assert!(
            in_inspector(&harness, label),
            "{label} was brought into the inspector's view"
        );
    }
    for line in &lines {
        assert!(
            line_in_inspector(&harness, line),
            "the body line {line:?} was brought into view"
        );
    }
    // The body view is not a sliver: the Raw bytes view shows its first lines there too.
    harness
        .get_by_role_and_label(Role::Button, "Raw bytes")
        .click();
    harness.run_steps(4);
    let bytes = state(&harness)
        .browser
        .inspect
        .result
        .as_ref()
        .map(|i| i.bytes.clone())
        .unwrap_or_default();
    for line in 0..6 {
        let text = promptwire::ui::sessions::inspector::raw_line(&bytes, line);
        assert!(
            line_in_inspector(&harness, &text),
            "raw line {line} in view"
        );
    }
}

/// The request table's width.
fn table_width(harness: &App) -> f32 {
    pane_rect(harness, PaneId::RequestTable).width()
}

#[test]
fn the_inspector_collapses_maximises_and_keeps_its_width() {
    let (db, priced, _) = database("inspector-pane-collapse");
    let mut harness = sessions_app(db);
    open_session(&mut harness, priced, "codex-priced", 2, "gpt-5.5");
    let table = table_width(&harness);
    let inspector = pane_rect(&harness, PaneId::Inspector);
    assert!(
        inspector.width() >= 290.0,
        "the inspector has room for its tabs: {inspector:?}"
    );
    // A click on its header collapses it: the table gets its width.
    harness.get_by_label("− Inspector").click();
    harness.run_steps(4);
    assert!(
        state(&harness)
            .settings
            .panes
            .is_collapsed(PaneId::Inspector)
    );
    let collapsed = pane_rect(&harness, PaneId::Inspector).width();
    assert!(collapsed < 40.0, "collapsed to its button: {collapsed}");
    let wide = table_width(&harness);
    assert!(
        wide > table + inspector.width() - collapsed - 20.0,
        "the table grew from {table} to {wide}"
    );
    assert!(harness.query_by_label("Raw bytes").is_none());
    // Alt+6 (the Sessions view's sixth pane) restores it.
    harness.key_press_modifiers(Modifiers::ALT, Key::Num6);
    harness.run_steps(4);
    assert_eq!(
        (
            state(&harness)
                .settings
                .panes
                .is_collapsed(PaneId::Inspector),
            table_width(&harness).round()
        ),
        (false, table.round())
    );
    // Maximise fills the window with it; Restore gives the table its width back.
    harness.get_by_label("Maximise Inspector").click();
    harness.run_steps(4);
    assert_eq!(
        state(&harness).settings.panes.maximised,
        Some(PaneId::Inspector)
    );
    let maximised = pane_rect(&harness, PaneId::Inspector);
    assert!(
        maximised.width() > 1000.0 && maximised.height() > 560.0,
        "the inspector fills the window: {maximised:?}"
    );
    harness.get_by_label("Raw bytes");
    harness.get_by_label("Restore Inspector").click();
    harness.run_steps(4);
    assert_eq!(state(&harness).settings.panes.maximised, None);
    assert_eq!(table_width(&harness).round(), table.round());
    // Its left edge dragged 100 points left: the width is kept (in the settings, which persist).
    let edge = pane_rect(&harness, PaneId::Inspector).left();
    let y = pane_rect(&harness, PaneId::Inspector).center().y;
    harness.hover_at(Pos2::new(edge, y));
    harness.run_steps(2);
    harness.event(egui::Event::PointerButton {
        pos: Pos2::new(edge, y),
        button: egui::PointerButton::Primary,
        pressed: true,
        modifiers: Modifiers::NONE,
    });
    harness.run_steps(1);
    for step in 1..=10 {
        harness.hover_at(Pos2::new(edge - step as f32 * 10.0, y));
        harness.run_steps(1);
    }
    harness.event(egui::Event::PointerButton {
        pos: Pos2::new(edge - 100.0, y),
        button: egui::PointerButton::Primary,
        pressed: false,
        modifiers: Modifiers::NONE,
    });
    harness.run_steps(4);
    let kept = state(&harness)
        .settings
        .panes
        .size(PaneId::Inspector)
        .expect("the width is remembered");
    assert!(
        (kept - (inspector.width() + 100.0)).abs() < 4.0,
        "dragged from {} to {kept}",
        inspector.width()
    );
    let drawn = pane_rect(&harness, PaneId::Inspector).width();
    assert!((drawn - kept).abs() < 2.0, "drawn at {drawn}, kept {kept}");
}

#[test]
fn the_response_tab_shows_the_cost_core_computes_or_price_unknown() {
    let (db, priced, unpriced) = database("inspector-pane-cost");
    let mut harness = sessions_app(db);
    open_session(&mut harness, priced, "codex-priced", 2, "gpt-5.5");
    harness
        .get_by_role_and_label(Role::Button, "Response")
        .click();
    harness.run_steps(4);
    // What core bills the recorded usage: read 98,304 cached, the rest uncached.
    let (input, cached, _) = USAGE;
    let rates = PriceTable::bundled()
        .rates("gpt-5.5", family_kind("gpt-5.5"), input, None)
        .expect("gpt-5.5 is priced");
    let paid = rates.input_cost(cached, 0, input - cached);
    let expected = format!("paid ${paid:.3}");
    assert_eq!(expected, "paid $0.175");
    let line = harness
        .query_all_by_label_contains(&expected)
        .find_map(|n| n.value())
        .unwrap_or_else(|| panic!("{expected} is shown"));
    assert!(line.starts_with("input: paid $0.175 · ideal $"), "{line}");
    assert!(harness.query_by_label_contains("price unknown").is_none());
    // A gpt-5.4 request: its price was never checked.
    open_session(&mut harness, unpriced, "codex-unpriced", 1, "gpt-5.4");
    harness.run_steps(4);
    harness.get_by_label("price unknown (gpt-5.4)");
    assert!(harness.query_by_label_contains("paid $").is_none());
}
