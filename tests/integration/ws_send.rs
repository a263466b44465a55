//! WebSocket sends against a WebSocket server this test starts on 127.0.0.1 (tokio-tungstenite):
//! the server receives the upgrade with the request headers (key filled in) and exactly the
//! compiled `response.create` frame, then answers with the recorded events of an SSE file, one
//! message each; the outcome equals the one the HTTP path reads from the same SSE bytes. Also a
//! refused upgrade (429 with Retry-After), a server that stops sending (idle timeout), Stop
//! mid-stream (the partial text kept) and `send --ws` end to end.

use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::support::loopback;
use crate::support::upstream::sse_file;
use futures_util::{SinkExt as _, StreamExt as _};
use pretty_assertions::assert_eq;
use promptwire::core::compile::{CompiledRequest, compile};
use promptwire::core::models::ModelCatalog;
use promptwire::core::prompt::{Dialect, Prompt};
use promptwire::core::provider::{Provider, ProviderKind};
use promptwire::core::rules::CompileRules;
use promptwire::core::stream::errors::IDLE_TIMEOUT;
use promptwire::core::stream::{ErrorClass, StreamError, TurnOutcome, TurnState, read_all};
use promptwire::transport::{
    CancelToken, SendError, SendEvent, SendOptions, SendResult, WsSender, resolve_headers,
};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};

const KEY: &str = "sk-test-ws-0123456789";

/// What the server does after the upgrade.
#[derive(Debug, Clone)]
enum Script {
    /// Sends each message `delay` apart, then closes.
    Messages(Vec<String>, Duration),
    /// Sends these messages, then stays silent for a while.
    ThenHang(Vec<String>, Duration),
    /// Refuses the upgrade with this status, headers and body.
    Refuse(u16, Vec<(String, String)>, String),
}

/// What the server received: upgrade headers and the first message.
#[derive(Debug, Default, Clone)]
struct Seen {
    headers: Vec<(String, String)>,
    frame: Option<String>,
}

/// Serves one WebSocket connection with `script`; returns its URL (`http://…/v1`, as a provider
/// base URL would be) and what it saw.
fn serve(script: Script) -> (String, Arc<Mutex<Seen>>) {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let log = Arc::clone(&seen);
    let addr = loopback::spawn(move |listener| async move {
        let Ok((tcp, _)) = listener.accept().await else {
            return;
        };
        let refuse = match &script {
            Script::Refuse(status, headers, body) => Some((*status, headers.clone(), body.clone())),
            _ => None,
        };
        let header_log = Arc::clone(&log);
        // The callback's signature (a large `Err`) is tungstenite's.
        #[allow(clippy::result_large_err)]
        let callback = move |request: &Request, response: Response| {
            header_log.lock().expect("log").headers = request
                .headers()
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_str().unwrap_or("").to_string()))
                .collect();
            match &refuse {
                None => Ok(response),
                Some((status, headers, body)) => {
                    let mut refusal = ErrorResponse::new(Some(body.clone()));
                    *refusal.status_mut() =
                        tokio_tungstenite::tungstenite::http::StatusCode::from_u16(*status)
                            .expect("status");
                    for (name, value) in headers {
                        refusal.headers_mut().insert(
                            tokio_tungstenite::tungstenite::http::HeaderName::from_bytes(
                                name.as_bytes(),
                            )
                            .expect("name"),
                            value.parse().expect("value"),
                        );
                    }
                    Err(refusal)
                }
            }
        };
        let Ok(mut socket) = tokio_tungstenite::accept_hdr_async(tcp, callback).await else {
            return;
        };
        if let Some(Ok(Message::Text(frame))) = socket.next().await {
            log.lock().expect("log").frame = Some(frame.to_string());
        }
        match script {
            Script::Messages(messages, delay) => {
                for message in messages {
                    tokio::time::sleep(delay).await;
                    if socket.send(Message::text(message)).await.is_err() {
                        return;
                    }
                }
                let _ = socket.close(None).await;
            }
            Script::ThenHang(messages, hang) => {
                for message in messages {
                    let _ = socket.send(Message::text(message)).await;
                }
                tokio::time::sleep(hang).await;
            }
            Script::Refuse(..) => {}
        }
    });
    (format!("http://{addr}/v1"), seen)
}

