//! Growth of the store on real Codex traffic (issue 15): a session built from the real Codex CLI
//! 0.169 capture `two-turns-tools-session` (six requests, two turns, with their SSE answers),
//! repeated turn after turn with new ids, a new `turn_id` per turn and the `client_metadata` keys
//! in a different order on every request — as real Codex sends them. Every body and every raw
//! event is written; the database file is then compared with the raw request bodies, and every
//! body and every event must come back exactly.
//!
//! The anchor: claude-tap, which people use for this today, stores a real two-turn Codex session
//! at a third of its raw bodies' size by deduplicating JSON subtrees, and keeps no raw events.
//! promptwire keeps every event with its arrival time and must still be smaller.
//!
//! The figures are printed (`cargo test --test store_growth -- --nocapture`).

use crate::support::shared;

use crate::support::db;

use crate::support::xorshift;

use std::path::Path;
use std::time::Duration;

use pretty_assertions::assert_eq;
use promptwire::core::stream::RawEvent;
use promptwire::store::{
    NewRequest, NewSession, OutcomeRecord, Page, RecordedState, ResponseMeta, Source, Store,
};
use serde_json::Value;

use db::scratch_db;

use xorshift::Xorshift;

/// The capture: six request bodies and their answers' events.
struct Capture {
    bodies: Vec<Value>,
    events: Vec<Vec<RawEvent>>,
}

fn load_capture() -> Option<Capture> {
    let dir = shared::shared_fixtures("codex-cli-0.169/two-turns-tools-session")?;
    let mut bodies = Vec::new();
    let mut events = Vec::new();
    for k in 0..6 {
        let body = std::fs::read(dir.join(format!("req_{k:02}.json"))).expect("read body");
        bodies.push(serde_json::from_slice(&body).expect("body is JSON"));
        let sse = std::fs::read_to_string(dir.join(format!("resp_{k:02}.sse"))).expect("read sse");
        events.push(parse_sse(&sse));
    }
    Some(Capture { bodies, events })
}

/// The events of an SSE file (`event:` and `data:` lines, blank-line separated).
fn parse_sse(text: &str) -> Vec<RawEvent> {
    text.split("\n\n")
        .filter(|block| !block.trim().is_empty())
        .enumerate()
        .map(|(seq, block)| {
            let mut event = None;
            let mut data = Vec::new();
            for line in block.lines() {
                if let Some(name) = line.strip_prefix("event: ") {
                    event = Some(name.to_string());
                } else if let Some(line) = line.strip_prefix("data: ") {
                    data.push(line);
                }
            }
            RawEvent {
                seq: seq as u64,
                received_at: Duration::from_millis(seq as u64 * 15),
                event,
                data: data.join("\n"),
                bytes: None,
            }
        })
        .collect()
}

/// Gives an item of cycle `cycle` ids of its own (`id`, `call_id`).
fn renamed(item: &Value, cycle: usize) -> Value {
    let mut item = item.clone();
    if let Some(map) = item.as_object_mut() {
        for key in ["id", "call_id"] {
            if let Some(Value::String(id)) = map.get_mut(key) {
                id.push_str(&format!("-c{cycle}"));
            }
        }
    }
    item
}

/// Request `k` of the simulated session: the capture's request `k % 6`, its new items renamed
/// per six-request cycle, the history of the last three cycles before it (older history
/// compacted away), a turn id per three requests, `client_metadata` keys shuffled.
fn body(capture: &Capture, k: usize, shuffle: &mut Xorshift) -> Vec<u8> {
    let (cycle, j) = (k / 6, k % 6);
    let prefix = 4;
    let template = &capture.bodies[j];
    let last = capture.bodies[5]["input"].as_array().expect("input");
    let own = template["input"].as_array().expect("input");
    let mut input: Vec<Value> = own[..prefix].to_vec();
    for past in cycle.saturating_sub(3)..cycle {
        input.extend(last[prefix..].iter().map(|item| renamed(item, past)));
    }
    input.extend(own[prefix..].iter().map(|item| renamed(item, cycle)));
    let turn_id = format!("01a2280b-01ba-7cf3-a3de-{:012x}", k / 3);
    let mut metadata: Vec<(String, Value)> = template["client_metadata"]
        .as_object()
        .expect("client_metadata")
        .iter()
        .map(|(key, value)| {
            let value = match (key.as_str(), value) {
                ("turn_id" | "root_turn_id", _) => Value::String(turn_id.clone()),
                ("x-codex-turn-metadata", Value::String(text)) => {
                    Value::String(text.replace("01a2280b-01ba-7cf3-a3de-42f2dabdd918", &turn_id))
                }
                _ => value.clone(),
            };
            (key.clone(), value)
        })
        .collect();
    shuffle.permute(&mut metadata);
    let mut out = serde_json::Map::new();
    for (key, value) in template.as_object().expect("object") {
        let value = match key.as_str() {
            "input" => Value::Array(input.clone()),
            "client_metadata" => Value::Object(metadata.iter().cloned().collect()),
            _ => value.clone(),
        };
        out.insert(key.clone(), value);
    }
    serde_json::to_vec(&Value::Object(out)).expect("render")
}

