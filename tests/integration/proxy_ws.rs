//! The recording proxy's WebSocket relay over real sockets on 127.0.0.1: a client opens a
//! WebSocket on `/v1/responses` through the proxy to a WebSocket upstream the test starts, sends
//! two `response.create` frames one turn after the other, and receives the upstream's event
//! frames unchanged; the store holds each `response.create` as a request (method `WS`, the frame
//! as its body) with its event frames as raw events and its outcome, and no secret. An upstream
//! that refuses the upgrade (426) refuses the client the same way.

use crate::support;
use crate::support::loopback;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{SinkExt as _, StreamExt as _};
use pretty_assertions::assert_eq;
use promptwire::store::{Page, RecordedState, Store};
use promptwire::transport::proxy::{ProxyOptions, start_proxy};
use promptwire::transport::replay::Timing;
use promptwire::transport::replay_server::{ReplayOptions, start_replay};
use serde_json::{Value, json};
use support::scratch;
use support::upstream::{Reply, Upstream, turn_events};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;

const API_KEY: &str = "sk-proj-WSKEY0123456789abcdefgh";

/// The `data:` JSON of each SSE event of a turn: what a WebSocket upstream sends as frames.
fn frames(id: &str, text: &str) -> Vec<String> {
    turn_events(id, text)
        .iter()
        .map(|event| {
            let text = std::str::from_utf8(event).expect("utf8");
            text.lines()
                .find_map(|l| l.strip_prefix("data: "))
                .expect("data line")
                .to_string()
        })
        .collect()
}

