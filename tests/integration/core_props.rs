//! Property test: for random prompts, the standard and Lite compiles carry the same
//! model-visible content — tools, instruction text, items in order — and differ only where
//! WIRE_SPEC §6 says (prefix items, no top-level instructions/tools, image detail stripped,
//! `parallel_tool_calls:false`, `reasoning.context`, the Lite header).

use promptwire::core::compile::compile;
use promptwire::core::json::JsonMap;
use promptwire::core::models::ModelCatalog;
use promptwire::core::prompt::{Dialect, Prompt, Setting};
use promptwire::core::provider::{Provider, ProviderKind};
use promptwire::core::rules::{CompileRules, InstructionsPlacement};
use proptest::prelude::*;
use serde_json::{Value, json};

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ]{0,24}".prop_map(String::from),
        "\\PC{0,12}".prop_map(String::from),
        Just("line one\nline \"two\"\t\u{1F600}".to_string()),
    ]
}

fn detail() -> impl Strategy<Value = Option<&'static str>> {
    prop::option::of(prop::sample::select(vec![
        "auto", "low", "high", "original",
    ]))
}

fn content_part() -> impl Strategy<Value = Value> {
    prop_oneof![
        text().prop_map(|t| json!({"type":"input_text","text":t})),
        (text(), detail()).prop_map(|(u, d)| {
            let mut part =
                json!({"type":"input_image","image_url":format!("https://e.x/{}.png", u.len())});
            if let Some(d) = d {
                part["detail"] = json!(d);
            }
            part
        }),
    ]
}

fn item() -> impl Strategy<Value = Value> {
    let id = prop::option::of(prop::sample::select(vec![
        "msg_1",
        "fc_2",
        "uuid-only",
        "x_",
    ]));
    prop_oneof![
        (
            prop::sample::select(vec!["user", "assistant", "developer", "system"]),
            prop::collection::vec(content_part(), 1..4),
            id.clone()
        )
            .prop_map(|(role, content, id)| {
                let mut m = json!({"type":"message","role":role,"content":content});
                if let Some(id) = id {
                    m["id"] = json!(id);
                }
                m
            }),
        ("[a-z_]{1,8}", text(), "call_[0-9]{1,3}", id.clone()).prop_map(|(name, args, call, id)| {
            let mut m = json!({"type":"function_call","name":name,"arguments":args,"call_id":call});
            if let Some(id) = id {
                m["id"] = json!(id);
            }
            m
        }),
        ("call_[0-9]{1,3}", text()).prop_map(|(call, out)| json!({"type":"function_call_output","call_id":call,"output":out})),
        ("call_[0-9]{1,3}", prop::collection::vec(content_part(), 1..3))
            .prop_map(|(call, out)| json!({"type":"custom_tool_call_output","call_id":call,"output":out})),
        (text(), prop::option::of(text())).prop_map(|(s, enc)| json!({"type":"reasoning","summary":[{"type":"summary_text","text":s}],"encrypted_content":enc})),
        text().prop_map(|t| json!({"type":"compaction","encrypted_content":t})),
        Just(json!({"type":"brand_new_item","payload":{"a":1}})),
    ]
}

fn tool() -> impl Strategy<Value = Value> {
    prop_oneof![
        ("[a-z_]{1,10}", text()).prop_map(|(n, d)| json!({"type":"function","name":n,"description":d,"strict":false,"parameters":{"type":"object","properties":{}}})),
        "[a-z_]{1,10}".prop_map(|n| json!({"type":"custom","name":n,"description":"freeform","format":{"type":"text"}})),
        "[a-z_]{1,10}".prop_map(|n| json!({"type":"namespace","name":format!("mcp__{n}__"),"description":"ns","tools":[{"type":"function","name":"inner","description":"","strict":true,"parameters":{"type":"object"}}]})),
        Just(json!({"type":"web_search","external_web_access":true})),
        Just(json!({"type":"image_generation","output_format":"png"})),
    ]
}

fn prompt() -> impl Strategy<Value = Prompt> {
    (
        prop::sample::select(vec![
            "gpt-5.5",
            "gpt-6-sol",
            "gpt-5.4-mini",
            "someone/gpt-5.2",
            "local-llm",
        ]),
        text(),
        prop::collection::vec(item(), 0..8),
        prop::collection::vec(tool(), 0..5),
        prop::option::of(any::<bool>()),
        prop::option::of(prop::sample::select(vec!["low", "high", "ultra"])),
        prop::option::of(prop::sample::select(vec!["auto", "detailed", "none"])),
        prop::option::of("[a-z0-9-]{1,12}"),
    )
        .prop_map(
            |(model, instructions, input, tools, parallel, effort, summary, key)| {
                let value = json!({
                    "model": model,
                    "base_instructions": instructions,
                    "input": input,
                    "tools": tools,
                    "prompt_cache_key": key,
                });
                let mut p =
                    Prompt::from_json_str(&value.to_string()).expect("generated prompt parses");
                p.parallel_tool_calls = parallel;
                if let Some(e) = effort {
                    p.reasoning.effort = Setting::Value(e.to_string());
                }
                if let Some(s) = summary {
                    p.reasoning.summary = Setting::Value(s.to_string());
                }
                p
            },
        )
}

