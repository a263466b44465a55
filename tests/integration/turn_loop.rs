//! The agent turn loop against real traffic: for each pair of consecutive requests of the Codex
//! CLI 0.169 two-turn capture, request k+1 built from request k (imported), response k (its SSE
//! bytes) and the client's own additions (tool outputs and the new user message, with their ids)
//! equals the captured request k+1 as a whole JSON value, and keeps the prefix of request k.
//! Also: custom tool calls, placeholders and refusals, from the recorded SSE in `tests/data/sse`.

use crate::support::compile as compile_support;
use crate::support::shared;

use compile_support::compile_recorded;
use std::path::Path;
use std::time::Duration;

use pretty_assertions::assert_eq;
use promptwire::core::import::import_body;
use promptwire::core::items::ResponseItem;
use promptwire::core::json::JsonMap;
use promptwire::core::models::ModelCatalog;
use promptwire::core::prefix::Tokenizer;
use promptwire::core::prompt::Prompt;
use promptwire::core::stream::{TurnOutcome, read_all};
use promptwire::core::turn_loop::{
    CallOutput, Continuation, PLACEHOLDER_OUTPUT, TurnLoopError, UserMessage, next_prompt,
    pending_calls, prefix_check,
};
use serde_json::{Value, json};

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("read fixture");
    serde_json::from_str(&text).expect("fixture is JSON")
}

fn outcome_of(path: &Path) -> TurnOutcome {
    let bytes = std::fs::read(path).expect("read SSE");
    read_all(&bytes, Duration::ZERO).1
}

/// What the client itself added in `next` after the echoed response items (which start at
/// `echo_start` and number `echoed`): tool outputs, a user message, and the turn's metadata.
fn client_additions(next: &Value, echo_start: usize, echoed: usize) -> Continuation {
    let input = next["input"].as_array().expect("input");
    let mut continuation = Continuation::default();
    for item in &input[echo_start + echoed..] {
        match item["type"].as_str() {
            Some("function_call_output") => continuation.outputs.push(CallOutput {
                call_id: item["call_id"].as_str().expect("call_id").to_string(),
                output: item["output"].as_str().expect("output").to_string(),
                id: item["id"].as_str().map(str::to_string),
            }),
            Some("message") => {
                continuation.user_message = Some(UserMessage {
                    text: item["content"][0]["text"]
                        .as_str()
                        .expect("text")
                        .to_string(),
                    id: item["id"].as_str().map(str::to_string),
                });
            }
            other => panic!("unexpected client item {other:?}"),
        }
    }
    continuation.client_metadata = next["client_metadata"].as_object().cloned();
    continuation
}

#[test]
fn codex_0169_two_turn_session_is_rebuilt_request_by_request() {
    let Some(dir) = shared::shared_fixtures("codex-cli-0.169/two-turns-tools-session") else {
        return;
    };
    let catalog = ModelCatalog::bundled();
    let tokenizer = Tokenizer::o200k();
    let mut dropped = 0;
    for k in 0..5 {
        let body = read_json(&dir.join(format!("req_{k:02}.json")));
        let expected = read_json(&dir.join(format!("req_{:02}.json", k + 1)));
        let prompt = import_body(&body, &catalog).expect("import").prompt;
        let outcome = outcome_of(&dir.join(format!("resp_{k:02}.sse")));
        let echo_start = body["input"].as_array().expect("input").len();
        let continuation = client_additions(&expected, echo_start, outcome.output_items.len());

        let next = next_prompt(&prompt, &outcome, &continuation).expect("next prompt");
        let compiled = compile_recorded(&next);
        assert_eq!(
            Value::Object((*compiled.body).clone()),
            expected,
            "request {} from request {k}",
            k + 1
        );
        // Same bytes as captured, too: key order of every echoed item included.
        assert_eq!(
            String::from_utf8(compiled.body_json.clone()).expect("utf-8"),
            serde_json::to_string(&expected).expect("serialize"),
            "request {} bytes",
            k + 1
        );

        let previous = compile_recorded(&prompt);
        let report = prefix_check(&previous.body, &compiled.body, tokenizer).expect("prefix");
        // Every request keeps the one before it, but where a new user turn starts: there the
        // server stops rendering the first turn's reasoning (expected: reasoning_dropped).
        if report.causes == [promptwire::core::ledger::Cause::ReasoningDropped] {
            dropped += 1;
            continue;
        }
        assert_eq!(
            (report.prefix_kept, report.causes.len(), report.divergence),
            (true, 0, None),
            "request {} keeps request {k}'s prefix",
            k + 1
        );
        assert_eq!(report.reusable_tokens, report.from_tokens);
    }
    assert_eq!(dropped, 1, "one new user turn");
}

