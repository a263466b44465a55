//! Answers of every framing through the recording proxy, over real HTTP on 127.0.0.1 with an
//! upstream the test starts: SSE chunked and with a `Content-Length`, a non-streaming JSON
//! response object, a compaction answer, JSON 429 and 500 errors and an empty 204. The stored
//! outcome of each is what the client got — what `stream` (or the JSON mapping) makes of the same
//! bytes — and no session is flagged interrupted; a client that really leaves mid-stream is
//! recorded as cancelled by the client.

use crate::support;

use std::time::Duration;

use bytes::Bytes;
use pretty_assertions::assert_eq;
use promptwire::core::stream::http_error::classify_http_error;
use promptwire::core::stream::{ErrorClass, JSON_RESPONSE_EVENT, StreamReader, read_all};
use promptwire::store::{OutcomeRecord, Page, RecordedState, Store};
use promptwire::transport::proxy::{ProxyEvent, ServerHandle};
use promptwire::transport::replay_server::{ReplayOptions, start_replay};
use serde_json::{Value, json};
use support::scratch;
use support::upstream::{Reply, Step, Upstream, sse_event, turn_events};

fn sse_bytes(events: &[Bytes]) -> Vec<u8> {
    events.iter().flat_map(|b| b.iter().copied()).collect()
}

/// A non-streaming response object, as `responses.create` answers without `stream: true`.
fn json_response() -> Value {
    json!({
        "id": "resp_json_1",
        "object": "response",
        "created_at": 1_790_000_000,
        "status": "completed",
        "model": "gpt-5.5-2026-10-01",
        "output": [
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
             "content": [{"type": "output_text", "text": "Hello in one piece.", "annotations": []}]}
        ],
        "usage": {
            "input_tokens": 9100,
            "input_tokens_details": {"cached_tokens": 8192, "cache_write_tokens": 512},
            "output_tokens": 21,
            "output_tokens_details": {"reasoning_tokens": 8},
            "total_tokens": 9121
        }
    })
}

fn compact_response() -> Value {
    json!({"output": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "kept"}]},
        {"type": "compaction", "encrypted_content": "gAAAA-summary"}
    ]})
}

/// The outcome a client reading `body` as JSON gets, as the store records it.
fn json_outcome(body: &Value) -> OutcomeRecord {
    let mut reader = StreamReader::new();
    let entry = reader
        .push_json(body.to_string().as_bytes(), Duration::ZERO)
        .expect("read");
    assert_eq!(entry.raw.event.as_deref(), Some(JSON_RESPONSE_EVENT));
    reader.finish(Duration::ZERO);
    OutcomeRecord::from_turn(reader.outcome())
}

/// What the comparison keeps of an outcome: everything but timings and event counts.
fn essentials(
    o: &OutcomeRecord,
) -> (
    RecordedState,
    Option<String>,
    Option<ErrorClass>,
    Option<Value>,
    String,
) {
    (
        o.state,
        o.response_id.clone(),
        o.error_class.clone(),
        o.usage.clone(),
        o.text.clone(),
    )
}

/// A scratch folder named `name` and the database in it.
fn scratch_db(name: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let dir = scratch(name);
    let db = dir.join(format!("{name}.sqlite"));
    (dir, db)
}

/// The recording proxy in front of `upstream`, recording into `db`.
async fn recording_proxy(
    upstream: &Upstream,
    db: &std::path::Path,
) -> (ServerHandle, tokio::sync::mpsc::Receiver<ProxyEvent>) {
    support::upstream::recording_proxy(&upstream.base_url(), db).await
}

