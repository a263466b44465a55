//! Codex rollout import benchmark (`cargo bench --bench rollout`), the targets of issue 14:
//!
//! 1. Importing one 5,000-line rollout (parse, rebuild every request, write one session into a
//!    fresh SQLite file) ≤ 1 s — median of 7 runs.
//! 2. Importing a folder of 1,000 rollouts (copies of the captured Codex sessions) ≤ 30 s —
//!    median of 3 runs, each into a fresh database.
//! 3. (Issue 34) Importing a rollout of 1,700 requests ≤ 2 s, median of 5; the imported
//!    session read back into the ledger is printed beside it.
//!
//! `cargo bench --bench rollout -- NAME` runs the one whose name contains NAME.
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

/// Issue 34's target: importing a rollout of 1,700 requests ≤ 2 s (parse, reconstruct, write);
/// and, beside it, reading the imported session back into the ledger (what opening it costs).
fn bench_requests(wanted: usize, runs: usize) {
    let mut lines = wanted * 3;
    let (bytes, requests) = loop {
        let bytes = rollout_folder::long_rollout(lines);
        let parsed = parse(&bytes, &Limits::default()).expect("parse");
        let requests = parsed.sessions[0].requests.len();
        if requests >= wanted {
            break (bytes, requests);
        }
        lines += lines / 4;
    };
    let dir = scratch("requests");
    let file = dir.join("rollout-2026-11-30T16-01-25-01a22d30-89fc-70b3-b345-55a7c2d15602.jsonl");
    std::fs::write(&file, &bytes).expect("write");
    let rules = promptwire::core::ledger::Rules::bundled();
    let (mut imports, mut ledgers) = (Vec::new(), Vec::new());
    for run in 0..runs {
        let db = dir.join(format!("db{run}.sqlite"));
        let mut store = Store::open(&db).expect("db");
        let start = Instant::now();
        let imported = store
            .import_rollout_file(&file, DEFAULT_MAX_ROLLOUT_BYTES, &Limits::default())
            .expect("import");
        imports.push(start.elapsed());
        assert_eq!(imported[0].requests, requests);
        let id = imported[0].session_id.expect("session");
        let start = Instant::now();
        let mut session = promptwire::core::prefix::Session::default();
        promptwire::store::prefix_input::push_stored_session(&mut session, &store, id)
            .expect("read");
        let ledger = promptwire::core::ledger::ledger(&session, &rules);
        ledgers.push(start.elapsed());
        assert_eq!(ledger.rows.len(), requests);
    }
    let (import, ledger) = (median(imports), median(ledgers));
    println!(
        "rollout/import_{wanted}_requests: {} lines, {requests} requests: import median {:.0} ms (target ≤ 2000 ms); read back + ledger median {:.0} ms",
        bytes.iter().filter(|b| **b == b'\n').count(),
        import.as_secs_f64() * 1000.0,
        ledger.as_secs_f64() * 1000.0
    );
    assert!(import <= Duration::from_secs(2), "over target");
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` does not: skip the heavy work then.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let only = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let run = |name: &str| only.as_deref().is_none_or(|o| name.contains(o));
    if run("import_5000_lines") {
        bench_long_rollout(7);
    }
    if run("import_1700_requests") {
        bench_requests(1_700, 5);
    }
    if run("import_folder") {
        bench_folder(1_000, 3);
    }
}
