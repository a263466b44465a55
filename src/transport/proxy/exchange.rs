//! Recording what passes through the proxy (or is served by the replay endpoint) into the store,
//! live: one [`Sink`] per server groups requests into sessions and holds the database's one
//! [`Writer`]; one [`Exchange`] per request decodes its SSE bytes as they pass (the same reader a
//! client uses) — a compressed answer decoded first ([`crate::transport::inflate`]), never read as if it
//! were plain — hands each raw event to the writer and each mapped entry to the app's event
//! channel (the app decodes nothing again), and hands over the response and outcome at the end —
//! also when the exchange is dropped half-way (server stopped). Nothing here waits for SQLite:
//! what is stored, and what could not be, comes back from the writer as [`ProxyEvent::Stored`],
//! [`ProxyEvent::Recorded`] and [`ProxyEvent::NotRecorded`].

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::mpsc;

use super::ProxyEvent;
use crate::core::anatomy::AgentTag;
use crate::core::session_label::{KEY_SEPARATOR, session_label};
use crate::core::stream::events::header_events;
use crate::core::stream::http_error::{classify_http_error, header};
use crate::core::stream::{ErrorClass, StreamError, StreamLimits, StreamReader, TimelineEntry};
use crate::store::{
    NewRequest, NewSession, Notify, OutcomeRecord, OwnedRequest, RecordedState, Report,
    RequestWriter, ResponseMeta, SessionKey, SessionRef, Source, StoreResult, Writer,
    WriterOptions, WriterStatus,
};
use crate::transport::inflate::{InflateError, Inflater};

/// Largest non-SSE response body kept (an error body, a compaction answer).
const MAX_KEPT_BODY: usize = 1024 * 1024;

/// Unix time in microseconds.
pub(crate) fn now_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
}

fn micros(d: Duration) -> i64 {
    i64::try_from(d.as_micros()).unwrap_or(i64::MAX)
}

/// The dialect a request body is written in: `lite` when `input[0]` is `additional_tools`.
pub(crate) fn body_dialect(body: Option<&Value>) -> Option<String> {
    let body = body.filter(|b| b.is_object())?;
    let lite = body
        .get("input")
        .and_then(Value::as_array)
        .and_then(|items| items.first())
        .and_then(|item| item.get("type"))
        .and_then(Value::as_str)
        == Some("additional_tools");
    Some(if lite { "lite" } else { "standard" }.to_string())
}

/// Where recordings go and where the app hears about them.
pub(crate) struct Sink {
    writer: Option<Writer>,
    sessions: Mutex<HashMap<String, SessionKey>>,
    name: Option<String>,
    source: Source,
    /// The recorded session a replay is measured against (stored as the link).
    replay_of: Option<i64>,
    events: mpsc::Sender<ProxyEvent>,
    next_exchange: AtomicU64,
    dropped: AtomicU64,
    /// Size limits on each recorded answer (the client still receives every byte).
    limits: StreamLimits,
}

impl Sink {
    /// A sink recording into `db` (none: nothing is stored), reporting to `events`. Opens the
    /// database's writer: call it off the async workers.
    pub(crate) fn open(
        db: Option<&std::path::Path>,
        name: Option<String>,
        source: Source,
        replay_of: Option<i64>,
        events: mpsc::Sender<ProxyEvent>,
    ) -> StoreResult<Self> {
        Self::open_with(
            db,
            name,
            source,
            replay_of,
            events,
            WriterOptions::default(),
        )
    }

    /// [`Sink::open`] with `options` for the writer, when it starts one.
    pub(crate) fn open_with(
        db: Option<&std::path::Path>,
        name: Option<String>,
        source: Source,
        replay_of: Option<i64>,
        events: mpsc::Sender<ProxyEvent>,
        options: WriterOptions,
    ) -> StoreResult<Self> {
        let writer = db.map(|db| Writer::open_with(db, options)).transpose()?;
        Ok(Self {
            writer,
            sessions: Mutex::new(HashMap::new()),
            name,
            source,
            replay_of,
            events,
            next_exchange: AtomicU64::new(1),
            dropped: AtomicU64::new(0),
            limits: StreamLimits::default(),
        })
    }

