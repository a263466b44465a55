//! The prefix verdict against what the server reported, on a real SQLite file and without the
//! CLI: a pair the local analysis keeps, whose reusable prefix is cacheable (≥ 1,024 tokens),
//! but for which the server reported 0 `cached_tokens`, is flagged "server missed the cache" —
//! its badge never reads a bare "kept" — while a pair the server did serve stays plain "kept".

use crate::support::sample_har;

use std::path::Path;

use pretty_assertions::assert_eq;
use promptwire::app::session_view::{Concern, PrefixBadge, analyze_parts};
use promptwire::core::prefix::PriceTable;
use promptwire::store::Store;
use serde_json::Value;

/// The tool-calls sample with a long developer message (the same in every request, so the
/// prefix is kept and reusable past 1,024 tokens), the server reporting `cached` per request.
fn long_session(cached: [u64; 3]) -> String {
    let long = "Follow the repository's conventions. ".repeat(400);
    sample_har::variant("tool-calls.har", "long-prefix", |position, body, entry| {
        let text = body
            .pointer_mut("/input/0/content/0/text")
            .expect("developer text");
        *text = Value::String(format!("{long}{}", text.as_str().unwrap_or("")));
        sample_har::set_cached_tokens(entry, cached[position]);
    })
}

fn analyse(har: &str, dir: &str) -> promptwire::app::session_view::Analysis {
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
fn kept_locally_but_zero_cached_is_flagged_server_missed() {
    let analysis = analyse(&long_session([0, 0, 2048]), "server-missed");
    let pairs = &analysis.report.pairs;
    assert_eq!(
        pairs.iter().map(|p| p.prefix_kept).collect::<Vec<_>>(),
        [true, true]
    );
    let reusable = pairs[0].reusable_tokens;
    assert!(reusable >= 1024, "the prefix is cacheable: {reusable}");
    let cacheable = promptwire::core::prefix::cost::cacheable_tokens(reusable);
    assert_eq!(
        analysis.badges[1],
        PrefixBadge::Kept(vec![Concern::ServerMissed {
            reported: 0,
            cacheable
        }])
    );
    // The server served the third request: plain kept.
    assert_eq!(analysis.badges[2], PrefixBadge::Kept(Vec::new()));
    let labels: Vec<String> = analysis.badges.iter().map(PrefixBadge::label).collect();
    assert_eq!(
        labels,
        ["first", "kept · ! server missed the cache", "kept"]
    );
    // And it is listed with the warnings.
    assert_eq!(
        analysis.notes,
        vec![(
            0,
            format!(
                "turns 0–1: kept · ! server_missed_cache · reusable {reusable} of {} tokens · server cached 0",
                pairs[0].from_tokens
            )
        )]
    );
}

#[test]
fn a_short_prefix_or_a_served_cache_is_not_flagged() {
    // The sample as bundled: the reusable prefix is under 1,024 tokens, so 0 cached is expected.
    let short = sample_har::variant("tool-calls.har", "short", |_, _, entry| {
        sample_har::set_cached_tokens(entry, 0);
    });
    let analysis = analyse(&short, "server-short");
    assert!(analysis.report.pairs[0].reusable_tokens < 1024);
    assert_eq!(
        analysis.badges,
        [
            PrefixBadge::First,
            PrefixBadge::Kept(Vec::new()),
            PrefixBadge::Kept(Vec::new())
        ]
    );
    // Half of the cacheable prefix served is not a miss (the server counts its own way).
    let analysis = analyse(&long_session([0, 1536, 1536]), "server-served");
    let cacheable =
        promptwire::core::prefix::cost::cacheable_tokens(analysis.report.pairs[0].reusable_tokens);
    assert!(
        1536 * 2 >= cacheable && 1536 < cacheable,
        "cacheable {cacheable}"
    );
    assert_eq!(analysis.notes, Vec::new());
}
