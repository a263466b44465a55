//! Streaming, the half of the wire that comes back (WIRE_SPEC §13–§14), over bytes and without
//! I/O: SSE decoding ([`sse`]), event mapping ([`events`]), error classification ([`errors`],
//! [`http_error`], one [`ErrorClass`]), non-streaming JSON answers ([`json_response`]), token usage in every shape ([`usage`]), the server's cache verdict ([`cache_diagnostics`]) and turn
//! accumulation ([`outcome`]).
//!
//! [`StreamReader`] ties them together the way a client reads a turn: push bytes as they arrive,
//! get one [`TimelineEntry`] per raw event, and a [`TurnOutcome`] that applies the termination
//! rules — `response.completed` ends the turn at once; `response.failed`/`response.incomplete`
//! errors are deferred to end of stream and a later completion wins; end of stream without a
//! completion is an error; a transport error or idle timeout ends the turn immediately; an event
//! or a response past its size limit ([`limits`]) ends it as `limit_exceeded`, keeping what came
//! before. A stored event is read directly ([`StreamReader::push_event`]); [`replay`] is the one
//! replay of a stored request's events, paced by a [`Timing`].

pub mod cache_diagnostics;
pub mod error_class;
pub mod errors;
pub mod events;
pub mod http_error;
pub mod json_response;
pub mod limits;
pub mod outcome;
pub mod output_items;
pub mod replay;
pub mod sse;
pub mod usage;

use std::time::Duration;

pub use cache_diagnostics::PromptCacheDiagnostics;
pub use error_class::ErrorClass;
pub use errors::StreamError;
pub use events::{EventMapper, MappedEvent, TimelineEntry, TokenUsage};
pub use http_error::HttpError;
pub use json_response::{JSON_RESPONSE_EVENT, JSON_RESPONSE_LABEL};
pub use limits::StreamLimits;
pub use outcome::{TurnOutcome, TurnState};
pub use replay::{Paced, Replay, Replayed, Timing};
pub use sse::{RawEvent, SseDecoder};
pub use usage::UsageCounts;

/// Reads one turn's SSE stream: decoding, mapping, termination rules and accumulation.
#[derive(Debug, Default)]
pub struct StreamReader {
    decoder: SseDecoder,
    mapper: EventMapper,
    outcome: TurnOutcome,
    deferred: Option<StreamError>,
    ignored_after_completion: u64,
    limits: StreamLimits,
    /// Bytes pushed so far.
    received: u64,
}

impl StreamReader {
    /// A reader at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// A reader at the start of a stream, with these size limits instead of the defaults.
    pub fn with_limits(limits: StreamLimits) -> Self {
        Self {
            limits,
            ..Self::default()
        }
    }

    /// The size limits in force.
    pub fn limits(&self) -> StreamLimits {
        self.limits
    }

    /// Bytes pushed so far (never more than the response limit).
    pub fn bytes_received(&self) -> u64 {
        self.received
    }

    /// Decodes and maps the next chunk, received at `at`. Returns one entry per raw event, up to
    /// and including `response.completed`; after the turn has ended, nothing more is read.
    ///
    /// Bytes past the response limit are not decoded, and an event past the event limit is not
    /// kept: either ends the turn as `limit_exceeded`, with the events before it kept.
    pub fn push(&mut self, bytes: &[u8], at: Duration) -> Vec<TimelineEntry> {
        if self.is_done() {
            return Vec::new();
        }
        let room = self.limits.max_response_bytes.saturating_sub(self.received);
        let over_response = bytes.len() as u64 > room;
        // `room` is below `bytes.len()` here, so it fits a usize.
        let bytes = match over_response {
            true => &bytes[..usize::try_from(room).unwrap_or(bytes.len())],
            false => bytes,
        };
        self.received += bytes.len() as u64;
        // A chunk that ends no line cannot complete an event: when it would take the unfinished
        // event past its limit, the turn ends without buffering it (the buffer would otherwise
        // grow, and double, past the limit first).
        if self
            .decoder
            .unfinished_event_bytes()
            .saturating_add(bytes.len() as u64)
            > self.limits.max_event_bytes
            && !bytes.iter().any(|b| *b == b'\n' || *b == b'\r')
        {
            self.outcome.fail(self.limits.event_too_large(), at);
            return Vec::new();
        }
        let raws = self.decoder.push(bytes, at);
        let entries = self.process(raws);
        if !self.is_done() {
            if self.decoder.unfinished_event_bytes() > self.limits.max_event_bytes {
                self.outcome.fail(self.limits.event_too_large(), at);
            } else if over_response {
                self.outcome.fail(self.limits.response_too_large(), at);
            }
        }
        entries
    }