    /// The sink with these size limits on each recorded answer: an event or answer past them
    /// ends its recording as `limit_exceeded`, with what arrived before kept.
    pub(crate) fn with_limits(mut self, limits: StreamLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Reports to the app without ever waiting: a full channel drops the event (the store has
    /// everything) and counts it.
    pub(crate) fn emit(&self, event: ProxyEvent) {
        emit(&self.events, &self.dropped, event);
    }

    /// What the database's writer is doing (`None`: nothing is recorded).
    pub(crate) fn writer_status(&self) -> Option<WriterStatus> {
        self.writer.as_ref().map(Writer::status)
    }

    /// Events the app's channel had no room for.
    pub(crate) fn dropped_events(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// The session for grouping key `key`, asked of the writer on first use. Unless the user
    /// named it, a proxy session is named by its first request (`request`, its body `body`):
    /// [`session_label`] followed by ` · ` and the key, which the list shows on hover only.
    fn session_for(
        &self,
        writer: &Writer,
        key: &str,
        request: &NewRequest<'_>,
        body: Option<&Value>,
    ) -> Option<SessionKey> {
        let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(id) = sessions.get(key) {
            return Some(*id);
        }
        let ordinal = sessions.len() + 1;
        let created_us = now_us();
        let name = match (&self.name, ordinal, self.source) {
            (Some(name), 1, _) => name.clone(),
            (Some(name), n, _) => format!("{name} #{n}"),
            (None, _, Source::Proxy) => format!(
                "{}{KEY_SEPARATOR}{key}",
                session_label(request.headers, body, created_us, self.source.as_str())
            ),
            (None, _, _) => format!("{} {key}", self.source.as_str()),
        };
        let model = body
            .and_then(|b| b.get("model"))
            .and_then(Value::as_str)
            .map(str::to_string);
        let headers = request
            .headers
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()));
        let agent = AgentTag::from_request(headers, body);
        let session = writer.create_session(
            NewSession {
                name,
                source: self.source,
                provider: None,
                model,
                created_us,
            },
            self.replay_of,
            agent,
            None,
        )?;
        sessions.insert(key.to_string(), session);
        Some(session)
    }

    /// Starts recording one request: its session (by `key`), the request row, and an exchange
    /// that records what comes back. Nothing here waits for the database: the ids reach the app
    /// as [`ProxyEvent::Stored`] once the writer has stored the row.
    pub(crate) fn begin(self: &Arc<Self>, key: &str, request: &NewRequest<'_>) -> Exchange {
        let start = Instant::now();
        let exchange = self.next_exchange.fetch_add(1, Ordering::Relaxed);
        // Reported before the writer is asked: its `Stored` report comes from its own thread
        // and must not overtake the request it is about.
        self.emit(ProxyEvent::RequestStarted {
            exchange,
            method: request.method.clone(),
            url: request.url.clone(),
            dialect: request.dialect.clone(),
        });
        let writer = self.writer.as_ref().and_then(|writer| {
            let body = serde_json::from_slice::<Value>(request.body).ok();
            let session = self.session_for(writer, key, request, body.as_ref())?;
            let events = self.events.clone();
            let dropped = Arc::new(AtomicU64::new(0));
            let notify: Notify = Arc::new(move |report| {
                if let Some(event) = stored_event(exchange, report) {
                    emit(&events, &dropped, event);
                }
            });
            Some(writer.begin_request(
                SessionRef::Key(session),
                OwnedRequest::from_new(request),
                Some(notify),
            ))
        });
        Exchange {
            sink: Arc::clone(self),
            exchange,
            writer,
            url: request.url.clone(),
            start,
            reader: StreamReader::with_limits(self.limits),
            sse: false,
            json: false,
            status: None,
            response_headers: Vec::new(),
            http_version: None,
            wait: None,
            body: Vec::new(),
            failure: None,
            finished: false,
            inflater: None,
            content_encoding: None,
            undecoded: None,
            wire_bytes: 0,
        }
    }
}

/// Sends `event` on `events` without waiting, counting it in `dropped` when there is no room.
fn emit(events: &mpsc::Sender<ProxyEvent>, dropped: &AtomicU64, event: ProxyEvent) {
    if let Err(mpsc::error::TrySendError::Full(_)) = events.try_send(event) {
        dropped.fetch_add(1, Ordering::Relaxed);
    }
}

/// The app's event for a writer's report on exchange `exchange`.
fn stored_event(exchange: u64, report: Report) -> Option<ProxyEvent> {
    Some(match report {
        Report::SessionStored { .. } => return None,
        Report::RequestStored {
            session_id,
            request_id,
            ..
        } => ProxyEvent::Stored {
            exchange,
            session_id,
            request_id,
        },
        Report::OutcomeStored {
            request_id,
            outcome,
            stored_events,
            status,
            ..
        } => ProxyEvent::Recorded {
            exchange,
            request_id,
            outcome,
            stored_events,
            status,
        },
        Report::RequestLost { reason, .. } => ProxyEvent::NotRecorded { exchange, reason },
    })
}

/// One recorded request on its way back to the client.
pub(crate) struct Exchange {
    sink: Arc<Sink>,
    exchange: u64,
    /// Where its events and outcome go (`None`: not recorded).
    writer: Option<RequestWriter>,
    url: String,
    start: Instant,
    reader: StreamReader,
    sse: bool,
    /// A 2xx JSON answer (a non-streaming response or a compaction), read whole at the end.
    json: bool,
    status: Option<u16>,
    response_headers: Vec<(String, String)>,
    /// The HTTP version the upstream answered over, when it was HTTP.
    http_version: Option<String>,
    wait: Option<Duration>,
    body: Vec<u8>,
    failure: Option<(ErrorClass, String)>,
    finished: bool,
    /// The decoder of a compressed answer (`Content-Encoding`): what is read and stored is the
    /// plain body, what the client gets is the upstream's bytes.
    inflater: Option<Inflater>,
    /// The answer's `Content-Encoding`, when it had one.
    content_encoding: Option<String>,
    /// Why the answer's body could not be decoded (nothing more of it is read).
    undecoded: Option<InflateError>,
    /// Body bytes as they came over the wire.
    wire_bytes: u64,
}

impl Exchange {
    /// The response head arrived: an SSE body (2xx `text/event-stream`) is decoded as it passes.
    pub(crate) fn response(&mut self, status: u16, headers: Vec<(String, String)>) {
        let at = self.start.elapsed();
        self.status = Some(status);
        self.wait = Some(at);
        let ok = (200..300).contains(&status);
        let content_type = header(&headers, "content-type").unwrap_or("");
        self.sse = ok && content_type.contains("text/event-stream");
        self.json = ok && !self.sse && content_type.contains("application/json");
        if self.sse || self.json {
            let events = header_events(&headers);
            self.reader.apply_header_events(&events, at);
        }
        // A compressed answer is decoded up to what the reader would read of a plain one (an
        // error body: up to what is kept of it).
        let cap = if self.sse || self.json {
            self.sink.limits.max_response_bytes
        } else {
            MAX_KEPT_BODY as u64
        };
        let encoding = header(&headers, "content-encoding");
        self.content_encoding = encoding
            .map(str::trim)
            .filter(|e| !e.is_empty())
            .map(str::to_string);
        match Inflater::for_encoding(encoding, cap) {
            Ok(inflater) => self.inflater = inflater,
            Err(e) => self.undecoded = Some(e),
        }
        self.response_headers = headers;
    }

