//! Compaction requests: the in-band request Codex CLI 0.171 sends on a model switch (our own
//! capture, `tests/data/codex-0.171/compaction-model-switch/`) and the `/responses/compact`
//! request (WIRE_SPEC vector 26) compiled from a Prompt in a compaction mode, recognised by
//! `is_compaction_request`, and imported back into that mode.

use crate::support::compile as compile_support;

use compile_support::compile_recorded;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use promptwire::core::compile::compaction::{
    CHECKPOINT_PROMPT, CompactionKind, checkpoint_message, is_compaction_request,
};
use promptwire::core::compile::lite::additional_tools_id;
use promptwire::core::compile::{CompiledRequest, compile};
use promptwire::core::import::{CapturedHeaders, import_body, import_request};
use promptwire::core::models::ModelCatalog;
use promptwire::core::prompt::{Dialect, Prompt, PromptMode};
use promptwire::core::provider::{Provider, ProviderKind};
use promptwire::core::rules::CompileRules;
use serde_json::{Value, json};

fn capture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/codex-0.171/compaction-model-switch")
        .join(name)
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn user(text: &str) -> Value {
    json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})
}

#[test]
fn captured_in_band_compaction_imports_into_compaction_mode_and_compiles_back_exactly() {
    let bytes = read(&capture("req_00.json"));
    let body: Value = serde_json::from_slice(&bytes).expect("JSON");
    assert_eq!(is_compaction_request(&body), Some(CompactionKind::InBand));
    let headers_text = String::from_utf8(read(&capture("req_00.headers.json"))).expect("utf-8");
    let captured = CapturedHeaders::parse(&headers_text).expect("headers");
    let outcome = import_request(&body, Some(&captured), &ModelCatalog::bundled()).expect("import");
    let prompt = &outcome.prompt;
    assert_eq!(outcome.overridden, Vec::<String>::new());
    assert_eq!(
        (
            prompt.mode,
            prompt.compile.rules.as_str(),
            prompt.compile.dialect
        ),
        (PromptMode::Compaction, "codex-0.171", Dialect::Standard)
    );
    // The checkpoint message is the mode's, the first developer message the base instructions:
    // the Prompt's history is everything between.
    let input = body["input"].as_array().expect("input");
    assert_eq!(prompt.input.len(), input.len() - 2);
    assert_eq!(
        serde_json::to_value(prompt.input.last().expect("history")).expect("item")["role"],
        json!("assistant")
    );
    assert_eq!(prompt.tools, Vec::new());
    let compiled = compile_recorded(prompt);
    assert_eq!(
        String::from_utf8_lossy(&compiled.body_json),
        String::from_utf8_lossy(&bytes)
    );
    let actual: Vec<(String, String)> = compiled
        .headers
        .iter()
        .map(|h| (h.name.clone(), h.value.clone()))
        .collect();
    assert_eq!(actual, captured.comparable());
    // The turn that followed (on the new Lite model) is not a compaction request.
    let next: Value = serde_json::from_slice(&read(&capture("req_01.json"))).expect("JSON");
    assert_eq!(is_compaction_request(&next), None);
}

/// A small turn prompt: instructions, two tools, a history with a tool call.
fn turn_prompt(model: &str) -> Prompt {
    Prompt::from_json_str(
        &json!({
            "model": model,
            "base_instructions": "Be brief.",
            "input": [
                user("list files"),
                {"type": "function_call", "id": "fc_1", "name": "ls", "arguments": "{}",
                 "call_id": "call_1"},
                {"type": "function_call_output", "call_id": "call_1", "output": "a.txt"},
                {"type": "message", "id": "msg_2", "role": "assistant",
                 "content": [{"type": "output_text", "text": "a.txt"}]}
            ],
            "tools": [
                {"type": "function", "name": "ls", "description": "List.", "strict": false,
                 "parameters": {"type": "object"}}
            ],
            "thread_id": "t-1"
        })
        .to_string(),
    )
    .expect("prompt")
}

fn compiled(prompt: &Prompt, rules: &CompileRules, kind: ProviderKind) -> CompiledRequest {
    let model = ModelCatalog::bundled().lookup(&prompt.model);
    compile(
        prompt,
        &model,
        &Provider::preset(kind),
        Dialect::Auto,
        rules,
    )
    .expect("compile")
}

