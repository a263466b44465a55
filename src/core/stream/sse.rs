//! SSE framing: [`SseDecoder`] turns bytes, pushed as they arrive, into [`RawEvent`]s.
//!
//! The framing is the SSE standard's (and the `eventsource-stream` crate's, which this decoder
//! replaced and matches event for event): `\r\n`, `\r` and `\n` end a line; a blank line ends
//! an event, dispatched only when it has data (the `data:` lines joined with `\n`); `:` starts a
//! comment (keep-alives); a field's value loses one leading space; `event:` names the event;
//! other fields (`id:`, `retry:`) are read and ignored; an event not ended by a blank line at end
//! of stream is dropped. It is done here, without copying a line more than needed: a 100 MB
//! event is held once as its line and once as its data, not four times over.
//!
//! - Bytes after the last line terminator (`\n` or `\r`) are held back, as the chunks they came
//!   in, until the line is complete, so a long line (a 10 MB `data:`) is joined and read once.
//! - Complete lines are read in batches of about [`FEED_BATCH_BYTES`] (the unit in which the
//!   size of the event being decoded is counted).
//! - Each batch is UTF-8 decoded the way the SSE standard says (invalid sequences become U+FFFD);
//!   a batch always ends at an ASCII terminator, so no character is split.
//! - A leading UTF-8 BOM is skipped.
//! - A last line ending in `\r` waits for the next byte (a `\n` may belong to it), as in the
//!   crate, so any split of the bytes gives the same events at the same times.

use std::time::Duration;

use bytes::Bytes;

/// Size of the batches in which complete lines are read.
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
    /// The `data:` lines joined with `\n` (when they are not valid UTF-8: their text view, each
    /// undecodable sequence as U+FFFD, and the bytes themselves in [`RawEvent::bytes`]).
    pub data: String,
    /// The data's bytes as received, kept only when they are not valid UTF-8 (`None`: `data`
    /// is exactly the bytes). What is stored, replayed and served is these bytes.
    pub bytes: Option<Vec<u8>>,
}

impl RawEvent {
    /// An event whose data is `data` as received: valid UTF-8 becomes [`RawEvent::data`], other
    /// bytes are kept in [`RawEvent::bytes`] beside their text view.
    pub fn from_bytes(
        seq: u64,
        received_at: Duration,
        event: Option<String>,
        data: Vec<u8>,
    ) -> Self {
        let (data, bytes) = match String::from_utf8(data) {
            Ok(text) => (text, None),
            Err(e) => {
                let bytes = e.into_bytes();
                (String::from_utf8_lossy(&bytes).into_owned(), Some(bytes))
            }
        };
        Self {
            seq,
            received_at,
            event,
            data,
            bytes,
        }
    }

    /// The data's bytes as received.
    pub fn data_bytes(&self) -> &[u8] {
        self.bytes.as_deref().unwrap_or(self.data.as_bytes())
    }

    /// The event as SSE bytes (`event:` line when named, one `data:` line per line of data, a
    /// blank line): decoding them gives back the same name and data. Used to serve and replay
    /// recorded events and to read WebSocket frames through the same decoder.
    pub fn to_sse(&self) -> Vec<u8> {
        encode_sse_bytes(self.event.as_deref(), self.data_bytes())
    }

    /// The length of [`RawEvent::to_sse`], without building it: what the event weighs against
    /// the response limit when a stored event is read directly.
    pub fn sse_len(&self) -> u64 {
        let name = self
            .event
            .as_ref()
            .map_or(0, |n| "event: \n".len() + n.len());
        let data = self.data_bytes();
        let lines = data.iter().filter(|b| **b == b'\n').count() + 1;
        // Each line gains `data: ` and its `\n` (the joining `\n`s are those), plus the blank line.
        (name + data.len() + lines * "data: ".len() + 2) as u64
    }
}

/// SSE bytes of one event named `event` (none: unnamed) carrying `data`.
pub fn encode_sse(event: Option<&str>, data: &str) -> Vec<u8> {
    encode_sse_bytes(event, data.as_bytes())
}

