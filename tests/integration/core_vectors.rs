//! WIRE_SPEC §15 request, item and tool vectors (1, 4, 14–25, 27–33, 35) as whole-value
//! assertions. Vector 26 (the `/responses/compact` request) is in `tests/integration/core_compaction.rs`.
//!
//! Stream vectors (5–13, 34, 36, 37) live with the stream mapping tests. Every request vector is
//! reproduced through `compile()`; bodies, frames and items are compared as whole JSON values
//! *and* key order (pretty-printed strings, so a reordered key fails with a readable diff).
//! Vectors from snapshot A ([T]) use `snapshot_a()`; where Codex CLI 0.169 behaves
//! differently a `codex-0.169` counterpart pins that too.

use pretty_assertions::assert_eq;
use promptwire::core::compile::{CompiledRequest, compile};
use promptwire::core::items::ResponseItem;
use promptwire::core::json::JsonMap;
use promptwire::core::models::{ModelCatalog, ModelInfo};
use promptwire::core::prompt::{AuthMode, Dialect, Prompt, Setting};
use promptwire::core::provider::{Provider, ProviderKind};
use promptwire::core::rules::{CompileRules, IdPolicy, IncludePolicy, ReasoningGate};
use promptwire::core::tools::ToolSpec;
use serde::Serialize;
use serde_json::{Value, json};
use uuid::Uuid;

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// Asserts `actual` equals `expected` as a value *and* in key order (pretty strings differ on
/// any reordered key, and pretty_assertions shows the line that moved).
fn assert_json_exact<T: Serialize + ?Sized>(actual: &T, expected: &Value) {
    let actual = serde_json::to_value(actual).expect("serializable");
    assert_eq!(
        serde_json::to_string_pretty(&actual).expect("json"),
        serde_json::to_string_pretty(expected).expect("json")
    );
    assert_eq!(&actual, expected);
}

fn item(value: Value) -> ResponseItem {
    ResponseItem::from_value(value).expect("item parses")
}

fn tool(value: Value) -> ToolSpec {
    ToolSpec::from_value(value).expect("tool parses")
}

/// Parses an item and serialises it again as compact JSON.
fn item_roundtrip(value: Value) -> String {
    let parsed = item(value);
    serde_json::to_string(&serde_json::to_value(&parsed).expect("item serializes")).expect("json")
}

/// Parses a tool and serialises it again as compact JSON.
fn tool_roundtrip(value: Value) -> String {
    let parsed = tool(value);
    serde_json::to_string(&serde_json::to_value(&parsed).expect("tool serializes")).expect("json")
}

fn lookup(slug: &str) -> ModelInfo {
    let model = ModelCatalog::bundled().lookup(slug);
    assert!(!model.is_fallback(), "{slug} is in the bundled catalog");
    model
}

/// Snapshot A of codex-rs as WIRE_SPEC §1–§17 describe it: `reasoning` gated whole by
/// `supports_reasoning_summaries` (else `null`), `include` only with reasoning, ids cleared
/// unless stored, encrypted function arguments unknown (never sent). The `seed` preset differs
/// where the seed chapters speak; these vectors pin the code they were taken from.
fn snapshot_a() -> CompileRules {
    CompileRules {
        reasoning_gate: ReasoningGate::SummariesFlag,
        include: IncludePolicy::WhenReasoning,
        ids: IdPolicy::StripUnlessStored,
        encrypted_function_args_for_openai: false,
        ..CompileRules::seed()
    }
}

fn openai() -> Provider {
    Provider::preset(ProviderKind::Openai)
}

/// A provider whose display name is not `OpenAI` (the golden test's `Test Responses`).
fn test_responses_provider() -> Provider {
    Provider {
        name: "Test Responses".to_string(),
        base_url: "http://127.0.0.1:4010/v1".to_string(),
        env_key: None,
        headers: Vec::new(),
        query_params: Vec::new(),
        env_headers: Vec::new(),
    }
}

fn build(
    prompt: &Prompt,
    model: &ModelInfo,
    provider: &Provider,
    dialect: Dialect,
    rules: &CompileRules,
) -> CompiledRequest {
    compile(prompt, model, provider, dialect, rules).expect("prompt compiles")
}

fn headers(req: &CompiledRequest) -> Value {
    serde_json::to_value(&req.headers).expect("headers serialize")
}

fn user_text(text: &str) -> ResponseItem {
    item(json!({"type":"message","role":"user","content":[{"type":"input_text","text":text}]}))
}

fn map(value: Value) -> JsonMap {
    match value {
        Value::Object(map) => map,
        other => panic!("expected an object, got {other}"),
    }
}

/// The static `version` header the built-in OpenAI provider sends first (§4).
fn openai_version(version: &str) -> Value {
    json!({"name":"version","value":version})
}

/// The standard header tail for the OpenAI preset with API-key auth (no thread id).
fn api_key_tail(version: &str) -> Vec<Value> {
    vec![
        json!({"name":"accept","value":"text/event-stream"}),
        json!({"name":"content-type","value":"application/json"}),
        json!({"name":"authorization","value":"Bearer <redacted>","secret_env":"OPENAI_API_KEY"}),
        json!({"name":"originator","value":"codex_cli_rs"}),
        json!({"name":"user-agent","value":format!("codex_cli_rs/{version}")}),
    ]
}

/// `at_…` / `msg_…` ids of the C Lite prefix, computed from §5.4's formula (independently of
/// promptwire's own helper): uuid v5 of the payload under uuid v5(OID, thread id).
fn synthesized_id(prefix: &str, thread_id: &str, payload: &[u8]) -> String {
    let ns = Uuid::new_v5(&Uuid::NAMESPACE_OID, thread_id.as_bytes());
    format!("{prefix}_{}", Uuid::new_v5(&ns, payload).hyphenated())
}

// ---------------------------------------------------------------------------------------------
// Vector 1: responses_client_stream_request_preserves_item_ids
// ---------------------------------------------------------------------------------------------

