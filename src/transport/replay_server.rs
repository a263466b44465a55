//! The replay endpoint: serves a recording to a real client, offline and deterministic. Each
//! incoming `POST …/responses` is matched to a recorded request by content
//! ([`crate::transport::replay_match`]: the best fit by the prefix analysis once what the
//! client derives per run is set aside) and answered with the recorded events at their
//! recorded pace through the one core replay ([`Replay`], paced by a [`Timing`]), or the
//! recorded HTTP error. How each incoming request differs from the recorded one — "same as
//! recorded", or the first differing content — is reported (a [`ProxyEvent::Note`]) and stored:
//! the incoming requests form a new session linked to the recording, each with its comparison
//! under `extra.replay`. A recorded request is never used up: every identical client run gets
//! the same answers. A request that matches nothing is answered in its own shape, never with a
//! hang: an API error (HTTP 400, JSON) when it asked for no stream, a `response.failed` event
//! otherwise, naming the closest recorded request and how it differs. A WebSocket upgrade on the same path is served the same way, frame by frame
//! (`ws`): each `response.create` is matched and answered with the recorded events as text frames.
//! Only what requests are matched on is kept in memory; a recorded answer (headers, body,
//! events) is read from the database when a request matches it.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use bytes::Bytes;
use hyper::body::{Frame, Incoming};
use hyper::{Request, Response, StatusCode};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::core::stream::http_error::header;
use crate::core::stream::replay::{Replay, Replayed};
use crate::store::{NewRequest, Source, Store};
use crate::transport::CancelToken;
use crate::transport::proxy::exchange::{Exchange, Sink, body_dialect, now_us};
use crate::transport::proxy::forward::{error_response, read_body};
use crate::transport::proxy::listen::{self, Body};
use crate::transport::proxy::wire::{decode_body, header_pairs, is_hop_by_hop, is_responses_path};
use crate::transport::proxy::{
    DEFAULT_EVENT_CAPACITY, DEFAULT_MAX_BODY_BYTES, ProxyEvent, ServerError, ServerHandle,
};
use crate::transport::replay::{RecordedRequest, Recording, Timing};
use crate::transport::replay_match::{Matched, Matcher};

mod ws;

/// One incoming request as the endpoint read it (over HTTP or as a WebSocket frame).
struct Arrival<'a> {
    /// `POST`, or `WS` for a `response.create` frame.
    method: &'static str,
    /// Path and query it came to.
    url: String,
    /// Its headers (the upgrade's, for a frame).
    headers: Vec<(String, String)>,
    /// Its body as received (decoded).
    body: &'a [u8],
    /// A `…/responses/compact` request.
    compact: bool,
    /// It came over the WebSocket.
    websocket: bool,
}

/// The `response.failed` event that answers a request matching nothing.
fn unmatched_event(number: u64, why: &str) -> Value {
    json!({"type": "response.failed", "response": {
        "id": format!("resp_promptwire_unmatched_{number}"),
        "status": "failed",
        "error": {"code": "invalid_prompt", "message": format!("promptwire replay: {why}")},
    }})
}

/// The JSON error body (HTTP 400) an unmatched request that asked for no stream is answered
/// with, in the API's error shape.
fn unmatched_error(why: &str) -> Value {
    json!({"error": {
        "message": format!("promptwire replay: {why}"),
        "type": "invalid_request_error",
        "param": null,
        "code": "replay_unmatched",
    }})
}

/// Default smallest share of the recorded prompt an incoming request must keep to match.
pub const DEFAULT_MIN_SIMILARITY: f64 = 0.5;

/// How to run the replay endpoint.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// `HOST:PORT` to listen on.
    pub listen: String,
    /// The database holding the recording (the replay session is stored there too).
    pub db: std::path::PathBuf,
    /// The recorded session to serve.
    pub session: i64,
    /// Pace of the served events.
    pub timing: Timing,
    /// Smallest share (0 to 1) of a recorded prompt an incoming request must keep to match it.
    pub min_similarity: f64,
    /// Store the incoming requests as a session linked to the recording.
    pub record: bool,
    /// Largest request body accepted.
    pub max_body_bytes: usize,
    /// Capacity of the event channel.
    pub event_capacity: usize,
    /// Bounds on the client connections it holds.
    pub connections: listen::ConnectionLimits,
}

