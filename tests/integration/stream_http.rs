//! Live sends against an HTTP/1.1 server this test starts on 127.0.0.1, which streams recorded
//! SSE bytes with delays (chunked transfer encoding, as real servers do): success, 429 with
//! `retry-after`, 500 then success, 400 (not retried), 503 overloaded, a connection reset in the
//! middle of the stream, a server that stops sending, cancellation, and the `send` command run
//! end to end through the built binary.
#![allow(clippy::disallowed_methods, reason = "a test runs its own threads")]

use std::io::{Read as _, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use promptwire::core::compile::{CompiledRequest, compile};
use promptwire::core::models::ModelCatalog;
use promptwire::core::prompt::{Dialect, Prompt};
use promptwire::core::provider::{Provider, ProviderKind};
use promptwire::core::rules::CompileRules;
use promptwire::core::stream::errors::IDLE_TIMEOUT;
use promptwire::core::stream::{ErrorClass, HttpError, MappedEvent, StreamError, TurnState};
use promptwire::transport::{
    CancelToken, HttpSender, PrepareError, SendError, SendEvent, SendOptions, SendResult,
    resolve_headers,
};
use serde_json::{Value, json};

use crate::support::upstream::{End, Reply, Upstream, pieces, sse_file};

// ---------------------------------------------------------------------------------------------
// Helpers.

fn frames(values: &[Value]) -> Vec<u8> {
    values
        .iter()
        .map(|v| format!("event: {}\ndata: {v}\n\n", v["type"].as_str().unwrap_or("")))
        .collect::<String>()
        .into_bytes()
}

fn compiled(base_url: &str, kind: ProviderKind) -> CompiledRequest {
    let prompt = Prompt::from_json_str(
        r#"{"model": "gpt-5.5", "base_instructions": "Answer briefly.",
            "input": [{"type": "message", "role": "user",
                       "content": [{"type": "input_text", "text": "What does git rebase --onto do?"}]}],
            "thread_id": "0196c1d2-0000-7000-8000-00000000abcd"}"#,
    )
    .expect("prompt");
    let catalog = ModelCatalog::bundled();
    let model = catalog.lookup(&prompt.model);
    let mut provider = Provider::preset(kind);
    provider.base_url = base_url.to_string();
    compile(
        &prompt,
        &model,
        &provider,
        Dialect::Auto,
        &CompileRules::codex_0_169(),
    )
    .expect("compile")
}

fn fast_options() -> SendOptions {
    SendOptions {
        connect_timeout: Duration::from_secs(2),
        idle_timeout: Duration::from_secs(5),
        max_retries: 3,
        retry_base_delay: Duration::from_millis(10),
        max_retry_delay: Duration::from_secs(5),
        max_error_body_bytes: 64 * 1024,
        ..SendOptions::default()
    }
}

/// Sends to `server`; returns the result and the events reported along the way (as text).
async fn send(server: &Upstream, options: SendOptions) -> (SendResult, Vec<String>) {
    send_with(server, options, &CancelToken::new(), None).await
}

async fn send_with(
    server: &Upstream,
    options: SendOptions,
    cancel: &CancelToken,
    cancel_after_entries: Option<usize>,
) -> (SendResult, Vec<String>) {
    let request = compiled(&server.base_url(), ProviderKind::Compatible);
    let headers = resolve_headers(&request, |_| None).expect("no secrets for compatible");
    let sender = HttpSender::new(&request.url, options).expect("sender");
    let mut log = Vec::new();
    let mut entries = 0;
    let result = sender
        .send(&request, &headers, cancel, |event| {
            log.push(match event {
                SendEvent::AttemptStarted { attempt } => format!("attempt {attempt}"),
                SendEvent::Response { status, .. } => format!("status {status}"),
                SendEvent::HeaderEvents(events) => format!("header events {}", events.len()),
                SendEvent::Entry(entry) => {
                    entries += 1;
                    if cancel_after_entries == Some(entries) {
                        cancel.cancel();
                    }
                    format!("entry {}", entry.raw.seq)
                }
                SendEvent::Retrying { error, delay, .. } => {
                    format!("retry {} {}ms", error.class(), delay.as_millis())
                }
            });
        })
        .await;
    (result, log)
}

