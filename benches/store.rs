//! Session store benchmark (`cargo bench --bench store`), the targets of issue 4:
//!
//! 1. Size: a 200-turn session whose last request is 2 MB, recorded with its events through the
//!    store writer: database size ≤ 1.5 × (last body + all event bytes).
//! 2. Recording rate: ≥ 20,000 events/s through the store writer (median of runs).
//! 3. Open a 1 GB database and list sessions ≤ 200 ms (median of runs; the database is generated
//!    once under the target directory and reused).
//!
//! Set `PROMPTWIRE_BENCH_QUICK=1` for a smaller, faster run (no 1 GB database).
#![allow(
    clippy::disallowed_methods,
    reason = "a benchmark runs its own threads and reads its own switches"
)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use promptwire::core::stream::RawEvent;
use promptwire::store::{
    NewRequest, NewSession, OutcomeRecord, OwnedRequest, Page, RecordedState, SessionRef, Source,
    Store, Writer, WriterOptions,
};
use serde_json::json;

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("store_bench");
    std::fs::create_dir_all(&dir).expect("bench dir");
    dir.join(name)
}

fn remove_db(path: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn new_session(store: &mut Store, name: &str) -> i64 {
    store
        .create_session(&NewSession {
            name: name.to_string(),
            source: Source::Send,
            provider: Some("openai".to_string()),
            model: Some("gpt-5.5".to_string()),
            created_us: 1_795_000_000_000_000,
        })
        .expect("session")
}

/// Deterministic filler text (varied, so SQLite pages hold real-looking data).
fn filler(seed: usize, len: usize) -> String {
    let words = [
        "cargo",
        "build",
        "src/",
        "fn main()",
        "error[E0308]",
        "let x = 1;",
        "ok",
        "test",
        "lib.rs",
        "println!",
    ];
    let mut out = String::with_capacity(len + 16);
    let mut i = seed;
    while out.len() < len {
        out.push_str(words[i % words.len()]);
        out.push(' ');
        out.push_str(&(i * 7919 % 100_003).to_string());
        out.push('\n');
        i += 1;
    }
    out
}

/// The SSE events of one turn: created, text deltas, item done, completed.
fn turn_events(turn: usize, deltas: usize) -> Vec<(String, String)> {
    let mut out = Vec::with_capacity(deltas + 3);
    let resp = format!("resp_{turn:04}");
    out.push(("response.created".to_string(), json!({"type": "response.created", "sequence_number": 0, "response": {"id": resp, "status": "in_progress"}}).to_string()));
    for d in 0..deltas {
        out.push(("response.output_text.delta".to_string(), json!({"type": "response.output_text.delta", "sequence_number": d + 1, "item_id": format!("msg_{turn}"), "output_index": 0, "content_index": 0, "delta": format!(" word{d}")}).to_string()));
    }
    out.push(("response.output_item.done".to_string(), json!({"type": "response.output_item.done", "sequence_number": deltas + 1, "output_index": 0, "item": {"id": format!("msg_{turn}"), "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}}).to_string()));
    out.push(("response.completed".to_string(), json!({"type": "response.completed", "sequence_number": deltas + 2, "response": {"id": resp, "status": "completed", "usage": {"input_tokens": 1000 + turn, "input_tokens_details": {"cached_tokens": 900}, "output_tokens": deltas, "total_tokens": 1000 + turn + deltas}}}).to_string()));
    out
}

fn sse_bytes(name: &str, data: &str) -> usize {
    "event: ".len() + name.len() + 1 + "data: ".len() + data.len() + 2
}

/// Target 1: a 200-turn session, last body about 2 MB.
fn bench_session_size() {
    let path = scratch("session200.sqlite");
    remove_db(&path);
    let mut store = Store::open(&path).expect("open");
    let session = new_session(&mut store, "200 turns");
    let writer = Writer::open(&path).expect("writer");
    let instructions = filler(1, 12_000);
    let tools: Vec<_> = (0..12)
        .map(|i| json!({"type": "function", "name": format!("tool_{i}"), "description": filler(i, 300), "strict": false, "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}}}))
        .collect();
    let mut input = Vec::new();
    let mut last_body = 0;
    let mut event_bytes = 0;
    let mut events_total = 0u64;
    let started = Instant::now();
    for turn in 0..200 {
        input.push(json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": filler(turn, 600)}]}));
        input.push(json!({"type": "function_call", "name": "shell", "arguments": json!({"cmd": filler(turn + 3, 80)}).to_string(), "call_id": format!("call_{turn}")}));
        input.push(json!({"type": "function_call_output", "call_id": format!("call_{turn}"), "output": filler(turn + 5, 9_400)}));
        let body = json!({"model": "gpt-5.5", "instructions": instructions, "input": input, "tools": tools, "tool_choice": "auto", "parallel_tool_calls": false, "reasoning": {"effort": "medium"}, "store": false, "stream": true, "include": [], "prompt_cache_key": "0196a2c1-7b2e"});
        let bytes = serde_json::to_vec(&body).expect("render");
        last_body = bytes.len();
        let headers = vec![("content-type".to_string(), "application/json".to_string())];
        let mut recorder = writer.begin_request(
            SessionRef::Id(session),
            OwnedRequest::from_new(&NewRequest {
                dialect: Some("standard".to_string()),
                rules: Some("codex-0.169".to_string()),
                provider: Some("openai".to_string()),
                method: "POST".to_string(),
                url: "https://api.openai.com/v1/responses".to_string(),
                body: &bytes,
                headers: &headers,
                extra: None,
                started_us: Some(1_795_000_000_000_000 + turn as i64 * 30_000_000),
            }),
            None,
        );
        let mut count = 0;
        for (seq, (name, data)) in turn_events(turn, 60).into_iter().enumerate() {
            event_bytes += sse_bytes(&name, &data);
            events_total += 1;
            count += 1;
            recorder.event(RawEvent {
                seq: seq as u64,
                received_at: Duration::from_millis(seq as u64 * 20),
                event: Some(name),
                data,
                bytes: None,
            });
        }
        recorder.outcome(OutcomeRecord {
            state: RecordedState::Completed,
            events: count,
            ..OutcomeRecord::default()
        });
    }
    assert!(writer.flush(Duration::from_secs(120)), "flushed");
    drop(writer);
    let elapsed = started.elapsed();
    // Check the last body comes back exactly, then close (checkpointing the WAL).
    let last = store
        .requests(session, Page::ALL)
        .expect("requests")
        .last()
        .map(|r| r.id)
        .expect("last");
    let rebuilt = Instant::now();
    let body = store.body(last).expect("body");
    let rebuild_ms = rebuilt.elapsed().as_secs_f64() * 1000.0;
    assert_eq!(body.bytes.len(), last_body);
    drop(store);
    let size = std::fs::metadata(&path).expect("size").len() as f64;
    let budget = (last_body + event_bytes) as f64;
    println!(
        "store/session200: last body {:.2} MB, {events_total} events ({:.2} MB SSE), database {:.2} MB = {:.2} x (target <= 1.5 x); recorded in {:.2} s; last body rebuilt in {rebuild_ms:.1} ms",
        last_body as f64 / 1e6,
        event_bytes as f64 / 1e6,
        size / 1e6,
        size / budget,
        elapsed.as_secs_f64()
    );
}

/// Target 2: live recording rate.
fn bench_recording_rate(events: u64, runs: usize) {
    let mut rates = Vec::new();
    for run in 0..runs {
        let path = scratch(&format!("rate{run}.sqlite"));
        remove_db(&path);
        let mut store = Store::open(&path).expect("open");
        let session = new_session(&mut store, "rate");
        // A queue that holds the whole run: the producer here is faster than any disk, and the
        // figure is the writer's rate, not how much it drops.
        let options = WriterOptions {
            queue_capacity: usize::try_from(events).unwrap_or(usize::MAX) + 16,
            ..WriterOptions::default()
        };
        let writer = Writer::open_with(&path, options).expect("writer");
        let mut recorder = writer.begin_request(
            SessionRef::Id(session),
            OwnedRequest::from_new(&NewRequest {
                dialect: None,
                rules: None,
                provider: None,
                method: "POST".to_string(),
                url: "https://api.openai.com/v1/responses".to_string(),
                body: b"{}",
                headers: &[],
                extra: None,
                started_us: None,
            }),
            None,
        );
        let start = Instant::now();
        for seq in 0..events {
            let data = json!({"type": "response.output_text.delta", "sequence_number": seq, "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": " token"}).to_string();
            recorder.event(RawEvent {
                seq,
                received_at: start.elapsed(),
                event: Some("response.output_text.delta".to_string()),
                data,
                bytes: None,
            });
        }
        assert_eq!(recorder.lost_events(), 0, "the queue held every event");
        recorder.outcome(OutcomeRecord {
            state: RecordedState::Completed,
            events,
            ..OutcomeRecord::default()
        });
        assert!(writer.flush(Duration::from_secs(300)), "flushed");
        rates.push(events as f64 / start.elapsed().as_secs_f64());
        drop(store);
        remove_db(&path);
    }
    println!(
        "store/record: median {:.0} events/s over {runs} runs of {events} events (target >= 20,000)",
        median(rates)
    );
}

/// Generates (once) a database of at least `bytes`: sessions, requests and large events.
fn big_database(bytes: u64) -> PathBuf {
    let path = scratch(&format!("big-v4-{}mb.sqlite", bytes / 1_000_000));
    if std::fs::metadata(&path).is_ok_and(|m| m.len() >= bytes) {
        return path;
    }
    remove_db(&path);
    drop(Store::open(&path).expect("create"));
    let conn = rusqlite::Connection::open(&path).expect("raw open");
    conn.execute_batch("PRAGMA journal_mode = DELETE; PRAGMA synchronous = OFF;")
        .expect("pragmas");
    let sessions = 5_000;
    let requests = sessions * 10;
    conn.execute_batch(&format!(
        "BEGIN;
         WITH RECURSIVE s(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM s WHERE x < {sessions})
         INSERT INTO sessions (id, name, source, model, created_us)
           SELECT x, 'session ' || x, 'proxy', 'gpt-5.5', 1795000000000000 + x * 1000000 FROM s;
         WITH RECURSIVE s(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM s WHERE x < {requests})
         INSERT INTO requests (id, session_id, position, method, url, input_items, body_bytes, headers)
           SELECT x, (x - 1) / 10 + 1, (x - 1) % 10, 'POST', 'https://api.openai.com/v1/responses', x'', 0, x'' FROM s;
         COMMIT;"
    ))
    .expect("sessions and requests");
    // Event chunks of 4 KB (plain, codec tag 0) until the file is big enough.
    let mut next = 0i64;
    while std::fs::metadata(&path).map_or(0, |m| m.len()) < bytes {
        conn.execute_batch(&format!(
            "BEGIN;
             WITH RECURSIVE s(x) AS (SELECT {next} UNION ALL SELECT x + 1 FROM s WHERE x < {next} + 24999)
             INSERT INTO events (request_id, first_seq, count, raw_bytes, data)
               SELECT x % {requests} + 1, x / {requests}, 1, 4000, x'00' || randomblob(4000) FROM s;
             COMMIT;"
        ))
        .expect("events");
        next += 25_000;
    }
    conn.execute_batch("PRAGMA journal_mode = WAL;")
        .expect("wal");
    path
}

/// Target 3: open a large database and list sessions.
fn bench_open_and_list(bytes: u64, runs: usize) {
    let generated = Instant::now();
    let path = big_database(bytes);
    let size = std::fs::metadata(&path).map_or(0, |m| m.len());
    let setup = generated.elapsed().as_secs_f64();
    let mut times = Vec::new();
    let mut listed = 0;
    for _ in 0..runs {
        let start = Instant::now();
        let store = Store::open(&path).expect("open");
        let list = store.list_sessions(Page::first(100)).expect("list");
        times.push(start.elapsed().as_secs_f64() * 1000.0);
        listed = list.len();
        assert!(list.iter().all(|s| s.requests == 10));
    }
    println!(
        "store/open+list: {:.2} GB database (setup {setup:.1} s), open + first {listed} sessions with request counts: median {:.2} ms over {runs} runs (target <= 200 ms; page cache warm)",
        size as f64 / 1e9,
        median(times)
    );
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` does not: skip the heavy work then.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let quick = std::env::var_os("PROMPTWIRE_BENCH_QUICK").is_some();
    bench_session_size();
    bench_recording_rate(
        if quick { 20_000 } else { 200_000 },
        if quick { 3 } else { 5 },
    );
    bench_open_and_list(if quick { 100_000_000 } else { 1_073_741_824 }, 11);
}