    /// The upstream answered over `version`: stored with the response (the HAR's
    /// `httpVersion`) when it is not HTTP/1.1, which a stored request without one went over.
    pub(crate) fn http_version(&mut self, version: hyper::Version) {
        self.http_version = crate::transport::http::stored_http_version(version);
    }

    /// Reads what follows as a stream of events whatever the headers said (WebSocket frames,
    /// each handed over as one SSE event).
    pub(crate) fn stream_frames(&mut self) {
        self.sse = true;
    }

    /// The response's `Content-Length`, when it gave one.
    pub(crate) fn expected_length(&self) -> Option<u64> {
        header(&self.response_headers, "content-length").and_then(|v| v.trim().parse().ok())
    }

    /// True once the turn completed or failed.
    pub(crate) fn is_done(&self) -> bool {
        self.reader.is_done()
    }

    /// One chunk of the response body, as it passed to the client now.
    pub(crate) fn chunk(&mut self, bytes: &[u8]) {
        self.chunk_at(bytes, self.start.elapsed());
    }

    /// One chunk of the response body, that passed to the client `at` (since the request).
    pub(crate) fn chunk_at(&mut self, bytes: &[u8], at: Duration) {
        self.wire_bytes += bytes.len() as u64;
        if self.undecoded.is_some() {
            return;
        }
        let Some(mut inflater) = self.inflater.take() else {
            self.plain_chunk(bytes, at);
            return;
        };
        if self.sse && self.reader.is_done() {
            // The turn ended: nothing after it is read (the decoder is dropped).
            return;
        }
        match inflater.push(bytes, &mut |plain| self.plain_chunk(plain, at)) {
            Ok(()) => self.inflater = Some(inflater),
            Err(e) => self.undecodable(e),
        }
    }

