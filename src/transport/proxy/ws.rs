//! The WebSocket relay: Codex can talk to the Responses API over a WebSocket on the same path
//! (`response.create` text frames up, one event per text frame down). The proxy opens the
//! upstream WebSocket first — so a refusal (`426 Upgrade Required`, 401, …) reaches the client as
//! the upstream's own HTTP answer — then accepts the client's upgrade and relays every frame
//! both ways as it comes. Each `response.create` is recorded as a request (method `WS`, the frame
//! as its body, `extra.transport = "websocket"`, dialect from the body) and each text frame that
//! follows as a raw event, read through the same decoder and mapper as SSE, until the turn ends.

use std::sync::Arc;

use futures_util::{SinkExt as _, StreamExt as _};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::Role;

use super::ProxyEvent;
use super::exchange::{Exchange, body_dialect, now_us};
use super::forward::{Relay, error_chain, error_response};
use super::listen::{Body, full};
use super::wire::{agent_tag, header_pairs, session_key, upstream_url};
use crate::core::redact::redact_url;
use crate::core::stream::ErrorClass;
use crate::core::stream::sse::encode_sse;
use crate::store::NewRequest;

/// Handshake headers that belong to one hop of the WebSocket, never forwarded.
const HANDSHAKE_HEADERS: [&str; 8] = [
    "host",
    "connection",
    "upgrade",
    "sec-websocket-key",
    "sec-websocket-version",
    "sec-websocket-extensions",
    "sec-websocket-accept",
    "content-length",
];

/// Largest WebSocket message accepted from either side.
const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

/// Relays a WebSocket upgrade request.
pub(super) async fn relay(relay: Arc<Relay>, req: Request<Incoming>, conn: u64) -> Response<Body> {
    let path_and_query = req
        .uri()
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_string();
    let http_url = upstream_url(&relay.upstream, &path_and_query);
    let ws_url = match http_url.split_once("://") {
        Some(("https", rest)) => format!("wss://{rest}"),
        Some((_, rest)) => format!("ws://{rest}"),
        None => http_url.clone(),
    };
    let path = req.uri().path().to_string();
    let failed = |status: Option<u16>, reason: String| {
        relay.sink.emit(ProxyEvent::UpgradeFailed {
            path: path.clone(),
            status,
            reason,
        });
    };
    let mut response = match switching_protocols(&req) {
        Ok(response) => response,
        Err(why) => {
            failed(None, format!("the client's handshake was refused: {why}"));
            return bad_handshake(why);
        }
    };
    let mut upstream_request = match ws_url.as_str().into_client_request() {
        Ok(request) => request,
        Err(e) => {
            return error_response(
                StatusCode::BAD_GATEWAY,
                "bad_upstream",
                &format!("cannot open a WebSocket to {}: {e}", redact_url(&ws_url)),
            );
        }
    };
    for (name, value) in req.headers() {
        if !HANDSHAKE_HEADERS.contains(&name.as_str()) {
            upstream_request
                .headers_mut()
                .append(name.clone(), value.clone());
        }
    }
    let config = config();
    let connected = tokio::time::timeout(
        relay.idle_timeout,
        tokio_tungstenite::connect_async_tls_with_config(
            upstream_request,
            Some(config),
            true,
            relay.ws_tls.clone(),
        ),
    )
    .await;
    let (upstream, upstream_response) = match connected {
        Ok(Ok(pair)) => pair,
        Ok(Err(tokio_tungstenite::tungstenite::Error::Http(refused))) => {
            let status = refused.status().as_u16();
            failed(
                Some(status),
                format!("the upstream refused the upgrade with HTTP {status}"),
            );
            return refusal(*refused);
        }
        Ok(Err(e)) => {
            failed(
                None,
                format!("upstream WebSocket unreachable: {}", error_chain(&e)),
            );
            return error_response(
                StatusCode::BAD_GATEWAY,
                "upstream_unreachable",
                &format!("upstream WebSocket unreachable: {}", error_chain(&e)),
            );
        }
        Err(_) => {
            failed(
                None,
                "the upstream did not accept the WebSocket in time".to_string(),
            );
            return error_response(
                StatusCode::GATEWAY_TIMEOUT,
                "upstream_timeout",
                "the upstream did not accept the WebSocket in time",
            );
        }
    };
    let handshake_headers = header_pairs(req.headers());
    let session = session_key(req.headers(), None, conn);
    if let Some(protocol) = upstream_response.headers().get("sec-websocket-protocol") {
        response
            .headers_mut()
            .insert("sec-websocket-protocol", protocol.clone());
    }
    let recorded_url = redact_url(&ws_url);
    tokio::spawn(async move {
        let Ok(upgraded) = hyper::upgrade::on(req).await else {
            return;
        };
        let client =
            WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Server, Some(config))
                .await;
        let context = Session {
            relay,
            key: session,
            url: recorded_url,
            headers: handshake_headers,
        };
        pump(client, upstream, context).await;
    });
    response
}