fn summary(log: &[String]) -> Vec<String> {
    log.iter()
        .filter(|l| !l.starts_with("entry"))
        .cloned()
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Library-level sends.

#[tokio::test]
async fn success_streams_events_as_they_arrive() {
    let bytes = sse_file("text-answer.sse");
    let server = Upstream::in_order(vec![Reply::answer(
        pieces(&bytes, 6, Duration::from_millis(40)),
        End::Complete,
    )]);
    let (result, log) = send(&server, fast_options()).await;
    assert_eq!(result.error, None);
    assert_eq!(result.attempts.len(), 1);
    let attempt = &result.attempts[0];
    assert_eq!(attempt.status, Some(200));
    assert_eq!(
        attempt.header_events,
        vec![MappedEvent::ServerModel("gpt-5.5-2026-10-01".to_string())]
    );
    let outcome = &attempt.outcome;
    assert_eq!(
        outcome.state,
        TurnState::Completed {
            response_id: "resp_7f3a91c2d04e".to_string(),
            end_turn: Some(true)
        }
    );
    assert_eq!(
        outcome.text,
        "`git rebase --onto` moves a range of commits to a new base: the commits after the old \
         base are replayed on top of the new one."
    );
    assert_eq!(outcome.events, 21);
    assert_eq!(attempt.entries.len(), 21);
    // The 6 chunks arrived 40 ms apart: events carry their arrival times.
    let first = outcome.timings.first_event.expect("first event");
    let total = outcome.timings.total.expect("total");
    assert!(
        first >= Duration::from_millis(35),
        "first event at {first:?}"
    );
    assert!(total >= Duration::from_millis(200), "total {total:?}");
    assert!(
        outcome.timings.longest_gap.expect("gap").duration >= Duration::from_millis(20),
        "{:?}",
        outcome.timings
    );
    let distinct_times: std::collections::BTreeSet<_> =
        attempt.entries.iter().map(|e| e.raw.received_at).collect();
    assert!(distinct_times.len() >= 3, "{distinct_times:?}");
    assert_eq!(
        summary(&log),
        vec!["attempt 1", "status 200", "header events 1"]
    );
    // The server got exactly the compiled body and headers.
    let received = server.received();
    assert_eq!(received.len(), 1);
    assert_eq!(
        (received[0].method.as_str(), received[0].path.as_str()),
        ("POST", "/v1/responses")
    );
    let request = compiled(&server.base_url(), ProviderKind::Compatible);
    assert_eq!(received[0].body, request.body_json);
    assert_eq!(received[0].header("accept"), Some("text/event-stream"));
    assert_eq!(
        received[0].header("session-id"),
        Some("0196c1d2-0000-7000-8000-00000000abcd")
    );
}

#[tokio::test]
async fn rate_limit_429_waits_the_servers_retry_after() {
    let body = json!({"error": {"type": "requests", "code": "rate_limit_exceeded",
        "message": "Rate limit reached for requests per min. Please try again in 20s."}});
    let server = Upstream::in_order(vec![
        Reply::status(
            429,
            &[("retry-after", "1"), ("x-request-id", "req_429")],
            &body,
        ),
        Reply::answer(
            pieces(&sse_file("text-answer.sse"), 2, Duration::ZERO),
            End::Complete,
        ),
    ]);
    let started = Instant::now();
    let (result, log) = send(&server, fast_options()).await;
    let elapsed = started.elapsed();
    assert_eq!(result.error, None);
    assert_eq!(
        result.attempts[0].error,
        Some(SendError::Http(HttpError::RetryLimit {
            status: 429,
            request_id: Some("req_429".to_string()),
            retry_after: Some(Duration::from_secs(1)),
            body: body.to_string(),
        }))
    );
    // The header's 1 s wins over the body's 20 s and over the 10 ms backoff.
    assert_eq!(
        summary(&log),
        vec![
            "attempt 1",
            "status 429",
            "retry retry_limit 1000ms",
            "attempt 2",
            "status 200",
            "header events 1"
        ]
    );
    assert!(elapsed >= Duration::from_millis(950), "{elapsed:?}");
    assert_eq!(
        result.outcome().and_then(|o| o.response_id()),
        Some("resp_7f3a91c2d04e")
    );
    assert_eq!(server.received().len(), 2);
}

#[tokio::test]
async fn a_retry_after_http_date_is_waited_for_even_without_a_date_header() {
    // Two seconds from now, as an HTTP date (whole seconds): the wait is one to two seconds.
    let at = (chrono::Utc::now() + chrono::Duration::seconds(2))
        .format("%a, %d %b %Y %H:%M:%S GMT")
        .to_string();
    let body = json!({"error": {"type": "requests", "code": "rate_limit_exceeded",
        "message": "Rate limit reached."}});
    let server = Upstream::in_order(vec![
        Reply::status(429, &[("retry-after", &at)], &body),
        Reply::answer(
            pieces(&sse_file("text-answer.sse"), 2, Duration::ZERO),
            End::Complete,
        ),
    ]);
    let started = Instant::now();
    let (result, log) = send(&server, fast_options()).await;
    let elapsed = started.elapsed();
    assert_eq!(result.error, None);
    let waited = result.attempts[0]
        .error
        .as_ref()
        .and_then(SendError::retry_after);
    assert!(
        waited.is_some_and(|d| d >= Duration::from_secs(1) && d <= Duration::from_secs(2)),
        "{waited:?}"
    );
    let retry = format!(
        "retry retry_limit {}ms",
        waited.unwrap_or_default().as_millis()
    );
    assert_eq!(
        summary(&log),
        vec![
            "attempt 1",
            "status 429",
            retry.as_str(),
            "attempt 2",
            "status 200",
            "header events 1"
        ]
    );
    assert!(elapsed >= Duration::from_millis(950), "{elapsed:?}");
}

#[tokio::test]
async fn server_error_500_is_retried_with_backoff() {
    let server = Upstream::in_order(vec![
        Reply::status(
            500,
            &[],
            &json!({"error": {"type": "server_error", "message": "boom"}}),
        ),
        Reply::answer(
            pieces(
                &sse_file("tool-calls-crlf.sse"),
                3,
                Duration::from_millis(5),
            ),
            End::Complete,
        ),
    ]);
    let (result, log) = send(&server, fast_options()).await;
    assert_eq!(result.error, None);
    assert_eq!(result.attempts.len(), 2);
    assert_eq!(
        result.attempts[0].error.as_ref().map(SendError::class),
        Some(ErrorClass::InternalServerError)
    );
    // 10 ms × 2⁰ with ±10% jitter.
    let retry = &summary(&log)[2];
    let ms: u64 = retry
        .trim_start_matches("retry internal_server_error ")
        .trim_end_matches("ms")
        .parse()
        .expect("delay");
    assert!((9..=11).contains(&ms), "{retry}");
    let outcome = result.outcome().expect("outcome");
    assert_eq!(outcome.response_id(), Some("resp_2b44e0a17c95"));
    assert_eq!(outcome.tool_calls.len(), 2);
    assert_eq!(server.received().len(), 2);
}

#[tokio::test]
async fn bad_request_400_is_not_retried() {
    let body = json!({"error": {"type": "invalid_request_error", "code": "unknown_parameter",
        "message": "Unknown parameter: 'input[0].foo'."}});
    let server = Upstream::in_order(vec![
        Reply::status(400, &[], &body),
        Reply::answer(vec![], End::Complete),
    ]);
    let (result, log) = send(&server, fast_options()).await;
    assert_eq!(
        result.error,
        Some(SendError::Http(HttpError::InvalidRequest {
            body: body.to_string()
        }))
    );
    assert_eq!(summary(&log), vec!["attempt 1", "status 400"]);
    assert_eq!(server.received().len(), 1);
}

#[tokio::test]
async fn overloaded_503_is_not_retried() {
    let server = Upstream::in_order(vec![
        Reply::status(
            503,
            &[("retry-after", "1")],
            &json!({"error": {"code": "server_is_overloaded", "message": "Try later."}}),
        ),
        Reply::answer(vec![], End::Complete),
    ]);
    let (result, _) = send(&server, fast_options()).await;
    assert_eq!(
        result.error,
        Some(SendError::Http(HttpError::ServerOverloaded {
            message: "Try later.".to_string()
        }))
    );
    assert_eq!(result.attempts.len(), 1);
    assert_eq!(server.received().len(), 1);
}

#[tokio::test]
async fn connection_reset_mid_stream_keeps_the_partial_outcome() {
    let bytes = sse_file("text-answer.sse");
    // Up to and including the third text delta, then a reset.
    let third = find_nth(&bytes, b"\"type\":\"response.output_text.delta\"", 3);
    let cut = third + find_nth(&bytes[third..], b"\n\n", 1) + 2;
    let server = Upstream::in_order(vec![Reply::answer(
        vec![
            (Duration::ZERO, bytes[..cut].to_vec()),
            (
                Duration::from_millis(30),
                b"event: response.output_text.delta\ndata: {\"ty".to_vec(),
            ),
        ],
        End::Reset,
    )]);
    let options = SendOptions {
        max_retries: 0,
        ..fast_options()
    };
    let (result, _) = send(&server, options).await;
    let attempt = &result.attempts[0];
    let Some(SendError::Stream(StreamError::Stream { message })) = &result.error else {
        panic!("expected a stream error, got {:?}", result.error);
    };
    assert!(!message.is_empty());
    assert_eq!(
        result.error.as_ref().map(SendError::class),
        Some(ErrorClass::Stream)
    );
    // What arrived before the reset is kept.
    assert_eq!(attempt.outcome.text, "`git rebase --onto` moves a range");
    assert_eq!(attempt.outcome.events, 7);
    assert_eq!(
        attempt.outcome.state,
        TurnState::Failed(StreamError::Stream {
            message: message.clone()
        })
    );
}

#[tokio::test]
async fn reset_then_success_keeps_both_attempts() {
    let bytes = sse_file("text-answer.sse");
    let server = Upstream::in_order(vec![
        Reply::answer(vec![(Duration::ZERO, bytes[..900].to_vec())], End::Reset),
        Reply::answer(pieces(&bytes, 2, Duration::ZERO), End::Complete),
    ]);
    let (result, log) = send(&server, fast_options()).await;
    assert_eq!(result.error, None);
    assert_eq!(result.attempts.len(), 2);
    assert!(result.attempts[0].outcome.events > 0);
    assert_eq!(
        result.attempts[0].error.as_ref().map(SendError::class),
        Some(ErrorClass::Stream)
    );
    let steps = summary(&log);
    assert_eq!(steps[..3], ["attempt 1", "status 200", "header events 1"]);
    assert!(steps[3].starts_with("retry stream "), "{steps:?}");
    assert_eq!(steps[4..], ["attempt 2", "status 200", "header events 1"]);
    assert_eq!(
        result.outcome().and_then(|o| o.response_id()),
        Some("resp_7f3a91c2d04e")
    );
}

#[tokio::test]
async fn server_that_stops_sending_hits_the_idle_timeout() {
    let bytes = frames(&[
        json!({"type": "response.created", "response": {"id": "resp_idle"}}),
        json!({"type": "response.output_text.delta", "delta": "Thinking about it"}),
    ]);
    let server = Upstream::in_order(vec![Reply::answer(
        vec![(Duration::from_millis(10), bytes)],
        End::Hang(Duration::from_secs(10)),
    )]);
    let options = SendOptions {
        idle_timeout: Duration::from_millis(300),
        max_retries: 0,
        ..fast_options()
    };
    let started = Instant::now();
    let (result, _) = send(&server, options).await;
    let elapsed = started.elapsed();
    assert_eq!(
        result.error,
        Some(SendError::Stream(StreamError::stream(IDLE_TIMEOUT)))
    );
    let outcome = result.outcome().expect("outcome");
    assert_eq!(outcome.text, "Thinking about it");
    assert_eq!(outcome.events, 2);
    // The idle timeout, not the server (which closes after 10 s), ended it.
    assert!(elapsed >= Duration::from_millis(290), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(9), "{elapsed:?}");
}

#[tokio::test]
async fn no_response_headers_within_the_idle_timeout() {
    // A server that accepts and reads the request but never answers.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        if let Ok((mut socket, _)) = listener.accept() {
            let mut buf = [0u8; 1024];
            let _ = socket.read(&mut buf);
            std::thread::sleep(Duration::from_secs(3));
        }
    });
    let request = compiled(&format!("http://{addr}/v1"), ProviderKind::Compatible);
    let headers = resolve_headers(&request, |_| None).expect("headers");
    let options = SendOptions {
        idle_timeout: Duration::from_millis(200),
        max_retries: 0,
        ..fast_options()
    };
    let sender = HttpSender::new(&request.url, options).expect("sender");
    let result = sender
        .send(&request, &headers, &CancelToken::new(), |_| {})
        .await;
    assert_eq!(
        result.error,
        Some(SendError::Timeout {
            message: "no response headers within 0.200 s".to_string()
        })
    );
    assert_eq!(result.attempts[0].status, None);
}

