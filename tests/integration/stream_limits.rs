//! Limits on what comes back: an event or a response past its size limit, and a send past its
//! overall deadline, end the turn as a `limit_exceeded` failure that keeps what arrived before —
//! in the core reader (any split of the bytes), in live sends against a loopback server that
//! streams forever (bounded here in count and time), and through `send` and `stream` as a user
//! runs them (small limits set by flags, so each test ends in seconds with bounded memory).
#![allow(clippy::disallowed_methods, reason = "a test runs its own threads")]

use std::io::Write as _;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use promptwire::core::compile::{CompiledRequest, compile};
use promptwire::core::models::ModelCatalog;
use promptwire::core::prompt::{Dialect, Prompt};
use promptwire::core::provider::{Provider, ProviderKind};
use promptwire::core::rules::CompileRules;
use promptwire::core::stream::{ErrorClass, StreamError, StreamLimits, StreamReader, TurnState};
use promptwire::store::{Page, RecordedState, Store};
use promptwire::transport::{CancelToken, HttpSender, SendError, SendOptions, resolve_headers};
use tokio::io::AsyncWriteExt as _;

use crate::support::loopback;
use crate::support::rss;

const CREATED: &str = "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_limits\",\"status\":\"in_progress\",\"output\":[]}}\n\n";

fn delta(text: &str) -> String {
    format!(
        "event: response.output_text.delta\ndata: {{\"type\":\"response.output_text.delta\",\"output_index\":0,\"content_index\":0,\"delta\":\"{text}\"}}\n\n"
    )
}

fn limit(message: &str) -> StreamError {
    StreamError::LimitExceeded {
        message: message.to_string(),
    }
}

// ---------------------------------------------------------------------------------------------
// The core reader.

#[test]
fn an_oversize_event_ends_the_turn_keeping_what_came_before() {
    let big = delta(&"x".repeat(5000));
    let bytes = [
        CREATED,
        &delta("hello "),
        &delta("world"),
        &big,
        &delta("after"),
    ]
    .concat();
    let limits = StreamLimits {
        max_event_bytes: 1000,
        ..StreamLimits::default()
    };
    for chunk in [bytes.len(), 4096, 7, 1] {
        let mut reader = StreamReader::with_limits(limits);
        let mut entries = Vec::new();
        for part in bytes.as_bytes().chunks(chunk) {
            entries.extend(reader.push(part, Duration::ZERO));
        }
        entries.extend(reader.finish(Duration::ZERO));
        let types: Vec<Option<String>> = entries
            .iter()
            .map(|e| e.data_type.as_deref().map(str::to_string))
            .collect();
        assert_eq!(
            types,
            vec![
                Some("response.created".to_string()),
                Some("response.output_text.delta".to_string()),
                Some("response.output_text.delta".to_string()),
            ],
            "chunks of {chunk}"
        );
        let outcome = reader.outcome();
        assert_eq!(outcome.text, "hello world", "chunks of {chunk}");
        assert_eq!(
            outcome.state,
            TurnState::Failed(limit(
                "an event is larger than the limit of 1000 bytes per event"
            )),
            "chunks of {chunk}"
        );
    }
}

#[test]
fn the_response_limit_cuts_at_exactly_that_many_bytes() {
    let one = delta("ab");
    let bytes = [CREATED.to_string(), one.repeat(50)].concat();
    let max = 1000u64;
    for chunk in [bytes.len(), 64, 3] {
        let mut reader = StreamReader::with_limits(StreamLimits {
            max_response_bytes: max,
            ..StreamLimits::default()
        });
        let mut entries = Vec::new();
        for part in bytes.as_bytes().chunks(chunk) {
            entries.extend(reader.push(part, Duration::ZERO));
        }
        entries.extend(reader.finish(Duration::ZERO));
        assert_eq!(reader.bytes_received(), max);
        // Every whole event inside the first 1000 bytes, and nothing of the cut one.
        let deltas = (max as usize - CREATED.len()) / one.len();
        assert_eq!(entries.len(), 1 + deltas, "chunks of {chunk}");
        assert_eq!(reader.outcome().text, "ab".repeat(deltas));
        assert_eq!(
            reader.outcome().state,
            TurnState::Failed(limit("the response is larger than the limit of 1000 bytes"))
        );
    }
}

