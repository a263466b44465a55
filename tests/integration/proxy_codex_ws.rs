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
    assert_ok, codex, codex_bin, codex_home_with, start_record, start_server, stop_server,
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
    let notes: Vec<String> = printed
        .iter()
        .filter_map(|l| l["note"].as_str())
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
