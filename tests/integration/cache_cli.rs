//! `promptwire diff --json` and the cache contract of issue 21: the `requests` array (predicted
//! read / written / uncached tokens, the server's figures, dollars), `summary.cost_usd`, the
//! hazards, and `--what-if` changing the totals — on a small Lite session written to files:
//! a stable developer message followed by a user message that changes.

use std::path::PathBuf;

use crate::support::cli::run;
use pretty_assertions::assert_eq;
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
    // Token counts of the elements, as the analysis measures them.
    let mut session = Session::default();
    for b in bodies() {
        session.push_body(&b, RequestMeta::default()).expect("body");
    }
    let pool = session.pool();
    let r = session.requests();
    let (t0, t1) = (r[0].tokens, r[1].tokens);
    let header: u64 = r[1].shape.header.iter().map(|p| pool.tokens(p.id)).sum();
    let shared = header + pool.tokens(r[1].shape.input[0]);
    let g = promptwire::core::format::grouped;

    let (names, usage) = files();
    let mut args = vec!["diff", "--json", &names[0], &names[1], "--usage", &usage];
    // Only the first body has a response: the second has `--usage` of its own below.
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
    // Request 0 is paid from the server's figures; request 1 reports no cache details: it reads
    // 0 and writes 0 by the server's word (3,900 uncached), and loses the shared prefix, which a
    // perfect cache would have read, at the input rate.
    let paid0 = (3400.0 * 2.5 + 100.0 * 2.0) / 1e6;
    let paid1 = 3900.0 * 2.0 / 1e6;
    let lost1 = shared as f64 * (2.0 - 0.2) / 1e6;
    take_usd(&mut value, "/requests/0/cost_usd/paid", paid0);
    take_usd(&mut value, "/requests/0/cost_usd/ideal", paid0);
    take_usd(&mut value, "/requests/0/cost_usd/lost", 0.0);
    take_usd(&mut value, "/requests/1/cost_usd/paid", paid1);
    take_usd(&mut value, "/requests/1/cost_usd/ideal", paid1 - lost1);
    take_usd(&mut value, "/requests/1/cost_usd/lost", lost1);
    take_usd(&mut value, "/summary/cost_usd/paid", paid0 + paid1);
    take_usd(&mut value, "/summary/cost_usd/ideal", paid0 + paid1 - lost1);
    take_usd(&mut value, "/summary/cost_usd/lost", lost1);
    let null_usd = json!({"paid": null, "ideal": null, "lost": null});
    assert_eq!(
        json!({"requests": value["requests"], "summary_cost": value["summary"]["cost_usd"],
            "cache_tokens": value["summary"]["cache_tokens"], "hazards": value["hazards"]}),
        json!({
            "requests": [
                {
                    "index": 0, "model": "gpt-6-sol", "cache_model": "breakpoints",
                    "predicted": {"read_tokens": 0, "write_tokens": t0, "uncached_tokens": 0},
                    "reported": {"cached_tokens": 0, "cache_write_tokens": 3400},
                    "cost_usd": null_usd,
                    "reason": format!("read nothing: the first request on its route (model, \
                        prompt_cache_key and first ~256 tokens); wrote 1 breakpoint, {} tokens", g(t0)),
                    "finding": null,
                },
                {
                    "index": 1, "model": "gpt-6-sol", "cache_model": "breakpoints",
                    "predicted": {"read_tokens": 0, "write_tokens": t1, "uncached_tokens": 0},
                    "reported": null,
                    "cost_usd": null_usd,
                    "reason": format!("read nothing: no held breakpoint lies before the break at \
                        /input/1 ({} shared tokens before it are not at a breakpoint, and there is \
                        no fallback to an unmarked prefix); wrote 1 breakpoint, {} tokens",
                        g(shared), g(t1)),
                    "finding": null,
                },
            ],
            "summary_cost": null_usd,
            "cache_tokens": {"read_tokens": 0, "write_tokens": t0 + t1, "uncached_tokens": 0},
            "hazards": [{
                "code": "stable_prefix_behind_break", "request": 1,
                "message": format!("request 1 shares {} tokens with the one before but reads 0: \
                    the stable prefix sits behind a changed message at /input/1 and no breakpoint \
                    marks it (no fallback to an unmarked prefix)", g(shared)),
                "fix": "put an explicit prompt_cache_breakpoint on the last stable item (what-if \
                    breakpoint-after:0), or keep changing content after the latest user message",
            }],
        })
    );

    // The what-if: a breakpoint after /input/0 lets request 1 read the stable prefix. Both sides
    // are predictions (the server's figures belong to the session as recorded).
    let mut what_if_args = args.clone();
    what_if_args.extend(["--what-if", "breakpoint-after:0"]);
    let mut value = json_of(&what_if_args);
    let before = (t0 + t1) as f64 * 2.5 / 1e6;
    let after = (t0 as f64 * 2.5 + shared as f64 * 0.2 + (t1 - shared) as f64 * 2.5) / 1e6;
    take_usd(&mut value, "/what_if/usd_saved", before - after);
    take_usd(&mut value, "/what_if/before/cost_usd/paid", before);
    take_usd(&mut value, "/summary/cost_usd/paid", after);
    assert_eq!(
        json!({"what_if": {"edits": value["what_if"]["edits"],
                "read_tokens_gained": value["what_if"]["read_tokens_gained"],
                "before_tokens": [value["what_if"]["before"]["read_tokens"],
                    value["what_if"]["before"]["write_tokens"]]},
            "predicted": [value["requests"][0]["predicted"], value["requests"][1]["predicted"]],
            "paid": value["summary"]["cost_usd"]["paid"]}),
        json!({"what_if": {"edits": ["breakpoint-after:0"], "read_tokens_gained": shared,
                "before_tokens": [0, t0 + t1]},
            "predicted": [
                {"read_tokens": 0, "write_tokens": t0, "uncached_tokens": 0},
                {"read_tokens": shared, "write_tokens": t1 - shared, "uncached_tokens": 0},
            ],
            "paid": null})
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
    use promptwire::core::cache;
    use promptwire::core::models::cache::CacheModels;
    use promptwire::core::prefix::PriceTable;
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
    let expected: Vec<Value> = cache::report(&session, &table, &PriceTable::bundled())
        .requests
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
