//! Recording what passes through the proxy (or is served by the replay endpoint) into the store,
//! live: one [`Sink`] per server groups requests into sessions and owns the store connection and
//! the batch [`Recorder`]; one [`Exchange`] per request decodes its SSE bytes as they pass (the
//! same reader a client uses), hands each raw event to the recorder and to the app's event
//! channel, and writes the response and outcome at the end — also when the exchange is dropped
//! half-way (server stopped).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::mpsc;

use super::ProxyEvent;
use crate::core::stream::events::header_events;
use crate::core::stream::http_error::classify_http_error;
use crate::core::stream::{ErrorClass, RawEvent, StreamError, StreamLimits, StreamReader};
use crate::store::{
    NewRequest, NewSession, OutcomeRecord, RecordedState, Recorder, RecorderOptions, ResponseMeta,
    Source, Store, StoreResult,
};

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
    store: Option<Mutex<Store>>,
    recorder: Option<Recorder>,
    sessions: Mutex<HashMap<String, i64>>,
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
    /// A sink recording into `db` (none: nothing is stored), reporting to `events`.
    pub(crate) fn open(
        db: Option<&std::path::Path>,
        name: Option<String>,
        source: Source,
        replay_of: Option<i64>,
        events: mpsc::Sender<ProxyEvent>,
    ) -> StoreResult<Self> {
        let (store, recorder) = match db {
            Some(path) => {
                let store = Store::open(path)?;
                let recorder = Recorder::start(path, RecorderOptions::default())?;
                (Some(Mutex::new(store)), Some(recorder))
            }
            None => (None, None),
        };
        Ok(Self {
            store,
            recorder,
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
        if let Err(mpsc::error::TrySendError::Full(_)) = self.events.try_send(event) {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Events the app's channel had no room for.
    pub(crate) fn dropped_events(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    fn with_store<T>(&self, f: impl FnOnce(&mut Store) -> StoreResult<T>) -> Option<T> {
        let store = self.store.as_ref()?;
        let mut store = store.lock().unwrap_or_else(PoisonError::into_inner);
        match f(&mut store) {
            Ok(value) => Some(value),
            Err(e) => {
                self.emit(ProxyEvent::Note(format!("recording failed: {e}")));
                None
            }
        }
    }

    /// The stored session for grouping key `key`, created on first use.
    fn session_for(&self, key: &str, model: Option<&str>) -> Option<i64> {
        let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(id) = sessions.get(key) {
            return Some(*id);
        }
        let ordinal = sessions.len() + 1;
        let name = match (&self.name, ordinal) {
            (Some(name), 1) => name.clone(),
            (Some(name), n) => format!("{name} #{n}"),
            (None, _) => format!("{} {key}", self.source.as_str()),
        };
        let replay_of = self.replay_of;
        let id = self.with_store(|store| {
            let id = store.create_session(&NewSession {
                name,
                source: self.source,
                provider: None,
                model: model.map(str::to_string),
                created_us: now_us(),
            })?;
            if let Some(recording) = replay_of {
                store.link_replay(id, recording)?;
            }
            Ok(id)
        })?;
        sessions.insert(key.to_string(), id);
        Some(id)
    }

    /// Starts recording one request: its session (by `key`), the request row, and an exchange
    /// that records what comes back.
    pub(crate) fn begin(self: &Arc<Self>, key: &str, request: &NewRequest<'_>) -> Exchange {
        let start = Instant::now();
        let exchange = self.next_exchange.fetch_add(1, Ordering::Relaxed);
        let body: Option<Value> = serde_json::from_slice(request.body).ok();
        let model = body
            .as_ref()
            .and_then(|b| b.get("model"))
            .and_then(Value::as_str);
        let session = self.session_for(key, model);
        let request_id = session
            .and_then(|session| self.with_store(|store| store.add_request(session, request)));
        self.emit(ProxyEvent::RequestStarted {
            exchange,
            session_id: session,
            request_id,
            method: request.method.clone(),
            url: request.url.clone(),
            dialect: request.dialect.clone(),
        });
        Exchange {
            sink: Arc::clone(self),
            exchange,
            request_id,
            url: request.url.clone(),
            start,
            reader: StreamReader::with_limits(self.limits),
            sse: false,
            status: None,
            response_headers: Vec::new(),
            wait: None,
            body: Vec::new(),
            failure: None,
            finished: false,
        }
    }
}

/// One recorded request on its way back to the client.
pub(crate) struct Exchange {
    sink: Arc<Sink>,
    exchange: u64,
    request_id: Option<i64>,
    url: String,
    start: Instant,
    reader: StreamReader,
    sse: bool,
    status: Option<u16>,
    response_headers: Vec<(String, String)>,
    wait: Option<Duration>,
    body: Vec<u8>,
    failure: Option<(ErrorClass, String)>,
    finished: bool,
}

impl Exchange {
    /// The response head arrived: an SSE body (2xx `text/event-stream`) is decoded as it passes.
    pub(crate) fn response(&mut self, status: u16, headers: Vec<(String, String)>) {
        let at = self.start.elapsed();
        self.status = Some(status);
        self.wait = Some(at);
        self.sse = (200..300).contains(&status)
            && headers.iter().any(|(n, v)| {
                n.eq_ignore_ascii_case("content-type") && v.contains("text/event-stream")
            });
        if self.sse {
            let events = header_events(&headers);
            self.reader.apply_header_events(&events, at);
        }
        self.response_headers = headers;
    }

    /// Reads what follows as a stream of events whatever the headers said (WebSocket frames,
    /// each handed over as one SSE event).
    pub(crate) fn stream_frames(&mut self) {
        self.sse = true;
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
            self.record_event(entry.raw);
        }
    }

    fn record_event(&self, raw: RawEvent) {
        if let (Some(recorder), Some(request)) = (&self.sink.recorder, self.request_id)
            && let Err(e) = recorder.event(request, raw.clone())
        {
            self.sink
                .emit(ProxyEvent::Note(format!("recording failed: {e}")));
        }
        // The app's channel may be full (it fell behind): then the event is not even built.
        if self.sink.events.capacity() == 0 {
            self.sink.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        self.sink.emit(ProxyEvent::Event {
            exchange: self.exchange,
            request_id: self.request_id,
            raw,
        });
    }

    /// The exchange failed with `class` (`stream`, `cancelled`, …): the connection could not be
    /// made, was reset, or the client went away.
    pub(crate) fn fail(&mut self, class: ErrorClass, message: impl Into<String>) {
        let message = message.into();
        // An interruption (the client went away) is not a stream failure: the outcome records
        // it under its own class unless the stream had already ended or failed by itself.
        if self.sse && !class.is_interruption() {
            self.reader
                .fail(StreamError::stream(message.clone()), self.start.elapsed());
        }
        if self.failure.is_none() {
            self.failure = Some((class, message));
        }
    }

    /// The outcome as recorded.
    fn outcome(&mut self, at: Duration) -> OutcomeRecord {
        if self.sse {
            if self.failure.is_none() {
                for entry in self.reader.finish(at) {
                    self.record_event(entry.raw);
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
        let outcome = self.outcome(at);
        if let Some(request) = self.request_id {
            let meta = ResponseMeta {
                status: self.status,
                headers: std::mem::take(&mut self.response_headers),
                body: (!self.sse && !self.body.is_empty())
                    .then(|| String::from_utf8_lossy(&self.body).into_owned()),
                wait_us: self.wait.map(micros),
                total_us: Some(micros(at)),
            };
            self.sink
                .with_store(|store| store.set_response(request, &meta));
            if let Some(recorder) = &self.sink.recorder
                && let Err(e) = recorder.outcome(request, outcome.clone())
            {
                self.sink
                    .emit(ProxyEvent::Note(format!("recording failed: {e}")));
            }
        }
        self.sink.emit(ProxyEvent::Outcome {
            exchange: self.exchange,
            request_id: self.request_id,
            status: self.status,
            outcome,
        });
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

/// What the relay hands to an exchange recorded on a thread of its own.
enum Handed {
    Chunk(bytes::Bytes, Duration),
    Fail(ErrorClass, String),
    Finish,
}

/// An exchange recorded beside the relay: the relay hands each chunk over (with the time it
/// passed) and goes on at once, while a thread of its own decodes, maps and records it — so the
/// client never waits for the recording, and the two run on separate cores. Dropping it without
/// [`LiveExchange::finish`] (the client went away) records the exchange as cancelled.
pub(crate) struct LiveExchange {
    tx: mpsc::Sender<Handed>,
    start: Instant,
}

/// Chunks waiting to be recorded before the relay waits for the recorder.
const LIVE_BACKLOG: usize = 1024;

impl Exchange {
    /// Moves the exchange to a recording thread of its own (the current runtime's blocking pool).
    pub(crate) fn live(self) -> LiveExchange {
        let (tx, mut rx) = mpsc::channel(LIVE_BACKLOG);
        let start = self.start;
        // A blocking-pool thread: decoding and handing events to the store's recorder (whose
        // channel may make it wait) never hold up the async workers that relay bytes.
        tokio::task::spawn_blocking(move || {
            let mut exchange = self;
            while let Some(handed) = rx.blocking_recv() {
                match handed {
                    Handed::Chunk(bytes, at) => exchange.chunk_at(&bytes, at),
                    Handed::Fail(class, message) => exchange.fail(class, message),
                    Handed::Finish => {
                        exchange.finish();
                        return;
                    }
                }
            }
        });
        LiveExchange { tx, start }
    }
}

impl LiveExchange {
    /// Hands over a chunk that passed to the client just now.
    pub(crate) async fn chunk(&self, bytes: &bytes::Bytes) {
        let at = self.start.elapsed();
        let _ = self.tx.send(Handed::Chunk(bytes.clone(), at)).await;
    }

    /// The exchange failed with `class`.
    pub(crate) async fn fail(&self, class: ErrorClass, message: String) {
        let _ = self.tx.send(Handed::Fail(class, message)).await;
    }

    /// The response ended.
    pub(crate) async fn finish(self) {
        let _ = self.tx.send(Handed::Finish).await;
    }
}
