//! Session-level results of the prefix analysis: the summary and the cost of misses, the growth
//! series (checked against bodies serialized independently), and the item-aligned pair diff.

use pretty_assertions::assert_eq;
use promptwire::core::prefix::cost::cacheable_tokens;
use promptwire::core::prefix::{
    BreakAt, CacheCost, DiffRow, GrowthPoint, LineChange, PairDiff, PriceTable, RequestMeta,
    RowKind, Session, SessionSummary, Tokenizer,
};
use serde_json::{Value, json};

fn msg(role: &str, text: &str) -> Value {
    json!({"type": "message", "role": role, "content": [{"type": "input_text", "text": text}]})
}

fn body(model: &str, instructions: &str, items: &[Value]) -> Value {
    json!({
        "model": model,
        "instructions": instructions,
        "stream": true,
        "input": items,
        "tools": [{"type": "function", "name": "shell", "description": "Run.", "strict": false, "parameters": {"type": "object", "properties": {}}}],
        "tool_choice": "auto",
        "parallel_tool_calls": true,
        "reasoning": {"effort": "medium"},
        "store": false,
        "prompt_cache_key": "k",
        "text": {"verbosity": "low"}
    })
}

fn with_input(mut body: Value, items: &[Value]) -> Value {
    body["input"] = json!(items);
    body
}

fn compact_len(value: &Value) -> u64 {
    serde_json::to_string(value).expect("serialize").len() as u64
}

fn tokens(values: &[&Value]) -> u64 {
    let t = Tokenizer::o200k();
    // The rendering is the compact JSON as sent.
    values
        .iter()
        .map(|v| t.count(&serde_json::to_string(v).expect("serialize")))
        .sum()
}

/// A long user message (well over 1,024 tokens), so that caching applies.
fn long_message() -> Value {
    let text: String = (0..600)
        .map(|i| format!("line {i}: the build of crate number {i} failed; "))
        .collect();
    msg("user", &text)
}

#[test]
fn summary_and_cost_of_a_miss() {
    let big = long_message();
    let a = body("gpt-5.5", "Be brief.", std::slice::from_ref(&big));
    let b = body(
        "gpt-5.5",
        "Be very brief.",
        &[big.clone(), msg("user", "Again.")],
    );
    let c = body(
        "gpt-5.5",
        "Be very brief.",
        &[
            big.clone(),
            msg("user", "Again."),
            msg("user", "Once more."),
        ],
    );
    let mut session = Session::default();
    let cached = [None, Some(0), Some(1280)];
    for (body, cached) in [&a, &b, &c].into_iter().zip(cached) {
        let meta = RequestMeta {
            reported_cached_tokens: cached,
            ..RequestMeta::default()
        };
        session.push_body(body, meta).expect("body");
    }
    let report = session.report(&PriceTable::bundled());

    let settings = |x: &Value| -> Vec<Value> {
        [
            "model",
            "reasoning",
            "text",
            "tools",
            "parallel_tool_calls",
            "tool_choice",
        ]
        .iter()
        .map(|k| x[*k].clone())
        .collect()
    };
    let head = settings(&a);
    let head_refs: Vec<&Value> = head.iter().collect();
    let before_instructions = tokens(&head_refs);
    let whole = |x: &Value| {
        let mut all = settings(x);
        all.push(x["instructions"].clone());
        all.extend(x["input"].as_array().expect("items").iter().cloned());
        tokens(&all.iter().collect::<Vec<_>>())
    };
    let (ta, tb, tc) = (whole(&a), whole(&b), whole(&c));
    assert!(ta > 1024, "the long message makes the prompt cacheable");

    assert_eq!(
        report.summary,
        SessionSummary {
            requests: 3,
            warmups: 0,
            undetermined: 0,
            breaks: 1,
            input_tokens: ta + tb + tc,
            reusable_tokens: before_instructions + tb,
            reported_cached_tokens: Some(1280),
        }
    );
    // The instructions edit keeps the settings only: everything cacheable of `a` is missed,
    // priced at gpt-5.5's input minus cached-input rate (5 − 0.5 $/M in the bundled table).
    let missed = cacheable_tokens(ta) - cacheable_tokens(before_instructions);
    assert_eq!(
        report.cost,
        CacheCost {
            missed_tokens: missed,
            miss_cost_usd: missed as f64 * (5.0 - 0.5) / 1_000_000.0,
            unpriced_models: vec![],
        }
    );
}

