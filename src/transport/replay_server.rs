//! The replay endpoint: serves a recording to a real client, offline and deterministic. Each
//! incoming `POST …/responses` is matched to a recorded request — by position in the session,
//! confirmed by the cache-prefix analysis (the incoming prompt must keep at least
//! [`ReplayOptions::min_similarity`] of the recorded prompt's tokens once the per-run `id`s of
//! input items are set aside — a fresh client run mints new ones; when the request at the
//! expected position does not, the best unused recorded request that does is taken) — and
//! answered with the recorded events at their recorded pace through the one core replay
//! ([`Replay`], paced by a [`Timing`]), or the recorded HTTP error. How each incoming request differs from the recorded one is reported (a
//! [`ProxyEvent::Note`]) and stored: the incoming requests form a new session linked to the
//! recording, each with its comparison under `extra.replay`. A request that matches nothing gets
//! a `response.failed` event saying so, never a hang.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use bytes::Bytes;
use hyper::body::{Frame, Incoming};
use hyper::{Request, Response, StatusCode};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::core::prefix::{PairReport, RequestMeta, Session};
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
        }
    }
}

/// A body with the `id` of every input item removed: what matching compares, since a fresh run
/// of the same client mints new item ids (the reported comparison keeps them).
fn without_item_ids(body: &Value) -> Value {
    let mut body = body.clone();
    if let Some(items) = body.get_mut("input").and_then(Value::as_array_mut) {
        for item in items {
            if let Some(item) = item.as_object_mut() {
                item.shift_remove("id");
            }
        }
    }
    body
}

/// The prefix analyses of recorded and incoming requests: `exact` as sent (what is reported),
/// `matching` without item ids (what decides the match). Recorded requests come first (index =
/// position in the recording), then each incoming one as it arrives.
struct Analyses {
    exact: Session,
    matching: Session,
    used: Vec<bool>,
    next: usize,
}

/// Which recorded request an incoming one was matched to, and how it differs.
struct Matched {
    recorded: usize,
    similarity: f64,
    report: PairReport,
}

struct Replayer {
    recording: Recording,
    /// Prefix analysis: the recorded bodies first (index = position in the recording), then
    /// each incoming body as it arrives.
    prefix: Mutex<Analyses>,
    sink: Arc<Sink>,
    options: ReplayOptions,
    incoming: std::sync::atomic::AtomicU64,
}

/// Starts the replay endpoint for recorded session `options.session` on the current runtime.
pub async fn start_replay(
    options: ReplayOptions,
) -> Result<(ServerHandle, mpsc::Receiver<ProxyEvent>), ServerError> {
    let store = Store::open(&options.db)?;
    let recording = Recording::load(&store, options.session, None)?;
    drop(store);
    if recording.requests.is_empty() {
        return Err(ServerError::Replay(format!(
            "session {} has no requests to replay",
            options.session
        )));
    }
    let mut exact = Session::default();
    let mut matching = Session::default();
    for request in &recording.requests {
        let body = request.body.clone().unwrap_or(Value::Null);
        let pushed = exact
            .push_body(&body, RequestMeta::default())
            .and_then(|_| matching.push_body(&without_item_ids(&body), RequestMeta::default()));
        pushed.map_err(|e| {
            ServerError::Replay(format!(
                "session {}, request {}: {e}",
                options.session, request.position
            ))
        })?;
    }
    let used = vec![false; recording.requests.len()];
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
        prefix: Mutex::new(Analyses {
            exact,
            matching,
            used,
            next: 0,
        }),
        sink: Arc::clone(&sink),
        options,
        incoming: std::sync::atomic::AtomicU64::new(0),
    });
    let cancel = CancelToken::new();
    let serve_cancel = cancel.clone();
    let work = async move {
        let service = move |req, _conn| {
            let replayer = Arc::clone(&replayer);
            async move { replayer.handle(req).await }
        };
        listen::serve(listener, service, serve_cancel).await;
        crate::transport::proxy::close_sink(sink).await;
    };
    Ok((ServerHandle::spawn(addr, warning, cancel, work), rx))
}

/// `kept (similarity 0.97)` or `BROKEN at input[3] /input/3/… (input_item_edited)`.
fn describe(report: &PairReport) -> String {
    match &report.break_at {
        None => "prefix kept".to_string(),
        Some(b) => {
            let mut text = format!("prefix BROKEN at {}", b.at.as_str());
            if let Some(index) = b.index {
                text.push_str(&format!("[{index}]"));
            }
            if let Some(path) = &b.path {
                text.push_str(&format!(" {path}"));
            }
            let causes: Vec<&str> = report.causes.iter().map(|c| c.as_str()).collect();
            text.push_str(&format!(" ({})", causes.join(", ")));
            text
        }
    }
}

fn similarity(report: &PairReport) -> f64 {
    if report.from_tokens == 0 {
        return if report.prefix_kept { 1.0 } else { 0.0 };
    }
    report.reusable_tokens as f64 / report.from_tokens as f64
}

