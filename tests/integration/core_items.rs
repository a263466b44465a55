//! Item, content and tool serialisation as whole values (WIRE_SPEC §5, §12): the null-vs-omitted
//! rule of every `ResponseItem` variant, wire key order whatever the input order, unknown types
//! kept verbatim, the `compaction_summary` alias, every `ContentItem` and `ToolSpec` variant, and
//! the errors for malformed items and tools (a tool without a name above all).

use pretty_assertions::assert_eq;
use promptwire::core::items::{ContentItem, ResponseItem};
use promptwire::core::prompt::Prompt;
use promptwire::core::tools::ToolSpec;
use serde_json::{Value, json};

/// Parses with `ResponseItem::from_value` and re-serialises with `serde_json::to_value`,
/// returning compact JSON (key order included).
fn item_roundtrip(input: Value) -> String {
    let item = ResponseItem::from_value(input).expect("item parses");
    serde_json::to_string(&serde_json::to_value(&item).expect("item serializes")).expect("json")
}

fn tool_roundtrip(input: Value) -> String {
    let tool = ToolSpec::from_value(input).expect("tool parses");
    serde_json::to_string(&serde_json::to_value(&tool).expect("tool serializes")).expect("json")
}

fn content_roundtrip(input: Value) -> String {
    let part = ContentItem::from_value(input).expect("content parses");
    serde_json::to_string(&serde_json::to_value(&part).expect("content serializes")).expect("json")
}

/// Runs every `(input, expected compact JSON)` case and compares the whole list at once.
fn assert_item_cases(cases: Vec<(Value, &str)>) {
    let actual: Vec<String> = cases
        .iter()
        .map(|(i, _)| item_roundtrip(i.clone()))
        .collect();
    let expected: Vec<String> = cases.iter().map(|(_, e)| (*e).to_string()).collect();
    assert_eq!(actual, expected);
}

fn assert_tool_cases(cases: Vec<(Value, &str)>) {
    let actual: Vec<String> = cases
        .iter()
        .map(|(i, _)| tool_roundtrip(i.clone()))
        .collect();
    let expected: Vec<String> = cases.iter().map(|(_, e)| (*e).to_string()).collect();
    assert_eq!(actual, expected);
}

// ---------------------------------------------------------------------------------------------
// ResponseItem: every §5.2 variant, minimal (nulls appear, optionals vanish) and full (wire
// order restored from a shuffled input).
// ---------------------------------------------------------------------------------------------

#[test]
fn additional_tools_item() {
    assert_item_cases(vec![
        (
            json!({"type":"additional_tools","role":"developer","tools":[]}),
            r#"{"type":"additional_tools","role":"developer","tools":[]}"#,
        ),
        (
            json!({"tools":[{"type":"function","name":"f","parameters":{"type":"object"}}],"role":"developer","id":"at_1","type":"additional_tools"}),
            r#"{"type":"additional_tools","id":"at_1","role":"developer","tools":[{"type":"function","name":"f","description":"","strict":false,"parameters":{"type":"object"}}]}"#,
        ),
    ]);
}

