//! Cache-prefix analysis on hand-made sessions: one pair per cause and per warning, key order as
//! sent (a tool schema with its keys reversed breaks), base instructions as the first input
//! message, a standard → Lite switch, a compaction that rewrites history, a compaction request,
//! non-consecutive pairs and bad input. Every assertion compares the whole pair report.

use pretty_assertions::assert_eq;
use promptwire::core::prefix::canon::canonical_json;
use promptwire::core::prefix::{
    Break, BreakAt, Cause, ChangeKind, PairReport, PrefixError, RequestMeta, Session, Tokenizer,
    Warning,
};
use serde_json::{Value, json};

fn msg(role: &str, text: &str) -> Value {
    json!({"type": "message", "role": role, "content": [{"type": "input_text", "text": text}]})
}

fn call(call_id: &str, cmd: &str) -> Value {
    json!({"type": "function_call", "name": "shell", "arguments": format!("{{\"cmd\":\"{cmd}\"}}"), "call_id": call_id})
}

fn output(call_id: &str, text: &str) -> Value {
    json!({"type": "function_call_output", "call_id": call_id, "output": text})
}

fn tool(name: &str, description: &str) -> Value {
    json!({
        "type": "function",
        "name": name,
        "description": description,
        "strict": false,
        "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}
    })
}

const INSTRUCTIONS: &str = "You are a terse build assistant. Prefer small, reversible steps.";

/// A standard body in Codex 0.169 key order, with top-level instructions.
fn standard(items: &[Value]) -> Value {
    json!({
        "model": "gpt-5.5",
        "instructions": INSTRUCTIONS,
        "stream": true,
        "input": items,
        "tools": [tool("shell", "Run a command."), tool("read_file", "Read a file.")],
        "tool_choice": "auto",
        "parallel_tool_calls": true,
        "reasoning": {"effort": "medium"},
        "store": false,
        "include": ["reasoning.encrypted_content"],
        "prompt_cache_key": "thread-7",
        "text": {"verbosity": "low"},
        "client_metadata": {"session_id": "s-7", "turn_id": "t-1"}
    })
}

/// The Lite form of the same conversation (WIRE_SPEC §6): tools and instructions as items.
fn lite(items: &[Value]) -> Value {
    let mut input = vec![
        json!({"type": "additional_tools", "role": "developer", "tools": [{
            "type": "namespace",
            "name": "functions",
            "description": "Tools.",
            "tools": [tool("shell", "Run a command."), tool("read_file", "Read a file.")]
        }]}),
        msg("developer", INSTRUCTIONS),
    ];
    input.extend(items.iter().cloned());
    json!({
        "model": "gpt-5.5",
        "stream": true,
        "input": input,
        "tool_choice": "auto",
        "parallel_tool_calls": false,
        "reasoning": {"effort": "medium"},
        "store": false,
        "include": ["reasoning.encrypted_content"],
        "prompt_cache_key": "thread-7",
        "text": {"verbosity": "low"},
        "client_metadata": {"session_id": "s-7", "turn_id": "t-1"}
    })
}

/// Sets (or adds) the value at a JSON pointer whose parent exists.
fn set(mut body: Value, pointer: &str, value: Value) -> Value {
    let (parent, key) = pointer.rsplit_once('/').expect("pointer");
    let target = body.pointer_mut(parent).expect("parent exists");
    match target {
        Value::Object(map) => {
            map.insert(key.to_string(), value);
        }
        Value::Array(items) => {
            let i: usize = key.parse().expect("index");
            items[i] = value;
        }
        _ => panic!("cannot set inside a scalar"),
    }
    body
}

fn turn1() -> Vec<Value> {
    vec![
        msg("user", "List the crates in this workspace."),
        call("call_1", "ls crates"),
        output("call_1", "core\ncli\nui\n"),
    ]
}

fn turn2() -> Vec<Value> {
    let mut items = turn1();
    items.push(msg("assistant", "Three crates: core, cli and ui."));
    items.push(msg("user", "Which one has the most tests?"));
    items
}

