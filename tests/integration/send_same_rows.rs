//! One sender, one recording: the same stand-in answer sent by the app's Send (whole-app
//! kittest), by the Sessions view's Re-send of that stored request, and by the CLI's `send` (the
//! built binary) is stored as the same rows — request, body, events and outcome, whole values,
//! ids, positions and times normalised — over HTTP SSE and over a WebSocket. The API key reaches
//! the app and its Re-send through the injected key lookup, the CLI through its environment.
//! And the live stream they all consume is bounded without losing anything: a consumer that
//! reads late still gets every event, in order, then the result.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::support::loopback;
use crate::support::ui as ui_support;
use crate::support::upstream::{End, Reply, Upstream, pieces, sse_file};
use egui_kittest::kittest::Queryable as _;
use pretty_assertions::assert_eq;
use promptwire::app::AppCommand;
use promptwire::app::session_view::SessionCommand;
use promptwire::app::settings::{Column, ColumnDialect, ViewKind};
use promptwire::core::stream::{RawEvent, read_all};
use promptwire::store::{OutcomeRecord, Page, RecordedState, RequestRecord, Store, StoredBody};
use promptwire::ui::PromptwireApp;
use serde_json::json;
use ui_support::{App, scratch_dir, state, wait_for_compile, wait_until};

const KEY: &str = "sk-test-same-rows-0123";

/// One stored request, whole, with what differs between two sends of it zeroed: ids,
/// positions and times.
#[derive(Debug, PartialEq)]
struct Rows {
    request: RequestRecord,
    body: StoredBody,
    events: Vec<RawEvent>,
    outcome: Option<OutcomeRecord>,
}

/// Response headers whose value is made fresh per answer: the clock, and the WebSocket
/// upgrade's accept key.
const PER_CONNECTION: [&str; 2] = ["date", "sec-websocket-accept"];

fn rows(db: &Path, request: i64) -> Rows {
    let store = Store::open(db).expect("db");
    let mut record = store.request(request).expect("request");
    let summary = &mut record.summary;
    summary.id = 0;
    summary.session_id = 0;
    summary.position = 0;
    summary.started_us = summary.started_us.map(|_| 0);
    summary.wait_us = summary.wait_us.map(|_| 0);
    summary.total_us = summary.total_us.map(|_| 0);
    for (name, value) in &mut record.response_headers {
        if PER_CONNECTION.contains(&name.to_ascii_lowercase().as_str()) {
            *value = "(per connection)".to_string();
        }
    }
    let mut events = store.events(request, Page::ALL).expect("events");
    for event in &mut events {
        event.received_at = Duration::ZERO;
    }
    let mut outcome = store.outcome(request).expect("outcome");
    if let Some(outcome) = outcome.as_mut() {
        outcome.first_event_us = outcome.first_event_us.map(|_| 0);
        outcome.first_text_us = outcome.first_text_us.map(|_| 0);
        outcome.total_us = outcome.total_us.map(|_| 0);
    }
    Rows {
        request: record,
        body: store.body(request).expect("body"),
        events,
        outcome,
    }
}

/// Every request id of `db`, in the order they were stored.
fn request_ids(db: &Path) -> Vec<i64> {
    let store = Store::open(db).expect("db");
    let mut ids: Vec<i64> = store
        .list_sessions(Page::ALL)
        .expect("sessions")
        .iter()
        .flat_map(|s| store.requests(s.id, Page::ALL).expect("requests"))
        .map(|r| r.id)
        .collect();
    ids.sort_unstable();
    ids
}

/// `assets/prompts/hello.json` pointed at `base`, written to a scratch file.
fn prompt_file(dir: &Path, base: &str) -> PathBuf {
    let mut prompt: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/prompts/hello.json"),
        )
        .expect("hello.json"),
    )
    .expect("json");
    prompt["compile"] = json!({"base_url": base});
    let file = dir.join("same-rows.json");
    std::fs::write(&file, serde_json::to_string_pretty(&prompt).expect("json")).expect("write");
    file
}