#[test]
fn models_without_a_price_are_named() {
    let big = long_message();
    let mut session = Session::default();
    session
        .push_body(
            &body("llama3.3", "A", std::slice::from_ref(&big)),
            RequestMeta::default(),
        )
        .expect("a");
    session
        .push_body(
            &body("llama3.3", "B", std::slice::from_ref(&big)),
            RequestMeta::default(),
        )
        .expect("b");
    let cost = session.report(&PriceTable::bundled()).cost;
    assert_eq!(cost.miss_cost_usd, 0.0);
    assert_eq!(cost.unpriced_models, vec!["llama3.3".to_string()]);
    assert!(cost.missed_tokens > 0);
}

#[test]
fn growth_series_matches_independently_built_bodies() {
    let t1 = vec![msg("user", "one"), msg("assistant", "two")];
    let t2 = [
        t1.clone(),
        vec![msg("user", "three"), msg("assistant", "four")],
    ]
    .concat();
    let a = body("gpt-5.5", "I", &t1);
    let b = body("gpt-5.5", "I", &t2);
    // Continues b with previous_response_id: only the new items are sent.
    let new_items = vec![msg("user", "five")];
    let mut c = body("gpt-5.5", "I", &new_items);
    c["previous_response_id"] = json!("resp_b");
    // A compacted restart: sent in full.
    let d = body("gpt-5.5", "I", &[msg("user", "summary")]);
    let mut session = Session::default();
    for (x, response) in [
        (&a, "resp_a"),
        (&b, "resp_b"),
        (&c, "resp_c"),
        (&d, "resp_d"),
    ] {
        let meta = RequestMeta {
            response_id: Some(response.to_string()),
            ..RequestMeta::default()
        };
        session.push_body(x, meta).expect("body");
    }
    let growth = session.report(&PriceTable::bundled()).growth;
    let all_items = [t2.clone(), new_items.clone()].concat();
    // The whole prompt c stands for: b's items (its response had no output), then c's, sent
    // without previous_response_id.
    let mut whole_c = with_input(c.clone(), &all_items);
    whole_c
        .as_object_mut()
        .expect("object")
        .shift_remove("previous_response_id");
    assert_eq!(
        growth,
        vec![
            GrowthPoint {
                index: 0,
                sent_bytes: compact_len(&a),
                full_history_bytes: compact_len(&a),
                continuation_bytes: compact_len(&a),
            },
            GrowthPoint {
                index: 1,
                sent_bytes: compact_len(&b),
                full_history_bytes: compact_len(&b),
                continuation_bytes: compact_len(&with_input(b.clone(), &t2[2..])),
            },
            GrowthPoint {
                index: 2,
                sent_bytes: compact_len(&c),
                full_history_bytes: compact_len(&whole_c),
                continuation_bytes: compact_len(&c),
            },
            GrowthPoint {
                index: 3,
                sent_bytes: compact_len(&d),
                full_history_bytes: compact_len(&d),
                continuation_bytes: compact_len(&d),
            },
        ]
    );
}