/// POSTs the request of case `name` to `base` (`/v1/responses/compact` for the compaction).
async fn post_case(client: &reqwest::Client, base: &str, name: &str) -> reqwest::Response {
    let path = if name == "compact" {
        "/v1/responses/compact"
    } else {
        "/v1/responses"
    };
    client
        .post(format!("{base}{path}"))
        .header("content-type", "application/json")
        .header("session_id", "thread-shapes")
        .body(
            json!({"model": "gpt-5.5", "input": name, "stream": name.starts_with("sse")})
                .to_string(),
        )
        .send()
        .await
        .expect("answer")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_framing_is_recorded_as_the_client_got_it() {
    let events = turn_events("resp_cl", "Sent with a Content-Length");
    let sse = sse_bytes(&events);
    let cases: Vec<(&str, Reply)> = vec![
        (
            "sse-chunked",
            Reply::sse(events.iter().cloned().map(Step::Send).collect()),
        ),
        (
            "sse-length",
            Reply::sse(vec![Step::Send(Bytes::from(sse.clone()))]).with_length(),
        ),
        (
            "json",
            Reply::json(200, &json_response().to_string()).with_length(),
        ),
        (
            "json-chunked",
            Reply::json(200, &json_response().to_string()),
        ),
        (
            "compact",
            Reply::json(200, &compact_response().to_string()).with_length(),
        ),
        (
            "429",
            Reply::status(
                429,
                &[("retry-after", "7")],
                &json!({"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}),
            ).with_length(),
        ),
        (
            "500",
            Reply::status(
                500,
                &[],
                &json!({"error": {"message": "The server had an error", "type": "server_error"}}),
            ).with_length(),
        ),
    ];
    let replies: Vec<Reply> = cases.iter().map(|(_, r)| r.clone()).collect();
    let upstream = Upstream::in_order(replies);
    let (dir, db) = scratch_db("shapes");
    let (handle, mut rx) = recording_proxy(&upstream, &db).await;

    let client = reqwest::Client::new();
    let mut received = Vec::new();
    for (name, _) in &cases {
        let response = post_case(&client, &handle.base_url(), name).await;
        let status = response.status().as_u16();
        received.push((status, response.bytes().await.expect("whole body")));
    }
    // Every outcome stored.
    let mut recorded = 0;
    while recorded < cases.len() {
        match tokio::time::timeout(Duration::from_secs(10), rx.recv()).await {
            Ok(Some(ProxyEvent::Recorded { .. })) => recorded += 1,
            Ok(Some(_)) => {}
            other => panic!("outcomes not all recorded ({recorded}): {other:?}"),
        }
    }
    handle.stop();
    handle.stopped().await;

    let store = Store::open(&db).expect("db");
    let sessions = store.list_sessions(Page::ALL).expect("sessions");
    assert_eq!(sessions.len(), 1, "one session: {sessions:?}");
    assert_eq!(
        (sessions[0].interrupted, sessions[0].unfinished()),
        (0, None),
        "a clean run is not flagged"
    );
    let rows = store.requests(sessions[0].id, Page::ALL).expect("rows");
    assert_eq!(rows.len(), cases.len());
    for (((name, _), row), (status, body)) in cases.iter().zip(&rows).zip(&received) {
        let stored = store.outcome(row.id).expect("read").expect("outcome");
        let expected = match *name {
            "sse-chunked" | "sse-length" => {
                assert_eq!(body.to_vec(), sse, "{name}: every byte reached the client");
                OutcomeRecord::from_turn(&read_all(body, Duration::ZERO).1)
            }
            "json" | "json-chunked" => json_outcome(&json_response()),
            "compact" => json_outcome(&compact_response()),
            _ => {
                let text = String::from_utf8_lossy(body);
                let headers = [("retry-after".to_string(), "7".to_string())];
                let error = classify_http_error(*status, &headers, &text, "");
                OutcomeRecord {
                    state: RecordedState::Failed,
                    error_class: Some(error.class()),
                    ..OutcomeRecord::default()
                }
            }
        };
        assert_eq!(essentials(&stored), essentials(&expected), "{name}");
        if *status >= 400 {
            let message = stored.error_message.clone().unwrap_or_default();
            assert!(!message.contains("cancelled"), "{name}: {message}");
        }
    }
    // The JSON answer: its usage (cached and cache-write tokens) and one stored JSON event.
    let json_row = &rows[2];
    let stored = store.outcome(json_row.id).expect("read").expect("outcome");
    assert_eq!(
        (stored.response_id.as_deref(), stored.text.as_str()),
        (Some("resp_json_1"), "Hello in one piece.")
    );
    assert_eq!(
        stored.usage.as_ref().map(|u| (
            u["input_tokens"].clone(),
            u["cached_input_tokens"].clone(),
            u["cache_write_input_tokens"].clone()
        )),
        Some((json!(9100), json!(8192), json!(512)))
    );
    let stored_events = store.events(json_row.id, Page::ALL).expect("events");
    assert_eq!(stored_events.len(), 1);
    assert_eq!(stored_events[0].event.as_deref(), Some(JSON_RESPONSE_EVENT));
    assert_eq!(
        serde_json::from_str::<Value>(&stored_events[0].data).expect("json"),
        json_response()
    );

    // The HAR names each answer's media type and carries the body the client got.
    let har = store.export_har(sessions[0].id, true).expect("har");
    let contents: Vec<(String, String)> = har["log"]["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| {
            (
                e["response"]["content"]["mimeType"]
                    .as_str()
                    .unwrap_or("?")
                    .to_string(),
                e["response"]["content"]["text"]
                    .as_str()
                    .unwrap_or("?")
                    .to_string(),
            )
        })
        .collect();
    let expected: Vec<(String, String)> = cases
        .iter()
        .zip(&received)
        .map(|((name, _), (_, body))| {
            let mime = if name.starts_with("sse") {
                "text/event-stream"
            } else {
                "application/json"
            };
            (mime.to_string(), String::from_utf8_lossy(body).into_owned())
        })
        .collect();
    assert_eq!(contents, expected);
    // Imported back, the JSON answer is the same one event and outcome.
    let har_path = dir.join("shapes.har");
    let har_text = serde_json::to_string(&har).expect("har text");
    let imported_db = dir.join("imported.sqlite");
    let mut imported = Store::open(&imported_db).expect("db");
    let (session, _) = imported
        .import_har(&har_text, "shapes", &har_path)
        .expect("import");
    let rows_back = imported.requests(session, Page::ALL).expect("rows");
    let json_back = imported
        .outcome(rows_back[2].id)
        .expect("read")
        .expect("outcome");
    assert_eq!(
        essentials(&json_back),
        essentials(&json_outcome(&json_response()))
    );
    drop(imported);
    drop(store);

    // The replay endpoint answers the JSON request with the recorded JSON body.
    let options = ReplayOptions::new("127.0.0.1:0", db.clone(), sessions[0].id);
    let (replay, _replay_events) = start_replay(options).await.expect("replay");
    let mut served = Vec::new();
    for (name, _) in &cases {
        let response = post_case(&client, &replay.base_url(), name).await;
        let kind = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        served.push((kind, response.bytes().await.expect("body").to_vec()));
    }
    replay.stop();
    replay.stopped().await;
    assert_eq!(
        (served[2].0.as_str(), served[2].1.as_slice()),
        ("application/json", received[2].1.as_ref())
    );
    assert_eq!(
        (served[1].0.as_str(), served[1].1.as_slice()),
        ("text/event-stream", received[1].1.as_ref())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_leaves_mid_stream_is_named_as_the_cause() {
    let events = turn_events("resp_gone", "never finished");
    let first = events[0].clone();
    let upstream = Upstream::start(move |_| {
        Reply::sse(vec![
            Step::Send(first.clone()),
            Step::Sleep(Duration::from_secs(3)),
            Step::Send(sse_event(
                "response.output_text.delta",
                &json!({"type": "response.output_text.delta", "delta": "late"}),
            )),
        ])
    });
    let (_dir, db) = scratch_db("leaves");
    let (handle, mut rx) = recording_proxy(&upstream, &db).await;
    let mut response = reqwest::Client::new()
        .post(format!("{}/v1/responses", handle.base_url()))
        .header("content-type", "application/json")
        .body(json!({"model": "gpt-5.5", "input": "x", "stream": true}).to_string())
        .send()
        .await
        .expect("head");
    let chunk = response.chunk().await.expect("first chunk");
    assert!(chunk.is_some());
    drop(response);
    let outcome = loop {
        match tokio::time::timeout(Duration::from_secs(10), rx.recv()).await {
            Ok(Some(ProxyEvent::Recorded { outcome, .. })) => break outcome,
            Ok(Some(_)) => {}
            other => panic!("no outcome: {other:?}"),
        }
    };
    assert_eq!(
        (outcome.state, outcome.error_class.clone()),
        (RecordedState::Failed, Some(ErrorClass::Cancelled))
    );
    assert_eq!(
        outcome.error_message,
        Some(format!(
            "the client closed the connection before the response ended ({} bytes relayed)",
            events[0].len()
        ))
    );
    handle.stop();
    handle.stopped().await;
}