/// The limits of a WebSocket, either side: messages and frames up to [`MAX_MESSAGE_BYTES`].
pub(crate) fn config() -> tokio_tungstenite::tungstenite::protocol::WebSocketConfig {
    tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
        .max_message_size(Some(MAX_MESSAGE_BYTES))
        .max_frame_size(Some(MAX_MESSAGE_BYTES))
}

/// The `101 Switching Protocols` answer to a client's upgrade request (its accept key derived
/// from `Sec-WebSocket-Key`), or the `400` to send when it has no key ([`bad_handshake`]).
pub(crate) fn switching_protocols<B>(req: &Request<B>) -> Result<Response<Body>, &'static str> {
    let Some(key) = req
        .headers()
        .get("sec-websocket-key")
        .map(|k| derive_accept_key(k.as_bytes()))
    else {
        return Err("the upgrade request has no Sec-WebSocket-Key");
    };
    let mut response = Response::new(full(Vec::new()));
    *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let headers = response.headers_mut();
    headers.insert(
        hyper::header::CONNECTION,
        hyper::header::HeaderValue::from_static("upgrade"),
    );
    headers.insert(
        hyper::header::UPGRADE,
        hyper::header::HeaderValue::from_static("websocket"),
    );
    if let Ok(accept) = key.parse() {
        headers.insert("sec-websocket-accept", accept);
    }
    Ok(response)
}

/// The `400` answering an upgrade that cannot be accepted, saying `why`.
pub(crate) fn bad_handshake(why: &str) -> Response<Body> {
    error_response(StatusCode::BAD_REQUEST, "bad_websocket_handshake", why)
}

/// The upstream's refusal of the upgrade, relayed: its status (426 makes Codex fall back to HTTP)
/// and end-to-end headers, and its body when it arrived whole (the handshake reader keeps only
/// what came with the head; otherwise a JSON error naming the status stands in for it).
fn refusal(refused: hyper::Response<Option<Vec<u8>>>) -> Response<Body> {
    let (parts, body) = refused.into_parts();
    let body = body.unwrap_or_default();
    let whole = parts
        .headers
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok())
        == Some(body.len());
    let mut response = if whole {
        Response::new(full(body))
    } else {
        error_response(
            parts.status,
            "upgrade_refused",
            &format!(
                "the upstream refused the WebSocket upgrade with HTTP {}",
                parts.status.as_u16()
            ),
        )
    };
    *response.status_mut() = parts.status;
    let connection = super::wire::connection_tokens(&parts.headers);
    for (name, value) in &parts.headers {
        let skip = super::wire::is_hop_by_hop(name, &connection)
            || (!whole && name == hyper::header::CONTENT_TYPE);
        if !skip {
            response.headers_mut().append(name.clone(), value.clone());
        }
    }
    response
}

/// What every request of one WebSocket shares.
struct Session {
    relay: Arc<Relay>,
    key: String,
    url: String,
    headers: Vec<(String, String)>,
}

