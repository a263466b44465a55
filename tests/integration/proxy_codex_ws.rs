//! The real Codex CLI 0.171 over its WebSocket transport (`supports_websockets = true`) through
//! `promptwire record`, against a WebSocket stand-in upstream (tests/support/ws_standin.rs): a
//! `generate: false` warm-up, a turn that asks for a command, and the continuation carrying the
//! command's output with `previous_response_id` and only the new item. The store holds every
//! frame the upstream saw; `diff --session` reads the session as the conversation the server
//! sees — the warm-up shown and not counted, every turn keeping the prefix, nothing invented —
//! where it used to report every pair broken at `/generate` and `/previous_response_id`.
//!
//! Then the same Codex home runs the same prompt against `replay --listen` over WebSocket: it
//! exits 0 with every request a WebSocket frame (no fallback to HTTP), each matched to its
//! recorded request — the warm-up and the turn "same as recorded" in a new thread, the
//! continuation named at the command output that changed —, and the upstream sees nothing more.
//!
//! And `exec` then `exec resume --last`, over WebSocket (a new connection whose warm-up re-sends
//! the opening context) and over HTTP (the Python stand-in): the ledger reads one conversation
//! with no break either way.
//!
//! Codex is found as in `proxy_codex.rs` (and the test fails under `CI=true` without it).

use crate::support;

use std::process::Command;

use pretty_assertions::assert_eq;
use promptwire::store::{Page, Store};
use serde_json::{Value, json};
use support::scratch;
use support::ws_standin::WsStandIn;

use promptwire::store::RecordedState;

use super::proxy_codex::{
    assert_ok, codex, codex_bin, codex_home_with, matching_notes, start_record, start_server,
    stop_server,
};

