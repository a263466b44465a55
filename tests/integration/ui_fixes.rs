//! The on-screen fixes of issue 22 (item 6) on the whole app (egui_kittest, no GPU, the real
//! `PromptwireApp` with its database injected, real loopback HTTP where a send is involved):
//! the status text is never under the job chips; j/k keep the selected request in view; the
//! session header keeps its name while a search hides the session; a send is reported as the
//! turn the table shows, and a stopped one as "Cancelled" / "cancelled by you"; Ctrl+Enter
//! refuses while a raw JSON edit does not parse; Import body validates before asking to discard
//! and keeps the current base URL; opening another session empties the replay pane; counts are
//! singular when one; a HAR from another tool gets its dialect from the body's shape.

use crate::support::sample_har;
use crate::support::ui as ui_support;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::support::upstream::{End, Reply, Upstream, pieces, sse_file};
use egui::accesskit::Role;
use egui::{Key, Modifiers};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
use pretty_assertions::assert_eq;
use promptwire::app::panes::PaneId;
use promptwire::app::send::KeyLookup;
use promptwire::app::state::Dialog;
use promptwire::app::{AppCommand, AppState, PromptEdit};
use promptwire::store::Store;
use promptwire::ui::PromptwireApp;
use serde_json::json;
use ui_support::{App, app_with, replace_text, scratch_dir, state, wait_for_compile, wait_until};

const SMALL: (f32, f32) = (1024.0, 700.0);

/// The whole app at `size` on a scratch database, with a key, its base URL at `base_url`.
fn send_app(name: &str, size: (f32, f32), base_url: &str) -> (App, PathBuf) {
    let db = scratch_dir(name).join("promptwire.sqlite");
    let path = db.clone();
    let lookup: KeyLookup = Arc::new(|name| (name == "OPENAI_API_KEY").then(|| "sk-x".into()));
    let mut harness = Harness::builder()
        .with_size(egui::vec2(size.0, size.1))
        .build_eframe(move |cc| PromptwireApp::with_db(cc, Some(path)).with_key_lookup(lookup));
    wait_for_compile(&mut harness);
    edit(&harness, PromptEdit::BaseUrl(Some(base_url.to_string())));
    let base = base_url.to_string();
    wait_until(&mut harness, "compiled for loopback", move |s| {
        s.views_are_current() && s.views[0].compiled.url.starts_with(&base)
    });
    (harness, db)
}

fn edit(harness: &App, edit: PromptEdit) {
    harness
        .state()
        .sender()
        .send(AppCommand::Edit(Box::new(edit)));
}

/// A server that sends the start of `text-answer.sse` and then stalls.
fn stalling() -> Upstream {
    let bytes = sse_file("text-answer.sse");
    let text = String::from_utf8(bytes.clone()).expect("utf8");
    let done = text.find("response.output_text.done").expect("done");
    let cut = text[..done].rfind("\n\n").expect("event end") + 2;
    Upstream::in_order(vec![Reply::answer(
        vec![(Duration::ZERO, bytes[..cut].to_vec())],
        End::Hang(Duration::from_secs(30)),
    )])
}

fn recorded(harness: &mut App) {
    wait_until(harness, "sent and recorded", |s| {
        s.send.job.is_none() && (s.send.recorded.is_some() || s.send.error.is_some())
    });
}

/// The position (turn) of stored request `request`.
fn turn_of(db: &std::path::Path, request: i64) -> i64 {
    Store::open(db)
        .expect("db")
        .request(request)
        .expect("request")
        .summary
        .position
}

#[test]
fn the_status_text_is_never_drawn_under_the_job_chips() {
    let server = stalling();
    let (mut harness, _db) = send_app("fixes-status", SMALL, &server.base_url());
    harness.get_by_label("Send").click();
    wait_until(&mut harness, "streaming", |s| {
        s.send.job.is_some() && !s.send.timeline.rows().is_empty()
    });
    let long = format!("A long message {}", "that goes on and on ".repeat(12));
    harness
        .state()
        .sender()
        .send(AppCommand::Notify(long.clone()));
    harness.run_steps(4);
    let status = harness.get_by_label_contains("A long message").rect();
    let chip = harness.get_by_label("send").rect();
    assert!(
        status.right() <= chip.left(),
        "the status text {status:?} ends before the job chip {chip:?}"
    );
    harness.key_press(Key::Escape);
    recorded(&mut harness);
}