/// SSE bytes of one event named `event` carrying `data` as it is (bytes that need not be UTF-8).
pub fn encode_sse_bytes(event: Option<&str>, data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + 32);
    if let Some(name) = event {
        out.extend_from_slice(b"event: ");
        out.extend_from_slice(name.as_bytes());
        out.push(b'\n');
    }
    for line in data.split(|b| *b == b'\n') {
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(line);
        out.push(b'\n');
    }
    out.push(b'\n');
    out
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
    /// The last line handed over when it ended in a `\r` that may be the first half of a
    /// `\r\n`: read once the next byte (or the end) says.
    held: Vec<u8>,
    /// The event being built: its `event:` name (empty: none) and its data, each `data:` line
    /// followed by `\n`.
    name: String,
    data: Vec<u8>,
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
        Self {
            pending: Pending::default(),
            last_fed: None,
            held: Vec::new(),
            name: String::new(),
            data: Vec::new(),
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
        // line so that it is read (`\r\n` is the same single line end as `\r`).
        if self.pending.len > 0 || self.last_fed == Some(b'\r') {
            let tail = self.pending.take_with(b"\n");
            self.feed_lines(tail, received_at, &mut out);
        }
        // An event not ended by a blank line is dropped.
        self.name = String::new();
        self.data = Vec::new();
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

    /// A framing error. The SSE line grammar accepts any input and batches are valid UTF-8, so
    /// this stays `None` (kept for callers that report it).
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
        if self.last_fed.is_none() && batch.starts_with(UTF8_BOM) {
            // The stream's first bytes: a leading BOM is not part of the first line.
            batch = batch.slice(UTF8_BOM.len()..);
        }
        self.last_fed = batch.last().copied().or(Some(b'\n'));
        let batch_len = batch.len() as u64;
        let before = out.len();
        // Read as bytes: data that is not UTF-8 is kept as it came (`RawEvent::bytes`).
        self.read_lines(&batch, received_at, out);
        self.since_event = match out.len() > before {
            true => 0,
            false => self.since_event.saturating_add(batch_len),
        };
    }

    /// Reads the complete lines of `text` (which ends with a line terminator), after a held
    /// line if there is one: `\r\n`, `\r` and `\n` each end a line. A last line ending in `\r`
    /// is held until the next byte shows whether a `\n` belongs to it.
    fn read_lines(&mut self, text: &[u8], received_at: Duration, out: &mut Vec<RawEvent>) {
        let mut text = text;
        let joined;
        if !self.held.is_empty() {
            let mut held = std::mem::take(&mut self.held);
            held.extend_from_slice(text);
            joined = held;
            text = &joined;
        }
        let bytes = text;
        let mut start = 0;
        while start < bytes.len() {
            let Some(offset) = bytes[start..].iter().position(is_line_end) else {
                // Not reached: batches end with a line terminator.
                break;
            };
            let end = start + offset;
            let after = match bytes[end] {
                b'\r' if end + 1 == bytes.len() => {
                    self.held = text[start..].to_vec();
                    return;
                }
                b'\r' if bytes[end + 1] == b'\n' => end + 2,
                _ => end + 1,
            };
            self.line(&text[start..end], received_at, out);
            start = after;
        }
    }

    /// One line of the stream (without its terminator), as the SSE standard reads it.
    fn line(&mut self, line: &[u8], received_at: Duration, out: &mut Vec<RawEvent>) {
        if line.is_empty() {
            self.dispatch(received_at, out);
            return;
        }
        if line.starts_with(b":") {
            return;
        }
        let (field, value) = match line.iter().position(|b| *b == b':') {
            Some(at) => {
                let value = &line[at + 1..];
                (&line[..at], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"event" => self.name = String::from_utf8_lossy(value).into_owned(),
            b"data" => {
                // Exactly the room needed: a long line is not doubled for its `\n`.
                self.data.reserve_exact(value.len() + 1);
                self.data.extend_from_slice(value);
                self.data.push(b'\n');
            }
            _ => {}
        }
    }

    /// A blank line: the event built so far, if it has data.
    fn dispatch(&mut self, received_at: Duration, out: &mut Vec<RawEvent>) {
        let name = std::mem::take(&mut self.name);
        let mut data = std::mem::take(&mut self.data);
        if data.is_empty() {
            return;
        }
        data.pop();
        let seq = self.next_seq;
        self.next_seq += 1;
        out.push(RawEvent::from_bytes(
            seq,
            received_at,
            (!name.is_empty() && name != "message").then_some(name),
            data,
        ));
    }
}
