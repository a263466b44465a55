//! The SSE decoder against the `eventsource-stream` crate it replaced: on many generated streams
//! (every line end, comments, unnamed and named events, `id:`/`retry:`, fields without a colon,
//! a leading BOM, invalid UTF-8, events without data, an unfinished last event), pushed whole
//! and in small chunks, both give the same events (name and data) in the same order. The crate
//! is fed the stream as the decoder's crate-driven version fed it: after the BOM, and with an
//! unfinished last line ended at end of stream.

use crate::support::xorshift;

use std::time::Duration;

use eventsource_stream::Eventsource as _;
use futures_util::StreamExt as _;
use pretty_assertions::assert_eq;
use promptwire::core::stream::SseDecoder;

use xorshift::Xorshift;

/// Pieces streams are made of.
const PIECES: [&[u8]; 22] = [
    b"data: a",
    b"data:b",
    b"data",
    b"event: delta",
    b"event:",
    b"event: message",
    b": ping",
    b":",
    b"id: 7",
    b"retry: 10",
    b"x",
    b" ",
    b"\n",
    b"\r",
    b"\r\n",
    b"\n\n",
    b"\r\r",
    "é".as_bytes(),
    b"\xff",
    b"da",
    b"ta: c",
    b"\xEF\xBB\xBF",
];

fn crate_events(bytes: &[u8]) -> Vec<(Option<String>, String)> {
    // The crate strips a BOM by slicing a byte off a 3-byte character (a panic): compare
    // after the BOM, as the decoder skips it.
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut text = String::from_utf8_lossy(bytes).into_owned();
    // At end of stream the decoder ends an unfinished last line (or a `\r` that waits for a
    // `\n`), as its crate-driven version did by feeding the crate one more `\n`.
    if !text.ends_with('\n') {
        text.push('\n');
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let chunks = futures_util::stream::iter(vec![Ok::<_, std::convert::Infallible>(
            bytes::Bytes::from(format!("\n{text}")),
        )]);
        chunks
            .eventsource()
            .filter_map(|e| async move { e.ok() })
            .map(|e| ((e.event != "message").then_some(e.event), e.data))
            .collect()
            .await
    })
}

fn decoder_events(bytes: &[u8], chunk: usize) -> Vec<(Option<String>, String)> {
    let mut decoder = SseDecoder::new();
    let mut raws = Vec::new();
    for part in bytes.chunks(chunk.max(1)) {
        raws.extend(decoder.push(part, Duration::ZERO));
    }
    raws.extend(decoder.finish(Duration::ZERO));
    raws.into_iter().map(|r| (r.event, r.data)).collect()
}

#[test]
fn the_decoder_gives_the_crates_events() {
    let mut rng = Xorshift(0x9E37_79B9_7F4A_7C15);
    for case in 0..3000 {
        let len = 1 + rng.next() % 40;
        let mut bytes = Vec::new();
        for _ in 0..len {
            bytes.extend_from_slice(PIECES[(rng.next() % PIECES.len() as u64) as usize]);
        }
        // Valid UTF-8 only for the crate (it is fed text); invalid bytes become U+FFFD in both.
        let expected = crate_events(&bytes);
        for chunk in [bytes.len(), 1, 3, 7] {
            assert_eq!(
                decoder_events(&bytes, chunk),
                expected,
                "case {case}, chunks of {chunk}: {:?}",
                String::from_utf8_lossy(&bytes)
            );
        }
    }
}