#[tokio::test]
async fn cancel_keeps_the_partial_outcome() {
    let bytes = sse_file("text-answer.sse");
    let server = Upstream::in_order(vec![Reply::answer(
        pieces(&bytes, 10, Duration::from_millis(50)),
        End::Complete,
    )]);
    let cancel = CancelToken::new();
    let (result, _) = send_with(&server, fast_options(), &cancel, Some(3)).await;
    assert_eq!(result.error, Some(SendError::Cancelled));
    let outcome = result.outcome().expect("outcome");
    assert_eq!(outcome.state, TurnState::Open);
    assert!(
        outcome.events >= 3 && outcome.events < 21,
        "{}",
        outcome.events
    );
    assert_eq!(result.attempts.len(), 1);
}

#[tokio::test]
async fn failed_event_with_a_retry_hint_is_retried_after_it() {
    let failed = frames(&[
        json!({"type": "response.created", "response": {"id": "resp_a"}}),
        json!({"type": "response.failed", "response": {"id": "resp_a", "error": {
            "code": "rate_limit_exceeded", "message": "Slow down. Please try again in 150ms."}}}),
    ]);
    let context = frames(&[
        json!({"type": "response.failed", "response": {"id": "resp_b", "error": {
            "code": "context_length_exceeded", "message": "Too long."}}}),
    ]);
    let server = Upstream::in_order(vec![
        Reply::answer(vec![(Duration::ZERO, failed)], End::Complete),
        Reply::answer(vec![(Duration::ZERO, context)], End::Complete),
        Reply::answer(vec![], End::Complete),
    ]);
    let (result, log) = send(&server, fast_options()).await;
    assert_eq!(
        summary(&log),
        vec![
            "attempt 1",
            "status 200",
            "header events 1",
            "retry retryable 150ms",
            "attempt 2",
            "status 200",
            "header events 1"
        ]
    );
    // The second failure is not retryable: the send ends there.
    assert_eq!(
        result.error,
        Some(SendError::Stream(StreamError::ContextWindowExceeded {
            message: "Too long.".to_string()
        }))
    );
    assert_eq!(server.received().len(), 2);
}