#[test]
fn a_send_says_its_turn_and_a_stopped_one_says_cancelled() {
    let server = Upstream::in_order(vec![Reply::answer(
        pieces(&sse_file("text-answer.sse"), 2, Duration::ZERO),
        End::Complete,
    )]);
    let (mut harness, db) = send_app("fixes-turn", (1500.0, 950.0), &server.base_url());
    harness.get_by_label("Send").click();
    recorded(&mut harness);
    let (session, request) = state(&harness).send.recorded.expect("recorded");
    let turn = turn_of(&db, request);
    assert_eq!(
        state(&harness).status.text,
        format!("Sent; recorded as turn {turn} of session #{session}")
    );
    harness.get_by_label(&format!("recorded: session #{session}, turn {turn}"));

    let server = stalling();
    edit(&harness, PromptEdit::BaseUrl(Some(server.base_url())));
    let base = server.base_url();
    wait_until(&mut harness, "recompiled", move |s| {
        s.views_are_current() && s.views[0].compiled.url.starts_with(&base)
    });
    harness.get_by_label("Send").click();
    wait_until(&mut harness, "streaming", |s| {
        !s.send.timeline.rows().is_empty()
    });
    harness.key_press(Key::Escape);
    recorded(&mut harness);
    let (session, request) = state(&harness).send.recorded.expect("recorded");
    let turn = turn_of(&db, request);
    assert_eq!(
        state(&harness).status.text,
        format!("Cancelled; recorded as turn {turn} of session #{session}")
    );
    assert_eq!(
        harness
            .query_all_by_label_contains("cancelled: cancelled")
            .count(),
        0
    );
}

#[test]
fn ctrl_enter_refuses_while_a_raw_json_edit_does_not_parse() {
    let server = Upstream::in_order(vec![Reply::answer(
        pieces(&sse_file("text-answer.sse"), 2, Duration::ZERO),
        End::Complete,
    )]);
    let (mut harness, _db) = send_app("fixes-raw", (1500.0, 950.0), &server.base_url());
    harness
        .get_by_label_contains("message user: How many Rust files")
        .click();
    harness.run_steps(4);
    // The side panes' header rows take a line of the form: the editor is scrolled to.
    harness.get_by_label("Raw JSON").scroll_to_me();
    harness.run_steps(4);
    harness.get_by_label("Raw JSON").click();
    harness.run_steps(4);
    harness.get_by_label("Item JSON").scroll_to_me();
    harness.run_steps(4);
    replace_text(&mut harness, "Item JSON", "{\"type\": \"message\",");
    harness.run_steps(4);
    harness.key_press_modifiers(Modifiers::COMMAND, Key::Enter);
    harness.run_steps(10);
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(
        (state(&harness).send.job.is_none(), server.received().len()),
        (true, 0)
    );
    let refused = "Send: the raw JSON of item 1 does not parse (its error is under the editor) \
                   — fix or undo it first; nothing was sent";
    assert_eq!(state(&harness).send.error.as_deref(), Some(refused));
    // Said in the send bar and the status bar; the parse error stays under the open editor.
    assert_eq!(harness.query_all_by_label(refused).count(), 2);
    harness.get_by_label_contains("the last valid item is still compiled");
}

/// Types `text` into the Import body dialog and presses Import.
fn import_text(harness: &mut App, text: &str) {
    harness.get_by_label("Import body…").click();
    harness.run_steps(4);
    replace_text(harness, "Request body (JSON)", text);
    harness.get_by_label("Import").click();
    harness.run_steps(4);
}

