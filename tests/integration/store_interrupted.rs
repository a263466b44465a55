//! An interrupted live request is recorded as interrupted, visibly (issue 15): the real
//! `promptwire send` against a loopback server that sends three events and then stalls, stopped
//! with SIGINT (Ctrl-C), keeps the events, records the request as interrupted and exits 130; the
//! session list and `sessions show` say so. Killed outright (SIGKILL), the request has no
//! outcome and the list says that too — neither is listed like a complete session.
#![allow(clippy::disallowed_methods, reason = "a test runs its own threads")]
#![cfg(unix)]

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use pretty_assertions::assert_eq;
use promptwire::store::summary::OutcomeClass;
use promptwire::store::{Page, Store};
use serde_json::{Value, json};

/// The first three events of a real answer.
fn three_events() -> String {
    let sse = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sse/text-answer.sse"),
    )
    .expect("sse fixture");
    let blocks: Vec<&str> = sse.split("\n\n").take(3).collect();
    format!("{}\n\n", blocks.join("\n\n"))
}

/// Serves one request: the response head and three events, then stalls until the client goes
/// away (or a minute passes).
fn serve_then_stall(listener: TcpListener) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let Ok((stream, _)) = listener.accept() else {
            return;
        };
        let mut reader = BufReader::new(stream);
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                break;
            }
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0u8; length];
        let _ = reader.read_exact(&mut body);
        let mut stream = reader.into_inner();
        let _ = write!(
            stream,
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n{}",
            three_events()
        );
        let _ = stream.flush();
        let _ = stream.set_read_timeout(Some(Duration::from_secs(60)));
        let mut rest = [0u8; 64];
        while matches!(stream.read(&mut rest), Ok(n) if n > 0) {}
    })
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("store_interrupted")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir.join("db.sqlite")
}

/// Starts `send` against a stalling server and returns once the third event was printed.
fn send_until_stalled(db: &Path) -> (Child, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let base = format!("http://{}/v1", listener.local_addr().expect("addr"));
    let server = serve_then_stall(listener);
    let prompt = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/prompts/hello.json");
    let mut child = Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .arg("send")
        .arg(&prompt)
        .args(["--provider", "openai", "--base-url", &base, "--json"])
        .args(["--max-retries", "0", "--idle-timeout-secs", "60"])
        .arg("--db")
        .arg(db)
        .env("OPENAI_API_KEY", "sk-test-interrupted")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn send");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let seq = serde_json::from_str::<Value>(&line)
                .ok()
                .and_then(|v| v.get("seq").and_then(Value::as_u64));
            if seq == Some(2) {
                let _ = tx.send(());
            }
        }
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("the third event was printed");
    (child, server)
}

fn signal(child: &Child, name: &str) {
    let status = Command::new("kill")
        .args([name, &child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(status.success(), "kill {name}");
}

fn wait(mut child: Child) -> Output {
    let (tx, rx) = mpsc::channel();
    let pid = child.id();
    std::thread::spawn(move || {
        if rx.recv_timeout(Duration::from_secs(30)).is_err() {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
    });
    let mut stderr = String::new();
    if let Some(mut err) = child.stderr.take() {
        let _ = err.read_to_string(&mut stderr);
    }
    let status = child.wait().expect("wait");
    let _ = tx.send(());
    Output {
        status,
        stdout: Vec::new(),
        stderr: stderr.into_bytes(),
    }
}

fn cli(db: &Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .args(args)
        .arg("--db")
        .arg(db)
        .output()
        .expect("run promptwire");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

#[test]
fn ctrl_c_during_send_records_the_request_as_interrupted() {
    let db = scratch("sigint");
    let (child, server) = send_until_stalled(&db);
    signal(&child, "-INT");
    let out = wait(child);
    assert_eq!(
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).trim()
        ),
        (Some(130), "promptwire: interrupted")
    );
    server.join().expect("server");

    let store = Store::open(&db).expect("open");
    let sessions = store.list_sessions(Page::ALL).expect("list");
    let summary: Vec<(i64, i64, i64)> = sessions
        .iter()
        .map(|s| (s.requests, s.interrupted, s.unanswered))
        .collect();
    assert_eq!(summary, vec![(1, 1, 0)]);
    let rows = store.request_rows(sessions[0].id, Page::ALL).expect("rows");
    let got: Vec<(Option<u16>, OutcomeClass, u64)> = rows
        .iter()
        .map(|r| (r.status, r.outcome.clone(), r.events))
        .collect();
    assert_eq!(got, vec![(Some(200), OutcomeClass::Interrupted, 3)]);
    drop(store);

    let list: Value =
        serde_json::from_str(&cli(&db, &["sessions", "list", "--json"])).expect("JSON");
    assert_eq!(
        (&list[0]["interrupted"], &list[0]["unanswered"]),
        (&json!(1), &json!(0))
    );
    let text = cli(&db, &["sessions", "list"]);
    assert!(
        text.trim_end().ends_with("! 1 interrupted"),
        "the listing flags it: {text}"
    );
    let show: Value =
        serde_json::from_str(&cli(&db, &["sessions", "show", "1", "--json"])).expect("JSON");
    assert_eq!(
        (
            &show["requests"][0]["outcome"],
            &show["requests"][0]["events"]
        ),
        (&json!("interrupted"), &json!(3))
    );
}

#[test]
fn a_send_killed_outright_is_listed_as_without_an_answer() {
    let db = scratch("sigkill");
    let (child, server) = send_until_stalled(&db);
    signal(&child, "-KILL");
    let out = wait(child);
    assert_eq!(out.status.code(), None);
    server.join().expect("server");
    let store = Store::open(&db).expect("open");
    let sessions = store.list_sessions(Page::ALL).expect("list");
    let summary: Vec<(i64, i64, i64)> = sessions
        .iter()
        .map(|s| (s.requests, s.interrupted, s.unanswered))
        .collect();
    assert_eq!(summary, vec![(1, 0, 1)]);
    let rows = store.request_rows(sessions[0].id, Page::ALL).expect("rows");
    assert_eq!(rows[0].outcome, OutcomeClass::None);
    drop(store);
    let text = cli(&db, &["sessions", "list"]);
    assert!(
        text.trim_end().ends_with("! 1 without an answer"),
        "the listing flags it: {text}"
    );
}
