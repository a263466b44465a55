//! The server's cache figures reach the store by every way a request gets there, on real SQLite
//! files: a HAR import (its SSE read by the one replay) keeps
//! `usage.input_tokens_details.cache_write_tokens` and the response's
//! `prompt_cache_diagnostics` (read back from the stored events), and a Codex rollout's
//! `token_count` keeps `cache_write_input_tokens`; `promptwire stream` prints the diagnosis (JSON
//! and text). (Sends and proxy recordings are covered by
//! `stream_vectors`, `proxy_answer_shapes`, `ui_ask_why` and `cache_standin`.)

use crate::support::db;

use std::path::Path;

use pretty_assertions::assert_eq;
use promptwire::core::rollout::Limits;
use promptwire::core::stream::{PromptCacheDiagnostics, StreamReader, UsageCounts};
use promptwire::store::{Page, Store};
use serde_json::{Value, json};

fn write_counts(usage: Option<&Value>) -> (Option<i64>, Option<i64>, Option<i64>) {
    let u = usage.and_then(UsageCounts::from_value).unwrap_or_default();
    (
        u.input_tokens,
        u.cached_input_tokens,
        u.cache_write_input_tokens,
    )
}

fn har(sse: &str) -> String {
    let body = json!({"model": "gpt-5.6-sol", "input": [], "stream": true});
    json!({"log": {"version": "1.2", "creator": {"name": "test", "version": "1"}, "entries": [{
        "startedDateTime": "2026-12-01T10:00:00.000Z",
        "request": {"method": "POST", "url": "https://api.openai.com/v1/responses",
            "headers": [{"name": "content-type", "value": "application/json"}],
            "postData": {"mimeType": "application/json", "text": body.to_string()}},
        "response": {"status": 200, "headers": [{"name": "content-type", "value": "text/event-stream"}],
            "content": {"mimeType": "text/event-stream", "text": sse}},
        "timings": {"wait": 10, "receive": 5}
    }]}})
    .to_string()
}