/// The `data` of every event of a recorded SSE file, in order.
fn sse_messages(name: &str) -> Vec<String> {
    read_all(&sse_file(name), Duration::ZERO)
        .0
        .into_iter()
        .map(|entry| entry.raw.data)
        .collect()
}

fn compiled(base_url: &str) -> CompiledRequest {
    let prompt = Prompt::from_json_str(
        r#"{"model": "gpt-5.5", "base_instructions": "Answer briefly.",
            "input": [{"type": "message", "role": "user",
                       "content": [{"type": "input_text", "text": "What does git rebase --onto do?"}]}]}"#,
    )
    .expect("prompt");
    let mut provider = Provider::preset(ProviderKind::Openai);
    provider.base_url = base_url.to_string();
    compile(
        &prompt,
        &ModelCatalog::bundled().lookup(&prompt.model),
        &provider,
        Dialect::Auto,
        &CompileRules::codex_0_169(),
    )
    .expect("compile")
}

fn options(idle: Duration) -> SendOptions {
    SendOptions {
        connect_timeout: Duration::from_secs(2),
        idle_timeout: idle,
        max_retries: 0,
        retry_base_delay: Duration::from_millis(10),
        max_retry_delay: Duration::from_secs(1),
        max_error_body_bytes: 64 * 1024,
        ..SendOptions::default()
    }
}

