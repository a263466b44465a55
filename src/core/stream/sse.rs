//! SSE framing: [`SseDecoder`] turns bytes, pushed as they arrive, into [`RawEvent`]s.
//!
//! The framing itself is done by the `eventsource-stream` crate, driven over an in-memory byte
//! stream that this module feeds and polls with a no-op waker (no runtime, no I/O). This module
//! decides what to hand over, and when:
//!
//! - Bytes after the last line terminator (`\n` or `\r`) are held back until the line is complete,
//!   so a long line (a 10 MB `data:`) is handed over once instead of being re-scanned per chunk.
//! - Complete lines are handed over in batches of about [`FEED_BATCH_BYTES`]: `eventsource-stream`
//!   copies its remaining buffer once per line, so large batches would cost O(n²).
//! - Each batch is UTF-8 decoded the way the SSE standard says (invalid sequences become U+FFFD)
//!   before it is handed over; a batch always ends at an ASCII terminator, so no character is split.
//! - A leading UTF-8 BOM is skipped here: the crate's own BOM handling panics on it.
//!
//! Everything else — CRLF/CR/LF line ends, comments and keep-alives, multi-line `data:`, events
//! without data — follows `eventsource-stream`.

use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use bytes::Bytes;
use eventsource_stream::{Event, EventStream};
use futures_util::Stream;

/// Size of the batches of complete lines handed to `eventsource-stream`.
pub const FEED_BATCH_BYTES: usize = 1024;

/// One decoded SSE event, before any interpretation of its data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawEvent {
    /// Position in the stream, from 0.
    pub seq: u64,
    /// When the chunk that completed this event arrived, measured from the start of the request
    /// (or of the file). Passed in by the caller: the core reads no clock.
    pub received_at: Duration,
    /// The SSE `event:` name. `None` when the event had no name (SSE's default type `message`,
    /// which is also how an explicit `event: message` is reported).
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

impl RawEvent {
    /// The event as SSE bytes (`event:` line when named, one `data:` line per line of data, a
    /// blank line): decoding them gives back the same name and data. Used to serve and replay
    /// recorded events and to read WebSocket frames through the same decoder.
    pub fn to_sse(&self) -> Vec<u8> {
        encode_sse(self.event.as_deref(), &self.data)
    }
}

/// SSE bytes of one event named `event` (none: unnamed) carrying `data`.
pub fn encode_sse(event: Option<&str>, data: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + 32);
    if let Some(name) = event {
        out.extend_from_slice(b"event: ");
        out.extend_from_slice(name.as_bytes());
        out.push(b'\n');
    }
    for line in data.split('\n') {
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(line.as_bytes());
        out.push(b'\n');
    }
    out.push(b'\n');
    out
}

/// What the in-memory stream hands to `eventsource-stream` next.
#[derive(Debug, Default)]
struct Feed {
    chunk: Option<Bytes>,
    closed: bool,
}

/// The byte stream `eventsource-stream` reads: one pushed chunk at a time, `Pending` in between.
#[derive(Debug)]
struct FeedStream(Arc<Mutex<Feed>>);

impl Stream for FeedStream {
    type Item = Result<Bytes, std::convert::Infallible>;

    fn poll_next(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let mut feed = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        match feed.chunk.take() {
            Some(chunk) => Poll::Ready(Some(Ok(chunk))),
            None if feed.closed => Poll::Ready(None),
            None => Poll::Pending,
        }
    }
}

/// The bytes of an unfinished line, kept as the chunks they came in.
#[derive(Debug, Default)]
struct Pending {
    chunks: Vec<Vec<u8>>,
    len: usize,
}

impl Pending {
    fn push(&mut self, bytes: &[u8]) {
        if !bytes.is_empty() {
            self.chunks.push(bytes.to_vec());
            self.len += bytes.len();
        }
    }

    /// The pending bytes followed by `more`, in one buffer of exactly that size; empties this.
    fn take_with(&mut self, more: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len + more.len());
        for chunk in self.chunks.drain(..) {
            out.extend_from_slice(&chunk);
        }
        out.extend_from_slice(more);
        self.len = 0;
        out
    }
}

/// The UTF-8 byte order mark, skipped at the start of a stream.
const UTF8_BOM: &[u8] = &[0xEF, 0xBB, 0xBF];

fn is_line_end(byte: &u8) -> bool {
    *byte == b'\n' || *byte == b'\r'
}

/// Incremental SSE decoder: `push` bytes as they arrive, `finish` at end of stream.
///
/// Any split of the same bytes into chunks gives the same events.
pub struct SseDecoder {
    /// Bytes of an unfinished line (never contains a line terminator between pushes), as the
    /// chunks they came in: joined once when the line ends, so a long line is not copied at
    /// every doubling of one growing buffer.
    pending: Pending,
    /// The last byte handed over (a trailing `\r` may still be waiting for a `\n`); `None`
    /// before the first batch.
    last_fed: Option<u8>,
    feed: Arc<Mutex<Feed>>,
    events: EventStream<FeedStream>,
    next_seq: u64,
    finished: bool,
    error: Option<String>,
    /// Bytes handed over since the last batch that completed an event (within a batch of the
    /// true count): what the event being decoded has cost so far.
    since_event: u64,
}

impl std::fmt::Debug for SseDecoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SseDecoder")
            .field("pending_bytes", &self.pending.len)
            .field("next_seq", &self.next_seq)
            .field("finished", &self.finished)
            .finish_non_exhaustive()
    }
}