fn history() -> Vec<Value> {
    vec![
        user("list files"),
        json!({"type": "function_call", "id": "fc_1", "name": "ls", "arguments": "{}",
               "call_id": "call_1"}),
        json!({"type": "function_call_output", "call_id": "call_1", "output": "a.txt"}),
        json!({"type": "message", "id": "msg_2", "role": "assistant",
               "content": [{"type": "output_text", "text": "a.txt"}]}),
    ]
}

#[test]
fn compaction_mode_compiles_the_in_band_request() {
    let mut prompt = turn_prompt("gpt-5.5");
    prompt.mode = PromptMode::Compaction;
    let rules = CompileRules::codex_0_171();
    let req = compiled(&prompt, &rules, ProviderKind::Compatible);
    let instructions_id =
        promptwire::core::compile::lite::instructions_message_id("t-1", "Be brief.");
    let mut input = vec![
        json!({"type": "message", "id": instructions_id, "role": "developer",
                                "content": [{"type": "input_text", "text": "Be brief."}]}),
    ];
    input.extend(history());
    input.push(checkpoint_message());
    assert_eq!(
        Value::Object((*req.body).clone()),
        json!({
            "model": "gpt-5.5",
            "stream": true,
            "input": input,
            "tools": [],
            "tool_choice": "auto",
            "parallel_tool_calls": false,
            "reasoning": {"effort": "medium"},
            "store": false,
            "include": ["reasoning.encrypted_content"],
            "prompt_cache_key": "t-1",
            "text": {"verbosity": "low"}
        })
    );
    assert_eq!(req.url, "http://localhost:11434/v1/responses");
    assert_eq!(
        checkpoint_message()["content"][0]["text"],
        json!(CHECKPOINT_PROMPT)
    );
    // The synthesized turn metadata says what the request is.
    let meta = req
        .headers
        .iter()
        .find(|h| h.name == "x-codex-turn-metadata")
        .map(|h| serde_json::from_str::<Value>(&h.value).expect("JSON"));
    assert_eq!(
        meta,
        Some(
            json!({"session_id": "t-1", "thread_id": "t-1", "window_id": "t-1:0",
            "window_number": 0, "request_kind": "compaction",
            "compaction": {"trigger": "auto", "reason": "comp_hash_changed",
                           "implementation": "responses", "phase": "pre_turn",
                           "strategy": "memento"}})
        )
    );
    // Recognised, and imported back into the same mode.
    let body = Value::Object((*req.body).clone());
    assert_eq!(is_compaction_request(&body), Some(CompactionKind::InBand));
    let back = import_body(&body, &ModelCatalog::bundled()).expect("import");
    assert_eq!(back.overridden, Vec::<String>::new());
    assert_eq!(back.prompt.mode, PromptMode::Compaction);
    assert_eq!(compile_recorded(&back.prompt).body_json, req.body_json);
}

// Vector 26 (`responses_lite_compact_request_uses_lite_transport_contract`): the v1 compact
// request of a Lite model has the Lite header, `reasoning.context == "all_turns"` and
// `parallel_tool_calls == false`.
#[test]
fn vector_26_lite_compact_endpoint_request() {
    let mut prompt = turn_prompt("gpt-6.2-sol");
    prompt.mode = PromptMode::CompactEndpoint;
    let rules = CompileRules::codex_0_171();
    let req = compiled(&prompt, &rules, ProviderKind::Openai);
    assert_eq!(req.url, "https://api.openai.com/v1/responses/compact");
    let tools = json!([{"type": "namespace", "name": "functions", "description": "", "tools": [
        {"type": "function", "name": "ls", "description": "List.", "strict": false,
         "parameters": {"type": "object"}}]}]);
    let at_id = additional_tools_id("t-1", &serde_json::to_vec(&tools).expect("json"));
    let instructions_id =
        promptwire::core::compile::lite::instructions_message_id("t-1", "Be brief.");
    let mut input = vec![
        json!({"type": "additional_tools", "id": at_id, "role": "developer", "tools": tools}),
        json!({"type": "message", "id": instructions_id, "role": "developer",
               "content": [{"type": "input_text", "text": "Be brief."}]}),
    ];
    input.extend(history());
    let body = Value::Object((*req.body).clone());
    assert_eq!(
        serde_json::to_string_pretty(&body).expect("json"),
        serde_json::to_string_pretty(&json!({
            "model": "gpt-6.2-sol",
            "input": input,
            "parallel_tool_calls": false,
            "reasoning": {"effort": "low", "context": "all_turns"},
            "prompt_cache_key": "t-1",
            "text": {"verbosity": "low"}
        }))
        .expect("json")
    );
    let header = |name: &str| {
        req.headers
            .iter()
            .find(|h| h.name == name)
            .map(|h| h.value.as_str())
    };
    assert_eq!(
        header("x-openai-internal-codex-responses-lite"),
        Some("true")
    );
    assert_eq!(header("accept"), None, "a unary request, not a stream");
    assert_eq!(is_compaction_request(&body), Some(CompactionKind::Endpoint));
    let back = import_body(&body, &ModelCatalog::bundled()).expect("import");
    assert_eq!(back.overridden, Vec::<String>::new());
    assert_eq!(back.prompt.mode, PromptMode::CompactEndpoint);
    let mut again = back.prompt.clone();
    again.compile.provider = ProviderKind::Openai;
    assert_eq!(compile_recorded(&again).body_json, req.body_json);
}