#[tokio::test]
async fn retries_are_bounded_and_long_server_delays_are_not_waited() {
    let error = json!({"error": {"message": "boom"}});
    let server = Upstream::in_order(vec![
        Reply::status(500, &[], &error),
        Reply::status(500, &[], &error),
        Reply::status(500, &[], &error),
        Reply::status(500, &[], &error),
    ]);
    let options = SendOptions {
        max_retries: 2,
        ..fast_options()
    };
    let (result, _) = send(&server, options).await;
    assert_eq!(result.attempts.len(), 3);
    assert_eq!(
        result.error.as_ref().map(SendError::class),
        Some(ErrorClass::InternalServerError)
    );

    let server = Upstream::in_order(vec![Reply::status(
        429,
        &[("retry-after", "3600")],
        &json!({"error": {"message": "later"}}),
    )]);
    let (result, log) = send(&server, fast_options()).await;
    assert_eq!(result.attempts.len(), 1);
    assert_eq!(
        result.error.as_ref().and_then(SendError::retry_after),
        Some(Duration::from_secs(3600))
    );
    assert_eq!(summary(&log), vec!["attempt 1", "status 429"]);
}

#[tokio::test]
async fn connection_refused_is_a_retryable_stream_error() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("addr").port()
    };
    let request = compiled(
        &format!("http://127.0.0.1:{port}/v1"),
        ProviderKind::Compatible,
    );
    let headers = resolve_headers(&request, |_| None).expect("headers");
    let options = SendOptions {
        max_retries: 1,
        ..fast_options()
    };
    let sender = HttpSender::new(&request.url, options).expect("sender");
    let result = sender
        .send(&request, &headers, &CancelToken::new(), |_| {})
        .await;
    assert_eq!(result.attempts.len(), 2);
    let error = result.error.expect("error");
    assert_eq!(
        (error.class().as_str(), error.is_retryable()),
        ("stream", true)
    );
    assert!(matches!(error, SendError::Connect { .. }), "{error:?}");
}

