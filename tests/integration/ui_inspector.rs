//! The request inspector and the Sessions view's row and session actions on the whole app
//! (egui_kittest, 1024×700) over a real SQLite file: the seeded samples plus a session of three
//! recorded requests (completed with events, HTTP 500, interrupted). The inspector shows the
//! first request's stored headers — a credential-shaped value redacted, the Authorization
//! header never stored — and its recorded events; Copy as cURL puts a command on the clipboard
//! (read from egui's output) whose here-document is the exact stored body; the errors-only
//! filter leaves only the failed request in the table; a session deleted from the list comes
//! back with Undo.

use crate::support::ui as ui_support;

use std::path::PathBuf;
use std::time::Duration;

use egui::accesskit::Role;
use egui_kittest::kittest::Queryable as _;
use pretty_assertions::assert_eq;
use promptwire::core::stream::RawEvent;
use promptwire::store::seed::open_seeded;
use promptwire::store::{
    NewRequest, NewSession, OutcomeRecord, RecordedState, ResponseMeta, Source,
};
use serde_json::json;
use ui_support::{App, app_with, scratch_dir, state, wait_until};

/// The first request's exact body (key order and spacing kept; a quote inside).
const BODY: &str = "{\"model\":\"gpt-5.5\",\"input\":[{\"type\":\"message\",\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":\"it's a test\"}]}],\n  \"stream\":true}";

/// The recorded events of the first request.
fn events() -> Vec<RawEvent> {
    vec![
        RawEvent {
            seq: 0,
            received_at: Duration::from_millis(12),
            event: Some("response.created".to_string()),
            data: "{\"type\":\"response.created\"}".to_string(), bytes: None,
        },
        RawEvent {
            seq: 1,
            received_at: Duration::from_millis(40),
            event: Some("response.completed".to_string()),
            data: "{\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":20,\"output_tokens\":3}}}".to_string(), bytes: None,
        },
    ]
}

/// A seeded database plus the `inspect-me` session; returns the path and the session id.
fn database(name: &str) -> (PathBuf, i64) {
    let db = scratch_dir(name).join("promptwire.sqlite");
    let mut store = open_seeded(&db).expect("seeded database");
    let session = store
        .create_session(&NewSession {
            name: "inspect-me".to_string(),
            source: Source::Send,
            provider: Some("openai".to_string()),
            model: Some("gpt-5.5".to_string()),
            created_us: 1_900_000_000_000_000,
        })
        .expect("session");
    let headers = [
        ("content-type".to_string(), "application/json".to_string()),
        (
            "authorization".to_string(),
            "Bearer sk-proj-abcdefghijklmnopqrstuvwxyz012345".to_string(),
        ),
        (
            "x-forwarded-for".to_string(),
            "Bearer sk-proj-abcdefghijklmnopqrstuvwxyz012345".to_string(),
        ),
    ];
    let outcomes = [
        (Some(200), RecordedState::Completed, None),
        (Some(500), RecordedState::Failed, Some("http")),
        (Some(200), RecordedState::Failed, Some("interrupted")),
    ];
    for (i, (status, state, class)) in outcomes.into_iter().enumerate() {
        let body = if i == 0 {
            BODY.to_string()
        } else {
            format!("{{\"model\":\"gpt-5.5\",\"input\":\"turn {i}\"}}")
        };
        let id = store
            .add_request(
                session,
                &NewRequest {
                    dialect: Some("standard".to_string()),
                    provider: Some("openai".to_string()),
                    headers: &headers,
                    started_us: Some(1_900_000_000_000_000 + i as i64 * 1_000_000),
                    ..NewRequest::post("https://api.openai.com/v1/responses", body.as_bytes())
                },
            )
            .expect("request");
        store
            .set_response(
                id,
                &ResponseMeta {
                    status,
                    headers: vec![("x-request-id".to_string(), format!("req_{i}"))],
                    wait_us: Some(100_000),
                    total_us: Some(200_000),
                    ..ResponseMeta::default()
                },
            )
            .expect("response");
        if i == 0 {
            store.add_events(id, &events()).expect("events");
        }
        store
            .set_outcome(
                id,
                &OutcomeRecord {
                    state,
                    error_class: class.and_then(|c| c.parse().ok()),
                    usage: (i == 0).then(|| {
                        json!({"input_tokens": 20, "input_tokens_details": {"cached_tokens": 8,
                            "cache_write_tokens": 4}, "output_tokens": 3, "total_tokens": 23})
                    }),
                    events: if i == 0 { 2 } else { 0 },
                    ..OutcomeRecord::default()
                },
            )
            .expect("outcome");
    }
    (db, session)
}

