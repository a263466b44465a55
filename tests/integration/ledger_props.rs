//! Property tests of the ledger over random sessions (turns appended, tools changed, effort and
//! cache key switched, earlier items edited, compactions, warm-ups, model switches, server
//! figures or none, times with gaps): the rows sum to the summary; every row's lost is paid −
//! ideal and never below 0; the what-if of no edit is the ledger; and the same session read as
//! bodies, from a real SQLite file, and through a HAR export and import gives the same rows.

use std::path::Path;

use promptwire::core::ledger::{self, Ledger, Rules};
use promptwire::core::prefix::{RequestMeta, Session};
use promptwire::store::{
    NewRequest, NewSession, OutcomeRecord, RecordedState, ResponseMeta, Source, Store,
};
use proptest::prelude::*;
use serde_json::{Value, json};

/// One step of a random session.
#[derive(Debug, Clone)]
enum Step {
    /// A user turn and the assistant's answer appended.
    Append(u8),
    /// A tool added to the list.
    AddTool,
    /// The effort switched.
    Effort,
    /// The cache key switched.
    Key,
    /// An earlier item edited.
    Edit,
    /// A compaction request, then a rewritten history.
    Compact,
    /// A warm-up before the next turn.
    Warmup,
    /// The model switched between a prefix and a breakpoint model.
    Model,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => any::<u8>().prop_map(Step::Append),
        1 => Just(Step::AddTool),
        1 => Just(Step::Effort),
        1 => Just(Step::Key),
        1 => Just(Step::Edit),
        1 => Just(Step::Compact),
        1 => Just(Step::Warmup),
        1 => Just(Step::Model),
    ]
}

fn msg(role: &str, text: &str) -> Value {
    json!({"type": "message", "role": role, "content": [{"type": "input_text", "text": text}]})
}

/// Words enough for ~`n` tokens.
fn words(tag: u8, n: usize) -> String {
    format!("{tag}: {}", "tokens of text ".repeat(n / 3))
}

/// The bodies (and whether each is a warm-up) of a session following `steps`.
fn bodies(steps: &[Step]) -> Vec<Value> {
    let mut items = vec![msg("user", &words(0, 1500))];
    let mut tools = vec![
        json!({"type": "function", "name": "shell", "description": "Run.",
                                "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}}}),
    ];
    let (mut effort, mut key, mut model) = ("medium", "k1", "gpt-5.5");
    let body = |items: &[Value], tools: &[Value], effort: &str, key: &str, model: &str| {
        json!({"model": model, "instructions": "Be brief.", "input": items, "tools": tools,
               "reasoning": {"effort": effort}, "prompt_cache_key": key, "stream": true})
    };
    let mut out = vec![body(&items, &tools, effort, key, model)];
    for s in steps {
        match s {
            Step::Append(n) => {
                items.push(msg("assistant", &words(*n, 60)));
                items.push(msg("user", &words(n.wrapping_add(1), 30 + usize::from(*n))));
            }
            Step::AddTool => tools.push(
                json!({"type": "function", "name": format!("t{}", tools.len()),
                "parameters": {"type": "object", "properties": {}}}),
            ),
            Step::Effort => effort = if effort == "medium" { "high" } else { "medium" },
            Step::Key => key = if key == "k1" { "k2" } else { "k1" },
            Step::Edit => items[0] = msg("user", &words(9, 1500)),
            Step::Compact => {
                let mut compact = body(&items, &[], effort, key, model);
                compact["input"]
                    .as_array_mut()
                    .expect("input")
                    .push(promptwire::core::compile::compaction::checkpoint_message());
                out.push(compact);
                items = vec![
                    items[0].clone(),
                    msg(
                        "user",
                        "Another language model started to solve this problem: done.",
                    ),
                ];
            }
            Step::Warmup => {
                let mut warm = body(&items, &tools, effort, key, model);
                warm["generate"] = json!(false);
                out.push(warm);
                continue;
            }
            Step::Model => {
                model = if model == "gpt-5.5" {
                    "gpt-5.6-sol"
                } else {
                    "gpt-5.5"
                }
            }
        }
        out.push(body(&items, &tools, effort, key, model));
    }
    out
}

/// The server's usage for request `i`: none, or input and cached tokens (cached ≤ input).
fn usage(i: usize, seed: u64) -> Option<Value> {
    let x = seed.rotate_left(i as u32 * 7) % 5;
    (x != 0).then(|| {
        let input = 1500 + 300 * i as u64 + x * 17;
        let cached = (input * x / 5) / 128 * 128;
        json!({"input_tokens": input, "input_tokens_details": {"cached_tokens": cached},
               "output_tokens": 10})
    })
}

/// Send and finish times (ms): 10 s apart, or 20 minutes after a gap step.
fn times(n: usize, gaps: u64) -> Vec<(i64, i64)> {
    let mut t = 1_700_000_000_000i64;
    (0..n)
        .map(|i| {
            t += if gaps >> (i % 64) & 1 == 1 {
                1_200_000
            } else {
                10_000
            };
            (t, t + 2_000)
        })
        .collect()
}

fn meta(i: usize, seed: u64, time: (i64, i64)) -> RequestMeta {
    let counts = promptwire::core::stream::UsageCounts::from_value;
    let u = usage(i, seed);
    let c = u.as_ref().and_then(counts);
    let n = |v: Option<i64>| v.and_then(|v| u64::try_from(v).ok());
    RequestMeta {
        reported_input_tokens: c.and_then(|c| n(c.input_tokens)),
        reported_cached_tokens: c.and_then(|c| n(c.cached_input_tokens)),
        sent_at_ms: Some(time.0),
        finished_at_ms: Some(time.1),
        ..RequestMeta::default()
    }
}

fn ledger_of_bodies(bodies: &[Value], seed: u64, gaps: u64) -> (Session, Ledger) {
    let t = times(bodies.len(), gaps);
    let mut s = Session::default();
    for (i, b) in bodies.iter().enumerate() {
        s.push_body(b, meta(i, seed, t[i])).expect("body");
    }
    let l = ledger::ledger(&s, &Rules::bundled());
    (s, l)
}

/// The session written to a real SQLite file (bodies, usage, times).
fn stored(dir: &Path, bodies: &[Value], seed: u64, gaps: u64) -> (Store, i64) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).expect("dir");
    let mut store = Store::open(dir.join("p.sqlite")).expect("store");
    let id = store
        .create_session(&NewSession {
            name: "props".to_string(),
            source: Source::Import,
            provider: None,
            model: None,
            created_us: 0,
        })
        .expect("session");
    let t = times(bodies.len(), gaps);
    for (i, b) in bodies.iter().enumerate() {
        let bytes = serde_json::to_vec(b).expect("json");
        let request = store
            .add_request(
                id,
                &NewRequest {
                    started_us: Some(t[i].0 * 1000),
                    ..NewRequest::post("https://api.openai.com/v1/responses", &bytes)
                },
            )
            .expect("request");
        let outcome = OutcomeRecord {
            state: RecordedState::Completed,
            usage: usage(i, seed).map(|u| {
                // The stored shape: the client's usage counts.
                json!({"input_tokens": u["input_tokens"],
                       "cached_input_tokens": u["input_tokens_details"]["cached_tokens"],
                       "output_tokens": 10})
            }),
            total_us: Some((t[i].1 - t[i].0) * 1000),
            ..OutcomeRecord::default()
        };
        store.set_outcome(request, &outcome).expect("outcome");
        let response = ResponseMeta {
            status: Some(200),
            total_us: Some((t[i].1 - t[i].0) * 1000),
            ..ResponseMeta::default()
        };
        store.set_response(request, &response).expect("response");
    }
    (store, id)
}