    /// Reads one stored event directly — a [`RawEvent`] as it was decoded when recorded, at its
    /// recorded `received_at` — with the mapping, termination rules and limits of
    /// [`StreamReader::push`] of its SSE bytes ([`RawEvent::sse_len`] counts against the response
    /// limit), without framing it as SSE again. The event is given back unread (`Err`) when the
    /// turn had already ended, or when it is past a size limit (which ends the turn, as
    /// `limit_exceeded`).
    pub fn push_event(&mut self, raw: RawEvent) -> Result<TimelineEntry, RawEvent> {
        if self.is_done() {
            return Err(raw);
        }
        let at = raw.received_at;
        let room = self.limits.max_response_bytes.saturating_sub(self.received);
        let len = raw.sse_len();
        if len > room {
            self.received += room;
            self.outcome.fail(self.limits.response_too_large(), at);
            return Err(raw);
        }
        self.received += len;
        if raw.data.len() as u64 > self.limits.max_event_bytes {
            self.outcome.fail(self.limits.event_too_large(), at);
            return Err(raw);
        }
        Ok(self.read(raw))
    }

    /// Reads a whole non-streaming JSON answer ([`json_response`]) received at `at`, as one
    /// stored event named [`JSON_RESPONSE_EVENT`]; `None` when the turn had already ended or
    /// the body is past a size limit (which ends the turn, as `limit_exceeded`). A body that
    /// is not UTF-8 is kept as its bytes, read as text with its bad bytes replaced (and then
    /// does not parse as JSON).
    /// Call [`StreamReader::finish`] after it, as at the end of a stream.
    pub fn push_json(&mut self, body: &[u8], at: Duration) -> Option<TimelineEntry> {
        let raw = RawEvent::json_response_bytes(body.to_vec(), at);
        self.push_event(raw).ok()
    }

    /// End of stream at `at`: maps the last buffered events, then, if no completion came, fails
    /// the turn with the deferred error or `stream closed before response.completed`.
    pub fn finish(&mut self, at: Duration) -> Vec<TimelineEntry> {
        if self.is_done() {
            return Vec::new();
        }
        let raws = self.decoder.finish(at);
        let entries = self.process(raws);
        if !self.is_done() {
            let error = self
                .deferred
                .take()
                .unwrap_or_else(|| StreamError::stream(errors::CLOSED_BEFORE_COMPLETED));
            self.outcome.fail(error, at);
        }
        entries
    }

    /// Ends the turn now with `error` (a transport error or idle timeout), unless it already
    /// ended. A deferred `response.failed` error is superseded, as in the client.
    pub fn fail(&mut self, error: StreamError, at: Duration) {
        self.outcome.fail(error, at);
    }

    /// Accounts for events derived from the HTTP response headers ([`events::header_events`]).
    pub fn apply_header_events(&mut self, events: &[MappedEvent], at: Duration) {
        for event in events {
            self.outcome.apply_event(event, at);
        }
    }

    /// True once the turn completed or failed.
    pub fn is_done(&self) -> bool {
        self.outcome.is_terminal()
    }

    /// The error that will end the turn at end of stream unless a completion comes first.
    pub fn deferred_error(&self) -> Option<&StreamError> {
        self.deferred.as_ref()
    }

    /// Raw events decoded in the same chunk after `response.completed`, which a client never
    /// sees.
    pub fn ignored_after_completion(&self) -> u64 {
        self.ignored_after_completion
    }

    /// The outcome so far (partial until [`StreamReader::is_done`]).
    pub fn outcome(&self) -> &TurnOutcome {
        &self.outcome
    }

    /// The outcome, consuming the reader.
    pub fn into_outcome(self) -> TurnOutcome {
        self.outcome
    }

    /// The SSE decoder (bytes still buffered, events decoded).
    pub fn decoder(&self) -> &SseDecoder {
        &self.decoder
    }

    fn process(&mut self, raws: Vec<RawEvent>) -> Vec<TimelineEntry> {
        let mut entries = Vec::with_capacity(raws.len());
        for raw in raws {
            if self.is_done() {
                self.ignored_after_completion += 1;
                continue;
            }
            if raw.data.len() as u64 > self.limits.max_event_bytes {
                self.outcome
                    .fail(self.limits.event_too_large(), raw.received_at);
                break;
            }
            entries.push(self.read(raw));
        }
        entries
    }

    /// Maps one event within the limits and applies it to the turn.
    fn read(&mut self, raw: RawEvent) -> TimelineEntry {
        let entry = self.mapper.map(raw);
        if let Some(error) = &entry.error {
            self.deferred = Some(error.clone());
        }
        self.outcome.apply(&entry);
        if self.is_done() {
            self.deferred = None;
        }
        entry
    }
}

/// Decodes and maps a whole recorded stream in one go (every event received at `at`).
pub fn read_all(bytes: &[u8], at: Duration) -> (Vec<TimelineEntry>, TurnOutcome) {
    let mut reader = StreamReader::new();
    let mut entries = reader.push(bytes, at);
    entries.extend(reader.finish(at));
    (entries, reader.into_outcome())
}
