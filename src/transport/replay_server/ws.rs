//! The replay endpoint over WebSocket: the transport Codex uses for a provider with
//! `supports_websockets = true`. The upgrade on a `…/responses` path is accepted; each
//! `response.create` text frame is matched and stored exactly as an HTTP request is (the one
//! [`Replayer::admit`]), and answered with the recorded events as text frames at their recorded
//! pace, through the one core replay. A recorded HTTP error answer goes out as the `error` frame
//! the Responses WebSocket sends (`{"type":"error","status":…,"error":…}`); a recorded JSON answer
//! as its `response.completed` event. Frames other than `response.create` are ignored, as the
//! server does; a frame that is not JSON gets an `error` frame, and the socket stays open.

use std::sync::Arc;
use std::time::Instant;

use futures_util::{SinkExt as _, StreamExt as _};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::Role;

use super::{Arrival, Replayer, unmatched_event};
use crate::core::stream::replay::Replayed;
use crate::core::stream::sse::encode_sse;
use crate::transport::proxy::exchange::Exchange;
use crate::transport::proxy::forward::error_response;
use crate::transport::proxy::listen::Body;
use crate::transport::proxy::wire::{header_pairs, is_responses_path};
use crate::transport::proxy::ws::{bad_handshake, config, switching_protocols};

/// Accepts a WebSocket upgrade and serves the recording over it.
pub(super) fn accept(replayer: Arc<Replayer>, req: Request<Incoming>) -> Response<Body> {
    if !is_responses_path(req.uri().path()) {
        return error_response(
            StatusCode::NOT_FOUND,
            "not_recorded",
            &format!(
                "the replay endpoint serves WebSockets only on …/responses, not {}",
                req.uri().path()
            ),
        );
    }
    let response = match switching_protocols(&req) {
        Ok(response) => response,
        Err(why) => return bad_handshake(why),
    };
    let url = req
        .uri()
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_string();
    let headers = header_pairs(req.headers());
    tokio::spawn(async move {
        let Ok(upgraded) = hyper::upgrade::on(req).await else {
            return;
        };
        let socket =
            WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Server, Some(config()))
                .await;
        converse(replayer, socket, url, headers).await;
    });
    response
}

/// Reads the client's frames until it closes, answering each `response.create` in turn.
async fn converse<S>(
    replayer: Arc<Replayer>,
    socket: WebSocketStream<S>,
    url: String,
    headers: Vec<(String, String)>,
) where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let (mut to_client, mut from_client) = socket.split();
    while let Some(Ok(message)) = from_client.next().await {
        let text = match message {
            Message::Text(text) => text,
            Message::Close(_) => break,
            _ => continue,
        };
        let value = match serde_json::from_str::<Value>(text.as_str()) {
            Ok(value) => value,
            Err(e) => {
                let frame = error_frame(
                    400,
                    json!({
                        "type": "invalid_request_error",
                        "code": "bad_frame",
                        "message": format!("promptwire replay: the frame is not JSON: {e}"),
                    }),
                );
                if to_client.send(Message::text(frame)).await.is_err() {
                    break;
                }
                continue;
            }
        };
        if value.get("type").and_then(Value::as_str) != Some("response.create") {
            continue;
        }
        let arrival = Arrival {
            method: "WS",
            url: url.clone(),
            headers: headers.clone(),
            body: text.as_bytes(),
            compact: false,
            websocket: true,
        };
        let (matched, number, mut exchange) = replayer.admit(value, arrival).await;
        exchange.response(101, Vec::new());
        exchange.stream_frames();
        let sent = match matched {
            Ok(m) => serve(&replayer, m.recorded, exchange, &mut to_client).await,
            Err(why) => {
                let frame = unmatched_event(number, &why).to_string();
                send(&mut to_client, &mut exchange, frame).await && {
                    exchange.finish();
                    true
                }
            }
        };
        if !sent {
            break;
        }
    }
    let _ = to_client.close().await;
}

/// The `error` frame of the Responses WebSocket for an HTTP status and its error object.
fn error_frame(status: u16, error: Value) -> String {
    json!({"type": "error", "status": status, "error": error}).to_string()
}

/// Sends one frame to the client and stores it as the exchange's next event; false when the
/// client has gone.
async fn send<T>(to_client: &mut T, exchange: &mut Exchange, frame: String) -> bool
where
    T: futures_util::Sink<Message> + Unpin,
{
    exchange.chunk(&encode_sse(None, &frame));
    to_client.send(Message::text(frame)).await.is_ok()
}

/// Serves recorded request `index` as frames; false when the client went away.
async fn serve<T>(
    replayer: &Replayer,
    index: usize,
    mut exchange: Exchange,
    to_client: &mut T,
) -> bool
where
    T: futures_util::Sink<Message> + Unpin,
{
    let recorded = match replayer.answer(index) {
        Ok(recorded) => recorded,
        Err(message) => {
            let sent = send(
                to_client,
                &mut exchange,
                error_frame(500, json!({"message": message})),
            )
            .await;
            exchange.finish();
            return sent;
        }
    };
    if !recorded.is_stream() {
        let status = recorded.status.unwrap_or(500);
        let body = recorded.response_text();
        let error = serde_json::from_str::<Value>(&body)
            .ok()
            .map(|v| v.get("error").cloned().unwrap_or(v))
            .unwrap_or_else(|| json!({"message": body}));
        let sent = send(to_client, &mut exchange, error_frame(status, error)).await;
        exchange.finish();
        return sent;
    }
    let replay = recorded.replay(replayer.options.timing);
    let start = Instant::now();
    for paced in replay {
        let wait = paced.wait(start.elapsed());
        let raw = match paced.step {
            Replayed::Entry(entry) => entry.raw,
            Replayed::Unread(raw) => raw,
            Replayed::End(_) => break,
        };
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
        let frame = if raw.is_json_response() {
            // A JSON answer recorded over HTTP: the event a WebSocket ends the same turn with.
            let response = serde_json::from_str::<Value>(&raw.data).unwrap_or(Value::Null);
            json!({"type": "response.completed", "response": response}).to_string()
        } else {
            raw.data
        };
        if !send(to_client, &mut exchange, frame).await {
            exchange.fail(
                crate::core::stream::ErrorClass::Cancelled,
                "the client closed the WebSocket before the replayed response ended",
            );
            exchange.finish();
            return false;
        }
    }
    exchange.finish();
    true
}