#[test]
fn import_body_validates_before_asking_to_discard_and_keeps_the_base_url() {
    let mut harness = app_with((1500.0, 950.0), None);
    let url = "http://127.0.0.1:9/v1";
    edit(&harness, PromptEdit::BaseUrl(Some(url.to_string())));
    wait_for_compile(&mut harness);
    assert!(state(&harness).has_unsaved_work());
    // Not a body: the error is in the import dialog; nothing asked to discard the edits.
    import_text(&mut harness, "curl https://api.openai.com/v1/responses");
    let dialog = state(&harness).dialog.clone();
    assert!(
        matches!(&dialog, Some(Dialog::Import { error: Some(_), .. })),
        "{dialog:?}"
    );
    harness.get_by_label("Cancel").click();
    harness.run_steps(2);
    // A body: it asks, and once agreed the import keeps the URL the workbench sends to.
    let body = json!({
        "model": "gpt-5.4",
        "instructions": "Answer in French.",
        "input": [{"type":"message","role":"user","content":[{"type":"input_text","text":"Bonjour ?"}]}],
        "tools": [],
        "tool_choice": "auto",
        "parallel_tool_calls": false,
        "store": false,
        "stream": true
    });
    import_text(&mut harness, &body.to_string());
    let dialog = state(&harness).dialog.clone();
    assert!(
        matches!(dialog, Some(Dialog::Unsaved { .. })),
        "{dialog:?} {:?}",
        state(&harness).status
    );
    harness.get_by_label("Discard changes").click();
    wait_until(&mut harness, "imported", |s| s.prompt.model == "gpt-5.4");
    wait_for_compile(&mut harness);
    assert_eq!(
        state(&harness).prompt.compile.base_url.as_deref(),
        Some(url)
    );
    assert!(state(&harness).views[0].compiled.url.starts_with(url));
}

/// The app on a freshly seeded database (plus `extra` HAR sessions) in the Sessions view.
fn sessions_app(name: &str, size: (f32, f32), extra: &[(&str, String)]) -> App {
    let db = scratch_dir(name).join("promptwire.sqlite");
    let mut store = promptwire::store::seed::open_seeded(&db).expect("seeded db");
    for (session, har) in extra {
        store
            .import_har(har, session, std::path::Path::new("extra.har"))
            .expect("import");
    }
    drop(store);
    let mut harness = app_with(size, Some(db));
    ui_support::show_sessions(&mut harness);
    harness
}

fn open_session(harness: &mut App, label: &str) {
    harness.get_by_label_contains(label).click();
    wait_until(harness, "session analysed", |s: &AppState| {
        !s.sessions.rows.is_empty() && s.browser.analysis.is_some()
    });
}

/// `tool-calls.har` as session `name`, its entries repeated `times`; `edit` changes each entry.
fn long_har(name: &str, times: usize, edit: impl Fn(&mut serde_json::Value)) -> String {
    let text = sample_har::variant("tool-calls.har", name, |_, _, _| {});
    let mut har: serde_json::Value = serde_json::from_str(&text).expect("HAR");
    let entries = har["log"]["entries"].as_array().expect("entries").clone();
    let mut all = Vec::new();
    for _ in 0..times {
        all.extend(entries.iter().cloned());
    }
    for entry in &mut all {
        edit(entry);
    }
    har["log"]["entries"] = serde_json::Value::Array(all);
    serde_json::to_string(&har).expect("HAR")
}

#[test]
fn j_and_k_keep_the_selected_request_in_view() {
    let har = long_har("long", 5, |_| {});
    let mut harness = sessions_app("fixes-jk", SMALL, &[("long", har)]);
    open_session(&mut harness, "long · 15 req");
    let count = state(&harness).sessions.rows.len();
    assert_eq!(count, 15);
    for _ in 1..count {
        harness.key_press(Key::J);
        harness.run_steps(4);
        let selected = state(&harness).browser.selected.expect("selected");
        let position = state(&harness).sessions.rows[selected].position.to_string();
        let table = harness.state().ui_state().panes.rects[&PaneId::RequestTable];
        let column = harness.get_by_label("#").rect();
        let cell = harness
            .query_all_by_label(&position)
            .map(|n| n.rect())
            .find(|r| (column.left() - 6.0..=column.left() + 30.0).contains(&r.left()));
        assert!(
            cell.is_some_and(|r| table.contains_rect(r)),
            "row {position} is in view: {cell:?} in {table:?}"
        );
    }
}