#[test]
fn message_item() {
    assert_item_cases(vec![
        (
            json!({"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}),
            r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}"#,
        ),
        (
            json!({"type":"message","role":"system","content":[]}),
            r#"{"type":"message","role":"system","content":[]}"#,
        ),
        (
            json!({
                "internal_chat_message_metadata_passthrough":{"turn_id":"t1"},
                "phase":"final_answer",
                "content":[{"type":"output_text","text":"done"}],
                "role":"assistant",
                "id":"msg_1",
                "type":"message"
            }),
            r#"{"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"done"}],"phase":"final_answer","internal_chat_message_metadata_passthrough":{"turn_id":"t1"}}"#,
        ),
        (
            json!({"type":"message","role":"assistant","content":[{"type":"output_text","text":"hm"}],"phase":"commentary"}),
            r#"{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hm"}],"phase":"commentary"}"#,
        ),
    ]);
}

#[test]
fn agent_message_item() {
    assert_item_cases(vec![
        (
            json!({"type":"agent_message","author":"root","recipient":"worker","content":[{"type":"input_text","text":"go"}]}),
            r#"{"type":"agent_message","author":"root","recipient":"worker","content":[{"type":"input_text","text":"go"}]}"#,
        ),
        (
            json!({
                "type":"agent_message",
                "internal_chat_message_metadata_passthrough":{"turn_id":"t"},
                "content":[{"type":"input_text","text":"x"},{"type":"encrypted_content","encrypted_content":"E"}],
                "recipient":"worker","author":"root","id":"amsg_1"
            }),
            r#"{"type":"agent_message","id":"amsg_1","author":"root","recipient":"worker","content":[{"type":"input_text","text":"x"},{"type":"encrypted_content","encrypted_content":"E"}],"internal_chat_message_metadata_passthrough":{"turn_id":"t"}}"#,
        ),
    ]);
}

/// `summary` always emitted; `content` null when absent or null, omitted when it holds no
/// `reasoning_text`; `encrypted_content` null when absent.
#[test]
fn reasoning_item() {
    assert_item_cases(vec![
        (
            json!({"type":"reasoning","summary":[]}),
            r#"{"type":"reasoning","summary":[],"content":null,"encrypted_content":null}"#,
        ),
        (
            json!({"type":"reasoning","encrypted_content":"E"}),
            r#"{"type":"reasoning","summary":[],"content":null,"encrypted_content":"E"}"#,
        ),
        (
            json!({"type":"reasoning","summary":[],"content":null,"encrypted_content":null}),
            r#"{"type":"reasoning","summary":[],"content":null,"encrypted_content":null}"#,
        ),
        (
            json!({"type":"reasoning","summary":[],"content":[]}),
            r#"{"type":"reasoning","summary":[],"encrypted_content":null}"#,
        ),
        (
            json!({"type":"reasoning","summary":[],"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}),
            r#"{"type":"reasoning","summary":[],"encrypted_content":null}"#,
        ),
        (
            json!({"type":"reasoning","summary":[],"content":[{"type":"text","text":"a"},{"type":"reasoning_text","text":"b"}]}),
            r#"{"type":"reasoning","summary":[],"content":[{"type":"text","text":"a"},{"type":"reasoning_text","text":"b"}],"encrypted_content":null}"#,
        ),
        (
            json!({
                "internal_chat_message_metadata_passthrough":{"turn_id":"t"},
                "encrypted_content":"ENC",
                "summary":[{"type":"summary_text","text":"one"},{"type":"summary_text","text":"two"}],
                "id":"rs_1",
                "type":"reasoning"
            }),
            r#"{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"one"},{"type":"summary_text","text":"two"}],"content":null,"encrypted_content":"ENC","internal_chat_message_metadata_passthrough":{"turn_id":"t"}}"#,
        ),
    ]);
}

#[test]
fn local_shell_call_item() {
    assert_item_cases(vec![
        (
            json!({"type":"local_shell_call","call_id":null,"status":"in_progress","action":{"type":"exec","command":[]}}),
            r#"{"type":"local_shell_call","call_id":null,"status":"in_progress","action":{"type":"exec","command":[],"timeout_ms":null,"working_directory":null,"env":null,"user":null}}"#,
        ),
        (
            json!({
                "type":"local_shell_call",
                "action":{"user":"root","env":{"B":"2","A":"1"},"working_directory":"/tmp","timeout_ms":1000,"command":["ls","-l"],"type":"exec"},
                "status":"incomplete","call_id":"c1","id":"lsh_1",
                "internal_chat_message_metadata_passthrough":{"turn_id":"t"}
            }),
            r#"{"type":"local_shell_call","id":"lsh_1","call_id":"c1","status":"incomplete","action":{"type":"exec","command":["ls","-l"],"timeout_ms":1000,"working_directory":"/tmp","env":{"B":"2","A":"1"},"user":"root"},"internal_chat_message_metadata_passthrough":{"turn_id":"t"}}"#,
        ),
    ]);
}

/// `namespace` omitted when None; `encrypted_function_args` omitted when None but an empty
/// list is an explicit marker and stays.
#[test]
fn function_call_item() {
    assert_item_cases(vec![
        (
            json!({"type":"function_call","name":"shell","arguments":"{\"cmd\":[\"ls\"]}","call_id":"c1"}),
            r#"{"type":"function_call","name":"shell","arguments":"{\"cmd\":[\"ls\"]}","call_id":"c1"}"#,
        ),
        (
            json!({
                "call_id":"c1","encrypted_function_args":[],"arguments":"{}","namespace":"functions",
                "name":"exec","id":"fc_1","type":"function_call",
                "internal_chat_message_metadata_passthrough":{"turn_id":"t"}
            }),
            r#"{"type":"function_call","id":"fc_1","name":"exec","namespace":"functions","arguments":"{}","encrypted_function_args":[],"call_id":"c1","internal_chat_message_metadata_passthrough":{"turn_id":"t"}}"#,
        ),
        (
            json!({"type":"function_call","name":"login","arguments":"{\"password\":\"x\"}","encrypted_function_args":["password"],"call_id":"c2"}),
            r#"{"type":"function_call","name":"login","arguments":"{\"password\":\"x\"}","encrypted_function_args":["password"],"call_id":"c2"}"#,
        ),
    ]);
}

#[test]
fn tool_search_call_item() {
    assert_item_cases(vec![
        (
            json!({"type":"tool_search_call","execution":"server","arguments":null}),
            r#"{"type":"tool_search_call","call_id":null,"execution":"server","arguments":null}"#,
        ),
        (
            json!({"arguments":"calendar","execution":"server","status":"completed","call_id":"s1","id":"tsc_1","type":"tool_search_call"}),
            r#"{"type":"tool_search_call","id":"tsc_1","call_id":"s1","status":"completed","execution":"server","arguments":"calendar"}"#,
        ),
    ]);
}

/// C: `call_id`, `name` and `namespace` are optional and omitted when None; `output` is a string
/// or an array.
#[test]
fn function_call_output_item() {
    assert_item_cases(vec![
        (
            json!({"type":"function_call_output","output":"ok"}),
            r#"{"type":"function_call_output","output":"ok"}"#,
        ),
        (
            json!({
                "output":"ok","namespace":"functions","name":"exec","call_id":"c1","id":"fco_1",
                "type":"function_call_output",
                "internal_chat_message_metadata_passthrough":{"turn_id":"t"}
            }),
            r#"{"type":"function_call_output","id":"fco_1","call_id":"c1","name":"exec","namespace":"functions","output":"ok","internal_chat_message_metadata_passthrough":{"turn_id":"t"}}"#,
        ),
        (
            json!({"type":"function_call_output","call_id":"c1","output":[
                {"type":"input_text","text":"see"},
                {"type":"input_image","image_url":"data:x"},
                {"type":"encrypted_content","encrypted_content":"E"}
            ]}),
            r#"{"type":"function_call_output","call_id":"c1","output":[{"type":"input_text","text":"see"},{"type":"input_image","image_url":"data:x"},{"type":"encrypted_content","encrypted_content":"E"}]}"#,
        ),
        (
            json!({"type":"function_call_output","call_id":"c1","output":""}),
            r#"{"type":"function_call_output","call_id":"c1","output":""}"#,
        ),
        (
            json!({"type":"function_call_output","call_id":"c1","output":[]}),
            r#"{"type":"function_call_output","call_id":"c1","output":[]}"#,
        ),
    ]);
}

#[test]
fn custom_tool_call_item() {
    assert_item_cases(vec![
        (
            json!({"type":"custom_tool_call","call_id":"c","name":"apply_patch","input":"*** Begin Patch"}),
            r#"{"type":"custom_tool_call","call_id":"c","name":"apply_patch","input":"*** Begin Patch"}"#,
        ),
        (
            json!({
                "input":"x","namespace":"functions","name":"exec","call_id":"c","status":"completed",
                "id":"ctc_1","type":"custom_tool_call",
                "internal_chat_message_metadata_passthrough":{"turn_id":"t"}
            }),
            r#"{"type":"custom_tool_call","id":"ctc_1","status":"completed","call_id":"c","name":"exec","namespace":"functions","input":"x","internal_chat_message_metadata_passthrough":{"turn_id":"t"}}"#,
        ),
    ]);
}

#[test]
fn custom_tool_call_output_item() {
    assert_item_cases(vec![
        (
            json!({"type":"custom_tool_call_output","call_id":"c","output":"done"}),
            r#"{"type":"custom_tool_call_output","call_id":"c","output":"done"}"#,
        ),
        (
            json!({
                "output":[{"type":"input_image","image_url":"data:y","detail":"low"}],
                "name":"apply_patch","call_id":"c","id":"ctco_1","type":"custom_tool_call_output",
                "internal_chat_message_metadata_passthrough":{"turn_id":"t"}
            }),
            r#"{"type":"custom_tool_call_output","id":"ctco_1","call_id":"c","name":"apply_patch","output":[{"type":"input_image","image_url":"data:y","detail":"low"}],"internal_chat_message_metadata_passthrough":{"turn_id":"t"}}"#,
        ),
    ]);
}

#[test]
fn tool_search_output_item() {
    assert_item_cases(vec![(
        json!({
            "tools":[{"type":"function","name":"calendar_create","parameters":{"type":"object"}}],
            "execution":"client","status":"completed","call_id":"s1","id":"tso_1",
            "type":"tool_search_output"
        }),
        // The found tools are kept as given (not normalised into ToolSpec).
        r#"{"type":"tool_search_output","id":"tso_1","call_id":"s1","status":"completed","execution":"client","tools":[{"type":"function","name":"calendar_create","parameters":{"type":"object"}}]}"#,
    )]);
}

#[test]
fn web_search_call_item() {
    assert_item_cases(vec![
        (
            json!({"type":"web_search_call"}),
            r#"{"type":"web_search_call"}"#,
        ),
        (
            json!({"action":{"type":"search","query":"q"},"status":"completed","id":"ws_1","type":"web_search_call","internal_chat_message_metadata_passthrough":{"turn_id":"t"}}),
            r#"{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"q"},"internal_chat_message_metadata_passthrough":{"turn_id":"t"}}"#,
        ),
        (
            // Actions of unknown type are kept as given.
            json!({"type":"web_search_call","status":"completed","action":{"type":"screenshot","url":"https://example.com","zoom":2}}),
            r#"{"type":"web_search_call","status":"completed","action":{"type":"screenshot","url":"https://example.com","zoom":2}}"#,
        ),
    ]);
}

#[test]
fn image_generation_call_item() {
    assert_item_cases(vec![
        (
            json!({"type":"image_generation_call","status":"generating","result":""}),
            r#"{"type":"image_generation_call","status":"generating","result":""}"#,
        ),
        (
            json!({"result":"iVBOR","revised_prompt":"a cat","status":"completed","id":"ig_1","type":"image_generation_call","internal_chat_message_metadata_passthrough":{"turn_id":"t"}}),
            r#"{"type":"image_generation_call","id":"ig_1","status":"completed","revised_prompt":"a cat","result":"iVBOR","internal_chat_message_metadata_passthrough":{"turn_id":"t"}}"#,
        ),
    ]);
}

#[test]
fn compaction_items_and_alias() {
    assert_item_cases(vec![
        (
            json!({"type":"compaction","encrypted_content":"abc"}),
            r#"{"type":"compaction","encrypted_content":"abc"}"#,
        ),
        (
            json!({"type":"compaction_summary","encrypted_content":"abc"}),
            r#"{"type":"compaction","encrypted_content":"abc"}"#,
        ),
        (
            json!({"internal_chat_message_metadata_passthrough":{"turn_id":"t"},"encrypted_content":"abc","id":"cmp_1","type":"compaction_summary"}),
            r#"{"type":"compaction","id":"cmp_1","encrypted_content":"abc","internal_chat_message_metadata_passthrough":{"turn_id":"t"}}"#,
        ),
        (
            json!({"type":"context_compaction"}),
            r#"{"type":"context_compaction"}"#,
        ),
        (
            json!({"encrypted_content":"abc","id":"cmp_2","type":"context_compaction"}),
            r#"{"type":"context_compaction","id":"cmp_2","encrypted_content":"abc"}"#,
        ),
        (
            json!({"type":"compaction_trigger"}),
            r#"{"type":"compaction_trigger"}"#,
        ),
        (
            json!({"type":"configuration_update","reasoning":{"effort":"high"}}),
            r#"{"type":"configuration_update","reasoning":{"effort":"high"}}"#,
        ),
    ]);
    let alias =
        ResponseItem::from_value(json!({"type":"compaction_summary","encrypted_content":"abc"}))
            .expect("alias parses");
    assert_eq!(alias.type_name(), "compaction");
    assert_eq!(
        ResponseItem::CompactionTrigger.type_name(),
        "compaction_trigger"
    );
}

/// Unknown item types are `Other`, kept verbatim (nested key order included); so is a
/// `compaction_trigger` that carries a payload, and an "easy input" message without a type.
#[test]
fn unknown_items_are_kept_verbatim() {
    let cases = [
        json!({"type":"ghost_snapshot","ghost_commit":{"id":"abc","parent":null,"preexisting_untracked_files":[]}}),
        json!({"type":"future_item","z":1,"a":{"y":[3,2,1],"b":null},"m":"x"}),
        json!({"type":"compaction_trigger","reason":"manual"}),
        json!({"type":"mcp_call","id":"mcp_1","server_label":"s","name":"n","arguments":"{}"}),
        json!({"role":"user","content":"hello"}),
    ];
    for case in cases {
        let parsed = ResponseItem::from_value(case.clone()).expect("item parses");
        let Value::Object(expected) = case.clone() else {
            panic!("case is an object");
        };
        assert_eq!(parsed, ResponseItem::Other(expected));
        assert_eq!(
            serde_json::to_string(&parsed).expect("json"),
            serde_json::to_string(&case).expect("json")
        );
    }
    let ghost = ResponseItem::from_value(json!({"type":"ghost_snapshot","ghost_commit":{}}))
        .expect("item parses");
    assert_eq!(ghost.type_name(), "ghost_snapshot");
    assert_eq!(
        ResponseItem::from_value(json!({"type":"mcp_call","id":"mcp_1"}))
            .expect("item parses")
            .id(),
        Some("mcp_1")
    );
}

/// serde's `Deserialize` goes through the same parser as `from_value`.
#[test]
fn items_deserialize_from_a_json_array() {
    let text = r#"[
        {"type":"compaction_summary","encrypted_content":"abc"},
        {"type":"reasoning","summary":[]},
        {"type":"brand_new","x":1}
    ]"#;
    let items: Vec<ResponseItem> = serde_json::from_str(text).expect("items parse");
    assert_eq!(
        serde_json::to_string(&items).expect("json"),
        r#"[{"type":"compaction","encrypted_content":"abc"},{"type":"reasoning","summary":[],"content":null,"encrypted_content":null},{"type":"brand_new","x":1}]"#
    );
}

/// A known type with a missing or mistyped field is an error naming the field.
#[test]
fn malformed_items_are_errors() {
    let cases = [
        json!({"type":"function_call","name":"x","arguments":"{}"}),
        json!({"type":"function_call","name":"x","arguments":{"a":1},"call_id":"c"}),
        json!({"type":"message","content":[]}),
        json!({"type":"compaction"}),
        json!({"type":"local_shell_call","status":"completed","action":{"type":"exec"}}),
        json!({"content":"hello"}),
        json!(["not", "an", "object"]),
        json!("message"),
    ];
    let actual: Vec<Result<String, String>> = cases
        .iter()
        .map(|c| ResponseItem::from_value(c.clone()).map(|i| format!("{i:?}")))
        .collect();
    assert_eq!(
        actual,
        vec![
            Err("missing field `call_id`".to_string()),
            Err("arguments: invalid type: map, expected a string".to_string()),
            Err("missing field `role`".to_string()),
            Err("missing field `encrypted_content`".to_string()),
            Err("action: missing field `command`".to_string()),
            Err("item has no string `type`".to_string()),
            Err("an item must be an object, got an array".to_string()),
            Err("an item must be an object, got a string".to_string()),
        ]
    );
}

/// `function_call_output.output` is a string or an array, never an object.
#[test]
fn tool_output_object_is_an_error() {
    let err = ResponseItem::from_value(json!({
        "type":"function_call_output","call_id":"c","output":{"content":"x"}
    }))
    .expect_err("an object output is rejected");
    assert_eq!(
        err,
        "output: data did not match any variant of untagged enum ToolOutput"
    );
}

/// The Prompt file names the JSON path of a bad item.
#[test]
fn prompt_file_names_the_bad_item_path() {
    let err = Prompt::from_json_str(
        r#"{"model":"gpt-5.4","input":[{"type":"message","role":"user","content":[]},{"type":"function_call","name":"x","arguments":"{}"}]}"#,
    )
    .expect_err("bad item");
    assert_eq!(err.to_string(), "input[1].call_id: missing field `call_id`");
}

// ---------------------------------------------------------------------------------------------
// ContentItem
// ---------------------------------------------------------------------------------------------

#[test]
fn content_item_variants() {
    let cases = [
        (
            json!({"type":"input_text","text":"hi"}),
            r#"{"type":"input_text","text":"hi"}"#,
        ),
        (
            json!({"type":"input_image","image_url":"https://example.com/a.png"}),
            r#"{"type":"input_image","image_url":"https://example.com/a.png"}"#,
        ),
        (
            json!({"detail":"original","image_url":"data:image/png;base64,AAA","type":"input_image"}),
            r#"{"type":"input_image","image_url":"data:image/png;base64,AAA","detail":"original"}"#,
        ),
        (
            json!({"type":"input_image","image_url":"data:x","detail":null}),
            r#"{"type":"input_image","image_url":"data:x"}"#,
        ),
        (
            json!({"type":"output_text","text":"ok"}),
            r#"{"type":"output_text","text":"ok"}"#,
        ),
        (
            // Unmodelled fields (annotations, logprobs) are kept.
            json!({"type":"output_text","text":"ok","annotations":[],"logprobs":[]}),
            r#"{"type":"output_text","text":"ok","annotations":[],"logprobs":[]}"#,
        ),
        (
            json!({"type":"input_audio","audio_url":"data:audio/wav;base64,UklG"}),
            r#"{"type":"input_audio","audio_url":"data:audio/wav;base64,UklG"}"#,
        ),
        (
            json!({"type":"encrypted_content","encrypted_content":"E"}),
            r#"{"type":"encrypted_content","encrypted_content":"E"}"#,
        ),
        (
            json!({"type":"input_file","file_id":"file_1","filename":"a.pdf"}),
            r#"{"type":"input_file","file_id":"file_1","filename":"a.pdf"}"#,
        ),
    ];
    let actual: Vec<String> = cases
        .iter()
        .map(|(i, _)| content_roundtrip(i.clone()))
        .collect();
    let expected: Vec<String> = cases.iter().map(|(_, e)| (*e).to_string()).collect();
    assert_eq!(actual, expected);

    let unknown = ContentItem::from_value(json!({"type":"input_file","file_id":"file_1"}))
        .expect("content parses");
    let Value::Object(expected_map) = json!({"type":"input_file","file_id":"file_1"}) else {
        panic!("object");
    };
    assert_eq!(unknown, ContentItem::Other(expected_map));

    let parts = [
        ContentItem::from_value(json!({"type":"input_text","text":"a"})).expect("parses"),
        ContentItem::from_value(json!({"type":"output_text","text":"b"})).expect("parses"),
        ContentItem::from_value(json!({"type":"input_image","image_url":"c"})).expect("parses"),
    ];
    let texts: Vec<Option<&str>> = parts.iter().map(ContentItem::text).collect();
    assert_eq!(texts, vec![Some("a"), Some("b"), None]);
}

#[test]
fn malformed_content_items_are_errors() {
    let cases = [
        json!({"type":"input_image"}),
        json!({"type":"input_text","text":5}),
        json!({"text":"no type"}),
        json!(7),
    ];
    let actual: Vec<Result<String, String>> = cases
        .iter()
        .map(|c| ContentItem::from_value(c.clone()).map(|p| format!("{p:?}")))
        .collect();
    assert_eq!(
        actual,
        vec![
            Err("missing field `image_url`".to_string()),
            Err("text: invalid type: integer `5`, expected a string".to_string()),
            Err("content part has no string `type`".to_string()),
            Err("a content part must be an object, got a number".to_string()),
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// ToolSpec
// ---------------------------------------------------------------------------------------------

#[test]
fn function_tool() {
    assert_tool_cases(vec![
        (
            json!({"type":"function","name":"f","parameters":{"type":"object"}}),
            r#"{"type":"function","name":"f","description":"","strict":false,"parameters":{"type":"object"}}"#,
        ),
        (
            json!({"parameters":{"type":"object","properties":{}},"defer_loading":true,"strict":true,"description":"d","name":"f","type":"function"}),
            r#"{"type":"function","name":"f","description":"d","strict":true,"defer_loading":true,"parameters":{"type":"object","properties":{}}}"#,
        ),
        (
            // `defer_loading` is only ever sent as true.
            json!({"type":"function","name":"f","description":"d","strict":false,"defer_loading":false,"parameters":{"type":"object"}}),
            r#"{"type":"function","name":"f","description":"d","strict":false,"parameters":{"type":"object"}}"#,
        ),
        (
            // The JSON Schema is kept verbatim, its key order included.
            json!({"type":"function","name":"f","description":"d","strict":false,"parameters":{"type":"object","additionalProperties":false,"required":["b","a"],"properties":{"b":{"type":"string"},"a":{"type":"number"}}}}),
            r#"{"type":"function","name":"f","description":"d","strict":false,"parameters":{"type":"object","additionalProperties":false,"required":["b","a"],"properties":{"b":{"type":"string"},"a":{"type":"number"}}}}"#,
        ),
    ]);
}

#[test]
fn other_tool_variants() {
    assert_tool_cases(vec![
        (
            json!({"tools":[{"type":"function","name":"g","description":"G","strict":false,"parameters":{"type":"object"}},{"type":"custom","name":"exec","description":"E","format":{"type":"grammar","syntax":"lark","definition":"start: /.+/"}}],"description":"Tools","name":"functions","type":"namespace"}),
            r#"{"type":"namespace","name":"functions","description":"Tools","tools":[{"type":"function","name":"g","description":"G","strict":false,"parameters":{"type":"object"}},{"type":"custom","name":"exec","description":"E","format":{"type":"grammar","syntax":"lark","definition":"start: /.+/"}}]}"#,
        ),
        (
            json!({"parameters":{"type":"object"},"description":"Search","execution":"client","type":"tool_search"}),
            r#"{"type":"tool_search","execution":"client","description":"Search","parameters":{"type":"object"}}"#,
        ),
        (
            json!({"type":"image_generation","output_format":"png"}),
            r#"{"type":"image_generation","output_format":"png"}"#,
        ),
        (
            json!({"type":"image_generation"}),
            r#"{"type":"image_generation"}"#,
        ),
        (json!({"type":"web_search"}), r#"{"type":"web_search"}"#),
        (
            json!({"type":"web_search","search_context_size":"low","index_gated_web_access":false}),
            r#"{"type":"web_search","index_gated_web_access":false,"search_context_size":"low"}"#,
        ),
        (
            json!({"format":{"type":"grammar","syntax":"lark","definition":"start: /.+/"},"description":"Apply a patch","name":"apply_patch","type":"custom"}),
            r#"{"type":"custom","name":"apply_patch","description":"Apply a patch","format":{"type":"grammar","syntax":"lark","definition":"start: /.+/"}}"#,
        ),
        (json!({"type":"local_shell"}), r#"{"type":"local_shell"}"#),
        (
            // Unknown tool types are kept verbatim.
            json!({"type":"file_search","vector_store_ids":["vs_1"],"max_num_results":5}),
            r#"{"type":"file_search","vector_store_ids":["vs_1"],"max_num_results":5}"#,
        ),
        (
            json!({"type":"local_shell","with":"payload"}),
            r#"{"type":"local_shell","with":"payload"}"#,
        ),
    ]);
    let kinds: Vec<String> = [
        json!({"type":"function","name":"f","parameters":{}}),
        json!({"type":"namespace","name":"n","tools":[]}),
        json!({"type":"tool_search","execution":"sync","parameters":{}}),
        json!({"type":"image_generation"}),
        json!({"type":"web_search"}),
        json!({"type":"custom","name":"c","format":{}}),
        json!({"type":"local_shell"}),
        json!({"type":"file_search"}),
    ]
    .into_iter()
    .map(|v| {
        let t = ToolSpec::from_value(v).expect("tool parses");
        format!("{}:{:?}:{}", t.type_name(), t.name(), t.is_hosted())
    })
    .collect();
    assert_eq!(
        kinds,
        vec![
            "function:Some(\"f\"):false",
            "namespace:Some(\"n\"):false",
            "tool_search:None:false",
            "image_generation:None:true",
            "web_search:None:true",
            "custom:Some(\"c\"):false",
            "local_shell:None:false",
            "file_search:None:false",
        ]
    );
}

/// A `function`, `custom` or `namespace` tool without a (non-blank) name is an error, also for a
/// namespace member, and the Prompt file names its JSON path.
#[test]
fn tool_without_a_name_is_an_error() {
    let cases = [
        json!({"type":"function","parameters":{"type":"object"}}),
        json!({"type":"function","name":"","parameters":{"type":"object"}}),
        json!({"type":"custom","name":"  ","format":{}}),
        json!({"type":"namespace","tools":[]}),
        json!({"type":"namespace","name":"ns","tools":[{"type":"function","parameters":{}}]}),
        json!({"type":"function","name":"f"}),
        json!({"name":"f","parameters":{}}),
        json!("function"),
    ];
    let actual: Vec<Result<String, String>> = cases
        .iter()
        .map(|c| ToolSpec::from_value(c.clone()).map(|t| format!("{t:?}")))
        .collect();
    assert_eq!(
        actual,
        vec![
            Err("name: function tool has no `name`".to_string()),
            Err("name: function tool has an empty `name`".to_string()),
            Err("name: custom tool has an empty `name`".to_string()),
            Err("name: namespace tool has no `name`".to_string()),
            Err("tools[0]: name: function tool has no `name`".to_string()),
            Err("missing field `parameters`".to_string()),
            Err("tool has no string `type`".to_string()),
            Err("a tool must be an object, got a string".to_string()),
        ]
    );

    let err = Prompt::from_json_str(
        r#"{"model":"gpt-5.4","tools":[{"type":"function","name":"ok","parameters":{}},{"type":"function","parameters":{}}]}"#,
    )
    .expect_err("nameless tool");
    assert_eq!(
        err.to_string(),
        "tools[1].name: function tool has no `name`"
    );
}

#[test]
fn tools_deserialize_from_a_json_array() {
    let text = r#"[{"type":"web_search"},{"name":"f","type":"function","parameters":{}},{"type":"x_tool","a":1}]"#;
    let tools: Vec<ToolSpec> = serde_json::from_str(text).expect("tools parse");
    assert_eq!(
        serde_json::to_string(&tools).expect("json"),
        r#"[{"type":"web_search"},{"type":"function","name":"f","description":"","strict":false,"parameters":{}},{"type":"x_tool","a":1}]"#
    );
}