    /// The body could not be decoded (`e`): nothing more of it is read, and a partly decoded
    /// body is not kept — except an error body past what is kept of it, which is cut there as a
    /// plain one is.
    fn undecodable(&mut self, e: InflateError) {
        if !self.sse && !self.json && matches!(e, InflateError::TooLarge { .. }) {
            return;
        }
        if self.sse && self.reader.is_done() {
            // The turn had ended (a bad trailer after `response.completed`): it stands.
            return;
        }
        self.body = Vec::new();
        self.undecoded = Some(e);
    }

    /// The body ended: the decoder hands over what it still holds (not after a failure: a cut
    /// stream is recorded as cut, not as a body that does not decode).
    fn finish_decoding(&mut self, at: Duration) {
        let Some(mut inflater) = self.inflater.take() else {
            return;
        };
        if self.failure.is_some() || self.wire_bytes == 0 {
            return;
        }
        if let Err(e) = inflater.finish(&mut |plain| self.plain_chunk(plain, at)) {
            self.undecodable(e);
        }
    }

    /// One chunk of the plain (decoded) body.
    fn plain_chunk(&mut self, bytes: &[u8], at: Duration) {
        if self.json {
            // Held whole (within the response limit) and read at the end.
            let limit = usize::try_from(self.sink.limits.max_response_bytes).unwrap_or(usize::MAX);
            let room = limit.saturating_sub(self.body.len());
            if bytes.len() > room && self.failure.is_none() {
                self.reader.fail(self.sink.limits.response_too_large(), at);
            }
            self.body.extend_from_slice(&bytes[..bytes.len().min(room)]);
            return;
        }
        if !self.sse {
            let room = MAX_KEPT_BODY.saturating_sub(self.body.len());
            self.body.extend_from_slice(&bytes[..bytes.len().min(room)]);
            return;
        }
        if self.failure.is_some() {
            return;
        }
        let entries = self.reader.push(bytes, at);
        for entry in entries {
            self.record_entry(entry);
        }
    }