#[test]
fn api_key_comes_from_the_providers_variable() {
    let request = compiled("https://api.openai.com/v1", ProviderKind::Openai);
    assert_eq!(
        resolve_headers(&request, |_| None),
        Err(PrepareError::MissingApiKey {
            env: "OPENAI_API_KEY".to_string()
        })
    );
    assert_eq!(
        resolve_headers(&request, |_| Some("  ".to_string())),
        Err(PrepareError::MissingApiKey {
            env: "OPENAI_API_KEY".to_string()
        })
    );
    let headers = resolve_headers(&request, |name| {
        (name == "OPENAI_API_KEY").then(|| "sk-test-abc123".to_string())
    })
    .expect("headers");
    let auth = headers.get("authorization").expect("authorization");
    assert_eq!(auth.to_str().ok(), Some("Bearer sk-test-abc123"));
    assert!(auth.is_sensitive());
    // The compiled view itself stays redacted.
    assert!(
        request
            .headers
            .iter()
            .all(|h| !h.value.contains("sk-test-abc123"))
    );
    assert!(matches!(
        HttpSender::new("ftp://example.com/v1/responses", SendOptions::default()),
        Err(PrepareError::BadUrl { .. })
    ));
}

fn find_nth(haystack: &[u8], needle: &[u8], n: usize) -> usize {
    haystack
        .windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle)
        .nth(n - 1)
        .map(|(i, _)| i)
        .expect("needle")
}

