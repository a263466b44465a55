//! The ledger against what the server reported, on a real SQLite file and without the CLI: a
//! request whose prompt keeps the turn before it, whose shared prefix is cacheable (≥ 1,024
//! tokens), but for which the server reported 0 `cached_tokens`, carries a finding and loses its
//! shared prefix to `server_shortfall` — its badge never reads a bare "kept" — while a request the
//! server served as the rules predict, or whose prefix is too short to cache, stays plain "kept".

use crate::support::sample_har;

use std::path::Path;

use pretty_assertions::assert_eq;
use promptwire::app::session_view::{Analysis, PrefixBadge, analyze_parts, break_text};
use promptwire::core::ledger::{Cause, PriceTable};
use promptwire::store::Store;

fn long_session(cached: [u64; 3]) -> String {
    sample_har::long_prefix_session("long-prefix", cached)
}

fn analyse(har: &str, dir: &str) -> Analysis {
    let dir = crate::support::module_scratch_root().join(format!("{dir}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("promptwire.sqlite");
    let mut store = Store::open(&path).expect("store");
    let (session, imported) = store
        .import_har(har, "long-prefix", Path::new("long.har"))
        .expect("import");
    assert_eq!(imported, 3);
    drop(store);
    // Read back from the file, as the app's worker does.
    let store = Store::open(&path).expect("reopen");
    let parts = store.session_parts(session).expect("parts");
    analyze_parts(session, parts, &PriceTable::bundled()).expect("analysis")
}

#[test]
fn kept_locally_but_zero_cached_is_a_server_shortfall() {
    let analysis = analyse(&long_session([0, 0, 2048]), "server-missed");
    let rows = &analysis.ledger.rows;
    let kept: Vec<bool> = rows
        .iter()
        .map(|r| r.verdict.as_ref().is_none_or(|v| v.prefix_kept))
        .collect();
    // Request 2 starts a new user turn: gpt-5.5's server no longer renders the earlier turn's
    // reasoning, so the prompt parts there (reasoning_dropped: expected, no loss).
    assert_eq!(kept, [true, true, false]);
    let reusable = rows[1].verdict.as_ref().expect("verdict").reusable_tokens;
    assert!(reusable >= 1024, "the prefix is cacheable: {reusable}");
    assert_eq!(
        analysis.badges[1],
        PrefixBadge::Kept(vec![Cause::ServerShortfall])
    );
    let causes: Vec<Cause> = rows[1].lost_by_cause.iter().map(|l| l.cause).collect();
    assert_eq!(causes, [Cause::ServerShortfall]);
    assert!(rows[1].cost_usd.expect("priced").lost > 0.0);
    assert!(
        rows[1]
            .finding
            .as_deref()
            .is_some_and(|f| f.starts_with("server read 0 where the rules predict ")),
        "{:?}",
        rows[1].finding
    );
    let labels: Vec<String> = analysis.badges.iter().map(PrefixBadge::label).collect();
    assert_eq!(labels[..2], ["first", "kept · ! server shortfall"]);
    // And it is listed with the warnings, in the row's own figures.
    assert_eq!(analysis.notes[0], (1, break_text(&rows[1])));
    assert!(
        analysis.notes[0].1.starts_with(&format!(
            "request 1 (against 0): prefix kept · reusable {} of {} tokens · read 0 · lost $",
            grouped(reusable),
            grouped(rows[0].tokens)
        )),
        "{}",
        analysis.notes[0].1
    );
}

fn grouped(n: u64) -> String {
    promptwire::core::format::grouped(n)
}

#[test]
fn a_short_prefix_or_a_cache_served_as_predicted_is_not_flagged() {
    // The sample as bundled, the server counting as the ledger does: the shared prefix is
    // under 1,024 tokens, so 0 cached is expected.
    let bundled = sample_har::variant("tool-calls.har", "short", |_, _, _| {});
    let input = sample_har::estimated_tokens(&bundled);
    let short = sample_har::variant("tool-calls.har", "short", |position, _, entry| {
        sample_har::set_usage(entry, input[position], 0);
    });
    let analysis = analyse(&short, "server-short");
    assert!(analysis.ledger.rows[1].tokens < 1024);
    assert_eq!(
        analysis.badges,
        [
            PrefixBadge::First,
            PrefixBadge::Kept(Vec::new()),
            PrefixBadge::NewTurn(Vec::new())
        ]
    );
    // The server reading what the rules predict: nothing to say.
    let predicted = analyse(&long_session([0, 0, 0]), "server-predicted");
    let read = |i: usize| predicted.ledger.rows[i].prediction.predicted.read_tokens;
    assert!(read(1) >= 1024 && read(2) >= 1024);
    let analysis = analyse(&long_session([0, read(1), read(2)]), "server-served");
    // Only the expected break at the new user turn is listed (no loss, no finding).
    assert!(
        analysis
            .notes
            .iter()
            .all(|(i, n)| *i == 2 && n.contains("reasoning_dropped")),
        "{:?}",
        analysis.notes
    );
    assert!(analysis.ledger.rows.iter().all(|r| r.finding.is_none()));
}