#[test]
fn codex_over_websocket_is_analysed_as_one_conversation() {
    let Some(bin) = codex_bin() else {
        return;
    };
    let upstream = WsStandIn::start();
    let dir = scratch("ws");
    let db = dir.join("rec.sqlite");
    let work = dir.join("work");
    std::fs::create_dir_all(&work).expect("work dir");
    let (mut record, lines, addr) = start_record(&upstream.base_url(), &db);
    let home = codex_home_with(
        &dir.join("record"),
        &format!("http://{addr}/v1"),
        "supports_websockets = true",
    );
    assert_ok(
        &codex(&bin, &home, &work, &["Run a command: echo promptwire."]),
        "codex exec over WebSocket",
    );
    stop_server(&mut record, lines);

    // What the upstream saw: a warm-up, the turn, the continuation with only the tool output.
    let seen = upstream.received();
    let shape: Vec<(Value, Value, Vec<Value>)> = seen
        .iter()
        .map(|frame| {
            let types = frame["input"]
                .as_array()
                .map(|items| items.iter().map(|i| i["type"].clone()).collect())
                .unwrap_or_default();
            (
                frame["generate"].clone(),
                frame["previous_response_id"].clone(),
                types,
            )
        })
        .collect();
    assert_eq!(
        shape,
        vec![
            (json!(false), Value::Null, vec![json!("message")]),
            (
                Value::Null,
                json!("resp_ws_000"),
                vec![json!("message"), json!("message"), json!("message")]
            ),
            (
                Value::Null,
                json!("resp_ws_001"),
                vec![json!("function_call_output")]
            ),
        ]
    );

    // The store holds every frame, as sent, in one session.
    let store = Store::open(&db).expect("db");
    let sessions = store.list_sessions(Page::ALL).expect("sessions");
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    let session = sessions[0].id;
    let stored: Vec<Value> = store
        .requests(session, Page::ALL)
        .expect("requests")
        .iter()
        .map(|r| serde_json::from_slice(&store.body(r.id).expect("body").bytes).expect("json"))
        .collect();
    assert_eq!(stored, seen);
    drop(store);

    // diff --session: the warm-up is a warm-up; the turn and the continuation keep the prefix,
    // the continuation re-reading the whole turn (its prompt and the function call it produced).
    let diff = Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .args(["diff", "--session", &session.to_string(), "--db"])
        .arg(&db)
        .arg("--json")
        .output()
        .expect("diff");
    assert_ok(&diff, "diff --session");
    let report: Value = serde_json::from_slice(&diff.stdout).expect("json");
    let verdicts: Vec<Value> = report["pairs"]
        .as_array()
        .expect("pairs")
        .iter()
        .map(|p| {
            json!({"from": p["from"], "to": p["to"], "kind": p["kind"],
                   "prefix_kept": p["prefix_kept"], "causes": p["causes"]})
        })
        .collect();
    // The first turn reads what the warm-up wrote; the continuation's whole prompt (the turn,
    // its function call, the output) keeps the turn's.
    assert_eq!(
        verdicts,
        vec![
            json!({"from": 0, "to": 1, "kind": "turn", "prefix_kept": true, "causes": []}),
            json!({"from": 1, "to": 2, "kind": "turn", "prefix_kept": true, "causes": []}),
        ]
    );
    assert_eq!(
        (
            &report["summary"]["requests"],
            &report["summary"]["warmups"],
            &report["summary"]["breaks"]
        ),
        (&json!(3), &json!(1), &json!(0))
    );

    // The prompt of each turn is the whole conversation: the continuation's is the turn's
    // prompt plus the function call and its output, so its reusable part is all of the turn's.
    let text = Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .args(["diff", "--session", &session.to_string(), "--db"])
        .arg(&db)
        .output()
        .expect("diff");
    assert_ok(&text, "diff --session (text)");
    let text = String::from_utf8_lossy(&text.stdout).to_string();
    // The cache simulation's lines (`cache:`, `hazard …`, `finding …`) are checked in cache_cli.rs
    // and sessions_model_diff.rs.
    let verdict_lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with("    "))
        .take_while(|l| !l.starts_with("cache: "))
        .collect();
    let pairs = report["pairs"].as_array().expect("pairs");
    let reusable = |i: usize| {
        promptwire::core::format::grouped(pairs[i]["reusable_tokens"].as_u64().expect("tokens"))
    };
    assert_eq!(verdict_lines.len(), 3, "{text}");
    for (i, line) in verdict_lines[..2].iter().enumerate() {
        let start = format!(
            "{} -> {}: kept; reusable {} of {} tokens",
            i,
            i + 1,
            reusable(i),
            reusable(i)
        );
        assert!(line.starts_with(&start), "{line:?} should start {start:?}");
    }
    assert!(
        verdict_lines[2].starts_with("session: 3 requests (1 warm-up), 0 breaks"),
        "{text}"
    );

    // The same home and prompt against the replay endpoint, over WebSocket, offline.
    let (mut replay, lines, replay_addr) = start_server(&[
        "replay",
        "--session",
        &session.to_string(),
        "--listen",
        "127.0.0.1:0",
        "--timing",
        "instant",
        "--db",
        db.to_str().expect("path"),
    ]);
    let home = codex_home_with(
        &dir.join("record"),
        &format!("http://{replay_addr}/v1"),
        "supports_websockets = true",
    );
    assert_ok(
        &codex(&bin, &home, &work, &["Run a command: echo promptwire."]),
        "codex exec over WebSocket against the replay endpoint",
    );
    let printed = stop_server(&mut replay, lines);
    assert_eq!(
        upstream.received().len(),
        seen.len(),
        "the replay reached the upstream"
    );
    let notes: Vec<String> = matching_notes(&printed)
        .into_iter()
        .map(|note| {
            // "incoming #i -> recorded #j (request N): VERDICT, similarity S"
            let (head, rest) = note.split_once(" (request ").expect("note shape");
            let verdict = rest.split_once("): ").map_or(rest, |(_, v)| v);
            let verdict = verdict
                .rsplit_once(", similarity")
                .map_or(verdict, |(v, _)| v);
            format!("{head}: {verdict}")
        })
        .collect();
    // The warm-up and the turn are the recorded ones in a new thread; the continuation's
    // command output is new (Codex prints a chunk id and the wall time), and is named.
    let new_thread = "same as recorded (new item ids: not part of the rendered prompt)";
    assert_eq!(notes.len(), seen.len(), "{printed:?}");
    for (i, note) in notes[..2].iter().enumerate() {
        assert_eq!(
            note,
            &format!("incoming #{i} -> recorded #{i}: {new_thread}")
        );
    }
    assert_eq!(
        notes[2],
        "incoming #2 -> recorded #2: differs from recorded at /input/5/output (input_changed)"
    );
    let store = Store::open(&db).expect("db");
    let replays = store.replays_of(session).expect("replays");
    assert_eq!(replays.len(), 1);
    let served: Vec<(String, RecordedState)> = store
        .requests(replays[0], Page::ALL)
        .expect("requests")
        .iter()
        .map(|r| {
            let state = store.outcome(r.id).expect("read").expect("outcome").state;
            (r.method.clone(), state)
        })
        .collect();
    assert_eq!(
        served,
        vec![("WS".to_string(), RecordedState::Completed); seen.len()]
    );
}

/// `diff --session --json` of every session in `db`: (the pairs' (from, to, kind, kept, causes),
/// the summaries' breaks summed).
fn ledger_pairs(db: &std::path::Path) -> (Vec<Value>, u64, Vec<i64>) {
    let store = Store::open(db).expect("db");
    let sessions: Vec<i64> = store
        .list_sessions(Page::ALL)
        .expect("sessions")
        .iter()
        .map(|s| s.id)
        .collect();
    drop(store);
    let mut pairs = Vec::new();
    let mut breaks = 0;
    for session in &sessions {
        let diff = Command::new(env!("CARGO_BIN_EXE_promptwire"))
            .args(["diff", "--session", &session.to_string(), "--db"])
            .arg(db)
            .arg("--json")
            .output()
            .expect("diff");
        assert_ok(&diff, "diff --session");
        let report: Value = serde_json::from_slice(&diff.stdout).expect("json");
        breaks += report["summary"]["breaks"].as_u64().expect("breaks");
        pairs.extend(report["pairs"].as_array().expect("pairs").iter().map(|p| {
            json!({"from": p["from"], "to": p["to"], "kind": p["kind"],
                   "prefix_kept": p["prefix_kept"], "causes": p["causes"]})
        }));
    }
    (pairs, breaks, sessions)
}

