//! Benchmark: the ledger of a generated 1,000-request session whose last body is about 2 MB
//! (about 1 GB of bodies in all), from the items: every distinct item hashed once, rendered and
//! its segments tokenized once, then requests compared as lists of segment ids. Target: ≤ 1 s
//! and ≤ 200 MB peak memory. Peak memory: `examples/prefix_memory.rs` under `/usr/bin/time -v`.

use criterion::{Criterion, criterion_group, criterion_main};
use promptwire::core::ledger::{self, Rules};
use promptwire::core::prefix::{RequestMeta, Session, Tokenizer};

#[path = "support/prefix_session.rs"]
mod prefix_session;

fn analyze(synthetic: &prefix_session::SyntheticSession, rules: &Rules) -> usize {
    let mut session = Session::new(Tokenizer::o200k());
    let ids: Vec<_> = synthetic
        .items
        .iter()
        .map(|item| session.intern_item(item))
        .collect();
    for (head, items) in &synthetic.requests {
        let head = &synthetic.heads[*head];
        let input: Vec<_> = items.iter().map(|i| ids[*i as usize]).collect();
        session
            .push_parts(head, &input, RequestMeta::default())
            .expect("valid request");
    }
    ledger::ledger(&session, rules).summary.breaks
}

fn bench(c: &mut Criterion) {
    let synthetic = prefix_session::generate();
    let rules = Rules::bundled();
    eprintln!(
        "session: {} requests, {} distinct items, last body {} bytes",
        synthetic.requests.len(),
        synthetic.items.len(),
        synthetic.body_bytes(synthetic.requests.len() - 1)
    );
    // Load the tokenizer tables outside the measurement (a one-time cost per process).
    let _ = Tokenizer::o200k().count("warm up");
    assert_eq!(analyze(&synthetic, &rules), 3);
    let mut group = c.benchmark_group("prefix");
    group.sample_size(10);
    group.bench_function("analyze_1000_requests_2MB", |b| {
        b.iter(|| analyze(&synthetic, &rules))
    });
    group.finish();
}

/// Two bodies of `items` messages of about `item_bytes` each (the second with one more item), as
/// JSON text; words drawn from a small list with a fixed-seed generator.
fn two_bodies(items: usize, item_bytes: usize) -> (String, String) {
    const WORDS: [&str; 8] = [
        "the", "build", "failed", "because", "cargo", "fn", "let", "crate",
    ];
    let mut state = 0x9e37_79b9_u32;
    let mut text = |n: usize| {
        let mut out = String::with_capacity(n + 8);
        while out.len() < n {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            out.push_str(WORDS[state as usize % WORDS.len()]);
            out.push(' ');
        }
        out
    };
    let item = |i: usize, text: String| {
        serde_json::json!({"type": "message", "role": if i.is_multiple_of(2) { "user" } else { "assistant" },
            "content": [{"type": "input_text", "text": text}]})
    };
    let mut input: Vec<serde_json::Value> = (0..items).map(|i| item(i, text(item_bytes))).collect();
    let a = serde_json::json!({"model": "gpt-5.5", "instructions": "Be brief.", "input": input});
    input.push(item(items, "one more".to_string()));
    let b = serde_json::json!({"model": "gpt-5.5", "instructions": "Be brief.", "input": input});
    (a.to_string(), b.to_string())
}

/// What `promptwire diff A B` does with two bodies: parse, analyze, report.
fn diff_bodies(a: &str, b: &str, rules: &Rules) -> usize {
    let mut session = Session::new(Tokenizer::o200k());
    for text in [a, b] {
        let body: serde_json::Value = serde_json::from_str(text).expect("body");
        session
            .push_body_owned(body, RequestMeta::default())
            .expect("valid body");
    }
    ledger::ledger(&session, rules).summary.breaks
}

/// `diff` of two 30 MB bodies (target ≤ 1 s; in process and end to end through the binary), and
/// of two 8 MB runs of one character (the case that was quadratic in the tokenizer).
fn bench_diff(c: &mut Criterion) {
    let rules = Rules::bundled();
    let _ = Tokenizer::o200k().count("warm up");
    let (a, b) = two_bodies(3000, 10_000);
    eprintln!("bodies: {} and {} bytes", a.len(), b.len());
    assert_eq!(diff_bodies(&a, &b, &rules), 0);
    let run = |n: usize| {
        serde_json::json!({"model": "gpt-5.5", "input": [{"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": "a".repeat(n)}]}]})
        .to_string()
    };
    let (e, f) = (run(8_000_000), run(8_000_001));
    // End to end as a user runs it: the built binary on two files (process start, tokenizer
    // tables, reading, parsing, analysis, output).
    let dir = std::env::temp_dir().join(format!("promptwire-bench-diff-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let (file_a, file_b) = (dir.join("a.json"), dir.join("b.json"));
    std::fs::write(&file_a, &a).expect("write a");
    std::fs::write(&file_b, &b).expect("write b");
    let cli = || {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_promptwire"))
            .arg("diff")
            .args([&file_a, &file_b])
            .output()
            .expect("run promptwire diff");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout.len()
    };
    let mut group = c.benchmark_group("diff");
    group.sample_size(10);
    group.bench_function("two_30MB_bodies", |bench| {
        bench.iter(|| diff_bodies(&a, &b, &rules))
    });
    group.bench_function("two_8MB_runs_of_one_char", |bench| {
        bench.iter(|| diff_bodies(&e, &f, &rules))
    });
    group.bench_function("cli_two_30MB_files", |bench| bench.iter(cli));
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, bench, bench_diff);
criterion_main!(benches);
