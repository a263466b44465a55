//! `promptwire diff --session` reads a stored session through the store's one adapter
//! (`store::prefix_input`, which the Sessions view reads too) and reports what core says a bare
//! verdict hides — here "the server missed the cache": a pair the local analysis keeps, whose
//! reusable prefix is cacheable (≥ 1,024 tokens), for which the server reported 0
//! `cached_tokens` — in its `--json` report (the `warnings` and `notes` of the pair, every
//! other field as before) and in its text, on a real SQLite file, as a user runs the binary;
//! a stored session without requests is a user error.

use crate::support::cli;
use crate::support::sample_har;

use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use promptwire::app::session_view::{PrefixBadge, analyze_parts};
use promptwire::core::prefix::cost::cacheable_tokens;
use promptwire::core::prefix::{Concern, PriceTable, Session};
use promptwire::store::Store;
use promptwire::store::prefix_input::push_stored_session;
use serde_json::{Value, json};

const MISSED_FIX: &str = "Keep one prompt_cache_key per conversation and keep turns within the cache retention (prompt_cache_retention: \"24h\" where supported).";

/// The tool-calls sample with a long developer message (the same in every request, so the
/// prefix is kept and reusable past 1,024 tokens), the server reporting `cached` per request,
/// imported into a fresh database: (the database, the session id).
fn stored_long_session(name: &str, cached: [u64; 3]) -> (PathBuf, i64) {
    let long = "Follow the repository's conventions. ".repeat(400);
    let har = sample_har::variant("tool-calls.har", "long-prefix", |position, body, entry| {
        let text = body
            .pointer_mut("/input/0/content/0/text")
            .expect("developer text");
        *text = Value::String(format!("{long}{}", text.as_str().unwrap_or("")));
        sample_har::set_cached_tokens(entry, cached[position]);
    });
    let dir = crate::support::module_scratch_root().join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    let db = dir.join("promptwire.sqlite");
    let mut store = Store::open(&db).expect("store");
    let (session, imported) = store
        .import_har(&har, "long-prefix", Path::new("long.har"))
        .expect("import");
    assert_eq!(imported, 3);
    (db, session)
}

fn diff(db: &Path, session: i64, json: bool) -> String {
    let (id, db) = (session.to_string(), db.display().to_string());
    let mut args = vec!["diff", "--session", &id, "--db", &db];
    if json {
        args.push("--json");
    }
    let out = cli::run(&args, None);
    assert_eq!(
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned()
        ),
        (Some(0), String::new())
    );
    String::from_utf8(out.stdout).expect("utf8")
}

