//! The recording proxy over real HTTP on 127.0.0.1: a reqwest client streams through it to an
//! upstream the test starts (real SSE bytes, with pauses between events). Checks: bytes pass
//! unchanged both ways and the store holds the request, its events with receive times and its
//! outcome; ten concurrent streams (two per session) are recorded without mixing, each
//! request's stored events exactly its own stream's; requests without ids group by their
//! keep-alive connection, and by `client_metadata.session_id`; a connection reset mid-stream
//! reaches the client and the store; a zstd body is forwarded byte for byte and stored decoded;
//! HTTP errors and an unreachable upstream are relayed and classified; secrets never reach the
//! database file or an export; and the proxy never holds an event back.

use crate::support;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt as _;
use pretty_assertions::assert_eq;
use promptwire::core::stream::{ErrorClass, read_all};
use promptwire::store::{Page, RecordedState, Store};
use promptwire::transport::proxy::{ProxyEvent, ProxyOptions, ServerHandle, start_proxy};
use serde_json::{Value, json};
use support::scratch;
use support::upstream::{Reply, Step, Upstream, paced, sse_event, turn_events};
use tokio::sync::mpsc;

const API_KEY: &str = "sk-proj-TESTKEYabcdef0123456789";
const AZURE_KEY: &str = "azurekey0123456789abcdef";
const X_API_KEY: &str = "xapikey-9876543210fedcba";
const COOKIE: &str = "cookie-secret-value-77";
const QUERY_KEY: &str = "querykey-5555aaaa";

async fn proxy(upstream: &str, db: &Path) -> (ServerHandle, mpsc::Receiver<ProxyEvent>) {
    start_proxy(ProxyOptions::new(
        "127.0.0.1:0",
        upstream,
        Some(db.to_path_buf()),
    ))
    .await
    .expect("proxy starts")
}

fn request_body(marker: &str) -> Value {
    json!({
        "model": "gpt-5.5",
        "instructions": "You are terse.",
        "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": marker}]}],
        "stream": true,
        "prompt_cache_key": format!("pck-{marker}"),
    })
}

/// POSTs the request body marked `marker` through the proxy; the answer once its head arrived.
async fn post(handle: &ServerHandle, marker: &str) -> reqwest::Response {
    reqwest::Client::new()
        .post(format!("{}/v1/responses", handle.base_url()))
        .header("content-type", "application/json")
        .body(serde_json::to_vec(&request_body(marker)).expect("body"))
        .send()
        .await
        .expect("headers arrive")
}

fn all_bytes(events: &[Bytes]) -> Vec<u8> {
    events.iter().flat_map(|b| b.iter().copied()).collect()
}

