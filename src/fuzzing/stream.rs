//! Target `sse_stream`: the SSE decoder and the event mapper ([`crate::core::stream`]).
//!
//! Input: one control byte, then the stream's bytes. The control byte picks the chunk sizes the
//! bytes are pushed in and, with its high bit set, small size limits. Invariants checked:
//! - any split of the bytes into chunks decodes to the same events (the decoder's contract) and
//!   maps to the same timeline and outcome;
//! - an event's SSE encoding ([`RawEvent::to_sse`]) decodes back to the same name and data;
//! - after `finish` the turn has ended (completed or failed), with or without limits.
//!
//! The same bytes are also read as a non-2xx answer — `name: value` header lines up to the first
//! blank line, then the body — and classified ([`classify_http_error`], [`header_events`],
//! [`header_retry_after`]), as the transport does before any stream.

use std::time::Duration;

use crate::core::stream::events::header_events;
use crate::core::stream::http_error::{classify_http_error, header_retry_after};
use crate::core::stream::{RawEvent, SseDecoder, StreamLimits, StreamReader};

/// Decodes and maps `data` (see the module header); panics only on a broken invariant.
pub fn sse_stream(data: &[u8]) {
    let Some((&control, bytes)) = data.split_first() else {
        return;
    };
    let chunks = chunks(bytes, control);
    http_answer(bytes, control);

    let whole = decode(&[bytes]);
    let split = decode(&chunks);
    assert_eq!(
        whole, split,
        "a split into chunks changed the decoded events"
    );
    for event in &whole {
        let again = decode(&[&event.to_sse()]);
        assert_eq!(
            again.iter().map(name_and_data).collect::<Vec<_>>(),
            vec![name_and_data(event)],
            "an event's SSE encoding does not decode back to it"
        );
    }

    let (whole_entries, whole_outcome) = read(&[bytes], StreamLimits::default());
    let (split_entries, split_outcome) = read(&chunks, StreamLimits::default());
    assert_eq!(whole_entries, split_entries, "a split changed the timeline");
    assert_eq!(whole_outcome, split_outcome, "a split changed the outcome");

    if control & 0x80 != 0 {
        let small = StreamLimits {
            max_event_bytes: 1 + u64::from(control & 0x0f) * 64,
            max_response_bytes: 1 + u64::from((control >> 4) & 0x07) * 256,
        };
        read(&chunks, small);
    }
}

/// Reads `bytes` as the headers and body of an HTTP answer whose status `control` picks (400 to
/// 599) and classifies it; the header events also go through a reader.
fn http_answer(bytes: &[u8], control: u8) {
    let text = String::from_utf8_lossy(bytes);
    let (head, body) = text.split_once("\n\n").unwrap_or((&text, ""));
    let headers: Vec<(String, String)> = head
        .lines()
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_string(), value.trim().to_string()))
        .collect();
    let status = 400 + u16::from(control) % 200;
    let error = classify_http_error(status, &headers, body, "http://127.0.0.1:1/v1/responses");
    let _ = (error.class(), error.is_retryable(), error.retry_after());
    let _ = header_retry_after(&headers);
    let mut reader = StreamReader::new();
    reader.apply_header_events(&header_events(&headers), Duration::ZERO);
}

/// The name and data of an event (what its encoding must give back).
fn name_and_data(event: &RawEvent) -> (Option<&str>, &str) {
    (event.event.as_deref(), event.data.as_str())
}

/// `bytes` cut into chunks whose sizes cycle through a short sequence derived from `control`
/// (0: one chunk).
fn chunks(bytes: &[u8], control: u8) -> Vec<&[u8]> {
    if control & 0x7f == 0 {
        return vec![bytes];
    }
    let mut state = u32::from(control);
    let mut out = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        let size = 1 + (state >> 16) as usize % 17;
        let (chunk, tail) = rest.split_at(size.min(rest.len()));
        out.push(chunk);
        rest = tail;
    }
    out
}

/// Decodes `chunks` with one decoder, every chunk received at time zero.
fn decode(chunks: &[&[u8]]) -> Vec<RawEvent> {
    let mut decoder = SseDecoder::new();
    let mut events = Vec::new();
    for chunk in chunks {
        events.extend(decoder.push(chunk, Duration::ZERO));
    }
    events.extend(decoder.finish(Duration::ZERO));
    events
}

/// Reads `chunks` as one turn under `limits`, every chunk received at time zero; the turn must
/// have ended after `finish`.
fn read(
    chunks: &[&[u8]],
    limits: StreamLimits,
) -> (
    Vec<crate::core::stream::TimelineEntry>,
    crate::core::stream::TurnOutcome,
) {
    let mut reader = StreamReader::with_limits(limits);
    let mut entries = Vec::new();
    for chunk in chunks {
        entries.extend(reader.push(chunk, Duration::ZERO));
    }
    entries.extend(reader.finish(Duration::ZERO));
    assert!(reader.is_done(), "the turn has not ended after finish");
    (entries, reader.into_outcome())
}
