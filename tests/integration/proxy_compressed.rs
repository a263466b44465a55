//! Compressed answers through the recording proxy (issue 20), over real HTTP on 127.0.0.1 with an
//! upstream the test starts: a gzip JSON response object, a gzip SSE stream in chunks, a zstd
//! SSE stream, a deflate JSON object, a gzip 429 error, an encoding the recorder does not decode
//! (`br`) and a gzip bomb (a few KiB that decode to 16 MiB). The client gets the upstream's compressed bytes
//! unchanged; what is recorded is what the same plain bytes give (`stream` for SSE, the JSON
//! mapping for an object), the HAR carries the decoded text, and what cannot be decoded is
//! recorded as such — never as garbage text or a `completed` turn. The replay endpoint serves the
//! recording decoded, without the `Content-Encoding` header.

use crate::support;

use std::io::Write as _;
use std::time::Duration;

use bytes::Bytes;
use pretty_assertions::assert_eq;
use promptwire::core::stream::http_error::classify_http_error;
use promptwire::core::stream::{ErrorClass, StreamLimits, StreamReader};
use promptwire::store::{OutcomeRecord, Page, RecordedState, Store};
use promptwire::transport::proxy::{ProxyEvent, ProxyOptions, start_proxy};
use promptwire::transport::replay_server::{ReplayOptions, start_replay};
use serde_json::{Value, json};
use support::scratch;
use support::upstream::{Reply, Step, Upstream, joined, turn_events};

/// The limit on a recorded answer in these tests: the bomb decodes far past it.
const LIMIT: u64 = 1024 * 1024;

fn gzip(plain: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(plain).expect("gzip");
    e.finish().expect("gzip")
}

fn zlib(plain: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(plain).expect("zlib");
    e.finish().expect("zlib")
}