/// The app at 1024×700 on `db`, in the Sessions view with `session` open and its first request
/// in the inspector.
fn inspector_app(db: PathBuf, session: i64) -> App {
    let mut harness = app_with((1024.0, 700.0), Some(db));
    ui_support::show_sessions(&mut harness);
    harness
        .get_by_label(&format!(
            "#{session} inspect-me · 3 req · gpt-5.5 · ! 1 interrupted"
        ))
        .click();
    wait_until(&mut harness, "first request inspected", |s| {
        s.sessions.rows.len() == 3
            && s.browser
                .inspect
                .result
                .as_ref()
                .is_some_and(|i| Some(i.request) == s.sessions.rows.first().map(|r| r.id))
    });
    harness
}

#[test]
fn the_inspector_shows_headers_with_the_key_redacted_and_the_events() {
    let (db, session) = database("inspector-headers");
    let mut harness = inspector_app(db, session);
    let shown = state(&harness)
        .browser
        .inspect
        .result
        .as_ref()
        .map(|i| i.record.headers.clone());
    assert_eq!(
        shown,
        Some(vec![
            ("content-type".to_string(), "application/json".to_string()),
            (
                "x-forwarded-for".to_string(),
                "Bearer <redacted>".to_string()
            ),
        ])
    );
    harness.get_by_label("x-forwarded-for");
    harness.get_by_label("Bearer <redacted>");
    harness.get_by_label(
        "authorization: <redacted> — credentials (Authorization, API keys, cookies) are never stored",
    );
    assert!(
        harness.query_by_label_contains("sk-proj").is_none(),
        "the key is on screen"
    );
    let usage = state(&harness)
        .browser
        .inspect
        .result
        .as_ref()
        .and_then(|i| i.usage);
    assert_eq!(
        usage,
        Some(promptwire::core::stream::UsageCounts {
            input_tokens: Some(20),
            cached_input_tokens: Some(8),
            cache_write_input_tokens: Some(4),
            output_tokens: Some(3),
            reasoning_output_tokens: None,
            total_tokens: Some(23),
        })
    );
    harness
        .get_by_role_and_label(Role::Button, "Response")
        .click();
    harness.run_steps(3);
    harness.get_by_label("cache write");
    harness.get_by_label("x-request-id");
    harness
        .get_by_role_and_label(Role::Button, "Events")
        .click();
    harness.run_steps(3);
    harness.get_by_label("2 events");
    for line in [
        "#0 +12 ms response.created {\"type\":\"response.created\"}",
        "#1 +40 ms response.completed {\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":20,\"output_tokens\":3}}}",
    ] {
        harness.get_by_label(line);
    }
}

