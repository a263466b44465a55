//! Compiler invariants beyond the spec vectors: the fast byte assembly equals serde's own
//! serialization, a batch of views equals separate compiles, zstd bodies decompress to the JSON,
//! WebSocket frames carry `previous_response_id` before `input`, and the bundled example prompts
//! compile to exactly what they should.

use std::path::Path;

use pretty_assertions::assert_eq;
use promptwire::core::compile::{CompiledRequest, compile, compile_views};
use promptwire::core::models::ModelCatalog;
use promptwire::core::prompt::{AuthMode, Dialect, Prompt};
use promptwire::core::provider::{Provider, ProviderKind};
use promptwire::core::rules::CompileRules;
use serde_json::{Value, json};

fn example(name: &str) -> Prompt {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/prompts")
        .join(name);
    Prompt::from_json_str(&std::fs::read_to_string(path).expect("read example")).expect("parse")
}

fn all_examples() -> Vec<Prompt> {
    [
        "hello.json",
        "tools-session.json",
        "lite-image.json",
        "structured-output.json",
    ]
    .into_iter()
    .map(example)
    .collect()
}

fn views(providers: &[Provider]) -> Vec<(&Provider, Dialect)> {
    [Dialect::Standard, Dialect::Lite]
        .into_iter()
        .flat_map(|d| providers.iter().map(move |p| (p, d)))
        .collect()
}

#[test]
fn batch_of_views_equals_separate_compiles_and_bytes_equal_serde() {
    let catalog = ModelCatalog::bundled();
    let providers: Vec<Provider> = ProviderKind::ALL
        .into_iter()
        .map(Provider::preset)
        .collect();
    for prompt in all_examples() {
        let model = catalog.lookup(&prompt.model);
        for rules in [CompileRules::seed(), CompileRules::codex_0_169()] {
            let batch = compile_views(&prompt, &model, &rules, &views(&providers)).expect("views");
            for ((provider, dialect), from_batch) in views(&providers).into_iter().zip(&batch) {
                let single = compile(&prompt, &model, provider, dialect, &rules).expect("compile");
                assert_eq!(from_batch, &single);
                assert_eq!(
                    String::from_utf8(single.body_json.clone()).expect("utf-8"),
                    serde_json::to_string(&single.body).expect("json"),
                    "{} {:?} {}",
                    prompt.model,
                    dialect,
                    provider.name
                );
            }
        }
    }
}

#[test]
fn zstd_body_decompresses_to_the_exact_json_and_is_smaller() {
    let mut prompt = example("tools-session.json");
    prompt.compile.auth = AuthMode::Chatgpt;
    let catalog = ModelCatalog::bundled();
    let compiled = compile(
        &prompt,
        &catalog.lookup(&prompt.model),
        &Provider::preset(ProviderKind::Openai),
        Dialect::Auto,
        &CompileRules::codex_0_169(),
    )
    .expect("compile");
    let compressed = compiled.compressed_body.as_deref().expect("zstd applies");
    assert_eq!(
        zstd::decode_all(compressed).expect("zstd"),
        compiled.body_json
    );
    assert!(compressed.len() < compiled.body_json.len());
    let encoding: Vec<&str> = compiled
        .headers
        .iter()
        .filter(|h| h.name == "content-encoding")
        .map(|h| h.value.as_str())
        .collect();
    assert_eq!(encoding, ["zstd"]);
    let note = compiled
        .notes
        .iter()
        .find(|n| n.path == "body")
        .expect("zstd note");
    assert_eq!(
        note.message,
        format!(
            "sent zstd-compressed (Content-Encoding: zstd): {} bytes on the wire for {} bytes of JSON",
            compressed.len(),
            compiled.body_json.len()
        )
    );
}

fn compile_example(name: &str, dialect: Dialect, kind: ProviderKind) -> CompiledRequest {
    let prompt = example(name);
    let rules = CompileRules::preset(&prompt.compile.rules).expect("rules");
    compile(
        &prompt,
        &ModelCatalog::bundled().lookup(&prompt.model),
        &Provider::preset(kind),
        dialect,
        &rules,
    )
    .expect("compile")
}

#[test]
fn hello_example_compiles_to_the_exact_codex_0169_body() {
    let compiled = compile_example("hello.json", Dialect::Auto, ProviderKind::Openai);
    let expected = r#"{"model":"gpt-5.5","stream":true,"input":[{"type":"message","id":"msg_d315eb5c-080c-557a-9edb-293a53b0a4a0","role":"developer","content":[{"type":"input_text","text":"You are a careful coding assistant. Answer briefly."}]},{"type":"message","role":"user","content":[{"type":"input_text","text":"What does `git rebase --onto` do?"}]}],"tools":[],"tool_choice":"auto","parallel_tool_calls":true,"reasoning":{"effort":"medium"},"store":false,"include":["reasoning.encrypted_content"],"prompt_cache_key":"0196a2c1-7b2e-7c11-9d40-5e1f0a3b8c77","text":{"verbosity":"low"}}"#;
    assert_eq!(
        String::from_utf8(compiled.body_json).expect("utf-8"),
        expected
    );
}

