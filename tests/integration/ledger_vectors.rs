//! The ledger on hand-made sessions, each vector written from WIRE_SPEC §19.1–19.2 (what the
//! server renders and compares), not from the implementation: what is not rendered (item ids,
//! `status`, key order of an item, `client_metadata`) never breaks; what is (a tool schema's
//! property order, the effort, verbosity, the output schema) breaks at its place with the
//! server's cause name; an edit at the end of a long message keeps every token before it under
//! the prefix model and reads back to the last breakpoint under the breakpoint model; every
//! form of compaction is `context_compacted` and never a tools hazard; a rollout's unrecorded
//! tools are never blamed. Every verdict is compared whole.

use pretty_assertions::assert_eq;
use promptwire::core::ledger::{
    self, Cause, Change, Divergence, Ledger, PairVerdict, RowKind, Rules, Source,
};
use promptwire::core::prefix::{PrefixError, RequestMeta, Session, Tokenizer};
use serde_json::{Value, json};

/// o200k tokens of a text.
fn t(text: &str) -> u64 {
    Tokenizer::o200k().count(text)
}

/// The markers a message adds around its text (WIRE_SPEC §19.2, harmony):
/// `<|start|>{role}<|message|>` before it, `<|end|>` after it — 6 in all for gpt-5.5, as fitted
/// on OpenAI's own counts of real Codex sessions (issue 34).
const OPEN: u64 = 5;
const CLOSE: u64 = 1;

fn user(text: &str) -> Value {
    json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})
}

fn assistant(text: &str) -> Value {
    json!({"type": "message", "role": "assistant", "status": "completed", "id": "msg_1",
           "content": [{"type": "output_text", "text": text, "annotations": []}]})
}

fn body(model: &str, items: Vec<Value>) -> Value {
    json!({"model": model, "instructions": "Be brief.", "input": items,
           "stream": true, "store": false, "prompt_cache_key": "thread-1"})
}

fn session(bodies: &[Value]) -> Session {
    let mut s = Session::default();
    for b in bodies {
        s.push_body(b, RequestMeta::default())
            .expect("a usable body");
    }
    s
}

fn ledger_of(bodies: &[Value]) -> (Session, Ledger) {
    let s = session(bodies);
    let l = ledger::ledger(&s, &Rules::bundled());
    (s, l)
}

/// The verdict on request 1 against request 0.
fn pair(a: &Value, b: &Value) -> PairVerdict {
    let (_, l) = ledger_of(&[a.clone(), b.clone()]);
    l.rows[1].verdict.clone().expect("a verdict")
}

/// Tokens of the instructions segment "Be brief." (a message: markers and text).
fn instructions() -> u64 {
    OPEN + t("Be brief.") + CLOSE
}

/// A text of about `words` words, ending with a full stop.
fn long_text(words: usize) -> String {
    let list = [
        "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "theta", "kappa",
    ];
    let mut out = String::new();
    for i in 0..words {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(list[(i * 7 + i / 3) % list.len()]);
    }
    out.push('.');
    out
}

#[test]
fn item_ids_status_and_key_order_never_break() {
    let call = json!({"type": "function_call", "id": "fc_1", "status": "completed",
                      "name": "exec_command", "arguments": "{\"cmd\":\"ls\"}", "call_id": "call_1"});
    let out = json!({"type": "function_call_output", "call_id": "call_1", "output": "a.txt"});
    let a = body(
        "gpt-5.5",
        vec![user("list the files"), call.clone(), out.clone()],
    );
    // Over WebSocket after `codex exec resume` the same call comes back with its keys in
    // another order, another id and no status; the output's key order changes too.
    let call2 = json!({"arguments": "{\"cmd\":\"ls\"}", "call_id": "call_9", "name": "exec_command",
                       "type": "function_call", "id": "fc_other"});
    let out2 = json!({"output": "a.txt", "type": "function_call_output", "call_id": "call_9"});
    let mut b = body(
        "gpt-5.5",
        vec![user("list the files"), call2, out2, user("thanks")],
    );
    b["client_metadata"] = json!({"x": "changed"});
    let v = pair(&a, &b);
    assert_eq!(
        (v.prefix_kept, v.divergence, v.causes, v.reusable_tokens),
        (true, None, vec![], v.from_tokens)
    );
}