#[test]
fn the_session_header_keeps_its_name_while_a_search_hides_it() {
    let mut harness = sessions_app("fixes-header", (1500.0, 950.0), &[]);
    open_session(&mut harness, "#1 tool-calls · 3 req");
    harness.get_by_label("#1 tool-calls");
    harness.get_by_label("Search sessions").focus();
    harness.run_steps(1);
    harness
        .get_by_label("Search sessions")
        .type_text("no-such-session-anywhere");
    harness.key_press(Key::Enter);
    wait_until(&mut harness, "searched", |s| {
        s.sessions.search == "no-such-session-anywhere" && s.sessions.sessions.is_empty()
    });
    harness.get_by_label("#1 tool-calls");
}

#[test]
fn opening_another_session_empties_the_replay_pane() {
    let mut harness = sessions_app("fixes-stale", (1500.0, 950.0), &[]);
    open_session(&mut harness, "#3 failing-stream · 3 req");
    harness.get_by_label("instant").click();
    wait_until(&mut harness, "replayed", |s| {
        s.browser.timeline.outcome().is_some()
    });
    assert!(!state(&harness).browser.timeline.rows().is_empty());
    open_session(&mut harness, "#1 tool-calls · 3 req");
    let s = state(&harness);
    assert_eq!(
        (s.browser.replay.request, s.browser.timeline.rows().len()),
        (None, 0)
    );
    harness.get_by_label("Replay or re-send the selected request: its events show here.");
}

#[test]
fn counts_of_one_are_singular() {
    let mut harness = app_with((1500.0, 950.0), None);
    while state(&harness).prompt.input.len() > 1 {
        edit(&harness, PromptEdit::RemoveItem(0));
        harness.run_steps(2);
    }
    while state(&harness).prompt.tools.len() > 1 {
        edit(&harness, PromptEdit::RemoveTool(0));
        harness.run_steps(2);
    }
    let s = state(&harness);
    let (items, tools) = (s.prompt.input.len(), s.prompt.tools.len());
    let plural = |n: usize, noun: &str| {
        if n == 1 {
            format!("1 {noun}")
        } else {
            format!("{n} {noun}s")
        }
    };
    harness.run_steps(2);
    harness.get_by_label(&format!(
        "not saved to a file · unsaved changes · {} · {}",
        plural(items, "item"),
        plural(tools, "tool")
    ));
    assert_eq!(harness.query_all_by_label_contains("1 items").count(), 0);
    assert_eq!(
        (items, tools),
        (1, 1),
        "one item and one tool (the case of the bug)"
    );
}

#[test]
fn a_har_without_dialects_gets_them_from_the_bodies() {
    let har = long_har("foreign", 1, |entry| {
        if let Some(extra) = entry.get_mut("_promptwire").and_then(|v| v.as_object_mut()) {
            extra.remove("dialect");
        }
    });
    assert!(!har.contains("\"dialect\""), "no dialect left in the HAR");
    let mut harness = sessions_app("fixes-dialect", (1500.0, 950.0), &[("foreign", har)]);
    open_session(&mut harness, "foreign · 3 req");
    let dialects: Vec<Option<String>> = state(&harness)
        .sessions
        .rows
        .iter()
        .map(|r| r.dialect.clone())
        .collect();
    assert_eq!(dialects, vec![Some("standard".to_string()); 3]);
}

