//! Session-level results: the ledger's rows and sums for an instructions edit (dollars computed
//! here from the bundled prices), unpriced models named, the growth series (checked against
//! bodies serialized independently), and the item-aligned pair diff.

use pretty_assertions::assert_eq;
use promptwire::core::ledger::{self, Cause, Rules, Source};
use promptwire::core::prefix::{
    BreakAt, DiffRow, GrowthPoint, LineChange, PairDiff, RequestMeta, RowKind, Session, Tokenizer,
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

/// A long user message (well over 1,024 tokens), so that caching applies.
fn long_message() -> Value {
    let text: String = (0..600)
        .map(|i| format!("line {i}: the build of crate number {i} failed; "))
        .collect();
    msg("user", &text)
}

/// The rendered text of a message segment's markers (harmony: `<|start|>role<|message|>` …
/// `<|end|>`).
const OPEN: u64 = 5;
const CLOSE: u64 = 1;

fn text_of(item: &Value) -> String {
    item["content"][0]["text"]
        .as_str()
        .expect("text")
        .to_string()
}

#[test]
fn an_instructions_edit_loses_the_history_after_it() {
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
    let cached = [None, Some(0), None];
    for (body, cached) in [&a, &b, &c].into_iter().zip(cached) {
        let meta = RequestMeta {
            reported_cached_tokens: cached,
            ..RequestMeta::default()
        };
        session.push_body(body, meta).expect("body");
    }
    let l = ledger::ledger(&session, &Rules::bundled());
    let big_tokens = OPEN + Tokenizer::o200k().count(&text_of(&big)) + CLOSE;
    assert!(
        l.rows[0].tokens > 1024,
        "the long message makes the prompt cacheable"
    );

    // b against a: the instructions' text differs after "Be" — the break; the long message
    // after it is content b shares with a, wherever it sits.
    let v = l.rows[1].verdict.clone().expect("verdict");
    let d = v.divergence.clone().expect("break");
    assert_eq!(
        (
            v.causes.clone(),
            d.pointer.as_str(),
            d.source,
            v.shared_tokens
        ),
        (
            vec![Cause::InputChanged],
            "/instructions",
            Source::Instructions,
            v.reusable_tokens + big_tokens
        )
    );
    // Dollars at gpt-5.5's $5 / $0.50 per million (bundled table): b paid for every token
    // uncached (the server said 0 cached); had it read what it shares with a, it would have
    // paid the shared part at the cached rate, from 1,024 in 128-token steps.
    let (input, shared) = (l.rows[1].tokens as f64, v.shared_tokens);
    let read = (1024 + (shared - 1024) / 128 * 128) as f64;
    let paid = input * 5.0 / 1e6;
    let ideal = read * 0.5 / 1e6 + (input - read) * 5.0 / 1e6;
    let cost = l.rows[1].cost_usd.expect("priced");
    assert!((cost.paid - paid).abs() < 1e-12, "{cost:?} vs {paid}");
    assert!((cost.ideal - ideal).abs() < 1e-12, "{cost:?} vs {ideal}");
    assert!((cost.lost - (paid - ideal)).abs() < 1e-12);
    let causes: Vec<Cause> = l.rows[1].lost_by_cause.iter().map(|l| l.cause).collect();
    assert_eq!(causes, vec![Cause::InputChanged]);

    // c keeps b's prefix: it reads all of b (in steps), loses nothing.
    let tb = l.rows[1].tokens;
    assert_eq!(
        (
            l.rows[2].verdict.as_ref().map(|v| v.prefix_kept),
            l.rows[2].prediction.predicted.read_tokens,
            l.rows[2].cost_usd.map(|c| c.lost)
        ),
        (Some(true), 1024 + (tb - 1024) / 128 * 128, Some(0.0))
    );
    // The session: its rows summed, one loss figure.
    let s = &l.summary;
    assert_eq!(
        (
            s.requests,
            s.breaks,
            s.estimated_tokens,
            s.reported_cached_tokens
        ),
        (3, 1, l.rows.iter().map(|r| r.tokens).sum(), Some(0))
    );
    let total = s.totals.cost_usd.expect("priced");
    assert!((total.lost - cost.lost).abs() < 1e-12);
    assert_eq!(
        s.lost_by_cause
            .iter()
            .map(|x| (x.cause, x.requests.clone()))
            .collect::<Vec<_>>(),
        vec![(Cause::InputChanged, vec![1])]
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
    let l = ledger::ledger(&session, &Rules::bundled());
    assert_eq!(
        (
            l.summary.totals.cost_usd,
            l.summary.totals.unpriced_models.clone()
        ),
        (None, vec!["llama3.3".to_string()])
    );
    assert!(l.rows.iter().all(|r| r.cost_usd.is_none()));
    assert!(l.summary.sentence().ends_with("price unknown for llama3.3"));
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
    let l = ledger::ledger(&session, &Rules::bundled());
    let growth = session.growth(|i| {
        l.rows[i]
            .verdict
            .as_ref()
            .is_some_and(|v| v.prefix_kept && v.from + 1 == i)
    });
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
