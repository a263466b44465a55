//! Recording a live send into the session store, for the CLI's `send`, the app's Send and
//! Re-send alike: a request per attempt (appended to a new session or to an existing one, so a
//! conversation is one session of many requests), raw events as they arrive and each attempt's
//! response and outcome at the end — all through the database's one [`Writer`], so a send never
//! waits on SQLite while it streams. Also [`Store::last_turn`]: the latest request of a session
//! with its outcome re-read from the stored events, which the turn loop continues from.
//!
//! The API speaks store and core types only; `transport::recording` feeds it from a send's
//! progress events. Recording problems never fail a send: [`SendRecording::finish`] says what
//! was not stored.

use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;

use serde_json::Value;

use super::{
    NewSession, Notify, OutcomeRecord, OwnedRequest, Page, RecordedState, Report, RequestKey,
    RequestWriter, ResponseMeta, SessionRef, Source, Store, StoreError, StoreResult, Writer,
};
use crate::core::compile::CompiledRequest;
use crate::core::stream::{ErrorClass, RawEvent, TurnOutcome};

/// Bytes of a waiting recording's events the writer may hold uncommitted before the next one
/// waits (see [`SendRecording::raw_event`]).
pub const HELD_EVENT_BYTES: usize = 1024 * 1024;

/// Most raw events re-read for one stored turn (a turn has a few thousand at most).
pub const MAX_TURN_EVENTS: u64 = 1_000_000;

/// Microseconds since the Unix epoch, now.
pub fn now_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
}

fn micros(d: Duration) -> i64 {
    i64::try_from(d.as_micros()).unwrap_or(i64::MAX)
}

/// How one attempt ended, as the store records it.
#[derive(Debug, Clone, PartialEq)]
pub struct AttemptRecord {
    /// HTTP status (101 for a WebSocket), once known.
    pub status: Option<u16>,
    /// Response headers.
    pub headers: Vec<(String, String)>,
    /// The HTTP version the answer came over when it was not HTTP/1.1 (the HAR's
    /// `httpVersion`).
    pub http_version: Option<String>,
    /// The error body of an HTTP failure.
    pub http_error_body: Option<String>,
    /// Duration of the attempt.
    pub elapsed: Duration,
    /// The turn as far as it got.
    pub outcome: TurnOutcome,
    /// Class and message of a transport-level failure the outcome does not carry.
    pub error: Option<(ErrorClass, String)>,
}

/// The ids the writer gave a send's rows, as they become known.
#[derive(Debug, Default)]
struct StoredIds {
    session: Option<i64>,
    /// Request id of each attempt's key.
    requests: Vec<(RequestKey, i64)>,
    /// Why a request could not be stored, if one could not.
    lost: Option<String>,
}

/// Where a send's rows are stored, as the writer reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoredSend {
    /// The session.
    pub session: i64,
    /// The request of the latest attempt.
    pub request: Option<i64>,
}

/// A send being recorded through the database's [`Writer`]: nothing here waits for SQLite
/// until [`SendRecording::finish`].
pub struct SendRecording {
    writer: Writer,
    session: SessionRef,
    compiled: CompiledRequest,
    /// Each attempt's writer and wait time, in order.
    attempts: Vec<(RequestWriter, Option<i64>)>,
    ids: Arc<Mutex<StoredIds>>,
    /// Signalled when the writer reports a stored (or lost) request.
    stored: Arc<Condvar>,
    notify: Notify,
    /// How long [`SendRecording::attempt_started`] waits for the request row (zero: not at all).
    row_wait: Duration,
}

impl std::fmt::Debug for SendRecording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SendRecording")
            .field("session", &self.session)
            .field("attempts", &self.attempts.len())
            .finish_non_exhaustive()
    }
}

