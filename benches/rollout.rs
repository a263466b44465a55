//! Codex rollout import benchmark (`cargo bench --bench rollout`), the targets of issue 14:
//!
//! 1. Importing one 5,000-line rollout (parse, rebuild every request, write one session into a
//!    fresh SQLite file) ≤ 1 s — median of 7 runs.
//! 2. Importing a folder of 1,000 rollouts (copies of the captured Codex sessions) ≤ 30 s —
//!    median of 3 runs, each into a fresh database.
//!
//! Medians are printed; a run over its target fails.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use promptwire::core::rollout::{Limits, parse};
use promptwire::store::{DEFAULT_MAX_ROLLOUT_BYTES, Page, Store};

#[path = "support/rollout_folder.rs"]
mod rollout_folder;

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("rollout_bench")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("bench dir");
    dir
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}

fn bench_long_rollout(runs: usize) {
    let bytes = rollout_folder::long_rollout(5_000);
    let lines = bytes.iter().filter(|b| **b == b'\n').count();
    let parsed = parse(&bytes, &Limits::default()).expect("parse");
    let requests = parsed.sessions[0].requests.len();
    let last = &parsed.sessions[0].requests[requests - 1];
    let last_bytes = serde_json::to_vec(&parsed.sessions[0].body(last))
        .expect("body")
        .len();
    let dir = scratch("long");
    let file = dir.join("rollout-2026-11-30T16-01-25-01a22d30-89fc-70b3-b345-55a7c2d15602.jsonl");
    std::fs::write(&file, &bytes).expect("write");
    let mut times = Vec::new();
    for run in 0..runs {
        let db = dir.join(format!("db{run}.sqlite"));
        let mut store = Store::open(&db).expect("db");
        let start = Instant::now();
        let imports = store
            .import_rollout_file(&file, DEFAULT_MAX_ROLLOUT_BYTES, &Limits::default())
            .expect("import");
        times.push(start.elapsed());
        assert_eq!(imports[0].requests, requests);
    }
    let m = median(times);
    println!(
        "rollout/import_5000_lines: {lines} lines, {requests} requests, last body {last_bytes} bytes: median {:.1} ms (target ≤ 1000 ms)",
        m.as_secs_f64() * 1000.0
    );
    assert!(m <= Duration::from_secs(1), "over target");
}

fn bench_folder(count: usize, runs: usize) {
    let dir = scratch("folder");
    let sessions = dir.join("sessions");
    rollout_folder::make_folder(&sessions, count);
    let never = AtomicBool::new(false);
    let mut times = Vec::new();
    for run in 0..runs {
        let db = dir.join(format!("db{run}.sqlite"));
        let mut store = Store::open(&db).expect("db");
        let start = Instant::now();
        let report = store
            .import_rollout_dir(
                &sessions,
                DEFAULT_MAX_ROLLOUT_BYTES,
                &Limits::default(),
                &mut |_| {},
                &never,
            )
            .expect("import");
        times.push(start.elapsed());
        assert_eq!(report.failed, vec![]);
        assert_eq!(store.list_sessions(Page::ALL).expect("list").len(), count);
    }
    let m = median(times);
    println!(
        "rollout/import_folder_{count}: median {:.2} s (target ≤ 30 s)",
        m.as_secs_f64()
    );
    assert!(m <= Duration::from_secs(30), "over target");
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` does not: skip the heavy work then.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    bench_long_rollout(7);
    bench_folder(1_000, 3);
}