#[test]
fn standard_compact_endpoint_request_under_seed_rules() {
    let mut prompt = turn_prompt("gpt-5.5");
    prompt.mode = PromptMode::CompactEndpoint;
    // Azure stores turns, but the compact request prepares ids as for `store: false`: under
    // seed rules prefixed ids are kept either way.
    let req = compiled(&prompt, &CompileRules::seed(), ProviderKind::Azure);
    assert_eq!(
        req.url,
        "https://YOUR-RESOURCE.openai.azure.com/openai/responses/compact"
    );
    let body = Value::Object((*req.body).clone());
    assert_eq!(
        serde_json::to_string_pretty(&body).expect("json"),
        serde_json::to_string_pretty(&json!({
            "model": "gpt-5.5",
            "input": history(),
            "instructions": "Be brief.",
            "tools": [{"type": "function", "name": "ls", "description": "List.", "strict": false,
                       "parameters": {"type": "object"}}],
            "parallel_tool_calls": true,
            "reasoning": {"effort": "medium"},
            "prompt_cache_key": "t-1",
            "text": {"verbosity": "low"}
        }))
        .expect("json")
    );
}

#[test]
fn recognition_of_other_bodies() {
    assert_eq!(is_compaction_request(&json!([1, 2])), None);
    assert_eq!(is_compaction_request(&json!({"model": "m"})), None);
    let turn = compiled(
        &turn_prompt("gpt-5.5"),
        &CompileRules::codex_0_171(),
        ProviderKind::Openai,
    );
    assert_eq!(
        is_compaction_request(&Value::Object((*turn.body).clone())),
        None
    );
    let trigger = json!({"model": "m", "stream": true,
        "input": [user("hi"), {"type": "compaction_trigger"}]});
    assert_eq!(
        is_compaction_request(&trigger),
        Some(CompactionKind::Trigger)
    );
    // The turn metadata alone marks an in-band request (whatever the last item is).
    let meta = json!({"model": "m", "stream": true, "input": [user("hi")],
        "client_metadata": {"x-codex-turn-metadata": "{\"request_kind\":\"compaction\"}"}});
    assert_eq!(is_compaction_request(&meta), Some(CompactionKind::InBand));
}

#[test]
fn a_bare_sdk_body_is_not_taken_for_a_compact_request() {
    // No `parallel_tool_calls`: not the compact endpoint's shape.
    let sdk = json!({"model": "gpt-5.5", "input": [user("hi")], "instructions": "Be brief."});
    assert_eq!(is_compaction_request(&sdk), None);
    // With it and a field the compact request never has, not either.
    let sdk = json!({"model": "gpt-5.5", "input": [user("hi")], "parallel_tool_calls": true,
                     "temperature": 0.2});
    assert_eq!(
        is_compaction_request(&sdk),
        None,
        "temperature is no compact field"
    );
    let outcome = import_body(
        &json!({"model": "gpt-5.5", "input": [user("hi")],
        "parallel_tool_calls": true}),
        &ModelCatalog::bundled(),
    )
    .expect("import");
    // Exactly the compact shape: import tries that mode and the turn, and keeps the one with
    // fewer overrides (here the compact request, whose `tools` and `reasoning` the body lacks;
    // as a turn, `stream`, `tool_choice`, `store`, `include`, … would be missing too).
    assert_eq!(outcome.prompt.mode, PromptMode::CompactEndpoint);
    assert_eq!(outcome.overridden, vec!["tools", "reasoning"]);
}