fn ledger_of_stored(store: &Store, id: i64) -> Ledger {
    let mut s = Session::default();
    promptwire::store::prefix_input::push_stored_session(&mut s, store, id).expect("stored");
    ledger::ledger(&s, &Rules::bundled())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn rows_sum_to_the_summary_lost_is_paid_minus_ideal_and_no_edit_is_the_ledger(
        steps in prop::collection::vec(step(), 1..8),
        seed in any::<u64>(),
        gaps in any::<u64>(),
    ) {
        let bodies = bodies(&steps);
        let (s, l) = ledger_of_bodies(&bodies, seed, gaps);
        let cost = l.summary.totals.cost_usd.expect("every model is priced");
        let (mut paid, mut ideal, mut lost) = (0.0, 0.0, 0.0);
        for row in &l.rows {
            let d = row.cost_usd.expect("priced");
            prop_assert!(d.lost >= 0.0 && d.ideal <= d.paid + 1e-15, "row {}: {d:?}", row.index);
            prop_assert!((d.lost - (d.paid - d.ideal)).abs() < 1e-12, "row {}: {d:?}", row.index);
            let by_cause: f64 = row.lost_by_cause.iter().map(|c| c.usd).sum();
            prop_assert!((by_cause - d.lost).abs() < 1e-12, "row {}: {:?}", row.index, row.lost_by_cause);
            paid += d.paid;
            ideal += d.ideal;
            lost += d.lost;
        }
        prop_assert!((cost.paid - paid).abs() < 1e-9 && (cost.ideal - ideal).abs() < 1e-9);
        prop_assert!((cost.lost - lost).abs() < 1e-9);
        let by_cause: f64 = l.summary.lost_by_cause.iter().map(|c| c.usd).sum();
        prop_assert!((by_cause - cost.lost).abs() < 1e-9);
        let t = &l.summary.totals;
        prop_assert_eq!(
            (t.read_tokens, t.write_tokens, t.uncached_tokens, t.input_tokens),
            (
                l.rows.iter().map(|r| r.read_tokens()).sum::<u64>(),
                l.rows.iter().map(|r| r.write_tokens()).sum::<u64>(),
                l.rows.iter().map(|r| r.uncached_tokens()).sum::<u64>(),
                l.rows.iter().map(|r| r.input_tokens()).sum::<u64>()
            )
        );
        let w = l.what_if(&s, &Rules::bundled(), &[]).expect("no edit");
        prop_assert_eq!(&w.before, &l.summary.totals);
        prop_assert_eq!(&w.after, &l.summary.totals);
        prop_assert_eq!(w.usd_saved, Some(0.0));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn bodies_a_stored_session_and_its_har_give_the_same_rows(
        steps in prop::collection::vec(step(), 1..6),
        seed in any::<u64>(),
        gaps in any::<u64>(),
    ) {
        let bodies = bodies(&steps);
        let (_, from_bodies) = ledger_of_bodies(&bodies, seed, gaps);
        let dir = crate::support::module_scratch_root().join(format!("props-{}", std::process::id()));
        let (mut store, id) = stored(&dir, &bodies, seed, gaps);
        let from_store = ledger_of_stored(&store, id);
        prop_assert_eq!(&from_store.rows, &from_bodies.rows);
        prop_assert_eq!(&from_store.summary, &from_bodies.summary);
        let har = store.export_har(id, true).expect("export");
        let (again, _) = store
            .import_har(&har.to_string(), "again", Path::new("again.har"))
            .expect("import");
        let from_har = ledger_of_stored(&store, again);
        prop_assert_eq!(&from_har.rows, &from_bodies.rows);
        prop_assert_eq!(&from_har.summary, &from_bodies.summary);
    }
}
