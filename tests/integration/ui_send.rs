//! Send from the workbench on the whole app (egui_kittest, no GPU, the real `PromptwireApp` with
//! its database injected) against a loopback upstream the test starts (real HTTP, real SSE bytes
//! from `tests/data/sse/`): the events, the completed outcome and usage appear on screen and the
//! send is recorded in a session; Esc stops mid-stream and keeps the partial text; a 429 with
//! Retry-After shows its class and both attempts; a missing API key variable is explained and
//! nothing reaches the server; Continue after a tool call loads the next request, shows its
//! prefix verdict, and sends the first input plus the call outputs into the same session; a
//! WebSocket frame column goes out over a WebSocket; the sidebar's key variable and extra
//! headers reach the server. The API key lookup is injected (no environment variable is set).

use crate::support::loopback;
use crate::support::ui as ui_support;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::support::upstream::{End, Reply, Upstream, pieces, sse_file};
use egui::Key;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
use pretty_assertions::assert_eq;
use promptwire::app::send::KeyLookup;
use promptwire::app::send::turn::verdict_text;
use promptwire::app::settings::{Column, ColumnDialect, ViewKind};
use promptwire::app::{AppCommand, PromptEdit};
use promptwire::core::stream::{ErrorClass, read_all};
use promptwire::core::turn_loop::{PLACEHOLDER_OUTPUT, pending_calls};
use promptwire::store::{OutcomeRecord, RecordedState, Store};
use promptwire::ui::PromptwireApp;
use serde_json::json;
use ui_support::{App, replace_text, scratch_dir, state, wait_for_compile, wait_until};

const KEY: &str = "sk-test-0123";

/// The whole app on a scratch database, reading API keys through `lookup`, its provider's base
/// URL pointed at `base_url`.
fn send_app(name: &str, base_url: &str, lookup: KeyLookup) -> (App, PathBuf) {
    send_app_sized(name, base_url, lookup, (1500.0, 950.0))
}

