//! Recording loses nothing at full speed: a 35 MB answer of 200,001 events, one HTTP chunk each,
//! read through `record --json` by a lean client as fast as loopback allows, then `record` is
//! stopped with SIGINT the moment the client has the last byte. Every event is in the database
//! (what the writer's queue could not hold went to its journal beside the database and was
//! written in before the exit), the outcome is complete, the `record --json` outcome line gives
//! the status the store has (200), and the journal file is gone.

use crate::support;

use std::io::{BufRead as _, Read as _, Write as _};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use promptwire::store::{Page, RecordedState, Store};
use serde_json::{Value, json};
use support::scratch;
use support::upstream::{chunked_upstream, push_chunk, sse_event};

const EVENTS: usize = 200_000;

fn delta(i: usize) -> Vec<u8> {
    sse_event(
        "response.output_text.delta",
        &json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0,
                "content_index": 0, "delta": "x".repeat(10), "sequence_number": i}),
    )
    .to_vec()
}

/// POSTs to `addr` and reads the whole answer on one socket with large reads.
fn read_all(addr: &str) -> Vec<u8> {
    let mut socket = std::net::TcpStream::connect(addr).expect("connect");
    let body = json!({"model": "gpt-5.5", "input": "spool", "stream": true}).to_string();
    let head = format!(
        "POST /v1/responses HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    socket.write_all(head.as_bytes()).expect("request");
    let mut raw = Vec::with_capacity(48 << 20);
    socket.read_to_end(&mut raw).expect("read");
    raw
}

/// The body of a chunked HTTP/1.1 answer.
fn dechunked(raw: &[u8]) -> Vec<u8> {
    let mut at = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("response head")
        + 4;
    let mut body = Vec::new();
    loop {
        let line_end = at
            + raw[at..]
                .windows(2)
                .position(|w| w == b"\r\n")
                .expect("chunk size");
        let size_text = std::str::from_utf8(&raw[at..line_end]).expect("chunk size text");
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .expect("chunk size");
        if size == 0 {
            return body;
        }
        body.extend_from_slice(&raw[line_end + 2..line_end + 2 + size]);
        at = line_end + 2 + size + 2;
    }
}

#[cfg(unix)]
#[test]
fn a_fast_stream_then_sigint_stores_every_event() {
    let mut body = Vec::new();
    for i in 0..EVENTS {
        push_chunk(&mut body, &delta(i));
    }
    push_chunk(
        &mut body,
        &sse_event(
            "response.completed",
            &json!({"type": "response.completed", "response": {"id": "resp_spool", "status": "completed"}}),
        ),
    );
    body.extend_from_slice(b"0\r\n\r\n");
    let upstream = chunked_upstream(body);
    let dir = scratch("record_spool");
    let db = dir.join("rec.sqlite");
    let mut child = Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .args(["record", "--json", "--listen", "127.0.0.1:0", "--upstream"])
        .arg(&upstream)
        .arg("--db")
        .arg(&db)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn record");
    let mut stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    let mut first = String::new();
    stdout.read_line(&mut first).expect("first line");
    let first: Value = serde_json::from_str(&first).expect("json line");
    let addr = first["listening"].as_str().expect("address").to_string();

    let read = dechunked(&read_all(&addr));
    let deltas = read
        .windows(b"event: response.output_text.delta".len())
        .filter(|w| *w == b"event: response.output_text.delta")
        .count();
    assert_eq!(deltas, EVENTS, "every event reached the client");
    assert!(
        read.ends_with(b"\"resp_spool\",\"status\":\"completed\"}}\n\n"),
        "the answer ended"
    );
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(kill.success());
    let sent = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break Some(status);
        }
        if sent.elapsed() > Duration::from_secs(60) {
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    let mut lines = String::new();
    stdout.read_to_string(&mut lines).expect("stdout");
    assert_eq!(
        status.map(|s| s.code()),
        Some(Some(0)),
        "record did not exit within 60 s of SIGINT"
    );

    let store = Store::open(&db).expect("db");
    let session = store.list_sessions(Page::ALL).expect("sessions")[0].id;
    let requests = store.requests(session, Page::ALL).expect("requests");
    assert_eq!(requests.len(), 1);
    let id = requests[0].id;
    let outcome = store.outcome(id).expect("read").expect("outcome");
    assert_eq!(
        (
            store.event_count(id).expect("count"),
            outcome.state,
            outcome.lost_events,
            outcome.recording_gap(),
        ),
        ((EVENTS + 1) as u64, RecordedState::Completed, 0, None)
    );
    // The events in order, the last ones too.
    let last = store
        .events(
            id,
            Page {
                offset: (EVENTS - 1) as u64,
                limit: 2,
            },
        )
        .expect("events");
    assert_eq!(
        last.iter().map(|e| e.seq).collect::<Vec<_>>(),
        [(EVENTS - 1) as u64, EVENTS as u64]
    );
    // The outcome line: the status and state the store has.
    let outcome_line = lines
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v.get("outcome").is_some())
        .expect("an outcome line");
    assert_eq!(
        (
            &outcome_line["outcome"]["status"],
            &outcome_line["outcome"]["state"],
            &outcome_line["outcome"]["events"],
            &outcome_line["outcome"]["recording"],
        ),
        (
            &json!(200),
            &json!("completed"),
            &json!(EVENTS + 1),
            &json!("complete")
        )
    );
    // No journal is left beside the database.
    let left: Vec<String> = std::fs::read_dir(&dir)
        .expect("dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains(".journal-"))
        .collect();
    assert_eq!(left, Vec::<String>::new());
}