impl Session {
    /// A `response.create` frame: a new request.
    fn begin(&self, text: &str) -> Exchange {
        let body: Option<Value> = serde_json::from_str(text).ok();
        // The handshake's key, unless it named no client id or the frame is a subagent's (its
        // own thread: a conversation of its own even on a shared socket).
        let none = hyper::HeaderMap::new();
        let found = session_key(&none, body.as_ref(), 0);
        let subagent = agent_tag(&none, body.as_ref()).is_some_and(|t| t.is_subagent());
        let key = if subagent
            || (!found.starts_with("connection:") && self.key.starts_with("connection:"))
        {
            found
        } else {
            self.key.clone()
        };
        let mut exchange = self.relay.sink.begin(
            &key,
            &NewRequest {
                dialect: body_dialect(body.as_ref()),
                rules: None,
                provider: None,
                method: "WS".to_string(),
                url: self.url.clone(),
                body: text.as_bytes(),
                headers: &self.headers,
                extra: Some(json!({"transport": "websocket"})),
                started_us: Some(now_us()),
            },
        );
        exchange.response(101, Vec::new());
        exchange.stream_frames();
        exchange
    }
}

fn is_response_create(text: &str) -> bool {
    serde_json::from_str::<Value>(text)
        .ok()
        .and_then(|v| v.get("type").and_then(Value::as_str).map(str::to_string))
        .is_some_and(|t| t == "response.create")
}

async fn pump<C, U>(client: WebSocketStream<C>, upstream: WebSocketStream<U>, session: Session)
where
    C: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
    U: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let (mut to_client, mut from_client) = client.split();
    let (mut to_upstream, mut from_upstream) = upstream.split();
    let mut open: Option<Exchange> = None;
    let idle = session.relay.idle_timeout;
    loop {
        tokio::select! {
            message = from_client.next() => match message {
                Some(Ok(message)) => {
                    if let Message::Text(text) = &message
                        && is_response_create(text.as_str())
                    {
                        if let Some(mut previous) = open.take() {
                            previous.fail(ErrorClass::Stream, "a new response.create came before the response ended");
                            previous.finish();
                        }
                        open = Some(session.begin(text.as_str()));
                    }
                    let close = matches!(message, Message::Close(_));
                    if to_upstream.send(message).await.is_err() || close {
                        break;
                    }
                }
                Some(Err(e)) => {
                    if let Some(exchange) = open.as_mut() {
                        exchange.fail(ErrorClass::Cancelled, format!("the client's WebSocket failed: {e}"));
                    }
                    break;
                }
                None => break,
            },
            message = tokio::time::timeout(idle, from_upstream.next()) => match message {
                Ok(Some(Ok(message))) => {
                    if let (Message::Text(text), Some(exchange)) = (&message, open.as_mut()) {
                        exchange.chunk(&encode_sse(None, text.as_str()));
                        if exchange.is_done() && let Some(done) = open.take() {
                            done.finish();
                        }
                    }
                    let close = matches!(message, Message::Close(_));
                    if to_client.send(message).await.is_err() || close {
                        break;
                    }
                }
                Ok(Some(Err(e))) => {
                    if let Some(exchange) = open.as_mut() {
                        exchange.fail(ErrorClass::Stream, format!("the upstream WebSocket failed: {e}"));
                    }
                    break;
                }
                Ok(None) => break,
                Err(_) => {
                    if let Some(exchange) = open.as_mut() {
                        exchange.fail(ErrorClass::Stream, crate::core::stream::errors::IDLE_TIMEOUT);
                    }
                    break;
                }
            },
        }
    }
    if let Some(mut exchange) = open.take() {
        exchange.fail(
            ErrorClass::Stream,
            "the WebSocket closed before the response ended",
        );
        exchange.finish();
    }
    let _ = to_client.close().await;
    let _ = to_upstream.close().await;
}