#[test]
fn an_endless_line_stops_at_the_event_limit() {
    let zeros = vec![0u8; 64 * 1024];
    let mut reader = StreamReader::with_limits(StreamLimits {
        max_event_bytes: 1024 * 1024,
        ..StreamLimits::default()
    });
    let mut pushes = 0;
    while !reader.is_done() && pushes < 1000 {
        assert_eq!(reader.push(&zeros, Duration::ZERO), Vec::new());
        pushes += 1;
    }
    // 1 MiB of line, then the push that went past it.
    assert_eq!(pushes, 17);
    assert_eq!(
        reader.outcome().state,
        TurnState::Failed(limit(
            "an event is larger than the limit of 1.0 MiB per event"
        ))
    );
}

#[test]
fn the_default_limits_are_far_above_real_traffic() {
    assert_eq!(
        StreamLimits::default(),
        StreamLimits {
            max_event_bytes: 64 * 1024 * 1024,
            max_response_bytes: 1024 * 1024 * 1024,
        }
    );
    assert_eq!(
        SendOptions::default().deadline,
        Duration::from_secs(30 * 60)
    );
    assert_eq!(limit("x").class(), ErrorClass::LimitExceeded);
    assert!(!limit("x").is_retryable());
}

// ---------------------------------------------------------------------------------------------
// Live sends against a server that never stops.

/// A loopback server answering each connection (at most `connections`) with 200, `head`, then
/// `repeat` again and again (a `gap` apart) until the client goes away — at most 200,000 times
/// or 30 s, so a failing test still ends.
fn endless_server(head: String, repeat: String, gap: Duration, connections: usize) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("nonblocking");
    let base = format!("http://{}/v1", listener.local_addr().expect("addr"));
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
            let mut tasks = Vec::new();
            for _ in 0..connections {
                let Ok((mut socket, _)) = listener.accept().await else {
                    break;
                };
                let (head, repeat) = (head.clone(), repeat.clone());
                tasks.push(tokio::spawn(async move {
                    if loopback::read_request(&mut socket).await.is_none() {
                        return;
                    }
                    let start = Instant::now();
                    let status = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
                    let mut out = status.as_bytes().to_vec();
                    out.extend(chunked(head.as_bytes()));
                    if socket.write_all(&out).await.is_err() {
                        return;
                    }
                    let frame = chunked(repeat.as_bytes());
                    for _ in 0..200_000 {
                        if start.elapsed() > Duration::from_secs(30)
                            || socket.write_all(&frame).await.is_err()
                        {
                            return;
                        }
                        if !gap.is_zero() {
                            tokio::time::sleep(gap).await;
                        }
                    }
                }));
            }
            for task in tasks {
                let _ = task.await;
            }
        });
    });
    base
}

fn chunked(bytes: &[u8]) -> Vec<u8> {
    [
        format!("{:x}\r\n", bytes.len()).into_bytes(),
        bytes.to_vec(),
        b"\r\n".to_vec(),
    ]
    .concat()
}

fn compiled(base_url: &str) -> CompiledRequest {
    let prompt = Prompt::from_json_str(
        r#"{"model": "gpt-5.5", "input": [{"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": "hi"}]}]}"#,
    )
    .expect("prompt");
    let catalog = ModelCatalog::bundled();
    let mut provider = Provider::preset(ProviderKind::Compatible);
    provider.base_url = base_url.to_string();
    compile(
        &prompt,
        &catalog.lookup(&prompt.model),
        &provider,
        Dialect::Auto,
        &CompileRules::codex_0_169(),
    )
    .expect("compile")
}