/// (a) the app's Send of `file` and (b) the Sessions Re-send of what it stored, over `view`'s
/// wire; then (c) the CLI's `send` of the same file. Returns the three stored requests.
fn send_three_ways(name: &str, base: &str, view: ViewKind) -> [Rows; 3] {
    let dir = scratch_dir(name);
    let db = dir.join("promptwire.sqlite");
    let file = prompt_file(&dir, base);
    let lookup: promptwire::app::send::KeyLookup =
        Arc::new(|name| (name == "OPENAI_API_KEY").then(|| KEY.to_string()));
    let path = db.clone();
    let mut harness: App = egui_kittest::Harness::builder()
        .with_size(egui::vec2(1500.0, 950.0))
        .build_eframe(move |cc| PromptwireApp::with_db(cc, Some(path)).with_key_lookup(lookup));
    wait_for_compile(&mut harness);
    ui_support::open_through_dialog(&mut harness, &file);
    harness
        .state()
        .sender()
        .send(AppCommand::SetColumns(vec![Column {
            dialect: ColumnDialect::Primary,
            provider: None,
            view,
        }]));
    wait_until(&mut harness, "one column compiled", move |s| {
        s.views_are_current() && s.views.len() == 1 && s.views[0].view == view
    });

    // (a) Send.
    harness.get_by_label("Send").click();
    wait_until(&mut harness, "sent and recorded", |s| {
        s.send.job.is_none() && (s.send.recorded.is_some() || s.send.error.is_some())
    });
    let s = state(&harness);
    assert_eq!(s.send.error, None);
    let (_, sent) = s.send.recorded.expect("recorded");
    wait_until(&mut harness, "the session's row listed", |s| {
        s.sessions.rows.len() == 1
    });

    // (b) Re-send of the stored request, into the same session.
    harness
        .state()
        .sender()
        .send(AppCommand::Sessions(SessionCommand::Resend(0)));
    wait_until(&mut harness, "re-sent and recorded", |s| {
        s.browser.replay.job.is_none() && s.sessions.rows.len() == 2
    });
    assert_eq!(state(&harness).browser.error, None);
    let resent = state(&harness).sessions.rows[1].id;
    drop(harness);
    let before = request_ids(&db);

    // (c) The CLI.
    let mut cli = std::process::Command::new(env!("CARGO_BIN_EXE_promptwire"));
    cli.args(["send", &file.display().to_string(), "--provider", "openai"])
        .args(["--base-url", base, "--db", &db.display().to_string()])
        .args(["--json", "--max-retries", "0", "--idle-timeout-secs", "10"])
        .env("OPENAI_API_KEY", KEY);
    if view == ViewKind::WsFrame {
        cli.arg("--ws");
    }
    let out = cli.output().expect("run promptwire");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let new: Vec<i64> = request_ids(&db)
        .into_iter()
        .filter(|id| !before.contains(id))
        .collect();
    assert_eq!(new.len(), 1, "the CLI stored one request: {new:?}");
    assert!(sent < resent && resent < new[0], "{sent} {resent} {new:?}");
    [rows(&db, sent), rows(&db, resent), rows(&db, new[0])]
}

/// `text-answer.sse`, which every stand-in answers.
const ANSWER: &str = "text-answer.sse";

fn assert_same(rows: [Rows; 3]) {
    let [app, resend, cli] = rows;
    let (_, expected) = read_all(&sse_file(ANSWER), Duration::ZERO);
    let outcome = app.outcome.as_ref().expect("an outcome");
    assert_eq!(
        (outcome.state, &outcome.text, outcome.events),
        (RecordedState::Completed, &expected.text, expected.events)
    );
    assert_eq!(app.events.len() as u64, expected.events);
    assert_eq!(resend, app, "Re-send stored other rows than Send");
    assert_eq!(cli, app, "the CLI stored other rows than the app");
}

#[test]
fn send_resend_and_cli_store_the_same_rows_over_http() {
    let reply = || {
        Reply::answer(
            pieces(&sse_file(ANSWER), 4, Duration::from_millis(2)),
            End::Complete,
        )
    };
    let server = Upstream::in_order(vec![reply(), reply(), reply()]);
    let rows = send_three_ways("same-rows-http", &server.base_url(), ViewKind::Body);
    let received = server.received();
    assert_eq!(received.len(), 3);
    for request in &received {
        assert_eq!(
            request.header("authorization"),
            Some(format!("Bearer {KEY}").as_str())
        );
        assert_eq!(request.body, received[0].body);
    }
    assert_same(rows);
}

