//! "Ask the server why" on the whole app (egui_kittest, the real `PromptwireApp` on a scratch
//! database) against a loopback upstream: with the Send bar's "Ask why" ticked, the second Send's
//! body is the first one's plus `prompt_cache_options.comparison_response_id` = the first
//! response's id, right after `prompt_cache_key`; the answer's `prompt_cache_diagnostics` is
//! shown as the outcome's "server cache" line; and the Sessions' Re-send with "ask the server
//! why" ticked sends a recorded request's exact body plus the previous request's recorded
//! response id. Without the box ticked nothing changes.

use crate::support::ui as ui_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::support::upstream::{Reply, Upstream, paced, sse_event};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
use pretty_assertions::assert_eq;
use promptwire::app::session_view::{MainView, SessionCommand};
use promptwire::app::{AppCommand, PromptEdit};
use promptwire::core::prompt::Prompt;
use promptwire::store::Store;
use promptwire::ui::PromptwireApp;
use serde_json::{Value, json};
use ui_support::{App, scratch_dir, state, wait_for_compile, wait_until};

const KEY: &str = "sk-test-0123";

/// An upstream answering `resp_N` (N from 1, in arrival order); a request that names a
/// comparison response gets a cache-miss diagnosis.
fn upstream() -> Upstream {
    let count = Arc::new(AtomicUsize::new(0));
    Upstream::start(move |req| {
        let n = count.fetch_add(1, Ordering::SeqCst) + 1;
        let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
        let id = format!("resp_{n}");
        let mut response = json!({"id": id, "status": "completed", "usage": {
            "input_tokens": 3000, "input_tokens_details": {"cached_tokens": 1024,
            "cache_write_tokens": 1976}, "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 3005}});
        if body
            .pointer("/prompt_cache_options/comparison_response_id")
            .is_some()
        {
            response["prompt_cache_diagnostics"] = json!({"type": "cache_miss",
                "reason": "input_changed", "cache_missed_tokens": 1976,
                "comparison_reusable_tokens": 1024});
        }
        Reply::sse(paced(
            &[
                sse_event(
                    "response.created",
                    &json!({"type": "response.created", "response": {"id": id}}),
                ),
                sse_event(
                    "response.completed",
                    &json!({"type": "response.completed", "response": response}),
                ),
            ],
            Duration::ZERO,
        ))
    })
}

/// The app on a scratch database, its provider pointed at `base_url`, the key injected.
fn app(name: &str, base_url: &str) -> (App, std::path::PathBuf) {
    let db = scratch_dir(name).join("promptwire.sqlite");
    let path = db.clone();
    let mut harness = Harness::builder()
        .with_size(egui::vec2(1500.0, 950.0))
        .build_eframe(move |cc| {
            PromptwireApp::with_db(cc, Some(path)).with_key_lookup(Arc::new(|name| {
                (name == "OPENAI_API_KEY").then(|| KEY.to_string())
            }))
        });
    wait_for_compile(&mut harness);
    harness
        .state()
        .sender()
        .send(AppCommand::Edit(Box::new(PromptEdit::BaseUrl(Some(
            base_url.to_string(),
        )))));
    let base = base_url.to_string();
    wait_until(&mut harness, "compiled for loopback", move |s| {
        s.views_are_current() && s.views[0].compiled.url.starts_with(&base)
    });
    (harness, db)
}

fn send(harness: &mut App) {
    harness.get_by_label("Send").click();
    wait_until(harness, "sent and recorded", |s| {
        s.send.job.is_none() && (s.send.recorded.is_some() || s.send.error.is_some())
    });
    assert_eq!(state(harness).send.error, None);
}

/// `body` with `prompt_cache_options: {"comparison_response_id": id}` after `prompt_cache_key`.
fn with_comparison(body: &Value, id: &str) -> Value {
    let mut out = serde_json::Map::new();
    for (key, value) in body.as_object().expect("object") {
        out.insert(key.clone(), value.clone());
        if key == "prompt_cache_key" {
            out.insert(
                "prompt_cache_options".to_string(),
                json!({"comparison_response_id": id}),
            );
        }
    }
    Value::Object(out)
}

fn parsed(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).expect("JSON body")
}

#[test]
fn ask_why_sets_the_comparison_to_the_previous_response_and_shows_the_diagnosis() {
    let server = upstream();
    let (mut harness, db) = app("ask-why-send", &server.base_url());
    send(&mut harness);
    harness.get_by_label("Ask why").click();
    harness.run_steps(3);
    assert!(state(&harness).send.ask_why);
    send(&mut harness);

    let received = server.received();
    assert_eq!(received.len(), 2);
    let first = parsed(&received[0].body);
    assert!(first.get("prompt_cache_key").is_some(), "{first}");
    assert_eq!(first.get("prompt_cache_options"), None);
    // Whole value and key order: the first body plus the option, nothing else.
    let expected = with_comparison(&first, "resp_1");
    assert_eq!(
        String::from_utf8(received[1].body.clone()).expect("utf-8"),
        serde_json::to_string(&expected).expect("json")
    );
    // The form's prompt is untouched (the option is the send's, not the prompt's).
    assert_eq!(
        state(&harness).prompt.prompt_cache_options,
        Prompt::new("m").prompt_cache_options
    );
    // The outcome shows the server's word with the usage's read and written tokens.
    harness.run_steps(3);
    harness.get_by_label(
        "server cache: miss — input_changed, 1,976 tokens affected, 1,024 reusable in the \
         compared response (read 1024, wrote 1976)",
    );
    // Recorded as sent.
    let (_, request) = state(&harness).send.recorded.expect("recorded");
    let store = Store::open(&db).expect("db");
    assert_eq!(
        store.body(request).expect("body").bytes,
        received[1].body,
        "the recording holds the body with the comparison"
    );
}

#[test]
fn resend_with_ask_why_compares_with_the_previous_recorded_response() {
    let server = upstream();
    let (mut harness, db) = app("ask-why-resend", &server.base_url());
    send(&mut harness);
    send(&mut harness);
    let (session, _) = state(&harness).send.recorded.expect("recorded");
    let command = |harness: &App, command| {
        harness.state().sender().send(AppCommand::Sessions(command));
    };
    command(&harness, SessionCommand::ShowView(MainView::Sessions));
    command(&harness, SessionCommand::Open(session));
    wait_until(&mut harness, "session open", |s| {
        s.sessions.rows.len() == 2 && s.browser.analysis.is_some()
    });
    command(&harness, SessionCommand::Select(1));
    harness.run_steps(3);
    harness.get_by_label("ask the server why").click();
    harness.run_steps(3);
    assert!(state(&harness).browser.ask_why);
    harness.get_by_label("Re-send").click();
    wait_until(&mut harness, "re-sent and recorded", |s| {
        s.browser.replay.job.is_none() && s.sessions.rows.len() == 3
    });

    let store = Store::open(&db).expect("db");
    let rows = state(&harness).sessions.rows.clone();
    let recorded_response = store
        .outcome(rows[0].id)
        .expect("outcome")
        .and_then(|o| o.response_id);
    assert_eq!(recorded_response.as_deref(), Some("resp_1"));
    let stored = parsed(&store.body(rows[1].id).expect("body").bytes);
    let received = server.received();
    assert_eq!(received.len(), 3);
    assert_eq!(
        String::from_utf8(received[2].body.clone()).expect("utf-8"),
        serde_json::to_string(&with_comparison(&stored, "resp_1")).expect("json")
    );
}