/// Reads the database file (and its WAL) as bytes.
fn db_bytes(db: &Path) -> Vec<u8> {
    let mut bytes = std::fs::read(db).expect("db file");
    if let Ok(wal) = std::fs::read(format!("{}-wal", db.display())) {
        bytes.extend(wal);
    }
    bytes
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_through_unchanged_and_records_everything_without_secrets() {
    let events = turn_events("resp_1", "Hello from the upstream");
    let script_events = events.clone();
    let upstream =
        Upstream::start(move |_| Reply::sse(paced(&script_events, Duration::from_millis(30))));
    let dir = scratch("through");
    let db = dir.join("rec.sqlite");
    let (handle, _events) = proxy(&upstream.base_url(), &db).await;

    let body = serde_json::to_vec(&request_body("hello")).expect("body");
    let client = reqwest::Client::new();
    let response = client
        .post(format!(
            "{}/v1/responses?api-version=2025-04-01&api-key={QUERY_KEY}",
            handle.base_url()
        ))
        .header("authorization", format!("Bearer {API_KEY}"))
        .header("api-key", AZURE_KEY)
        .header("x-api-key", X_API_KEY)
        .header("cookie", format!("sid={COOKIE}"))
        .header("session_id", "thread-A")
        .header("content-type", "application/json")
        .header("connection", "keep-alive, x-hop")
        .header("x-hop", "dropped")
        .body(body.clone())
        .send()
        .await
        .expect("response");
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(
        response.headers().get("set-cookie").map(|v| v.as_bytes()),
        Some(&b"upstream-session=cookie-secret-42"[..])
    );
    let got = response.bytes().await.expect("body");
    assert_eq!(got.to_vec(), all_bytes(&events));

    // Upstream side: same body bytes, path and query; every end-to-end header, no hop-by-hop.
    let seen = upstream.received();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].body, body);
    assert_eq!(
        seen[0].path,
        format!("/v1/responses?api-version=2025-04-01&api-key={QUERY_KEY}")
    );
    let names: Vec<&str> = seen[0].headers.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "authorization",
            "api-key",
            "x-api-key",
            "cookie",
            "session_id",
            "content-type",
            "accept",
            "host",
            "content-length"
        ]
    );
    assert_eq!(
        seen[0].header("authorization"),
        Some(format!("Bearer {API_KEY}").as_str())
    );

    handle.stop();
    handle.stopped().await;

    // The store: one session keyed by the session_id header, the exact body, secret headers
    // dropped, the credential query parameter redacted, the events and the outcome.
    let store = Store::open(&db).expect("db");
    let sessions = store.list_sessions(Page::ALL).expect("sessions");
    assert_eq!(sessions.len(), 1);
    assert_eq!(key_of(&sessions[0].name), "session:thread-A");
    assert_eq!(sessions[0].source, "proxy");
    let requests = store.requests(sessions[0].id, Page::ALL).expect("requests");
    assert_eq!(requests.len(), 1);
    let request = store.request(requests[0].id).expect("request");
    assert_eq!(
        request.summary.url,
        format!(
            "{}/responses?api-version=2025-04-01&api-key=<redacted>",
            upstream.base_url()
        )
    );
    assert_eq!(request.summary.status, Some(200));
    assert_eq!(request.summary.dialect.as_deref(), Some("standard"));
    let stored_names: Vec<&str> = request.headers.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        stored_names,
        vec![
            "session_id",
            "content-type",
            "connection",
            "x-hop",
            "accept",
            "host",
            "content-length"
        ]
    );
    assert_eq!(store.body(requests[0].id).expect("body").bytes, body);
    let stored_events = store.events(requests[0].id, Page::ALL).expect("events");
    let (expected, outcome) = read_all(&all_bytes(&events), Duration::ZERO);
    let strip = |e: &promptwire::core::stream::RawEvent| (e.seq, e.event.clone(), e.data.clone());
    assert_eq!(
        stored_events.iter().map(strip).collect::<Vec<_>>(),
        expected.iter().map(|e| strip(&e.raw)).collect::<Vec<_>>()
    );
    // Receive times grow with the upstream's pauses (30 ms between events).
    let last = stored_events.last().expect("events").received_at;
    assert!(
        last >= Duration::from_millis(30 * (events.len() as u64 - 1)),
        "{last:?}"
    );
    let stored_outcome = store
        .outcome(requests[0].id)
        .expect("outcome")
        .expect("some");
    assert_eq!(stored_outcome.state, RecordedState::Completed);
    assert_eq!(stored_outcome.response_id.as_deref(), Some("resp_1"));
    assert_eq!(stored_outcome.text, outcome.text);
    assert_eq!(stored_outcome.events, events.len() as u64);

    // No secret in the file or in any export, redacted or not.
    let har = store
        .export_har(sessions[0].id, false)
        .expect("har")
        .to_string();
    let jsonl = store.export_jsonl(sessions[0].id, false).expect("jsonl");
    let exported = dir.join("bodies");
    store
        .export_bodies(sessions[0].id, &exported, false)
        .expect("bodies");
    let body_file = std::fs::read(exported.join("0000.json")).expect("body file");
    drop(store);
    let file = db_bytes(&db);
    for secret in [
        API_KEY,
        AZURE_KEY,
        X_API_KEY,
        COOKIE,
        QUERY_KEY,
        "cookie-secret-42",
    ] {
        assert!(!contains(&file, secret), "{secret} is in the database file");
        assert!(
            !contains(har.as_bytes(), secret),
            "{secret} is in the HAR export"
        );
        assert!(
            !contains(jsonl.as_bytes(), secret),
            "{secret} is in the JSONL export"
        );
        assert!(
            !contains(&body_file, secret),
            "{secret} is in the body export"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_concurrent_streams_are_recorded_without_mixing() {
    // Stream i answers with i + 1 words (so every stream has its own number of events), each
    // event naming the stream; two concurrent streams share each session id.
    let upstream = Upstream::start(|req| {
        let body: Value = serde_json::from_slice(&req.body).expect("json");
        let marker = body["input"][0]["content"][0]["text"]
            .as_str()
            .unwrap_or("?")
            .to_string();
        Reply::sse(paced(&marked_events(&marker), Duration::from_millis(15)))
    });
    let db = scratch("ten").join("rec.sqlite");
    let (handle, _events) = proxy(&upstream.base_url(), &db).await;
    let client = reqwest::Client::new();
    let mut tasks = Vec::new();
    for i in 0..10 {
        let client = client.clone();
        let url = format!("{}/v1/responses", handle.base_url());
        tasks.push(tokio::spawn(async move {
            let marker = format!("m{i}");
            let response = client
                .post(url)
                .header("session_id", format!("s{}", i % 5))
                .header("content-type", "application/json")
                .body(serde_json::to_vec(&request_body(&marker)).expect("body"))
                .send()
                .await
                .expect("response");
            let bytes = response.bytes().await.expect("body");
            let (_, outcome) = read_all(&bytes, Duration::ZERO);
            (marker, outcome.text)
        }));
    }
    for task in tasks {
        let (marker, text) = task.await.expect("task");
        assert_eq!(text, marked_text(&marker));
    }
    handle.stop();
    handle.stopped().await;

    let store = Store::open(&db).expect("db");
    let mut found = Vec::new();
    let sessions = store.list_sessions(Page::ALL).expect("sessions");
    assert_eq!(sessions.len(), 5);
    for session in sessions {
        let requests = store.requests(session.id, Page::ALL).expect("requests");
        assert_eq!(requests.len(), 2, "{}", session.name);
        for request in requests {
            let body = store.body(request.id).expect("body").value.expect("json");
            let marker = body["input"][0]["content"][0]["text"]
                .as_str()
                .expect("marker")
                .to_string();
            let i: usize = marker[1..].parse().expect("stream number");
            let outcome = store.outcome(request.id).expect("read").expect("outcome");
            assert_eq!(key_of(&session.name), format!("session:s{}", i % 5));
            assert_eq!(outcome.text, marked_text(&marker));
            assert_eq!(outcome.response_id, Some(format!("resp_{marker}")));
            // The events stored under this request are exactly this stream's, in order.
            let expected = marked_events(&marker);
            assert_eq!(expected.len(), i + 5);
            assert_eq!(
                store.event_count(request.id).expect("count"),
                expected.len() as u64
            );
            let stored: Vec<(Option<String>, String)> = store
                .events(request.id, Page::ALL)
                .expect("events")
                .into_iter()
                .map(|e| (e.event, e.data))
                .collect();
            assert_eq!(stored, parsed_events(&expected), "{marker}");
            found.push(marker);
        }
    }
    found.sort();
    let mut expected: Vec<String> = (0..10).map(|i| format!("m{i}")).collect();
    expected.sort();
    assert_eq!(found, expected);
}

/// The answer of stream `marker` (`m3`: 4 words, each naming the stream).
fn marked_text(marker: &str) -> String {
    let n: usize = marker[1..].parse().unwrap_or(0);
    vec![format!("{marker}-word"); n + 1].join(" ")
}

fn marked_events(marker: &str) -> Vec<Bytes> {
    turn_events(&format!("resp_{marker}"), &marked_text(marker))
}

/// SSE chunks as the store keeps them: (event name, data).
fn parsed_events(events: &[Bytes]) -> Vec<(Option<String>, String)> {
    events
        .iter()
        .map(|chunk| {
            let text = std::str::from_utf8(chunk).expect("utf-8");
            let mut name = None;
            let mut data = Vec::new();
            for line in text.lines() {
                if let Some(n) = line.strip_prefix("event: ") {
                    name = Some(n.to_string());
                } else if let Some(d) = line.strip_prefix("data: ") {
                    data.push(d);
                }
            }
            (name, data.join("\n"))
        })
        .collect()
}

/// A body with no session id, thread id or prompt cache key (only the connection can group it),
/// or with `client_metadata` as given.
fn anonymous_body(marker: &str, client_metadata: Option<Value>) -> Vec<u8> {
    let mut body = request_body(marker);
    if let Some(map) = body.as_object_mut() {
        map.shift_remove("prompt_cache_key");
        if let Some(meta) = client_metadata {
            map.insert("client_metadata".to_string(), meta);
        }
    }
    serde_json::to_vec(&body).expect("body")
}

/// POSTs `body` with `client` and reads the whole answer (so the connection goes back to the
/// pool for the next request).
async fn post_with(client: &reqwest::Client, handle: &ServerHandle, body: Vec<u8>) {
    let response = client
        .post(format!("{}/v1/responses", handle.base_url()))
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .expect("response");
    assert_eq!(response.status().as_u16(), 200);
    response.bytes().await.expect("body");
}

/// POSTs each body in turn on one TCP connection (HTTP/1.1 keep-alive) and reads each answer
/// to its end: the proxy answers SSE with chunked encoding, whose last chunk is `0\r\n\r\n`.
async fn post_twice_on_one_connection(handle: &ServerHandle, bodies: [Vec<u8>; 2]) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let addr = handle.base_url().trim_start_matches("http://").to_string();
    let mut stream = tokio::net::TcpStream::connect(&addr)
        .await
        .expect("connect");
    for body in bodies {
        let head = format!(
            "POST /v1/responses HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            body.len()
        );
        stream.write_all(head.as_bytes()).await.expect("head");
        stream.write_all(&body).await.expect("body");
        let mut answer = Vec::new();
        let mut buf = [0u8; 8192];
        let read = async {
            while !answer.ends_with(b"0\r\n\r\n") {
                let n = stream.read(&mut buf).await.expect("read");
                assert!(
                    n > 0,
                    "the proxy closed the connection: {}",
                    String::from_utf8_lossy(&answer)
                );
                answer.extend_from_slice(&buf[..n]);
            }
        };
        tokio::time::timeout(Duration::from_secs(10), read)
            .await
            .expect("answer in time");
        assert!(
            answer.starts_with(b"HTTP/1.1 200"),
            "{}",
            String::from_utf8_lossy(&answer)
        );
    }
}

/// Sessions as (name, the markers of their requests in order).
/// The grouping key a proxy session's stored name ends in (`… · session:thread-A`).
fn key_of(name: &str) -> &str {
    promptwire::core::session_label::split_key(name).map_or(name, |(_, key)| key)
}

fn grouped(db: &Path) -> Vec<(String, Vec<String>)> {
    let store = Store::open(db).expect("db");
    let mut out: Vec<(String, Vec<String>)> = store
        .list_sessions(Page::ALL)
        .expect("sessions")
        .into_iter()
        .map(|s| {
            let markers = store
                .requests(s.id, Page::ALL)
                .expect("requests")
                .into_iter()
                .map(|r| {
                    let body = store.body(r.id).expect("body").value.expect("json");
                    body["input"][0]["content"][0]["text"]
                        .as_str()
                        .unwrap_or("?")
                        .to_string()
                })
                .collect();
            (key_of(&s.name).to_string(), markers)
        })
        .collect();
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_without_ids_group_by_their_connection() {
    let upstream =
        Upstream::start(|_| Reply::sse(paced(&turn_events("resp_c", "ok"), Duration::ZERO)));
    let db = scratch("keepalive").join("rec.sqlite");
    let (handle, _events) = proxy(&upstream.base_url(), &db).await;
    // Two requests on one keep-alive connection: one TCP stream written by hand, so no client
    // pool can open a second connection behind the test's back.
    post_twice_on_one_connection(
        &handle,
        [
            anonymous_body("first", None),
            anonymous_body("second", None),
        ],
    )
    .await;
    // Another client, so another connection: another session.
    let other = reqwest::Client::new();
    post_with(&other, &handle, anonymous_body("elsewhere", None)).await;
    handle.stop();
    handle.stopped().await;
    let sessions = grouped(&db);
    let markers: Vec<Vec<String>> = sessions.iter().map(|(_, m)| m.clone()).collect();
    let mut expected = vec![
        vec!["elsewhere".to_string()],
        vec!["first".to_string(), "second".to_string()],
    ];
    let mut sorted = markers.clone();
    sorted.sort();
    expected.sort();
    assert_eq!(sorted, expected);
    for (name, _) in &sessions {
        assert!(name.starts_with("connection:"), "{name}");
    }
    assert_ne!(sessions[0].0, sessions[1].0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_metadata_session_id_groups_requests_across_connections() {
    let upstream =
        Upstream::start(|_| Reply::sse(paced(&turn_events("resp_m", "ok"), Duration::ZERO)));
    let db = scratch("client-metadata").join("rec.sqlite");
    let (handle, _events) = proxy(&upstream.base_url(), &db).await;
    // Each request on its own client (its own connection), no session headers.
    for marker in ["one", "two"] {
        let client = reqwest::Client::new();
        let meta = json!({"session_id": "cm-7", "x-codex-turn-metadata": "{}"});
        post_with(&client, &handle, anonymous_body(marker, Some(meta))).await;
    }
    let client = reqwest::Client::new();
    let other = json!({"session_id": "cm-8"});
    post_with(&client, &handle, anonymous_body("three", Some(other))).await;
    handle.stop();
    handle.stopped().await;
    assert_eq!(
        grouped(&db),
        vec![
            (
                "session:cm-7".to_string(),
                vec!["one".to_string(), "two".to_string()]
            ),
            ("session:cm-8".to_string(), vec!["three".to_string()]),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reset_mid_stream_reaches_the_client_and_the_store() {
    let events = turn_events("resp_cut", "this answer is cut short");
    let first_two = events[..2].to_vec();
    let upstream = Upstream::start_resetting(move |_| {
        let mut steps = paced(&first_two, Duration::from_millis(20));
        steps.push(Step::Sleep(Duration::from_millis(50)));
        steps.push(Step::Cut);
        Reply::sse(steps)
    });
    let db = scratch("reset").join("rec.sqlite");
    let (handle, _events) = proxy(&upstream.base_url(), &db).await;
    let response = post(&handle, "cut").await;
    assert_eq!(response.status().as_u16(), 200);
    let mut stream = response.bytes_stream();
    let mut got: Vec<u8> = Vec::new();
    let mut failed = None;
    while let Some(chunk) = stream.next().await {
        match chunk {
            Ok(bytes) => got.extend_from_slice(&bytes[..]),
            Err(e) => {
                failed = Some(e);
                break;
            }
        }
    }
    assert!(failed.is_some(), "the client saw the stream end cleanly");
    assert_eq!(got, all_bytes(&events[..2]));
    handle.stop();
    handle.stopped().await;

    let store = Store::open(&db).expect("db");
    let session = &store.list_sessions(Page::ALL).expect("sessions")[0];
    // No session header, so the prompt_cache_key groups it.
    assert_eq!(key_of(&session.name), "cache:pck-cut");
    let request = &store.requests(session.id, Page::ALL).expect("requests")[0];
    assert_eq!(store.event_count(request.id).expect("count"), 2);
    let outcome = store.outcome(request.id).expect("read").expect("outcome");
    assert_eq!(outcome.state, RecordedState::Failed);
    assert_eq!(outcome.error_class, Some(ErrorClass::Stream));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zstd_body_is_forwarded_byte_for_byte_and_stored_decoded() {
    let events = turn_events("resp_z", "compressed ok");
    let script_events = events.clone();
    let upstream = Upstream::start(move |_| Reply::sse(paced(&script_events, Duration::ZERO)));
    let db = scratch("zstd").join("rec.sqlite");
    let (handle, _events) = proxy(&upstream.base_url(), &db).await;
    let plain = serde_json::to_vec(&request_body("zstd")).expect("body");
    let compressed = zstd::encode_all(&plain[..], 3).expect("zstd");
    let response = reqwest::Client::new()
        .post(format!("{}/v1/responses", handle.base_url()))
        .header("content-encoding", "zstd")
        .header("content-type", "application/json")
        .body(compressed.clone())
        .send()
        .await
        .expect("response");
    assert_eq!(
        response.bytes().await.expect("body").to_vec(),
        all_bytes(&events)
    );
    let seen = upstream.received();
    assert_eq!(seen[0].body, compressed);
    assert_eq!(seen[0].header("content-encoding"), Some("zstd"));
    handle.stop();
    handle.stopped().await;

    let store = Store::open(&db).expect("db");
    let session = &store.list_sessions(Page::ALL).expect("sessions")[0];
    let request = &store.requests(session.id, Page::ALL).expect("requests")[0];
    assert_eq!(store.body(request.id).expect("body").bytes, plain);
    assert_eq!(
        store.request(request.id).expect("request").extra,
        Some(json!({"content_encoding": "zstd", "wire_body_bytes": compressed.len()}))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_and_other_paths_pass_through_and_failures_are_classified() {
    let error_body =
        r#"{"error":{"type":"invalid_request_error","code":"bad","message":"no such model"}}"#;
    let upstream = Upstream::start(move |req| {
        if req.path.ends_with("/models") {
            Reply::json(200, r#"{"data":[]}"#)
        } else {
            Reply::json(400, error_body)
        }
    });
    let db = scratch("errors").join("rec.sqlite");
    let (handle, _events) = proxy(&upstream.base_url(), &db).await;
    let client = reqwest::Client::new();
    let response = client
        .post(format!("{}/v1/responses", handle.base_url()))
        .header("session_id", "errs")
        .header("content-type", "application/json")
        .body(serde_json::to_vec(&request_body("err")).expect("body"))
        .send()
        .await
        .expect("response");
    assert_eq!(response.status().as_u16(), 400);
    assert_eq!(response.text().await.expect("text"), error_body);
    let models = client
        .get(format!("{}/v1/models", handle.base_url()))
        .send()
        .await
        .expect("models");
    assert_eq!(models.text().await.expect("text"), r#"{"data":[]}"#);
    assert_eq!(
        upstream
            .received()
            .iter()
            .map(|r| (r.method.clone(), r.path.clone()))
            .collect::<Vec<_>>(),
        vec![
            ("POST".to_string(), "/v1/responses".to_string()),
            ("GET".to_string(), "/v1/models".to_string())
        ]
    );
    handle.stop();
    handle.stopped().await;

    // A proxy whose upstream refuses connections answers 502 and records the failure.
    let refused = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        drop(listener);
        format!("http://{addr}/v1")
    };
    let (handle, _events) = proxy(&refused, &db).await;
    let response = client
        .post(format!("{}/v1/responses", handle.base_url()))
        .header("session_id", "refused")
        .header("content-type", "application/json")
        .body(serde_json::to_vec(&request_body("refused")).expect("body"))
        .send()
        .await
        .expect("response");
    assert_eq!(response.status().as_u16(), 502);
    let answer: Value =
        serde_json::from_slice(&response.bytes().await.expect("body")).expect("json");
    assert_eq!(answer["error"]["code"], "upstream_unreachable");
    handle.stop();
    handle.stopped().await;

    let store = Store::open(&db).expect("db");
    let mut outcomes = Vec::new();
    for session in store
        .list_sessions(Page::ALL)
        .expect("sessions")
        .iter()
        .rev()
    {
        for request in store.requests(session.id, Page::ALL).expect("requests") {
            let outcome = store.outcome(request.id).expect("read").expect("outcome");
            outcomes.push((
                key_of(&session.name).to_string(),
                request.status,
                outcome.state,
                outcome.error_class,
            ));
        }
    }
    assert_eq!(
        outcomes,
        vec![
            (
                "session:errs".to_string(),
                Some(400),
                RecordedState::Failed,
                Some(ErrorClass::InvalidRequest)
            ),
            (
                "session:refused".to_string(),
                None,
                RecordedState::Failed,
                Some(ErrorClass::Stream)
            ),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_receives_each_event_before_the_upstream_sends_the_next() {
    let events = turn_events("resp_gate", "one two three four five");
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let (script_events, script_gate) = (events.clone(), Arc::clone(&gate));
    let upstream = Upstream::start(move |_| {
        let mut steps = Vec::new();
        for event in &script_events {
            steps.push(Step::Send(event.clone()));
            steps.push(Step::Wait(Arc::clone(&script_gate), Duration::from_secs(3)));
        }
        Reply::sse(steps)
    });
    let db = scratch("gate").join("rec.sqlite");
    let (handle, _events) = proxy(&upstream.base_url(), &db).await;
    let response = reqwest::Client::new()
        .post(format!("{}/v1/responses", handle.base_url()))
        .header("content-type", "application/json")
        .body(serde_json::to_vec(&request_body("gate")).expect("body"))
        .send()
        .await
        .expect("response");
    let mut stream = response.bytes_stream();
    let mut buffer = Vec::new();
    let mut received = 0;
    while let Some(chunk) = stream.next().await {
        buffer.extend_from_slice(&chunk.expect("chunk"));
        // Every complete event lets the upstream send the next one.
        while let Some(end) = buffer.windows(2).position(|w| w == b"\n\n") {
            let event: Vec<u8> = buffer.drain(..end + 2).collect();
            assert_eq!(event, events[received].to_vec(), "event {received}");
            received += 1;
            gate.add_permits(1);
        }
    }
    assert_eq!(received, events.len());
    assert_eq!(
        upstream.gate_timeouts(),
        0,
        "an event was held back by the proxy"
    );
    handle.stop();
    handle.stopped().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_past_the_limit_reaches_the_client_whole_and_ends_the_recording_as_limit_exceeded()
{
    let mut events = turn_events("resp_big", "before the big one");
    // A delta event of 300 KB between the first events and the completion; the limit is 64 KB.
    let big = sse_event(
        "response.output_text.delta",
        &json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0,
            "content_index": 0, "delta": "x".repeat(300_000)}),
    );
    events.insert(2, big);
    let sent = events.clone();
    let upstream = Upstream::start(move |_| Reply::sse(paced(&sent, Duration::from_millis(5))));
    let db = scratch("limits").join("rec.sqlite");
    let mut options = ProxyOptions::new("127.0.0.1:0", &upstream.base_url(), Some(db.clone()));
    options.limits = promptwire::core::stream::StreamLimits {
        max_event_bytes: 64 * 1024,
        max_response_bytes: 1024 * 1024,
    };
    let (handle, _events) = start_proxy(options).await.expect("proxy starts");
    let response = post(&handle, "big").await;
    assert_eq!(response.status().as_u16(), 200);
    let got = response.bytes().await.expect("the whole answer");
    // The client is never cut off: it receives every byte, the big event included.
    assert_eq!(got.to_vec(), all_bytes(&events));
    handle.stop();
    handle.stopped().await;

    let store = Store::open(&db).expect("db");
    let session = &store.list_sessions(Page::ALL).expect("sessions")[0];
    let request = &store.requests(session.id, Page::ALL).expect("requests")[0];
    // The events before the big one are kept; nothing after it is recorded.
    assert_eq!(store.event_count(request.id).expect("count"), 2);
    let outcome = store.outcome(request.id).expect("read").expect("outcome");
    assert_eq!(
        (
            outcome.state,
            outcome.error_class,
            outcome.error_message.as_deref()
        ),
        (
            RecordedState::Failed,
            Some(ErrorClass::LimitExceeded),
            Some("an event is larger than the limit of 64.0 KiB per event")
        )
    );
}