/// Removes `detail` from images in message content and tool-output arrays (§6.1).
fn strip_details(item: &Value) -> Value {
    let mut item = item.clone();
    for key in ["content", "output"] {
        if let Some(Value::Array(parts)) = item.get_mut(key) {
            for part in parts {
                if part["type"] == "input_image"
                    && let Value::Object(p) = part
                {
                    p.shift_remove("detail");
                }
            }
        }
    }
    item
}

/// Lite's tool list read back as the model sees it: the `functions` namespace unfolded.
fn unfold(tools: &[Value], fold: Option<&str>) -> Vec<Value> {
    let mut out = Vec::new();
    for t in tools {
        match (fold, t.get("name").and_then(Value::as_str)) {
            (Some(ns), Some(name))
                if t["type"] == "namespace" && name == ns && t["description"] == "" =>
            {
                out.extend(t["tools"].as_array().cloned().unwrap_or_default());
            }
            _ => out.push(t.clone()),
        }
    }
    out
}

/// Standard tools in the order Lite folds them: plain function/custom tools gathered at the
/// first one's position (when folding), hosted tools left out.
fn expected_lite_tools(standard: &[Value], fold: bool) -> Vec<Value> {
    let visible: Vec<&Value> = standard
        .iter()
        .filter(|t| t["type"] != "web_search" && t["type"] != "image_generation")
        .collect();
    if !fold {
        return visible.into_iter().cloned().collect();
    }
    let plain = |t: &Value| t["type"] == "function" || t["type"] == "custom";
    let mut out = Vec::new();
    let mut placed = false;
    for t in &visible {
        if plain(t) {
            if !placed {
                out.extend(visible.iter().filter(|t| plain(t)).map(|t| (*t).clone()));
                placed = true;
            }
        } else {
            out.push((*t).clone());
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    #[test]
    fn standard_and_lite_differ_only_where_section_6_says(
        prompt in prompt(),
        kind in prop::sample::select(ProviderKind::ALL.to_vec()),
        seed_rules in any::<bool>(),
    ) {
        let rules = if seed_rules { CompileRules::seed() } else { CompileRules::codex_0_169() };
        let model = ModelCatalog::bundled().lookup(&prompt.model);
        let provider = Provider::preset(kind);
        let std_req = compile(&prompt, &model, &provider, Dialect::Standard, &rules).expect("standard");
        let lite_req = compile(&prompt, &model, &provider, Dialect::Lite, &rules).expect("lite");
        let s: &JsonMap = &std_req.body;
        let l: &JsonMap = &lite_req.body;

        // Lite has no top-level instructions or tools; standard always has a tools array.
        prop_assert!(!l.contains_key("instructions"));
        prop_assert!(!l.contains_key("tools"));
        let std_tools = s["tools"].as_array().cloned().unwrap_or_default();

        // Instruction text and the standard items.
        let mut std_items = s["input"].as_array().cloned().unwrap_or_default();
        let instructions = if prompt.base_instructions.is_empty() {
            None
        } else if rules.instructions == InstructionsPlacement::TopLevel {
            Some(s["instructions"].clone())
        } else {
            let first = std_items.remove(0);
            prop_assert_eq!(&first["role"], "developer");
            Some(first["content"][0]["text"].clone())
        };
        prop_assert_eq!(s.get("instructions").is_some(),
            rules.instructions == InstructionsPlacement::TopLevel && instructions.is_some());

        // Lite: additional_tools, then the instructions message, then the same items.
        let lite_input = l["input"].as_array().cloned().unwrap_or_default();
        prop_assert_eq!(&lite_input[0]["type"], "additional_tools");
        prop_assert_eq!(&lite_input[0]["role"], "developer");
        let fold = rules.lite_function_namespace.as_deref();
        let lite_tools = unfold(lite_input[0]["tools"].as_array().map(Vec::as_slice).unwrap_or(&[]), fold);
        prop_assert_eq!(unfold(&expected_lite_tools(&std_tools, fold.is_some()), fold), lite_tools);
        let mut rest = &lite_input[1..];
        if let Some(text) = &instructions {
            prop_assert_eq!(&rest[0]["role"], "developer");
            prop_assert_eq!(&rest[0]["content"][0]["text"], text);
            rest = &rest[1..];
        }
        let std_stripped: Vec<Value> = std_items.iter().map(strip_details).collect();
        prop_assert_eq!(std_stripped, rest.to_vec());

        // Top-level settings: parallel off and context all_turns; everything else equal.
        prop_assert_eq!(&l["parallel_tool_calls"], &json!(false));
        let mut expected_reasoning = s["reasoning"].clone();
        if let Value::Object(r) = &mut expected_reasoning {
            r.insert("context".to_string(), json!("all_turns"));
        }
        prop_assert_eq!(&l["reasoning"], &expected_reasoning);
        for key in ["model", "tool_choice", "store", "stream", "include", "service_tier",
                    "prompt_cache_key", "text", "client_metadata"] {
            prop_assert_eq!(s.get(key), l.get(key), "{}", key);
        }

        // Headers: only the Lite header differs.
        let mut lite_headers = lite_req.headers.clone();
        let before = lite_headers.len();
        lite_headers.retain(|h| h.name != "x-openai-internal-codex-responses-lite");
        prop_assert_eq!(before, lite_headers.len() + 1);
        prop_assert_eq!(lite_headers, std_req.headers.clone());
    }
}