impl Replayer {
    async fn handle(self: Arc<Self>, req: Request<Incoming>) -> Response<Body> {
        if crate::transport::proxy::forward::is_websocket_upgrade(&req) {
            // Codex falls back to HTTP for good on 426.
            return error_response(
                StatusCode::UPGRADE_REQUIRED,
                "websocket_unsupported",
                "the replay endpoint serves recordings over HTTP",
            );
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
        let number = self
            .incoming
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let compact = parts.uri.path().trim_end_matches('/').ends_with("/compact");
        let this = Arc::clone(&self);
        let matched = tokio::task::spawn_blocking(move || this.match_request(&value, compact))
            .await
            .unwrap_or_else(|e| Err(format!("matching failed: {e}")));
        let url = parts
            .uri
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .to_string();
        let headers = header_pairs(&parts.headers);
        let body_value: Option<Value> = serde_json::from_slice(&decoded).ok();
        let (extra, note) = match &matched {
            Ok(m) => {
                let recorded = &self.recording.requests[m.recorded];
                let note = format!(
                    "incoming #{number} -> recorded #{} (request {}): {}, similarity {:.2}",
                    recorded.position,
                    recorded.id,
                    describe(&m.report),
                    m.similarity
                );
                let extra = json!({"replay": {
                    "recording": self.recording.session_id,
                    "recorded_request": recorded.id,
                    "recorded_position": recorded.position,
                    "similarity": m.similarity,
                    "comparison": m.report,
                }});
                (extra, note)
            }
            Err(why) => (
                json!({"replay": {"recording": self.recording.session_id, "unmatched": why}}),
                format!("incoming #{number}: {why}"),
            ),
        };
        self.sink.emit(ProxyEvent::Note(note));
        let mut exchange = self.sink.begin(
            &format!("replay:{}", self.recording.session_id),
            &NewRequest {
                dialect: body_dialect(body_value.as_ref()),
                rules: None,
                provider: None,
                method: "POST".to_string(),
                url,
                body: &decoded,
                headers: &headers,
                extra: Some(extra),
                started_us: Some(now_us()),
            },
        );
        match matched {
            Ok(m) => self.serve_recorded(m.recorded, exchange),
            Err(why) => {
                let event = json!({"type": "response.failed", "response": {
                    "id": format!("resp_promptwire_unmatched_{number}"),
                    "status": "failed",
                    "error": {"code": "invalid_prompt", "message": format!("promptwire replay: {why}")},
                }});
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

    /// The recorded request an incoming body stands for, or why there is none.
    fn match_request(&self, body: &Value, compact: bool) -> Result<Matched, String> {
        let mut guard = self.prefix.lock().unwrap_or_else(PoisonError::into_inner);
        let Analyses {
            exact,
            matching,
            used,
            next,
        } = &mut *guard;
        let incoming = exact
            .push_body(body, RequestMeta::default())
            .and_then(|_| matching.push_body(&without_item_ids(body), RequestMeta::default()))
            .map_err(|e| format!("the request cannot be compared: {e}"))?;
        let kind_fits = |i: usize| self.recording.requests[i].url.ends_with("/compact") == compact;
        let score = |i: usize| -> Option<(f64, PairReport)> {
            let matched = matching.compare(i, incoming).ok()?;
            Some((similarity(&matched), exact.compare(i, incoming).ok()?))
        };
        let min = self.options.min_similarity;
        let mut best: Option<(usize, f64, PairReport)> = None;
        if *next < used.len()
            && !used[*next]
            && kind_fits(*next)
            && let Some((s, report)) = score(*next)
            && s >= min
        {
            best = Some((*next, s, report));
        }
        if best.is_none() {
            for i in (0..used.len()).filter(|&i| !used[i] && kind_fits(i)) {
                if let Some((s, report)) = score(i)
                    && best.as_ref().is_none_or(|(_, b, _)| s > *b)
                {
                    best = Some((i, s, report));
                }
            }
        }
        match best {
            Some((i, s, report)) if s >= min => {
                used[i] = true;
                *next = i + 1;
                Ok(Matched {
                    recorded: i,
                    similarity: s,
                    report,
                })
            }
            Some((i, s, _)) => Err(format!(
                "request {incoming_pos} matches no recorded request of session {} (closest: recorded #{i}, similarity {s:.2} < {min:.2})",
                self.recording.session_id,
                incoming_pos = incoming - self.recording.requests.len(),
            )),
            None => Err(format!(
                "request {} matches no recorded request of session {}: all {} were served",
                incoming - self.recording.requests.len(),
                self.recording.session_id,
                self.recording.requests.len()
            )),
        }
    }

    /// The recorded answer: its status, headers and events at the recorded pace.
    fn serve_recorded(&self, index: usize, mut exchange: Exchange) -> Response<Body> {
        let recorded: &RecordedRequest = &self.recording.requests[index];
        let status = recorded.status.unwrap_or(200);
        let mut headers: Vec<(String, String)> = recorded
            .response_headers
            .iter()
            .filter(|(name, _)| {
                hyper::header::HeaderName::from_bytes(name.as_bytes())
                    .is_ok_and(|n| !is_hop_by_hop(&n, &[]))
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
                Bytes::from(raw.data)
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