/// What a run measured.
#[derive(Debug)]
struct Growth {
    db: u64,
    bodies: u64,
    events: u64,
}

/// Writes `requests` requests with their events, checks each body comes back exactly, and
/// measures the database file (after closing, so the WAL is checkpointed into it).
fn run(capture: &Capture, requests: usize) -> Growth {
    let path = scratch_db(&format!("codex-{requests}"));
    let mut store = Store::open(&path).expect("open");
    let session = store
        .create_session(&NewSession {
            name: format!("codex {requests} requests"),
            source: Source::Proxy,
            provider: Some("local".to_string()),
            model: Some("gpt-5.5".to_string()),
            created_us: 1_795_968_139_710_000,
        })
        .expect("session");
    let mut shuffle = Xorshift(0x9e37_79b9_7f4a_7c15);
    let headers = vec![("content-type".to_string(), "application/json".to_string())];
    let (mut bodies, mut events) = (0u64, 0u64);
    let mut written = Vec::with_capacity(requests);
    for k in 0..requests {
        let bytes = body(capture, k, &mut shuffle);
        bodies += bytes.len() as u64;
        let id = store
            .add_request(
                session,
                &NewRequest {
                    dialect: Some("standard".to_string()),
                    rules: Some("codex-0.169".to_string()),
                    provider: Some("local".to_string()),
                    headers: &headers,
                    started_us: Some(1_795_968_139_710_000 + k as i64 * 4_000_000),
                    ..NewRequest::post("http://127.0.0.1:9/v1/responses", &bytes)
                },
            )
            .expect("add request");
        let answer = &capture.events[k % 6];
        events += answer
            .iter()
            .map(|e| (e.data.len() + e.event.as_ref().map_or(0, String::len) + 15) as u64)
            .sum::<u64>();
        store.add_events(id, answer).expect("events");
        store
            .set_response(
                id,
                &ResponseMeta {
                    status: Some(200),
                    headers: vec![("content-type".to_string(), "text/event-stream".to_string())],
                    body: None,
                    wait_us: Some(180_000),
                    total_us: Some(1_400_000),
                    http_version: None,
                    extra: None,
                },
            )
            .expect("response");
        store
            .set_outcome(
                id,
                &OutcomeRecord {
                    state: RecordedState::Completed,
                    response_id: Some(format!("resp_{k:04}")),
                    error_class: None,
                    error_message: None,
                    usage: Some(serde_json::json!({"input_tokens": 1912, "cached_input_tokens": 1792, "output_tokens": 12})),
                    text: "Done: the files are listed above.".to_string(),
                    server_model: Some("gpt-5.5".to_string()),
                    events: answer.len() as u64,
                    first_event_us: Some(120_000),
                    first_text_us: Some(300_000),
                    total_us: Some(1_400_000),
                    lost_events: 0,
                    lost_reason: None,
                },
            )
            .expect("outcome");
        written.push((id, bytes));
    }
    for (k, (id, bytes)) in written.iter().enumerate() {
        let back = store.body(*id).expect("body");
        assert_eq!(
            String::from_utf8_lossy(&back.bytes),
            String::from_utf8_lossy(bytes)
        );
        let events = store.events(*id, Page::ALL).expect("events");
        assert_eq!(&events, &capture.events[k % 6], "events of request {k}");
    }
    drop(store);
    let db = std::fs::metadata(&path).expect("db size").len();
    Growth { db, bodies, events }
}

fn report(requests: usize, g: &Growth) {
    eprintln!(
        "{requests} requests: database {} B for {} B of raw bodies ({:.3}×) plus {} B of raw events kept",
        g.db,
        g.bodies,
        g.db as f64 / g.bodies as f64,
        g.events
    );
}