/// The body's elements in prompt order, written out independently of the library.
fn elements(body: &Value) -> Vec<Value> {
    let get = |k: &str| body.get(k).cloned();
    let input = body["input"].as_array().cloned().unwrap_or_default();
    let is_lite = input.first().and_then(|i| i.get("type")) == Some(&json!("additional_tools"));
    let mut out: Vec<Value> = ["model", "reasoning", "text", "truncation", "tools"]
        .iter()
        .filter_map(|k| get(k))
        .collect();
    let mut rest = input.as_slice();
    if is_lite {
        out.push(rest[0].clone());
        rest = &rest[1..];
    }
    out.extend(
        ["parallel_tool_calls", "tool_choice", "instructions"]
            .iter()
            .filter_map(|k| get(k)),
    );
    if is_lite {
        out.push(rest[0].clone());
        rest = &rest[1..];
    }
    out.extend(rest.iter().cloned());
    out
}

/// (bytes, tokens) of elements: compact JSON as sent, its length and o200k tokens.
fn cost(elements: &[Value]) -> (u64, u64) {
    let tokenizer = Tokenizer::o200k();
    elements.iter().fold((0, 0), |(b, t), e| {
        let text = serde_json::to_string(e).expect("serialize");
        (b + text.len() as u64, t + tokenizer.count(&text))
    })
}

/// The expected report for `a` → `b` when the first `kept` elements of `a` are reusable.
fn expected(
    (from, a): (usize, &Value),
    (to, b): (usize, &Value),
    kept: usize,
    break_at: Option<Break>,
    causes: Vec<Cause>,
    warnings: Vec<Warning>,
) -> PairReport {
    let (reusable_bytes, reusable_tokens) = cost(&elements(a)[..kept]);
    PairReport {
        from,
        to,
        prefix_kept: break_at.is_none(),
        break_at,
        causes,
        warnings,
        reusable_bytes,
        reusable_tokens,
        from_tokens: cost(&elements(a)).1,
        to_tokens: cost(&elements(b)).1,
        idle_gap_secs: None,
        reported_cached_tokens: None,
        warmup: false,
        undetermined: None,
    }
}

/// A break where a value changed, with no derived field changed with it.
fn brk(at: BreakAt, index: Option<usize>, path: &str) -> Option<Break> {
    brk_kind(at, index, path, ChangeKind::Value)
}

fn brk_kind(at: BreakAt, index: Option<usize>, path: &str, change: ChangeKind) -> Option<Break> {
    Some(Break {
        at,
        index,
        path: Some(path.to_string()),
        change,
        also_changed: Vec::new(),
    })
}

fn session(bodies: &[&Value]) -> Session {
    let mut session = Session::default();
    for body in bodies {
        session
            .push_body(body, RequestMeta::default())
            .expect("valid body");
    }
    session
}

/// Compares the two bodies as requests 0 and 1.
fn pair(a: &Value, b: &Value) -> PairReport {
    session(&[a, b]).compare(0, 1).expect("pair")
}

#[test]
fn appended_items_keep_the_whole_prefix() {
    let a = standard(&turn1());
    let b = standard(&turn2());
    let n = elements(&a).len();
    assert_eq!(
        pair(&a, &b),
        expected((0, &a), (1, &b), n, None, vec![], vec![])
    );
}

#[test]
fn fields_outside_the_rendering_never_break() {
    let a = standard(&turn1());
    // stream/store/include changed, client_metadata in another key order: not the prompt.
    let b = set(
        set(
            set(
                set(standard(&turn2()), "/stream", json!(false)),
                "/store",
                json!(true),
            ),
            "/include",
            json!([]),
        ),
        "/client_metadata",
        json!({"turn_id": "t-1", "session_id": "s-7"}),
    );
    let n = elements(&a).len();
    assert_eq!(
        pair(&a, &b),
        expected((0, &a), (1, &b), n, None, vec![], vec![])
    );
}