#[test]
fn pair_diff_aligns_items_and_diffs_changed_text() {
    let call =
        json!({"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c1"});
    let out = |text: &str| json!({"type": "function_call_output", "call_id": "c1", "output": text});
    let a = body(
        "gpt-5.5",
        "I",
        &[msg("user", "hi"), call.clone(), out("ok")],
    );
    let mut b = body(
        "gpt-5.5",
        "I",
        &[
            msg("user", "hi"),
            call.clone(),
            out("fine"),
            msg("assistant", "done"),
        ],
    );
    b["reasoning"] = json!({"effort": "high"});
    let mut session = Session::default();
    session.push_body(&a, RequestMeta::default()).expect("a");
    session.push_body(&b, RequestMeta::default()).expect("b");

    let same = |at: BreakAt, pointer: &str| DiffRow {
        kind: RowKind::Same,
        at,
        from_pointer: Some(pointer.to_string()),
        to_pointer: Some(pointer.to_string()),
        lines: vec![],
    };
    let line = |tag: &'static str, text: &str| LineChange {
        tag,
        text: text.to_string(),
    };
    assert_eq!(
        session.pair_diff(0, 1).expect("diff"),
        PairDiff {
            from: 0,
            to: 1,
            rows: vec![
                same(BreakAt::Model, "/model"),
                DiffRow {
                    kind: RowKind::Changed,
                    at: BreakAt::Reasoning,
                    from_pointer: Some("/reasoning".to_string()),
                    to_pointer: Some("/reasoning".to_string()),
                    lines: vec![
                        line("equal", "{"),
                        line("delete", "  \"effort\": \"medium\""),
                        line("insert", "  \"effort\": \"high\""),
                        line("equal", "}"),
                    ],
                },
                same(BreakAt::Text, "/text"),
                same(BreakAt::Tools, "/tools"),
                same(BreakAt::Tools, "/parallel_tool_calls"),
                same(BreakAt::Tools, "/tool_choice"),
                same(BreakAt::Instructions, "/instructions"),
                same(BreakAt::Input, "/input/0"),
                same(BreakAt::Input, "/input/1"),
                DiffRow {
                    kind: RowKind::Changed,
                    at: BreakAt::Input,
                    from_pointer: Some("/input/2".to_string()),
                    to_pointer: Some("/input/2".to_string()),
                    lines: vec![
                        line("equal", "{"),
                        line("equal", "  \"type\": \"function_call_output\","),
                        line("equal", "  \"call_id\": \"c1\","),
                        line("delete", "  \"output\": \"ok\""),
                        line("insert", "  \"output\": \"fine\""),
                        line("equal", "}"),
                    ],
                },
                DiffRow {
                    kind: RowKind::Added,
                    at: BreakAt::Input,
                    from_pointer: None,
                    to_pointer: Some("/input/3".to_string()),
                    lines: vec![],
                },
            ],
        }
    );
}

#[test]
fn pair_diff_across_dialects_pairs_the_tool_lists() {
    let items = [msg("user", "hi")];
    let a = body("gpt-5.5", "I", &items);
    let tools = a["tools"].clone();
    let b = json!({
        "model": "gpt-5.5",
        "input": [
            {"type": "additional_tools", "role": "developer", "tools": tools},
            msg("developer", "I"),
            msg("user", "hi")
        ],
        "tool_choice": "auto",
        "parallel_tool_calls": false,
        "reasoning": {"effort": "medium"},
        "text": {"verbosity": "low"}
    });
    let mut session = Session::default();
    session.push_body(&a, RequestMeta::default()).expect("a");
    session.push_body(&b, RequestMeta::default()).expect("b");
    let rows: Vec<(RowKind, BreakAt, Option<String>, Option<String>)> = session
        .pair_diff(0, 1)
        .expect("diff")
        .rows
        .into_iter()
        .map(|r| (r.kind, r.at, r.from_pointer, r.to_pointer))
        .collect();
    let p = |s: &str| Some(s.to_string());
    assert_eq!(
        rows,
        vec![
            (RowKind::Same, BreakAt::Model, p("/model"), p("/model")),
            (
                RowKind::Same,
                BreakAt::Reasoning,
                p("/reasoning"),
                p("/reasoning")
            ),
            (RowKind::Same, BreakAt::Text, p("/text"), p("/text")),
            (RowKind::Changed, BreakAt::Tools, p("/tools"), p("/input/0")),
            (
                RowKind::Changed,
                BreakAt::Tools,
                p("/parallel_tool_calls"),
                p("/parallel_tool_calls")
            ),
            (
                RowKind::Same,
                BreakAt::Tools,
                p("/tool_choice"),
                p("/tool_choice")
            ),
            (
                RowKind::Changed,
                BreakAt::Instructions,
                p("/instructions"),
                p("/input/1")
            ),
            (RowKind::Same, BreakAt::Input, p("/input/0"), p("/input/2")),
        ]
    );
}