/// [`send_app`] in a window of `size`.
fn send_app_sized(
    name: &str,
    base_url: &str,
    lookup: KeyLookup,
    size: (f32, f32),
) -> (App, PathBuf) {
    let db = scratch_dir(name).join("promptwire.sqlite");
    let path = db.clone();
    let mut harness = Harness::builder()
        .with_size(egui::vec2(size.0, size.1))
        .build_eframe(move |cc| PromptwireApp::with_db(cc, Some(path)).with_key_lookup(lookup));
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

/// A lookup that knows only OPENAI_API_KEY.
fn with_key() -> KeyLookup {
    Arc::new(|name| (name == "OPENAI_API_KEY").then(|| KEY.to_string()))
}

/// `text-answer.sse` answered whole, in `chunks` writes.
fn text_answer(chunks: usize) -> Reply {
    Reply::answer(
        pieces(&sse_file("text-answer.sse"), chunks, Duration::ZERO),
        End::Complete,
    )
}

/// `text-answer.sse` up to the end of the event before its first `response.output_text.done`,
/// and a server that sends just that and then stalls: (the bytes it sends, the server).
fn stalling_text_answer() -> (Vec<u8>, Upstream) {
    let bytes = sse_file("text-answer.sse");
    let text = String::from_utf8(bytes.clone()).expect("utf8");
    let done = text
        .find("response.output_text.done")
        .expect("a done event");
    let cut = text[..done].rfind("\n\n").expect("an event end") + 2;
    let sent = bytes[..cut].to_vec();
    let server = Upstream::in_order(vec![Reply::answer(
        vec![(Duration::ZERO, sent.clone())],
        End::Hang(Duration::from_secs(30)),
    )]);
    (sent, server)
}

/// Presses Send and waits until the timeline holds every event of `sent`; returns the outcome
/// reading `sent` gives.
fn send_until_all_of(harness: &mut App, sent: &[u8]) -> promptwire::core::stream::TurnOutcome {
    harness.get_by_label("Send").click();
    let (partial, expected) = read_all(sent, Duration::ZERO);
    let events = partial.len();
    wait_until(harness, "partial events arrived", move |s| {
        s.send.timeline.rows().len() == events
    });
    expected
}

fn sent_and_recorded(harness: &mut App) {
    wait_until(harness, "sent and recorded", |s| {
        s.send.job.is_none() && (s.send.recorded.is_some() || s.send.error.is_some())
    });
}

/// The `id` of an item the app added, checked to be `fco_{uuid v7}` as Codex (and the CLI)
/// make them.
fn fco_id(item: &serde_json::Value) -> String {
    let id = item["id"].as_str().unwrap_or_default().to_string();
    let version = id
        .strip_prefix("fco_")
        .and_then(|u| uuid::Uuid::parse_str(u).ok())
        .map(|u| u.get_version_num());
    assert_eq!(version, Some(7), "{item}");
    id
}

/// The stored outcome of the last send.
fn stored_outcome(db: &std::path::Path, s: &promptwire::app::AppState) -> OutcomeRecord {
    let (_, request) = s.send.recorded.expect("recorded");
    Store::open(db)
        .expect("db")
        .outcome(request)
        .expect("outcome")
        .expect("stored")
}

#[test]
fn send_streams_events_outcome_and_usage_and_records_the_session() {
    let server = Upstream::in_order(vec![Reply::answer(
        pieces(&sse_file("text-answer.sse"), 4, Duration::from_millis(20)),
        End::Complete,
    )]);
    let (mut harness, db) = send_app("send-ok", &server.base_url(), with_key());
    harness.get_by_label("Send").click();
    sent_and_recorded(&mut harness);
    let s = state(&harness);
    assert_eq!(s.send.error, None);
    // The server got the column's exact bytes, with the injected key.
    let received = server.received();
    assert_eq!(received.len(), 1);
    let compiled = &s.views[0].compiled;
    assert_eq!(received[0].body, compiled.wire_body().to_vec());
    assert_eq!(
        received[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    // The outcome is the one the SSE bytes hold.
    let (_, expected) = read_all(&sse_file("text-answer.sse"), Duration::ZERO);
    let outcome = s.send.timeline.outcome().expect("outcome").clone();
    assert_eq!(
        (&outcome.text, &outcome.usage, outcome.events),
        (&expected.text, &expected.usage, expected.events)
    );
    assert_eq!(s.send.timeline.rows().len(), expected.events as usize);
    // On screen: the table's rows (it follows the tail: the last events are in view, each with
    // its seq, SSE event name and Responses type), the count, the state line, the text and the
    // usage grid.
    let (entries, _) = read_all(&sse_file("text-answer.sse"), Duration::ZERO);
    harness.get_by_label(&format!("{0} of {0} events", entries.len()));
    for entry in &entries[entries.len() - 3..] {
        harness.get_by_label(&entry.raw.seq.to_string());
        let name = entry.raw.event.as_deref().expect("an SSE event name");
        let data_type = entry.data_type.as_deref().expect("a Responses type");
        // The event name cell and, for these events, the type cell show the same text.
        let want = if name == data_type { 2 } else { 1 };
        assert!(
            harness.query_all_by_label(name).count() >= want,
            "row {} ({name}) on screen",
            entry.raw.seq
        );
    }
    // On screen: the state line, the text and the usage grid.
    let response_id = expected.response_id().expect("id").to_string();
    harness.get_by_label(&format!("completed · {response_id}"));
    assert!(harness.query_all_by_label(&expected.text).count() >= 1);
    harness.get_by_label("uncached input");
    let usage = expected.usage.expect("usage");
    harness.get_by_label(&usage.output_tokens.to_string());
    // Recorded as the first request of a new session, which the sidebar now shows.
    let (session, request) = s.send.recorded.expect("recorded");
    let store = Store::open(&db).expect("db");
    assert_eq!(store.body(request).expect("body").bytes, received[0].body);
    let stored = store.outcome(request).expect("outcome").expect("stored");
    assert_eq!(
        (stored.state.as_str(), &stored.text),
        ("completed", &expected.text)
    );
    wait_until(&mut harness, "sidebar lists the session", move |s| {
        s.sessions.open == Some(session)
            && s.sessions.rows.len() == 1
            && s.sessions.sessions.iter().any(|x| x.id == session)
    });
}

#[test]
fn esc_stops_mid_stream_and_keeps_the_partial_text() {
    let (sent, server) = stalling_text_answer();
    let (mut harness, db) = send_app("send-stop", &server.base_url(), with_key());
    let expected = send_until_all_of(&mut harness, &sent);
    assert!(state(&harness).send.job.is_some(), "still streaming");
    harness.key_press(Key::Escape);
    sent_and_recorded(&mut harness);
    let s = state(&harness);
    let outcome = s.send.timeline.outcome().expect("partial outcome").clone();
    assert_eq!(outcome.text, expected.text);
    harness.get_by_label("stopped (partial outcome)");
    assert!(harness.query_all_by_label(&expected.text).count() >= 1);
    let stored = stored_outcome(&db, s);
    assert_eq!(stored.text, expected.text);
}

#[test]
fn rate_limit_shows_its_class_and_both_attempts() {
    let body = json!({"error": {"type": "requests", "code": "rate_limit_exceeded",
        "message": "Rate limit reached for requests per min. Please try again in 20s."}});
    let server = Upstream::in_order(vec![
        Reply::status(429, &[("retry-after", "1")], &body),
        text_answer(2),
    ]);
    let (mut harness, _db) = send_app("send-429", &server.base_url(), with_key());
    harness.get_by_label("Send").click();
    sent_and_recorded(&mut harness);
    let s = state(&harness);
    assert_eq!(server.received().len(), 2);
    let attempts = s.send.timeline.attempts();
    assert_eq!(attempts.len(), 2);
    let failure = attempts[0].failure.clone().expect("first attempt failed");
    assert_eq!(
        (failure.class.as_str(), failure.retry_after),
        ("retry_limit", Some(Duration::from_secs(1)))
    );
    let (_, expected) = read_all(&sse_file("text-answer.sse"), Duration::ZERO);
    harness.get_by_label("Attempts");
    harness.get_by_label(&format!(
        "#1 HTTP 429 · 0 events · retry_limit: {} · retried after 1.000 s",
        failure.message
    ));
    harness.get_by_label(&format!("#2 HTTP 200 · {} events", expected.events));
}

#[test]
fn a_missing_api_key_is_explained_and_nothing_is_sent() {
    let server = Upstream::in_order(vec![text_answer(1)]);
    let (mut harness, db) = send_app("send-nokey", &server.base_url(), Arc::new(|_| None));
    harness.get_by_label("Send").click();
    harness.run_steps(5);
    std::thread::sleep(Duration::from_millis(200));
    harness.run_steps(2);
    let expected = "Send: the API key variable OPENAI_API_KEY is not set — set OPENAI_API_KEY in \
                    the environment the app runs in (nothing was sent)";
    assert_eq!(state(&harness).send.error.as_deref(), Some(expected));
    assert!(harness.query_all_by_label(expected).count() >= 1);
    assert_eq!(state(&harness).send.job, None);
    assert_eq!(server.received().len(), 0);
    // Nothing recorded either.
    assert_eq!(state(&harness).send.recorded, None);
    if db.exists() {
        let store = Store::open(&db).expect("db");
        let sessions = store
            .list_sessions(promptwire::store::Page::ALL)
            .expect("sessions");
        assert!(sessions.iter().all(|s| !s.name.starts_with("send ")));
    }
}

#[test]
fn continue_after_a_tool_call_sends_the_prefix_and_the_output_into_the_same_session() {
    let server = Upstream::in_order(vec![
        Reply::answer(
            pieces(
                &sse_file("tool-calls-crlf.sse"),
                3,
                Duration::from_millis(10),
            ),
            End::Complete,
        ),
        text_answer(2),
    ]);
    let (mut harness, db) = send_app("send-continue", &server.base_url(), with_key());
    harness.get_by_label("Send").click();
    sent_and_recorded(&mut harness);
    let (session, first) = state(&harness).send.recorded.expect("first recorded");
    let (_, answer) = read_all(&sse_file("tool-calls-crlf.sse"), Duration::ZERO);
    let calls = pending_calls(&answer);
    assert!(!calls.is_empty(), "the fixture answers with tool calls");
    // Every call gets its output field, prefilled with the placeholder; the first is edited.
    for call in &calls {
        let label = format!("output of {} {}", call.name, call.call_id);
        assert_eq!(
            harness.get_by_label(&label).value().as_deref(),
            Some(PLACEHOLDER_OUTPUT)
        );
    }
    let label = format!("output of {} {}", calls[0].name, calls[0].call_id);
    replace_text(&mut harness, &label, "exit code 0");
    harness.get_by_label("Continue").click();
    wait_until(&mut harness, "prefix checked", |s| {
        s.send
            .continued
            .as_ref()
            .is_some_and(|c| c.prefix.is_some())
    });
    let continued = state(&harness).send.continued.clone().expect("continued");
    let report = continued.prefix.clone().expect("verdict").expect("report");
    assert!(report.prefix_kept, "{report:?}");
    harness.get_by_label(&verdict_text(&report));
    // Send the next request: it lands in the same session.
    harness.get_by_label("Send").click();
    wait_until(&mut harness, "second send recorded", move |s| {
        s.send.job.is_none() && s.send.recorded.is_some_and(|(_, r)| r != first)
    });
    let (second_session, second) = state(&harness).send.recorded.expect("second recorded");
    assert_eq!(second_session, session);
    let received = server.received();
    assert_eq!(received.len(), 2);
    let body = |i: usize| -> serde_json::Value {
        serde_json::from_slice(&received[i].body).expect("json body")
    };
    let (one, two) = (body(0), body(1));
    let (one, two) = (
        one["input"].as_array().expect("input").clone(),
        two["input"].as_array().expect("input").clone(),
    );
    // The second input begins with the first, then the response's items, then the outputs.
    assert_eq!(two[..one.len()].to_vec(), one);
    let outputs: Vec<serde_json::Value> = two[one.len()..]
        .iter()
        .filter(|item| {
            item["type"] == "function_call_output" || item["type"] == "custom_tool_call_output"
        })
        .cloned()
        .collect();
    let expected: Vec<serde_json::Value> = calls
        .iter()
        .enumerate()
        .map(|(i, call)| {
            json!({
                "type": format!("{}_output", call.kind),
                "id": fco_id(&outputs[i]),
                "call_id": call.call_id,
                "output": if i == 0 { "exit code 0" } else { PLACEHOLDER_OUTPUT },
            })
        })
        .collect();
    assert_eq!(outputs, expected);
    let store = Store::open(&db).expect("db");
    let requests = store
        .requests(session, promptwire::store::Page::ALL)
        .expect("requests");
    assert_eq!(
        requests.iter().map(|r| r.id).collect::<Vec<_>>(),
        vec![first, second]
    );
    assert_eq!(store.body(second).expect("body").bytes, received[1].body);
}

#[test]
fn the_api_key_variable_is_edited_in_the_sidebar_and_read_at_send_time() {
    let server = Upstream::in_order(vec![text_answer(1)]);
    let lookup: KeyLookup = Arc::new(|name| (name == "PW_UI_TEST_KEY").then(|| KEY.to_string()));
    let (mut harness, _db) = send_app("send-keyvar", &server.base_url(), lookup);
    assert_eq!(
        harness.get_by_label("API key variable").value().as_deref(),
        Some("OPENAI_API_KEY")
    );
    replace_text(&mut harness, "API key variable", "PW_UI_TEST_KEY");
    wait_for_compile(&mut harness);
    assert_eq!(
        state(&harness).prompt.compile.api_key_env.as_deref(),
        Some("PW_UI_TEST_KEY")
    );
    harness.get_by_label("Send").click();
    sent_and_recorded(&mut harness);
    assert_eq!(state(&harness).send.error, None);
    let received = server.received();
    assert_eq!(received.len(), 1);
    assert_eq!(
        received[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
}

#[test]
fn extra_headers_are_edited_in_the_sidebar_and_sent_and_secrets_are_refused() {
    let server = Upstream::in_order(vec![text_answer(1)]);
    let (mut harness, _db) = send_app("send-headers", &server.base_url(), with_key());
    replace_text(
        &mut harness,
        "Extra headers",
        "Authorization: Bearer sk-leak",
    );
    harness.get_by_label(
        "line 1: Authorization carries a secret; use the API key variable (keys are never stored)",
    );
    assert_eq!(state(&harness).prompt.compile.headers, Vec::new());
    replace_text(&mut harness, "Extra headers", "x-team: debugging");
    wait_for_compile(&mut harness);
    assert_eq!(
        state(&harness).prompt.compile.headers,
        vec![("x-team".to_string(), "debugging".to_string())]
    );
    harness.get_by_label("Send").click();
    sent_and_recorded(&mut harness);
    let received = server.received();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].header("x-team"), Some("debugging"));
    assert_eq!(
        received[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
}

/// One WebSocket connection on loopback: reads the `response.create` frame, answers with the
/// data of each event of `tests/data/sse/{name}` as a text message, then closes. Returns the base
/// URL and the frame it read.
fn ws_upstream(name: &str) -> (String, Arc<std::sync::Mutex<Option<String>>>) {
    use futures_util::{SinkExt as _, StreamExt as _};
    use tokio_tungstenite::tungstenite::Message;
    let messages: Vec<String> = read_all(&sse_file(name), Duration::ZERO)
        .0
        .into_iter()
        .map(|entry| entry.raw.data)
        .collect();
    let frame = Arc::new(std::sync::Mutex::new(None));
    let seen = Arc::clone(&frame);
    let addr = loopback::spawn(move |listener| async move {
        let Ok((tcp, _)) = listener.accept().await else {
            return;
        };
        let Ok(mut socket) = tokio_tungstenite::accept_async(tcp).await else {
            return;
        };
        if let Some(Ok(Message::Text(text))) = socket.next().await {
            *seen.lock().expect("frame") = Some(text.to_string());
        }
        for message in messages {
            if socket.send(Message::text(message)).await.is_err() {
                return;
            }
        }
        let _ = socket.close(None).await;
    });
    (format!("http://{addr}/v1"), frame)
}

#[test]
fn a_websocket_frame_column_is_sent_over_a_websocket() {
    let (base, frame) = ws_upstream("text-answer.sse");
    let (mut harness, _db) = send_app("send-ws", &base, with_key());
    harness
        .state()
        .sender()
        .send(AppCommand::SetColumns(vec![Column {
            dialect: ColumnDialect::Primary,
            provider: None,
            view: ViewKind::WsFrame,
        }]));
    wait_until(&mut harness, "frame column compiled", |s| {
        s.views_are_current() && s.views.len() == 1 && s.views[0].view == ViewKind::WsFrame
    });
    harness.get_by_label("Send").click();
    sent_and_recorded(&mut harness);
    let s = state(&harness);
    assert_eq!(s.send.error, None);
    let sent = frame
        .lock()
        .expect("frame")
        .clone()
        .expect("a frame arrived");
    assert_eq!(sent, s.views[0].export_text());
    let (_, expected) = read_all(&sse_file("text-answer.sse"), Duration::ZERO);
    let outcome = s.send.timeline.outcome().expect("outcome");
    assert_eq!(
        (&outcome.text, &outcome.usage),
        (&expected.text, &expected.usage)
    );
    harness.get_by_label(&format!(
        "completed · {}",
        expected.response_id().expect("id")
    ));
}

#[test]
fn the_limits_window_sets_the_event_limit_and_a_bigger_event_ends_the_send_as_limit_exceeded() {
    // The fixture's events, then a 2 MiB delta: past the 1 MiB limit set in the window.
    let mut bytes = sse_file("text-answer.sse");
    let text = String::from_utf8(bytes.clone()).expect("utf8");
    let cut = text
        .find("event: response.completed")
        .expect("a completion");
    bytes.truncate(cut);
    let big = json!({"type": "response.output_text.delta", "item_id": "msg_big",
        "output_index": 0, "content_index": 0, "delta": "x".repeat(2 * 1024 * 1024)});
    let mut sent = bytes.clone();
    sent.extend_from_slice(
        format!("event: response.output_text.delta\ndata: {big}\n\n").as_bytes(),
    );
    let server = Upstream::in_order(vec![Reply::answer(
        pieces(&sent, 8, Duration::ZERO),
        End::Complete,
    )]);
    let (mut harness, db) = send_app("send-limits", &server.base_url(), with_key());

    harness.get_by_label("Limits…").click();
    harness.run_steps(2);
    harness.get_by_label("Limits");
    replace_text(&mut harness, "Largest event", "1");
    harness.key_press(Key::Enter);
    wait_until(&mut harness, "limit set", |s| {
        s.settings.limits.max_event_mib == 1
    });
    harness.get_by_label("Send").click();
    sent_and_recorded(&mut harness);

    let s = state(&harness);
    let (before, _) = read_all(&bytes, Duration::ZERO);
    assert_eq!(s.send.timeline.rows().len(), before.len());
    let outcome = s.send.timeline.outcome().expect("outcome").clone();
    let promptwire::core::stream::TurnState::Failed(error) = &outcome.state else {
        panic!("expected a failure, got {:?}", outcome.state);
    };
    assert_eq!(
        (error.class(), error.to_string()),
        (
            ErrorClass::LimitExceeded,
            "an event is larger than the limit of 1.0 MiB per event".to_string()
        )
    );
    let stored = stored_outcome(&db, s);
    assert_eq!(
        (stored.state, stored.error_class),
        (RecordedState::Failed, Some(ErrorClass::LimitExceeded))
    );
    // Defaults restores the shipped limits.
    harness.get_by_label("Defaults").click();
    wait_until(&mut harness, "defaults", |s| {
        s.settings.limits == promptwire::app::limits::Limits::default()
    });
}

#[test]
fn the_target_picked_in_the_top_bar_before_the_first_send_is_what_the_server_receives() {
    let server = Upstream::in_order(vec![text_answer(2)]);
    let (mut harness, _db) = send_app("send-target", &server.base_url(), with_key());
    let (first, second) = {
        let s = state(&harness);
        (s.views[0].label.clone(), s.views[1].label.clone())
    };
    assert_eq!(
        (first.as_str(), second.as_str()),
        ("Standard · OpenAI · HTTP body", "Lite · OpenAI · HTTP body")
    );
    // Nothing was sent yet, and the picker is on screen, showing the column Send would send.
    assert_eq!(state(&harness).send.shown, false);
    assert_eq!(
        harness.get_by_label("Send target").value().as_deref(),
        Some("Standard · OpenAI · HTTP")
    );
    harness.get_by_label("Send target").click();
    harness.run_steps(3);
    harness
        .get_by_label("Lite · OpenAI · HTTP body — HTTP SSE")
        .click();
    harness.run_steps(3);
    assert_eq!(
        harness.get_by_label("Send target").value().as_deref(),
        Some("Lite · OpenAI · HTTP")
    );
    assert_eq!(state(&harness).send.target, 1);
    harness.get_by_label("Send").click();
    sent_and_recorded(&mut harness);
    let s = state(&harness);
    assert_eq!(s.send.error, None);
    let received = server.received();
    assert_eq!(received.len(), 1);
    let lite = s.views[1].compiled.wire_body().to_vec();
    assert_ne!(lite, s.views[0].compiled.wire_body().to_vec());
    assert_eq!(received[0].body, lite);
}

#[test]
fn continue_after_a_prompt_opened_from_a_file_leaves_the_file_alone_and_adds_codex_ids() {
    let server = Upstream::in_order(vec![Reply::answer(
        pieces(
            &sse_file("tool-calls-crlf.sse"),
            3,
            Duration::from_millis(5),
        ),
        End::Complete,
    )]);
    let dir = scratch_dir("send-continue-file");
    let db = dir.join("promptwire.sqlite");
    let file = dir.join("conversation.json");
    let mut prompt: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/prompts/hello.json"),
        )
        .expect("hello.json"),
    )
    .expect("json");
    prompt["compile"] = json!({"base_url": server.base_url()});
    let text = serde_json::to_string_pretty(&prompt).expect("serialize");
    std::fs::write(&file, &text).expect("write the prompt file");
    let lookup = with_key();
    let path = db.clone();
    let mut harness = Harness::builder()
        .with_size(egui::vec2(1500.0, 950.0))
        .build_eframe(move |cc| PromptwireApp::with_db(cc, Some(path)).with_key_lookup(lookup));
    wait_for_compile(&mut harness);
    ui_support::open_through_dialog(&mut harness, &file);
    assert!(!state(&harness).is_dirty());
    harness.get_by_label("Send").click();
    sent_and_recorded(&mut harness);
    let sent = Arc::clone(&state(&harness).prompt);

    // An edit made after Send: Continue asks before dropping it, and the form keeps it.
    replace_text(&mut harness, "API key variable", "PW_EDITED_AFTER_SEND");
    wait_for_compile(&mut harness);
    let edited = Arc::clone(&state(&harness).prompt);
    replace_text(&mut harness, "new user message", "and the docs?");
    harness.get_by_label("Continue").click();
    harness.run_steps(3);
    harness.get_by_label("Unsaved changes");
    assert!(Arc::ptr_eq(&state(&harness).prompt, &edited));
    harness.get_by_label("Discard changes").click();
    wait_until(&mut harness, "continued", |s| s.send.continued.is_some());
    wait_for_compile(&mut harness);
    // The message went into the next request: its field is empty again.
    harness.run_steps(2);
    assert_eq!(
        harness.get_by_label("new user message").value().as_deref(),
        Some("")
    );

    let s = state(&harness);
    // The file is untouched, the next request is an untitled unsaved document.
    assert_eq!(std::fs::read_to_string(&file).expect("read"), text);
    assert_eq!(s.prompt_path, None);
    assert!(s.is_dirty());
    assert_eq!(s.window_title(), "untitled prompt • unsaved — promptwire");
    let plural = |n: usize, noun: &str| {
        if n == 1 {
            format!("1 {noun}")
        } else {
            format!("{n} {noun}s")
        }
    };
    harness.get_by_label(&format!(
        "not saved to a file · unsaved changes · {} · {}",
        plural(s.prompt.input.len(), "item"),
        plural(s.prompt.tools.len(), "tool")
    ));
    // The outputs carry Codex's ids (uuid v7), as the CLI's.
    let added: Vec<serde_json::Value> = s.prompt.input[sent.input.len()..]
        .iter()
        .map(|item| serde_json::to_value(item).expect("item"))
        .filter(|item| {
            item["type"]
                .as_str()
                .is_some_and(|t| t.ends_with("_output"))
        })
        .collect();
    let (_, answer) = read_all(&sse_file("tool-calls-crlf.sse"), Duration::ZERO);
    assert_eq!(added.len(), pending_calls(&answer).len());
    let ids: std::collections::BTreeSet<String> = added.iter().map(fco_id).collect();
    assert_eq!(ids.len(), added.len(), "distinct ids");
    // Then the user message, with a msg_ id.
    let last = serde_json::to_value(s.prompt.input.last().expect("an item")).expect("item");
    let id = last["id"].as_str().unwrap_or_default().to_string();
    let version = id
        .strip_prefix("msg_")
        .and_then(|u| uuid::Uuid::parse_str(u).ok())
        .map(|u| u.get_version_num());
    assert_eq!(version, Some(7), "{last}");
    assert_eq!(
        last,
        json!({"type": "message", "id": id, "role": "user",
            "content": [{"type": "input_text", "text": "and the docs?"}]})
    );
    // Save asks where to save (it does not overwrite the file it came from).
    harness.get_by_label("Save").click();
    harness.run_steps(3);
    assert!(matches!(
        state(&harness).dialog,
        Some(promptwire::app::state::Dialog::File { .. })
    ));
    harness.get_by_label("Cancel").click();
    harness.run_steps(3);
    // Undo brings back the form as it was before Continue (with the discarded edit).
    harness.get_by_label("Undo").click();
    harness.run_steps(3);
    assert!(Arc::ptr_eq(&state(&harness).prompt, &edited));
    assert_eq!(std::fs::read_to_string(&file).expect("read"), text);
}

#[test]
fn send_reopens_a_collapsed_timeline() {
    let server = Upstream::in_order(vec![text_answer(2), text_answer(2)]);
    let (mut harness, _db) = send_app("send-reopens", &server.base_url(), with_key());
    harness.get_by_label("Send").click();
    sent_and_recorded(&mut harness);
    harness.key_press_modifiers(egui::Modifiers::ALT, Key::Num4);
    harness.run_steps(3);
    assert!(
        state(&harness)
            .settings
            .panes
            .is_collapsed(promptwire::app::panes::PaneId::SendTimeline)
    );
    harness.get_by_label("Send").click();
    harness.run_steps(3);
    assert!(
        !state(&harness)
            .settings
            .panes
            .is_collapsed(promptwire::app::panes::PaneId::SendTimeline),
        "Send shows its answer"
    );
    sent_and_recorded(&mut harness);
    let pane = ui_support::pane_rect(&harness, promptwire::app::panes::PaneId::SendTimeline);
    assert!(pane.height() > 200.0, "{pane:?}");
}

#[test]
fn ctrl_enter_sends() {
    let server = Upstream::in_order(vec![text_answer(2)]);
    let (mut harness, _db) = send_app("send-ctrl-enter", &server.base_url(), with_key());
    assert_eq!(server.received().len(), 0);
    harness.key_press_modifiers(egui::Modifiers::COMMAND, Key::Enter);
    sent_and_recorded(&mut harness);
    assert_eq!(state(&harness).send.error, None);
    let received = server.received();
    assert_eq!(received.len(), 1);
    assert_eq!(
        received[0].body,
        state(&harness).views[0].compiled.wire_body().to_vec()
    );
    let (_, expected) = read_all(&sse_file("text-answer.sse"), Duration::ZERO);
    harness.get_by_label(&format!(
        "completed · {}",
        expected.response_id().expect("id")
    ));
}

#[test]
fn new_session_makes_the_next_send_start_a_fresh_session() {
    let server = Upstream::in_order(vec![text_answer(2), text_answer(2)]);
    let (mut harness, db) = send_app("send-new-session", &server.base_url(), with_key());
    harness.get_by_label("Send starts a new session");
    harness.get_by_label("Send").click();
    sent_and_recorded(&mut harness);
    let (first, _) = state(&harness).send.recorded.expect("first recorded");
    wait_until(&mut harness, "first session open", move |s| {
        s.sessions.open == Some(first)
    });
    harness.get_by_label(&format!("Send adds to session #{first}"));
    harness.get_by_label("New session").click();
    harness.run_steps(3);
    harness.get_by_label("Send starts a new session");
    harness.get_by_label("Send").click();
    wait_until(&mut harness, "second send recorded", move |s| {
        s.send.job.is_none() && s.send.recorded.is_some_and(|(session, _)| session != first)
    });
    let (second, _) = state(&harness).send.recorded.expect("second recorded");
    let store = Store::open(&db).expect("db");
    let counts: Vec<(i64, usize)> = [first, second]
        .iter()
        .map(|&id| {
            let requests = store
                .requests(id, promptwire::store::Page::ALL)
                .expect("requests");
            (id, requests.len())
        })
        .collect();
    assert_eq!(counts, vec![(first, 1), (second, 1)]);
    wait_until(&mut harness, "second session open", move |s| {
        s.sessions.open == Some(second)
    });
    harness.get_by_label(&format!("Send adds to session #{second}"));
}

#[test]
fn browsing_a_session_does_not_change_where_send_records() {
    let server = Upstream::in_order(vec![text_answer(2), text_answer(2), text_answer(2)]);
    let (mut harness, db) = send_app("send-target-browse", &server.base_url(), with_key());
    harness.get_by_label("Send").click();
    sent_and_recorded(&mut harness);
    let (first, first_request) = state(&harness).send.recorded.expect("first recorded");
    assert_eq!(state(&harness).send.into, Some(first));
    // Browse another (seeded) session in the Sessions tab: click it in the list.
    ui_support::show_sessions(&mut harness);
    let other = state(&harness)
        .sessions
        .sessions
        .iter()
        .find(|s| s.id != first)
        .map(|s| s.id)
        .expect("a seeded session besides the sent one");
    let label = state(&harness)
        .sessions
        .sessions
        .iter()
        .find(|s| s.id == other)
        .map(|s| format!("#{other} {}", promptwire::ui::sessions::shown_name(s)))
        .expect("listed");
    harness
        .query_by_label_contains(&label)
        .expect("listed")
        .click();
    wait_until(&mut harness, "other session open", move |s| {
        s.sessions.open == Some(other) && s.sessions.loading == 0
    });
    assert_eq!(
        state(&harness).send.into,
        Some(first),
        "browsing changed Send's target"
    );
    // Back on the workbench: the sidebar still names the sent session, and Send goes there.
    harness.key_press_modifiers(egui::Modifiers::COMMAND, Key::Num1);
    harness.run_steps(3);
    harness.get_by_label(&format!("Send adds to session #{first}"));
    harness.get_by_label("Send").click();
    wait_until(&mut harness, "second send recorded", move |s| {
        s.send.job.is_none() && s.send.recorded.is_some_and(|(_, r)| r != first_request)
    });
    assert_eq!(
        state(&harness).send.recorded.map(|(session, _)| session),
        Some(first)
    );
    let store = Store::open(&db).expect("db");
    let count = |id| {
        store
            .requests(id, promptwire::store::Page::ALL)
            .expect("rows")
            .len()
    };
    let before_other = count(other);
    assert_eq!(count(first), 2);
    // The explicit choice, "Send into…" → the other session, is what changes it.
    harness.get_by_label("Send into…").click();
    harness.run();
    let entry = state(&harness)
        .sessions
        .sessions
        .iter()
        .find(|s| s.id == other)
        .map(|s| format!("#{other} {}", promptwire::ui::sessions::shown_name(s)))
        .expect("listed");
    harness.get_by_label(&entry).click();
    harness.run_steps(3);
    assert_eq!(state(&harness).send.into, Some(other));
    harness.get_by_label(&format!("Send adds to session #{other}"));
    assert!(
        harness.query_by_label(&entry).is_none(),
        "the menu closed on the choice"
    );
    harness.get_by_label("Send").click();
    wait_until(&mut harness, "third send recorded", move |s| {
        s.send.job.is_none() && s.send.recorded.is_some_and(|(session, _)| session == other)
    });
    assert_eq!((count(first), count(other)), (2, before_other + 1));
}

#[test]
fn the_sidebar_shows_the_session_while_it_streams_and_the_stop_button_stops_it() {
    let (sent, server) = stalling_text_answer();
    let (mut harness, db) = send_app("send-live-sidebar", &server.base_url(), with_key());
    let expected = send_until_all_of(&mut harness, &sent);
    // Still streaming, and the sidebar already lists the new session and its request.
    let session = state(&harness)
        .send
        .session
        .expect("recording into a session");
    let model = state(&harness).prompt.model.clone();
    let label = format!("#{session} send {model} (1)");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while harness.query_by_label(&label).is_none()
        || harness.query_by_label_contains("   turn 0 · ").is_none()
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the sidebar did not show {label} and its request while streaming"
        );
        harness.step();
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(state(&harness).send.job.is_some(), "still streaming");
    harness.get_by_label("streaming…");
    // The Stop button (not the key) ends it; the partial text is kept and recorded.
    harness
        .get_by_role_and_label(egui::accesskit::Role::Button, "Stop")
        .click();
    sent_and_recorded(&mut harness);
    harness.get_by_label("stopped (partial outcome)");
    let s = state(&harness);
    assert_eq!(
        s.send.timeline.outcome().map(|o| o.text.clone()),
        Some(expected.text.clone())
    );
    assert_eq!(stored_outcome(&db, s).text, expected.text);
}

/// Posts a small streamed request to `url` through a client of its own, giving up after
/// `timeout`: (status, body) or why it failed.
fn post_with_timeout(url: &str, timeout: Duration) -> Result<(u16, Vec<u8>), String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(async {
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .build()
            .map_err(|e| e.to_string())?;
        let response = client
            .post(url)
            .header("content-type", "application/json")
            .body(r#"{"model":"gpt-5.5","input":[],"stream":true}"#)
            .send()
            .await
            .map_err(|e| e.to_string())?;
        let status = response.status().as_u16();
        let bytes = response.bytes().await.map_err(|e| e.to_string())?;
        Ok((status, bytes.to_vec()))
    })
}

#[test]
fn a_send_the_ui_does_not_drain_does_not_stall_the_recording_proxy() {
    use promptwire::app::proxy::RecordCommand;
    // The send's upstream: far more events than the UI's event channel holds, then a stall.
    let mut stream = String::from(
        "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_many\"}}\n\n",
    );
    let deltas = 3000;
    for _ in 0..deltas {
        stream.push_str(
            "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"delta\":\"x\"}\n\n",
        );
    }
    let send_upstream = Upstream::in_order(vec![Reply::answer(
        vec![(Duration::ZERO, stream.into_bytes())],
        End::Hang(Duration::from_secs(30)),
    )]);
    let answer = sse_file("text-answer.sse");
    let proxy_upstream = Upstream::in_order(vec![Reply::answer(
        pieces(&answer, 2, Duration::ZERO),
        End::Complete,
    )]);
    let (mut harness, _db) = send_app("send-no-stall", &send_upstream.base_url(), with_key());
    harness
        .state()
        .sender()
        .send(AppCommand::Record(RecordCommand::StartProxy {
            listen: "127.0.0.1:0".to_string(),
            upstream: proxy_upstream.base_url(),
        }));
    wait_until(&mut harness, "proxy listening", |s| {
        s.record.proxy.addr.is_some()
    });
    let addr = state(&harness).record.proxy.addr.expect("address");
    harness.get_by_label("Send").click();
    wait_until(&mut harness, "send started", |s| {
        !s.send.timeline.rows().is_empty()
    });
    // The UI stops drawing (no frames, so nothing drains its channel) while the send pours
    // events in; the proxy still relays a client's request at once.
    std::thread::sleep(Duration::from_millis(300));
    let relayed = post_with_timeout(
        &format!("http://{addr}/v1/responses"),
        Duration::from_secs(10),
    );
    assert_eq!(relayed, Ok((200, answer)));
    // Once the UI draws again, every event arrives (none was dropped), and Stop ends the send.
    let events = deltas + 1;
    wait_until(&mut harness, "every event shown", move |s| {
        s.send.timeline.rows().len() == events
    });
    harness
        .get_by_role_and_label(egui::accesskit::Role::Button, "Stop")
        .click();
    sent_and_recorded(&mut harness);
    harness.get_by_label("stopped (partial outcome)");
}

#[test]
fn the_record_panel_opens_below_the_top_bar_at_1024_by_700() {
    use egui_kittest::kittest::Queryable as _;
    let mut harness = ui_support::app_with((1024.0, 700.0), None);
    harness.run_steps(2);
    harness.get_by_label("Record").click();
    harness.run_steps(2);
    // The top bar keeps the whole width (its right end is not under the panel) …
    for label in ["Send", "Send target", "Theme"] {
        assert!(
            ui_support::fully_visible(&harness, label),
            "{label} is on screen"
        );
    }
    // … and the panel starts below it.
    let theme = harness.get_by_label("Theme").rect();
    let heading = harness.get_by_label("Recording proxy").rect();
    assert!(
        heading.top() >= theme.bottom(),
        "the Record panel ({heading:?}) starts below the top bar ({theme:?})"
    );
    assert!(heading.left() < theme.right(), "the panel is at the right");
}

#[test]
fn send_and_its_target_are_on_screen_at_1024_by_700() {
    let mut harness = ui_support::app_with((1024.0, 700.0), None);
    harness.run_steps(2);
    for label in ["Send", "Stop", "Send target", "Theme"] {
        assert!(
            ui_support::fully_visible(&harness, label),
            "{label} is on screen"
        );
    }
}

/// Counts of one in the outcome are singular: a reasoning item with one summary part reads
/// "1 summary part", not "1 summary parts".
#[test]
fn a_reasoning_item_with_one_summary_part_says_so_in_the_singular() {
    let two = String::from_utf8(sse_file("tool-calls-crlf.sse")).expect("utf8");
    let one = two.replace(
        r#",{"type":"summary_text","text":"**Patching the default path**"}]"#,
        "]",
    );
    assert_ne!(one, two, "the fixture's two-part summary is cut to one");
    let (_, expected) = read_all(one.as_bytes(), Duration::ZERO);
    let summary_parts: Vec<usize> = expected
        .output_items
        .iter()
        .filter_map(|item| match item {
            promptwire::core::items::ResponseItem::Reasoning(r) => Some(r.summary.len()),
            _ => None,
        })
        .collect();
    assert_eq!(summary_parts, [1]);
    let server = Upstream::in_order(vec![Reply::answer(
        pieces(one.as_bytes(), 3, Duration::from_millis(5)),
        End::Complete,
    )]);
    let (mut harness, _db) = send_app("send-one-part", &server.base_url(), with_key());
    harness.get_by_label("Send").click();
    sent_and_recorded(&mut harness);
    harness.run_steps(3);
    assert_eq!(
        harness
            .query_all_by_label_contains(" · 1 summary part · ")
            .count(),
        1
    );
    assert_eq!(
        harness.query_all_by_label_contains("summary parts").count(),
        0
    );
}

/// At 1024×700, after a Send with no tool call to answer, the workbench's timeline shows at
/// least three whole event rows under the Continue strip (the pane's first height is at least
/// 265 points, and the strip's room two rows in a short pane; before, two event rows).
#[test]
fn after_a_send_at_1024x700_the_timeline_shows_three_event_rows() {
    let server = Upstream::in_order(vec![Reply::answer(
        pieces(&sse_file("text-answer.sse"), 4, Duration::from_millis(5)),
        End::Complete,
    )]);
    let (mut harness, _db) =
        send_app_sized("send-1024", &server.base_url(), with_key(), (1024.0, 700.0));
    harness.get_by_label("Send").click();
    sent_and_recorded(&mut harness);
    harness.run_steps(4);
    harness.get_by_label("Continue");
    let shown =
        ui_support::event_rows_in_view(&harness, promptwire::app::panes::PaneId::SendTimeline);
    assert!(shown >= 3, "{shown} event rows in view");
}
