//! `promptwire diff --json` and the ledger's contract: the `requests` array (one row each:
//! predicted read / written / uncached tokens, the server's figures, dollars paid / ideal / lost
//! and the loss by cause), `summary.cost_usd` (the rows summed), the hazards, and `--what-if`
//! whose "before" is the ledger's paid — on a small breakpoint-model session written to files:
//! a stable developer message followed by a user message that changes. Dollars are computed
//! here from the documented rules and the bundled prices.

use std::path::PathBuf;

use crate::support::cli::run;
use pretty_assertions::assert_eq;
use promptwire::core::ledger::{self, Rules};
use promptwire::core::prefix::{RequestMeta, Session};
use serde_json::{Value, json};

fn msg(role: &str, text: &str) -> Value {
    json!({"type": "message", "role": role, "content": [{"type": "input_text", "text": text}]})
}

fn bodies() -> Vec<Value> {
    let stable = msg(
        "developer",
        &format!("stable: {}", "lorem ipsum ".repeat(1500)),
    );
    ["one", "two"]
        .iter()
        .map(|q| {
            json!({
                "model": "gpt-6-sol",
                "instructions": format!("instructions: {}", "dolor sit ".repeat(300)),
                "input": [stable, msg("user", &format!("question {q}: {}", "amet ".repeat(50)))],
                "prompt_cache_key": "thread",
                "stream": true,
            })
        })
        .collect()
}

fn files() -> (Vec<String>, String) {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cache_cli");
    std::fs::create_dir_all(&dir).expect("dir");
    let names = bodies()
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let path = dir.join(format!("req_{i}.json"));
            std::fs::write(&path, serde_json::to_vec(b).expect("json")).expect("write");
            path.display().to_string()
        })
        .collect();
    let usage = dir.join("resp_0.json");
    std::fs::write(
        &usage,
        json!({"usage": {"input_tokens": 3500,
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 3400},
            "output_tokens": 10}})
        .to_string(),
    )
    .expect("write");
    (names, usage.display().to_string())
}

fn json_of(args: &[&str]) -> Value {
    let out = run(args, None);
    assert_eq!(
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).to_string()
        ),
        (Some(0), String::new())
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

/// Takes the dollar figure at `pointer` out of `value` (set to null) and checks it against
/// `expected` (floating-point sums in another order may differ in the last bits).
fn take_usd(value: &mut Value, pointer: &str, expected: f64) {
    let slot = value.pointer_mut(pointer).expect(pointer);
    let got = slot.as_f64().expect("a number");
    assert!(
        (got - expected).abs() < 1e-12,
        "{pointer}: {got} vs {expected}"
    );
    *slot = Value::Null;
}