impl SendRecording {
    /// Records into a new session called `name`. `on_stored` hears where each attempt's request
    /// was stored, from the writer's thread (it must not block).
    pub fn new_session(
        writer: &Writer,
        name: &str,
        model: &str,
        compiled: &CompiledRequest,
        on_stored: Option<Arc<dyn Fn(StoredSend) + Send + Sync>>,
    ) -> StoreResult<Self> {
        let ids = Arc::new(Mutex::new(StoredIds::default()));
        let stored = Arc::new(Condvar::new());
        let notify = notify(&ids, &stored, on_stored);
        let key = writer
            .create_session(
                NewSession {
                    name: name.to_string(),
                    source: Source::Send,
                    provider: serde_json::to_value(compiled.provider_kind)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string)),
                    model: Some(model.to_string()),
                    created_us: now_us(),
                },
                None,
                None,
                Some(Arc::clone(&notify)),
            )
            .ok_or_else(|| {
                StoreError::RecorderStopped("the writer has no room for a new session".to_string())
            })?;
        Ok(Self::with(
            writer,
            SessionRef::Key(key),
            compiled,
            (ids, stored),
            notify,
        ))
    }

    /// Records into the existing session `session` (its requests follow the ones it has; a
    /// session that is gone is reported when the first request is refused).
    pub fn into_session(
        writer: &Writer,
        session: i64,
        compiled: &CompiledRequest,
        on_stored: Option<Arc<dyn Fn(StoredSend) + Send + Sync>>,
    ) -> StoreResult<Self> {
        let ids = Arc::new(Mutex::new(StoredIds {
            session: Some(session),
            ..StoredIds::default()
        }));
        let stored = Arc::new(Condvar::new());
        let notify = notify(&ids, &stored, on_stored);
        Ok(Self::with(
            writer,
            SessionRef::Id(session),
            compiled,
            (ids, stored),
            notify,
        ))
    }

    fn with(
        writer: &Writer,
        session: SessionRef,
        compiled: &CompiledRequest,
        (ids, stored): (Arc<Mutex<StoredIds>>, Arc<Condvar>),
        notify: Notify,
    ) -> Self {
        Self {
            writer: writer.clone(),
            session,
            compiled: compiled.clone(),
            attempts: Vec::new(),
            ids,
            stored,
            notify,
            row_wait: Duration::ZERO,
        }
    }

    /// Makes [`SendRecording::attempt_started`] wait up to `timeout` until the request row is
    /// committed, so a request is in the database before it goes out (the CLI's `send`: a
    /// process killed mid-stream leaves its request listed "without an answer"). Only for a
    /// caller that may wait: never on an async worker.
    pub fn waiting_for_rows(mut self, timeout: Duration) -> Self {
        self.row_wait = timeout;
        self
    }

    /// The session recorded into, once known (an existing one at once, a new one once stored).
    pub fn session(&self) -> Option<i64> {
        lock(&self.ids).session
    }

    /// An attempt is being sent: hands its request to the writer.
    pub fn attempt_started(&mut self) {
        let request = compiled_request(&self.compiled, Some(now_us()));
        let writer =
            self.writer
                .begin_request(self.session, request, Some(Arc::clone(&self.notify)));
        let key = writer.key();
        self.attempts.push((writer, None));
        if self.row_wait > Duration::ZERO {
            let ids = lock(&self.ids);
            let _ = self.stored.wait_timeout_while(ids, self.row_wait, |ids| {
                ids.lost.is_none() && !ids.requests.iter().any(|(k, _)| *k == key)
            });
        }
    }

    /// The response headers arrived `wait` after the attempt was sent.
    pub fn response_received(&mut self, wait: Duration) {
        if let Some(last) = self.attempts.last_mut() {
            last.1 = Some(micros(wait));
        }
    }

    /// One raw event of the current attempt. A recording that waits for its rows (the CLI's)
    /// also waits, briefly, while the writer holds more than [`HELD_EVENT_BYTES`] of events not
    /// yet committed: the send's memory stays near its response limit.
    pub fn raw_event(&mut self, raw: &RawEvent) {
        self.raw_event_owned(raw.clone());
    }

    /// [`SendRecording::raw_event`] for an event the caller no longer needs (not copied).
    pub fn raw_event_owned(&mut self, raw: RawEvent) {
        if let Some((writer, _)) = self.attempts.last_mut() {
            if self.row_wait > Duration::ZERO {
                writer.event_within(raw, HELD_EVENT_BYTES, self.row_wait);
            } else {
                writer.event(raw);
            }
        }
    }

    /// Hands over each attempt's response and outcome, then waits up to `timeout` for the
    /// writer to commit them; returns where they were stored. Fails when a request could not be
    /// stored, or when the database is still busy or full after `timeout` (the writer keeps
    /// trying while the process runs).
    pub fn finish(
        self,
        attempts: Vec<AttemptRecord>,
        timeout: Duration,
    ) -> StoreResult<StoredSend> {
        let keys: Vec<RequestKey> = self.attempts.iter().map(|(w, _)| w.key()).collect();
        for ((writer, wait_us), attempt) in self.attempts.into_iter().zip(attempts) {
            let mut writer = writer;
            writer.response(ResponseMeta {
                status: attempt.status,
                headers: attempt.headers.clone(),
                body: attempt.http_error_body.clone().map(String::into_bytes),
                wait_us,
                total_us: Some(micros(attempt.elapsed)),
                http_version: attempt.http_version.clone(),
                extra: None,
            });
            let mut outcome = OutcomeRecord::from_turn_owned(attempt.outcome);
            if let Some((class, message)) = &attempt.error
                && outcome.state != RecordedState::Failed
            {
                outcome.state = RecordedState::Failed;
                outcome.error_class = Some(class.clone());
                outcome.error_message = Some(message.clone());
            }
            writer.outcome(outcome);
        }
        if !self.writer.flush(timeout) {
            let problem = self
                .writer
                .status()
                .problem
                .unwrap_or_else(|| "the writer is still busy".to_string());
            return Err(StoreError::RecorderStopped(format!(
                "not yet stored after {} s ({problem}); it is written when the database frees up",
                timeout.as_secs()
            )));
        }
        let ids = lock(&self.ids);
        if let Some(why) = &ids.lost {
            return Err(StoreError::RecorderStopped(format!(
                "the request was not stored: {why}"
            )));
        }
        let session = ids
            .session
            .ok_or_else(|| StoreError::RecorderStopped("the session was not stored".to_string()))?;
        let request = keys.last().and_then(|key| {
            ids.requests
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, id)| *id)
        });
        Ok(StoredSend { session, request })
    }
}