// ---------------------------------------------------------------------------------------------
// `promptwire send` end to end, through the built binary.

fn hello_prompt() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/sse/prompt-hello.json")
        .display()
        .to_string()
}

#[test]
fn send_command_prints_json_lines_as_events_arrive() {
    let bytes = sse_file("metadata-safety.sse");
    let server = Upstream::in_order(vec![
        Reply::status(500, &[], &json!({"error": {"message": "flaky"}})),
        Reply::answer(pieces(&bytes, 3, Duration::from_millis(20)), End::Complete),
    ]);
    let output = Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .args([
            "send",
            "--no-record",
            &hello_prompt(),
            "--provider",
            "compatible",
            "--base-url",
            &server.base_url(),
            "--json",
            "--idle-timeout-secs",
            "5",
        ])
        .env_remove("OPENAI_API_KEY")
        .output()
        .expect("run promptwire");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let stdout = String::from_utf8(output.stdout).expect("utf8");
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    assert_eq!(
        lines,
        vec![
            json!({"seq":0,"event":"response.created","type":"response.created","mapped":"created","unparsed":false}),
            json!({"seq":1,"event":"response.metadata","type":"response.metadata","mapped":"turn_moderation_metadata","unparsed":false}),
            json!({"seq":2,"event":"response.reasoning_text.delta","type":"response.reasoning_text.delta","mapped":"reasoning_content_delta","unparsed":false}),
            json!({"seq":3,"event":"response.reasoning_text.delta","type":"response.reasoning_text.delta","mapped":"reasoning_content_delta","unparsed":false}),
            json!({"seq":4,"event":"response.output_text.delta","type":"response.output_text.delta","mapped":"output_text_delta","unparsed":false}),
            json!({"seq":5,"event":"response.in_progress","type":"response.in_progress","mapped":null,"unparsed":false}),
            json!({"seq":6,"event":"response.in_progress","type":"response.in_progress","mapped":"server_model","unparsed":false}),
            json!({"seq":7,"event":"response.completed","type":"response.completed","mapped":"completed","unparsed":false}),
            json!({"outcome":"completed","response_id":"resp_58c7e1b2a90d","usage":{
                "input_tokens":840,"cached_input_tokens":0,"cache_write_input_tokens":0,
                "output_tokens":77,"reasoning_output_tokens":40,"total_tokens":917},
                "text":"Port scanning lists open ports."}),
        ]
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("attempt 1 failed (internal_server_error"),
        "{stderr}"
    );
    assert_eq!(server.received().len(), 2);
}