impl Default for SseDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl SseDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        let feed = Arc::new(Mutex::new(Feed::default()));
        Self {
            pending: Pending::default(),
            last_fed: None,
            events: EventStream::new(FeedStream(Arc::clone(&feed))),
            feed,
            next_seq: 0,
            finished: false,
            error: None,
            since_event: 0,
        }
    }

    /// Decodes `bytes` (the next chunk of the stream, received at `received_at`) and returns the
    /// events it completed, in order. Bytes pushed after [`SseDecoder::finish`] are ignored.
    pub fn push(&mut self, bytes: &[u8], received_at: Duration) -> Vec<RawEvent> {
        let mut out = Vec::new();
        if self.finished || bytes.is_empty() {
            return out;
        }
        // `pending` holds no terminator, so only the new bytes can complete a line.
        let Some(last_end) = bytes.iter().rposition(is_line_end) else {
            self.pending.push(bytes);
            return out;
        };
        let (complete, rest) = bytes.split_at(last_end + 1);
        let lines = self.pending.take_with(complete);
        self.feed_lines(lines, received_at, &mut out);
        self.pending.push(rest);
        out
    }

    /// Ends the stream: decodes what is still buffered and returns the last events. An event not
    /// terminated by a blank line is discarded, as the SSE standard says.
    pub fn finish(&mut self, received_at: Duration) -> Vec<RawEvent> {
        let mut out = Vec::new();
        if self.finished {
            return out;
        }
        // An unfinished last line, or a `\r` still waiting to see whether `\n` follows: end the
        // line so `eventsource-stream` settles it (`\r\n` is the same single line end as `\r`).
        if self.pending.len > 0 || self.last_fed == Some(b'\r') {
            let tail = self.pending.take_with(b"\n");
            self.feed_lines(tail, received_at, &mut out);
        }
        self.feed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .closed = true;
        self.drain(received_at, &mut out);
        self.finished = true;
        out
    }

    /// Number of events decoded so far.
    pub fn events_decoded(&self) -> u64 {
        self.next_seq
    }

    /// Bytes of an unfinished line waiting for its terminator.
    pub fn pending_bytes(&self) -> usize {
        self.pending.len
    }

    /// Bytes of the event being decoded so far: lines handed over since the last completed
    /// event (to within one [`FEED_BATCH_BYTES`] batch) and the unfinished line. Keep-alive
    /// comments between events count too. Bounded by the reader's per-event limit.
    pub fn unfinished_event_bytes(&self) -> u64 {
        self.since_event.saturating_add(self.pending.len as u64)
    }

    /// A framing error reported by `eventsource-stream`. Its line grammar accepts any input and
    /// batches are valid UTF-8, so this stays `None`; it is kept rather than dropped if it ever
    /// happens.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// Hands complete lines over in batches that end at a line terminator.
    fn feed_lines(&mut self, lines: Vec<u8>, received_at: Duration, out: &mut Vec<RawEvent>) {
        let lines = Bytes::from(lines);
        let mut start = 0;
        while start < lines.len() {
            let window_end = (start + FEED_BATCH_BYTES).min(lines.len());
            let window = &lines[start..window_end];
            let cut = match window.iter().rposition(is_line_end) {
                Some(p) => start + p + 1,
                // One line longer than a batch: hand it over whole.
                None => match lines[window_end..].iter().position(is_line_end) {
                    Some(p) => window_end + p + 1,
                    None => lines.len(),
                },
            };
            self.feed_batch(lines.slice(start..cut), received_at, out);
            start = cut;
        }
    }

    fn feed_batch(&mut self, mut batch: Bytes, received_at: Duration, out: &mut Vec<RawEvent>) {
        if self.last_fed.is_none() {
            // The stream's first bytes. `eventsource-stream` 0.2.3 strips a leading BOM by
            // slicing one *byte* off a 3-byte character, which panics; so the BOM is skipped here
            // and a neutral empty line goes first, so the crate never sees a BOM at its start.
            if batch.starts_with(UTF8_BOM) {
                batch = batch.slice(UTF8_BOM.len()..);
            }
            self.feed
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .chunk = Some(Bytes::from_static(b"\n"));
            self.drain(received_at, out);
        }
        self.last_fed = batch.last().copied().or(Some(b'\n'));
        let batch_len = batch.len() as u64;
        let text = match std::str::from_utf8(&batch) {
            Ok(_) => batch,
            Err(_) => Bytes::from(String::from_utf8_lossy(&batch).into_owned()),
        };
        self.feed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .chunk = Some(text);
        let before = out.len();
        self.drain(received_at, out);
        self.since_event = match out.len() > before {
            true => 0,
            false => self.since_event.saturating_add(batch_len),
        };
    }

    /// Polls `eventsource-stream` until it needs more input.
    fn drain(&mut self, received_at: Duration, out: &mut Vec<RawEvent>) {
        let mut cx = Context::from_waker(Waker::noop());
        loop {
            match Pin::new(&mut self.events).poll_next(&mut cx) {
                Poll::Ready(Some(Ok(event))) => out.push(self.raw(event, received_at)),
                Poll::Ready(Some(Err(err))) => {
                    self.error = Some(err.to_string());
                    return;
                }
                Poll::Ready(None) | Poll::Pending => return,
            }
        }
    }

    fn raw(&mut self, event: Event, received_at: Duration) -> RawEvent {
        let seq = self.next_seq;
        self.next_seq += 1;
        RawEvent {
            seq,
            received_at,
            event: (event.event != "message").then_some(event.event),
            data: event.data,
        }
    }
}