/// Vector 1 is a codex-api struct serialised directly: `reasoning: None`, `include: []`, the id
/// `msg_1` kept. Through `compile()`: the unknown slug `gpt-test` gets the fallback metadata, so
/// the snapshot A reasoning gate gives `"reasoning":null` and `"include":[]`, no verbosity (no
/// `text`) and `parallel_tool_calls:false`. The codex-api layer never strips ids, and snapshot-A rules
/// with `store:false` would clear `msg_1`; snapshot-A rules with the C id policy (`KeepPrefixed`)
/// keep it while leaving every other field exactly as A orders it.
#[test]
fn vector_01_request_preserves_item_ids_exact_bytes() {
    let mut prompt = Prompt::new("gpt-test");
    prompt.base_instructions = "Say hi".to_string();
    prompt.input = vec![item(json!({
        "type":"message","id":"msg_1","role":"user",
        "content":[{"type":"input_text","text":"hi"}]
    }))];
    let rules = CompileRules {
        ids: IdPolicy::KeepPrefixed,
        ..snapshot_a()
    };
    let model = ModelCatalog::bundled().lookup("gpt-test");
    assert!(model.is_fallback());
    let req = build(&prompt, &model, &openai(), Dialect::Auto, &rules);

    let expected = r#"{"model":"gpt-test","instructions":"Say hi","input":[{"type":"message","id":"msg_1","role":"user","content":[{"type":"input_text","text":"hi"}]}],"tools":[],"tool_choice":"auto","parallel_tool_calls":false,"reasoning":null,"store":false,"stream":true,"include":[]}"#;
    assert_eq!(
        String::from_utf8(req.body_json.clone()).expect("utf-8"),
        expected
    );
    assert_eq!(req.wire_body(), expected.as_bytes());
    assert_eq!(req.compressed_body, None);
    assert_eq!(req.url, "https://api.openai.com/v1/responses");
    let mut expected_headers = vec![openai_version("0.0.0")];
    expected_headers.extend(api_key_tail("0.0.0"));
    assert_json_exact(&req.headers, &Value::Array(expected_headers));

    // Plain snapshot-A rules (A core, `item_ids` off, store false) clear the id; nothing else changes.
    let stripped = build(&prompt, &model, &openai(), Dialect::Auto, &snapshot_a());
    assert_eq!(
        String::from_utf8(stripped.body_json.clone()).expect("utf-8"),
        expected.replace(r#""id":"msg_1","#, "")
    );
}

/// Vector 1's prompt under codex-0.169 (§18): `stream` second, no `instructions` key — the base
/// instructions travel as a developer message with a deterministic `msg_` id (uuid v5 of the
/// text under the thread namespace; no thread id here, so the empty one) — reasoning always
/// sent (the fallback's summary `auto`), include always set, and the prefixed `msg_1` kept.
#[test]
fn vector_01_counterpart_codex_0_169() {
    let mut prompt = Prompt::new("gpt-test");
    prompt.base_instructions = "Say hi".to_string();
    prompt.input = vec![item(json!({
        "type":"message","id":"msg_1","role":"user",
        "content":[{"type":"input_text","text":"hi"}]
    }))];
    let model = ModelCatalog::bundled().lookup("gpt-test");
    let req = build(
        &prompt,
        &model,
        &openai(),
        Dialect::Auto,
        &CompileRules::codex_0_169(),
    );
    let instructions_id = synthesized_id("msg", "", b"Say hi");
    assert_json_exact(
        &req.body,
        &json!({
            "model": "gpt-test",
            "stream": true,
            "input": [
                {"type":"message","id":instructions_id,"role":"developer","content":[{"type":"input_text","text":"Say hi"}]},
                {"type":"message","id":"msg_1","role":"user","content":[{"type":"input_text","text":"hi"}]}
            ],
            "tools": [],
            "tool_choice": "auto",
            "parallel_tool_calls": true,
            "reasoning": {"summary":"auto"},
            "store": false,
            "include": ["reasoning.encrypted_content"]
        }),
    );
    // Codex CLI 0.169's header style (no thread id: no window, turn metadata or id headers).
    assert_json_exact(
        &req.headers,
        &json!([
            {"name":"version","value":"0.169.0"},
            {"name":"x-codex-beta-features","value":"remote_compaction_v2"},
            {"name":"accept","value":"text/event-stream"},
            {"name":"content-type","value":"application/json"},
            {"name":"authorization","value":"Bearer <redacted>","secret_env":"OPENAI_API_KEY"},
            {"name":"originator","value":"codex_exec"},
            {"name":"user-agent","value":"codex_exec/0.169.0 (Debian 12.0.0; x86_64) xterm (codex_exec; 0.169.0)"}
        ]),
    );
}

// ---------------------------------------------------------------------------------------------
// Vector 4: direct_serialization_preserves_websocket_request_payload
// ---------------------------------------------------------------------------------------------

/// Vector 4 is a codex-api `response.create` struct with `reasoning: None` but a non-empty
/// `include`, an unprefixed id `msg-1` with `store:false`, `service_tier` and
/// `previous_response_id`. Reproduced through `compile()` as follows:
/// - `gpt-test` is unknown: fallback metadata (reasoning `null`, no `text`), with `priority`
///   added to its service tiers so the tier is sent;
/// - snapshot-A rules with `include` always on (B's policy) give `["reasoning.encrypted_content"]`
///   next to `reasoning:null`;
/// - the only core path that keeps an unprefixed id is A's `store:true` (Azure), so the prompt is
///   compiled for an Azure endpoint and `store:false` pinned back with `body_overrides`
///   (replaced in place, order unchanged);
/// - the tool is the struct's raw JSON value, which `ToolSpec::Other` passes through verbatim.
///
/// `generate:false` (prewarm) cannot be expressed: a compiled request is a turn request, whose
/// `generate` is None and therefore omitted. The frame is asserted with every other field of
/// the vector, in the vector's order.
#[test]
fn vector_04_websocket_frame_payload_and_key_order() {
    let traceparent = "00-0123456789abcdef0123456789abcdef-0123456789abcdef-01";
    let mut prompt = Prompt::new("gpt-test");
    prompt.base_instructions = "Use the available tools.".to_string();
    prompt.previous_response_id = Some("resp-1".to_string());
    prompt.input = vec![item(json!({
        "type":"message","id":"msg-1","role":"user",
        "content":[{"type":"input_text","text":"hello"}]
    }))];
    prompt.tools = vec![ToolSpec::Other(map(json!({
        "type":"function","name":"lookup","parameters":{"type":"object"}
    })))];
    prompt.parallel_tool_calls = Some(true);
    prompt.service_tier = Some("priority".to_string());
    prompt.prompt_cache_key = Some("cache-key".to_string());
    prompt.client_metadata = Some(map(json!({"traceparent": traceparent})));
    prompt.body_overrides = map(json!({"store": false}));
    let model = ModelInfo {
        service_tiers: vec!["priority".to_string()],
        ..ModelInfo::fallback("gpt-test")
    };
    let rules = CompileRules {
        include: IncludePolicy::Always,
        ..snapshot_a()
    };
    let mut azure = Provider::preset(ProviderKind::Azure);
    azure.base_url = "http://127.0.0.1:4010/openai".to_string();
    let req = build(&prompt, &model, &azure, Dialect::Standard, &rules);

    let expected_frame = json!({
        "type": "response.create",
        "model": "gpt-test",
        "instructions": "Use the available tools.",
        "previous_response_id": "resp-1",
        "input": [{"type":"message","id":"msg-1","role":"user","content":[{"type":"input_text","text":"hello"}]}],
        "tools": [{"type":"function","name":"lookup","parameters":{"type":"object"}}],
        "tool_choice": "auto",
        "parallel_tool_calls": true,
        "reasoning": null,
        "store": false,
        "stream": true,
        "include": ["reasoning.encrypted_content"],
        "service_tier": "priority",
        "prompt_cache_key": "cache-key",
        "client_metadata": {"traceparent": traceparent}
    });
    let frame = req.ws_frame();
    assert_json_exact(&frame, &expected_frame);
    assert_eq!(
        frame.keys().map(String::as_str).collect::<Vec<_>>(),
        [
            "type",
            "model",
            "instructions",
            "previous_response_id",
            "input",
            "tools",
            "tool_choice",
            "parallel_tool_calls",
            "reasoning",
            "store",
            "stream",
            "include",
            "service_tier",
            "prompt_cache_key",
            "client_metadata",
        ]
    );

    // The text frame parses back to the same value (the [T] assertion).
    let text = serde_json::to_string(&frame).expect("frame serializes");
    let reparsed: Value = serde_json::from_str(&text).expect("frame parses");
    assert_json_exact(&reparsed, &expected_frame);

    // The HTTP body never carries `type`, `previous_response_id` or `generate` (§2).
    let mut expected_body = map(expected_frame);
    expected_body.shift_remove("type");
    expected_body.shift_remove("previous_response_id");
    assert_json_exact(&req.body, &Value::Object(expected_body));
}

/// Vector 4's key order with every optional frame key present that a compiled request can
/// carry, plus the Lite `client_metadata` key that replaces the HTTP header on WebSocket (§3, §6).
#[test]
fn vector_04_lite_frame_adds_ws_header_metadata_key() {
    let mut prompt = Prompt::new("gpt-5.6-sol");
    prompt.previous_response_id = Some("resp-7".to_string());
    prompt.input = vec![user_text("hello")];
    prompt.prompt_cache_key = Some("thread-1".to_string());
    prompt.client_metadata = Some(map(json!({"session_id": "thread-1"})));
    let req = build(
        &prompt,
        &lookup("gpt-5.6-sol"),
        &openai(),
        Dialect::Auto,
        &snapshot_a(),
    );
    assert_json_exact(
        &req.ws_frame(),
        &json!({
            "type": "response.create",
            "model": "gpt-5.6-sol",
            "previous_response_id": "resp-7",
            "input": [
                {"type":"additional_tools","role":"developer","tools":[]},
                {"type":"message","role":"user","content":[{"type":"input_text","text":"hello"}]}
            ],
            "tool_choice": "auto",
            "parallel_tool_calls": false,
            "reasoning": {"effort":"low","context":"all_turns"},
            "store": false,
            "stream": true,
            "include": ["reasoning.encrypted_content"],
            "prompt_cache_key": "thread-1",
            "text": {"verbosity":"low"},
            "client_metadata": {
                "session_id": "thread-1",
                "ws_request_header_x_openai_internal_codex_responses_lite": "true"
            }
        }),
    );
}

// ---------------------------------------------------------------------------------------------
// Vectors 14–21: items
// ---------------------------------------------------------------------------------------------

#[test]
fn vector_14_tool_search_call_key_order() {
    assert_eq!(
        item_roundtrip(json!({
            "type":"tool_search_call","call_id":"search-1","execution":"client",
            "arguments":{"query":"calendar create","limit":1}
        })),
        r#"{"type":"tool_search_call","call_id":"search-1","execution":"client","arguments":{"query":"calendar create","limit":1}}"#
    );
}

#[test]
fn vector_15_tool_search_items_allow_null_call_id() {
    assert_eq!(
        item_roundtrip(json!({
            "type":"tool_search_call","call_id":null,"execution":"server",
            "arguments":{"query":"calendar"}
        })),
        r#"{"type":"tool_search_call","call_id":null,"execution":"server","arguments":{"query":"calendar"}}"#
    );
    assert_eq!(
        item_roundtrip(json!({
            "type":"tool_search_output","call_id":null,"status":"completed",
            "execution":"server","tools":[]
        })),
        r#"{"type":"tool_search_output","call_id":null,"status":"completed","execution":"server","tools":[]}"#
    );
    // An absent call_id is also emitted as null.
    assert_eq!(
        item_roundtrip(json!({
            "type":"tool_search_output","status":"completed","execution":"client","tools":[]
        })),
        r#"{"type":"tool_search_output","call_id":null,"status":"completed","execution":"client","tools":[]}"#
    );
}

#[test]
fn vector_16_compaction_trigger_alias_and_other() {
    assert_eq!(
        serde_json::to_string(&ResponseItem::CompactionTrigger).expect("json"),
        r#"{"type":"compaction_trigger"}"#
    );
    assert_eq!(
        item(json!({"type":"compaction_trigger"})),
        ResponseItem::CompactionTrigger
    );

    let alias = item(json!({"type":"compaction_summary","encrypted_content":"abc"}));
    assert_eq!(
        alias,
        item(json!({"type":"compaction","encrypted_content":"abc"}))
    );
    assert_eq!(
        serde_json::to_string(&alias).expect("json"),
        r#"{"type":"compaction","encrypted_content":"abc"}"#
    );

    assert_eq!(
        item_roundtrip(json!({"type":"context_compaction","encrypted_content":"abc"})),
        r#"{"type":"context_compaction","encrypted_content":"abc"}"#
    );

    let ghost = json!({"type":"ghost_snapshot","ghost_commit":{"id":"abc","parent":null}});
    let parsed = item(ghost.clone());
    assert_eq!(parsed, ResponseItem::Other(map(ghost.clone())));
    assert_json_exact(&parsed, &ghost);
}

#[test]
fn vector_17_encrypted_function_output_is_an_array() {
    assert_eq!(
        item_roundtrip(json!({
            "type":"function_call_output","call_id":"call1",
            "output":[{"type":"encrypted_content","encrypted_content":"enc_opaque"}]
        })),
        r#"{"type":"function_call_output","call_id":"call1","output":[{"type":"encrypted_content","encrypted_content":"enc_opaque"}]}"#
    );
}

#[test]
fn vector_18_web_search_call_actions_roundtrip() {
    let cases = [
        json!({"type":"web_search_call","status":"completed","action":{"type":"search","query":"weather seattle","queries":["weather seattle","seattle forecast"]}}),
        json!({"type":"web_search_call","status":"completed","action":{"type":"open_page","url":"https://example.com/"}}),
        json!({"type":"web_search_call","status":"completed","action":{"type":"find_in_page","url":"https://example.com/","pattern":"rain"}}),
        json!({"type":"web_search_call","status":"in_progress","id":"ws_partial"}),
    ];
    for case in cases {
        let parsed = item(case.clone());
        let reserialized = serde_json::to_value(&parsed).expect("item serializes");
        // Equal as JSON values (the [T] assertion); the wire order puts `id` before `status`.
        assert_eq!(reserialized, case);
    }
    assert_eq!(
        item_roundtrip(json!({"type":"web_search_call","status":"in_progress","id":"ws_partial"})),
        r#"{"type":"web_search_call","id":"ws_partial","status":"in_progress"}"#
    );
    assert_eq!(
        item_roundtrip(
            json!({"type":"web_search_call","status":"completed","action":{"type":"search","query":"weather seattle","queries":["a","b"]}})
        ),
        r#"{"type":"web_search_call","status":"completed","action":{"type":"search","query":"weather seattle","queries":["a","b"]}}"#
    );
}

#[test]
fn vector_19_reasoning_serialisation() {
    assert_eq!(
        item_roundtrip(json!({
            "type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"S"}]
        })),
        r#"{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"S"}],"content":null,"encrypted_content":null}"#
    );
    assert_eq!(
        item_roundtrip(json!({
            "type":"reasoning","summary":[],"content":[{"type":"text","text":"t"}],
            "encrypted_content":"ENC"
        })),
        r#"{"type":"reasoning","summary":[],"encrypted_content":"ENC"}"#
    );
    assert_eq!(
        item_roundtrip(json!({
            "type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":"t"}]
        })),
        r#"{"type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":"t"}],"encrypted_content":null}"#
    );
}