impl ReplayOptions {
    /// Defaults: original timing, recorded, similarity [`DEFAULT_MIN_SIMILARITY`].
    pub fn new(listen: &str, db: std::path::PathBuf, session: i64) -> Self {
        Self {
            listen: listen.to_string(),
            db,
            session,
            timing: Timing::Original,
            min_similarity: DEFAULT_MIN_SIMILARITY,
            record: true,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            event_capacity: DEFAULT_EVENT_CAPACITY,
            connections: listen::ConnectionLimits::default(),
        }
    }
}

struct Replayer {
    /// The recording's requests without their answers ([`RecordedRequest::forget_answer`]).
    recording: Recording,
    /// The database the answers are read from when a request matches one.
    store: Mutex<Store>,
    /// The one matcher (its prefix analyses hold the recorded bodies, then the incoming ones).
    prefix: Mutex<Matcher>,
    sink: Arc<Sink>,
    options: ReplayOptions,
    incoming: std::sync::atomic::AtomicU64,
}

/// Starts the replay endpoint for recorded session `options.session` on the current runtime.
pub async fn start_replay(
    options: ReplayOptions,
) -> Result<(ServerHandle, mpsc::Receiver<ProxyEvent>), ServerError> {
    let store = Store::open(&options.db)?;
    let mut recording = Recording::load(&store, options.session, None)?;
    if recording.requests.is_empty() {
        return Err(ServerError::Replay(format!(
            "session {} has no requests to replay",
            options.session
        )));
    }
    let matcher = Matcher::new(&recording).map_err(ServerError::Replay)?;
    // The matcher has what it needs (bodies, output items): the recorded answers are let go
    // and read back from the database when a request matches one.
    for request in &mut recording.requests {
        request.forget_answer();
    }
    let (tx, rx) = mpsc::channel(options.event_capacity.max(1));
    let sink = Arc::new(Sink::open(
        options.record.then_some(options.db.as_path()),
        Some(format!("replay of {}", recording.name)),
        Source::Replay,
        Some(options.session),
        tx,
    )?);
    let (listener, addr, warning) = listen::bind(&options.listen).await?;
    let replayer = Arc::new(Replayer {
        recording,
        store: Mutex::new(store),
        prefix: Mutex::new(matcher),
        sink: Arc::clone(&sink),
        options,
        incoming: std::sync::atomic::AtomicU64::new(0),
    });
    let connections = replayer.options.connections;
    let cancel = CancelToken::new();
    let serve_cancel = cancel.clone();
    let work = async move {
        let service = move |req, _conn| {
            let replayer = Arc::clone(&replayer);
            async move { replayer.handle(req).await }
        };
        listen::serve(listener, service, serve_cancel, connections).await;
        crate::transport::proxy::close_sink(sink).await;
    };
    Ok((ServerHandle::spawn(addr, warning, cancel, work), rx))
}

