//! The real Codex CLI (npm `@openai/codex` 0.171.0) through `promptwire record` and then against
//! `promptwire replay --listen`, on 127.0.0.1 with an upstream the test starts: two turns
//! (`codex exec`, then `codex exec resume --last`) are recorded — the store holds every request
//! the upstream saw, byte for byte — and `diff --session` of the recording says the prefix was
//! kept; a fresh Codex home then runs the same two turns against the replay endpoint, offline,
//! and both exit 0 with every request matched to the recording.
//!
//! The binary is found through `PROMPTWIRE_CODEX_BIN` (`.ci/run` installs it and sets it), else
//! where `.ci/run` installs it (`$HOME/.cache/promptwire/codex-0.171.0`). When it is missing the
//! test says so and skips — except under `CI=true`, where it fails (the one rule of
//! `tests/support/shared.rs`).

use crate::support;

use std::io::{BufRead as _, BufReader, Lines};
use std::path::{Path, PathBuf};
use std::process::{ChildStdout, Command, Output, Stdio};
use std::time::Duration;

use pretty_assertions::assert_eq;
use promptwire::store::{Page, RecordedState, Store};
use serde_json::{Value, json};
use support::scratch;
use support::server::Server;
use support::upstream::{Reply, Upstream, paced, turn_events};

/// Where `.ci/run` installs the Codex CLI, below `$HOME` (`/root` when unset, as there).
const DEFAULT_CODEX: &str = ".cache/promptwire/codex-0.171.0/node_modules/.bin/codex";
const API_KEY: &str = "sk-proj-CODEXTESTKEY0123456789abcdef";

/// The Codex CLI binary, or `None` (outside CI) when it is not installed.
pub(crate) fn codex_bin() -> Option<PathBuf> {
    let path = std::env::var_os("PROMPTWIRE_CODEX_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let home = std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .unwrap_or_else(|| "/root".into());
            PathBuf::from(home).join(DEFAULT_CODEX)
        });
    if path.exists() {
        return Some(path);
    }
    support::shared::skip(&format!(
        "the Codex CLI is not installed at {} (.ci/run installs @openai/codex@0.171.0 and sets \
         PROMPTWIRE_CODEX_BIN)",
        path.display()
    ));
    None
}

/// A Codex home whose provider `stand-in` points at `base_url`.
fn codex_home(dir: &Path, base_url: &str) -> PathBuf {
    codex_home_with(dir, base_url, "")
}

/// [`codex_home`] with `extra` lines in the provider's table (`supports_websockets = true`).
pub(crate) fn codex_home_with(dir: &Path, base_url: &str, extra: &str) -> PathBuf {
    let home = dir.join("codex-home");
    std::fs::create_dir_all(&home).expect("codex home");
    std::fs::write(
        home.join("config.toml"),
        format!(
            r#"model = "gpt-5.5"
model_provider = "stand-in"
model_reasoning_effort = "low"

[model_providers.stand-in]
name = "Stand-in"
base_url = "{base_url}"
wire_api = "responses"
env_key = "STANDIN_API_KEY"
{extra}
"#
        ),
    )
    .expect("config.toml");
    home
}

/// Runs `codex exec ARGS` in `work` with `home`; returns its output.
pub(crate) fn codex(bin: &Path, home: &Path, work: &Path, args: &[&str]) -> Output {
    Command::new(bin)
        .arg("exec")
        .args(["--skip-git-repo-check", "--color", "never"])
        .args(args)
        .current_dir(work)
        .env("CODEX_HOME", home)
        .env("STANDIN_API_KEY", API_KEY)
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .stdin(Stdio::null())
        .output()
        .expect("run codex")
}

/// Starts `promptwire ARGS --json` and reads its first line (`{"listening": ADDR, …}`).
pub(crate) fn start_server(args: &[&str]) -> (Server, Lines<BufReader<ChildStdout>>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .args(args)
        .arg("--json")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn promptwire");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let first: Value = serde_json::from_str(&lines.next().expect("a line").expect("read"))
        .expect("JSON first line");
    let addr = first["listening"].as_str().expect("address").to_string();
    (Server(child), lines, addr)
}