fn tool_calls_outcome() -> TurnOutcome {
    outcome_of(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sse/tool-calls-crlf.sse"))
}

fn small_prompt() -> Prompt {
    Prompt::from_json_str(
        r#"{"model":"gpt-5.5","base_instructions":"Be brief.",
            "input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"fix the config path"}]}]}"#,
    )
    .expect("prompt")
}

#[test]
fn custom_and_function_calls_get_their_outputs_or_placeholders() {
    let outcome = tool_calls_outcome();
    let calls: Vec<(String, &str)> = pending_calls(&outcome)
        .into_iter()
        .map(|c| (c.call_id, c.kind))
        .collect();
    assert_eq!(
        calls,
        vec![
            ("call_Qx81Lm".to_string(), "custom_tool_call"),
            ("call_Vb27Ps".to_string(), "function_call"),
        ]
    );
    let prompt = small_prompt();
    let continuation = Continuation {
        outputs: vec![CallOutput {
            call_id: "call_Vb27Ps".to_string(),
            output: "test result: ok".to_string(),
            id: None,
        }],
        user_message: None,
        client_metadata: None,
    };
    let next = next_prompt(&prompt, &outcome, &continuation).expect("next");
    let added: Vec<Value> = next.input[prompt.input.len()..]
        .iter()
        .map(|item| serde_json::to_value(item).expect("item"))
        .collect();
    let echoed: Vec<Value> = outcome
        .output_items
        .iter()
        .map(|item| serde_json::to_value(item).expect("item"))
        .collect();
    let mut expected = echoed;
    expected.push(json!({"type":"custom_tool_call_output","call_id":"call_Qx81Lm","output":PLACEHOLDER_OUTPUT}));
    expected.push(
        json!({"type":"function_call_output","call_id":"call_Vb27Ps","output":"test result: ok"}),
    );
    assert_eq!(added, expected);
    // Everything but the input carries over.
    assert_eq!(
        Prompt {
            input: prompt.input.clone(),
            ..next.clone()
        },
        prompt
    );

    // The compiled items in the items model's order (`custom_tool_call` models `status`; an
    // unmodelled `status` goes right after `type`, as 0.169 echoes function calls).
    let compiled = compile_recorded(&next);
    let input = compiled.body["input"].as_array().expect("input");
    let keys = |v: &Value| -> Vec<String> { v.as_object().expect("obj").keys().cloned().collect() };
    assert_eq!(
        keys(&input[3]),
        ["type", "id", "status", "call_id", "name", "input"]
    );
    assert_eq!(
        keys(&input[4]),
        ["type", "status", "id", "name", "arguments", "call_id"]
    );
    let report = prefix_check(
        &compile_recorded(&prompt).body,
        &compiled.body,
        Tokenizer::o200k(),
    )
    .expect("prefix");
    assert!(report.prefix_kept, "{report:?}");
}

#[test]
fn user_message_and_metadata_start_a_new_turn() {
    let outcome =
        outcome_of(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sse/text-answer.sse"));
    let prompt = small_prompt();
    let mut metadata = JsonMap::new();
    metadata.insert("turn_id".to_string(), json!("t2"));
    let continuation = Continuation {
        outputs: Vec::new(),
        user_message: Some(UserMessage {
            text: "and now?".to_string(),
            id: Some("msg_2".to_string()),
        }),
        client_metadata: Some(metadata.clone()),
    };
    let next = next_prompt(&prompt, &outcome, &continuation).expect("next");
    let last = serde_json::to_value(next.input.last().expect("item")).expect("item");
    assert_eq!(
        last,
        json!({"type":"message","id":"msg_2","role":"user","content":[{"type":"input_text","text":"and now?"}]})
    );
    assert_eq!(
        next.input.len(),
        prompt.input.len() + outcome.output_items.len() + 1
    );
    assert_eq!(next.client_metadata, Some(metadata));
}

#[test]
fn refusals_name_the_problem() {
    let prompt = small_prompt();
    let outcome = tool_calls_outcome();
    let unknown = Continuation {
        outputs: vec![CallOutput {
            call_id: "call_nope".to_string(),
            output: "x".to_string(),
            id: None,
        }],
        ..Continuation::default()
    };
    assert_eq!(
        next_prompt(&prompt, &outcome, &unknown)
            .expect_err("unknown call")
            .to_string(),
        "tool output for call `call_nope`: the response made no such call (its calls: call_Qx81Lm, call_Vb27Ps)"
    );
    let twice = CallOutput {
        call_id: "call_Vb27Ps".to_string(),
        output: "x".to_string(),
        id: None,
    };
    let duplicate = Continuation {
        outputs: vec![twice.clone(), twice],
        ..Continuation::default()
    };
    assert_eq!(
        next_prompt(&prompt, &outcome, &duplicate),
        Err(TurnLoopError::DuplicateOutput("call_Vb27Ps".to_string()))
    );

    let text =
        outcome_of(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sse/text-answer.sse"));
    assert_eq!(
        next_prompt(&prompt, &text, &Continuation::default()),
        Err(TurnLoopError::NothingToSend)
    );
    let cut = outcome_of(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sse/cut-off.sse"));
    assert_eq!(
        next_prompt(&prompt, &cut, &Continuation::default())
            .expect_err("cut off")
            .to_string(),
        "the response did not complete (failed: stream closed before response.completed); only a completed response can be continued"
    );
    // Nothing typed by hand: the echoed items are exactly the stream's output items.
    assert!(matches!(
        outcome.output_items[0],
        ResponseItem::Reasoning(_)
    ));
}
