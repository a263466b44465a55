//! The ledger against OpenAI's own figures (issue 34): real Codex sessions people committed to
//! public repositories (`../shared/fixtures/real-rollouts/`, 34 rollouts, ~1,100 requests with
//! the usage the server returned; they are other people's sessions and stay out of this
//! repository). Each is imported as a user would (`sessions import` into a real SQLite file),
//! read back as a session and put through the ledger; per request the estimate is set beside
//! the server's `input_tokens` and `cached_tokens`. Printed and asserted, per model family and
//! overall:
//!
//! - **input error**: median of |estimated input − `input_tokens`| / `input_tokens`;
//! - **read match**: share of requests (after the first of each session) whose predicted read
//!   is within max(256, 3 % of the input) of `cached_tokens`;
//! - **false alarms**: share of requests carrying a finding that the server read less than the
//!   rules predict although it read at least 90 % of the input.

use std::collections::BTreeMap;
use std::path::PathBuf;

use promptwire::core::ledger::{self, Rules};
use promptwire::core::prefix::Session;
use promptwire::core::rollout::Limits;
use promptwire::store::{DEFAULT_MAX_ROLLOUT_BYTES, Page, Store};

use crate::support::shared::shared_fixtures;

/// Figures of one family (or all).
#[derive(Default)]
struct Figures {
    errors: Vec<f64>,
    reads: usize,
    reads_matched: usize,
    requests: usize,
    false_alarms: usize,
}

impl Figures {
    fn median_error(&self) -> f64 {
        let mut e = self.errors.clone();
        e.sort_by(f64::total_cmp);
        e.get(e.len() / 2).copied().unwrap_or(0.0)
    }
    fn read_share(&self) -> f64 {
        self.reads_matched as f64 / self.reads.max(1) as f64
    }
    fn alarm_share(&self) -> f64 {
        self.false_alarms as f64 / self.requests.max(1) as f64
    }
}

/// `gpt-5.5` for `gpt-5.5-codex-high`, `gpt-5.1` for `gpt-5.1-codex-max`.
fn family(model: &str) -> String {
    let parts: Vec<&str> = model.split('-').collect();
    match parts.as_slice() {
        [g, v, ..] => format!("{g}-{v}"),
        _ => model.to_string(),
    }
}

fn rollouts() -> Option<Vec<PathBuf>> {
    let dir = shared_fixtures("real-rollouts")?;
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("real-rollouts")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    Some(files)
}

#[test]
fn the_ledger_agrees_with_openai_on_real_codex_sessions() {
    let Some(files) = rollouts() else { return };
    assert!(files.len() >= 30, "{} rollouts", files.len());
    let scratch =
        crate::support::module_scratch_root().join(format!("real-rollouts-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).expect("dir");
    let mut store = Store::open(scratch.join("real.sqlite")).expect("db");
    let rules = Rules::bundled();
    let mut by_family: BTreeMap<String, Figures> = BTreeMap::new();
    let mut all = Figures::default();
    let mut worst: Vec<(f64, String)> = Vec::new();
    for file in &files {
        let before: Vec<i64> = store
            .list_sessions(Page::ALL)
            .expect("sessions")
            .iter()
            .map(|s| s.id)
            .collect();
        store
            .import_rollout_file(file, DEFAULT_MAX_ROLLOUT_BYTES, &Limits::default())
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let sessions = store.list_sessions(Page::ALL).expect("sessions");
        let Some(id) = sessions
            .iter()
            .map(|s| s.id)
            .find(|id| !before.contains(id))
        else {
            panic!("{}: no session imported", file.display());
        };
        let mut session = Session::default();
        promptwire::store::prefix_input::push_stored_session(&mut session, &store, id)
            .expect("stored");
        let l = ledger::ledger(&session, &rules);
        let name = file
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .chars()
            .take(60)
            .collect::<String>();
        for row in &l.rows {
            let Some(reported) = &row.reported else {
                continue;
            };
            let (Some(input), Some(cached)) = (reported.input_tokens, reported.cached_tokens)
            else {
                continue;
            };
            if input == 0 {
                continue;
            }
            let fam = family(&row.model);
            for f in [by_family.entry(fam).or_default(), &mut all] {
                let error = row.tokens.abs_diff(input) as f64 / input as f64;
                f.errors.push(error);
                f.requests += 1;
                if row.previous.is_some() {
                    f.reads += 1;
                    let predicted = row.prediction.predicted.read_tokens;
                    let tolerance = 256.max(input * 3 / 100);
                    if predicted.abs_diff(cached) <= tolerance {
                        f.reads_matched += 1;
                    } else if std::env::var_os("PROMPTWIRE_SHOW_MISSES").is_some() {
                        eprintln!(
                            "  read miss: {name} #{} {:?} input {input} cached {cached} predicted {predicted} causes {:?} gap {:?}",
                            row.index,
                            row.kind,
                            row.verdict.as_ref().map(|v| v.causes.clone()),
                            row.prediction.idle_gap_secs
                        );
                    }
                }
                let read_less = cached < row.prediction.predicted.read_tokens;
                if row.finding.is_some() && read_less && cached * 10 >= input * 9 {
                    f.false_alarms += 1;
                }
            }
            worst.push((
                row.tokens.abs_diff(input) as f64 / input as f64,
                format!(
                    "{name} #{}: estimated {} reported {input} (read {} predicted {})",
                    row.index, row.tokens, cached, row.prediction.predicted.read_tokens
                ),
            ));
        }
    }
    eprintln!("family      requests  input error  read match  false alarms");
    for (fam, f) in by_family
        .iter()
        .chain(std::iter::once((&"ALL".to_string(), &all)))
    {
        eprintln!(
            "{fam:<10} {:>9}  {:>10.2}%  {:>9.1}%  {:>11.1}%",
            f.requests,
            f.median_error() * 100.0,
            f.read_share() * 100.0,
            f.alarm_share() * 100.0
        );
    }
    worst.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (_, line) in worst.iter().take(8) {
        eprintln!("  worst: {line}");
    }
    assert!(
        all.requests >= 1_000,
        "{} requests with usage",
        all.requests
    );
    assert!(
        all.median_error() <= 0.03,
        "input error median {:.2} %",
        all.median_error() * 100.0
    );
    assert!(
        all.read_share() >= 0.80,
        "read match {:.1} %",
        all.read_share() * 100.0
    );
    assert!(
        all.alarm_share() <= 0.02,
        "false alarms {:.1} %",
        all.alarm_share() * 100.0
    );
}