/// A non-streaming response object.
fn json_response(id: &str) -> Vec<u8> {
    json!({
        "id": id, "object": "response", "status": "completed", "model": "gpt-5.5-2026-10-01",
        "output": [{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": "Unzipped.", "annotations": []}]}],
        "usage": {"input_tokens": 900, "input_tokens_details": {"cached_tokens": 512},
                  "output_tokens": 3, "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": 903}
    })
    .to_string()
    .into_bytes()
}

/// `200` of `content_type` with `Content-Encoding: encoding` (none: no header), sending `wire`
/// in `parts` chunks.
fn encoded(content_type: &str, encoding: Option<&str>, wire: &[u8], parts: usize) -> Reply {
    let size = wire.len().div_ceil(parts).max(1);
    Reply {
        status: 200,
        headers: [
            ("content-type", Some(content_type)),
            ("content-encoding", encoding),
        ]
        .into_iter()
        .filter_map(|(name, value)| Some((name.to_string(), value?.to_string())))
        .collect(),
        steps: wire
            .chunks(size)
            .map(|c| Step::Send(Bytes::copy_from_slice(c)))
            .collect(),
    }
}

/// A stored or expected outcome without its timings.
fn untimed(mut outcome: OutcomeRecord) -> OutcomeRecord {
    outcome.first_event_us = None;
    outcome.first_text_us = None;
    outcome.total_us = None;
    outcome
}

/// What the plain bytes give read without any proxy: (event, data) of each event, the outcome.
fn plain_reading(kind: &str, plain: &[u8]) -> (Vec<(Option<String>, String)>, OutcomeRecord) {
    let mut reader = StreamReader::with_limits(StreamLimits {
        max_response_bytes: LIMIT,
        ..StreamLimits::default()
    });
    let mut entries = if kind == "sse" {
        reader.push(plain, Duration::ZERO)
    } else {
        reader
            .push_json(plain, Duration::ZERO)
            .into_iter()
            .collect()
    };
    entries.extend(reader.finish(Duration::ZERO));
    let events = entries
        .into_iter()
        .map(|e| (e.raw.event, e.raw.data))
        .collect();
    (events, untimed(OutcomeRecord::from_turn(reader.outcome())))
}

/// One case: its name, what the upstream sends, the plain bytes, how they are read.
struct Case {
    name: &'static str,
    encoding: Option<&'static str>,
    reply: Reply,
    wire: Vec<u8>,
    plain: Vec<u8>,
    kind: &'static str,
}

fn cases() -> Vec<Case> {
    let sse_gzip = joined(&turn_events("resp_gz", "Streamed through gzip in pieces"));
    let sse_zstd = joined(&turn_events("resp_zs", "Streamed through zstd"));
    let bomb_plain = {
        // A response object whose text is 16 MiB of one letter: a few KiB gzipped.
        let mut body = br#"{"id":"resp_bomb","object":"response","status":"completed","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":""#.to_vec();
        body.extend(std::iter::repeat_n(b'a', 16 * 1024 * 1024));
        body.extend_from_slice(br#""}]}]}"#);
        body
    };
    let unknown_wire = b"\x1b\x2f\x00\xf8not really brotli, and not decoded".to_vec();
    let mut cases = Vec::new();
    let mut add = |name, content_type, encoding, plain: Vec<u8>, wire: Vec<u8>, parts, kind| {
        cases.push(Case {
            name,
            encoding,
            reply: encoded(content_type, encoding, &wire, parts),
            wire,
            plain,
            kind,
        });
    };
    let json_gz = json_response("resp_json_gz");
    add(
        "gzip-json",
        "application/json",
        Some("gzip"),
        json_gz.clone(),
        gzip(&json_gz),
        1,
        "json",
    );
    add(
        "gzip-sse",
        "text/event-stream",
        Some("gzip"),
        sse_gzip.clone(),
        gzip(&sse_gzip),
        7,
        "sse",
    );
    let zstd_wire = zstd::encode_all(&sse_zstd[..], 3).expect("zstd");
    add(
        "zstd-sse",
        "text/event-stream",
        Some("zstd"),
        sse_zstd,
        zstd_wire,
        5,
        "sse",
    );
    let json_deflate = json_response("resp_json_deflate");
    add(
        "deflate-json",
        "application/json",
        Some("deflate"),
        json_deflate.clone(),
        zlib(&json_deflate),
        2,
        "json",
    );
    add(
        "br-sse",
        "text/event-stream",
        Some("br"),
        Vec::new(),
        unknown_wire,
        2,
        "sse",
    );
    let bomb_wire = gzip(&bomb_plain);
    assert!(bomb_wire.len() < 64 * 1024, "{}", bomb_wire.len());
    add(
        "gzip-bomb",
        "application/json",
        Some("gzip"),
        bomb_plain.clone(),
        bomb_wire,
        3,
        "json",
    );
    // The same 16 MiB sent plain: what the proxy records of it is what the bomb is compared to.
    add(
        "plain-bomb",
        "application/json",
        None,
        bomb_plain.clone(),
        bomb_plain,
        16,
        "json",
    );
    // A rate-limit error, gzipped: classified on its decoded text, which is what is stored.
    let error = json!({"error": {"message": "Rate limit reached for gpt-5.5", "type": "requests",
                                 "code": "rate_limit_exceeded"}})
    .to_string()
    .into_bytes();
    let mut rate_limited = encoded("application/json", Some("gzip"), &gzip(&error), 1);
    rate_limited.status = 429;
    rate_limited
        .headers
        .push(("retry-after".to_string(), "7".to_string()));
    cases.push(Case {
        name: "gzip-429",
        encoding: Some("gzip"),
        reply: rate_limited,
        wire: gzip(&error),
        plain: error,
        kind: "error",
    });
    cases
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compressed_answers_are_recorded_decoded_and_relayed_unchanged() {
    let cases = cases();
    let upstream = Upstream::in_order(cases.iter().map(|c| c.reply.clone()).collect());
    let dir = scratch("compressed");
    let db = dir.join("compressed.sqlite");
    let mut options = ProxyOptions::new("127.0.0.1:0", &upstream.base_url(), Some(db.clone()));
    options.limits.max_response_bytes = LIMIT;
    let (handle, mut rx) = start_proxy(options).await.expect("proxy");

    // The client (no decompression of its own) gets the compressed bytes as they were sent.
    let client = reqwest::Client::new();
    for case in &cases {
        let response = client
            .post(format!("{}/v1/responses", handle.base_url()))
            .header("content-type", "application/json")
            .header("accept-encoding", "gzip, deflate, zstd, br")
            .header("session_id", "thread-compressed")
            .body(json!({"model": "gpt-5.5", "input": case.name}).to_string())
            .send()
            .await
            .expect("answer");
        let encoding = response
            .headers()
            .get("content-encoding")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let body = response.bytes().await.expect("whole body");
        assert_eq!(
            (encoding.as_deref(), body.to_vec() == case.wire),
            (case.encoding, true),
            "{}: the exact compressed bytes",
            case.name
        );
    }
    let mut recorded = 0;
    while recorded < cases.len() {
        match tokio::time::timeout(Duration::from_secs(30), rx.recv()).await {
            Ok(Some(ProxyEvent::Recorded { .. })) => recorded += 1,
            Ok(Some(_)) => {}
            other => panic!("outcomes not all recorded ({recorded}): {other:?}"),
        }
    }
    handle.stop();
    handle.stopped().await;

    let store = Store::open(&db).expect("db");
    let sessions = store.list_sessions(Page::ALL).expect("sessions");
    assert_eq!(sessions.len(), 1);
    let rows = store.requests(sessions[0].id, Page::ALL).expect("rows");
    assert_eq!(rows.len(), cases.len());
    for (case, row) in cases.iter().zip(&rows) {
        let outcome = untimed(store.outcome(row.id).expect("read").expect("outcome"));
        let events: Vec<(Option<String>, String)> = store
            .events(row.id, Page::ALL)
            .expect("events")
            .into_iter()
            .map(|e| (e.event, e.data))
            .collect();
        let (plain_events, plain_outcome) = plain_reading(case.kind, &case.plain);
        let record = store.request(row.id).expect("row");
        let wire = case.wire.len();
        let note = record.extra.as_ref().map(|e| {
            (
                e["response_content_encoding"].clone(),
                e["response_wire_bytes"].clone(),
                e.get("response_body_note").cloned(),
            )
        });
        match case.name {
            "br-sse" => {
                let message = format!(
                    "the answer could not be read: Content-Encoding `br` is not decoded by \
                     promptwire ({wire} bytes relayed to the client unchanged)"
                );
                assert_eq!(
                    (outcome, events, record.response_body, note),
                    (
                        OutcomeRecord {
                            state: RecordedState::Failed,
                            error_class: Some(ErrorClass::ContentEncoding),
                            error_message: Some(message),
                            ..OutcomeRecord::default()
                        },
                        Vec::new(),
                        None,
                        Some((
                            json!("br"),
                            json!(wire),
                            Some(json!(
                                "the answer could not be read: Content-Encoding `br` is not \
                                 decoded by promptwire: the body is not stored"
                            ))
                        )),
                    ),
                    "{}",
                    case.name
                );
            }
            "gzip-429" => {
                // What the error classifier makes of the plain body (the stored one too).
                let text = String::from_utf8(case.plain.clone()).expect("text");
                let error = classify_http_error(429, &case.reply.headers, &text, "");
                assert_eq!(
                    (outcome, record.response_body, note),
                    (
                        OutcomeRecord {
                            state: RecordedState::Failed,
                            error_class: Some(error.class()),
                            error_message: Some(error.to_string()),
                            ..OutcomeRecord::default()
                        },
                        Some(text.into_bytes()),
                        Some((json!("gzip"), json!(wire), None))
                    )
                );
            }
            "plain-bomb" => {
                assert_eq!(
                    (outcome.state, outcome.error_class, note),
                    (RecordedState::Failed, Some(ErrorClass::LimitExceeded), None)
                );
            }
            "gzip-bomb" => {
                // The plain bytes are past the limit too (`plain-bomb`): the same class, and the
                // message says the body was not decoded past it.
                let message = format!(
                    "not decoded: the gzip answer decodes to over {LIMIT} bytes ({wire} bytes \
                     relayed to the client unchanged)"
                );
                assert_eq!(
                    (
                        outcome.error_class.clone(),
                        outcome,
                        events,
                        record.response_body,
                        note
                    ),
                    (
                        untimed(store.outcome(rows[6].id).expect("read").expect("outcome"))
                            .error_class,
                        OutcomeRecord {
                            state: RecordedState::Failed,
                            error_class: Some(ErrorClass::LimitExceeded),
                            error_message: Some(message),
                            ..OutcomeRecord::default()
                        },
                        Vec::new(),
                        None,
                        Some((
                            json!("gzip"),
                            json!(wire),
                            Some(json!(format!(
                                "not decoded: the gzip answer decodes to over {LIMIT} bytes"
                            )))
                        )),
                    ),
                    "{}",
                    case.name
                );
            }
            _ => {
                assert_eq!(
                    plain_outcome.state,
                    RecordedState::Completed,
                    "{}",
                    case.name
                );
                assert_eq!(
                    (outcome, events, record.response_body, note),
                    (
                        plain_outcome,
                        plain_events,
                        None,
                        Some((json!(case.encoding), json!(wire), None))
                    ),
                    "{}",
                    case.name
                );
            }
        }
    }

    // The HAR carries the decoded text (HAR's `content.text`), the wire size as `bodySize`, and
    // a comment where the body could not be decoded.
    let har = store.export_har(sessions[0].id, true).expect("har");
    let contents: Vec<Value> = har["log"]["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .zip(&cases)
        .filter(|(_, case)| case.name != "plain-bomb")
        .map(|(e, _)| json!([e["response"]["bodySize"], e["response"]["content"]]))
        .collect();
    // (The plain bomb has no encoding to show.)
    let expected: Vec<Value> = cases
        .iter()
        .filter(|case| case.name != "plain-bomb")
        .map(|case| {
            let wire = case.wire.len();
            let mime = case.reply.headers[0].1.clone();
            match case.name {
                "br-sse" => json!([wire, {"size": 0, "mimeType": mime, "text": "",
                    "comment": "the answer could not be read: Content-Encoding `br` is not decoded by promptwire: the body is not stored"}]),
                "gzip-bomb" => json!([wire, {"size": 0, "mimeType": mime, "text": "",
                    "comment": format!("not decoded: the gzip answer decodes to over {LIMIT} bytes")}]),
                _ => {
                    let text = String::from_utf8(case.plain.clone()).expect("text");
                    json!([wire, {"size": text.len(), "mimeType": mime, "text": text,
                        "compression": text.len() as i64 - wire as i64}])
                }
            }
        })
        .collect();
    assert_eq!(contents, expected);
    let session = sessions[0].id;
    drop(store);

    // The replay endpoint serves what was recorded: the decoded answer, without the
    // `Content-Encoding` it no longer has.
    let options = ReplayOptions::new("127.0.0.1:0", db.clone(), session);
    let (replay, _replay_events) = start_replay(options).await.expect("replay");
    let mut served = Vec::new();
    for case in &cases[..4] {
        let response = client
            .post(format!("{}/v1/responses", replay.base_url()))
            .header("content-type", "application/json")
            .header("session_id", "thread-compressed")
            .body(json!({"model": "gpt-5.5", "input": case.name}).to_string())
            .send()
            .await
            .expect("answer");
        let encoding = response
            .headers()
            .get("content-encoding")
            .map(|v| v.to_str().unwrap_or("?").to_string());
        let body = response.bytes().await.expect("body").to_vec();
        served.push((
            case.name,
            encoding,
            String::from_utf8_lossy(&body).into_owned(),
        ));
    }
    replay.stop();
    replay.stopped().await;
    let expected: Vec<(&str, Option<String>, String)> = cases[..4]
        .iter()
        .map(|c| (c.name, None, String::from_utf8_lossy(&c.plain).into_owned()))
        .collect();
    assert_eq!(served, expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_compressed_event_is_recorded_as_it_arrives() {
    // A streaming server flushes its compressor after each event: the first one's bytes reach
    // the proxy, then the server waits (up to 5 s) until the test has seen that event recorded.
    let events = turn_events("resp_live_gz", "as it arrives");
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut chunks: Vec<Bytes> = events
        .iter()
        .map(|event| {
            encoder.write_all(event).expect("gzip");
            encoder.flush().expect("flush");
            Bytes::from(std::mem::take(encoder.get_mut()))
        })
        .collect();
    chunks.push(Bytes::from(encoder.finish().expect("gzip")));
    let gate = std::sync::Arc::new(tokio::sync::Semaphore::new(0));
    let mut reply = encoded("text/event-stream", Some("gzip"), b"", 1);
    reply.steps = vec![
        Step::Send(chunks[0].clone()),
        Step::Wait(std::sync::Arc::clone(&gate), Duration::from_secs(5)),
    ];
    reply
        .steps
        .extend(chunks[1..].iter().cloned().map(Step::Send));
    let upstream = Upstream::in_order(vec![reply]);
    let dir = scratch("compressed-live");
    let (handle, mut rx) =
        support::upstream::recording_proxy(&upstream.base_url(), &dir.join("live.sqlite")).await;
    let url = format!("{}/v1/responses", handle.base_url());
    let client = tokio::spawn(async move {
        let response = reqwest::Client::new()
            .post(url)
            .header("content-type", "application/json")
            .body(json!({"model": "gpt-5.5", "input": "live", "stream": true}).to_string())
            .send()
            .await
            .expect("answer");
        response.bytes().await.expect("body").to_vec()
    });
    // The first event is recorded while the server still holds the rest back.
    let first = loop {
        match tokio::time::timeout(Duration::from_secs(3), rx.recv()).await {
            Ok(Some(ProxyEvent::Event { entry, .. })) => break entry.raw.event.clone(),
            Ok(Some(_)) => {}
            other => panic!("the first event was not recorded before the next chunk: {other:?}"),
        }
    };
    gate.add_permits(1);
    let outcome = loop {
        match tokio::time::timeout(Duration::from_secs(10), rx.recv()).await {
            Ok(Some(ProxyEvent::Recorded { outcome, .. })) => break outcome,
            Ok(Some(_)) => {}
            other => panic!("no outcome: {other:?}"),
        }
    };
    let received = client.await.expect("client");
    let wire: Vec<u8> = chunks.iter().flat_map(|c| c.iter().copied()).collect();
    let (_, plain) = plain_reading("sse", &joined(&events));
    assert_eq!(
        (
            first.as_deref(),
            upstream.gate_timeouts(),
            received == wire,
            untimed(*outcome)
        ),
        (Some("response.created"), 0, true, plain)
    );
    handle.stop();
    handle.stopped().await;
}