/// Starts `promptwire record` on a free loopback port in front of `upstream`, into `db`.
pub(crate) fn start_record(
    upstream: &str,
    db: &Path,
) -> (Server, Lines<BufReader<ChildStdout>>, String) {
    start_server(&[
        "record",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        upstream,
        "--db",
        db.to_str().expect("path"),
    ])
}

/// SIGTERM, then the remaining lines; the process must exit 0.
pub(crate) fn stop_server(server: &mut Server, lines: Lines<BufReader<ChildStdout>>) -> Vec<Value> {
    server.terminate();
    let child = &mut server.0;
    let rest: Vec<Value> = lines
        .map(|l| serde_json::from_str(&l.expect("read")).expect("JSON line"))
        .collect();
    assert_eq!(child.wait().expect("wait").code(), Some(0));
    rest
}

/// The replay endpoint's matching notes among `printed` lines: the writer's note of what it
/// still had queued at the stop (printed when there was any: the machine's speed decides) is not
/// one.
pub(crate) fn matching_notes(printed: &[Value]) -> Vec<&str> {
    printed
        .iter()
        .filter_map(|l| l["note"].as_str())
        .filter(|n| !n.ends_with("into the database before stopping"))
        .collect()
}

pub(crate) fn assert_ok(output: &Output, what: &str) {
    assert_eq!(
        output.status.code(),
        Some(0),
        "{what}: stdout {}\nstderr {}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn codex_cli_records_through_the_proxy_and_replays_offline() {
    let Some(bin) = codex_bin() else {
        return;
    };
    let upstream = Upstream::start(|req| {
        if !req.path.ends_with("/responses") {
            return Reply::json(
                404,
                r#"{"error":{"message":"not here","type":"not_found"}}"#,
            );
        }
        let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
        let turn = body["input"].as_array().map_or(0, |items| {
            items.iter().filter(|i| i["role"] == "user").count()
        });
        let events = turn_events(
            &format!("resp_turn_{turn}"),
            &format!("Answer {turn} done."),
        );
        Reply::sse(paced(&events, Duration::from_millis(10)))
    });
    let dir = scratch("e2e");
    let db = dir.join("rec.sqlite");
    let work = dir.join("work");
    std::fs::create_dir_all(&work).expect("work dir");

    // Record two turns.
    let (mut record, lines, addr) = start_record(&upstream.base_url(), &db);
    let home = codex_home(&dir.join("record"), &format!("http://{addr}/v1"));
    assert_ok(&codex(&bin, &home, &work, &["Say hello."]), "codex exec");
    assert_ok(
        &codex(&bin, &home, &work, &["resume", "--last", "Say it again."]),
        "codex exec resume",
    );
    let printed = stop_server(&mut record, lines);
    let seen: Vec<_> = upstream
        .received()
        .into_iter()
        .filter(|r| r.method == "POST" && r.path.ends_with("/responses"))
        .collect();
    assert!(seen.len() >= 2, "the upstream saw {} requests", seen.len());
    for request in &seen {
        assert_eq!(
            request.header("authorization"),
            Some(format!("Bearer {API_KEY}").as_str())
        );
    }

    // The store holds every request the upstream saw, exactly, in one session (the thread).
    let store = Store::open(&db).expect("db");
    let sessions = store.list_sessions(Page::ALL).expect("sessions");
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    let recording = sessions[0].id;
    let stored: Vec<Vec<u8>> = store
        .requests(recording, Page::ALL)
        .expect("requests")
        .iter()
        .map(|r| store.body(r.id).expect("body").bytes)
        .collect();
    let upstream_bodies: Vec<Vec<u8>> = seen.iter().map(|r| r.body.clone()).collect();
    assert_eq!(stored, upstream_bodies);
    for request in store.requests(recording, Page::ALL).expect("requests") {
        let outcome = store.outcome(request.id).expect("read").expect("outcome");
        assert_eq!(
            (request.status, outcome.state.as_str()),
            (Some(200), "completed")
        );
    }
    assert_eq!(
        printed.last(),
        Some(
            &json!({"stopped": true, "requests": seen.len(), "not_recorded": 0, "passthrough": 0, "sessions": [recording]})
        )
    );
    drop(store);

    // diff --session: the second turn keeps the first one's prefix.
    let diff = Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .args([
            "diff",
            "--session",
            &recording.to_string(),
            "--db",
            db.to_str().expect("path"),
            "--json",
        ])
        .output()
        .expect("diff");
    assert_ok(&diff, "diff --session");
    let report: Value = serde_json::from_slice(&diff.stdout).expect("json");
    let kept: Vec<&Value> = report["pairs"]
        .as_array()
        .expect("pairs")
        .iter()
        .map(|p| &p["prefix_kept"])
        .collect();
    assert_eq!(kept, vec![&json!(true); seen.len() - 1]);
    assert_eq!(report["summary"]["breaks"], 0);

    // A fresh Codex home against the replay endpoint: the same two turns, offline.
    let (mut replay, lines, addr) = start_server(&[
        "replay",
        "--session",
        &recording.to_string(),
        "--listen",
        "127.0.0.1:0",
        "--timing",
        "instant",
        "--db",
        db.to_str().expect("path"),
    ]);
    let home = codex_home(&dir.join("replay"), &format!("http://{addr}/v1"));
    let before = upstream.received().len();
    assert_ok(
        &codex(&bin, &home, &work, &["Say hello."]),
        "codex exec (replay)",
    );
    assert_ok(
        &codex(&bin, &home, &work, &["resume", "--last", "Say it again."]),
        "codex exec resume (replay)",
    );
    let printed = stop_server(&mut replay, lines);
    assert_eq!(
        upstream.received().len(),
        before,
        "the replay reached the upstream"
    );
    let notes = matching_notes(&printed);
    assert_eq!(notes.len(), seen.len(), "{notes:?}");
    for (i, note) in notes.iter().enumerate() {
        assert!(
            note.starts_with(&format!("incoming #{i} -> recorded #{i} ")),
            "{note}"
        );
    }
    let store = Store::open(&db).expect("db");
    let replays = store.replays_of(recording).expect("replays");
    assert_eq!(replays.len(), 1);
    let states: Vec<RecordedState> = store
        .requests(replays[0], Page::ALL)
        .expect("requests")
        .iter()
        .map(|r| store.outcome(r.id).expect("read").expect("outcome").state)
        .collect();
    assert_eq!(states, vec![RecordedState::Completed; seen.len()]);

    // The recording's own home and folder against the replay endpoint: the same first prompt
    // reads "same as recorded" (a new thread: new item ids, which are not rendered); another
    // prompt is named at the user message it changed.
    let verdicts = |prompt: &str| -> Vec<String> {
        let (mut replay, lines, addr) = start_server(&[
            "replay",
            "--session",
            &recording.to_string(),
            "--listen",
            "127.0.0.1:0",
            "--timing",
            "instant",
            "--db",
            db.to_str().expect("path"),
        ]);
        let home = codex_home(&dir.join("record"), &format!("http://{addr}/v1"));
        assert_ok(
            &codex(&bin, &home, &work, &[prompt]),
            "codex exec (replay again)",
        );
        matching_notes(&stop_server(&mut replay, lines))
            .into_iter()
            .map(|note| {
                let verdict = note.split_once("): ").map_or(note, |(_, v)| v);
                verdict
                    .rsplit_once(", similarity")
                    .map_or(verdict, |(v, _)| v)
                    .to_string()
            })
            .collect()
    };
    let same = verdicts("Say hello.");
    assert_eq!(same.len(), 1, "{same:?}");
    assert_eq!(
        same[0],
        "same as recorded (new item ids: not part of the rendered prompt)"
    );
    let other = verdicts("Say goodbye.");
    assert_eq!(other.len(), 1, "{other:?}");
    let user_message = seen[0]
        .body
        .split(|_| false)
        .next()
        .and_then(|b| serde_json::from_slice::<Value>(b).ok())
        .and_then(|b| {
            b["input"].as_array().and_then(|items| {
                items
                    .iter()
                    .rposition(|i| i["role"] == "user" && i["content"][0]["text"] == "Say hello.")
            })
        })
        .expect("the recorded user message");
    assert_eq!(
        other[0],
        format!("differs from recorded at /input/{user_message}/content/0/text (input_changed)")
    );
}