fn options() -> SendOptions {
    SendOptions {
        connect_timeout: Duration::from_secs(2),
        idle_timeout: Duration::from_secs(5),
        max_retries: 3,
        retry_base_delay: Duration::from_millis(10),
        ..SendOptions::default()
    }
}

async fn send(base: &str, options: SendOptions) -> (promptwire::transport::SendResult, Duration) {
    let request = compiled(base);
    let headers = resolve_headers(&request, |_| None).expect("headers");
    let sender = HttpSender::new(&request.url, options).expect("sender");
    let start = Instant::now();
    let result = sender
        .send(&request, &headers, &CancelToken::new(), |_| {})
        .await;
    (result, start.elapsed())
}

#[tokio::test]
async fn an_endless_stream_stops_at_the_response_limit() {
    let base = endless_server(CREATED.to_string(), delta("ab"), Duration::ZERO, 4);
    let mut options = options();
    options.limits.max_response_bytes = 1024 * 1024;
    let (result, elapsed) = send(&base, options).await;
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");
    assert_eq!(
        result.error,
        Some(SendError::Stream(limit(
            "the response is larger than the limit of 1.0 MiB"
        )))
    );
    // Not retried; what arrived is kept.
    assert_eq!(result.attempts.len(), 1);
    let attempt = &result.attempts[0];
    let deltas = (1024 * 1024 - CREATED.len()) / delta("ab").len();
    assert_eq!(attempt.entries.len(), 1 + deltas);
    assert_eq!(attempt.outcome.text, "ab".repeat(deltas));
}

#[tokio::test]
async fn an_endless_event_stops_at_the_event_limit() {
    let head = format!(
        "{CREATED}event: response.output_text.delta\ndata: {{\"type\":\"response.output_text.delta\",\"delta\":\""
    );
    let base = endless_server(head, "x".repeat(64 * 1024), Duration::ZERO, 4);
    let mut options = options();
    options.limits.max_event_bytes = 256 * 1024;
    let (result, elapsed) = send(&base, options).await;
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");
    assert_eq!(
        result.error,
        Some(SendError::Stream(limit(
            "an event is larger than the limit of 256.0 KiB per event"
        )))
    );
    assert_eq!(result.attempts.len(), 1);
    assert_eq!(result.attempts[0].entries.len(), 1);
}

#[tokio::test]
async fn keep_alives_forever_end_at_the_deadline() {
    let base = endless_server(
        CREATED.to_string(),
        ": keep-alive\n\n".to_string(),
        Duration::from_millis(50),
        4,
    );
    let mut options = options();
    options.deadline = Duration::from_secs(1);
    let (result, elapsed) = send(&base, options).await;
    assert!(
        elapsed >= Duration::from_secs(1) && elapsed < Duration::from_secs(4),
        "took {elapsed:?}"
    );
    assert_eq!(
        result.error,
        Some(SendError::Stream(limit(
            "the send's deadline of 1.000 s passed"
        )))
    );
    assert_eq!(result.attempts.len(), 1);
    assert_eq!(result.attempts[0].entries.len(), 1);
}

#[tokio::test]
async fn a_server_that_never_answers_ends_at_the_deadline() {
    // Accepts, reads nothing, answers nothing: only the deadline (under the idle timeout) ends it.
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let base = format!("http://{}/v1", listener.local_addr().expect("addr"));
    let holder = std::thread::spawn(move || {
        let conn = listener.accept();
        std::thread::sleep(Duration::from_secs(3));
        drop(conn);
    });
    let mut options = options();
    options.deadline = Duration::from_millis(500);
    let (result, elapsed) = send(&base, options).await;
    assert!(elapsed < Duration::from_secs(2), "took {elapsed:?}");
    assert_eq!(
        result.error,
        Some(SendError::Stream(limit(
            "the send's deadline of 0.500 s passed"
        )))
    );
    holder.join().expect("holder");
}

