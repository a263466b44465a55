//! Live WebSocket send — the other transport Codex uses: open a WebSocket to the provider's
//! Responses endpoint (`https://…/responses` → `wss://…/responses`; tokio-tungstenite over
//! rustls), send the compiled `response.create` frame ([`CompiledRequest::ws_frame`]) as one text
//! message, and read the event messages that come back.
//!
//! Every text message is one event. It is handed to the same core [`StreamReader`] as the HTTP
//! path's bytes (framed as an SSE `data:` event, one `data:` line per line of the message, so the
//! decoder gives back the message text; JSON messages never hold a raw line end inside a value), so the timeline entries, the termination rules and the
//! [`TurnOutcome`](crate::core::stream::TurnOutcome) have the same shape as over HTTP — only the
//! SSE event name is absent, since WebSocket messages carry none.
//!
//! Limits and timeouts are the HTTP path's [`SendOptions`]: the TCP connection within
//! `connect_timeout`, the upgrade handshake and then each message within `idle_timeout`; a
//! refused upgrade (non-101) is classified like an HTTP error from its status, headers and body
//! (at most `max_error_body_bytes`); messages and frames are bounded by
//! [`WsSender::max_message_bytes`]; the event and response size limits
//! ([`SendOptions::limits`]) and the overall [`SendOptions::deadline`] are the HTTP path's too.
//! [`CancelToken`] stops the send and keeps what arrived. A
//! WebSocket send is a single attempt (the WebSocket carries one turn; retrying is the caller's
//! choice).

use std::time::{Duration, Instant};

use futures_util::SinkExt as _;
use reqwest::header::HeaderMap;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

use super::proxy::wire::header_pairs;
use super::read_loop::{Callback, Incoming, ReadBounds, Sink, new_attempt, read_turn};
use super::send::{
    Attempt, CancelToken, PrepareError, SendError, SendEvent, SendOptions, SendResult,
};
use crate::core::compile::CompiledRequest;
use crate::core::stream::StreamReader;
use crate::core::stream::http_error::{classify_http_error, with_date};
use crate::core::stream::limits::deadline_passed;

/// Default bound on one WebSocket message (and frame).
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// Request headers that describe an HTTP body and have no place on an upgrade request.
const BODY_HEADERS: [&str; 4] = [
    "content-type",
    "content-length",
    "content-encoding",
    "accept",
];

/// Sends compiled requests over a WebSocket.
#[derive(Debug, Clone)]
pub struct WsSender {
    url: String,
    host: String,
    port: u16,
    options: SendOptions,
    /// TLS trusting the extra roots of [`SendOptions::ca`] (`None`: tokio-tungstenite's
    /// default, the web's roots).
    tls: Option<std::sync::Arc<rustls::ClientConfig>>,
    /// Largest accepted message (and frame), in bytes.
    pub max_message_bytes: usize,
}

/// The WebSocket URL of an HTTP Responses URL (`http` → `ws`, `https` → `wss`; `ws`/`wss` kept).
pub fn ws_url(http_url: &str) -> Result<reqwest::Url, PrepareError> {
    let bad = |reason: String| PrepareError::BadUrl {
        url: http_url.to_string(),
        reason,
    };
    let mut url = reqwest::Url::parse(http_url).map_err(|e| bad(e.to_string()))?;
    let scheme = match url.scheme() {
        "http" | "ws" => "ws",
        "https" | "wss" => "wss",
        other => return Err(bad(format!("unsupported scheme `{other}`"))),
    };
    url.set_scheme(scheme)
        .map_err(|()| bad(format!("cannot use scheme `{scheme}`")))?;
    Ok(url)
}

impl WsSender {
    /// A sender for the Responses endpoint `url` (given as HTTP(S) or WS(S)).
    pub fn new(url: &str, options: SendOptions) -> Result<Self, PrepareError> {
        let parsed = ws_url(url)?;
        let host = parsed
            .host_str()
            .ok_or_else(|| PrepareError::BadUrl {
                url: url.to_string(),
                reason: "no host".to_string(),
            })?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        let port = parsed.port_or_known_default().unwrap_or(443);
        let tls = options
            .ca
            .as_ref()
            .map(|ca| ca.rustls_client_config())
            .transpose()
            .map_err(PrepareError::Client)?;
        Ok(Self {
            url: parsed.to_string(),
            host,
            port,
            tls,
            options,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
        })
    }