#[test]
fn lite_ws_frame_puts_previous_response_id_before_input_and_flags_lite_in_metadata() {
    let mut prompt = example("lite-image.json");
    prompt.previous_response_id = Some("resp_prev".to_string());
    prompt.input.truncate(0);
    prompt.tools.clear();
    prompt.base_instructions.clear();
    let compiled = compile(
        &prompt,
        &ModelCatalog::bundled().lookup(&prompt.model),
        &Provider::preset(ProviderKind::Compatible),
        Dialect::Auto,
        &CompileRules::codex_0_169(),
    )
    .expect("compile");
    let frame = serde_json::to_string(&compiled.ws_frame()).expect("json");
    // §5.4 (C): at_<uuid v5(uuid v5(OID, thread id), tools JSON)>.
    let thread = uuid::Uuid::new_v5(
        &uuid::Uuid::NAMESPACE_OID,
        b"0196a2c3-0000-7000-8000-0000000000ee",
    );
    let at_id = format!("at_{}", uuid::Uuid::new_v5(&thread, b"[]"));
    let expected = json!({
        "type": "response.create",
        "model": "gpt-6-sol",
        "stream": true,
        "previous_response_id": "resp_prev",
        "input": [{"type":"additional_tools","id":at_id,"role":"developer","tools":[]}],
        "tool_choice": "auto",
        "parallel_tool_calls": false,
        "reasoning": {"effort":"medium","context":"all_turns"},
        "store": false,
        "include": ["reasoning.encrypted_content"],
        "prompt_cache_key": "0196a2c3-0000-7000-8000-0000000000ee",
        "text": {"verbosity":"medium"},
        "client_metadata": {"ws_request_header_x_openai_internal_codex_responses_lite": "true"}
    });
    assert_eq!(frame, serde_json::to_string(&expected).expect("json"));
    // The HTTP body has neither the continuation id nor the WS-only metadata key.
    let body = Value::Object((*compiled.body).clone());
    assert_eq!(body.get("previous_response_id"), None);
    assert_eq!(body.get("client_metadata"), None);
}

#[test]
fn every_field_left_out_by_gating_is_explained() {
    // An unknown slug under seed rules: verbosity is gated off, the tier is unknown; reasoning
    // still carries the explicit effort (seed chapter 5.6 gates only the summary).
    let mut prompt = example("structured-output.json");
    prompt.model = "my-local-model".to_string();
    let compiled = compile(
        &prompt,
        &ModelCatalog::bundled().lookup(&prompt.model),
        &Provider::preset(ProviderKind::Compatible),
        Dialect::Standard,
        &CompileRules::seed(),
    )
    .expect("compile");
    let notes: Vec<(String, String)> = compiled
        .notes
        .iter()
        .map(|n| (n.path.clone(), n.message.clone()))
        .collect();
    assert_eq!(
        notes,
        vec![
            ("model".to_string(), "`my-local-model` is not in the catalog: fallback capabilities (no verbosity, no parallel tools, no reasoning summaries)".to_string()),
            ("text.verbosity".to_string(), "`low` omitted: the model does not support verbosity".to_string()),
            ("service_tier".to_string(), "`flex` omitted: the model does not offer this tier".to_string()),
        ]
    );
    assert_eq!(compiled.body["reasoning"], json!({"effort": "low"}));
    assert_eq!(
        compiled.body["include"],
        json!(["reasoning.encrypted_content"])
    );
}

#[test]
fn identical_item_notes_are_gathered_into_one() {
    let prompt = example("tools-session.json");
    let compiled = compile(
        &prompt,
        &ModelCatalog::bundled().lookup(&prompt.model),
        &Provider::preset(ProviderKind::Openai),
        Dialect::Standard,
        &CompileRules::seed(),
    )
    .expect("compile");
    let notes: Vec<(String, String)> = compiled
        .notes
        .into_iter()
        .map(|n| (n.path, n.message))
        .collect();
    assert_eq!(
        notes,
        // The history's ids are all prefixed (`msg_…`, `fc_…`), so seed rules keep them.
        vec![
            (
                "input[*].status".to_string(),
                "dropped: these rules drop fields the item type does not model (2 items, the first is input[2])"
                    .to_string()
            ),
        ]
    );
}
