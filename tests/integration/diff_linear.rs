//! `diff` stays linear in its input: bodies added by value (`push_body_owned`) give the same
//! ledger as by reference, and `diff` of two 8 MB runs of one character (once seconds and
//! hundreds of megabytes in the tokenizer) finishes quickly through the built binary.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use promptwire::core::ledger::{self, Rules};
use promptwire::core::prefix::{RequestMeta, Session, Tokenizer};
use serde_json::{Value, json};

fn bodies() -> Vec<Value> {
    let item = |role: &str, text: &str| json!({"type": "message", "role": role, "content": [{"type": "input_text", "text": text}]});
    let first = json!({"model": "gpt-5.5", "instructions": "Be brief.", "input": [item("user", "hi")],
        "tools": [], "store": false});
    let second = json!({"model": "gpt-5.5", "instructions": "Be brief.",
        "input": [item("user", "hi"), item("assistant", "hello"), item("user", "more")],
        "tools": [], "store": false});
    let edited = json!({"model": "gpt-5.5", "input": [item("user", "HI"), item("user", "x")],
        "instructions": "Be brief.", "tools": []});
    let no_input = json!({"model": "gpt-5.5", "input": []});
    vec![first, second, edited, no_input]
}

#[test]
fn owned_bodies_give_the_same_ledger() {
    let rules = Rules::bundled();
    let mut by_ref = Session::new(Tokenizer::o200k());
    let mut owned = Session::new(Tokenizer::o200k());
    for body in bodies() {
        by_ref
            .push_body(&body, RequestMeta::default())
            .expect("by ref");
        owned
            .push_body_owned(body, RequestMeta::default())
            .expect("owned");
    }
    let (a, b) = (
        ledger::ledger(&owned, &rules),
        ledger::ledger(&by_ref, &rules),
    );
    assert_eq!(
        (a.rows, a.summary, a.hazards),
        (b.rows, b.summary, b.hazards)
    );
    // Bad bodies fail the same way.
    for bad in [json!([1]), json!({"model": "m", "input": 3})] {
        assert_eq!(
            Session::new(Tokenizer::o200k())
                .push_body_owned(bad.clone(), RequestMeta::default())
                .map_err(|e| e.to_string()),
            Session::new(Tokenizer::o200k())
                .push_body(&bad, RequestMeta::default())
                .map_err(|e| e.to_string())
        );
    }
}

#[test]
fn diff_of_two_long_runs_of_one_character_is_quick() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("diff_linear");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let body = |n: usize| {
        json!({"model": "gpt-5.5", "input": [{"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": "a".repeat(n)}]}]})
        .to_string()
    };
    let (a, b) = (dir.join("a.json"), dir.join("b.json"));
    std::fs::write(&a, body(8_000_000)).expect("write a");
    std::fs::write(&b, body(8_000_001)).expect("write b");
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .arg("diff")
        .arg(&a)
        .arg(&b)
        .args(["--json"])
        .output()
        .expect("run diff");
    let elapsed = start.elapsed();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A debug build; release takes ~50 ms (benches/prefix.rs).
    assert!(elapsed < Duration::from_secs(15), "took {elapsed:?}");
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(report["summary"]["requests"], json!(2));
    assert_eq!(report["pairs"][0]["prefix_kept"], json!(false));
}