// ---------------------------------------------------------------------------------------------
// The commands.

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("stream_limits")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn run_send(base: &str, db: &Path, extra: &[&str]) -> (Output, Duration) {
    let prompt = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/prompts/hello.json");
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .arg("send")
        .arg(&prompt)
        .args(["--provider", "compatible", "--base-url", base, "--json"])
        .arg("--db")
        .arg(db)
        .args(extra)
        .output()
        .expect("run promptwire");
    (out, start.elapsed())
}

fn last_line(out: &Output) -> serde_json::Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.lines().last().unwrap_or("")).expect("outcome line")
}

#[test]
fn send_stops_at_the_flags_limits_and_records_what_arrived() {
    let dir = scratch("send");
    let db = dir.join("s.db");
    let base = endless_server(CREATED.to_string(), delta("ab"), Duration::ZERO, 4);
    let (out, elapsed) = run_send(&base, &db, &["--max-response-bytes", "200000"]);
    assert!(elapsed < Duration::from_secs(20), "took {elapsed:?}");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        last_line(&out),
        serde_json::json!({"outcome": "failed", "error": "limit_exceeded",
            "message": "the response is larger than the limit of 195.3 KiB", "retry_after_ms": null})
    );
    let deltas = (200_000 - CREATED.len()) / delta("ab").len();
    let store = Store::open(&db).expect("open");
    let sessions = store.list_sessions(Page::ALL).expect("list");
    let requests = store.requests(sessions[0].id, Page::ALL).expect("requests");
    assert_eq!(requests.len(), 1);
    assert_eq!(
        store
            .events(requests[0].id, Page::ALL)
            .expect("events")
            .len(),
        1 + deltas
    );
    let outcome = store
        .outcome(requests[0].id)
        .expect("outcome")
        .expect("recorded");
    assert_eq!(
        (
            outcome.state,
            outcome.error_class,
            outcome.error_message.as_deref(),
            outcome.text
        ),
        (
            RecordedState::Failed,
            Some(ErrorClass::LimitExceeded),
            Some("the response is larger than the limit of 195.3 KiB"),
            "ab".repeat(deltas)
        )
    );
}

#[test]
fn send_deadline_ends_a_keep_alive_stream() {
    let dir = scratch("deadline");
    let db = dir.join("s.db");
    let base = endless_server(
        CREATED.to_string(),
        ": keep-alive\n\n".to_string(),
        Duration::from_millis(100),
        4,
    );
    let (out, elapsed) = run_send(&base, &db, &["--deadline", "1", "--idle-timeout-secs", "5"]);
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        last_line(&out),
        serde_json::json!({"outcome": "failed", "error": "limit_exceeded",
            "message": "the send's deadline of 1.000 s passed", "retry_after_ms": null})
    );
}

fn run_stream(args: &[&str], stdin: Option<&[u8]>) -> (Output, Duration) {
    let start = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .arg("stream")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    if let Some(bytes) = stdin {
        let _ = child.stdin.take().expect("stdin").write_all(bytes);
    }
    drop(child.stdin.take());
    let out = child.wait_with_output().expect("wait");
    (out, start.elapsed())
}

#[test]
fn stream_of_a_device_ends_with_the_limit_error() {
    for (args, message) in [
        (
            vec!["/dev/zero", "--json"],
            "an event is larger than the limit of 64.0 MiB per event",
        ),
        (
            vec!["/dev/zero", "--json", "--max-event-bytes", "65536"],
            "an event is larger than the limit of 64.0 KiB per event",
        ),
    ] {
        let (out, elapsed) = run_stream(&args, None);
        assert!(elapsed < Duration::from_secs(20), "took {elapsed:?}");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1);
        assert_eq!(
            last_line(&out),
            serde_json::json!({"outcome": "failed", "error": "limit_exceeded",
                "message": message, "retry_after_ms": null})
        );
    }
    // The response limit on standard input: the events before it are printed.
    let bytes = [CREATED.to_string(), delta("ab").repeat(100)].concat();
    let (out, _) = run_stream(
        &["-", "--json", "--max-response-bytes", "1000"],
        Some(bytes.as_bytes()),
    );
    let deltas = (1000 - CREATED.len()) / delta("ab").len();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).lines().count(),
        2 + deltas
    );
    assert_eq!(
        last_line(&out),
        serde_json::json!({"outcome": "failed", "error": "limit_exceeded",
            "message": "the response is larger than the limit of 1000 bytes", "retry_after_ms": null})
    );
}

