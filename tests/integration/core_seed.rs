//! The `seed` preset against the seed chapter it was specified from: chapter 5.6
//! (`../shared/seeds/000_38e4f4e2816e6f71.txt`), section 机制怎样工作 and its pseudocode. One
//! whole-value vector per sentence the preset implements; each quotes its sentence. Where
//! WIRE_SPEC's snapshot A differs (reasoning `null` and `include: []` without summary support,
//! ids cleared unless stored, encrypted arguments never sent), the seed text wins here; the
//! snapshot-A vectors are in `tests/integration/core_vectors.rs`.

use pretty_assertions::assert_eq;
use promptwire::core::compile::{CompiledRequest, compile};
use promptwire::core::models::ModelInfo;
use promptwire::core::prompt::{AuthMode, Dialect, Prompt};
use promptwire::core::provider::{Provider, ProviderKind};
use promptwire::core::rules::CompileRules;
use serde_json::{Value, json};

/// A model described by catalog JSON (fields absent take the catalog defaults).
fn model(entry: Value) -> ModelInfo {
    serde_json::from_value(entry).expect("model entry")
}

fn prompt(value: Value) -> Prompt {
    Prompt::from_json_str(&value.to_string()).expect("prompt")
}

fn seed(
    prompt: &Prompt,
    model: &ModelInfo,
    kind: ProviderKind,
    dialect: Dialect,
) -> CompiledRequest {
    compile(
        prompt,
        model,
        &Provider::preset(kind),
        dialect,
        &CompileRules::seed(),
    )
    .expect("compile")
}

/// The body as a value, and its key order as a pretty string (a reordered key fails too).
fn assert_body(req: &CompiledRequest, expected: Value) {
    let actual = Value::Object((*req.body).clone());
    assert_eq!(
        serde_json::to_string_pretty(&actual).expect("json"),
        serde_json::to_string_pretty(&expected).expect("json")
    );
}

fn user(text: &str) -> Value {
    json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})
}

/// A model that supports neither reasoning summaries nor verbosity, with no default effort.
fn plain_model() -> ModelInfo {
    model(
        json!({"slug": "plain", "supports_reasoning_summaries": false,
                 "supports_parallel_tool_calls": false}),
    )
}

// 请求固定包含 model、input、tool_choice=auto、stream=true 和 include=[reasoning.encrypted_content]。
// ("The request always contains model, input, tool_choice=auto, stream=true and
// include=[reasoning.encrypted_content].") — `include` too, even with no reasoning to include.
#[test]
fn sentence_1_fixed_fields_include_always() {
    let p = prompt(json!({"model": "plain", "input": [user("hi")]}));
    let req = seed(
        &p,
        &plain_model(),
        ProviderKind::Compatible,
        Dialect::Standard,
    );
    assert_body(
        &req,
        json!({
            "model": "plain",
            "input": [user("hi")],
            "tools": [],
            "tool_choice": "auto",
            "parallel_tool_calls": false,
            "reasoning": {},
            "store": false,
            "stream": true,
            "include": ["reasoning.encrypted_content"]
        }),
    );
}

// Base Instructions、tools 与 parallel 字段按标准/Lite 分支产生。
// ("Base instructions, tools and the parallel field are produced by the standard/Lite branch.")
#[test]
fn sentence_2_instructions_tools_parallel_by_dialect() {
    let p = prompt(json!({
        "model": "m",
        "base_instructions": "Be brief.",
        "input": [user("hi")],
        "tools": [{"type": "function", "name": "ls", "parameters": {"type": "object"}}]
    }));
    let m = model(json!({"slug": "m", "default_reasoning_level": "medium",
                         "supports_parallel_tool_calls": true}));
    // A function tool goes out with its (empty) description and `strict: false`.
    let tool = json!({"type": "function", "name": "ls", "description": "", "strict": false,
                      "parameters": {"type": "object"}});
    assert_body(
        &seed(&p, &m, ProviderKind::Compatible, Dialect::Standard),
        json!({
            "model": "m",
            "instructions": "Be brief.",
            "input": [user("hi")],
            "tools": [tool],
            "tool_choice": "auto",
            "parallel_tool_calls": true,
            "reasoning": {"effort": "medium", "summary": "auto"},
            "store": false,
            "stream": true,
            "include": ["reasoning.encrypted_content"]
        }),
    );
    assert_body(
        &seed(&p, &m, ProviderKind::Compatible, Dialect::Lite),
        json!({
            "model": "m",
            "input": [
                {"type": "additional_tools", "role": "developer", "tools": [tool]},
                {"type": "message", "role": "developer",
                 "content": [{"type": "input_text", "text": "Be brief."}]},
                user("hi")
            ],
            "tool_choice": "auto",
            "parallel_tool_calls": false,
            "reasoning": {"effort": "medium", "summary": "auto", "context": "all_turns"},
            "store": false,
            "stream": true,
            "include": ["reasoning.encrypted_content"]
        }),
    );
}

