//! The official `openai` Python SDK (3.x) through `promptwire record`, against a loopback
//! upstream the test starts: `responses.create` streamed and not streamed, `responses.retrieve`
//! and `chat.completions.create`. The two Responses calls are stored as requests with the
//! outcome the client got (completed, the response id, usage with cached and cache-write
//! tokens) — the JSON answer as one "response (JSON)" event, not a failed stream —; the two
//! other calls pass through unrecorded and are counted; `sessions show` lists the two with their
//! usage.
//!
//! Python with the SDK is found through `PROMPTWIRE_PYTHON` (`.ci/run` makes a virtualenv with
//! `openai` and sets it), else `python3` when it can `import openai`. When neither can, the test
//! says so and skips — except under `CI=true`, where it fails (`tests/support/shared.rs`).

use crate::support;

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use pretty_assertions::assert_eq;
use promptwire::store::{Page, RecordedState, Store};
use serde_json::{Value, json};
use support::scratch;
use support::upstream::{Reply, Upstream, paced, sse_event};

use super::proxy_codex::{assert_ok, start_record, stop_server};

/// What the script does with the SDK; it prints one JSON line of what the client got.
const SCRIPT: &str = r#"
import json, sys
from openai import OpenAI
client = OpenAI(base_url=sys.argv[1], api_key="sk-proj-SDKTESTKEY0123456789abcdef", max_retries=0)
unary = client.responses.create(model="gpt-5.5", input="Say hi.")
text = ""
final = None
for event in client.responses.create(model="gpt-5.5", input="Say hi again.", stream=True):
    if event.type == "response.output_text.delta":
        text += event.delta
    elif event.type == "response.completed":
        final = event.response
got = client.responses.retrieve(unary.id)
chat = client.chat.completions.create(model="gpt-4.1", messages=[{"role": "user", "content": "hi"}])
print(json.dumps({
    "unary": [unary.id, unary.output_text, unary.usage.input_tokens_details.cached_tokens],
    "stream": [final.id, text],
    "retrieve": got.id,
    "chat": chat.choices[0].message.content,
}))
"#;

/// A Python that can `import openai`, or `None` (outside CI) when there is none.
#[allow(
    clippy::disallowed_methods,
    reason = "the test finds its Python through the environment, as .ci/run sets it"
)]
fn python() -> Option<PathBuf> {
    let candidate =
        std::env::var_os("PROMPTWIRE_PYTHON").map_or_else(|| "python3".into(), PathBuf::from);
    let works = Command::new(&candidate)
        .args(["-c", "import openai"])
        .output()
        .is_ok_and(|o| o.status.success());
    if works {
        return Some(candidate);
    }
    support::shared::skip(&format!(
        "{} cannot import openai (.ci/run makes a virtualenv with the SDK and sets PROMPTWIRE_PYTHON)",
        candidate.display()
    ));
    None
}

fn usage(input: u64, cached: u64, written: u64) -> Value {
    json!({"input_tokens": input,
           "input_tokens_details": {"cached_tokens": cached, "cache_write_tokens": written},
           "output_tokens": 3, "output_tokens_details": {"reasoning_tokens": 0},
           "total_tokens": input + 3})
}

/// The same usage as the store keeps it (one typed shape, whatever the wire's).
fn stored_usage(input: u64, cached: u64, written: u64) -> Value {
    json!({"input_tokens": input, "cached_input_tokens": cached,
           "cache_write_input_tokens": written, "output_tokens": 3,
           "reasoning_output_tokens": 0, "total_tokens": input + 3})
}

/// A whole response object, as the Responses API answers a non-streamed create or a retrieve.
fn response_object(id: &str, text: &str, usage: Value) -> Value {
    json!({"id": id, "object": "response", "created_at": 1_764_000_000, "status": "completed",
           "model": "gpt-5.5", "output": [{"type": "message", "id": format!("msg_{id}"),
           "status": "completed", "role": "assistant",
           "content": [{"type": "output_text", "text": text, "annotations": []}]}],
           "usage": usage})
}

fn streamed(id: &str, text: &str) -> Vec<bytes::Bytes> {
    let done = response_object(id, text, usage(2_048, 1_024, 512));
    vec![
        sse_event(
            "response.created",
            &json!({"type": "response.created", "sequence_number": 0,
            "response": {"id": id, "object": "response", "created_at": 1_764_000_000,
                         "status": "in_progress", "model": "gpt-5.5", "output": []}}),
        ),
        sse_event(
            "response.output_text.delta",
            &json!({"type": "response.output_text.delta",
            "sequence_number": 1, "item_id": format!("msg_{id}"), "output_index": 0,
            "content_index": 0, "delta": text, "logprobs": []}),
        ),
        sse_event(
            "response.completed",
            &json!({"type": "response.completed",
            "sequence_number": 2, "response": done}),
        ),
    ]
}

