//! The Prompt's prompt-cache settings compile exactly as the Responses API takes them (WIRE_SPEC
//! §19, §19.1): `prompt_cache_options` and `prompt_cache_retention` right after
//! `prompt_cache_key` (Codex sends neither; a Lite body keeps them, as it keeps every field but
//! `instructions` and `tools`), an explicit `prompt_cache_breakpoint` on its content block, each
//! left out while unset — and a captured body with them imports back into the same typed fields
//! (no overrides) and compiles to the same bytes; options the typed fields cannot reproduce stay
//! as an override.

use crate::support::compile::compile_recorded;

use pretty_assertions::assert_eq;
use promptwire::core::compile::compile;
use promptwire::core::import::import_body;
use promptwire::core::items::{ContentItem, ResponseItem};
use promptwire::core::models::ModelCatalog;
use promptwire::core::prompt::{
    CacheMode, Dialect, Prompt, PromptCacheOptions, has_breakpoint, set_breakpoint,
};
use promptwire::core::provider::{Provider, ProviderKind};
use promptwire::core::rules::CompileRules;
use serde_json::{Value, json};

/// A Lite model's prompt with every cache setting set and a breakpoint on the first block.
fn cached_prompt() -> Prompt {
    let mut prompt = Prompt::new("gpt-5.6-sol");
    prompt.base_instructions = "Be brief.".to_string();
    let mut item = ResponseItem::from_value(json!({"type": "message", "role": "user",
        "content": [{"type": "input_text", "text": "Here is the policy."},
                    {"type": "input_text", "text": "What does it say?"}]}))
    .expect("item");
    if let ResponseItem::Message(message) = &mut item {
        set_breakpoint(&mut message.content[0], true);
    }
    prompt.input = vec![item];
    prompt.prompt_cache_key = Some("thr_1".to_string());
    prompt.prompt_cache_options = PromptCacheOptions {
        mode: Some(CacheMode::Explicit),
        ttl: Some("12h".to_string()),
        comparison_response_id: Some("resp_prev".to_string()),
    };
    prompt.prompt_cache_retention = Some("24h".to_string());
    prompt.pinned_ids.additional_tools = Some("at_1".to_string());
    prompt.pinned_ids.instructions = Some("msg_1".to_string());
    prompt.compile.rules = "codex-0.171".to_string();
    prompt.compile.provider = ProviderKind::Openai;
    prompt
}

fn body(prompt: &Prompt, dialect: Dialect) -> (Value, Vec<u8>) {
    let model = ModelCatalog::bundled().lookup(&prompt.model);
    let compiled = compile(
        prompt,
        &model,
        &Provider::preset(ProviderKind::Openai),
        dialect,
        &CompileRules::codex_0_171(),
    )
    .expect("compile");
    (Value::Object((*compiled.body).clone()), compiled.body_json)
}

fn user_message() -> Value {
    json!({"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "Here is the policy.",
         "prompt_cache_breakpoint": {"mode": "explicit"}},
        {"type": "input_text", "text": "What does it say?"}]})
}

fn standard_body() -> Value {
    json!({"model": "gpt-5.6-sol", "stream": true, "input": [
            {"type": "message", "id": "msg_1", "role": "developer",
             "content": [{"type": "input_text", "text": "Be brief."}]},
            user_message()],
        "tools": [], "tool_choice": "auto", "parallel_tool_calls": true,
        "reasoning": {"effort": "low"}, "store": false,
        "include": ["reasoning.encrypted_content"], "prompt_cache_key": "thr_1",
        "prompt_cache_options": {"mode": "explicit", "ttl": "12h",
                                 "comparison_response_id": "resp_prev"},
        "prompt_cache_retention": "24h", "text": {"verbosity": "low"}})
}

fn lite_body() -> Value {
    json!({"model": "gpt-5.6-sol", "stream": true, "input": [
            {"type": "additional_tools", "id": "at_1", "role": "developer", "tools": []},
            {"type": "message", "id": "msg_1", "role": "developer",
             "content": [{"type": "input_text", "text": "Be brief."}]},
            user_message()],
        "tool_choice": "auto", "parallel_tool_calls": false,
        "reasoning": {"effort": "low", "context": "all_turns"}, "store": false,
        "include": ["reasoning.encrypted_content"], "prompt_cache_key": "thr_1",
        "prompt_cache_options": {"mode": "explicit", "ttl": "12h",
                                 "comparison_response_id": "resp_prev"},
        "prompt_cache_retention": "24h", "text": {"verbosity": "low"}})
}