// Reasoning effort 使用显式值或模型默认，summary 仅在模型支持时加入；verbosity 同理。
// ("Reasoning effort uses the explicit value or the model default; summary is added only when
// the model supports it; verbosity likewise.")
#[test]
fn sentence_3_effort_explicit_or_default_summary_and_verbosity_gated() {
    let no_summaries = model(json!({"slug": "m", "default_reasoning_level": "medium",
        "supports_reasoning_summaries": false, "support_verbosity": false}));
    let with_both = model(json!({"slug": "m", "default_reasoning_level": "medium",
        "supports_reasoning_summaries": true, "support_verbosity": true,
        "default_verbosity": "low"}));
    let defaults = prompt(json!({"model": "m"}));
    let explicit = prompt(json!({"model": "m",
        "reasoning": {"effort": "high", "summary": "detailed"}, "verbosity": "medium"}));
    let facts = |req: &CompiledRequest| {
        json!({
            "reasoning": req.body["reasoning"],
            "include": req.body["include"],
            "text": req.body.get("text"),
        })
    };
    let cases = [
        (
            &defaults,
            &no_summaries,
            json!({"reasoning": {"effort": "medium"},
            "include": ["reasoning.encrypted_content"], "text": null}),
        ),
        (
            &explicit,
            &no_summaries,
            json!({"reasoning": {"effort": "high"},
            "include": ["reasoning.encrypted_content"], "text": null}),
        ),
        (
            &defaults,
            &with_both,
            json!({"reasoning": {"effort": "medium", "summary": "auto"},
            "include": ["reasoning.encrypted_content"], "text": {"verbosity": "low"}}),
        ),
        (
            &explicit,
            &with_both,
            json!({"reasoning": {"effort": "high", "summary": "detailed"},
            "include": ["reasoning.encrypted_content"], "text": {"verbosity": "medium"}}),
        ),
    ];
    for (p, m, expected) in cases {
        let req = seed(p, m, ProviderKind::Openai, Dialect::Standard);
        assert_eq!(facts(&req), expected);
    }
    // What was left out is explained.
    let req = seed(
        &explicit,
        &no_summaries,
        ProviderKind::Openai,
        Dialect::Standard,
    );
    let notes: Vec<(String, String)> = req
        .notes
        .iter()
        .map(|n| (n.path.clone(), n.message.clone()))
        .collect();
    assert_eq!(
        notes,
        [
            (
                "reasoning.summary".to_string(),
                "omitted: the model does not support reasoning summaries".to_string()
            ),
            (
                "text.verbosity".to_string(),
                "`medium` omitted: the model does not support verbosity".to_string()
            ),
        ]
    );
}

// 输出 Schema 被包装为 text.format={type: json_schema, name: codex_output_schema, strict, schema}。
// ("The output schema is wrapped as text.format={type: json_schema, name: codex_output_schema,
// strict, schema}.")
#[test]
fn sentence_4_output_schema_wrapped_in_text_format() {
    let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
    let p = prompt(json!({"model": "plain", "output_schema": schema,
                          "output_schema_strict": false}));
    let req = seed(&p, &plain_model(), ProviderKind::Openai, Dialect::Standard);
    assert_eq!(
        req.body["text"],
        json!({"format": {"type": "json_schema", "strict": false, "schema": schema,
                          "name": "codex_output_schema"}})
    );
}

/// History with internal chat metadata on every item and encrypted function arguments.
fn history_with_private_fields() -> Prompt {
    let meta = json!({"turn_id": "turn-1"});
    prompt(json!({
        "model": "plain",
        "input": [
            {"type": "message", "id": "msg_1", "role": "user",
             "content": [{"type": "input_text", "text": "ls"}],
             "internal_chat_message_metadata_passthrough": meta},
            {"type": "function_call", "id": "fc_1", "name": "shell", "arguments": "{}",
             "encrypted_function_args": ["enc"], "call_id": "call-1",
             "internal_chat_message_metadata_passthrough": meta}
        ]
    }))
}