/// A WebSocket stand-in on loopback for `connections` sends: each reads the `response.create`
/// frame, answers with the data of each event of `ANSWER` as a text message, then closes.
/// Returns the base URL and the frames it read.
fn ws_upstream(connections: usize) -> (String, Arc<std::sync::Mutex<Vec<String>>>) {
    use futures_util::{SinkExt as _, StreamExt as _};
    use tokio_tungstenite::tungstenite::Message;
    let messages: Vec<String> = read_all(&sse_file(ANSWER), Duration::ZERO)
        .0
        .into_iter()
        .map(|entry| entry.raw.data)
        .collect();
    let frames = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = Arc::clone(&frames);
    let addr = loopback::spawn(move |listener| async move {
        for _ in 0..connections {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let Ok(mut socket) = tokio_tungstenite::accept_async(tcp).await else {
                continue;
            };
            if let Some(Ok(Message::Text(text))) = socket.next().await {
                seen.lock().expect("frames").push(text.to_string());
            }
            for message in &messages {
                if socket.send(Message::text(message.clone())).await.is_err() {
                    break;
                }
            }
            let _ = socket.close(None).await;
        }
    });
    (format!("http://{addr}/v1"), frames)
}

#[test]
fn send_resend_and_cli_store_the_same_rows_over_a_websocket() {
    let (base, frames) = ws_upstream(3);
    let rows = send_three_ways("same-rows-ws", &base, ViewKind::WsFrame);
    let frames = frames.lock().expect("frames").clone();
    assert_eq!(frames.len(), 3);
    assert_eq!(frames[1], frames[0]);
    assert_eq!(frames[2], frames[0]);
    assert_same(rows);
}

/// The one sender's live stream is bounded and loses nothing: a 1,000-word answer (1,004
/// events, several times [`LIVE_QUEUE`](promptwire::transport::send::LIVE_QUEUE)) sent while its
/// consumer does not read for a while arrives whole and in order, then `Done` with the outcome.
#[test]
fn a_consumer_that_reads_late_gets_every_event_in_order_then_the_result() {
    use promptwire::core::compile::compile;
    use promptwire::core::models::ModelCatalog;
    use promptwire::core::prompt::{Dialect, Prompt};
    use promptwire::core::provider::{Provider, ProviderKind};
    use promptwire::core::rules::CompileRules;
    use promptwire::transport::{
        CancelToken, LiveEvent, SendOptions, Sender, Wire, resolve_headers,
    };

    let text: String = (0..1000).map(|i| format!("w{i} ")).collect();
    let events = crate::support::upstream::turn_events("resp_late", &text);
    let bytes: Vec<u8> = events.iter().flat_map(|e| e.to_vec()).collect();
    let server = Upstream::in_order(vec![Reply::answer(
        pieces(&bytes, 8, Duration::ZERO),
        End::Complete,
    )]);
    let prompt = Prompt::from_json_str(
        r#"{"model": "gpt-5.5", "input": [{"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": "count"}]}]}"#,
    )
    .expect("prompt");
    let catalog = ModelCatalog::bundled();
    let mut provider = Provider::preset(ProviderKind::Compatible);
    provider.base_url = server.base_url();
    let request = compile(
        &prompt,
        &catalog.lookup(&prompt.model),
        &provider,
        Dialect::Auto,
        &CompileRules::codex_0_169(),
    )
    .expect("compile");
    let headers = resolve_headers(&request, |_| None).expect("no secrets");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let sender = Sender::new(Wire::Http, &request.url, SendOptions::default()).expect("sender");
    let mut live = sender.start(
        runtime.handle(),
        Arc::new(request),
        headers,
        CancelToken::new(),
    );
    std::thread::sleep(Duration::from_millis(300));
    let mut seqs = Vec::new();
    let mut done = None;
    while let Some(event) = live.next_blocking() {
        match event {
            LiveEvent::Entry(entry) => seqs.push(entry.raw.seq),
            LiveEvent::Done(result) => done = Some(result),
            _ => {}
        }
    }
    assert_eq!(seqs, (0..events.len() as u64).collect::<Vec<_>>());
    let result = done.expect("Done came last");
    assert_eq!(result.error, None);
    assert_eq!(result.outcome().map(|o| o.text.clone()), Some(text));
}