#[test]
fn key_order_inside_the_prompt_breaks() {
    let a = standard(&turn1());
    // The same values, every map of the body in sorted key order: the server renders another
    // prompt from the first element whose keys moved (`reasoning` and `text` have one key each
    // and stay; the tool schemas do not).
    let sorted: Value = serde_json::from_str(&canonical_json(&standard(&turn2()))).expect("json");
    assert_eq!(
        pair(&a, &sorted),
        expected(
            (0, &a),
            (1, &sorted),
            3,
            brk_kind(
                BreakAt::Tools,
                None,
                "/tools/0/description",
                ChangeKind::KeyOrder
            ),
            vec![Cause::ToolsChanged, Cause::InputItemEdited],
            vec![]
        )
    );
}

/// A tool with its keys in reverse order, nested schemas included.
fn reversed_keys(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .rev()
                .map(|(k, v)| (k.clone(), reversed_keys(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(reversed_keys).collect()),
        other => other.clone(),
    }
}

#[test]
fn tool_schema_key_order_reversed_breaks_at_that_tool() {
    let a = standard(&turn1());
    // The usual MCP trap: the server lists the same tool with its keys in another order.
    let b = set(
        standard(&turn2()),
        "/tools/1",
        reversed_keys(&tool("read_file", "Read a file.")),
    );
    assert_eq!(
        b["tools"][1],
        tool("read_file", "Read a file."),
        "equal as maps"
    );
    assert_eq!(
        pair(&a, &b),
        expected(
            (0, &a),
            (1, &b),
            3,
            brk_kind(
                BreakAt::Tools,
                None,
                "/tools/1/parameters",
                ChangeKind::KeyOrder
            ),
            vec![Cause::ToolsChanged],
            vec![]
        )
    );
    // The same in a Lite tool namespace.
    let c = lite(&turn1());
    let d = set(
        lite(&turn2()),
        "/input/0/tools/0/tools/0",
        reversed_keys(&tool("shell", "Run a command.")),
    );
    assert_eq!(
        pair(&c, &d),
        expected(
            (0, &c),
            (1, &d),
            3,
            brk_kind(
                BreakAt::Tools,
                None,
                "/input/0/tools/0/tools/0/parameters",
                ChangeKind::KeyOrder
            ),
            vec![Cause::ToolsChanged],
            vec![]
        )
    );
}

#[test]
fn model_changed() {
    let a = standard(&turn1());
    let b = set(standard(&turn2()), "/model", json!("gpt-5.5-mini"));
    assert_eq!(
        pair(&a, &b),
        expected(
            (0, &a),
            (1, &b),
            0,
            brk(BreakAt::Model, None, "/model"),
            vec![Cause::ModelChanged],
            vec![]
        )
    );
}

#[test]
fn reasoning_changed() {
    let a = standard(&turn1());
    let b = set(standard(&turn2()), "/reasoning/effort", json!("high"));
    assert_eq!(
        pair(&a, &b),
        expected(
            (0, &a),
            (1, &b),
            1,
            brk(BreakAt::Reasoning, None, "/reasoning/effort"),
            vec![Cause::ReasoningChanged],
            vec![]
        )
    );
}

#[test]
fn text_changed_by_verbosity_or_another_rendered_setting() {
    let a = standard(&turn1());
    let b = set(standard(&turn2()), "/text/verbosity", json!("high"));
    assert_eq!(
        pair(&a, &b),
        expected(
            (0, &a),
            (1, &b),
            2,
            brk(BreakAt::Text, None, "/text/verbosity"),
            vec![Cause::TextChanged],
            vec![]
        )
    );
    // A top-level setting the analysis does not know stays in the rendering, at `text`.
    let c = set(standard(&turn2()), "/truncation", json!("auto"));
    assert_eq!(
        pair(&a, &c),
        expected(
            (0, &a),
            (1, &c),
            3,
            brk_kind(BreakAt::Text, None, "/truncation", ChangeKind::Added),
            vec![Cause::TextChanged],
            vec![]
        )
    );
}

#[test]
fn tools_changed_by_an_edit_or_a_tool_setting() {
    let a = standard(&turn1());
    let b = set(
        standard(&turn2()),
        "/tools/1/description",
        json!("Read a file, or part of it."),
    );
    assert_eq!(
        pair(&a, &b),
        expected(
            (0, &a),
            (1, &b),
            3,
            brk(BreakAt::Tools, None, "/tools/1/description"),
            vec![Cause::ToolsChanged],
            vec![]
        )
    );
    let c = set(standard(&turn2()), "/parallel_tool_calls", json!(false));
    assert_eq!(
        pair(&a, &c),
        expected(
            (0, &a),
            (1, &c),
            4,
            brk(BreakAt::Tools, None, "/parallel_tool_calls"),
            vec![Cause::ToolsChanged],
            vec![]
        )
    );
}

#[test]
fn tools_reordered() {
    let a = standard(&turn1());
    let b = set(
        standard(&turn2()),
        "/tools",
        json!([
            tool("read_file", "Read a file."),
            tool("shell", "Run a command.")
        ]),
    );
    assert_eq!(
        pair(&a, &b),
        expected(
            (0, &a),
            (1, &b),
            3,
            brk(BreakAt::Tools, None, "/tools/0/name"),
            vec![Cause::ToolsReordered],
            vec![]
        )
    );
}

#[test]
fn instructions_changed() {
    let a = standard(&turn1());
    let b = set(
        standard(&turn2()),
        "/instructions",
        json!("You are a verbose assistant."),
    );
    assert_eq!(
        pair(&a, &b),
        expected(
            (0, &a),
            (1, &b),
            6,
            brk(BreakAt::Instructions, None, "/instructions"),
            vec![Cause::InstructionsChanged],
            vec![]
        )
    );
}

/// A body as Codex 0.169+ sends it for a standard model: no top-level `instructions`; the base
/// instructions are `input[0]`, a developer message whose id is derived from its text.
fn codex_standard(instructions: &str, id: &str, items: &[Value]) -> Value {
    let mut body = standard(items);
    let map = body.as_object_mut().expect("object");
    map.shift_remove("instructions");
    let mut input = vec![json!({
        "type": "message",
        "id": id,
        "role": "developer",
        "content": [{"type": "input_text", "text": instructions}]
    })];
    input.extend(items.iter().cloned());
    map.insert("input".to_string(), Value::Array(input));
    body
}

#[test]
fn instructions_edited_in_the_first_input_message() {
    let a = codex_standard(
        INSTRUCTIONS,
        "msg_5b1c0d3e-0000-5000-8000-000000000001",
        &turn1(),
    );
    let b = codex_standard(
        "You are a terse build assistant. Prefer large steps.",
        "msg_5b1c0d3e-0000-5000-8000-000000000002",
        &turn2(),
    );
    assert_eq!(
        pair(&a, &b),
        expected(
            (0, &a),
            (1, &b),
            6,
            Some(Break {
                at: BreakAt::Instructions,
                index: None,
                path: Some("/input/0/content/0/text".to_string()),
                change: ChangeKind::Value,
                also_changed: vec!["/input/0/id".to_string()],
            }),
            vec![Cause::InstructionsChanged],
            vec![]
        )
    );
    // Only the id changed: that is where it broke, and the text did not change (a new thread's
    // derived ids, not an edit of the instructions).
    let c = codex_standard(INSTRUCTIONS, "msg_other", &turn2());
    assert_eq!(
        pair(&a, &c),
        expected(
            (0, &a),
            (1, &c),
            6,
            brk(BreakAt::Instructions, None, "/input/0/id"),
            vec![Cause::DerivedIdsChanged],
            vec![]
        )
    );
    // A new sandbox policy appended as a developer message, as Codex does: nothing breaks.
    let mut items = turn2();
    items.push(msg(
        "developer",
        "<permissions instructions>workspace-write</permissions instructions>",
    ));
    let d = codex_standard(
        INSTRUCTIONS,
        "msg_5b1c0d3e-0000-5000-8000-000000000001",
        &items,
    );
    let n = elements(&a).len();
    assert_eq!(
        pair(&a, &d),
        expected((0, &a), (1, &d), n, None, vec![], vec![])
    );
}

#[test]
fn compaction_request_is_named() {
    let a = standard(&turn2());
    // Codex before a model switch: the same history, no tools, a handoff-summary prompt.
    let mut items = turn2();
    items.push(msg(
        "user",
        "You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary.",
    ));
    let b = set(
        set(
            set(standard(&items), "/tools", json!([])),
            "/parallel_tool_calls",
            json!(false),
        ),
        "/client_metadata",
        json!({"session_id": "s-7", "request_kind": "compaction"}),
    );
    assert_eq!(
        pair(&a, &b),
        expected(
            (0, &a),
            (1, &b),
            3,
            brk_kind(BreakAt::Tools, None, "/tools/0", ChangeKind::Removed),
            vec![Cause::ToolsChanged, Cause::CompactionRequest],
            vec![Warning::ClientMetadataChanged]
        )
    );
}

#[test]
fn input_item_edited() {
    let a = standard(&turn2());
    let mut items = turn2();
    items[2] = output("call_1", "core\ncli\n");
    items.push(msg("user", "And now?"));
    let b = standard(&items);
    assert_eq!(
        pair(&a, &b),
        expected(
            (0, &a),
            (1, &b),
            7 + 2,
            brk(BreakAt::Input, Some(2), "/input/2/output"),
            vec![Cause::InputItemEdited],
            vec![]
        )
    );
}

#[test]
fn input_items_removed() {
    let a = standard(&turn2());
    let mut items = turn2();
    items.drain(1..3);
    items.push(msg("user", "Shorter history now."));
    let b = standard(&items);
    assert_eq!(
        pair(&a, &b),
        expected(
            (0, &a),
            (1, &b),
            7 + 1,
            brk(BreakAt::Input, Some(1), "/input/1/type"),
            vec![Cause::InputItemsRemoved],
            vec![]
        )
    );
}

#[test]
fn compaction_rewrites_history() {
    let a = standard(&turn2());
    // Remote compaction v2 (WIRE_SPEC §11): user messages kept, then the compaction item.
    let b = standard(&[
        msg("user", "List the crates in this workspace."),
        msg("user", "Which one has the most tests?"),
        json!({"type": "compaction", "encrypted_content": "gAAAA-opaque-summary"}),
        msg("user", "Continue."),
    ]);
    assert_eq!(
        pair(&a, &b),
        expected(
            (0, &a),
            (1, &b),
            7 + 1,
            brk(BreakAt::Input, Some(1), "/input/1/type"),
            vec![Cause::InputRewritten],
            vec![]
        )
    );
}

#[test]
fn new_history_without_a_compaction_item_is_a_rewrite() {
    let a = standard(&turn2());
    let b = standard(&[
        msg("user", "List the crates in this workspace."),
        msg(
            "user",
            "Summary so far: three crates; the user asks about tests.",
        ),
    ]);
    assert_eq!(
        pair(&a, &b),
        expected(
            (0, &a),
            (1, &b),
            7 + 1,
            brk(BreakAt::Input, Some(1), "/input/1/type"),
            vec![Cause::InputRewritten],
            vec![]
        )
    );
}

#[test]
fn standard_to_lite_switch() {
    let a = standard(&turn1());
    let b = lite(&turn2());
    // Same model and reasoning: the tool list moved into `input[0]`.
    assert_eq!(
        pair(&a, &b),
        expected(
            (0, &a),
            (1, &b),
            3,
            brk_kind(BreakAt::Tools, None, "/tools", ChangeKind::Removed),
            vec![Cause::DialectChanged],
            vec![]
        )
    );
    // As Codex does it: a Lite model, which also sends `reasoning.context`.
    let c = set(
        set(lite(&turn2()), "/model", json!("gpt-6-sol")),
        "/reasoning",
        json!({"effort": "medium", "context": "all_turns"}),
    );
    assert_eq!(
        pair(&a, &c),
        expected(
            (0, &a),
            (1, &c),
            0,
            brk(BreakAt::Model, None, "/model"),
            vec![
                Cause::ModelChanged,
                Cause::ReasoningChanged,
                Cause::DialectChanged
            ],
            vec![]
        )
    );
}

#[test]
fn lite_prefix_items_count_as_tools_and_instructions() {
    let a = lite(&turn1());
    let tools_edit = set(
        lite(&turn2()),
        "/input/0/tools/0/tools/0/description",
        json!("Run one command."),
    );
    assert_eq!(
        pair(&a, &tools_edit),
        expected(
            (0, &a),
            (1, &tools_edit),
            3,
            brk(BreakAt::Tools, None, "/input/0/tools/0/tools/0/description"),
            vec![Cause::ToolsChanged],
            vec![]
        )
    );
    let reordered = set(
        lite(&turn2()),
        "/input/0/tools/0/tools",
        json!([
            tool("read_file", "Read a file."),
            tool("shell", "Run a command.")
        ]),
    );
    assert_eq!(
        pair(&a, &reordered),
        expected(
            (0, &a),
            (1, &reordered),
            3,
            brk(BreakAt::Tools, None, "/input/0/tools/0/tools/0/name"),
            vec![Cause::ToolsReordered],
            vec![]
        )
    );
    let instructions_edit = set(lite(&turn2()), "/input/1", msg("developer", "Be brief."));
    assert_eq!(
        pair(&a, &instructions_edit),
        expected(
            (0, &a),
            (1, &instructions_edit),
            6,
            brk(BreakAt::Instructions, None, "/input/1/content/0/text"),
            vec![Cause::InstructionsChanged],
            vec![]
        )
    );
    // An edited conversation item is reported at its index in the body.
    let mut items = turn2();
    items[0] = msg("user", "List the crates, please.");
    let item_edit = lite(&items);
    assert_eq!(
        pair(&a, &item_edit),
        expected(
            (0, &a),
            (1, &item_edit),
            7,
            brk(BreakAt::Input, Some(2), "/input/2/content/0/text"),
            vec![Cause::InputItemEdited],
            vec![]
        )
    );
}

#[test]
fn every_difference_is_a_cause_and_the_first_is_the_break() {
    let a = standard(&turn2());
    let mut items = turn2();
    items.remove(3);
    let b = set(
        set(standard(&items), "/text/verbosity", json!("medium")),
        "/instructions",
        json!("Other."),
    );
    assert_eq!(
        pair(&a, &b),
        expected(
            (0, &a),
            (1, &b),
            2,
            brk(BreakAt::Text, None, "/text/verbosity"),
            vec![
                Cause::TextChanged,
                Cause::InstructionsChanged,
                Cause::InputItemsRemoved
            ],
            vec![]
        )
    );
}

#[test]
fn prompt_cache_key_and_client_metadata_changes_are_warnings() {
    let a = standard(&turn1());
    let b = set(
        set(standard(&turn2()), "/prompt_cache_key", json!("thread-8")),
        "/client_metadata/turn_id",
        json!("t-2"),
    );
    let n = elements(&a).len();
    assert_eq!(
        pair(&a, &b),
        expected(
            (0, &a),
            (1, &b),
            n,
            None,
            vec![],
            vec![
                Warning::PromptCacheKeyChanged,
                Warning::ClientMetadataChanged
            ]
        )
    );
    // The same map in another key order is not a change.
    let c = set(
        standard(&turn2()),
        "/client_metadata",
        json!({"turn_id": "t-1", "session_id": "s-7"}),
    );
    assert_eq!(
        pair(&a, &c),
        expected((0, &a), (1, &c), n, None, vec![], vec![])
    );
}

#[test]
fn idle_gap_from_timestamps_and_retention() {
    let a = standard(&turn1());
    let b = standard(&turn2());
    let at = |sent: i64, finished: Option<i64>| RequestMeta {
        reported_cached_tokens: None,
        sent_at_ms: Some(sent),
        finished_at_ms: finished,
        ..RequestMeta::default()
    };
    let n = elements(&a).len();
    let run = |a: &Value, meta_a: RequestMeta, b: &Value, meta_b: RequestMeta| {
        let mut s = Session::default();
        s.push_body(a, meta_a).expect("a");
        s.push_body(b, meta_b).expect("b");
        s.compare(0, 1).expect("pair")
    };
    // Ten minutes after the previous response finished: past the default 5 minutes.
    let mut gap = expected((0, &a), (1, &b), n, None, vec![], vec![Warning::IdleGap]);
    gap.idle_gap_secs = Some(600);
    assert_eq!(run(&a, at(0, Some(30_000)), &b, at(630_000, None)), gap);
    // Four minutes: no warning, but the gap is reported.
    let mut short = expected((0, &a), (1, &b), n, None, vec![], vec![]);
    short.idle_gap_secs = Some(240);
    assert_eq!(run(&a, at(0, None), &b, at(240_000, None)), short);
    // Extended retention asked for by the earlier request.
    let a24 = set(a.clone(), "/prompt_cache_retention", json!("24h"));
    let mut long = expected((0, &a24), (1, &b), n, None, vec![], vec![]);
    long.idle_gap_secs = Some(7200);
    assert_eq!(run(&a24, at(0, None), &b, at(7_200_000, None)), long);
}

#[test]
fn any_two_requests_can_be_compared() {
    let a = standard(&turn1());
    let b = set(standard(&turn2()), "/reasoning/effort", json!("low"));
    let c = {
        let mut items = turn2();
        items.push(msg("user", "Thanks."));
        standard(&items)
    };
    let s = session(&[&a, &b, &c]);
    let n = elements(&a).len();
    assert_eq!(
        s.compare(0, 2).expect("0→2"),
        expected((0, &a), (2, &c), n, None, vec![], vec![])
    );
    assert_eq!(
        s.compare(2, 0).expect("2→0"),
        expected(
            (2, &c),
            (0, &a),
            7 + 3,
            brk_kind(BreakAt::Input, Some(3), "/input/3", ChangeKind::Removed),
            vec![Cause::InputItemsRemoved],
            vec![]
        )
    );
    assert_eq!(
        s.compare(0, 3),
        Err(PrefixError::NoSuchRequest { index: 3, len: 3 })
    );
}

#[test]
fn content_addressed_feed_matches_whole_bodies() {
    let bodies = [standard(&turn1()), standard(&turn2())];
    let whole = session(&[&bodies[0], &bodies[1]]);
    let mut fed = Session::default();
    for body in &bodies {
        let ids: Vec<_> = body["input"]
            .as_array()
            .expect("items")
            .iter()
            .map(|item| fed.intern_item(item))
            .collect();
        let head = body.as_object().expect("object");
        fed.push_parts(head, &ids, RequestMeta::default())
            .expect("parts");
    }
    assert_eq!(fed.compare(0, 1), whole.compare(0, 1));
    assert_eq!(fed.pool().len(), whole.pool().len());
}

#[test]
fn bodies_the_analysis_cannot_use() {
    let mut s = Session::default();
    let err = |s: &mut Session, body: Value| s.push_body(&body, RequestMeta::default());
    assert_eq!(
        err(&mut s, json!([1])),
        Err(PrefixError::InvalidBody {
            path: "$".to_string(),
            message: "a request body must be a JSON object, got an array".to_string()
        })
    );
    assert_eq!(
        err(&mut s, json!({"input": []})),
        Err(PrefixError::InvalidBody {
            path: "model".to_string(),
            message: "the body has no `model`".to_string()
        })
    );
    assert_eq!(
        err(&mut s, json!({"model": 5})),
        Err(PrefixError::InvalidBody {
            path: "model".to_string(),
            message: "model must be a string, got a number".to_string()
        })
    );
    assert_eq!(
        err(&mut s, json!({"model": "m", "input": {"type": "message"}})),
        Err(PrefixError::InvalidBody {
            path: "input".to_string(),
            message: "input must be an array or a string, got an object".to_string()
        })
    );
    let head = json!({"model": "m"});
    assert_eq!(
        s.push_parts(
            head.as_object().expect("object"),
            &[promptwire::core::prefix::ElementId(99)],
            RequestMeta::default()
        ),
        Err(PrefixError::UnknownElement { index: 0, id: 99 })
    );
    assert!(s.is_empty());
}