#[test]
fn cache_settings_compile_after_the_cache_key_in_standard_and_lite_bodies() {
    let prompt = cached_prompt();
    for (dialect, expected) in [
        (Dialect::Standard, standard_body()),
        (Dialect::Lite, lite_body()),
    ] {
        let (value, bytes) = body(&prompt, dialect);
        // The exact bytes: key order (top level, options, the block) included.
        assert_eq!(
            String::from_utf8(bytes).expect("utf-8"),
            serde_json::to_string(&expected).expect("json"),
            "{dialect:?}"
        );
        assert_eq!(value, expected);
    }
}

#[test]
fn unset_cache_settings_send_nothing() {
    let mut prompt = cached_prompt();
    prompt.prompt_cache_options = PromptCacheOptions::default();
    prompt.prompt_cache_retention = None;
    if let ResponseItem::Message(message) = &mut prompt.input[0] {
        set_breakpoint(&mut message.content[0], false);
    }
    let (value, _) = body(&prompt, Dialect::Lite);
    let mut expected = lite_body();
    let map = expected.as_object_mut().expect("object");
    map.shift_remove("prompt_cache_options");
    map.shift_remove("prompt_cache_retention");
    map["input"][2]["content"][0] = json!({"type": "input_text", "text": "Here is the policy."});
    assert_eq!(value, expected);

    // One field set: only it is sent.
    prompt.prompt_cache_options.ttl = Some("30m".to_string());
    let (value, _) = body(&prompt, Dialect::Lite);
    assert_eq!(value["prompt_cache_options"], json!({"ttl": "30m"}));
}

#[test]
fn an_imported_body_keeps_its_cache_settings_and_compiles_back_byte_for_byte() {
    for captured in [standard_body(), lite_body()] {
        let outcome = import_body(&captured, &ModelCatalog::bundled()).expect("import");
        assert_eq!(outcome.overridden, Vec::<String>::new(), "{captured}");
        let prompt = &outcome.prompt;
        assert_eq!(
            (
                &prompt.prompt_cache_options,
                prompt.prompt_cache_retention.as_deref()
            ),
            (&cached_prompt().prompt_cache_options, Some("24h"))
        );
        let breakpoints: Vec<bool> = match prompt.input.as_slice() {
            [ResponseItem::Message(message)] => {
                message.content.iter().map(has_breakpoint).collect()
            }
            other => panic!("one typed user message, got {other:?}"),
        };
        assert_eq!(breakpoints, vec![true, false]);
        let compiled = compile_recorded(prompt);
        assert_eq!(
            String::from_utf8(compiled.body_json.clone()).expect("utf-8"),
            serde_json::to_string(&captured).expect("json")
        );
    }
}

#[test]
fn options_the_typed_fields_do_not_reproduce_are_kept_as_overrides() {
    // Another key order and an unknown key: kept verbatim, so the body still round-trips (as a
    // value: an override of a field the compile left out is appended after the compiled ones).
    let mut captured = lite_body();
    captured["prompt_cache_options"] = json!({"ttl": "12h", "mode": "explicit", "beta": true});
    let outcome = import_body(&captured, &ModelCatalog::bundled()).expect("import");
    assert_eq!(outcome.overridden, vec!["prompt_cache_options".to_string()]);
    assert_eq!(
        outcome.prompt.prompt_cache_options,
        PromptCacheOptions::default()
    );
    let compiled = compile_recorded(&outcome.prompt);
    assert_eq!(Value::Object((*compiled.body).clone()), captured);
    // The block keeps its breakpoint as a field of the typed part.
    let part = match &outcome.prompt.input[0] {
        ResponseItem::Message(message) => message.content[0].clone(),
        other => panic!("{other:?}"),
    };
    assert!(matches!(part, ContentItem::InputText { .. }) && has_breakpoint(&part));
}