#[test]
fn a_tool_schemas_property_order_is_tools_changed_at_that_tool() {
    let tool = |props: Value| {
        json!({"type": "function", "name": "exec_command", "description": "Run a command.",
               "strict": false, "parameters": {"type": "object", "properties": props, "required": ["cmd"]}})
    };
    let first = json!({"type": "function", "name": "read", "description": "Read a file.",
                       "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}});
    let ordered = tool(json!({"cmd": {"type": "string"}, "workdir": {"type": "string"}}));
    let swapped = tool(json!({"workdir": {"type": "string"}, "cmd": {"type": "string"}}));
    let mut a = body("gpt-5.5", vec![user("hi")]);
    a["tools"] = json!([first.clone(), ordered]);
    let mut b = body("gpt-5.5", vec![user("hi"), assistant("Hello.")]);
    b["tools"] = json!([first, swapped]);
    let v = pair(&a, &b);
    // Rendered: the tool frame, tool 0 whole, then tool 1 as far as its parameters: the
    // comment and the declaration up to the first property.
    let frame = ledger::Counting::default().tools_frame_tokens;
    let tool0 = t("// Read a file.\ntype read = (_: {\npath?: string,\n}) => any;\n");
    let shared_of_tool1 = t("// Run a command.\ntype exec_command = (_: {\n");
    let reusable = frame + tool0 + shared_of_tool1;
    assert_eq!(
        (
            v.prefix_kept,
            v.divergence,
            v.causes.clone(),
            v.reusable_tokens
        ),
        (
            false,
            Some(Divergence {
                part: 2,
                token: reusable,
                pointer: "/tools/1/parameters/properties/workdir".to_string(),
                source: Source::Tools,
                change: Change::Edited,
            }),
            vec![Cause::ToolsChanged],
            reusable
        )
    );
    // The same schema with the tool object's own keys in another order renders the same.
    let mut c = a.clone();
    c["tools"][1] = json!({"parameters": a["tools"][1]["parameters"], "strict": false,
                           "name": "exec_command", "type": "function", "description": "Run a command."});
    assert!(pair(&a, &c).prefix_kept);
}

#[test]
fn an_edit_at_the_end_of_a_long_message_keeps_the_tokens_before_it() {
    let text = long_text(3000);
    let a = body("gpt-5.5", vec![user(&text)]);
    let b = body(
        "gpt-5.5",
        vec![user(&format!("{text} Answer in one sentence."))],
    );
    let reusable = instructions() + OPEN + t(&text);
    let (_, l) = ledger_of(&[a, b]);
    let row = &l.rows[1];
    let v = row.verdict.clone().expect("verdict");
    assert_eq!(
        (
            v.prefix_kept,
            v.divergence,
            v.causes.clone(),
            v.reusable_tokens
        ),
        (
            false,
            Some(Divergence {
                part: 1,
                token: reusable,
                pointer: "/input/0/content/0/text".to_string(),
                source: Source::User,
                change: Change::Edited,
            }),
            vec![Cause::InputChanged],
            reusable
        )
    );
    // Prefix model (gpt-5.5): the longest common token prefix, from 1,024 in 128-token steps.
    let steps = 1024 + (reusable - 1024) / 128 * 128;
    assert_eq!(
        (
            row.cache_model.as_str(),
            row.prediction.predicted.read_tokens
        ),
        ("prefix", steps)
    );
    // Nothing of the shared content was lost beyond the steps: ideal = paid.
    let cost = row.cost_usd.expect("gpt-5.5 is priced");
    assert_eq!((cost.lost, row.lost_by_cause.len()), (0.0, 0));
}

#[test]
fn under_the_breakpoint_model_the_read_goes_back_to_the_last_breakpoint() {
    let text = long_text(3000);
    // Request 0 writes its implicit breakpoint after its user message; request 1 appends a turn
    // (reads it, writes its own); request 2 edits the end of the first message: no breakpoint
    // before the edit matches, and there is no fallback to an unmarked prefix.
    let r0 = body("gpt-5.6-sol", vec![user(&text)]);
    let r1 = body(
        "gpt-5.6-sol",
        vec![user(&text), assistant("Ok."), user("more")],
    );
    let r2 = body(
        "gpt-5.6-sol",
        vec![user(&format!("{text} Answer in one sentence."))],
    );
    let (_, l) = ledger_of(&[r0, r1, r2]);
    let total0 = instructions() + OPEN + t(&text) + CLOSE;
    let p: Vec<(u64, u64)> = l
        .rows
        .iter()
        .map(|r| {
            (
                r.prediction.predicted.read_tokens,
                r.prediction.predicted.write_tokens,
            )
        })
        .collect();
    let total1 = l.rows[1].tokens;
    let total2 = l.rows[2].tokens;
    assert_eq!(p, vec![(0, total0), (total0, total1 - total0), (0, total2)]);
    // The ledger: what request 2 shares with request 1 (everything before the edit) was not
    // read because no breakpoint covers it: lost to `no_breakpoint`, in the server's vocabulary
    // the divergence is `input_changed`.
    let row = &l.rows[2];
    let v = row.verdict.as_ref().expect("verdict");
    assert_eq!(
        (v.causes.clone(), v.reusable_tokens),
        (vec![Cause::InputChanged], instructions() + OPEN + t(&text))
    );
    let causes: Vec<Cause> = row.lost_by_cause.iter().map(|l| l.cause).collect();
    assert_eq!(causes, vec![Cause::NoBreakpoint]);
    let cost = row.cost_usd.expect("gpt-5.6-sol is priced");
    // Paid: everything written at 1.25× ($5/M). Ideal: the shared prefix read ($0.40/M), the rest
    // written.
    let shared = v.reusable_tokens as f64;
    let written = row.prediction.predicted.write_tokens as f64;
    let paid = written * 5.0 / 1e6;
    let ideal = shared * 0.4 / 1e6 + (written - shared) * 5.0 / 1e6;
    assert!(
        (cost.paid - paid).abs() < 1e-12 && (cost.ideal - ideal).abs() < 1e-12,
        "{cost:?}"
    );
    assert!((cost.lost - (paid - ideal)).abs() < 1e-12);
    assert!(
        l.hazards
            .iter()
            .any(|h| h.code == "stable_prefix_behind_break" && h.request == 2)
    );
}

#[test]
fn each_rendered_setting_has_its_server_cause() {
    let base = body("gpt-5.5", vec![user("hi")]);
    let with = |f: &dyn Fn(&mut Value)| {
        let mut b = base.clone();
        f(&mut b);
        b
    };
    let a = with(&|b| {
        b["reasoning"] = json!({"effort": "medium", "summary": "auto"});
        b["text"] = json!({"verbosity": "low"});
    });
    let cases: Vec<(Value, Vec<Cause>, &str)> = vec![
        (
            with(&|b| {
                b["reasoning"] = json!({"effort": "high", "summary": "auto"});
                b["text"] = json!({"verbosity": "low"});
            }),
            vec![Cause::ReasoningEffortChanged],
            "/reasoning/effort",
        ),
        (
            with(&|b| {
                b["reasoning"] = json!({"effort": "medium", "summary": "auto"});
                b["text"] = json!({"verbosity": "high"});
            }),
            vec![Cause::VerbosityChanged],
            "/text/verbosity",
        ),
        (
            with(&|b| {
                b["reasoning"] = json!({"effort": "medium", "summary": "auto"});
                b["text"] = json!({"verbosity": "low", "format": {"type": "json_schema", "name": "out",
                    "schema": {"type": "object"}, "strict": true}});
            }),
            vec![Cause::TextFormatChanged],
            "/text/format",
        ),
    ];
    for (b, causes, pointer) in cases {
        let v = pair(&a, &b);
        let d = v.divergence.clone().expect("a break");
        assert_eq!((v.causes, d.pointer.as_str()), (causes, pointer));
    }
    // The summary setting is not rendered: no break.
    let b = with(&|b| {
        b["reasoning"] = json!({"effort": "medium", "summary": "detailed"});
        b["text"] = json!({"verbosity": "low"});
    });
    assert!(pair(&a, &b).prefix_kept);
    // Routing: another model, key or tier is named even where the rendered prompt is the same.
    let mut routed = a.clone();
    routed["model"] = json!("gpt-5.4");
    routed["prompt_cache_key"] = json!("thread-2");
    routed["service_tier"] = json!("flex");
    let v = pair(&a, &routed);
    assert_eq!(
        (v.prefix_kept, v.causes),
        (
            true,
            vec![
                Cause::ModelChanged,
                Cause::PromptCacheKeyChanged,
                Cause::ServiceTierChanged
            ]
        )
    );
}

/// A turn of Codex 0.171 on gpt-5.5 with tools, then the in-band compaction request Codex sends
/// (`tools: []`, the checkpoint prompt), then the rebuilt history.
fn compaction_session() -> Vec<Value> {
    let tools = json!([{"type": "function", "name": "exec_command", "description": "Run.",
                        "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}}}]);
    let mut turn = body("gpt-5.5", vec![user(&long_text(1500)), assistant("Done.")]);
    turn["tools"] = tools.clone();
    let mut next = body(
        "gpt-5.5",
        vec![user(&long_text(1500)), assistant("Done."), user("again")],
    );
    next["tools"] = tools.clone();
    let mut compact = next.clone();
    compact["tools"] = json!([]);
    compact["input"]
        .as_array_mut()
        .expect("input")
        .push(promptwire::core::compile::compaction::checkpoint_message());
    let mut rebuilt = body(
        "gpt-5.5",
        vec![
            user(&long_text(1500)),
            user("again"),
            user(
                "Another language model started to solve this problem and produced a summary: done.",
            ),
        ],
    );
    rebuilt["tools"] = tools;
    vec![turn, next, compact, rebuilt]
}

#[test]
fn an_in_band_compaction_is_context_compacted_and_never_a_tools_hazard() {
    let (_, l) = ledger_of(&compaction_session());
    let kinds: Vec<RowKind> = l.rows.iter().map(|r| r.kind).collect();
    assert_eq!(
        kinds,
        vec![
            RowKind::First,
            RowKind::Turn,
            RowKind::Compaction,
            RowKind::AfterCompaction
        ]
    );
    let causes: Vec<Vec<Cause>> = l
        .rows
        .iter()
        .map(|r| {
            r.verdict
                .as_ref()
                .map(|v| v.causes.clone())
                .unwrap_or_default()
        })
        .collect();
    assert_eq!(
        causes,
        vec![
            vec![],
            vec![],
            vec![Cause::ContextCompacted],
            vec![Cause::ContextCompacted]
        ]
    );
    // The compaction request is compared with the turn before it, the rebuilt history too (not
    // with the compaction request).
    let previous: Vec<Option<usize>> = l.rows.iter().map(|r| r.previous).collect();
    assert_eq!(previous, vec![None, Some(0), Some(1), Some(1)]);
    // Its tool list dropped: the break points at the tools, and nothing of it is "lost".
    let d = l.rows[2]
        .verdict
        .as_ref()
        .and_then(|v| v.divergence.clone())
        .expect("break");
    assert_eq!(
        (d.pointer.as_str(), d.source, d.change),
        ("/tools", Source::Tools, Change::Removed)
    );
    for row in &l.rows[2..] {
        assert_eq!(row.cost_usd.map(|c| c.lost), Some(0.0), "row {}", row.index);
    }
    assert_eq!(
        l.hazards
            .iter()
            .filter(|h| h.code == "tools_changed")
            .count(),
        0
    );
    assert_eq!((l.summary.compactions, l.summary.breaks), (1, 0));
    let paid = l.rows[2].cost_usd.expect("priced").paid;
    assert_eq!(l.summary.compaction_usd, Some(paid));
}

#[test]
fn a_compact_endpoint_call_and_a_trigger_item_are_compactions() {
    let (_, l) = ledger_of(&compaction_session()[..2]);
    assert_eq!(l.rows[1].kind, RowKind::Turn);
    // `/responses/compact`: model, input, instructions, tools, parallel_tool_calls — no stream.
    let turn = &compaction_session()[1];
    let endpoint = json!({"model": "gpt-5.5", "input": turn["input"], "instructions": "Be brief.",
                          "tools": turn["tools"], "parallel_tool_calls": false,
                          "prompt_cache_key": "thread-1"});
    // v2: a normal turn with a trailing `compaction_trigger` item; the next turn carries the
    // compaction item.
    let mut trigger = turn.clone();
    trigger["input"]
        .as_array_mut()
        .expect("input")
        .push(json!({"type": "compaction_trigger"}));
    let mut after = turn.clone();
    after["input"] = json!([user(&long_text(1500)), user("again"),
                            {"type": "compaction", "encrypted_content": "gAAAAAB-compacted"}]);
    for compaction in [endpoint, trigger] {
        let (_, l) = ledger_of(&[turn.clone(), compaction, after.clone()]);
        let got: Vec<(RowKind, Vec<Cause>)> = l
            .rows
            .iter()
            .map(|r| {
                (
                    r.kind,
                    r.verdict
                        .as_ref()
                        .map(|v| v.causes.clone())
                        .unwrap_or_default(),
                )
            })
            .collect();
        // Both keep the turn's tools and history: their prefix is kept (they read the cache).
        assert_eq!(
            got,
            vec![
                (RowKind::First, vec![]),
                (RowKind::Compaction, vec![]),
                (RowKind::AfterCompaction, vec![Cause::ContextCompacted]),
            ]
        );
        assert_eq!(
            l.hazards
                .iter()
                .filter(|h| h.code == "tools_changed")
                .count(),
            0
        );
    }
}

#[test]
fn a_rollout_without_tools_blames_nothing_on_tools() {
    // A rollout records neither the tools nor client_metadata: every request says so.
    let meta = || RequestMeta {
        not_recorded: vec!["tools".to_string(), "client_metadata".to_string()],
        ..RequestMeta::default()
    };
    let mut s = Session::default();
    let a = body("gpt-5.5", vec![user(&long_text(1500))]);
    let b = body(
        "gpt-5.5",
        vec![user(&long_text(1500)), assistant("Ok."), user("next")],
    );
    s.push_body(&a, meta()).expect("a");
    s.push_body(&b, meta()).expect("b");
    let l = ledger::ledger(&s, &Rules::bundled());
    let v = l.rows[1].verdict.clone().expect("verdict");
    assert_eq!(
        (
            v.prefix_kept,
            v.causes,
            v.not_recorded,
            l.rows[1].not_recorded.clone()
        ),
        (true, vec![], vec!["tools"], vec!["tools"])
    );
    assert!(l.hazards.iter().all(|h| h.code != "tools_changed"));
}

#[test]
fn a_websocket_continuation_and_warm_up_are_one_conversation() {
    // Turn 1 over HTTP; then, on a new connection after `resume`, a warm-up re-sending the
    // whole history (call keys in another order, no ids), then a turn that continues the
    // warm-up's response with only its new items.
    let call = json!({"type": "function_call", "id": "fc_1", "name": "exec_command",
                      "arguments": "{\"cmd\":\"ls\"}", "call_id": "c1"});
    let out = json!({"type": "function_call_output", "call_id": "c1", "output": "a.txt"});
    let turn1 = body("gpt-5.5", vec![user(&long_text(1500)), call, out]);
    let mut warm = body(
        "gpt-5.5",
        vec![
            user(&long_text(1500)),
            json!({"name": "exec_command", "arguments": "{\"cmd\":\"ls\"}", "call_id": "c1",
                   "type": "function_call"}),
            json!({"call_id": "c1", "output": "a.txt", "type": "function_call_output"}),
        ],
    );
    warm["type"] = json!("response.create");
    warm["generate"] = json!(false);
    let mut turn2 = json!({"type": "response.create", "model": "gpt-5.5", "instructions": "Be brief.",
                           "previous_response_id": "resp_warm", "input": [user("and now?")],
                           "stream": true, "store": false, "prompt_cache_key": "thread-1"});
    turn2["generate"] = json!(true);
    let mut s = Session::default();
    s.push_body(&turn1, RequestMeta::default()).expect("1");
    s.push_body(
        &warm,
        RequestMeta {
            response_id: Some("resp_warm".to_string()),
            ..RequestMeta::default()
        },
    )
    .expect("warm");
    s.push_body(&turn2, RequestMeta::default()).expect("2");
    let l = ledger::ledger(&s, &Rules::bundled());
    let got: Vec<(RowKind, Option<usize>, bool)> = l
        .rows
        .iter()
        .map(|r| {
            (
                r.kind,
                r.previous,
                r.verdict.as_ref().is_none_or(|v| v.prefix_kept),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (RowKind::First, None, true),
            (RowKind::Warmup, Some(0), true),
            (RowKind::Turn, Some(0), true),
        ]
    );
    assert_eq!(l.summary.breaks, 0);
}

#[test]
fn rows_sum_to_the_summary_and_no_change_is_the_ledger() {
    let bodies = compaction_session();
    let (s, l) = ledger_of(&bodies);
    let t = &l.summary.totals;
    let cost = t.cost_usd.expect("priced");
    let sum = |f: fn(&ledger::Dollars) -> f64| -> f64 {
        l.rows
            .iter()
            .filter_map(|r| r.cost_usd)
            .map(|d| f(&d))
            .sum()
    };
    assert!((cost.paid - sum(|d| d.paid)).abs() < 1e-12);
    assert!((cost.ideal - sum(|d| d.ideal)).abs() < 1e-12);
    assert!((cost.lost - sum(|d| d.lost)).abs() < 1e-12);
    assert_eq!(
        (t.read_tokens, t.write_tokens, t.uncached_tokens),
        (
            l.rows.iter().map(|r| r.read_tokens()).sum::<u64>(),
            l.rows.iter().map(|r| r.write_tokens()).sum::<u64>(),
            l.rows.iter().map(|r| r.uncached_tokens()).sum::<u64>()
        )
    );
    // A what-if that changes nothing (a TTL no gap reaches) gives the ledger back.
    let w = l
        .what_if(&s, &Rules::bundled(), &["ttl:24h".parse().expect("edit")])
        .expect("what-if");
    assert_eq!(
        (w.after.read_tokens, w.usd_saved),
        (t.read_tokens, Some(0.0))
    );
    assert_eq!(w.before, l.summary.totals);
}

#[test]
fn a_content_addressed_feed_gives_the_rows_of_whole_bodies() {
    let bodies = compaction_session();
    let (_, whole) = ledger_of(&bodies);
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
    let l = ledger::ledger(&fed, &Rules::bundled());
    assert_eq!((l.rows, l.summary), (whole.rows, whole.summary));
}

#[test]
fn any_two_requests_can_be_compared() {
    let a = body("gpt-5.5", vec![user("one")]);
    let c = body(
        "gpt-5.5",
        vec![user("one"), assistant("two"), user("three")],
    );
    let s = session(&[a, c]);
    let counting = ledger::Counting::default();
    let forward = ledger::compare_pair(&s, &counting, 0, 1);
    assert_eq!((forward.prefix_kept, forward.causes), (true, vec![]));
    // Backwards: the later request lacks what the earlier one has after its end.
    let back = ledger::compare_pair(&s, &counting, 1, 0);
    let d = back.divergence.clone().expect("break");
    assert_eq!(
        (
            back.prefix_kept,
            back.causes,
            d.pointer.as_str(),
            d.change,
            back.reusable_tokens
        ),
        (
            false,
            vec![Cause::InputChanged],
            "/input/1",
            Change::Removed,
            back.to_tokens
        )
    );
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