#[test]
fn the_openai_sdk_is_recorded_streamed_and_not() {
    let Some(python) = python() else {
        return;
    };
    let upstream =
        Upstream::start(|req| {
            let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
            match (req.method.as_str(), req.path.as_str()) {
            ("POST", "/v1/responses") if body["stream"] == json!(true) => {
                Reply::sse(paced(&streamed("resp_sdk_2", "Hi again."), Duration::from_millis(5)))
            }
            ("POST", "/v1/responses") => Reply::json(
                200,
                &response_object("resp_sdk_1", "Hi.", usage(1_500, 0, 1_024)).to_string(),
            ),
            ("GET", "/v1/responses/resp_sdk_1") => Reply::json(
                200,
                &response_object("resp_sdk_1", "Hi.", usage(1_500, 0, 1_024)).to_string(),
            ),
            ("POST", "/v1/chat/completions") => Reply::json(
                200,
                &json!({"id": "chatcmpl_1", "object": "chat.completion", "created": 1_764_000_000,
                        "model": "gpt-4.1", "choices": [{"index": 0, "finish_reason": "stop",
                        "message": {"role": "assistant", "content": "Hello."}}],
                        "usage": {"prompt_tokens": 8, "completion_tokens": 2, "total_tokens": 10}})
                .to_string(),
            ),
            _ => Reply::json(404, r#"{"error":{"message":"not here","type":"not_found"}}"#),
        }
        });
    let dir = scratch("sdk");
    let db = dir.join("rec.sqlite");
    let script = dir.join("sdk.py");
    std::fs::write(&script, SCRIPT).expect("script");
    let (mut record, lines, addr) = start_record(&upstream.base_url(), &db);
    let run = Command::new(&python)
        .arg(&script)
        .arg(format!("http://{addr}/v1"))
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .output()
        .expect("run python");
    assert_ok(&run, "the openai SDK through record");
    let printed = stop_server(&mut record, lines);

    // What the client got is what the upstream sent.
    let got: Value = serde_json::from_slice(&run.stdout).expect("script output");
    assert_eq!(
        got,
        json!({"unary": ["resp_sdk_1", "Hi.", 0], "stream": ["resp_sdk_2", "Hi again."],
               "retrieve": "resp_sdk_1", "chat": "Hello."})
    );

    // record says what it passed through and what it stored.
    let passthrough: Vec<&Value> = printed
        .iter()
        .filter_map(|l| l.get("passthrough").filter(|p| p.is_object()))
        .collect();
    assert_eq!(
        passthrough,
        vec![
            &json!({"method": "GET", "path": "/v1/responses/resp_sdk_1"}),
            &json!({"method": "POST", "path": "/v1/chat/completions"}),
        ]
    );
    let stopped = printed.last().expect("a stopped line");
    assert_eq!(
        (&stopped["requests"], &stopped["passthrough"]),
        (&json!(2), &json!(2)),
        "{stopped}"
    );

    // The store: two requests, each completed with the response id and usage the client got.
    let store = Store::open(&db).expect("db");
    let sessions = store.list_sessions(Page::ALL).expect("sessions");
    let requests: Vec<_> = sessions
        .iter()
        .flat_map(|s| store.requests(s.id, Page::ALL).expect("requests"))
        .collect();
    let outcomes: Vec<(RecordedState, Option<String>, Option<Value>)> = requests
        .iter()
        .map(|r| {
            let o = store.outcome(r.id).expect("read").expect("outcome");
            (o.state, o.response_id, o.usage)
        })
        .collect();
    assert_eq!(
        outcomes,
        vec![
            (
                RecordedState::Completed,
                Some("resp_sdk_1".to_string()),
                Some(stored_usage(1_500, 0, 1_024))
            ),
            (
                RecordedState::Completed,
                Some("resp_sdk_2".to_string()),
                Some(stored_usage(2_048, 1_024, 512))
            ),
        ]
    );
    drop(store);

    // sessions show lists both with their usage.
    let session = sessions[0].id.to_string();
    let show = Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .args(["sessions", "show", &session, "--json", "--db"])
        .arg(&db)
        .output()
        .expect("sessions show");
    assert_ok(&show, "sessions show --json");
    let shown: Value = serde_json::from_slice(&show.stdout).expect("json");
    let rows: Vec<(Value, Value)> = shown["requests"]
        .as_array()
        .expect("requests")
        .iter()
        .map(|r| (r["outcome"].clone(), r["usage"].clone()))
        .collect();
    assert_eq!(
        rows,
        vec![
            (
                json!("completed"),
                json!({"input_tokens": 1_500, "cached_tokens": 0, "cache_write_tokens": 1_024,
                       "output_tokens": 3})
            ),
            (
                json!("completed"),
                json!({"input_tokens": 2_048, "cached_tokens": 1_024, "cache_write_tokens": 512,
                       "output_tokens": 3})
            ),
        ]
    );
    let text = Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .args(["sessions", "show", &session, "--db"])
        .arg(&db)
        .output()
        .expect("sessions show");
    assert_ok(&text, "sessions show");
    let usage_lines: Vec<String> = String::from_utf8_lossy(&text.stdout)
        .lines()
        .filter(|l| l.trim_start().starts_with("usage:"))
        .map(|l| l.trim().to_string())
        .collect();
    assert_eq!(
        usage_lines,
        vec![
            "usage: 1,500 input (0 cached, 1,024 written) · 3 output",
            "usage: 2,048 input (1,024 cached, 512 written) · 3 output",
        ]
    );
}