    /// Hands one decoded event to the writer and its entry to the app.
    fn record_entry(&mut self, entry: TimelineEntry) {
        if let Some(writer) = self.writer.as_mut() {
            writer.event(entry.raw.clone());
        }
        // The app's channel may be full (it fell behind): then the event is not even sent.
        if self.sink.events.capacity() == 0 {
            self.sink.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        self.sink.emit(ProxyEvent::Event {
            exchange: self.exchange,
            entry: Box::new(entry),
        });
    }

    /// The exchange failed with `class` (`stream`, `cancelled`, …): the connection could not be
    /// made, was reset, or the client went away.
    pub(crate) fn fail(&mut self, class: ErrorClass, message: impl Into<String>) {
        let message = message.into();
        // An interruption (the client went away) is not a stream failure: the outcome records
        // it under its own class unless the stream had already ended or failed by itself.
        if (self.sse || self.json) && !class.is_interruption() {
            self.reader
                .fail(StreamError::stream(message.clone()), self.start.elapsed());
        }
        if self.failure.is_none() {
            self.failure = Some((class, message));
        }
    }

    /// The outcome as recorded.
    fn outcome(&mut self, at: Duration) -> OutcomeRecord {
        if let Some(problem) = &self.undecoded
            && (self.sse || self.json)
        {
            // Never read as if it were plain: what was decoded before stays, and the outcome
            // says why the rest could not be read.
            let mut outcome = OutcomeRecord::from_turn(self.reader.outcome());
            outcome.state = RecordedState::Failed;
            outcome.error_class = Some(match problem {
                InflateError::TooLarge { .. } => ErrorClass::LimitExceeded,
                _ => ErrorClass::ContentEncoding,
            });
            outcome.error_message = Some(format!(
                "{problem} ({} bytes relayed to the client unchanged)",
                self.wire_bytes
            ));
            outcome.total_us = outcome.total_us.or(Some(micros(at)));
            return outcome;
        }
        if self.json && self.failure.is_none() {
            let body = std::mem::take(&mut self.body);
            if let Some(entry) = self.reader.push_json(&body, at) {
                self.record_entry(entry);
            }
        }
        if self.sse || self.json {
            if self.failure.is_none() {
                for entry in self.reader.finish(at) {
                    self.record_entry(entry);
                }
            }
            let mut outcome = OutcomeRecord::from_turn(self.reader.outcome());
            if let Some((class, message)) = &self.failure
                && outcome.state != RecordedState::Failed
            {
                outcome.state = RecordedState::Failed;
                outcome.error_class = Some(class.clone());
                outcome.error_message = Some(message.clone());
            }
            return outcome;
        }
        let total_us = Some(micros(at));
        if let Some((class, message)) = &self.failure {
            return OutcomeRecord {
                state: RecordedState::Failed,
                error_class: Some(class.clone()),
                error_message: Some(message.clone()),
                total_us,
                ..OutcomeRecord::default()
            };
        }
        match self.status {
            Some(status) if !(200..300).contains(&status) => {
                let text = String::from_utf8_lossy(&self.body);
                let error = classify_http_error(status, &self.response_headers, &text, &self.url);
                OutcomeRecord {
                    state: RecordedState::Failed,
                    error_class: Some(error.class()),
                    error_message: Some(error.to_string()),
                    total_us,
                    ..OutcomeRecord::default()
                }
            }
            _ => OutcomeRecord {
                state: RecordedState::Completed,
                total_us,
                ..OutcomeRecord::default()
            },
        }
    }

    /// Writes the response and the outcome, and reports the outcome.
    pub(crate) fn finish(mut self) {
        self.close();
    }

    fn close(&mut self) {
        if self.finished {
            return;
        }
        self.finished = true;
        let at = self.start.elapsed();
        self.finish_decoding(at);
        let outcome = self.outcome(at);
        if let Some(mut writer) = self.writer.take() {
            writer.response(ResponseMeta {
                status: self.status,
                headers: std::mem::take(&mut self.response_headers),
                body: (!self.sse && !self.body.is_empty()).then(|| self.body.clone()),
                wait_us: self.wait.map(micros),
                total_us: Some(micros(at)),
                http_version: self.http_version.take(),
                extra: self.encoding_note(),
            });
            writer.outcome(outcome.clone());
        }
        let turn = (self.sse || self.json).then(|| Box::new(self.reader.outcome().clone()));
        self.sink.emit(ProxyEvent::Outcome {
            exchange: self.exchange,
            status: self.status,
            outcome: Box::new(outcome),
            turn,
        });
    }
}

impl Exchange {
    /// What the request's extra fields keep of a compressed answer: its encoding, its size on
    /// the wire, and why it was not decoded (when it was not).
    fn encoding_note(&self) -> Option<Value> {
        let encoding = self.content_encoding.as_ref()?;
        let mut note = serde_json::json!({
            "response_content_encoding": encoding,
            "response_wire_bytes": self.wire_bytes,
        });
        if let Some(problem) = &self.undecoded {
            note["response_body_note"] = Value::String(match problem {
                InflateError::TooLarge { .. } => problem.to_string(),
                _ => format!("{problem}: the body is not stored"),
            });
        }
        Some(note)
    }
}

impl Drop for Exchange {
    fn drop(&mut self) {
        if !self.finished {
            self.fail(
                ErrorClass::Cancelled,
                "the proxy stopped before the response ended",
            );
            self.close();
        }
    }
}