#[test]
fn send_command_failed_outcome_and_readable_timeline() {
    let server = Upstream::in_order(vec![Reply::answer(
        vec![(Duration::ZERO, sse_file("failed-rate-limit.sse"))],
        End::Complete,
    )]);
    let run = |json: bool| {
        let mut args = vec![
            "send".to_string(),
            "--no-record".to_string(),
            hello_prompt(),
            "--provider".to_string(),
            "compatible".to_string(),
            "--base-url".to_string(),
            server.base_url(),
            "--max-retries".to_string(),
            "0".to_string(),
        ];
        if json {
            args.push("--json".to_string());
        }
        Command::new(env!("CARGO_BIN_EXE_promptwire"))
            .args(&args)
            .output()
            .expect("run promptwire")
    };
    let output = run(true);
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8(output.stdout).expect("utf8");
    let last: Value = serde_json::from_str(stdout.lines().last().expect("line")).expect("json");
    assert_eq!(
        last,
        json!({"outcome": "failed", "error": "retryable",
            "message": "Rate limit reached for gpt-5.5 on tokens per min (TPM): Limit 200000, Used \
                        199210, Requested 4410. Please try again in 1.324s. Visit the rate-limits \
                        page to learn more.",
            "retry_after_ms": 1324})
    );
    assert_eq!(stdout.lines().count(), 4);
    drop(server);

    // The readable timeline (a second server: one reply per server).
    let server = Upstream::in_order(vec![Reply::answer(
        vec![(Duration::ZERO, sse_file("failed-rate-limit.sse"))],
        End::Complete,
    )]);
    let output = Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .args([
            "send",
            "--no-record",
            &hello_prompt(),
            "--provider",
            "compatible",
            "--base-url",
            &server.base_url(),
            "--max-retries",
            "0",
        ])
        .output()
        .expect("run promptwire");
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8(output.stdout).expect("utf8");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], format!("POST {}/responses", server.base_url()));
    assert!(lines[1].ends_with("HTTP 200"), "{stdout}");
    assert!(
        lines[2].contains("headers: server_model gpt-5.5-2026-10-01"),
        "{stdout}"
    );
    assert!(lines[3].contains("#0     response.created"), "{stdout}");
    assert!(
        lines[4].contains("output_text_delta \"Checking\""),
        "{stdout}"
    );
    assert!(
        lines[5].contains("error retryable: Rate limit reached"),
        "{stdout}"
    );
    assert!(
        lines[6].starts_with("outcome    failed: retryable: Rate limit reached"),
        "{stdout}"
    );
    assert!(lines[6].ends_with("(retry after 1.324 s)"), "{stdout}");
}

#[test]
fn send_command_reads_the_key_from_the_environment_and_never_prints_it() {
    let server = Upstream::in_order(vec![Reply::answer(
        vec![(Duration::ZERO, sse_file("text-answer.sse"))],
        End::Complete,
    )]);
    let key = "sk-proj-test-5f0e1d2c3b4a";
    let output = Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .args([
            "send",
            "--no-record",
            &hello_prompt(),
            "--provider",
            "openai",
            "--base-url",
            &server.base_url(),
        ])
        .env("OPENAI_API_KEY", key)
        .output()
        .expect("run promptwire");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let received = server.received();
    assert_eq!(
        received[0].header("authorization"),
        Some(format!("Bearer {key}").as_str())
    );
    assert!(!String::from_utf8_lossy(&output.stdout).contains(key));
    assert!(!String::from_utf8_lossy(&output.stderr).contains(key));

    // Without the variable: a usage error, nothing sent.
    let output = Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .args([
            "send",
            "--no-record",
            &hello_prompt(),
            "--provider",
            "openai",
            "--base-url",
            "http://127.0.0.1:9/v1",
        ])
        .env_remove("OPENAI_API_KEY")
        .stdin(Stdio::null())
        .output()
        .expect("run promptwire");
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "promptwire: the API key is not set: export OPENAI_API_KEY\n"
    );
    assert!(output.stdout.is_empty());
}

#[test]
fn send_command_usage_errors() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .args(["send", "--no-record", "-", "--provider", "compatible"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"{\"model\": 5}")
        .expect("write");
    let output = child.wait_with_output().expect("wait");
    assert_eq!(output.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&output.stderr).starts_with("promptwire: stdin: model:"),
        "{output:?}"
    );
    let output = Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .args(["send", "--no-record", &hello_prompt()])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(1));
}