fn lock(ids: &Mutex<StoredIds>) -> std::sync::MutexGuard<'_, StoredIds> {
    ids.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The writer's callback for a send: keeps the ids and passes each stored request on.
fn notify(
    ids: &Arc<Mutex<StoredIds>>,
    stored: &Arc<Condvar>,
    on_stored: Option<Arc<dyn Fn(StoredSend) + Send + Sync>>,
) -> Notify {
    let ids = Arc::clone(ids);
    let stored = Arc::clone(stored);
    Arc::new(move |report| match report {
        Report::SessionStored { session_id, .. } => lock(&ids).session = Some(session_id),
        Report::RequestStored {
            key,
            session_id,
            request_id,
        } => {
            {
                let mut ids = lock(&ids);
                ids.session = Some(session_id);
                ids.requests.push((key, request_id));
            }
            stored.notify_all();
            if let Some(on_stored) = &on_stored {
                on_stored(StoredSend {
                    session: session_id,
                    request: Some(request_id),
                });
            }
        }
        Report::RequestLost { reason, .. } => {
            lock(&ids).lost.get_or_insert(reason);
            stored.notify_all();
        }
        Report::OutcomeStored { .. } => {}
    })
}

/// The store's row for a compiled request: its URL, headers (secret ones dropped when written),
/// exact body, dialect, rules and provider.
pub fn compiled_request(request: &CompiledRequest, started_us: Option<i64>) -> OwnedRequest {
    let headers: Vec<(String, String)> = request
        .headers
        .iter()
        .map(|h| (h.name.clone(), h.value.clone()))
        .collect();
    let extra = request
        .compressed_body
        .as_ref()
        .map(|c| serde_json::json!({"content_encoding": "zstd", "wire_body_bytes": c.len()}));
    OwnedRequest {
        dialect: enum_name(&request.dialect),
        rules: Some(request.rules.clone()),
        provider: enum_name(&request.provider_kind),
        method: "POST".to_string(),
        url: request.url.clone(),
        body: request.body_json.clone(),
        headers,
        extra,
        started_us,
    }
}

/// A JSON value's string form (`"standard"` → `standard`), for enums serialized as strings.
fn enum_name<T: serde::Serialize>(value: &T) -> Option<String> {
    match serde_json::to_value(value) {
        Ok(Value::String(s)) => Some(s),
        _ => None,
    }
}

/// The latest request of a session and what came back.
#[derive(Debug, Clone)]
pub struct StoredTurn {
    /// Request id.
    pub request_id: i64,
    /// Its position in the session, from 0.
    pub position: i64,
    /// The URL it was sent to.
    pub url: String,
    /// Its exact body.
    pub body: Value,
    /// Its outcome, rebuilt from the stored raw events through the same decoder and mapper.
    pub outcome: TurnOutcome,
}

impl Store {
    /// The session's latest request with its outcome re-read from its events; `None` when the
    /// session has no request yet.
    pub fn last_turn(&self, session_id: i64) -> StoreResult<Option<StoredTurn>> {
        let count = u64::try_from(self.session(session_id)?.requests).unwrap_or(0);
        let Some(offset) = count.checked_sub(1) else {
            return Ok(None);
        };
        let requests = self.requests(session_id, Page { offset, limit: 1 })?;
        let Some(last) = requests.into_iter().next() else {
            return Ok(None);
        };
        let stored = self.body(last.id)?;
        let body = stored.value.ok_or_else(|| {
            StoreError::Damaged(format!("request {}: the stored body is not JSON", last.id))
        })?;
        let events = self.events(last.id, Page::first(MAX_TURN_EVENTS))?;
        // Read directly by the one replay, at the recorded times (no headers: a turn's outcome).
        let instant = crate::core::stream::Timing::Instant;
        let outcome =
            crate::core::stream::Replay::new(events, &[], Duration::ZERO, instant).into_outcome();
        Ok(Some(StoredTurn {
            request_id: last.id,
            position: last.position,
            url: last.url,
            body,
            outcome,
        }))
    }
}

/// Opens the database at `path`, or the embedded default database (created and seeded on first
/// use) when `None`.
pub fn open_or_default(path: Option<&Path>) -> StoreResult<Store> {
    match path {
        Some(path) => Store::open(path),
        None => super::seed::open_seeded(&super::seed::default_path()),
    }
}
