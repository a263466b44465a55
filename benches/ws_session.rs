//! Opening a 1,000-request WebSocket session as the Sessions view and `diff --session` do: the
//! stored parts read through the store's one adapter, every continuation resolved to the whole
//! prompt the server sees (the named response's input and output, read from its recorded
//! events, then the new items), and the analysis of every consecutive pair. Target ≤ 1 s.
//!
//! The session is Codex's shape over WebSocket: a `generate: false` warm-up, then 999 turns,
//! each a `response.create` with `previous_response_id` and only its new items (a function
//! call's output, every tenth a user message), each answered with a function call whose events
//! are stored as recorded. Built once per target dir in a real SQLite file.

use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use promptwire::app::session_view::analyze_parts;
use promptwire::core::ledger::PriceTable;
use promptwire::core::stream::RawEvent;
use promptwire::store::{
    NewRequest, NewSession, OutcomeRecord, RecordedState, ResponseMeta, Source, Store,
};
use serde_json::{Value, json};

/// Requests in the session.
const REQUESTS: usize = 1_000;
/// Bumped when the generated database changes.
const DB_NAME: &str = "ws-session-bench-v1.sqlite";

fn instructions() -> String {
    "You are a coding agent. Follow the repository's conventions. ".repeat(300)
}

fn frame(i: usize) -> Value {
    let mut frame = json!({"type": "response.create", "model": "gpt-5.5", "stream": true,
        "instructions": instructions(), "tools": [{"type": "function", "name": "exec_command",
        "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}}}],
        "prompt_cache_key": "thread-ws-bench"});
    if i == 0 {
        frame["generate"] = json!(false);
        frame["input"] = json!([{"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": "Fix the failing test in src/lib.rs."}]}]);
        return frame;
    }
    frame["previous_response_id"] = json!(format!("resp_{:04}", i - 1));
    let mut input = Vec::new();
    if i > 1 {
        input.push(
            json!({"type": "function_call_output", "call_id": format!("call_{:04}", i - 1),
            "output": format!("exit 0\n{}", "output line of the command\n".repeat(20))}),
        );
    }
    if i % 10 == 1 {
        input.push(json!({"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": format!("Now step {i}.")}]}));
    }
    frame["input"] = Value::Array(input);
    frame
}

/// The events answering request `i`: a function call (none for the warm-up).
fn events(i: usize) -> Vec<RawEvent> {
    let id = format!("resp_{i:04}");
    let mut data = vec![json!({"type": "response.created", "response": {"id": id}})];
    let mut output = Vec::new();
    if i > 0 {
        let item = json!({"type": "function_call", "id": format!("fc_{i:04}"),
            "call_id": format!("call_{i:04}"), "name": "exec_command",
            "arguments": format!("{{\"cmd\":\"cargo test step_{i}\"}}")});
        data.push(json!({"type": "response.output_item.done", "output_index": 0, "item": item}));
        output.push(item);
    }
    data.push(
        json!({"type": "response.completed", "response": {"id": id, "status": "completed",
        "output": output, "usage": {"input_tokens": 4_000 + i * 300,
        "input_tokens_details": {"cached_tokens": 3_840 + i * 256}, "output_tokens": 30}}}),
    );
    data.iter()
        .enumerate()
        .map(|(seq, d)| RawEvent {
            seq: seq as u64,
            received_at: Duration::from_millis(seq as u64 * 50),
            event: None,
            data: d.to_string(),
            bytes: None,
        })
        .collect()
}

fn build_db(path: &Path) -> i64 {
    let building = path.with_extension("building");
    let _ = std::fs::remove_file(&building);
    let mut store = Store::open(&building).expect("bench db");
    let session = store
        .create_session(&NewSession {
            name: "ws-1000".to_string(),
            source: Source::Proxy,
            provider: None,
            model: Some("gpt-5.5".to_string()),
            created_us: 1_000,
        })
        .expect("session");
    for i in 0..REQUESTS {
        let body = frame(i).to_string();
        let id = store
            .add_request(
                session,
                &NewRequest {
                    dialect: Some("standard".to_string()),
                    rules: None,
                    provider: None,
                    method: "WS".to_string(),
                    url: "wss://api.openai.com/v1/responses".to_string(),
                    body: body.as_bytes(),
                    headers: &[],
                    extra: Some(json!({"transport": "websocket"})),
                    started_us: Some(1_700_000_000_000_000 + i as i64 * 5_000_000),
                },
            )
            .expect("request");
        store
            .set_response(
                id,
                &ResponseMeta {
                    status: Some(101),
                    total_us: Some(2_000_000),
                    ..ResponseMeta::default()
                },
            )
            .expect("response");
        let events = events(i);
        store.add_events(id, &events).expect("events");
        store
            .set_outcome(
                id,
                &OutcomeRecord {
                    state: RecordedState::Completed,
                    response_id: Some(format!("resp_{i:04}")),
                    events: events.len() as u64,
                    total_us: Some(2_000_000),
                    ..OutcomeRecord::default()
                },
            )
            .expect("outcome");
    }
    drop(store);
    std::fs::rename(&building, path).expect("db in place");
    session
}

fn db() -> (PathBuf, i64) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-data");
    std::fs::create_dir_all(&dir).expect("bench dir");
    let path = dir.join(DB_NAME);
    if !path.exists() {
        build_db(&path);
    }
    let store = Store::open(&path).expect("db");
    let id = store
        .list_sessions(promptwire::store::Page::ALL)
        .expect("sessions")
        .iter()
        .find(|s| s.name == "ws-1000")
        .map(|s| s.id)
        .expect("the bench session");
    (path, id)
}

fn bench(c: &mut Criterion) {
    let (path, session) = db();
    let prices = PriceTable::bundled();
    // What the view then shows: every turn after the warm-up kept, none undetermined.
    let store = Store::open(&path).expect("db");
    let analysis = analyze_parts(
        session,
        store.session_parts(session).expect("parts"),
        &prices,
    )
    .expect("analysis");
    let summary = &analysis.ledger.summary;
    assert_eq!(
        (
            summary.requests,
            summary.warmups,
            summary.undetermined,
            summary.breaks
        ),
        (REQUESTS, 1, 0, 0)
    );
    let mut group = c.benchmark_group("ws_session");
    group.sample_size(10);
    group.bench_function("open_1000_requests_whole_prompts", |b| {
        b.iter(|| {
            let parts = store.session_parts(session).expect("parts");
            analyze_parts(session, parts, &prices).expect("analysis")
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