// 发往非 OpenAI Provider 时，内部 chat metadata 与 encrypted function args 会被清掉，避免把私有字段泄漏给兼容端。
// ("When sending to a non-OpenAI provider, internal chat metadata and encrypted function args
// are cleared, so private fields do not leak to compatible endpoints.") — and only then: the
// OpenAI provider receives both.
#[test]
fn sentence_5_private_fields_only_to_openai() {
    let p = history_with_private_fields();
    let meta = json!({"turn_id": "turn-1"});
    let openai = seed(&p, &plain_model(), ProviderKind::Openai, Dialect::Standard);
    assert_eq!(
        openai.body["input"],
        json!([
            {"type": "message", "id": "msg_1", "role": "user",
             "content": [{"type": "input_text", "text": "ls"}],
             "internal_chat_message_metadata_passthrough": meta},
            {"type": "function_call", "id": "fc_1", "name": "shell", "arguments": "{}",
             "encrypted_function_args": ["enc"], "call_id": "call-1",
             "internal_chat_message_metadata_passthrough": meta}
        ])
    );
    let cleared = json!([
        {"type": "message", "id": "msg_1", "role": "user",
         "content": [{"type": "input_text", "text": "ls"}]},
        {"type": "function_call", "id": "fc_1", "name": "shell", "arguments": "{}",
         "call_id": "call-1"}
    ]);
    for kind in [ProviderKind::Compatible, ProviderKind::Azure] {
        let req = seed(&p, &plain_model(), kind, Dialect::Standard);
        assert_eq!(req.body["input"], cleared, "{kind:?}");
    }
}

// 没有约定前缀的服务端 Item ID 也会被清除，以免把旧服务的对象标识当作新请求可引用对象。
// ("Server item ids without the agreed prefix are cleared too, so an old service's object id is
// not taken as referable by the new request.") — pseudocode: `if not
// item.id_has_server_prefix(): item.id = None`, for every provider, stored or not.
#[test]
fn sentence_6_ids_dropped_only_without_a_server_prefix() {
    let ids = ["msg_1", "rs_0123", "legacy-id", "_x", "abc_"];
    let input: Vec<Value> = ids
        .iter()
        .map(|id| {
            json!({"type": "message", "id": id, "role": "user",
                          "content": [{"type": "input_text", "text": id}]})
        })
        .collect();
    let p = prompt(json!({"model": "plain", "input": input}));
    let expected: Vec<Value> = ids
        .iter()
        .map(|id| {
            let mut item = json!({"type": "message", "id": id, "role": "user",
                                  "content": [{"type": "input_text", "text": id}]});
            if !(id.starts_with("msg_") || id.starts_with("rs_")) {
                item.as_object_mut().expect("object").shift_remove("id");
            }
            item
        })
        .collect();
    for kind in ProviderKind::ALL {
        let req = seed(&p, &plain_model(), kind, Dialect::Standard);
        assert_eq!(
            req.body["input"],
            Value::Array(expected.clone()),
            "{kind:?}"
        );
    }
}

// store 只在 Azure 特例开启，
// ("store is turned on only for the Azure special case,")
#[test]
fn sentence_7_store_only_for_azure() {
    let p = prompt(json!({"model": "plain"}));
    let stores: Vec<(ProviderKind, Value)> = ProviderKind::ALL
        .into_iter()
        .map(|k| {
            (
                k,
                seed(&p, &plain_model(), k, Dialect::Standard).body["store"].clone(),
            )
        })
        .collect();
    assert_eq!(
        stores,
        [
            (ProviderKind::Openai, json!(false)),
            (ProviderKind::Azure, json!(true)),
            (ProviderKind::Compatible, json!(false)),
        ]
    );
}

// 请求压缩只在 OpenAI Codex backend 且配置启用时使用 zstd。
// ("Request compression uses zstd only for the OpenAI Codex backend, when the config enables
// it.")
#[test]
fn sentence_8_zstd_only_for_the_codex_backend() {
    let mut p = prompt(json!({"model": "plain"}));
    let mut encodings = Vec::new();
    for auth in [AuthMode::ApiKey, AuthMode::Chatgpt] {
        p.compile.auth = auth;
        for kind in ProviderKind::ALL {
            let req = seed(&p, &plain_model(), kind, Dialect::Standard);
            let encoding = req
                .headers
                .iter()
                .find(|h| h.name == "content-encoding")
                .map(|h| h.value.clone());
            encodings.push((auth, kind, encoding, req.compressed_body.is_some()));
        }
    }
    let zstd = Some("zstd".to_string());
    assert_eq!(
        encodings,
        [
            (AuthMode::ApiKey, ProviderKind::Openai, None, false),
            (AuthMode::ApiKey, ProviderKind::Azure, None, false),
            (AuthMode::ApiKey, ProviderKind::Compatible, None, false),
            (AuthMode::Chatgpt, ProviderKind::Openai, zstd, true),
            (AuthMode::Chatgpt, ProviderKind::Azure, None, false),
            (AuthMode::Chatgpt, ProviderKind::Compatible, None, false),
        ]
    );
    // "且配置启用时": with the feature off, nothing is compressed.
    let rules = CompileRules {
        request_compression: false,
        ..CompileRules::seed()
    };
    let req = compile(
        &p,
        &plain_model(),
        &Provider::preset(ProviderKind::Openai),
        Dialect::Standard,
        &rules,
    )
    .expect("compile");
    assert_eq!(req.compressed_body, None);
}