#[test]
fn the_real_two_turn_session_stores_smaller_than_a_third_of_its_bodies() {
    let Some(capture) = load_capture() else {
        return;
    };
    let growth = run(&capture, 6);
    report(6, &growth);
    // claude-tap: a third of the raw bodies, without events.
    assert!(
        growth.db * 3 < growth.bodies,
        "database {} B, raw bodies {} B",
        growth.db,
        growth.bodies
    );
}

/// The capture as a HAR, each request with the headers real Codex sent (path, user agent,
/// `x-codex-turn-metadata`, …) and its SSE answer.
fn capture_har(dir: &Path) -> (String, u64) {
    let mut entries = Vec::new();
    let mut bodies = 0u64;
    for k in 0..6 {
        let body = std::fs::read_to_string(dir.join(format!("req_{k:02}.json"))).expect("body");
        bodies += body.len() as u64;
        let meta: Value = serde_json::from_slice(
            &std::fs::read(dir.join(format!("req_{k:02}.headers.json"))).expect("headers"),
        )
        .expect("headers JSON");
        let headers: Vec<Value> = meta["headers"]
            .as_object()
            .expect("headers object")
            .iter()
            .map(|(name, value)| serde_json::json!({"name": name, "value": value}))
            .collect();
        let sse = std::fs::read_to_string(dir.join(format!("resp_{k:02}.sse"))).expect("sse");
        entries.push(serde_json::json!({
            "startedDateTime": format!("2026-11-30T16:01:{:02}.000Z", 10 + k * 4),
            "time": 1400,
            "request": {"method": "POST", "url": format!("http://127.0.0.1:8080{}", meta["path"].as_str().unwrap_or("/v1/responses")),
                "httpVersion": "HTTP/1.1", "headers": headers, "queryString": [], "cookies": [],
                "headersSize": -1, "bodySize": body.len(),
                "postData": {"mimeType": "application/json", "text": body}},
            "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1",
                "headers": [{"name": "content-type", "value": "text/event-stream"}], "cookies": [],
                "content": {"size": sse.len(), "mimeType": "text/event-stream", "text": sse},
                "redirectURL": "", "headersSize": -1, "bodySize": sse.len()},
            "cache": {}, "timings": {"send": 0, "wait": 180, "receive": 1220},
        }));
    }
    let har = serde_json::json!({"log": {"version": "1.2", "creator": {"name": "test", "version": "1"}, "entries": entries}});
    (har.to_string(), bodies)
}

#[test]
fn the_real_two_turn_session_imported_with_its_headers_stores_smaller_than_a_third() {
    let Some(dir) = shared::shared_fixtures("codex-cli-0.169/two-turns-tools-session") else {
        return;
    };
    let (har, bodies) = capture_har(&dir);
    let path = scratch_db("codex-har");
    let mut store = Store::open(&path).expect("open");
    let (session, count) = store
        .import_har(&har, "two turns", Path::new("two-turns.har"))
        .expect("import");
    assert_eq!(count, 6);
    let requests = store.requests(session, Page::ALL).expect("requests");
    for (k, request) in requests.iter().enumerate() {
        let body = std::fs::read(dir.join(format!("req_{k:02}.json"))).expect("body");
        assert_eq!(store.body(request.id).expect("stored body").bytes, body);
        assert!(store.event_count(request.id).expect("events") > 0);
    }
    drop(store);
    let db = std::fs::metadata(&path).expect("db size").len();
    eprintln!(
        "the capture imported as HAR: database {db} B for {bodies} B of raw bodies ({:.3}×), headers and events kept",
        db as f64 / bodies as f64
    );
    assert!(db * 3 < bodies, "database {db} B, raw bodies {bodies} B");
}

#[test]
fn eleven_requests_of_real_codex_traffic_store_at_a_quarter_of_their_bodies() {
    let Some(capture) = load_capture() else {
        return;
    };
    let growth = run(&capture, 11);
    report(11, &growth);
    assert!(
        growth.db * 4 < growth.bodies,
        "database {} B, raw bodies {} B",
        growth.db,
        growth.bodies
    );
}

#[test]
fn a_thousand_requests_store_the_tool_list_once_with_every_event() {
    let Some(capture) = load_capture() else {
        return;
    };
    let growth = run(&capture, 1000);
    report(1000, &growth);
    // Every raw event is kept, and the database is still a tenth of the bodies.
    assert!(
        growth.db * 10 < growth.bodies,
        "database {} B, raw bodies {} B",
        growth.db,
        growth.bodies
    );
}