/// The real Codex CLI 0.171: `exec`, then `exec resume --last`, through `record` — over
/// WebSocket (the resumed run opens a new connection and re-sends the whole history in a
/// warm-up, its function call's keys in another order) and over HTTP (the whole history in the
/// next turn's body). Either way the ledger reads one conversation and no break: key order, ids
/// and status are not rendered.
#[test]
fn codex_exec_then_resume_breaks_nothing_over_websocket_or_http() {
    let Some(bin) = codex_bin() else {
        return;
    };
    for transport in ["websocket", "http"] {
        let dir = scratch(&format!("resume-{transport}"));
        // Over HTTP: the Python stand-in (tools/standin_upstream.py), which answers the first
        // turn with an `exec_command` call.
        let run = RecordedRun::start(transport, &dir, &["--calls", "1"]);
        let (db, work, home) = (run.db.clone(), run.work.clone(), run.home.clone());
        let (mut record, lines) = (run.record, run.lines);
        assert_ok(
            &codex(&bin, &home, &work, &["Run a command: echo promptwire."]),
            "codex exec",
        );
        assert_ok(
            &codex(&bin, &home, &work, &["resume", "--last", "Say it is done."]),
            "codex exec resume --last",
        );
        stop_server(&mut record, lines);
        let (pairs, breaks, sessions) = ledger_pairs(&db);
        assert!(!pairs.is_empty(), "{transport}: {sessions:?}");
        // Kept, or — at the resumed turn's new user message — parted only where the server
        // stops rendering the first turn's reasoning (expected: not a break, nothing lost).
        for pair in &pairs {
            let kept = (&pair["prefix_kept"], &pair["causes"]) == (&json!(true), &json!([]));
            let dropped = pair["causes"] == json!(["reasoning_dropped"]);
            assert!(kept || dropped, "{transport}: {pairs:#?}");
        }
        assert_eq!(breaks, 0, "{transport}: {pairs:#?}");
    }
}

/// A Codex home pointed at `promptwire record` in front of a stand-in upstream, over
/// `transport` (`websocket`: the Rust stand-in, with `supports_websockets = true`; `http`: the
/// Python stand-in with `standin_args`), in `dir`.
pub(crate) struct RecordedRun {
    /// The recording's database.
    pub db: std::path::PathBuf,
    /// The folder Codex runs in.
    pub work: std::path::PathBuf,
    /// The Codex home.
    pub home: std::path::PathBuf,
    /// `promptwire record`.
    pub record: support::server::Server,
    /// Its output lines after the first.
    pub lines: std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
    _ws: Option<WsStandIn>,
    _http: Option<(support::server::Server, String)>,
}

impl RecordedRun {
    /// Starts the upstream and the recorder, and writes the Codex home.
    pub(crate) fn start(transport: &str, dir: &std::path::Path, standin_args: &[&str]) -> Self {
        let (ws, http) = if transport == "websocket" {
            (Some(WsStandIn::start()), None)
        } else {
            (
                None,
                Some(http_standin_with(&dir.join("standin"), standin_args)),
            )
        };
        let base = match (&ws, &http) {
            (Some(ws), _) => ws.base_url(),
            (_, Some((_, base))) => base.clone(),
            _ => unreachable!("one upstream"),
        };
        let db = dir.join("rec.sqlite");
        let work = dir.join("work");
        std::fs::create_dir_all(&work).expect("work dir");
        let (record, lines, addr) = start_record(&base, &db);
        let extra = if transport == "websocket" {
            "supports_websockets = true"
        } else {
            ""
        };
        let home = codex_home_with(&dir.join("record"), &format!("http://{addr}/v1"), extra);
        Self {
            db,
            work,
            home,
            record,
            lines,
            _ws: ws,
            _http: http,
        }
    }
}

/// The Python stand-in on a free port, recording into `dir`, with `args` (`--script FILE`, …):
/// (the process, killed on drop; its base URL).
pub(crate) fn http_standin_with(
    dir: &std::path::Path,
    args: &[&str],
) -> (support::server::Server, String) {
    use std::io::BufRead as _;
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/standin_upstream.py");
    let python = std::env::var_os("PROMPTWIRE_PYTHON").unwrap_or_else(|| "python3".into());
    let mut child = Command::new(python)
        .arg(script)
        .args(["--record", dir.to_str().expect("path")])
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn python3 tools/standin_upstream.py");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = std::io::BufReader::new(stdout).lines();
    let port = lines
        .next()
        .expect("a line")
        .expect("read")
        .strip_prefix("PORT=")
        .expect("PORT= first")
        .to_string();
    (
        support::server::Server(child),
        format!("http://127.0.0.1:{port}/v1"),
    )
}