/// Steps frames until the app puts text on the clipboard (read from egui's output).
fn copied_text(harness: &mut App) -> Option<String> {
    let mut copied = None;
    for _ in 0..2000 {
        harness.step();
        copied = harness
            .output()
            .platform_output
            .commands
            .iter()
            .find_map(|c| match c {
                egui::OutputCommand::CopyText(text) => Some(text.clone()),
                _ => None,
            });
        if copied.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    copied
}

#[test]
fn copy_as_curl_puts_the_exact_body_on_the_clipboard() {
    let (db, session) = database("inspector-curl");
    let mut harness = inspector_app(db, session);
    harness.key_press(egui::Key::C);
    let copied = copied_text(&mut harness);
    let expected = format!(
        "curl -sS -N -X POST 'https://api.openai.com/v1/responses' \\\n  -H \"Authorization: Bearer $OPENAI_API_KEY\" \\\n  -H 'content-type: application/json' \\\n  -H 'x-forwarded-for: Bearer <redacted>' \\\n  --data-binary @- <<'PROMPTWIRE_BODY'\n{BODY}\nPROMPTWIRE_BODY\n"
    );
    assert_eq!(copied.as_deref(), Some(expected.as_str()));
    assert_eq!(
        promptwire::core::export::curl_heredoc_body(&expected),
        Some(BODY)
    );
    // The row's right-click menu: Copy body copies the exact bytes.
    let time = chrono::DateTime::from_timestamp_micros(1_900_000_000_000_000)
        .map(|t| t.format("%H:%M:%S").to_string())
        .expect("time");
    harness.get_by_label(&time).click_secondary();
    harness.run_steps(3);
    harness.get_by_label("Copy body (b)").click();
    assert_eq!(copied_text(&mut harness).as_deref(), Some(BODY));
}

#[test]
fn an_errors_only_filter_shows_only_failed_requests() {
    let (db, session) = database("inspector-filter");
    let mut harness = inspector_app(db, session);
    assert_eq!(state(&harness).browser.visible, vec![0, 1, 2]);
    harness
        .get_by_role_and_label(Role::Button, "failed")
        .click();
    wait_until(&mut harness, "filtered", |s| s.browser.visible.len() == 1);
    let shown: Vec<String> = state(&harness)
        .browser
        .visible
        .iter()
        .map(|&i| promptwire::ui::sessions::status_text(&state(&harness).sessions.rows[i]))
        .collect();
    assert_eq!(shown, vec!["! HTTP 500".to_string()]);
    harness.get_by_label("! HTTP 500");
    assert!(harness.query_by_label("200 · completed").is_none());
    assert!(harness.query_by_label("! 200 · interrupted").is_none());
    harness.get_by_label("1 of 3 shown");
    // All again, sorted by start time, newest first (the header clicked twice).
    harness.get_by_role_and_label(Role::Button, "all").click();
    wait_until(&mut harness, "unfiltered", |s| s.browser.visible.len() == 3);
    harness.get_by_role_and_label(Role::Button, "time").click();
    harness.run_steps(3);
    harness
        .get_by_role_and_label(Role::Button, "time ^")
        .click();
    wait_until(&mut harness, "sorted", |s| {
        s.browser.visible == vec![2, 1, 0]
    });
    harness.get_by_label("time v");
}

#[test]
fn a_deleted_session_comes_back_with_undo() {
    let (db, session) = database("inspector-delete");
    let mut harness = inspector_app(db.clone(), session);
    let label = format!("#{session} inspect-me · 3 req · gpt-5.5 · ! 1 interrupted");
    harness.get_by_label(&label).click_secondary();
    harness.run_steps(3);
    harness.get_by_label("Delete…").click();
    harness.run_steps(3);
    harness
        .get_by_role_and_label(Role::Button, "Delete")
        .click();
    wait_until(&mut harness, "deleted", move |s| {
        s.sessions.pending_delete.is_some()
            && s.sessions.loading == 0
            && !s.sessions.sessions.iter().any(|x| x.id == session)
    });
    assert!(harness.query_by_label(&label).is_none());
    assert_eq!(state(&harness).sessions.open, None);
    harness.get_by_label("Undo").click();
    wait_until(&mut harness, "undone", move |s| {
        s.sessions.pending_delete.is_none()
            && s.sessions.loading == 0
            && s.sessions.sessions.iter().any(|x| x.id == session)
    });
    harness.get_by_label(&label);
    // Nothing was deleted in the file.
    let store = promptwire::store::Store::open_read_only(&db).expect("store");
    assert_eq!(store.session(session).map(|s| s.requests).ok(), Some(3));
}

#[test]
fn export_body_and_har_of_the_selected_request_write_its_exact_bytes() {
    let (db, session) = database("inspector-export");
    let dir = db.parent().expect("scratch").to_path_buf();
    let mut harness = inspector_app(db, session);
    let body_file = dir.join("exported-body.json");
    harness.key_press(egui::Key::E);
    harness.run_steps(3);
    ui_support::replace_text(&mut harness, "Path", &body_file.display().to_string());
    harness.get_by_label("Write file").click();
    let want = body_file.clone();
    wait_until(&mut harness, "body written", move |s| {
        s.dialog.is_none() && want.exists()
    });
    assert_eq!(
        std::fs::read_to_string(&body_file).ok().as_deref(),
        Some(BODY)
    );
    let har_file = dir.join("exported.har");
    harness.key_press(egui::Key::H);
    harness.run_steps(3);
    ui_support::replace_text(&mut harness, "Path", &har_file.display().to_string());
    harness.get_by_label("Write file").click();
    let want = har_file.clone();
    wait_until(&mut harness, "HAR written", move |s| {
        s.dialog.is_none() && want.exists()
    });
    let log: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&har_file).expect("har")).expect("json");
    let bodies: Vec<&str> = log
        .pointer("/log/entries")
        .and_then(serde_json::Value::as_array)
        .map(|entries| {
            entries
                .iter()
                .filter_map(|e| e.pointer("/request/postData/text")?.as_str())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(bodies, vec![BODY]);
}
