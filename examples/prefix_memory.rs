//! Peak-memory and cold-start check for the prefix analysis: generates the benchmark's
//! 1,000-request session (last body about 2 MB) and analyzes it once, tokenizer load included,
//! printing the time and resident memory of each stage. Run it under `/usr/bin/time -v` for the
//! process's "Maximum resident set size":
//! `cargo build --release --example prefix_memory && /usr/bin/time -v target/release/examples/prefix_memory`.

use std::time::Instant;

use promptwire::core::ledger::{self, Rules};
use promptwire::core::prefix::{RequestMeta, Session, Tokenizer};

#[path = "../benches/support/prefix_session.rs"]
mod prefix_session;

/// Peak and current resident memory from /proc (Linux), for the stages of the run.
fn memory() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .map_or("?".to_string(), |l| l[name.len()..].trim().to_string())
    };
    format!("peak {}, now {}", field("VmHWM:"), field("VmRSS:"))
}

fn millis(started: Instant) -> String {
    format!("{:.0} ms", started.elapsed().as_secs_f64() * 1000.0)
}

fn main() {
    println!("start: {}", memory());
    let synthetic = prefix_session::generate();
    let last = synthetic.requests.len() - 1;
    println!(
        "session: {} requests, {} distinct items, last body {} bytes",
        synthetic.requests.len(),
        synthetic.items.len(),
        synthetic.body_bytes(last)
    );
    println!("generated: {}", memory());

    let started = Instant::now();
    let _ = Tokenizer::o200k().count("load");
    println!("tokenizer loaded at {}: {}", millis(started), memory());
    let mut session = Session::new(Tokenizer::o200k());
    let ids: Vec<_> = synthetic
        .items
        .iter()
        .map(|item| session.intern_item(item))
        .collect();
    println!(
        "items interned (hashed, serialized, tokenized once) at {}",
        millis(started)
    );
    for (head, items) in &synthetic.requests {
        let head = &synthetic.heads[*head];
        let input: Vec<_> = items.iter().map(|i| ids[*i as usize]).collect();
        if let Err(err) = session.push_parts(head, &input, RequestMeta::default()) {
            eprintln!("bad request: {err}");
            std::process::exit(1);
        }
    }
    println!("requests pushed at {}", millis(started));
    let ledger = ledger::ledger(&session, &Rules::bundled());
    let total_sent: u64 = session.growth(|_| true).iter().map(|g| g.sent_bytes).sum();
    println!(
        "ledger done at {} (tokenizer load included): {} breaks, {} input tokens, {} read, \
         {} bytes sent over the session",
        millis(started),
        ledger.summary.breaks,
        ledger.summary.estimated_tokens,
        ledger.summary.totals.read_tokens,
        total_sent
    );
    println!("analyzed: {}", memory());
    for row in ledger.rows.iter().filter(|r| r.is_break()) {
        let causes: Vec<&str> = row
            .verdict
            .iter()
            .flat_map(|v| v.causes.iter().map(|c| c.as_str()))
            .collect();
        println!(
            "  {:?} -> {}: {}",
            row.previous,
            row.index,
            causes.join(", ")
        );
    }
}