#[test]
fn compare_is_left_aligned_summarised_and_steps_through_its_differences() {
    let mut harness = sessions_app("fixes-compare", (1500.0, 950.0), &[]);
    open_session(&mut harness, "#4 cache-prefix-break · 3 req");
    harness
        .get_by_role_and_label(Role::Button, "Compare")
        .click();
    harness.run_steps(2);
    harness.get_by_label("Compare: left").click();
    harness.run_steps(2);
    harness.key_press(Key::J);
    harness.key_press(Key::J);
    harness.run_steps(2);
    harness.get_by_label("Compare: right").click();
    wait_until(&mut harness, "compared", |s| {
        s.browser.compare.result.is_some()
    });
    harness.run_steps(4);
    let aligned = state(&harness)
        .browser
        .compare
        .result
        .clone()
        .expect("result")
        .aligned
        .clone();
    let n = aligned.differences.len();
    assert!(n >= 2, "{n} differences");
    harness.get_by_label(&promptwire::ui::sessions::compare_summary(&aligned));
    // Turn 0 against turn 2 of the sample: the changed id and instruction text, and turn 2's
    // added items, counted as rows.
    harness.get_by_label("3 places differ: 2 rows changed, 51 rows only on the right · in input");
    // Left-aligned with its indentation: the left column's "{" and its first member start at
    // the same x (centred lines of different widths would not).
    let first = aligned.columns[0].text[1]
        .as_deref()
        .expect("a member")
        .to_string();
    let brace = harness
        .query_all_by_label("{")
        .map(|node| node.rect().left())
        .fold(f32::INFINITY, f32::min);
    let member = harness
        .query_all_by_label(&first)
        .map(|node| node.rect().left())
        .fold(f32::INFINITY, f32::min);
    assert!(
        (brace - member).abs() < 1.0,
        "{{ at {brace}, {first} at {member}"
    );
    // n and p step through the differences.
    harness.get_by_label(&format!("{n} differing places"));
    harness.key_press(Key::N);
    harness.run_steps(3);
    harness.get_by_label(&format!("Difference 1 of {n}"));
    harness.key_press(Key::N);
    harness.run_steps(3);
    harness.get_by_label(&format!("Difference 2 of {n}"));
    // The second difference is the instruction text, changed near its end: both sides keep
    // the member name, then `…` and a little context before the first differing character,
    // so the change is in view (the text is too long for its half).
    let changed = aligned.differences[1];
    let line = |c: usize| {
        aligned.columns[c].text[changed]
            .clone()
            .expect("a changed line on both sides")
    };
    let (left, right) = (line(0), line(1));
    let at = promptwire::ui::json_views::first_difference(&left, &right).expect("they differ");
    assert!(at > 60, "the change is late in the line: at {at}");
    for text in [&left, &right] {
        let body = text.trim_start_matches(' ');
        let indent = &text[..text.len() - body.len()];
        assert!(body.starts_with("\"text\": \""), "{body}");
        let skipped: String = body.chars().skip(at - 24).collect();
        harness.get_by_label(&format!("{indent}\"text\": \"…{skipped}"));
    }
    harness.get_by_label("Previous difference").click();
    harness.run_steps(3);
    harness.get_by_label(&format!("Difference 1 of {n}"));
}

#[test]
fn a_spacer_taller_than_the_view_says_where_the_content_is() {
    let mut harness = app_with(SMALL, None);
    harness.run_steps(4);
    // The longest run of placeholder rows of the first column (beside the other column's
    // content, e.g. Lite's additional_tools).
    let rows = state(&harness).views[0].rows().clone();
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for (i, text) in rows.text.iter().enumerate() {
        match (text, runs.last_mut()) {
            (None, Some((start, len))) if *start + *len == i => *len += 1,
            (None, _) => runs.push((i, 1)),
            _ => {}
        }
    }
    let (start, len) = runs
        .into_iter()
        .max_by_key(|(_, len)| *len)
        .expect("a spacer");
    assert!(
        len > 40,
        "a spacer taller than the view: {len} rows from {start}"
    );
    // On first view it says how tall it is and that the column's content follows.
    let said = format!("{len} rows, content below");
    assert_eq!(
        harness.query_all_by_label_contains(&said).count(),
        1,
        "a label saying {said}"
    );
}

#[test]
fn the_timeline_does_not_move_when_continue_appears() {
    let server = Upstream::in_order(vec![Reply::answer(
        pieces(
            &sse_file("tool-calls-crlf.sse"),
            4,
            Duration::from_millis(300),
        ),
        End::Complete,
    )]);
    let (mut harness, _db) = send_app("fixes-continue", SMALL, &server.base_url());
    harness.get_by_label("Send").click();
    wait_until(&mut harness, "streaming", |s| {
        s.send.job.is_some() && !s.send.timeline.rows().is_empty()
    });
    let streaming = harness.get_by_label("preview").rect();
    recorded(&mut harness);
    harness.get_by_label("Continue");
    let done = harness.get_by_label("preview").rect();
    assert_eq!(done.top(), streaming.top(), "the table header stays put");
}
