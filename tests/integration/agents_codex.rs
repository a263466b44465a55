//! Subagents as the real Codex CLI 0.171 spawns them (`-c features.multi_agent_v2=true`: the
//! model calls `collaboration.spawn_agent`, then `wait_agent`), through `promptwire record` over
//! HTTP (the Python stand-in, scripted) and over WebSocket (the Rust stand-in): the child thread
//! is a session of its own, linked to its parent's (`x-codex-parent-thread-id`, its own
//! `thread-id`, `x-openai-subagent: collab_spawn`), listed under it, and its figures add to the
//! parent's in the anatomy's agent tree. The same run's rollouts (Codex's own logs, in the
//! Codex home) import as the same two linked sessions, and a HAR holding both threads' entries
//! imports as two linked sessions too.
//!
//! Codex is found as in `proxy_codex.rs` (and the test fails under `CI=true` without it).

use std::path::Path;
use std::process::Command;

use pretty_assertions::assert_eq;
use promptwire::store::{Page, SessionSummary, Store};
use serde_json::{Value, json};

use super::proxy_codex::{assert_ok, codex, codex_bin, stop_server};
use super::proxy_codex_ws::RecordedRun;
use crate::support::scratch;

/// The stand-in's script over HTTP: the turn asking to delegate spawns a subagent, waits for
/// it, then answers.
const SCRIPT: &str = r#"{"turns": [{"match": "Delegate", "steps": [
  {"call": "spawn_agent", "namespace": "collaboration",
   "arguments": {"task_name": "check", "message": "Say hello.", "fork_turns": "none"}},
  {"call": "wait_agent", "namespace": "collaboration", "arguments": {"timeout_ms": 10000}},
  {"message": "Delegated and done."}]}]}"#;

const PROMPT: &str = "Delegate: say hello.";

fn promptwire(args: &[&str], db: &Path) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .args(args)
        .arg("--db")
        .arg(db)
        .arg("--json")
        .output()
        .expect("run promptwire");
    assert_ok(&out, &args.join(" "));
    serde_json::from_slice(&out.stdout).expect("JSON")
}

/// The sessions of `db`: (root, child), checking the link every reader sees.
fn linked_pair(db: &Path, what: &str) -> (SessionSummary, SessionSummary) {
    let store = Store::open(db).expect("db");
    let sessions = store.list_sessions(Page::ALL).expect("sessions");
    assert_eq!(sessions.len(), 2, "{what}: {sessions:#?}");
    let (children, roots): (Vec<_>, Vec<_>) = sessions
        .into_iter()
        .partition(|s| s.agent.as_ref().is_some_and(|a| a.parent.is_some()));
    let (root, child) = (roots[0].clone(), children[0].clone());
    let root_agent = root.agent.clone().expect("the root names its thread");
    let child_agent = child.agent.clone().expect("the child names its thread");
    assert_eq!(
        (
            root_agent.parent.as_deref(),
            root_agent.kind.as_deref(),
            child_agent.parent.as_deref(),
            child_agent.kind.as_deref(),
            child.parent_session,
            root.parent_session,
        ),
        (
            None,
            None,
            Some(root_agent.thread.as_str()),
            Some("collab_spawn"),
            Some(root.id),
            None
        ),
        "{what}"
    );
    assert_ne!(root_agent.thread, child_agent.thread, "{what}");
    assert_eq!(
        store.parent_session(child.id).expect("parent"),
        Some(root.id)
    );
    let tree: Vec<i64> = store
        .agent_sessions(root.id)
        .expect("agents")
        .iter()
        .map(|(id, _)| *id)
        .collect();
    assert_eq!(tree, vec![root.id, child.id], "{what}");
    (root, child)
}

/// What each request of `sessions` was (method, `generate`, last input item's type), to say
/// what a run sent when its count is not the expected one.
fn shapes(db: &Path, sessions: &[i64]) -> String {
    let store = Store::open(db).expect("db");
    let mut out = Vec::new();
    for &session in sessions {
        for r in store.requests(session, Page::ALL).expect("requests") {
            let body: Value =
                serde_json::from_slice(&store.body(r.id).expect("body").bytes).unwrap_or_default();
            let last = body["input"].as_array().and_then(|i| i.last()).cloned();
            out.push(format!(
                "session {session}: {} generate={} last={}",
                r.method,
                body["generate"],
                last.map_or(Value::Null, |l| l["type"].clone())
            ));
        }
    }
    out.join("; ")
}