/// Memory stays near the limit, not a multiple of it: a stream of many small events up to a
/// 16 MiB response limit (about 140,000 events) used to keep every event twice (the timeline
/// entries of the attempt beside the printed and recorded ones), 8× the limit (815 MB for a
/// 100 MB limit); now each event is dropped once printed and recorded.
#[test]
fn send_memory_stays_near_the_response_limit() {
    const LIMIT: u64 = 16 * 1024 * 1024;
    let dir = scratch("send_memory");
    let repeat = delta("hello world ").repeat(100);
    for (name, extra) in [("no record", &["--no-record"][..]), ("record", &[][..])] {
        let base = endless_server(CREATED.to_string(), repeat.clone(), Duration::ZERO, 1);
        let db = dir.join(format!("{}.db", name.replace(' ', "_")));
        let limit = LIMIT.to_string();
        let args = [&["--max-response-bytes", limit.as_str()][..], extra].concat();
        let prompt = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/prompts/hello.json");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_promptwire"));
        cmd.arg("send")
            .arg(&prompt)
            .args(["--provider", "compatible", "--base-url", &base, "--json"])
            .arg("--db")
            .arg(&db)
            .args(&args);
        let (out, peak) = rss::run_measured(cmd);
        assert_eq!(
            last_line(&out)["error"],
            "limit_exceeded",
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // The binary's own footprint (and, recording, the writer's) plus at most 2× the limit.
        let writer = if extra.is_empty() {
            rss::RECORDING_FOOTPRINT
        } else {
            0
        };
        rss::assert_within_twice_and(name, peak, LIMIT, writer);
    }
}

/// `stream` of one large event holds it about three times (its line while it is read, then its
/// data, its parsed delta and the outcome's text), no longer six (the SSE crate's own buffers);
/// an event past the limit is held once, up to the limit, not doubled past it.
#[test]
fn stream_memory_stays_near_the_event_limit() {
    const LIMIT: u64 = 32 * rss::MIB;
    let dir = scratch("stream_memory");
    for (name, size, expected) in [
        ("within the limit", 16 * rss::MIB, "completed"),
        ("past the limit", 100 * rss::MIB, "failed"),
    ] {
        let file = dir.join(format!("{}.sse", name.replace(' ', "_")));
        let mut sse = CREATED.as_bytes().to_vec();
        sse.extend_from_slice(
            b"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"",
        );
        sse.resize(sse.len() + usize::try_from(size).expect("size"), b'a');
        sse.extend_from_slice(b"\"}\n\n");
        sse.extend_from_slice(b"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_limits\",\"status\":\"completed\",\"output\":[]}}\n\n");
        std::fs::write(&file, &sse).expect("write stream");
        drop(sse);
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_promptwire"));
        let limit = LIMIT.to_string();
        cmd.arg("stream")
            .arg(&file)
            .args(["--max-event-bytes", &limit]);
        let (out, peak) = rss::run_measured(cmd);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with(&format!("outcome    {expected}"))),
            "{name}: {}",
            stdout
                .lines()
                .filter(|l| l.starts_with("outcome"))
                .collect::<Vec<_>>()
                .join("\n")
        );
        rss::assert_within_twice(name, peak, LIMIT);
    }
}