async fn send_ws(
    base_url: &str,
    idle: Duration,
    cancel: &CancelToken,
    mut on_event: impl FnMut(&SendEvent<'_>) + Send,
) -> SendResult {
    let request = compiled(base_url);
    let headers = resolve_headers(&request, |_| Some(KEY.to_string())).expect("headers");
    let sender = WsSender::new(&request.url, options(idle)).expect("sender");
    sender
        .send(&request, &headers, cancel, |event| on_event(&event))
        .await
}

/// The outcome without its timings (which depend on when events arrived).
fn timeless(outcome: &TurnOutcome) -> TurnOutcome {
    TurnOutcome {
        timings: Default::default(),
        ..outcome.clone()
    }
}

#[tokio::test]
async fn ws_send_gives_the_same_outcome_as_the_sse_bytes() {
    let messages = sse_messages("tool-calls-crlf.sse");
    let (base, seen) = serve(Script::Messages(messages.clone(), Duration::from_millis(2)));
    let mut log = Vec::new();
    let result = send_ws(
        &base,
        Duration::from_secs(5),
        &CancelToken::new(),
        |event| {
            log.push(match event {
                SendEvent::AttemptStarted { attempt } => format!("attempt {attempt}"),
                SendEvent::Response { status, .. } => format!("status {status}"),
                SendEvent::Entry(entry) => format!("event {}", entry.raw.seq),
                other => format!("{other:?}"),
            });
        },
    )
    .await;
    assert_eq!(result.error, None);
    let attempt = &result.attempts[0];
    let (http_entries, http_outcome) = read_all(&sse_file("tool-calls-crlf.sse"), Duration::ZERO);
    assert_eq!(timeless(&attempt.outcome), timeless(&http_outcome));
    // Event for event the same mapping; a WebSocket message has no SSE event name.
    let strip = |entries: &[promptwire::core::stream::TimelineEntry]| -> Vec<(u64, String, Option<String>)> {
        entries
            .iter()
            .map(|e| (e.raw.seq, e.raw.data.clone(), e.mapped_kind().map(str::to_string)))
            .collect()
    };
    assert_eq!(strip(&attempt.entries), strip(&http_entries));
    assert!(attempt.entries.iter().all(|e| e.raw.event.is_none()));
    let mut expected_log = vec!["attempt 1".to_string(), "status 101".to_string()];
    expected_log.extend((0..messages.len()).map(|i| format!("event {i}")));
    assert_eq!(log, expected_log);

    // The server got the upgrade with the key, and exactly the compiled frame.
    let seen = seen.lock().expect("seen").clone();
    let request = compiled(&base);
    let frame: Value = serde_json::from_str(seen.frame.as_deref().expect("frame")).expect("JSON");
    assert_eq!(frame, Value::Object(request.ws_frame()));
    assert_eq!(
        seen.frame.as_deref(),
        Some(Value::Object(request.ws_frame()).to_string().as_str())
    );
    let header = |name: &str| {
        seen.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    assert_eq!(header("authorization"), Some(format!("Bearer {KEY}")));
    assert_eq!(header("content-type"), None);
    assert_eq!(header("upgrade").as_deref(), Some("websocket"));
}

#[tokio::test]
async fn refused_upgrade_is_classified_like_http() {
    let (base, _) = serve(Script::Refuse(
        429,
        vec![("retry-after".to_string(), "7".to_string())],
        json!({"error": {"type": "rate_limit_exceeded", "message": "slow down"}}).to_string(),
    ));
    let result = send_ws(&base, Duration::from_secs(5), &CancelToken::new(), |_| {}).await;
    let error = result.error.expect("refused");
    assert_eq!(
        (
            error.class(),
            error.retry_after(),
            result.attempts[0].status
        ),
        (
            ErrorClass::RetryLimit,
            Some(Duration::from_secs(7)),
            Some(429)
        )
    );
}

#[tokio::test]
async fn silent_server_hits_the_idle_timeout_and_keeps_what_came() {
    let messages = sse_messages("text-answer.sse");
    let (base, _) = serve(Script::ThenHang(
        messages[..4].to_vec(),
        Duration::from_secs(3),
    ));
    let result = send_ws(
        &base,
        Duration::from_millis(300),
        &CancelToken::new(),
        |_| {},
    )
    .await;
    assert_eq!(
        result.error,
        Some(SendError::Stream(StreamError::stream(IDLE_TIMEOUT)))
    );
    assert_eq!(result.attempts[0].entries.len(), 4);
    assert!(matches!(
        result.attempts[0].outcome.state,
        TurnState::Failed(_)
    ));
}

#[tokio::test]
async fn stop_mid_stream_keeps_the_partial_text() {
    let messages = sse_messages("text-answer.sse");
    let total = messages.len();
    let (base, _) = serve(Script::Messages(messages, Duration::from_millis(40)));
    let cancel = CancelToken::new();
    let stopper = cancel.clone();
    let mut seen = 0;
    let result = send_ws(&base, Duration::from_secs(5), &cancel, move |event| {
        if let SendEvent::Entry(entry) = event
            && entry.raw.data.contains("output_text.delta")
        {
            seen += 1;
            if seen == 2 {
                stopper.cancel();
            }
        }
    })
    .await;
    assert_eq!(result.error, Some(SendError::Cancelled));
    let attempt = &result.attempts[0];
    assert!(attempt.entries.len() < total);
    let (_, full) = read_all(&sse_file("text-answer.sse"), Duration::ZERO);
    assert!(!attempt.outcome.text.is_empty());
    assert!(full.text.starts_with(&attempt.outcome.text));
    assert_eq!(attempt.outcome.state, TurnState::Open);
}

#[test]
fn send_ws_command_prints_the_same_timeline() {
    let (base, seen) = serve(Script::Messages(
        sse_messages("text-answer.sse"),
        Duration::from_millis(1),
    ));
    let prompt = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/prompts/hello.json");
    let output = Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .args([
            "send",
            "--ws",
            "--no-record",
            "--json",
            "--provider",
            "compatible",
            "--base-url",
        ])
        .arg(&base)
        .arg(&prompt)
        .env_remove("OPENAI_API_KEY")
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let lines: Vec<Value> = String::from_utf8(output.stdout)
        .expect("utf-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    let http = Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .args(["stream", "--json"])
        .arg(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sse/text-answer.sse"),
        )
        .output()
        .expect("run stream");
    let expected: Vec<Value> = String::from_utf8(http.stdout)
        .expect("utf-8")
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("JSON line"))
        .map(|mut line| {
            // WebSocket messages carry no SSE event name.
            if line.get("event").is_some() {
                line["event"] = Value::Null;
            }
            line
        })
        .collect();
    assert_eq!(lines, expected);
    assert!(seen.lock().expect("seen").frame.is_some());
}