#[test]
fn vector_20_local_shell_call_nulls() {
    assert_eq!(
        item_roundtrip(json!({
            "type":"local_shell_call","status":"completed",
            "action":{"type":"exec","command":["ls"]}
        })),
        r#"{"type":"local_shell_call","call_id":null,"status":"completed","action":{"type":"exec","command":["ls"],"timeout_ms":null,"working_directory":null,"env":null,"user":null}}"#
    );
}

#[test]
fn vector_21_function_call_and_outputs() {
    assert_eq!(
        item_roundtrip(
            json!({"type":"function_call","name":"shell","arguments":"{}","call_id":"c1"})
        ),
        r#"{"type":"function_call","name":"shell","arguments":"{}","call_id":"c1"}"#
    );
    assert_eq!(
        item_roundtrip(json!({"type":"function_call_output","call_id":"call1","output":"ok"})),
        r#"{"type":"function_call_output","call_id":"call1","output":"ok"}"#
    );
    assert_eq!(
        item_roundtrip(json!({
            "type":"function_call_output","call_id":"call1",
            "output":[{"type":"input_image","image_url":"data:x","detail":"high"}]
        })),
        r#"{"type":"function_call_output","call_id":"call1","output":[{"type":"input_image","image_url":"data:x","detail":"high"}]}"#
    );
}