#[test]
fn cache_cli_requests_array_and_what_if() {
    // Token counts of the rendered prompt, as the ledger measures them.
    let mut session = Session::default();
    for b in bodies() {
        session.push_body(&b, RequestMeta::default()).expect("body");
    }
    let l = ledger::ledger(&session, &Rules::bundled());
    let (t0, t1) = (l.rows[0].tokens, l.rows[1].tokens);
    let v = l.rows[1].verdict.clone().expect("verdict");
    // Request 1 shares the instructions, the stable message and the first word of the question.
    let shared = v.reusable_tokens;
    // Through the stable message (the end of /input/0): where an explicit breakpoint goes.
    let layout = &l.rendered.layouts[1];
    let kept = layout.cum[layout.item_parts(0).expect("item 0").end];
    assert!(kept < shared && shared < t1, "{kept} {shared} {t1}");
    let g = promptwire::core::format::grouped;

    let (names, usage) = files();
    let mut args = vec!["diff", "--json", &names[0], &names[1], "--usage", &usage];
    // The second body's response reports its input tokens and no cache details.
    let second_usage = PathBuf::from(&usage).with_file_name("resp_1.json");
    std::fs::write(
        &second_usage,
        json!({"usage": {"input_tokens": 3900, "output_tokens": 5}}).to_string(),
    )
    .expect("write");
    let second_usage = second_usage.display().to_string();
    args.extend(["--usage", &second_usage]);
    let mut value = json_of(&args);
    // gpt-6-sol, assets/prices.json: $2 input, $0.20 cached, $2.50 cache writes per 1M.
    // Request 0, the first: paid from the server's figures, its own cost (ideal = paid).
    let paid0 = (3400.0 * 2.5 + 100.0 * 2.0) / 1e6;
    // Request 1: usage without cache details reads and writes nothing (3,900 uncached). Had it
    // read what it shares with request 0 (scaled to the server's 3,900) and written the rest up
    // to its breakpoint, it would have paid the ideal; the difference is lost to the missing
    // breakpoint (no fallback to an unmarked prefix).
    let scale = |n: u64| (n as f64 * 3900.0 / t1 as f64).round();
    let (r, w) = (scale(shared), scale(t1 - shared));
    let paid1 = 3900.0 * 2.0 / 1e6;
    let ideal1 = ((r * 0.2 + w * 2.5 + (3900.0 - r - w) * 2.0) / 1e6).min(paid1);
    let lost1 = paid1 - ideal1;
    assert!(lost1 > 0.0);
    take_usd(&mut value, "/requests/0/cost_usd/paid", paid0);
    take_usd(&mut value, "/requests/0/cost_usd/ideal", paid0);
    take_usd(&mut value, "/requests/0/cost_usd/lost", 0.0);
    take_usd(&mut value, "/requests/1/cost_usd/paid", paid1);
    take_usd(&mut value, "/requests/1/cost_usd/ideal", ideal1);
    take_usd(&mut value, "/requests/1/cost_usd/lost", lost1);
    take_usd(&mut value, "/requests/1/lost_by_cause/0/usd", lost1);
    take_usd(&mut value, "/summary/cost_usd/paid", paid0 + paid1);
    take_usd(&mut value, "/summary/cost_usd/ideal", paid0 + ideal1);
    take_usd(&mut value, "/summary/cost_usd/lost", lost1);
    let null_usd = json!({"paid": null, "ideal": null, "lost": null});
    assert_eq!(
        json!({"requests": value["requests"], "summary_cost": value["summary"]["cost_usd"],
            "cache_tokens": value["summary"]["cache_tokens"], "hazards": value["hazards"]}),
        json!({
            "requests": [
                {
                    "index": 0, "kind": "first", "previous": null,
                    "model": "gpt-6-sol", "cache_model": "breakpoints", "tokens": t0,
                    "predicted": {"read_tokens": 0, "write_tokens": t0, "uncached_tokens": 0},
                    "reported": {"input_tokens": 3500, "cached_tokens": 0,
                                 "cache_write_tokens": 3400, "diagnostics": null},
                    "ideal_read_tokens": 0,
                    "cost_usd": null_usd,
                    "lost_by_cause": [],
                    "notes": [],
                    "reason": format!("read nothing: the first request on its route (model, \
                        prompt_cache_key, service tier and first ~256 tokens); wrote 1 \
                        breakpoint, {} tokens", g(t0)),
                    "finding": null,
                    "not_recorded": [],
                },
                {
                    "index": 1, "kind": "turn", "previous": 0,
                    "model": "gpt-6-sol", "cache_model": "breakpoints", "tokens": t1,
                    "predicted": {"read_tokens": 0, "write_tokens": t1, "uncached_tokens": 0},
                    "reported": {"input_tokens": 3900, "cached_tokens": null,
                                 "cache_write_tokens": null, "diagnostics": null},
                    "ideal_read_tokens": r as u64,
                    "cost_usd": null_usd,
                    "lost_by_cause": [{"cause": "no_breakpoint", "usd": null, "tokens": r as u64}],
                    "notes": ["no_breakpoint"],
                    "reason": format!("read nothing: nothing held on its route matches its \
                        prefix from the floor on; wrote 1 breakpoint, {} tokens", g(t1)),
                    "finding": null,
                    "not_recorded": [],
                },
            ],
            "summary_cost": null_usd,
            "cache_tokens": {"input_tokens": 3500 + 3900, "read_tokens": 0,
                             "write_tokens": 3400, "uncached_tokens": 100 + 3900},
            "hazards": [{
                "code": "stable_prefix_behind_break", "request": 1,
                "message": format!("request 1 shares {} tokens of its prefix with request 0 but \
                    reads 0: the prefix runs past the last breakpoint before the change at \
                    /input/1/content/0/text, and no breakpoint marks it ({} lost)",
                    g(r as u64), promptwire::core::ledger::summary::usd(lost1)),
                "fix": "put an explicit prompt_cache_breakpoint on the last stable item (what-if \
                    breakpoint-after:0), or keep changing content after the latest user message",
            }],
        })
    );

    // The what-if: a breakpoint after /input/0 lets request 1 read the stable prefix. Its
    // "before" is the ledger's paid; request 1 moves by what the edit changes in the
    // prediction (it reads `kept` more, scaled to the server's count).
    let mut what_if_args = args.clone();
    what_if_args.extend(["--what-if", "breakpoint-after:0"]);
    let mut value = json_of(&what_if_args);
    let read_after = scale(kept);
    let after1 = (read_after * 0.2 + (3900.0 - read_after) * 2.0) / 1e6;
    take_usd(&mut value, "/what_if/usd_saved", paid1 - after1);
    take_usd(&mut value, "/what_if/before/cost_usd/paid", paid0 + paid1);
    take_usd(&mut value, "/what_if/after/cost_usd/paid", paid0 + after1);
    assert_eq!(
        json!({"edits": value["what_if"]["edits"],
               "read_tokens_gained": value["what_if"]["read_tokens_gained"],
               "before": [value["what_if"]["before"]["read_tokens"],
                          value["what_if"]["before"]["write_tokens"]],
               "after": [value["what_if"]["after"]["read_tokens"],
                         value["what_if"]["after"]["write_tokens"]]}),
        json!({"edits": ["breakpoint-after:0"], "read_tokens_gained": read_after as u64,
               "before": [0, 3400], "after": [read_after as u64, 3400]})
    );

    // A what-if that does not apply is one line on stderr, exit 1.
    let mut bad = args.clone();
    bad.extend(["--what-if", "undo-tools:1"]);
    let out = run(&bad, None);
    assert_eq!(
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).trim_end().to_string()
        ),
        (
            Some(1),
            "promptwire: --what-if undo-tools:1: request 1's tools are request 0's: nothing to undo"
                .to_string()
        )
    );
}

