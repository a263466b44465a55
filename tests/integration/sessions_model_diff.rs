//! `promptwire diff --session` reads a stored session through the store's one adapter
//! (`store::prefix_input`, which the Sessions view reads too) and reports the ledger's rows —
//! here a server shortfall: a request that keeps the turn before it, whose shared prefix is
//! cacheable (≥ 1,024 tokens), for which the server reported 0 `cached_tokens` — in its `--json`
//! report (the `warnings` and `notes` of the pair) and in its text, on a real SQLite file, as a
//! user runs the binary; the Sessions view says the same; a stored session without requests is
//! a user error.

use crate::support::cli;
use crate::support::sample_har;

use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use promptwire::app::session_view::{PrefixBadge, analyze_parts};
use promptwire::core::ledger::{self, Cause, PriceTable, Rules};
use promptwire::core::prefix::Session;
use promptwire::store::Store;
use promptwire::store::prefix_input::push_stored_session;
use serde_json::{Value, json};

/// The tool-calls sample with a long developer message (the same in every request, so the
/// prefix is kept and reusable past 1,024 tokens), the server reporting `cached` per request,
/// imported into a fresh database: (the database, the session id).
fn stored_long_session(name: &str, cached: [u64; 3]) -> (PathBuf, i64) {
    let har = sample_har::long_prefix_session("long-prefix", cached);
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

/// The ledger of stored session `session` of `db`, read through the store's one adapter.
fn ledger_of(db: &Path, session: i64) -> promptwire::core::ledger::Ledger {
    let store = Store::open(db).expect("reopen");
    let mut prefix = Session::default();
    push_stored_session(&mut prefix, &store, session).expect("stored session");
    ledger::ledger(&prefix, &Rules::bundled())
}

#[test]
fn diff_session_json_reports_a_server_shortfall() {
    // What the rules predict the third request reads: the server reports exactly that.
    let (db, session) = stored_long_session("diff-predicted", [0, 0, 0]);
    let third = ledger_of(&db, session).rows[2]
        .prediction
        .predicted
        .read_tokens;
    let (db, session) = stored_long_session("diff-server-missed", [0, 0, third]);
    let l = ledger_of(&db, session);
    let [first, second] = [&l.rows[1], &l.rows[2]].map(|r| r.verdict.clone().expect("verdict"));
    assert!(first.reusable_tokens >= 1024, "{}", first.reusable_tokens);
    let shortfall = Cause::ServerShortfall;
    let lost = l.rows[1].cost_usd.expect("priced").lost;
    assert!(lost > 0.0);

    let mut got: Value = serde_json::from_str(&diff(&db, session, true)).expect("JSON");
    // The rows' part of the report is checked whole in cache_cli.rs.
    if let Some(map) = got.as_object_mut() {
        map.shift_remove("requests");
        map.shift_remove("hazards");
        map.shift_remove("summary");
    }
    assert_eq!(
        got,
        json!({
            "pairs": [
                {
                    "from": 0, "to": 1, "kind": "turn", "prefix_kept": true, "break": null,
                    "causes": [], "warnings": ["server_shortfall"],
                    "notes": [{
                        "code": "server_shortfall",
                        "explanation": shortfall.explanation(),
                        "fix": shortfall.fix(),
                    }],
                    "reusable_tokens": first.reusable_tokens,
                    "shared_tokens": first.shared_tokens,
                    "from_tokens": first.from_tokens,
                    "to_tokens": first.to_tokens,
                    "reported_cached_tokens": 0,
                    "lost_usd": lost,
                    "not_recorded": []
                },
                {
                    // A new user turn: gpt-5.5's server stops rendering the earlier turn's
                    // reasoning there (expected); it read what the rules predict: nothing lost.
                    "from": 1, "to": 2, "kind": "turn", "prefix_kept": false,
                    "break": {
                        "part": second.divergence.as_ref().expect("where").part,
                        "token": second.divergence.as_ref().expect("where").token,
                        "pointer": "/input/2/encrypted_content",
                        "source": "reasoning",
                        "change": "edited"
                    },
                    "causes": ["reasoning_dropped"], "warnings": [],
                    "notes": [{
                        "code": "reasoning_dropped",
                        "explanation": Cause::ReasoningDropped.explanation(),
                        "fix": null,
                    }],
                    "reusable_tokens": second.reusable_tokens,
                    "shared_tokens": second.shared_tokens,
                    "from_tokens": second.from_tokens,
                    "to_tokens": second.to_tokens,
                    "reported_cached_tokens": third,
                    "lost_usd": 0.0,
                    "not_recorded": []
                }
            ]
        })
    );

    // The text says it too, explained, with the fix.
    let text = diff(&db, session, false);
    let pair_lines: Vec<&str> = text.lines().take(3).collect();
    let g = promptwire::core::format::grouped;
    assert_eq!(
        pair_lines,
        [
            format!(
                "0 -> 1: kept; reusable {} of {} tokens; server cached 0; lost {}; also: server_shortfall",
                g(first.reusable_tokens),
                g(first.from_tokens),
                promptwire::core::ledger::summary::usd(lost)
            ),
            format!(
                "    server_shortfall: {} Fix: {}",
                shortfall.explanation(),
                shortfall.fix().expect("a fix")
            ),
            format!(
                "1 -> 2: BROKEN at /input/2/encrypted_content (reasoning, token {}) \
                 (reasoning_dropped); reusable {} of {} tokens; server cached {}",
                g(second.divergence.as_ref().expect("where").token),
                g(second.reusable_tokens),
                g(second.from_tokens),
                g(third)
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
    // The summary's sentence is the text's, and both state the ledger's paid and lost.
    assert_eq!(json["summary"]["sentence"], json!(l.summary.sentence()));
    assert!(text.lines().any(|line| line == l.summary.sentence()));

    // The Sessions view reads the same input and names the same note.
    let store = Store::open(&db).expect("reopen");
    let parts = store.session_parts(session).expect("parts");
    let analysis = analyze_parts(session, parts, &PriceTable::bundled()).expect("analysis");
    assert_eq!(
        analysis.badges,
        [
            PrefixBadge::First,
            PrefixBadge::Kept(vec![Cause::ServerShortfall]),
            PrefixBadge::NewTurn(Vec::new()),
        ]
    );
    assert_eq!(analysis.sentence, l.summary.sentence());
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
