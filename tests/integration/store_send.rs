//! `promptwire send` records into the session store: a session with the request, every raw event
//! and the outcome, against a local server; the API key sent in the Authorization header never
//! reaches the database file.
#![allow(clippy::disallowed_methods, reason = "a test runs its own threads")]

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;

use pretty_assertions::assert_eq;
use promptwire::store::{Page, RecordedState, Store};

const KEY: &str = "sk-test-NEVERSTORED0123456789";

/// Serves one request with `sse`; returns the request head it received.
fn serve_once(listener: TcpListener, sse: String) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let Ok((stream, _)) = listener.accept() else {
            return String::new();
        };
        let mut reader = BufReader::new(stream);
        let mut head = String::new();
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                break;
            }
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap_or(0);
            }
            head.push_str(&line);
        }
        let mut body = vec![0u8; length];
        let _ = reader.read_exact(&mut body);
        let mut stream = reader.into_inner();
        let _ = write!(
            stream,
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{sse}",
            sse.len()
        );
        head
    })
}

#[test]
fn send_records_request_events_and_outcome_without_the_key() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("store_send");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let db = dir.join("send.sqlite");
    let sse = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sse/text-answer.sse"),
    )
    .expect("sse fixture");
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let base = format!("http://{}/v1", listener.local_addr().expect("addr"));
    let server = serve_once(listener, sse);
    let prompt = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/prompts/hello.json");
    let out = Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .args([
            "send",
            &prompt.display().to_string(),
            "--provider",
            "openai",
        ])
        .args([
            "--base-url",
            &base,
            "--db",
            &db.display().to_string(),
            "--json",
        ])
        .args(["--max-retries", "0", "--idle-timeout-secs", "10"])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .expect("run promptwire");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let head = server.join().expect("server");
    assert!(head.contains(KEY), "the key was sent: {head}");

    let store = Store::open(&db).expect("open");
    let sessions = store.list_sessions(Page::ALL).expect("list");
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0].source, "send");
    let requests = store.requests(sessions[0].id, Page::ALL).expect("requests");
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].status, Some(200));
    assert_eq!(requests[0].state, Some(RecordedState::Completed));
    let events = store.events(requests[0].id, Page::ALL).expect("events");
    assert_eq!(events.len(), 21);
    assert_eq!(events[20].event.as_deref(), Some("response.completed"));
    let outcome = store
        .outcome(requests[0].id)
        .expect("outcome")
        .expect("some");
    assert_eq!(outcome.response_id.as_deref(), Some("resp_7f3a91c2d04e"));
    let record = store.request(requests[0].id).expect("request");
    assert!(
        record
            .headers
            .iter()
            .all(|(n, _)| !n.eq_ignore_ascii_case("authorization"))
    );
    drop(store);
    let mut bytes = Vec::new();
    for suffix in ["", "-wal", "-shm"] {
        if let Ok(b) = std::fs::read(format!("{}{suffix}", db.display())) {
            bytes.extend(b);
        }
    }
    assert!(!bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()));
    assert!(!bytes.windows(11).any(|w| w == b"NEVERSTORED"));
}

#[test]
fn an_unopenable_database_warns_and_the_send_still_goes_out() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("store_send_unopenable");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    // A folder where the database file should be: SQLite cannot open it.
    let db = dir.join("db-is-a-folder");
    std::fs::create_dir_all(&db).expect("folder");
    let sse = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sse/text-answer.sse"),
    )
    .expect("sse fixture");
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let base = format!("http://{}/v1", listener.local_addr().expect("addr"));
    let server = serve_once(listener, sse);
    let prompt = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/prompts/hello.json");
    let out = Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .arg("send")
        .arg(&prompt)
        .args(["--provider", "openai", "--base-url", &base, "--json"])
        .arg("--db")
        .arg(&db)
        .args(["--max-retries", "0", "--idle-timeout-secs", "10"])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .expect("run promptwire");
    let head = server.join().expect("server");
    assert!(head.starts_with("POST /v1/responses"), "{head}");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "promptwire: not recording this send: not a promptwire database (not SQLite or damaged): {}\n",
            db.display()
        )
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last: serde_json::Value =
        serde_json::from_str(stdout.lines().last().unwrap_or("")).expect("outcome line");
    assert_eq!(last["outcome"], serde_json::json!("completed"));
}