/// Vectors 14–21 as request input: the compiler keeps every null-vs-omitted rule (snapshot-A rules,
/// OpenAI provider, store false, so only the ids go).
#[test]
fn vectors_14_to_21_items_survive_compilation() {
    let mut prompt = Prompt::new("gpt-5.4");
    prompt.input = vec![
        item(
            json!({"type":"tool_search_call","call_id":"search-1","execution":"client","arguments":{"query":"calendar create","limit":1}}),
        ),
        item(
            json!({"type":"tool_search_output","call_id":null,"status":"completed","execution":"server","tools":[]}),
        ),
        item(json!({"type":"compaction_summary","encrypted_content":"abc"})),
        item(
            json!({"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"S"}]}),
        ),
        item(
            json!({"type":"local_shell_call","status":"completed","action":{"type":"exec","command":["ls"]}}),
        ),
        item(json!({"type":"function_call","name":"shell","arguments":"{}","call_id":"c1"})),
        item(
            json!({"type":"function_call_output","call_id":"c1","output":[{"type":"encrypted_content","encrypted_content":"enc_opaque"}]}),
        ),
        item(json!({"type":"web_search_call","status":"in_progress","id":"ws_partial"})),
        ResponseItem::CompactionTrigger,
    ];
    let req = build(
        &prompt,
        &lookup("gpt-5.4"),
        &openai(),
        Dialect::Auto,
        &snapshot_a(),
    );
    assert_json_exact(
        &req.body,
        &json!({
            "model": "gpt-5.4",
            "input": [
                {"type":"tool_search_call","call_id":"search-1","execution":"client","arguments":{"query":"calendar create","limit":1}},
                {"type":"tool_search_output","call_id":null,"status":"completed","execution":"server","tools":[]},
                {"type":"compaction","encrypted_content":"abc"},
                {"type":"reasoning","summary":[{"type":"summary_text","text":"S"}],"content":null,"encrypted_content":null},
                {"type":"local_shell_call","call_id":null,"status":"completed","action":{"type":"exec","command":["ls"],"timeout_ms":null,"working_directory":null,"env":null,"user":null}},
                {"type":"function_call","name":"shell","arguments":"{}","call_id":"c1"},
                {"type":"function_call_output","call_id":"c1","output":[{"type":"encrypted_content","encrypted_content":"enc_opaque"}]},
                {"type":"web_search_call","status":"in_progress"},
                {"type":"compaction_trigger"}
            ],
            "tools": [],
            "tool_choice": "auto",
            "parallel_tool_calls": true,
            "reasoning": {"effort":"medium"},
            "store": false,
            "stream": true,
            "include": ["reasoning.encrypted_content"],
            "text": {"verbosity":"low"}
        }),
    );
}

// ---------------------------------------------------------------------------------------------
// Vectors 22–25: Responses Lite
// ---------------------------------------------------------------------------------------------

fn lookup_tool() -> Value {
    json!({
        "type":"function","name":"lookup","description":"Look a thing up","strict":false,
        "parameters":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}
    })
}

/// Vector 22 under snapshot A: no ids, the prefix exactly as the test asserts.
#[test]
fn vector_22_lite_prefix_items_snapshot_a() {
    let mut prompt = Prompt::new("gpt-5.6-sol");
    prompt.base_instructions = "test instructions".to_string();
    prompt.tools = vec![tool(lookup_tool())];
    prompt.input = vec![user_text("hello")];
    prompt.prompt_cache_key = Some("thread-1".to_string());
    let req = build(
        &prompt,
        &lookup("gpt-5.6-sol"),
        &openai(),
        Dialect::Auto,
        &snapshot_a(),
    );
    assert_json_exact(
        &req.body,
        &json!({
            "model": "gpt-5.6-sol",
            "input": [
                {"type":"additional_tools","role":"developer","tools":[lookup_tool()]},
                {"type":"message","role":"developer","content":[{"type":"input_text","text":"test instructions"}]},
                {"type":"message","role":"user","content":[{"type":"input_text","text":"hello"}]}
            ],
            "tool_choice": "auto",
            "parallel_tool_calls": false,
            "reasoning": {"effort":"low","context":"all_turns"},
            "store": false,
            "stream": true,
            "include": ["reasoning.encrypted_content"],
            "prompt_cache_key": "thread-1",
            "text": {"verbosity":"low"}
        }),
    );
}

/// Vector 22 under codex-0.169 (C / §18): `stream` second, the plain tools folded into the
/// `functions` namespace, and both prefix items carry deterministic `at_`/`msg_` ids.
#[test]
fn vector_22_lite_prefix_items_codex_0_169() {
    let mut prompt = Prompt::new("gpt-6-sol");
    prompt.base_instructions = "test instructions".to_string();
    prompt.tools = vec![tool(lookup_tool())];
    prompt.input = vec![user_text("hello")];
    prompt.thread_id = Some("thread-1".to_string());
    prompt.prompt_cache_key = Some("thread-1".to_string());
    let req = build(
        &prompt,
        &lookup("gpt-6-sol"),
        &openai(),
        Dialect::Auto,
        &CompileRules::codex_0_169(),
    );
    let lite_tools = json!([{
        "type":"namespace","name":"functions","description":"","tools":[lookup_tool()]
    }]);
    let at_id = synthesized_id(
        "at",
        "thread-1",
        serde_json::to_string(&lite_tools).expect("json").as_bytes(),
    );
    let msg_id = synthesized_id("msg", "thread-1", b"test instructions");
    assert_json_exact(
        &req.body,
        &json!({
            "model": "gpt-6-sol",
            "stream": true,
            "input": [
                {"type":"additional_tools","id":at_id,"role":"developer","tools":lite_tools},
                {"type":"message","id":msg_id,"role":"developer","content":[{"type":"input_text","text":"test instructions"}]},
                {"type":"message","role":"user","content":[{"type":"input_text","text":"hello"}]}
            ],
            "tool_choice": "auto",
            "parallel_tool_calls": false,
            "reasoning": {"effort":"medium","context":"all_turns"},
            "store": false,
            "include": ["reasoning.encrypted_content"],
            "prompt_cache_key": "thread-1",
            "text": {"verbosity":"low"}
        }),
    );
}

/// Vector 23: a Lite model with `supports_parallel_tool_calls` still sends `false`, and
/// `reasoning.context` is `all_turns` even when the prompt asks for parallel calls.
#[test]
fn vector_23_lite_all_turns_and_no_parallel_tool_calls() {
    let model = lookup("gpt-5.6-terra");
    assert!(model.supports_parallel_tool_calls && model.use_responses_lite);
    let mut prompt = Prompt::new("gpt-5.6-terra");
    prompt.parallel_tool_calls = Some(true);
    prompt.reasoning.summary = Setting::Value("auto".to_string());
    prompt.input = vec![user_text("hi")];
    let req = build(&prompt, &model, &openai(), Dialect::Auto, &snapshot_a());
    assert_json_exact(
        &req.body,
        &json!({
            "model": "gpt-5.6-terra",
            "input": [
                {"type":"additional_tools","role":"developer","tools":[]},
                {"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}
            ],
            "tool_choice": "auto",
            "parallel_tool_calls": false,
            "reasoning": {"effort":"medium","summary":"auto","context":"all_turns"},
            "store": false,
            "stream": true,
            "include": ["reasoning.encrypted_content"],
            "text": {"verbosity":"low"}
        }),
    );

    // The same prompt as standard: parallel calls on, no `context`.
    let standard = build(&prompt, &model, &openai(), Dialect::Standard, &snapshot_a());
    assert_json_exact(
        &standard.body,
        &json!({
            "model": "gpt-5.6-terra",
            "input": [
                {"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}
            ],
            "tools": [],
            "tool_choice": "auto",
            "parallel_tool_calls": true,
            "reasoning": {"effort":"medium","summary":"auto"},
            "store": false,
            "stream": true,
            "include": ["reasoning.encrypted_content"],
            "text": {"verbosity":"low"}
        }),
    );
}

fn image_detail_items() -> Vec<ResponseItem> {
    vec![
        item(json!({"type":"message","role":"user","content":[
            {"type":"input_text","text":"look"},
            {"type":"input_image","image_url":"https://example.com/image.png","detail":"original"}
        ]})),
        item(
            json!({"type":"function_call_output","call_id":"call-1","output":[
                {"type":"input_image","image_url":"data:image/png;base64,AAA","detail":"high"}
            ]}),
        ),
        item(
            json!({"type":"custom_tool_call_output","call_id":"call-2","output":[
                {"type":"input_image","image_url":"data:image/png;base64,BBB","detail":"auto"}
            ]}),
        ),
    ]
}

/// Vector 24: Lite strips `detail` from every request-copy image; the prompt is unchanged; the
/// standard copy equals the input.
#[test]
fn vector_24_lite_strips_image_detail_on_the_copy_only() {
    let mut prompt = Prompt::new("gpt-5.6-sol");
    prompt.input = image_detail_items();
    let before = prompt.clone();
    let model = lookup("gpt-5.6-sol");

    let lite = build(&prompt, &model, &openai(), Dialect::Lite, &snapshot_a());
    assert_eq!(prompt, before);
    assert_json_exact(
        &lite.body["input"],
        &json!([
            {"type":"additional_tools","role":"developer","tools":[]},
            {"type":"message","role":"user","content":[
                {"type":"input_text","text":"look"},
                {"type":"input_image","image_url":"https://example.com/image.png"}
            ]},
            {"type":"function_call_output","call_id":"call-1","output":[
                {"type":"input_image","image_url":"data:image/png;base64,AAA"}
            ]},
            {"type":"custom_tool_call_output","call_id":"call-2","output":[
                {"type":"input_image","image_url":"data:image/png;base64,BBB"}
            ]}
        ]),
    );

    let standard = build(&prompt, &model, &openai(), Dialect::Standard, &snapshot_a());
    let original: Vec<Value> = image_detail_items()
        .iter()
        .map(|i| serde_json::to_value(i).expect("item serializes"))
        .collect();
    assert_json_exact(&standard.body["input"], &Value::Array(original));
    assert_json_exact(
        &standard.body["input"],
        &json!([
            {"type":"message","role":"user","content":[
                {"type":"input_text","text":"look"},
                {"type":"input_image","image_url":"https://example.com/image.png","detail":"original"}
            ]},
            {"type":"function_call_output","call_id":"call-1","output":[
                {"type":"input_image","image_url":"data:image/png;base64,AAA","detail":"high"}
            ]},
            {"type":"custom_tool_call_output","call_id":"call-2","output":[
                {"type":"input_image","image_url":"data:image/png;base64,BBB","detail":"auto"}
            ]}
        ]),
    );
}

/// Vector 25: hosted tools are not offered to Lite models. promptwire cannot invent Codex's
/// standalone replacements (namespace `web` tool `run`, namespace `image_gen` tool `imagegen`,
/// installed by extensions), so it drops the hosted tools with a note. The Lite header is sent
/// for Lite only.
#[test]
fn vector_25_lite_hosted_tools_and_header() {
    let web_search = json!({"type":"web_search","external_web_access":true});
    let image_generation = json!({"type":"image_generation","output_format":"png"});
    let mut prompt = Prompt::new("gpt-5.6-sol");
    prompt.tools = vec![
        tool(web_search.clone()),
        tool(image_generation.clone()),
        tool(lookup_tool()),
    ];
    prompt.input = vec![user_text("draw the weather")];
    prompt.thread_id = Some("thread-1".to_string());
    let model = lookup("gpt-5.6-sol");

    let lite = build(&prompt, &model, &openai(), Dialect::Auto, &snapshot_a());
    assert_json_exact(
        &lite.body,
        &json!({
            "model": "gpt-5.6-sol",
            "input": [
                {"type":"additional_tools","role":"developer","tools":[lookup_tool()]},
                {"type":"message","role":"user","content":[{"type":"input_text","text":"draw the weather"}]}
            ],
            "tool_choice": "auto",
            "parallel_tool_calls": false,
            "reasoning": {"effort":"low","context":"all_turns"},
            "store": false,
            "stream": true,
            "include": ["reasoning.encrypted_content"],
            "prompt_cache_key": "thread-1",
            "text": {"verbosity":"low"}
        }),
    );
    let tool_notes: Vec<(String, String)> = lite
        .notes
        .iter()
        .filter(|n| n.path.starts_with("tools"))
        .map(|n| (n.path.clone(), n.message.clone()))
        .collect();
    assert_eq!(
        tool_notes,
        [
            (
                "tools[0]".to_string(),
                "web_search left out: hosted tools are not offered to Lite models".to_string()
            ),
            (
                "tools[1]".to_string(),
                "image_generation left out: hosted tools are not offered to Lite models"
                    .to_string()
            ),
            (
                "tools".to_string(),
                "left out: a Lite request has no top-level `tools`; they travel in input[0]"
                    .to_string()
            ),
        ]
    );
    let thread_headers = [
        json!({"name":"x-client-request-id","value":"thread-1"}),
        json!({"name":"session-id","value":"thread-1"}),
        json!({"name":"thread-id","value":"thread-1"}),
    ];
    let mut expected_lite = vec![
        openai_version("0.0.0"),
        json!({"name":"x-openai-internal-codex-responses-lite","value":"true"}),
    ];
    expected_lite.extend(thread_headers.iter().cloned());
    expected_lite.extend(api_key_tail("0.0.0"));
    assert_json_exact(&headers(&lite), &Value::Array(expected_lite));

    let standard = build(&prompt, &model, &openai(), Dialect::Standard, &snapshot_a());
    assert_json_exact(
        &standard.body,
        &json!({
            "model": "gpt-5.6-sol",
            "input": [
                {"type":"message","role":"user","content":[{"type":"input_text","text":"draw the weather"}]}
            ],
            "tools": [web_search, image_generation, lookup_tool()],
            "tool_choice": "auto",
            "parallel_tool_calls": true,
            "reasoning": {"effort":"low"},
            "store": false,
            "stream": true,
            "include": ["reasoning.encrypted_content"],
            "prompt_cache_key": "thread-1",
            "text": {"verbosity":"low"}
        }),
    );
    let mut expected_standard = vec![openai_version("0.0.0")];
    expected_standard.extend(thread_headers.iter().cloned());
    expected_standard.extend(api_key_tail("0.0.0"));
    assert_json_exact(&headers(&standard), &Value::Array(expected_standard));
}

// Vector 26 (`responses_lite_compact_request_uses_lite_transport_contract`) concerns the
// `/responses/compact` request, which promptwire does not compile: not covered here.

// ---------------------------------------------------------------------------------------------
// Vectors 27–28: headers
// ---------------------------------------------------------------------------------------------

/// Vector 27 (API-key auth): path `/v1/responses`, `session-id`/`thread-id` from the thread,
/// the process originator, a redacted bearer token, `prompt_cache_key` = thread id (A), and the
/// turn metadata both as header and inside `client_metadata`, its ids agreeing.
#[test]
fn vector_27_session_thread_and_turn_metadata_headers() {
    let turn_metadata = r#"{"installation_id":"inst-1","session_id":"thread-1","thread_id":"thread-1","turn_id":"turn-1","window_id":"thread-1:0","request_kind":"turn"}"#;
    let mut prompt = Prompt::new("gpt-5.4");
    prompt.input = vec![user_text("hello")];
    prompt.thread_id = Some("thread-1".to_string());
    prompt.prompt_cache_key = Some("thread-1".to_string());
    prompt.headers = map(json!({
        "x-codex-window-id": "thread-1:0",
        "x-codex-turn-metadata": turn_metadata
    }));
    prompt.client_metadata = Some(map(json!({
        "x-codex-installation-id": "inst-1",
        "session_id": "thread-1",
        "thread_id": "thread-1",
        "turn_id": "turn-1",
        "x-codex-window-id": "thread-1:0",
        "x-codex-turn-metadata": turn_metadata
    })));
    let req = build(
        &prompt,
        &lookup("gpt-5.4"),
        &openai(),
        Dialect::Auto,
        &snapshot_a(),
    );
    assert_eq!(req.url, "https://api.openai.com/v1/responses");
    let mut expected = vec![
        openai_version("0.0.0"),
        json!({"name":"x-codex-window-id","value":"thread-1:0"}),
        json!({"name":"x-codex-turn-metadata","value":turn_metadata}),
        json!({"name":"x-client-request-id","value":"thread-1"}),
        json!({"name":"session-id","value":"thread-1"}),
        json!({"name":"thread-id","value":"thread-1"}),
    ];
    expected.extend(api_key_tail("0.0.0"));
    assert_json_exact(&headers(&req), &Value::Array(expected));
    assert_json_exact(
        &req.body,
        &json!({
            "model": "gpt-5.4",
            "input": [{"type":"message","role":"user","content":[{"type":"input_text","text":"hello"}]}],
            "tools": [],
            "tool_choice": "auto",
            "parallel_tool_calls": true,
            "reasoning": {"effort":"medium"},
            "store": false,
            "stream": true,
            "include": ["reasoning.encrypted_content"],
            "prompt_cache_key": "thread-1",
            "text": {"verbosity":"low"},
            "client_metadata": {
                "x-codex-installation-id": "inst-1",
                "session_id": "thread-1",
                "thread_id": "thread-1",
                "turn_id": "turn-1",
                "x-codex-window-id": "thread-1:0",
                "x-codex-turn-metadata": turn_metadata
            }
        }),
    );
    // The metadata string's ids match client_metadata (the [T] cross-checks).
    let meta: Value = serde_json::from_str(turn_metadata).expect("turn metadata is JSON");
    let client = &req.body["client_metadata"];
    assert_eq!(meta["turn_id"], client["turn_id"]);
    assert_eq!(meta["window_id"], client["x-codex-window-id"]);
    assert_eq!(meta["thread_id"], client["thread_id"]);
    assert_eq!(meta["installation_id"], client["x-codex-installation-id"]);
    // No compression for API-key auth.
    assert_eq!(req.compressed_body, None);
}

/// Vector 28 (ChatGPT auth): path `{base}/responses`, redacted bearer, the account id, stream
/// on, `include[0]` the encrypted reasoning. ChatGPT auth on the OpenAI provider also makes the
/// request zstd-compressed (§4), and the compressed bytes decode to the JSON body.
#[test]
fn vector_28_chatgpt_auth_request() {
    let provider = Provider {
        name: "OpenAI".to_string(),
        base_url: "http://127.0.0.1:4010/api/codex".to_string(),
        env_key: Some("OPENAI_API_KEY".to_string()),
        headers: Vec::new(),
        query_params: Vec::new(),
        env_headers: Vec::new(),
    };
    let mut prompt = Prompt::new("gpt-5.4");
    prompt.input = vec![user_text("hello")];
    prompt.compile.auth = AuthMode::Chatgpt;
    prompt.headers = map(json!({"chatgpt-account-id": "account_id"}));
    let req = build(
        &prompt,
        &lookup("gpt-5.4"),
        &provider,
        Dialect::Auto,
        &snapshot_a(),
    );
    assert_eq!(req.url, "http://127.0.0.1:4010/api/codex/responses");
    assert_json_exact(
        &headers(&req),
        &json!([
            {"name":"version","value":"0.0.0"},
            {"name":"chatgpt-account-id","value":"account_id"},
            {"name":"accept","value":"text/event-stream"},
            {"name":"content-type","value":"application/json"},
            {"name":"content-encoding","value":"zstd"},
            {"name":"authorization","value":"Bearer <redacted>","secret_env":"OPENAI_API_KEY"},
            {"name":"originator","value":"codex_cli_rs"},
            {"name":"user-agent","value":"codex_cli_rs/0.0.0"}
        ]),
    );
    let expected_body = json!({
        "model": "gpt-5.4",
        "input": [{"type":"message","role":"user","content":[{"type":"input_text","text":"hello"}]}],
        "tools": [],
        "tool_choice": "auto",
        "parallel_tool_calls": true,
        "reasoning": {"effort":"medium"},
        "store": false,
        "stream": true,
        "include": ["reasoning.encrypted_content"],
        "text": {"verbosity":"low"}
    });
    assert_json_exact(&req.body, &expected_body);
    let compressed = req.compressed_body.as_deref().expect("zstd applies");
    assert_eq!(req.wire_body(), compressed);
    let decoded = zstd::decode_all(compressed).expect("valid zstd");
    assert_eq!(decoded, req.body_json);
    assert_eq!(
        decoded,
        serde_json::to_vec(&expected_body).expect("json"),
        "the compressed body is the exact JSON bytes"
    );
}

/// §4: zstd needs all three conditions — the feature, ChatGPT-style auth, and the OpenAI
/// provider. ChatGPT auth to Azure or a compatible server, or with the feature off, sends the
/// plain JSON body and no `content-encoding`.
#[test]
fn zstd_needs_chatgpt_auth_openai_and_the_feature() {
    let mut prompt = Prompt::new("gpt-5.4");
    prompt.input = vec![user_text("hello")];
    prompt.compile.auth = AuthMode::Chatgpt;
    let model = lookup("gpt-5.4");
    let no_feature = CompileRules {
        request_compression: false,
        ..snapshot_a()
    };
    let cases = [
        (Provider::preset(ProviderKind::Azure), snapshot_a()),
        (test_responses_provider(), snapshot_a()),
        (openai(), no_feature),
    ];
    for (provider, rules) in cases {
        let req = build(&prompt, &model, &provider, Dialect::Auto, &rules);
        assert_eq!(req.compressed_body, None);
        assert_eq!(req.wire_body(), req.body_json.as_slice());
        let names: Vec<&str> = req.headers.iter().map(|h| h.name.as_str()).collect();
        assert!(!names.contains(&"content-encoding"), "{names:?}");
    }
}

/// §4: the built-in OpenAI provider adds the static header `version: <crate version>` first.
#[test]

fn builtin_openai_provider_sends_version_header() {
    let mut prompt = Prompt::new("gpt-5.4");
    prompt.input = vec![user_text("hello")];
    let req = build(
        &prompt,
        &lookup("gpt-5.4"),
        &openai(),
        Dialect::Auto,
        &snapshot_a(),
    );
    let mut expected = vec![openai_version("0.0.0")];
    expected.extend(api_key_tail("0.0.0"));
    assert_json_exact(&headers(&req), &Value::Array(expected));
}

// ---------------------------------------------------------------------------------------------
// Vector 29: Azure store and ids
// ---------------------------------------------------------------------------------------------

fn azure_history() -> Vec<ResponseItem> {
    vec![
        item(
            json!({"type":"reasoning","id":"reasoning-id","summary":[{"type":"summary_text","text":"thinking"}],"encrypted_content":"encrypted"}),
        ),
        item(
            json!({"type":"message","id":"message-id","role":"assistant","content":[{"type":"output_text","text":"hi"}]}),
        ),
        item(
            json!({"type":"web_search_call","id":"web-search-id","status":"completed","action":{"type":"search","query":"weather"}}),
        ),
        item(
            json!({"type":"function_call","id":"function-id","name":"do_thing","arguments":"{}","call_id":"function-call-id"}),
        ),
        item(json!({"type":"function_call_output","call_id":"function-call-id","output":"ok"})),
        item(
            json!({"type":"local_shell_call","id":"local-shell-id","call_id":"local-shell-call-id","status":"completed","action":{"type":"exec","command":["echo","hi"]}}),
        ),
        item(
            json!({"type":"custom_tool_call","id":"custom-tool-id","call_id":"custom-tool-call-id","name":"custom_tool","input":"{}"}),
        ),
        item(
            json!({"type":"custom_tool_call_output","call_id":"custom-tool-call-id","output":"ok"}),
        ),
    ]
}

fn azure_provider() -> Provider {
    Provider {
        name: "azure".to_string(),
        base_url: "http://127.0.0.1:4010/openai".to_string(),
        env_key: Some("AZURE_OPENAI_API_KEY".to_string()),
        headers: Vec::new(),
        query_params: Vec::new(),
        env_headers: Vec::new(),
    }
}

/// Vector 29 under snapshot A: Azure ⇒ `store:true`, and every id and call id is kept.
#[test]
fn vector_29_azure_store_keeps_ids_snapshot_a() {
    let mut prompt = Prompt::new("gpt-5.4");
    prompt.input = azure_history();
    let provider = azure_provider();
    assert!(provider.is_azure_responses_endpoint());
    let req = build(
        &prompt,
        &lookup("gpt-5.4"),
        &provider,
        Dialect::Auto,
        &snapshot_a(),
    );
    assert_eq!(req.url, "http://127.0.0.1:4010/openai/responses");
    assert_eq!(req.provider_kind, ProviderKind::Azure);
    assert_json_exact(
        &req.body,
        &json!({
            "model": "gpt-5.4",
            "input": [
                {"type":"reasoning","id":"reasoning-id","summary":[{"type":"summary_text","text":"thinking"}],"content":null,"encrypted_content":"encrypted"},
                {"type":"message","id":"message-id","role":"assistant","content":[{"type":"output_text","text":"hi"}]},
                {"type":"web_search_call","id":"web-search-id","status":"completed","action":{"type":"search","query":"weather"}},
                {"type":"function_call","id":"function-id","name":"do_thing","arguments":"{}","call_id":"function-call-id"},
                {"type":"function_call_output","call_id":"function-call-id","output":"ok"},
                {"type":"local_shell_call","id":"local-shell-id","call_id":"local-shell-call-id","status":"completed","action":{"type":"exec","command":["echo","hi"],"timeout_ms":null,"working_directory":null,"env":null,"user":null}},
                {"type":"custom_tool_call","id":"custom-tool-id","call_id":"custom-tool-call-id","name":"custom_tool","input":"{}"},
                {"type":"custom_tool_call_output","call_id":"custom-tool-call-id","output":"ok"}
            ],
            "tools": [],
            "tool_choice": "auto",
            "parallel_tool_calls": true,
            "reasoning": {"effort":"medium"},
            "store": true,
            "stream": true,
            "include": ["reasoning.encrypted_content"],
            "text": {"verbosity":"low"}
        }),
    );
    let mut expected_headers = api_key_tail("0.0.0");
    expected_headers[2] = json!({"name":"authorization","value":"Bearer <redacted>","secret_env":"AZURE_OPENAI_API_KEY"});
    assert_json_exact(&headers(&req), &Value::Array(expected_headers));
}

/// Vector 29 under codex-0.169 (C): `store` is always false and only prefixed ids survive — none
/// of the golden test's ids is prefixed, so all go; call ids stay.
#[test]
fn vector_29_azure_codex_0_169_store_false_and_prefixed_ids_only() {
    let mut prompt = Prompt::new("gpt-5.4");
    prompt.input = azure_history();
    prompt.input.push(item(json!({
        "type":"message","id":"msg_kept","role":"user","content":[{"type":"input_text","text":"next"}]
    })));
    let req = build(
        &prompt,
        &lookup("gpt-5.4"),
        &azure_provider(),
        Dialect::Auto,
        &CompileRules::codex_0_169(),
    );
    assert_json_exact(
        &req.body,
        &json!({
            "model": "gpt-5.4",
            "stream": true,
            "input": [
                {"type":"reasoning","summary":[{"type":"summary_text","text":"thinking"}],"content":null,"encrypted_content":"encrypted"},
                {"type":"message","role":"assistant","content":[{"type":"output_text","text":"hi"}]},
                {"type":"web_search_call","status":"completed","action":{"type":"search","query":"weather"}},
                {"type":"function_call","name":"do_thing","arguments":"{}","call_id":"function-call-id"},
                {"type":"function_call_output","call_id":"function-call-id","output":"ok"},
                {"type":"local_shell_call","call_id":"local-shell-call-id","status":"completed","action":{"type":"exec","command":["echo","hi"],"timeout_ms":null,"working_directory":null,"env":null,"user":null}},
                {"type":"custom_tool_call","call_id":"custom-tool-call-id","name":"custom_tool","input":"{}"},
                {"type":"custom_tool_call_output","call_id":"custom-tool-call-id","output":"ok"},
                {"type":"message","id":"msg_kept","role":"user","content":[{"type":"input_text","text":"next"}]}
            ],
            "tools": [],
            "tool_choice": "auto",
            "parallel_tool_calls": true,
            "reasoning": {"effort":"medium"},
            "store": false,
            "include": ["reasoning.encrypted_content"],
            "text": {"verbosity":"low"}
        }),
    );
}

/// §5.4 C: an id survives iff it splits at its first `_` into two non-empty parts, whatever the
/// item type; under snapshot-A rules with `store:false` every id goes.
#[test]
fn prefixed_id_rule_codex_0_169_vs_snapshot_a() {
    let ids = [
        "msg_1",
        "rs_0123",
        "ws_a_b",
        "fc_",
        "_x",
        "0f8fad5b-d9cb-469f-a165-70867728950e",
        "noprefix",
    ];
    let mut prompt = Prompt::new("gpt-5.4");
    prompt.input = ids
        .iter()
        .map(|id| {
            item(json!({"type":"message","id":id,"role":"user","content":[{"type":"input_text","text":id}]}))
        })
        .collect();
    let msg = |id: Option<&str>, text: &str| -> Value {
        match id {
            Some(id) => {
                json!({"type":"message","id":id,"role":"user","content":[{"type":"input_text","text":text}]})
            }
            None => {
                json!({"type":"message","role":"user","content":[{"type":"input_text","text":text}]})
            }
        }
    };
    let model = lookup("gpt-5.4");
    for provider in [openai(), test_responses_provider()] {
        let c = build(
            &prompt,
            &model,
            &provider,
            Dialect::Auto,
            &CompileRules::codex_0_169(),
        );
        assert_json_exact(
            &c.body["input"],
            &json!([
                msg(Some("msg_1"), "msg_1"),
                msg(Some("rs_0123"), "rs_0123"),
                msg(Some("ws_a_b"), "ws_a_b"),
                msg(None, "fc_"),
                msg(None, "_x"),
                msg(None, "0f8fad5b-d9cb-469f-a165-70867728950e"),
                msg(None, "noprefix"),
            ]),
        );
        let a = build(&prompt, &model, &provider, Dialect::Auto, &snapshot_a());
        let stripped: Vec<Value> = ids.iter().map(|id| msg(None, id)).collect();
        assert_json_exact(&a.body["input"], &Value::Array(stripped));
    }
}

// ---------------------------------------------------------------------------------------------
// Vector 30: passthrough metadata per provider
// ---------------------------------------------------------------------------------------------

fn meta(turn: &str) -> Value {
    json!({"turn_id": turn})
}

fn turn_one_input() -> Vec<ResponseItem> {
    vec![item(json!({
        "type":"message","id":"msg_u1","role":"user",
        "content":[{"type":"input_text","text":"first"}],
        "internal_chat_message_metadata_passthrough": meta("turn-1")
    }))]
}

fn turn_one_output() -> Vec<ResponseItem> {
    vec![
        item(json!({
            "type":"function_call","id":"fc_1","name":"shell","arguments":"{\"cmd\":\"ls\"}",
            "encrypted_function_args":[],"call_id":"call-1",
            "internal_chat_message_metadata_passthrough": meta("turn-1")
        })),
        item(json!({
            "type":"function_call_output","call_id":"call-1","output":"a.txt",
            "internal_chat_message_metadata_passthrough": meta("turn-1")
        })),
        item(json!({
            "type":"message","id":"msg_a1","role":"assistant",
            "content":[{"type":"output_text","text":"done"}],
            "internal_chat_message_metadata_passthrough": meta("turn-1")
        })),
    ]
}

fn turn_two_user() -> ResponseItem {
    item(json!({
        "type":"message","id":"msg_u2","role":"user",
        "content":[{"type":"input_text","text":"second"}],
        "internal_chat_message_metadata_passthrough": meta("turn-2")
    }))
}

fn two_turn_prompts() -> (Prompt, Prompt) {
    let mut first = Prompt::new("gpt-5.4");
    first.input = turn_one_input();
    first.prompt_cache_key = Some("thread-1".to_string());
    let mut second = first.clone();
    second.input.extend(turn_one_output());
    second.input.push(turn_two_user());
    (first, second)
}

/// Vector 30, OpenAI provider (snapshot A, store false): passthrough metadata kept on every item, ids
/// cleared, `encrypted_function_args` unknown to A; turn 2's input begins with turn 1's.
#[test]
fn vector_30_openai_keeps_turn_metadata_across_turns_snapshot_a() {
    let (first, second) = two_turn_prompts();
    let model = lookup("gpt-5.4");
    let one = build(&first, &model, &openai(), Dialect::Auto, &snapshot_a());
    let two = build(&second, &model, &openai(), Dialect::Auto, &snapshot_a());
    let turn_one = json!([
        {"type":"message","role":"user","content":[{"type":"input_text","text":"first"}],"internal_chat_message_metadata_passthrough":{"turn_id":"turn-1"}}
    ]);
    assert_json_exact(
        &one.body,
        &json!({
            "model": "gpt-5.4",
            "input": turn_one,
            "tools": [],
            "tool_choice": "auto",
            "parallel_tool_calls": true,
            "reasoning": {"effort":"medium"},
            "store": false,
            "stream": true,
            "include": ["reasoning.encrypted_content"],
            "prompt_cache_key": "thread-1",
            "text": {"verbosity":"low"}
        }),
    );
    assert_json_exact(
        &two.body["input"],
        &json!([
            {"type":"message","role":"user","content":[{"type":"input_text","text":"first"}],"internal_chat_message_metadata_passthrough":{"turn_id":"turn-1"}},
            {"type":"function_call","name":"shell","arguments":"{\"cmd\":\"ls\"}","call_id":"call-1","internal_chat_message_metadata_passthrough":{"turn_id":"turn-1"}},
            {"type":"function_call_output","call_id":"call-1","output":"a.txt","internal_chat_message_metadata_passthrough":{"turn_id":"turn-1"}},
            {"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}],"internal_chat_message_metadata_passthrough":{"turn_id":"turn-1"}},
            {"type":"message","role":"user","content":[{"type":"input_text","text":"second"}],"internal_chat_message_metadata_passthrough":{"turn_id":"turn-2"}}
        ]),
    );
    let one_input = one.body["input"].as_array().expect("array");
    let two_input = two.body["input"].as_array().expect("array");
    assert_eq!(&two_input[..one_input.len()], one_input.as_slice());
    // Everything but the input is identical between the two turns.
    let strip_input = |req: &CompiledRequest| {
        let mut b = (*req.body).clone();
        b.shift_remove("input");
        Value::Object(b)
    };
    assert_json_exact(&strip_input(&two), &strip_input(&one));
}

/// Vector 30, provider `Test Responses` (snapshot A): no item has passthrough metadata or an id.
#[test]
fn vector_30_non_openai_omits_passthrough_and_ids_snapshot_a() {
    let (_, second) = two_turn_prompts();
    let req = build(
        &second,
        &lookup("gpt-5.4"),
        &test_responses_provider(),
        Dialect::Auto,
        &snapshot_a(),
    );
    assert_eq!(req.url, "http://127.0.0.1:4010/v1/responses");
    assert_json_exact(
        &req.body,
        &json!({
            "model": "gpt-5.4",
            "input": [
                {"type":"message","role":"user","content":[{"type":"input_text","text":"first"}]},
                {"type":"function_call","name":"shell","arguments":"{\"cmd\":\"ls\"}","call_id":"call-1"},
                {"type":"function_call_output","call_id":"call-1","output":"a.txt"},
                {"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]},
                {"type":"message","role":"user","content":[{"type":"input_text","text":"second"}]}
            ],
            "tools": [],
            "tool_choice": "auto",
            "parallel_tool_calls": true,
            "reasoning": {"effort":"medium"},
            "store": false,
            "stream": true,
            "include": ["reasoning.encrypted_content"],
            "prompt_cache_key": "thread-1",
            "text": {"verbosity":"low"}
        }),
    );
    // No auth env key for this provider: no authorization header.
    assert_json_exact(
        &headers(&req),
        &json!([
            {"name":"accept","value":"text/event-stream"},
            {"name":"content-type","value":"application/json"},
            {"name":"originator","value":"codex_cli_rs"},
            {"name":"user-agent","value":"codex_cli_rs/0.0.0"}
        ]),
    );
}

/// Vector 30 under codex-0.169 (C): the OpenAI provider keeps passthrough metadata and
/// `encrypted_function_args`; a non-OpenAI provider loses both; prefixed ids stay for both.
#[test]
fn vector_30_passthrough_and_encrypted_args_codex_0_169() {
    let (_, second) = two_turn_prompts();
    let model = lookup("gpt-5.4");
    let rules = CompileRules::codex_0_169();
    let m1 = json!({"turn_id":"turn-1"});
    let openai_req = build(&second, &model, &openai(), Dialect::Auto, &rules);
    assert_json_exact(
        &openai_req.body["input"],
        &json!([
            {"type":"message","id":"msg_u1","role":"user","content":[{"type":"input_text","text":"first"}],"internal_chat_message_metadata_passthrough":m1},
            {"type":"function_call","id":"fc_1","name":"shell","arguments":"{\"cmd\":\"ls\"}","encrypted_function_args":[],"call_id":"call-1","internal_chat_message_metadata_passthrough":m1},
            {"type":"function_call_output","call_id":"call-1","output":"a.txt","internal_chat_message_metadata_passthrough":m1},
            {"type":"message","id":"msg_a1","role":"assistant","content":[{"type":"output_text","text":"done"}],"internal_chat_message_metadata_passthrough":m1},
            {"type":"message","id":"msg_u2","role":"user","content":[{"type":"input_text","text":"second"}],"internal_chat_message_metadata_passthrough":{"turn_id":"turn-2"}}
        ]),
    );
    let other = build(
        &second,
        &model,
        &test_responses_provider(),
        Dialect::Auto,
        &rules,
    );
    assert_json_exact(
        &other.body,
        &json!({
            "model": "gpt-5.4",
            "stream": true,
            "input": [
                {"type":"message","id":"msg_u1","role":"user","content":[{"type":"input_text","text":"first"}]},
                {"type":"function_call","id":"fc_1","name":"shell","arguments":"{\"cmd\":\"ls\"}","call_id":"call-1"},
                {"type":"function_call_output","call_id":"call-1","output":"a.txt"},
                {"type":"message","id":"msg_a1","role":"assistant","content":[{"type":"output_text","text":"done"}]},
                {"type":"message","id":"msg_u2","role":"user","content":[{"type":"input_text","text":"second"}]}
            ],
            "tools": [],
            "tool_choice": "auto",
            "parallel_tool_calls": true,
            "reasoning": {"effort":"medium"},
            "store": false,
            "include": ["reasoning.encrypted_content"],
            "prompt_cache_key": "thread-1",
            "text": {"verbosity":"low"}
        }),
    );
}

/// §18: fields a known item type does not model (`status` on an echoed function call) are
/// dropped by A's serde, and kept right after `type` in the server's order by 0.169.
#[test]
fn echoed_item_unknown_fields_snapshot_a_vs_codex_0_169() {
    let mut prompt = Prompt::new("gpt-5.4");
    prompt.input = vec![item(json!({
        "type":"function_call","status":"completed","id":"fc_9","name":"shell",
        "arguments":"{}","call_id":"call-9"
    }))];
    let model = lookup("gpt-5.4");
    let seed = build(&prompt, &model, &openai(), Dialect::Auto, &snapshot_a());
    assert_json_exact(
        &seed.body["input"],
        &json!([{"type":"function_call","name":"shell","arguments":"{}","call_id":"call-9"}]),
    );
    let c = build(
        &prompt,
        &model,
        &openai(),
        Dialect::Auto,
        &CompileRules::codex_0_169(),
    );
    assert_json_exact(
        &c.body["input"],
        &json!([{"type":"function_call","status":"completed","id":"fc_9","name":"shell","arguments":"{}","call_id":"call-9"}]),
    );
}

/// §5.2 (C): a `configuration_update` item is dropped from the request copy unless
/// reasoning-effort overrides are enabled for the model *on the OpenAI provider*; for any other
/// provider it never reaches the wire.
#[test]

fn configuration_update_dropped_for_non_openai_codex_0_169() {
    let mut prompt = Prompt::new("gpt-5.4");
    prompt.input = vec![
        user_text("hi"),
        item(json!({"type":"configuration_update","reasoning":{"effort":"high"}})),
    ];
    let model = lookup("gpt-5.4");
    for provider in [azure_provider(), test_responses_provider()] {
        let req = build(
            &prompt,
            &model,
            &provider,
            Dialect::Auto,
            &CompileRules::codex_0_169(),
        );
        assert_json_exact(
            &req.body["input"],
            &json!([{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}]),
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Vectors 31–32: reasoning and text controls
// ---------------------------------------------------------------------------------------------

fn gpt_5_4_body(reasoning: Value, text: Option<Value>, service_tier: Option<&str>) -> Value {
    let mut body = map(json!({
        "model": "gpt-5.4",
        "input": [{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}],
        "tools": [],
        "tool_choice": "auto",
        "parallel_tool_calls": true,
        "reasoning": reasoning,
        "store": false,
        "stream": true,
        "include": ["reasoning.encrypted_content"]
    }));
    if let Some(tier) = service_tier {
        body.insert("service_tier".to_string(), json!(tier));
    }
    if let Some(text) = text {
        body.insert("text".to_string(), text);
    }
    Value::Object(body)
}

/// Vector 31: the catalog default effort, and `ultra` sent as `max` (A).
#[test]
fn vector_31_reasoning_effort_snapshot_a() {
    let model = lookup("gpt-5.4");
    let mut prompt = Prompt::new("gpt-5.4");
    prompt.input = vec![user_text("hi")];
    let rules = snapshot_a();
    let req = build(&prompt, &model, &openai(), Dialect::Auto, &rules);
    assert_json_exact(
        &req.body,
        &gpt_5_4_body(
            json!({"effort":"medium"}),
            Some(json!({"verbosity":"low"})),
            None,
        ),
    );

    prompt.reasoning.effort = Setting::Value("ultra".to_string());
    let ultra = build(&prompt, &model, &openai(), Dialect::Auto, &rules);
    assert_json_exact(
        &ultra.body,
        &gpt_5_4_body(
            json!({"effort":"max"}),
            Some(json!({"verbosity":"low"})),
            None,
        ),
    );
}

/// Vector 31 under codex-0.169: C resolves efforts through the model (mapping not read, §16.4);
/// the preset sends the configured effort as given, so `ultra` stays `ultra`.
#[test]
fn vector_31_reasoning_effort_codex_0_169() {
    let model = lookup("gpt-5.4");
    let mut prompt = Prompt::new("gpt-5.4");
    prompt.input = vec![user_text("hi")];
    prompt.reasoning.effort = Setting::Value("ultra".to_string());
    let req = build(
        &prompt,
        &model,
        &openai(),
        Dialect::Auto,
        &CompileRules::codex_0_169(),
    );
    assert_json_exact(
        &req.body,
        &json!({
            "model": "gpt-5.4",
            "stream": true,
            "input": [{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}],
            "tools": [],
            "tool_choice": "auto",
            "parallel_tool_calls": true,
            "reasoning": {"effort":"ultra"},
            "store": false,
            "include": ["reasoning.encrypted_content"],
            "text": {"verbosity":"low"}
        }),
    );
}

/// An unknown slug under snapshot A: fallback metadata, so `reasoning` is null, `include` empty,
/// no verbosity and no parallel tool calls; only the schema can make a `text` object.
fn fallback_body(text: Option<Value>) -> Value {
    let mut body = map(json!({
        "model": "test-model",
        "input": [{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}],
        "tools": [],
        "tool_choice": "auto",
        "parallel_tool_calls": false,
        "reasoning": null,
        "store": false,
        "stream": true,
        "include": []
    }));
    if let Some(text) = text {
        body.insert("text".to_string(), text);
    }
    Value::Object(body)
}

/// Vector 32: verbosity, output schema (strict and not), no `text` when neither applies, and the
/// flex service tier.
#[test]
fn vector_32_text_controls_and_service_tier() {
    let rules = snapshot_a();

    // Verbosity Low on a model whose default is medium.
    let mini = lookup("gpt-5.4-mini");
    assert_eq!(mini.default_verbosity.as_deref(), Some("medium"));
    let mut prompt = Prompt::new("gpt-5.4-mini");
    prompt.input = vec![user_text("hi")];
    prompt.verbosity = Setting::Value("low".to_string());
    let low = build(&prompt, &mini, &openai(), Dialect::Auto, &rules);
    let mut expected = gpt_5_4_body(
        json!({"effort":"medium"}),
        Some(json!({"verbosity":"low"})),
        None,
    );
    expected["model"] = json!("gpt-5.4-mini");
    assert_json_exact(&low.body, &expected);

    // Output schema, strict and non-strict, on a model without verbosity.
    let schema = json!({
        "type":"object",
        "properties":{"answer":{"type":"string"}},
        "required":["answer"],
        "additionalProperties":false
    });
    let fallback = ModelCatalog::bundled().lookup("test-model");
    assert!(fallback.is_fallback());
    let mut prompt = Prompt::new("test-model");
    prompt.input = vec![user_text("hi")];
    prompt.output_schema = Some(schema.clone());
    let strict = build(&prompt, &fallback, &openai(), Dialect::Auto, &rules);
    assert_json_exact(
        &strict.body,
        &fallback_body(Some(json!({"format":{
            "type":"json_schema","strict":true,"schema":schema,"name":"codex_output_schema"
        }}))),
    );
    prompt.output_schema_strict = false;
    let loose = build(&prompt, &fallback, &openai(), Dialect::Auto, &rules);
    assert_json_exact(
        &loose.body,
        &fallback_body(Some(json!({"format":{
            "type":"json_schema","strict":false,"schema":schema,"name":"codex_output_schema"
        }}))),
    );

    // No verbosity and no schema: no `text` key at all.
    prompt.output_schema = None;
    let plain = build(&prompt, &fallback, &openai(), Dialect::Auto, &rules);
    assert_json_exact(&plain.body, &fallback_body(None));

    // A verbosity the model does not support is ignored (with a note).
    prompt.verbosity = Setting::Value("high".to_string());
    let ignored = build(&prompt, &fallback, &openai(), Dialect::Auto, &rules);
    assert_json_exact(&ignored.body, &fallback_body(None));

    // Flex tier: sent when the model lists it. The bundled catalog lists no flex model, so the
    // test model is gpt-5.4 with `flex` added to its tiers.
    let flex_model = ModelInfo {
        service_tiers: vec!["priority".to_string(), "flex".to_string()],
        ..lookup("gpt-5.4")
    };
    let mut prompt = Prompt::new("gpt-5.4");
    prompt.input = vec![user_text("hi")];
    prompt.service_tier = Some("flex".to_string());
    let flex = build(&prompt, &flex_model, &openai(), Dialect::Auto, &rules);
    assert_json_exact(
        &flex.body,
        &gpt_5_4_body(
            json!({"effort":"medium"}),
            Some(json!({"verbosity":"low"})),
            Some("flex"),
        ),
    );
    // Not listed by the model, or the `default` sentinel: omitted.
    let unlisted = build(
        &prompt,
        &lookup("gpt-5.4"),
        &openai(),
        Dialect::Auto,
        &rules,
    );
    assert_json_exact(
        &unlisted.body,
        &gpt_5_4_body(
            json!({"effort":"medium"}),
            Some(json!({"verbosity":"low"})),
            None,
        ),
    );
    prompt.service_tier = Some("default".to_string());
    let sentinel = build(&prompt, &flex_model, &openai(), Dialect::Auto, &rules);
    assert_json_exact(
        &sentinel.body,
        &gpt_5_4_body(
            json!({"effort":"medium"}),
            Some(json!({"verbosity":"low"})),
            None,
        ),
    );
    // `fast` parses as the priority tier.
    prompt.service_tier = Some("fast".to_string());
    let fast = build(&prompt, &flex_model, &openai(), Dialect::Auto, &rules);
    assert_json_exact(
        &fast.body,
        &gpt_5_4_body(
            json!({"effort":"medium"}),
            Some(json!({"verbosity":"low"})),
            Some("priority"),
        ),
    );
}

/// §18: the unknown slug under codex-0.169 sends `reasoning:{"summary":"auto"}`, include the
/// encrypted reasoning, and no `text`.
#[test]
fn unknown_slug_codex_0_169() {
    let fallback = ModelCatalog::bundled().lookup("gpt-5.1-codex");
    assert!(fallback.is_fallback());
    let mut prompt = Prompt::new("gpt-5.1-codex");
    prompt.input = vec![user_text("hi")];
    let req = build(
        &prompt,
        &fallback,
        &openai(),
        Dialect::Auto,
        &CompileRules::codex_0_169(),
    );
    assert_json_exact(
        &req.body,
        &json!({
            "model": "gpt-5.1-codex",
            "stream": true,
            "input": [{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}],
            "tools": [],
            "tool_choice": "auto",
            "parallel_tool_calls": true,
            "reasoning": {"summary":"auto"},
            "store": false,
            "include": ["reasoning.encrypted_content"]
        }),
    );
}

// ---------------------------------------------------------------------------------------------
// Vector 33: tools
// ---------------------------------------------------------------------------------------------

fn demo_function() -> Value {
    json!({
        "type":"function","name":"demo","description":"A demo tool","strict":false,
        "parameters":{"type":"object","properties":{"foo":{"type":"string"}}}
    })
}

#[test]
fn vector_33_tool_serialisation() {
    assert_eq!(
        tool_roundtrip(demo_function()),
        r#"{"type":"function","name":"demo","description":"A demo tool","strict":false,"parameters":{"type":"object","properties":{"foo":{"type":"string"}}}}"#
    );
    assert_eq!(
        tool_roundtrip(json!({
            "type":"namespace","name":"mcp__demo__","description":"Demo tools",
            "tools":[demo_function()]
        })),
        r#"{"type":"namespace","name":"mcp__demo__","description":"Demo tools","tools":[{"type":"function","name":"demo","description":"A demo tool","strict":false,"parameters":{"type":"object","properties":{"foo":{"type":"string"}}}}]}"#
    );
    assert_eq!(
        tool_roundtrip(json!({
            "type":"web_search","external_web_access":true,
            "filters":{"allowed_domains":["example.com"]},
            "user_location":{"type":"approximate","country":"US","region":"California","city":"San Francisco","timezone":"America/Los_Angeles"},
            "search_context_size":"high","search_content_types":["text","image"]
        })),
        r#"{"type":"web_search","external_web_access":true,"filters":{"allowed_domains":["example.com"]},"user_location":{"type":"approximate","country":"US","region":"California","city":"San Francisco","timezone":"America/Los_Angeles"},"search_context_size":"high","search_content_types":["text","image"]}"#
    );
    assert_eq!(
        tool_roundtrip(json!({
            "type":"tool_search","execution":"sync","description":"Search app tools",
            "parameters":{"type":"object","properties":{"query":{"type":"string","description":"Tool search query"}},"required":["query"],"additionalProperties":false}
        })),
        r#"{"type":"tool_search","execution":"sync","description":"Search app tools","parameters":{"type":"object","properties":{"query":{"type":"string","description":"Tool search query"}},"required":["query"],"additionalProperties":false}}"#
    );
}

/// Vector 33's tools in a standard request's top-level `tools`, in order, byte for byte.
#[test]
fn vector_33_tools_in_a_standard_body() {
    let namespace = json!({
        "type":"namespace","name":"mcp__demo__","description":"Demo tools","tools":[demo_function()]
    });
    let tool_search = json!({
        "type":"tool_search","execution":"sync","description":"Search app tools",
        "parameters":{"type":"object","properties":{"query":{"type":"string","description":"Tool search query"}},"required":["query"],"additionalProperties":false}
    });
    let mut prompt = Prompt::new("gpt-5.4");
    prompt.tools = vec![
        tool(demo_function()),
        tool(namespace.clone()),
        tool(tool_search.clone()),
    ];
    prompt.input = vec![user_text("hi")];
    let req = build(
        &prompt,
        &lookup("gpt-5.4"),
        &openai(),
        Dialect::Auto,
        &snapshot_a(),
    );
    assert_json_exact(
        &req.body["tools"],
        &json!([demo_function(), namespace, tool_search]),
    );
}

// ---------------------------------------------------------------------------------------------
// Vector 35: Azure detection (and is_openai, §9)
// ---------------------------------------------------------------------------------------------

fn provider_named(name: &str, base_url: &str) -> Provider {
    Provider {
        name: name.to_string(),
        base_url: base_url.to_string(),
        env_key: None,
        headers: Vec::new(),
        query_params: Vec::new(),
        env_headers: Vec::new(),
    }
}

#[test]
fn vector_35_azure_detection() {
    let cases: Vec<(&str, &str)> = vec![
        ("test", "https://foo.openai.azure.com/openai"),
        ("test", "https://foo.openai.azure.us/openai/deployments/bar"),
        ("test", "https://foo.cognitiveservices.azure.cn/openai"),
        ("test", "https://foo.aoai.azure.com/openai"),
        ("test", "https://foo.openai.azure-api.net/openai"),
        ("test", "https://foo.z01.azurefd.net/"),
        ("Azure", "https://example.com"),
        ("AZURE", "https://example.com"),
        ("test", "https://FOO.OPENAI.AZURE.COM/OPENAI"),
        ("test", "https://foo.blob.core.windows.net/openai"),
        ("test", "https://api.openai.com/v1"),
        ("test", "https://example.com/openai"),
        ("test", "https://myproxy.azurewebsites.net/openai"),
        ("OpenAI", "https://api.openai.com/v1"),
        ("azure-proxy", "https://example.com"),
    ];
    let actual: Vec<(&str, &str, bool)> = cases
        .iter()
        .map(|(name, url)| {
            (
                *name,
                *url,
                provider_named(name, url).is_azure_responses_endpoint(),
            )
        })
        .collect();
    assert_eq!(
        actual,
        vec![
            ("test", "https://foo.openai.azure.com/openai", true),
            (
                "test",
                "https://foo.openai.azure.us/openai/deployments/bar",
                true
            ),
            (
                "test",
                "https://foo.cognitiveservices.azure.cn/openai",
                true
            ),
            ("test", "https://foo.aoai.azure.com/openai", true),
            ("test", "https://foo.openai.azure-api.net/openai", true),
            ("test", "https://foo.z01.azurefd.net/", true),
            ("Azure", "https://example.com", true),
            ("AZURE", "https://example.com", true),
            ("test", "https://FOO.OPENAI.AZURE.COM/OPENAI", true),
            ("test", "https://foo.blob.core.windows.net/openai", true),
            ("test", "https://api.openai.com/v1", false),
            ("test", "https://example.com/openai", false),
            ("test", "https://myproxy.azurewebsites.net/openai", false),
            ("OpenAI", "https://api.openai.com/v1", false),
            ("azure-proxy", "https://example.com", false),
        ]
    );
}

#[test]
fn is_openai_is_by_display_name_only() {
    let cases = [
        ("OpenAI", "https://api.openai.com/v1"),
        ("OpenAI", "http://127.0.0.1:4010/v1"),
        ("openai", "https://api.openai.com/v1"),
        ("Test Responses", "https://api.openai.com/v1"),
    ];
    let actual: Vec<bool> = cases
        .iter()
        .map(|(name, url)| provider_named(name, url).is_openai())
        .collect();
    assert_eq!(actual, vec![true, true, false, false]);
    let kinds: Vec<ProviderKind> = [
        Provider::preset(ProviderKind::Openai),
        Provider::preset(ProviderKind::Azure),
        Provider::preset(ProviderKind::Compatible),
    ]
    .iter()
    .map(Provider::kind)
    .collect();
    assert_eq!(
        kinds,
        vec![
            ProviderKind::Openai,
            ProviderKind::Azure,
            ProviderKind::Compatible
        ]
    );
}