impl Replayer {
    async fn handle(self: Arc<Self>, req: Request<Incoming>) -> Response<Body> {
        if crate::transport::proxy::forward::is_websocket_upgrade(&req) {
            return ws::accept(self, req);
        }
        if req.method() != hyper::Method::POST || !is_responses_path(req.uri().path()) {
            return error_response(
                StatusCode::NOT_FOUND,
                "not_recorded",
                &format!(
                    "the replay endpoint serves only POST …/responses, not {} {}",
                    req.method(),
                    req.uri().path()
                ),
            );
        }
        let (parts, body) = req.into_parts();
        let raw = match read_body(body, self.options.max_body_bytes).await {
            Ok(raw) => raw,
            Err(response) => return response,
        };
        let encoding = parts
            .headers
            .get(hyper::header::CONTENT_ENCODING)
            .and_then(|v| v.to_str().ok());
        let decoded = match decode_body(&raw, encoding, self.options.max_body_bytes) {
            Ok(decoded) => decoded,
            Err(e) => {
                return error_response(StatusCode::BAD_REQUEST, "bad_body", &e.to_string());
            }
        };
        let Ok(value) = serde_json::from_slice::<Value>(&decoded) else {
            return error_response(
                StatusCode::BAD_REQUEST,
                "bad_body",
                "the request body is not JSON",
            );
        };
        let compact = parts.uri.path().trim_end_matches('/').ends_with("/compact");
        let url = parts
            .uri
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .to_string();
        let arrival = Arrival {
            method: "POST",
            url,
            headers: header_pairs(&parts.headers),
            body: &decoded,
            compact,
            websocket: false,
        };
        // `stream` is false when absent (the Responses API's default).
        let streaming = value.get("stream").and_then(Value::as_bool) == Some(true);
        let (matched, number, mut exchange) = self.admit(value, arrival).await;
        match matched {
            Ok(m) => self.serve_recorded(m.recorded, exchange),
            // A client that asked for no stream gets an API error it can read as one.
            Err(why) if !streaming => {
                let body = unmatched_error(&why);
                let bytes = Bytes::from(body.to_string());
                let json_headers =
                    vec![("content-type".to_string(), "application/json".to_string())];
                exchange.response(400, json_headers);
                exchange.chunk(&bytes);
                exchange.finish();
                let mut response = Response::new(listen::full(bytes));
                *response.status_mut() = StatusCode::BAD_REQUEST;
                response.headers_mut().insert(
                    hyper::header::CONTENT_TYPE,
                    hyper::header::HeaderValue::from_static("application/json"),
                );
                response
            }
            Err(why) => {
                let event = unmatched_event(number, &why);
                let bytes = crate::core::stream::sse::encode_sse(
                    Some("response.failed"),
                    &event.to_string(),
                );
                let sse_headers =
                    vec![("content-type".to_string(), "text/event-stream".to_string())];
                exchange.response(200, sse_headers);
                exchange.chunk(&bytes);
                exchange.finish();
                let mut response = Response::new(listen::full(bytes));
                response.headers_mut().insert(
                    hyper::header::CONTENT_TYPE,
                    hyper::header::HeaderValue::from_static("text/event-stream"),
                );
                response
            }
        }
    }

    /// Matches one incoming request (`value` is its body), reports how it compares with the
    /// recorded one and begins its stored exchange. Shared by HTTP and WebSocket.
    async fn admit(
        self: &Arc<Self>,
        value: Value,
        incoming: Arrival<'_>,
    ) -> (Result<Matched, String>, u64, Exchange) {
        let number = self
            .incoming
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dialect = body_dialect(Some(&value));
        let this = Arc::clone(self);
        let compact = incoming.compact;
        let matched = tokio::task::spawn_blocking(move || {
            this.prefix
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .match_request(&value, compact, this.options.min_similarity)
        })
        .await
        .unwrap_or_else(|e| Err(format!("matching failed: {e}")));
        let (mut extra, note) = match &matched {
            Ok(m) => {
                let recorded = &self.recording.requests[m.recorded];
                let note = format!(
                    "incoming #{number} -> recorded #{} (request {}): {}, similarity {:.2}",
                    recorded.position, recorded.id, m.verdict, m.similarity
                );
                let extra = json!({"replay": {
                    "recording": self.recording.session_id,
                    "recorded_request": recorded.id,
                    "recorded_position": recorded.position,
                    "similarity": m.similarity,
                    "verdict": m.verdict,
                    "comparison": m.exact,
                    "content": m.content,
                }});
                (extra, note)
            }
            Err(why) => (
                json!({"replay": {"recording": self.recording.session_id, "unmatched": why}}),
                format!("incoming #{number}: {why}"),
            ),
        };
        if incoming.websocket {
            extra["transport"] = json!("websocket");
        }
        self.sink.emit(ProxyEvent::Note(note));
        let exchange = self.sink.begin(
            &format!("replay:{}", self.recording.session_id),
            &NewRequest {
                dialect,
                rules: None,
                provider: None,
                method: incoming.method.to_string(),
                url: incoming.url,
                body: incoming.body,
                headers: &incoming.headers,
                extra: Some(extra),
                started_us: Some(now_us()),
            },
        );
        (matched, number, exchange)
    }

