//! Recordings to replay: a stored session loaded with its requests, raw events and responses
//! ([`Recording`]), each request's events handed to the one core replay
//! ([`RecordedRequest::replay`], paced by a [`Timing`]). Read by `promptwire replay`, the app's
//! replay of a request and the replay endpoint ([`crate::transport::replay_server`]).

use std::time::Duration;

use serde_json::Value;

use crate::core::stream::RawEvent;
use crate::core::stream::replay::Replay;
pub use crate::core::stream::replay::Timing;
use crate::store::{OutcomeRecord, Page, RequestSummary, Store, StoreError};

/// One recorded request with what came back.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    /// Stored request id.
    pub id: i64,
    /// Position in its session, from 0.
    pub position: i64,
    /// URL it went to.
    pub url: String,
    /// The body as JSON (`None` when it was not JSON).
    pub body: Option<Value>,
    /// HTTP status of the answer (`None` when none came).
    pub status: Option<u16>,
    /// Response headers (secret ones were never stored).
    pub response_headers: Vec<(String, String)>,
    /// A non-SSE answer's body (an error's), as the bytes received ([`Self::response_text`]
    /// for its text).
    pub response_body: Option<Vec<u8>>,
    /// Raw events in order, with their receive times.
    pub events: Vec<RawEvent>,
    /// How it ended.
    pub outcome: Option<OutcomeRecord>,
}

impl RecordedRequest {
    /// The non-SSE answer's body as text (empty when there is none; invalid UTF-8 shown as
    /// U+FFFD: a view of the bytes).
    pub fn response_text(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(self.response_body.as_deref().unwrap_or_default())
    }

    /// The recorded duration: the outcome's total, else the last event's receive time.
    pub fn duration(&self) -> Duration {
        let last = self.events.last().map_or(Duration::ZERO, |e| e.received_at);
        self.outcome
            .as_ref()
            .and_then(|o| o.total_us)
            .and_then(|us| u64::try_from(us).ok())
            .map_or(last, |us| Duration::from_micros(us).max(last))
    }

    /// True for a non-streaming JSON answer (one stored [`crate::core::stream::JSON_RESPONSE_EVENT`]).
    pub fn is_json_answer(&self) -> bool {
        matches!(self.events.as_slice(), [only] if only.is_json_response())
    }

    /// True when the answer is served from its events (a stream, or a JSON answer stored as
    /// its one event), not from a stored body.
    pub fn is_stream(&self) -> bool {
        !self.events.is_empty() || self.response_body.is_none()
    }

    /// The replay of its stored events (read with its response headers, ending at its
    /// [`RecordedRequest::duration`]), paced by `timing`.
    pub fn replay(
        &self,
        timing: Timing,
    ) -> Replay<std::iter::Cloned<std::slice::Iter<'_, RawEvent>>> {
        Replay::new(
            self.events.iter().cloned(),
            &self.response_headers,
            self.duration(),
            timing,
        )
    }
}

impl RecordedRequest {
    /// Reads the request `summary` names, with everything that came back.
    fn read(store: &Store, summary: &RequestSummary) -> Result<Self, StoreError> {
        let record = store.request(summary.id)?;
        Ok(Self {
            id: summary.id,
            position: summary.position,
            url: summary.url.clone(),
            body: store.body(summary.id)?.value,
            status: summary.status,
            response_headers: record.response_headers,
            response_body: record.response_body,
            events: store.events(summary.id, Page::ALL)?,
            outcome: store.outcome(summary.id)?,
        })
    }

    /// Reads stored request `request_id` again, with everything that came back (for a server
    /// that keeps only what it matches on and loads an answer when a request matches it).
    pub fn reload(store: &Store, request_id: i64) -> Result<Self, StoreError> {
        Self::read(store, &store.request(request_id)?.summary)
    }

    /// Lets go of what came back (headers, body, events), keeping what a request is matched
    /// on (id, position, URL, body, status, outcome); [`RecordedRequest::reload`] reads it back.
    pub fn forget_answer(&mut self) {
        self.response_headers = Vec::new();
        self.response_body = None;
        self.events = Vec::new();
    }
}

/// A stored session, ready to replay.
#[derive(Debug, Clone, PartialEq)]
pub struct Recording {
    /// Session id.
    pub session_id: i64,
    /// Session name.
    pub name: String,
    /// Its requests in order.
    pub requests: Vec<RecordedRequest>,
}

impl Recording {
    /// Loads session `session_id` from `store`: `only` one request (by position), or all.
    pub fn load(store: &Store, session_id: i64, only: Option<i64>) -> Result<Self, StoreError> {
        let session = store.session(session_id)?;
        let mut requests = Vec::new();
        for summary in store.requests(session_id, Page::ALL)? {
            if only.is_some_and(|n| n != summary.position) {
                continue;
            }
            requests.push(RecordedRequest::read(store, &summary)?);
        }
        Ok(Self {
            session_id,
            name: session.name,
            requests,
        })
    }
}
