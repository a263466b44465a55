//! The read loop both live transports share: what arrives on the connection (HTTP body chunks,
//! WebSocket messages, each turned into an [`Incoming`]) is fed into the core [`StreamReader`]
//! until the turn is done, the peer ends or fails the stream, nothing arrives within the idle
//! timeout, the send's overall deadline passes, or the send is cancelled. Every timeline entry is
//! reported as it is decoded and, unless the send's options say not to, kept in the
//! [`Attempt`], whose outcome and error are then settled the same way for both.

use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::{Stream, StreamExt as _};

use super::inflate::Inflater;
use super::send::{Attempt, CancelToken, SendError, SendEvent, SendOptions};
use crate::core::stream::errors::{CLOSED_BEFORE_COMPLETED, IDLE_TIMEOUT};
use crate::core::stream::limits::deadline_passed;
use crate::core::stream::{StreamError, StreamReader, TimelineEntry, TurnOutcome, TurnState};

/// Where a live transport reports its progress: a borrowed-event callback ([`Callback`]), or the
/// bounded queue of [`super::send::Sender::start`], which the read loop waits on before it reads
/// on ([`Sink::ready`]).
pub(crate) trait Sink: Send {
    /// Takes one progress event (never waits).
    fn event(&mut self, event: SendEvent<'_>);
    /// Takes one entry the attempt does not keep ([`SendOptions::keep_entries`] off): a sink
    /// that holds on to entries takes it without a copy.
    fn entry(&mut self, entry: crate::core::stream::TimelineEntry) {
        self.event(SendEvent::Entry(&entry));
    }
    /// Resolves once the sink can take more; the send reads the next chunk only then.
    fn ready(&mut self) -> impl Future<Output = ()> + Send {
        std::future::ready(())
    }
}

/// A callback as a sink that never holds the send up.
pub(crate) struct Callback<F>(pub F);

impl<F: FnMut(SendEvent<'_>) + Send> Sink for Callback<F> {
    fn event(&mut self, event: SendEvent<'_>) {
        (self.0)(event);
    }
}

/// One read from the connection, as the stream reader takes it.
pub(super) enum Incoming {
    /// SSE bytes for the reader.
    Data(Bytes),
    /// The peer ended the stream.
    End,
    /// The connection failed; the text says how.
    Failed(String),
    /// Nothing for the reader (a WebSocket ping or pong).
    Nothing,
}

/// How long a read may wait: for the next read (idle), and in all (the send's deadline, an
/// instant, with the configured length for the message).
#[derive(Debug, Clone, Copy)]
pub(super) struct ReadBounds {
    /// Longest wait for the next read.
    pub idle: Duration,
    /// When the whole send must be over.
    pub deadline: tokio::time::Instant,
    /// The deadline's configured length (for the error message).
    pub deadline_len: Duration,
    /// Whether entries are kept in the attempt ([`SendOptions::keep_entries`]).
    pub keep_entries: bool,
}

impl ReadBounds {
    /// The bounds a send's options set, with the send's `deadline` instant.
    pub(super) fn of(options: &SendOptions, deadline: tokio::time::Instant) -> Self {
        Self {
            idle: options.idle_timeout,
            deadline,
            deadline_len: options.deadline,
            keep_entries: options.keep_entries,
        }
    }
}

/// The reader of a turn, with the decoder of a compressed answer (`Content-Encoding`) before it
/// when there is one: what the reader sees is the plain bytes.
pub(super) struct Reading {
    /// The turn's reader.
    pub reader: StreamReader,
    /// The answer's decoder (`None`: the bytes are plain).
    pub inflater: Option<Inflater>,
}

impl From<StreamReader> for Reading {
    fn from(reader: StreamReader) -> Self {
        Self {
            reader,
            inflater: None,
        }
    }
}

impl Reading {
    /// Reads `bytes` (decoded first when compressed) received `at`; the entries decoded. Bytes
    /// that do not decode end the turn (`content_encoding`, or `limit_exceeded` past the cap).
    fn push(&mut self, bytes: &[u8], at: Duration) -> Vec<TimelineEntry> {
        let Some(inflater) = self.inflater.as_mut() else {
            return self.reader.push(bytes, at);
        };
        let reader = &mut self.reader;
        let mut entries = Vec::new();
        let decoded = inflater.push(bytes, &mut |plain| {
            read_plain(reader, &mut entries, plain, at);
        });
        if let Err(e) = decoded {
            self.inflater = None;
            self.reader.fail(e.stream_error(), at);
        }
        entries
    }