    /// Recorded request `index` with its answer, read from the database now.
    fn answer(&self, index: usize) -> Result<RecordedRequest, String> {
        let id = self.recording.requests[index].id;
        let store = self.store.lock().unwrap_or_else(PoisonError::into_inner);
        RecordedRequest::reload(&store, id)
            .map_err(|e| format!("the recorded answer of request {id} cannot be read: {e}"))
    }

    /// The recorded answer: its status, headers and events at the recorded pace.
    fn serve_recorded(&self, index: usize, mut exchange: Exchange) -> Response<Body> {
        let recorded = match self.answer(index) {
            Ok(recorded) => recorded,
            Err(message) => {
                exchange.fail(crate::core::stream::ErrorClass::Stream, message.clone());
                exchange.finish();
                return error_response(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "bad_recording",
                    &message,
                );
            }
        };
        let recorded = &recorded;
        let status = recorded.status.unwrap_or(200);
        // What is served is the recorded body decoded (a compressed answer is recorded plain):
        // its `Content-Encoding` is not served with it.
        let mut headers: Vec<(String, String)> = recorded
            .response_headers
            .iter()
            .filter(|(name, _)| {
                hyper::header::HeaderName::from_bytes(name.as_bytes())
                    .is_ok_and(|n| !is_hop_by_hop(&n, &[]) && n != hyper::header::CONTENT_ENCODING)
            })
            .cloned()
            .collect();
        if recorded.is_stream() && header(&headers, "content-type").is_none() {
            let kind = if recorded.is_json_answer() {
                "application/json"
            } else {
                "text/event-stream"
            };
            headers.push(("content-type".to_string(), kind.to_string()));
        }
        let mut builder = Response::builder().status(status);
        for (name, value) in &headers {
            builder = builder.header(name.as_str(), value.as_str());
        }
        exchange.response(status, headers);
        let body = if recorded.is_stream() {
            paced(recorded, self.options.timing, exchange)
        } else {
            let bytes = Bytes::from(recorded.response_body.clone().unwrap_or_default());
            exchange.chunk(&bytes);
            exchange.finish();
            listen::full(bytes)
        };
        builder.body(body).unwrap_or_else(|e| {
            error_response(
                StatusCode::INTERNAL_SERVER_ERROR,
                "bad_recording",
                &format!("the recorded response cannot be served: {e}"),
            )
        })
    }
}

/// The recorded events as an SSE body (a JSON answer as its JSON body) through the one replay, each sent when it is due. Every
/// stored event is served as recorded, those after the completion too (the client's reader sets
/// them aside, as it did when they were recorded); the body ends after the last one.
fn paced(recorded: &RecordedRequest, timing: Timing, exchange: Exchange) -> Body {
    let replay = Replay::new(
        recorded.events.clone(),
        &recorded.response_headers,
        recorded.duration(),
        timing,
    );
    let start = Instant::now();
    let stream = futures_util::stream::unfold(
        (replay, Some(exchange)),
        move |(mut replay, mut exchange)| async move {
            let next = replay.next().map(|p| (p.wait(start.elapsed()), p.step));
            let (wait, raw) = match next {
                Some((wait, Replayed::Entry(entry))) => (wait, entry.raw),
                Some((wait, Replayed::Unread(raw))) => (wait, raw),
                Some((_, Replayed::End(_))) | None => {
                    if let Some(exchange) = exchange.take() {
                        exchange.finish();
                    }
                    return None;
                }
            };
            if !wait.is_zero() {
                tokio::time::sleep(wait).await;
            }
            // A JSON answer goes out as the body it was; events as SSE.
            let bytes = if raw.is_json_response() {
                Bytes::from(raw.data_bytes().to_vec())
            } else {
                Bytes::from(raw.to_sse())
            };
            if let Some(exchange) = exchange.as_mut() {
                exchange.chunk(&bytes);
            }
            Some((
                Ok::<_, std::io::Error>(Frame::data(bytes)),
                (replay, exchange),
            ))
        },
    );
    http_body_util::BodyExt::boxed_unsync(http_body_util::StreamBody::new(stream))
}