/// `diff --cache-models FILE`: a row gives gpt-6-sol the prefix model (and a longer default
/// retention), so both requests are simulated by the prefix rules — exactly what core predicts
/// with the same table; a bad file is refused whole with its line and column, nothing printed.
#[test]
fn cache_cli_cache_models_file_overrides_and_bad_file_says_where() {
    use promptwire::core::ledger::CacheModels;
    let (names, _) = files();
    let dir = PathBuf::from(&names[0]).with_file_name("models");
    std::fs::create_dir_all(&dir).expect("dir");
    let good = dir.join("cache-models.json");
    let text = r#"{"models": [
  {"prefix": "gpt-6-sol", "cache_model": "prefix", "default_retention_secs": 3600}
]}"#;
    std::fs::write(&good, text).expect("write");
    let good = good.display().to_string();
    let value = json_of(&[
        "diff",
        "--json",
        &names[0],
        &names[1],
        "--cache-models",
        &good,
    ]);
    let mut session = Session::default();
    for b in bodies() {
        session.push_body(&b, RequestMeta::default()).expect("body");
    }
    let table = CacheModels::from_json(text).expect("table");
    let rules = Rules {
        cache_models: table,
        ..Rules::bundled()
    };
    let expected: Vec<Value> = ledger::ledger(&session, &rules)
        .rows
        .iter()
        .map(|r| {
            let p = &r.prediction.predicted;
            json!({"cache_model": "prefix", "predicted": {"read_tokens": p.read_tokens,
                "write_tokens": p.write_tokens, "uncached_tokens": p.uncached_tokens}})
        })
        .collect();
    let shown: Vec<Value> = value["requests"]
        .as_array()
        .expect("requests")
        .iter()
        .map(|r| json!({"cache_model": r["cache_model"], "predicted": r["predicted"]}))
        .collect();
    assert_eq!(shown, expected);
    // Without the file the same bodies are breakpoint requests.
    let plain = json_of(&["diff", "--json", &names[0], &names[1]]);
    assert_eq!(plain["requests"][1]["cache_model"], json!("breakpoints"));
    assert_ne!(plain["requests"][1]["predicted"], expected[1]["predicted"]);

    let bad = dir.join("bad.json");
    std::fs::write(
        &bad,
        "{\"models\": [\n  {\"prefix\": \"gpt-6-sol\", \"cache_model\": \"prefix\"},\n  {\"prefix\": \"gpt-6\", \"cache_model\": \"lru\"}\n]}",
    )
    .expect("write");
    let bad = bad.display().to_string();
    let out = run(
        &[
            "diff",
            "--json",
            &names[0],
            &names[1],
            "--cache-models",
            &bad,
        ],
        None,
    );
    assert_eq!(
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).to_string(),
            String::from_utf8_lossy(&out.stderr).to_string()
        ),
        (
            Some(1),
            String::new(),
            format!(
                "promptwire: --cache-models {bad}: line 3, column 42: models[1].cache_model: unknown \
                 variant `lru`, expected `prefix` or `breakpoints`\n"
            )
        )
    );
}