fn diagnosed_stream() -> String {
    let completed = json!({"type": "response.completed", "response": {"id": "resp_h",
        "status": "completed",
        "prompt_cache_diagnostics": {"type": "cache_miss", "reason": "tools_changed",
            "cache_missed_tokens": 5629, "comparison_reusable_tokens": 1024},
        "usage": {"input_tokens": 9000, "input_tokens_details": {"cached_tokens": 1024,
            "cache_write_tokens": 7976}, "output_tokens": 3,
            "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 9003}}});
    format!("event: response.completed\ndata: {completed}\n\n")
}

#[test]
fn the_stream_cli_prints_the_servers_diagnosis_and_the_writes() {
    let sse = diagnosed_stream();
    let json = crate::support::cli::run(&["stream", "-", "--json"], Some(sse.as_bytes()));
    assert_eq!(json.status.code(), Some(0), "{json:?}");
    let last: Value = String::from_utf8(json.stdout)
        .expect("utf-8")
        .lines()
        .last()
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .expect("a line");
    assert_eq!(
        last,
        json!({"outcome": "completed", "response_id": "resp_h", "usage": {
            "input_tokens": 9000, "cached_input_tokens": 1024, "cache_write_input_tokens": 7976,
            "output_tokens": 3, "reasoning_output_tokens": 0, "total_tokens": 9003},
            "prompt_cache_diagnostics": {"type": "cache_miss", "reason": "tools_changed",
                "cache_missed_tokens": 5629, "comparison_reusable_tokens": 1024},
            "text": ""})
    );
    let text = crate::support::cli::run(&["stream", "-"], Some(sse.as_bytes()));
    let lines: Vec<String> = String::from_utf8(text.stdout)
        .expect("utf-8")
        .lines()
        .filter(|l| l.starts_with("usage ") || l.starts_with("cache "))
        .map(str::to_string)
        .collect();
    assert_eq!(
        lines,
        vec![
            "usage      input 9000 (cached 1024, cache write 7976), output 3 (reasoning 0), total 9003",
            "cache      server: miss — tools_changed, 5,629 tokens affected, 1,024 reusable in the compared response",
        ]
    );
}

#[test]
fn a_har_import_keeps_cache_writes_and_the_servers_diagnosis() {
    let sse = diagnosed_stream();
    let path = db::scratch_db("har-cache");
    let mut store = Store::open(&path).expect("db");
    let (session, count) = store
        .import_har(&har(&sse), "har", Path::new("cache.har"))
        .expect("import");
    assert_eq!(count, 1);
    let request = store.requests(session, Page::ALL).expect("requests")[0].id;
    let outcome = store.outcome(request).expect("read").expect("outcome");
    assert_eq!(
        (
            outcome.response_id.as_deref(),
            write_counts(outcome.usage.as_ref())
        ),
        (Some("resp_h"), (Some(9000), Some(1024), Some(7976)))
    );
    let mut reader = StreamReader::new();
    for event in store.events(request, Page::ALL).expect("events") {
        reader.push(&event.to_sse(), event.received_at);
    }
    assert_eq!(
        reader.outcome().cache_diagnostics,
        Some(PromptCacheDiagnostics::CacheMiss {
            reason: Some("tools_changed".to_string()),
            cache_missed_tokens: Some(5629),
            comparison_reusable_tokens: Some(1024),
        })
    );
}

/// The cache-write counts stored for the rollout `text` edited by `edit` (which returns the
/// write it put on a line, if any): (what was put, what was stored), turn by turn.
fn rollout_writes(
    name: &str,
    file: &Path,
    text: &str,
    edit: impl Fn(&mut Value, i64) -> Option<Value>,
) -> (Vec<i64>, Vec<i64>) {
    let mut writes = Vec::new();
    let mut lines = Vec::new();
    for line in text.lines() {
        let mut value: Value = serde_json::from_str(line).expect("JSON line");
        match edit(&mut value, 100 + writes.len() as i64) {
            Some(Value::Null) => continue,
            Some(write) => writes.push(write.as_i64().expect("a count")),
            None => {}
        }
        lines.push(value.to_string());
    }
    let path = db::scratch_db(name);
    let mut store = Store::open(&path).expect("db");
    let imported = store
        .import_rollout_bytes(
            lines.join("\n").as_bytes(),
            file,
            &Limits::default(),
            &Default::default(),
        )
        .expect("import");
    let mut stored = Vec::new();
    for import in imported {
        let session = import.session_id.expect("imported");
        for request in store.requests(session, Page::ALL).expect("requests") {
            if let Some(outcome) = store.outcome(request.id).expect("read")
                && let Some(write) = write_counts(outcome.usage.as_ref()).2
                && write > 0
            {
                stored.push(write);
            }
        }
    }
    (writes, stored)
}

#[test]
fn a_rollout_import_keeps_cache_write_input_tokens() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/rollouts/codex-0.171-lite-resume-same-model");
    let file = std::fs::read_dir(&dir)
        .expect("fixture dir")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("rollout-"))
        })
        .expect("a rollout");
    let text = std::fs::read_to_string(&file).expect("rollout");
    // Each turn's usage record as a breakpoint model reports it: a write after the read.
    let (put, stored) = rollout_writes("rollout-records", &file, &text, |line, write| {
        if line.get("type").and_then(Value::as_str) != Some("token_usage_record") {
            return None;
        }
        let usage = line
            .pointer_mut("/payload/usage")
            .filter(|u| u.is_object())?;
        usage["cache_write_input_tokens"] = json!(write);
        Some(json!(write))
    });
    assert!(!put.is_empty(), "the fixture has usage records");
    assert_eq!(stored, put, "token_usage_record");
    // Without usage records (older files), each turn's token_count `last_token_usage`.
    let (put, stored) = rollout_writes("rollout-token-count", &file, &text, |line, write| {
        if line.get("type").and_then(Value::as_str) == Some("token_usage_record") {
            return Some(Value::Null);
        }
        let last = line.pointer_mut("/payload/info/last_token_usage")?;
        last.is_object().then(|| {
            last["cache_write_input_tokens"] = json!(write);
            json!(write)
        })
    });
    assert!(!put.is_empty(), "the fixture has token_count lines");
    assert_eq!(stored, put, "token_count");
}