#[test]
fn diff_session_json_reports_that_the_server_missed_the_cache() {
    let (db, session) = stored_long_session("diff-server-missed", [0, 0, 2048]);
    // The counts the analysis makes of these bodies (what this test is not about), read
    // through the same adapter.
    let store = Store::open(&db).expect("reopen");
    let mut prefix = Session::default();
    push_stored_session(&mut prefix, &store, session).expect("stored session");
    let report = prefix.report(&PriceTable::bundled());
    let [first, second] = [&report.pairs[0], &report.pairs[1]];
    assert!(first.reusable_tokens >= 1024, "{}", first.reusable_tokens);
    let cacheable = cacheable_tokens(first.reusable_tokens);
    let explanation = format!(
        "The prompt starts with the previous one, yet the server reported 0 cached tokens where about {cacheable} were cacheable: the cache was lost (another server, evicted, or a cache key or retention the analysis cannot see)."
    );

    let mut got: Value = serde_json::from_str(&diff(&db, session, true)).expect("JSON");
    // The cache simulation's part of the report is checked whole in cache_cli.rs.
    if let Some(map) = got.as_object_mut() {
        map.shift_remove("requests");
        map.shift_remove("hazards");
    }
    if let Some(summary) = got.get_mut("summary").and_then(Value::as_object_mut) {
        summary.shift_remove("cost_usd");
        summary.shift_remove("cache_tokens");
    }
    assert_eq!(
        got,
        json!({
            "pairs": [
                {
                    "from": 0, "to": 1, "prefix_kept": true, "break": null,
                    "causes": [], "warnings": ["server_missed_cache"],
                    "notes": [{
                        "code": "server_missed_cache",
                        "explanation": explanation,
                        "fix": MISSED_FIX,
                    }],
                    "reusable_bytes": first.reusable_bytes,
                    "reusable_tokens": first.reusable_tokens,
                    "reported_cached_tokens": 0, "warmup": false, "undetermined": null
                },
                {
                    // The server served the third request: no concern.
                    "from": 1, "to": 2, "prefix_kept": true, "break": null,
                    "causes": [], "warnings": [], "notes": [],
                    "reusable_bytes": second.reusable_bytes,
                    "reusable_tokens": second.reusable_tokens,
                    "reported_cached_tokens": 2048, "warmup": false, "undetermined": null
                }
            ],
            "summary": {
                "requests": 3, "warmups": 0, "undetermined": 0, "breaks": 0,
                "input_tokens": report.summary.input_tokens,
                "reusable_tokens": report.summary.reusable_tokens,
                "reported_cached_tokens": 2048
            }
        })
    );

    // The text says it too, explained, with the fix.
    let text = diff(&db, session, false);
    let pair_lines: Vec<&str> = text.lines().take(3).collect();
    assert_eq!(
        pair_lines,
        [
            format!(
                "0 -> 1: kept; reusable {} of {} tokens ({} bytes); server cached 0; warnings: server_missed_cache",
                first.reusable_tokens, first.from_tokens, first.reusable_bytes
            ),
            format!("    server_missed_cache: {explanation} Fix: {MISSED_FIX}"),
            format!(
                "1 -> 2: kept; reusable {} of {} tokens ({} bytes); server cached 2048",
                second.reusable_tokens, second.from_tokens, second.reusable_bytes
            ),
        ]
    );

    // Each request whose server figures disagree with the cache rules is a finding in the text
    // too, one line each, the same words as the JSON's `requests[].finding`.
    let json: Value = serde_json::from_str(&diff(&db, session, true)).expect("JSON");
    let expected: Vec<String> = json["requests"]
        .as_array()
        .expect("requests")
        .iter()
        .filter_map(|r| {
            let finding = r["finding"].as_str()?;
            Some(format!("finding at request {}: {finding}", r["index"]))
        })
        .collect();
    assert!(
        expected
            .iter()
            .any(|l| l.starts_with("finding at request 1: server read 0")),
        "{expected:?}"
    );
    let findings: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("finding at request "))
        .collect();
    assert_eq!(findings, expected);

    // The Sessions view reads the same input and names the same concern.
    let parts = store.session_parts(session).expect("parts");
    let analysis = analyze_parts(session, parts, &PriceTable::bundled()).expect("analysis");
    assert_eq!(
        analysis.badges,
        [
            PrefixBadge::First,
            PrefixBadge::Kept(vec![Concern::ServerMissed {
                reported: 0,
                cacheable
            }]),
            PrefixBadge::Kept(Vec::new()),
        ]
    );
}

#[test]
fn diff_session_of_a_session_without_requests_is_a_user_error() {
    use promptwire::store::{NewSession, Source};
    let (db, _) = stored_long_session("diff-empty-session", [0, 0, 0]);
    let empty = Store::open(&db)
        .expect("store")
        .create_session(&NewSession {
            name: "empty".to_string(),
            source: Source::Import,
            provider: None,
            model: None,
            created_us: 0,
        })
        .expect("session");
    let out = cli::run(
        &[
            "diff",
            "--session",
            &empty.to_string(),
            "--db",
            &db.display().to_string(),
            "--json",
        ],
        None,
    );
    assert_eq!(
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned()
        ),
        (
            Some(1),
            String::new(),
            format!("promptwire: session {empty} has no requests\n")
        )
    );
}
