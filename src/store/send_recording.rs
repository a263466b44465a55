//! Recording a live send into the session store, for the CLI's `send` and the app alike: a
//! request per attempt (appended to a new session or to an existing one, so a conversation is one
//! session of many requests), raw events through the batch [`Recorder`] as they arrive, and each
//! attempt's response and outcome at the end. Also [`Store::last_turn`]: the latest request of a
//! session with its outcome re-read from the stored events, which the turn loop continues from.
//!
//! The API speaks store and core types only; `transport::recording` feeds it from a send's
//! progress events. Recording problems never fail a send: the first one is kept (see
//! [`SendRecording::problem`]) and recording stops.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use super::{
    NewSession, OutcomeRecord, Page, RecordedState, Recorder, RecorderOptions, ResponseMeta,
    Source, Store, StoreError, StoreResult,
};
use crate::core::compile::CompiledRequest;
use crate::core::stream::{ErrorClass, RawEvent, TurnOutcome, read_all};

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
pub struct AttemptRecord<'a> {
    /// HTTP status (101 for a WebSocket), once known.
    pub status: Option<u16>,
    /// Response headers.
    pub headers: Vec<(String, String)>,
    /// The error body of an HTTP failure.
    pub http_error_body: Option<String>,
    /// Duration of the attempt.
    pub elapsed: Duration,
    /// The turn as far as it got.
    pub outcome: &'a TurnOutcome,
    /// Class and message of a transport-level failure the outcome does not carry.
    pub error: Option<(ErrorClass, String)>,
}

/// A send being recorded.
#[derive(Debug)]
pub struct SendRecording {
    store: Store,
    recorder: Option<Recorder>,
    session: i64,
    compiled: CompiledRequest,
    /// Request id and wait time of each attempt, in order.
    attempts: Vec<(i64, Option<i64>)>,
    problem: Option<String>,
}

impl SendRecording {
    /// Records into a new session called `name`.
    pub fn new_session(
        mut store: Store,
        name: &str,
        model: &str,
        compiled: &CompiledRequest,
    ) -> StoreResult<Self> {
        let session = store.create_session(&NewSession {
            name: name.to_string(),
            source: Source::Send,
            provider: serde_json::to_value(compiled.provider_kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string)),
            model: Some(model.to_string()),
            created_us: now_us(),
        })?;
        Self::into_session(store, session, compiled)
    }

    /// Records into the existing session `session` (its requests follow the ones it has).
    pub fn into_session(
        store: Store,
        session: i64,
        compiled: &CompiledRequest,
    ) -> StoreResult<Self> {
        store.session(session)?;
        let recorder = Recorder::start(store.path(), RecorderOptions::default())?;
        Ok(Self {
            store,
            recorder: Some(recorder),
            session,
            compiled: compiled.clone(),
            attempts: Vec::new(),
            problem: None,
        })
    }

    /// The request of the latest attempt (None before the first attempt started).
    pub fn last_request(&self) -> Option<i64> {
        self.attempts.last().map(|(request, _)| *request)
    }

    /// The session recorded into.
    pub fn session(&self) -> i64 {
        self.session
    }

    /// The first recording problem, if any (recording stopped there).
    pub fn problem(&self) -> Option<&str> {
        self.problem.as_deref()
    }

    fn stop(&mut self, err: &dyn std::fmt::Display) {
        if self.problem.is_none() {
            self.problem = Some(err.to_string());
        }
    }

    /// An attempt is being sent: stores the request.
    pub fn attempt_started(&mut self) {
        if self.problem.is_some() {
            return;
        }
        match self
            .store
            .add_compiled(self.session, &self.compiled, Some(now_us()))
        {
            Ok(id) => self.attempts.push((id, None)),
            Err(e) => self.stop(&e),
        }
    }

    /// The response headers arrived `wait` after the attempt was sent.
    pub fn response_received(&mut self, wait: Duration) {
        if let Some(last) = self.attempts.last_mut() {
            last.1 = Some(micros(wait));
        }
    }

    /// One raw event of the current attempt.
    pub fn raw_event(&mut self, raw: &RawEvent) {
        if self.problem.is_some() {
            return;
        }
        let (Some(recorder), Some((request, _))) = (&self.recorder, self.attempts.last()) else {
            return;
        };
        if let Err(e) = recorder.event(*request, raw.clone()) {
            self.stop(&e);
        }
    }

    /// Commits the events and stores each attempt's response and outcome; returns the session.
    pub fn finish(mut self, attempts: &[AttemptRecord<'_>]) -> StoreResult<i64> {
        if let Some(recorder) = self.recorder.take() {
            recorder.finish()?;
        }
        for ((request, wait_us), attempt) in self.attempts.iter().zip(attempts) {
            self.store.set_response(
                *request,
                &ResponseMeta {
                    status: attempt.status,
                    headers: attempt.headers.clone(),
                    body: attempt.http_error_body.clone(),
                    wait_us: *wait_us,
                    total_us: Some(micros(attempt.elapsed)),
                },
            )?;
            let mut outcome = OutcomeRecord::from_turn(attempt.outcome);
            if let Some((class, message)) = &attempt.error
                && outcome.state != RecordedState::Failed
            {
                outcome.state = RecordedState::Failed;
                outcome.error_class = Some(class.clone());
                outcome.error_message = Some(message.clone());
            }
            self.store.set_outcome(*request, &outcome)?;
        }
        Ok(self.session)
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
        let sse = super::har::sse_text(&events);
        let (_, outcome) = read_all(sse.as_bytes(), Duration::ZERO);
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