/// A WebSocket upstream: answers the n-th `response.create` with `frames("resp_n", …)`, 10 ms
/// apart; logs the handshake's authorization header and every frame it received.
#[allow(clippy::result_large_err)] // the handshake callback's signature is tungstenite's
fn ws_upstream(log: Arc<Mutex<Vec<String>>>) -> String {
    let addr = loopback::spawn(move |listener| async move {
        while let Ok((stream, _)) = listener.accept().await {
            let log = Arc::clone(&log);
            tokio::spawn(async move {
                let auth_log = Arc::clone(&log);
                let callback =
                    move |req: &tokio_tungstenite::tungstenite::handshake::server::Request,
                          response| {
                        let auth = req
                            .headers()
                            .get("authorization")
                            .and_then(|v| v.to_str().ok())
                            .unwrap_or("-");
                        auth_log.lock().expect("log").push(format!("auth {auth}"));
                        Ok(response)
                    };
                let Ok(mut ws) = tokio_tungstenite::accept_hdr_async(stream, callback).await else {
                    return;
                };
                let mut turn = 0;
                while let Some(Ok(message)) = ws.next().await {
                    let Message::Text(text) = message else {
                        continue;
                    };
                    log.lock().expect("log").push(text.to_string());
                    turn += 1;
                    for frame in frames(&format!("resp_{turn}"), &format!("turn {turn} ok")) {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        if ws.send(Message::text(frame)).await.is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    format!("http://{addr}/v1")
}

fn create(text: &str) -> Value {
    json!({"type": "response.create", "model": "gpt-5.5", "instructions": "Be brief.",
           "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}],
           "stream": true, "prompt_cache_key": "ws-thread"})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websocket_frames_are_relayed_both_ways_and_recorded_as_requests() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let upstream = ws_upstream(Arc::clone(&log));
    let dir = scratch("relay");
    let db = dir.join("rec.sqlite");
    let (handle, _events) = support::upstream::recording_proxy(&upstream, &db).await;
    let mut request = format!("ws://{}/v1/responses", handle.local_addr())
        .into_client_request()
        .expect("request");
    request.headers_mut().insert(
        "authorization",
        format!("Bearer {API_KEY}").parse().expect("header"),
    );
    request
        .headers_mut()
        .insert("session-id", "ws-session-1".parse().expect("header"));
    let (mut ws, response) = tokio_tungstenite::connect_async(request)
        .await
        .expect("upgrade");
    assert_eq!(response.status().as_u16(), 101);

    let mut sent = Vec::new();
    for (turn, text) in [(1, "first"), (2, "second")] {
        let frame = create(text).to_string();
        ws.send(Message::text(frame.clone())).await.expect("send");
        sent.push(frame);
        let expected = frames(&format!("resp_{turn}"), &format!("turn {turn} ok"));
        let got = support::ws_standin::read_texts(&mut ws, expected.len()).await;
        assert_eq!(got, expected);
    }
    ws.close(None).await.expect("close");
    drop(ws);
    tokio::time::sleep(Duration::from_millis(100)).await;
    handle.stop();
    handle.stopped().await;
    let seen = log.lock().expect("log").clone();
    assert_eq!(
        seen,
        vec![
            format!("auth Bearer {API_KEY}"),
            sent[0].clone(),
            sent[1].clone()
        ]
    );

    let store = Store::open(&db).expect("db");
    let sessions = store.list_sessions(Page::ALL).expect("sessions");
    assert_eq!(sessions.len(), 1);
    assert_eq!(
        promptwire::core::session_label::split_key(&sessions[0].name).map(|(_, key)| key),
        Some("session:ws-session-1")
    );
    let mut rows = Vec::new();
    for request in store.requests(sessions[0].id, Page::ALL).expect("requests") {
        let record = store.request(request.id).expect("request");
        let outcome = store.outcome(request.id).expect("read").expect("outcome");
        let events: Vec<String> = store
            .events(request.id, Page::ALL)
            .expect("events")
            .into_iter()
            .map(|e| e.data)
            .collect();
        rows.push((
            request.method.clone(),
            request.url.clone(),
            request.dialect.clone(),
            String::from_utf8(store.body(request.id).expect("body").bytes).expect("utf8"),
            record.extra,
            events,
            outcome.state,
            outcome.text,
        ));
    }
    let url = format!("{}/responses", upstream.replace("http://", "ws://"));
    let row = |turn: usize, body: &String| {
        (
            "WS".to_string(),
            url.clone(),
            Some("standard".to_string()),
            body.clone(),
            Some(json!({"transport": "websocket"})),
            frames(&format!("resp_{turn}"), &format!("turn {turn} ok")),
            RecordedState::Completed,
            format!("turn {turn} ok"),
        )
    };
    assert_eq!(rows, vec![row(1, &sent[0]), row(2, &sent[1])]);

    // The HAR writes each frame as browsers write a WebSocket, and reads back the same rows.
    let har = store.export_har(sessions[0].id, true).expect("har");
    let entry = &har["log"]["entries"][0];
    assert_eq!(
        (
            &entry["request"]["method"],
            &entry["response"]["status"],
            &entry["_resourceType"]
        ),
        (&json!("GET"), &json!(101), &json!("websocket"))
    );
    let messages: Vec<(Value, Value)> = entry["_webSocketMessages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| (m["type"].clone(), m["data"].clone()))
        .collect();
    let mut expected = vec![(json!("send"), json!(sent[0]))];
    expected.extend(
        frames("resp_1", "turn 1 ok")
            .into_iter()
            .map(|f| (json!("receive"), json!(f))),
    );
    assert_eq!(messages, expected);
    let copy = dir.join("copy.sqlite");
    let mut imported = Store::open(&copy).expect("copy");
    let (session, count) = imported
        .import_har(&har.to_string(), "ws.har", &dir.join("ws.har"))
        .expect("import");
    assert_eq!(count, 2);
    let mut back = Vec::new();
    for request in imported.requests(session, Page::ALL).expect("requests") {
        let outcome = imported
            .outcome(request.id)
            .expect("read")
            .expect("outcome");
        let events: Vec<String> = imported
            .events(request.id, Page::ALL)
            .expect("events")
            .into_iter()
            .map(|e| e.data)
            .collect();
        back.push((
            request.method.clone(),
            String::from_utf8(imported.body(request.id).expect("body").bytes).expect("utf8"),
            events,
            outcome.state,
            outcome.text,
        ));
    }
    let row = |turn: usize, body: &String| {
        (
            "WS".to_string(),
            body.clone(),
            frames(&format!("resp_{turn}"), &format!("turn {turn} ok")),
            RecordedState::Completed,
            format!("turn {turn} ok"),
        )
    };
    assert_eq!(back, vec![row(1, &sent[0]), row(2, &sent[1])]);
    drop(imported);

    // The replay endpoint serves the recording over a WebSocket: each frame answered with the
    // recorded frames, matched, and stored as a WebSocket request of the replay session.
    let mut options = ReplayOptions::new("127.0.0.1:0", db.clone(), sessions[0].id);
    options.timing = Timing::Instant;
    drop(store);
    let (replay, _notes) = start_replay(options).await.expect("replay");
    let (mut ws, response) =
        tokio_tungstenite::connect_async(format!("ws://{}/v1/responses", replay.local_addr()))
            .await
            .expect("upgrade");
    assert_eq!(response.status().as_u16(), 101);
    for (turn, frame) in sent.iter().enumerate() {
        ws.send(Message::text(frame.clone())).await.expect("send");
        let expected = frames(
            &format!("resp_{}", turn + 1),
            &format!("turn {} ok", turn + 1),
        );
        let got = support::ws_standin::read_texts(&mut ws, expected.len()).await;
        assert_eq!(got, expected);
    }
    ws.close(None).await.expect("close");
    drop(ws);
    tokio::time::sleep(Duration::from_millis(100)).await;
    replay.stop();
    replay.stopped().await;
    let store = Store::open(&db).expect("db");
    let replays = store.replays_of(sessions[0].id).expect("replays");
    let served: Vec<(String, RecordedState, Value)> = store
        .requests(replays[0], Page::ALL)
        .expect("requests")
        .iter()
        .map(|r| {
            let extra = store
                .request(r.id)
                .expect("request")
                .extra
                .unwrap_or(Value::Null);
            (
                r.method.clone(),
                store.outcome(r.id).expect("read").expect("outcome").state,
                json!([
                    extra["transport"],
                    extra["replay"]["recorded_position"],
                    extra["replay"]["verdict"]
                ]),
            )
        })
        .collect();
    assert_eq!(
        served,
        (0..2)
            .map(|i| (
                "WS".to_string(),
                RecordedState::Completed,
                json!(["websocket", i, "same as recorded"])
            ))
            .collect::<Vec<_>>()
    );
    drop(store);
    let mut file = std::fs::read(&db).expect("db");
    file.extend(std::fs::read(format!("{}-wal", db.display())).unwrap_or_default());
    assert!(!file.windows(API_KEY.len()).any(|w| w == API_KEY.as_bytes()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_that_refuses_the_upgrade_refuses_the_client_the_same_way() {
    let upstream = Upstream::start(|_| Reply::json(426, r#"{"error":{"message":"use HTTP"}}"#));
    let db = scratch("refused").join("rec.sqlite");
    let (handle, _events) = start_proxy(ProxyOptions::new(
        "127.0.0.1:0",
        &upstream.base_url(),
        Some(db),
    ))
    .await
    .expect("proxy");
    let result =
        tokio_tungstenite::connect_async(format!("ws://{}/v1/responses", handle.local_addr()))
            .await;
    match result {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            assert_eq!(response.status().as_u16(), 426);
            // The upstream's chunked body did not come whole with the head: a JSON error
            // naming the status stands in for it.
            let body: Value =
                serde_json::from_slice(response.body().as_deref().expect("body")).expect("json");
            assert_eq!(
                body,
                json!({"error": {"message": "the upstream refused the WebSocket upgrade with HTTP 426",
                                 "type": "promptwire_proxy", "code": "upgrade_refused"}})
            );
        }
        other => panic!("expected a 426 refusal, got {other:?}"),
    }
    handle.stop();
    handle.stopped().await;
}