/// The checks every recording of the run passes: the link, the listing, the anatomy's tree.
fn check_recording(db: &Path, what: &str, requests: (i64, i64)) {
    let (root, child) = linked_pair(db, what);
    assert_eq!(
        (root.requests, child.requests),
        requests,
        "{what}: {}",
        shapes(db, &[root.id, child.id])
    );

    // `sessions list --json`: the child names its parent and kind.
    let list = promptwire(&["sessions", "list"], db);
    let listed: Vec<Value> = list
        .as_array()
        .expect("array")
        .iter()
        .map(|s| json!([s["id"], s["parent"], s["agent_kind"]]))
        .collect();
    assert_eq!(
        listed,
        vec![
            json!([child.id, root.id, "collab_spawn"]),
            json!([root.id, null, null])
        ],
        "{what}"
    );
    // The text listing: the child under its parent, indented, its kind first.
    let out = Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .args(["sessions", "list", "--db"])
        .arg(db)
        .output()
        .expect("list");
    assert_ok(&out, "sessions list");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines[0].trim_start().starts_with(&format!("{}  ", root.id)),
        "{text}"
    );
    assert!(
        lines[1].contains(&format!("{}    collab_spawn: ", child.id)),
        "{text}"
    );

    // `sessions show` of the child names how it was spawned and by whom.
    let out = Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .args(["sessions", "show", &child.id.to_string(), "--db"])
        .arg(db)
        .output()
        .expect("show");
    assert_ok(&out, "sessions show");
    let shown = String::from_utf8_lossy(&out.stdout).to_string();
    let (root_thread, child_thread) = (
        root.agent.as_ref().expect("root").thread.clone(),
        child.agent.as_ref().expect("child").thread.clone(),
    );
    assert_eq!(
        shown.lines().nth(1),
        Some(
            format!(
                "agent: collab_spawn subagent, thread {child_thread}, spawned by thread \
                 {root_thread} (session {})",
                root.id
            )
            .as_str()
        ),
        "{what}: {shown}"
    );

    // The anatomy of the root: two agents, the child's figures added to the root's totals.
    let anatomy = promptwire(&["anatomy", "--session", &root.id.to_string()], db);
    let agents = anatomy["agents"].as_array().expect("agents");
    let root_agent = root.agent.expect("root");
    let child_agent = child.agent.expect("child");
    let shape: Vec<Value> = agents
        .iter()
        .map(|a| {
            json!([
                a["thread"],
                a["parent"],
                a["kind"],
                a["session"],
                a["depth"],
                a["requests"],
                a["total"]["requests"]
            ])
        })
        .collect();
    assert_eq!(
        shape,
        vec![
            json!([
                root_agent.thread,
                null,
                null,
                root.id,
                0,
                requests.0,
                requests.0 + requests.1
            ]),
            json!([
                child_agent.thread,
                root_agent.thread,
                "collab_spawn",
                child.id,
                1,
                requests.1,
                requests.1
            ]),
        ],
        "{what}"
    );
    let tokens = |a: &Value, k: &str| a[k]["tokens"].as_u64().unwrap_or(u64::MAX);
    assert_eq!(
        tokens(&agents[0], "total"),
        agents[0]["tokens"].as_u64().expect("tokens") + tokens(&agents[1], "total"),
        "{what}: {agents:#?}"
    );
    assert!(agents[1]["tokens"].as_u64().expect("tokens") > 0, "{what}");

    // The child's own session is its own conversation: no request of it breaks the parent's.
    let diff = promptwire(&["diff", "--session", &root.id.to_string()], db);
    assert_eq!(diff["summary"]["breaks"], json!(0), "{what}: {diff:#}");
}

/// Codex's rollouts of the run (its home's `sessions/`) imported into a new database.
fn check_rollouts(home: &Path, dir: &Path, what: &str) {
    let db = dir.join(format!("rollouts-{what}.sqlite"));
    let sessions = home.join("sessions");
    promptwire(
        &["sessions", "import", sessions.to_str().expect("path")],
        &db,
    );
    let (root, child) = linked_pair(&db, &format!("{what} rollouts"));
    // A rollout records the model calls: no warm-up.
    assert_eq!((root.requests, child.requests), (3, 1), "{what}");
}

/// A HAR of both threads' entries (the child's appended to the root's export) imports as the
/// two linked sessions.
fn check_har(db: &Path, dir: &Path, what: &str, requests: (i64, i64)) {
    let (root, child) = linked_pair(db, what);
    let har = |id: i64| {
        let path = dir.join(format!("{what}-{id}.har"));
        let out = Command::new(env!("CARGO_BIN_EXE_promptwire"))
            .args(["sessions", "export", &id.to_string(), "--har"])
            .arg(&path)
            .arg("--db")
            .arg(db)
            .output()
            .expect("export");
        assert_ok(&out, "sessions export --har");
        let text = std::fs::read_to_string(&path).expect("har");
        serde_json::from_str::<Value>(&text).expect("HAR JSON")
    };
    let mut both = har(root.id);
    let child_entries = har(child.id)["log"]["entries"].clone();
    both["log"]["entries"]
        .as_array_mut()
        .expect("entries")
        .extend(child_entries.as_array().expect("entries").iter().cloned());
    let path = dir.join(format!("{what}-both.har"));
    std::fs::write(&path, both.to_string()).expect("write");
    let imported = dir.join(format!("har-{what}.sqlite"));
    promptwire(
        &["sessions", "import", path.to_str().expect("path")],
        &imported,
    );
    let (r, c) = linked_pair(&imported, &format!("{what} HAR"));
    assert_eq!((r.requests, c.requests), requests, "{what}");
}

#[test]
fn a_codex_subagent_is_its_own_session_linked_to_its_parent() {
    let Some(bin) = codex_bin() else {
        return;
    };
    for transport in ["http", "websocket"] {
        let dir = scratch(&format!("agents-{transport}"));
        let script = dir.join("script.json");
        std::fs::write(&script, SCRIPT).expect("script");
        let run = RecordedRun::start(
            transport,
            &dir,
            &["--script", script.to_str().expect("path")],
        );
        let (db, work, home) = (run.db.clone(), run.work.clone(), run.home.clone());
        let (mut record, lines) = (run.record, run.lines);
        assert_ok(
            &codex(
                &bin,
                &home,
                &work,
                &["-c", "features.multi_agent_v2=true", PROMPT],
            ),
            &format!("codex exec spawning a subagent over {transport}"),
        );
        stop_server(&mut record, lines);
        // The child asks once (its task); the root three times (spawn, wait, the answer).
        // Over WebSocket each thread's connection opens with a `generate: false` warm-up.
        let requests = if transport == "websocket" {
            (4, 2)
        } else {
            (3, 1)
        };
        check_recording(&db, transport, requests);
        check_rollouts(&home, &dir, transport);
        check_har(&db, &dir, transport, requests);
    }
}