    /// The body ended at `at`: what the decoder still holds, then the reader's end.
    fn finish(&mut self, at: Duration) -> Vec<TimelineEntry> {
        let mut entries = Vec::new();
        if let Some(mut inflater) = self.inflater.take() {
            let reader = &mut self.reader;
            let decoded = inflater.finish(&mut |plain| {
                read_plain(reader, &mut entries, plain, at);
            });
            if let Err(e) = decoded {
                self.reader.fail(e.stream_error(), at);
            }
        }
        entries.extend(self.reader.finish(at));
        entries
    }
}

/// Reads decoded bytes `plain` received `at` into `reader`, keeping its entries in `entries`;
/// nothing after its turn ended.
fn read_plain(
    reader: &mut StreamReader,
    entries: &mut Vec<TimelineEntry>,
    plain: &[u8],
    at: Duration,
) {
    if !reader.is_done() {
        entries.extend(reader.push(plain, at));
    }
}

/// Feeds `source` into `reader` (see the module header), reporting and keeping every entry, then
/// sets the attempt's outcome and error: none when completed, the stream error when it failed,
/// `Cancelled` when stopped, else "closed before completed". The caller sets `elapsed`.
pub(super) async fn read_turn<S, K>(
    source: &mut S,
    reading: impl Into<Reading>,
    bounds: ReadBounds,
    cancel: &CancelToken,
    start: Instant,
    attempt: &mut Attempt,
    sink: &mut K,
) where
    S: Stream + Unpin,
    S::Item: Into<Incoming>,
    K: Sink,
{
    let mut reading = reading.into();
    let mut cancelled = false;
    while !reading.reader.is_done() {
        let next = tokio::select! {
            biased;
            () = cancel.cancelled() => {
                cancelled = true;
                break;
            }
            () = tokio::time::sleep_until(bounds.deadline) => {
                reading.reader.fail(deadline_passed(bounds.deadline_len), start.elapsed());
                break;
            }
            next = tokio::time::timeout(bounds.idle, source.next()) => next,
        };
        let at = start.elapsed();
        let entries = match next.map(|item| item.map_or(Incoming::End, Into::into)) {
            Err(_) => {
                reading.reader.fail(StreamError::stream(IDLE_TIMEOUT), at);
                Vec::new()
            }
            Ok(Incoming::End) => reading.finish(at),
            Ok(Incoming::Failed(message)) => {
                // What was decoded before the failure stays; the error ends the turn now.
                reading.reader.fail(StreamError::stream(message), at);
                Vec::new()
            }
            Ok(Incoming::Data(bytes)) => reading.push(&bytes, at),
            Ok(Incoming::Nothing) => Vec::new(),
        };
        for entry in entries {
            if bounds.keep_entries {
                sink.event(SendEvent::Entry(&entry));
                attempt.entries.push(entry);
            } else {
                sink.entry(entry);
            }
        }
        sink.ready().await;
    }
    attempt.outcome = reading.reader.into_outcome();
    attempt.error = match &attempt.outcome.state {
        TurnState::Completed { .. } => None,
        TurnState::Failed(error) => Some(SendError::Stream(error.clone())),
        TurnState::Open if cancelled => Some(SendError::Cancelled),
        TurnState::Open => Some(SendError::Stream(StreamError::stream(
            CLOSED_BEFORE_COMPLETED,
        ))),
    };
}

/// A fresh attempt numbered `number`: nothing received yet.
pub(super) fn new_attempt(number: u32) -> Attempt {
    Attempt {
        number,
        status: None,
        response_headers: Vec::new(),
        http_version: None,
        header_events: Vec::new(),
        entries: Vec::new(),
        outcome: TurnOutcome::default(),
        error: None,
        elapsed: Duration::ZERO,
    }
}