    /// The WebSocket URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Sends `request`'s `response.create` frame with `headers` (from
    /// [`resolve_headers`](super::resolve_headers)) and reports progress to `on_event`.
    pub async fn send<F>(
        &self,
        request: &CompiledRequest,
        headers: &HeaderMap,
        cancel: &CancelToken,
        on_event: F,
    ) -> SendResult
    where
        F: FnMut(SendEvent<'_>) + Send,
    {
        self.send_to(request, headers, cancel, &mut Callback(on_event))
            .await
    }

    /// [`WsSender::send`], reporting to `sink`.
    pub(crate) async fn send_to<K: Sink>(
        &self,
        request: &CompiledRequest,
        headers: &HeaderMap,
        cancel: &CancelToken,
        sink: &mut K,
    ) -> SendResult {
        sink.event(SendEvent::AttemptStarted { attempt: 1 });
        let attempt = self.attempt(request, headers, cancel, sink).await;
        let error = attempt.error.clone();
        SendResult {
            attempts: vec![attempt],
            error,
        }
    }

    async fn attempt<K: Sink>(
        &self,
        request: &CompiledRequest,
        headers: &HeaderMap,
        cancel: &CancelToken,
        sink: &mut K,
    ) -> Attempt {
        let start = Instant::now();
        let deadline = self.options.deadline_from_now();
        let mut attempt = new_attempt(1);
        let connected = tokio::select! {
            biased;
            () = cancel.cancelled() => Err(SendError::Cancelled),
            () = tokio::time::sleep_until(deadline) => {
                Err(SendError::Stream(deadline_passed(self.options.deadline)))
            }
            connected = self.connect(headers, &mut attempt) => connected,
        };
        let mut socket = match connected {
            Ok(socket) => socket,
            Err(error) => {
                attempt.error = Some(error);
                attempt.elapsed = start.elapsed();
                return attempt;
            }
        };
        sink.event(SendEvent::Response {
            status: attempt.status.unwrap_or(101),
            headers: &attempt.response_headers,
            at: start.elapsed(),
        });
        let frame = serde_json::Value::Object(request.ws_frame()).to_string();
        if let Err(e) = socket.send(Message::text(frame)).await {
            attempt.error = Some(SendError::Connect {
                message: format!("sending response.create: {e}"),
            });
            attempt.elapsed = start.elapsed();
            return attempt;
        }

        let reader = StreamReader::with_limits(self.options.limits);
        read_turn(
            &mut socket,
            reader,
            ReadBounds::of(&self.options, deadline),
            cancel,
            start,
            &mut attempt,
            sink,
        )
        .await;
        // The turn is over (or stopped): close politely, without waiting long for the peer.
        let _ = tokio::time::timeout(Duration::from_millis(200), socket.close(None)).await;
        attempt.elapsed = start.elapsed();
        attempt
    }

    /// TCP within the connect timeout, then the upgrade within the idle timeout.
    async fn connect(
        &self,
        headers: &HeaderMap,
        attempt: &mut Attempt,
    ) -> Result<
        tokio_tungstenite::WebSocketStream<
            tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
        >,
        SendError,
    > {
        let mut upgrade =
            self.url
                .as_str()
                .into_client_request()
                .map_err(|e| SendError::Connect {
                    message: e.to_string(),
                })?;
        for (name, value) in headers {
            if !BODY_HEADERS.contains(&name.as_str()) {
                upgrade.headers_mut().append(name.clone(), value.clone());
            }
        }
        let connect = tokio::net::TcpStream::connect((self.host.as_str(), self.port));
        let tcp = match tokio::time::timeout(self.options.connect_timeout, connect).await {
            Err(_) => {
                return Err(SendError::Timeout {
                    message: format!(
                        "no connection within {:.3} s",
                        self.options.connect_timeout.as_secs_f64()
                    ),
                });
            }
            Ok(Err(e)) => {
                return Err(SendError::Connect {
                    message: format!("{}:{}: {e}", self.host, self.port),
                });
            }
            Ok(Ok(tcp)) => tcp,
        };
        let _ = tcp.set_nodelay(true);
        let config = WebSocketConfig::default()
            .max_message_size(Some(self.max_message_bytes))
            .max_frame_size(Some(self.max_message_bytes));
        let connector = self.tls.clone().map(tokio_tungstenite::Connector::Rustls);
        let handshake =
            tokio_tungstenite::client_async_tls_with_config(upgrade, tcp, Some(config), connector);
        let idle = self.options.idle_timeout;
        match tokio::time::timeout(idle, handshake).await {
            Err(_) => Err(SendError::Timeout {
                message: format!("no WebSocket upgrade within {:.3} s", idle.as_secs_f64()),
            }),
            Ok(Ok((socket, response))) => {
                attempt.status = Some(response.status().as_u16());
                attempt.response_headers = header_pairs(response.headers());
                Ok(socket)
            }
            Ok(Err(WsError::Http(response))) => {
                let status = response.status().as_u16();
                attempt.status = Some(status);
                attempt.response_headers = header_pairs(response.headers());
                let body = response.body().as_deref().unwrap_or_default();
                let body = &body[..body.len().min(self.options.max_error_body_bytes)];
                Err(SendError::Http(classify_http_error(
                    status,
                    &with_date(&attempt.response_headers, &super::send::now_http_date()),
                    &String::from_utf8_lossy(body),
                    &self.url,
                )))
            }
            Ok(Err(e)) => Err(SendError::Connect {
                message: format!("WebSocket upgrade failed: {e}"),
            }),
        }
    }
}

/// A WebSocket message as the stream reader takes it: text (or binary, decoded lossily) as one
/// SSE event, a close as the end, pings and pongs as nothing.
impl From<Result<Message, WsError>> for Incoming {
    fn from(read: Result<Message, WsError>) -> Self {
        match read {
            Ok(Message::Close(_)) => Incoming::End,
            Ok(Message::Text(text)) => Incoming::Data(sse_frame(&text).into()),
            Ok(Message::Binary(bytes)) => {
                Incoming::Data(sse_frame(&String::from_utf8_lossy(&bytes)).into())
            }
            Ok(_) => Incoming::Nothing,
            Err(e) => Incoming::Failed(format!("websocket: {e}")),
        }
    }
}

/// One WebSocket message as an SSE event whose data is exactly the message text.
fn sse_frame(text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + 16);
    // Line ends inside the message become separate `data:` lines, which the decoder joins with
    // `\n` (a lone `\r` or a `\r\n` is a line end to SSE as well).
    for line in text.split('\n') {
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(line.trim_end_matches('\r').as_bytes());
        out.push(b'\n');
    }
    out.push(b'\n');
    out
}
