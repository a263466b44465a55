//! SSE decoding from bytes: any split into chunks gives the same events (proptest, over the
//! recorded streams in `tests/data/sse/` and, when present, the shared Codex CLI 0.169 captures);
//! CRLF and CR line ends, multi-line `data:`, comments and keep-alives, a BOM, invalid UTF-8,
//! events without data, an unterminated last event, and a 10 MB single event.

use crate::support::shared;

use std::path::{Path, PathBuf};
use std::time::Duration;

use pretty_assertions::assert_eq;
use promptwire::core::stream::{RawEvent, SseDecoder, StreamReader, TimelineEntry, TurnOutcome};
use proptest::prelude::*;

fn raw(seq: u64, event: Option<&str>, data: &str) -> RawEvent {
    RawEvent {
        seq,
        received_at: Duration::ZERO,
        event: event.map(str::to_string),
        data: data.to_string(),
        bytes: None,
    }
}

/// Decodes `bytes` pushed in the given chunks.
fn decode_chunks(chunks: &[&[u8]]) -> Vec<RawEvent> {
    let mut decoder = SseDecoder::new();
    let mut events = Vec::new();
    for chunk in chunks {
        events.extend(decoder.push(chunk, Duration::ZERO));
    }
    events.extend(decoder.finish(Duration::ZERO));
    assert_eq!(decoder.error(), None);
    events
}

fn decode(bytes: &[u8]) -> Vec<RawEvent> {
    decode_chunks(&[bytes])
}

/// Decodes byte by byte: the hardest split.
fn decode_bytewise(bytes: &[u8]) -> Vec<RawEvent> {
    let chunks: Vec<&[u8]> = bytes.chunks(1).collect();
    decode_chunks(&chunks)
}

/// Reads a whole stream split at `cuts` (sorted offsets), returning entries and outcome.
fn read_split(bytes: &[u8], cuts: &[usize]) -> (Vec<TimelineEntry>, TurnOutcome) {
    let mut reader = StreamReader::new();
    let mut entries = Vec::new();
    let mut start = 0;
    for &cut in cuts.iter().chain(std::iter::once(&bytes.len())) {
        let cut = cut.clamp(start, bytes.len());
        entries.extend(reader.push(&bytes[start..cut], Duration::ZERO));
        start = cut;
    }
    entries.extend(reader.finish(Duration::ZERO));
    (entries, reader.into_outcome())
}

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sse")
}

/// Our recorded streams, plus the shared captures when `../shared` is there.
fn recorded_streams() -> Vec<(String, Vec<u8>)> {
    let mut dirs = vec![data_dir()];
    if let Some(shared) = shared::shared_fixtures("codex-cli-0.169/two-turns-tools-session") {
        dirs.push(shared);
    }
    let mut out = Vec::new();
    for dir in dirs {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
            .expect("fixture dir")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "sse"))
            .collect();
        paths.sort();
        for path in paths {
            let bytes = std::fs::read(&path).expect("fixture");
            out.push((path.display().to_string(), bytes));
        }
    }
    assert!(
        out.len() >= 8,
        "expected the recorded streams in {dir:?}",
        dir = data_dir()
    );
    out
}

#[test]
fn line_endings_lf_crlf_cr_give_the_same_events() {
    let lf = "event: a\ndata: {\"type\":\"x\"}\n\nevent: b\ndata: 1\ndata: 2\n\n";
    let crlf = lf.replace('\n', "\r\n");
    let cr = lf.replace('\n', "\r");
    let expected = vec![
        raw(0, Some("a"), "{\"type\":\"x\"}"),
        raw(1, Some("b"), "1\n2"),
    ];
    for text in [lf.to_string(), crlf, cr] {
        assert_eq!(decode(text.as_bytes()), expected, "{text:?}");
        assert_eq!(decode_bytewise(text.as_bytes()), expected, "{text:?}");
    }
    // Mixed line ends in one stream, CRLF split across chunks.
    let mixed = b"data: one\r\n\rdata: two\r\rdata: three\n\r\n";
    let expected = vec![
        raw(0, None, "one"),
        raw(1, None, "two"),
        raw(2, None, "three"),
    ];
    assert_eq!(decode(mixed), expected);
    assert_eq!(decode_bytewise(mixed), expected);
    assert_eq!(
        decode_chunks(&[b"data: one\r", b"\n\r", b"\ndata: x\r", b"\r"]),
        vec![raw(0, None, "one"), raw(1, None, "x")]
    );
}

#[test]
fn multi_line_data_comments_keep_alives_and_fields() {
    let text = ": connected\n\n\
                : keep-alive\n\
                retry: 1500\n\
                id: 7\n\
                event: response.output_text.delta\n\
                data: {\"type\":\n\
                data:\"response.output_text.delta\",\n\
                data:  \"delta\":\"a\"}\n\
                : a comment inside an event\n\
                unknown-field: ignored\n\
                \n\
                : ping\n\n\
                : ping\n\n\
                event: message\n\
                data\n\
                data\n\
                \n";
    let expected = vec![
        raw(
            0,
            Some("response.output_text.delta"),
            "{\"type\":\n\"response.output_text.delta\",\n \"delta\":\"a\"}",
        ),
        // `data` without a colon is an empty line of data; SSE's default type shows as None.
        raw(1, None, "\n"),
    ];
    assert_eq!(decode(text.as_bytes()), expected);
    assert_eq!(decode_bytewise(text.as_bytes()), expected);
    // The multi-line JSON still maps.
    let (entries, _) = read_split(text.as_bytes(), &[]);
    assert_eq!(entries[0].mapped_kind(), Some("output_text_delta"));
    assert!(entries[1].unparsed.is_some());
}

#[test]
fn events_without_data_are_not_events() {
    // No `data:` line: nothing is dispatched. An empty `data:` line is an event with empty data.
    let text = "event: response.in_progress\n\nevent: a\ndata:\n\n: only a comment\n\ndata: x\n\n";
    assert_eq!(
        decode(text.as_bytes()),
        vec![raw(0, Some("a"), ""), raw(1, None, "x")]
    );
}

#[test]
fn bom_is_skipped_only_at_the_start() {
    let mut bytes = vec![0xEF, 0xBB, 0xBF];
    bytes.extend_from_slice(b"data: first\n\n");
    let expected = vec![raw(0, None, "first")];
    assert_eq!(decode(&bytes), expected);
    assert_eq!(decode_bytewise(&bytes), expected);
    // The BOM split over chunks.
    assert_eq!(
        decode_chunks(&[&bytes[..1], &bytes[1..2], &bytes[2..]]),
        expected
    );
    // Not at the start (a second BOM, or one after the first event): it is part of the field
    // name, so the line is an unknown field.
    let later = "data: a\n\n\u{feff}data: b\n\n";
    assert_eq!(decode(later.as_bytes()), vec![raw(0, None, "a")]);
    let twice = "\u{feff}\u{feff}data: a\n\ndata: b\n\n";
    assert_eq!(decode(twice.as_bytes()), vec![raw(0, None, "b")]);
    assert_eq!(decode_bytewise(twice.as_bytes()), vec![raw(0, None, "b")]);
}

#[test]
fn invalid_utf8_is_kept_as_bytes_beside_its_text_view() {
    let bytes =
        b"data: {\"type\":\"response.output_text.delta\",\"delta\":\"a\xFFb\"}\n\ndata: ok\n\n";
    let expected = vec![
        RawEvent {
            bytes: Some(b"{\"type\":\"response.output_text.delta\",\"delta\":\"a\xFFb\"}".to_vec()),
            ..raw(
                0,
                None,
                "{\"type\":\"response.output_text.delta\",\"delta\":\"a\u{FFFD}b\"}",
            )
        },
        raw(1, None, "ok"),
    ];
    assert_eq!(decode(bytes), expected);
    assert_eq!(decode_bytewise(bytes), expected);
    // A multi-byte character split across chunks is not damaged.
    let text = "data: caf\u{e9} \u{1F980}\n\n";
    let expected = vec![raw(0, None, "caf\u{e9} \u{1F980}")];
    assert_eq!(decode_bytewise(text.as_bytes()), expected);
}

#[test]
fn unterminated_last_event_is_discarded() {
    assert_eq!(decode(b"data: a\n\ndata: b\n"), vec![raw(0, None, "a")]);
    assert_eq!(decode(b"data: a\n\ndata: b"), vec![raw(0, None, "a")]);
    // A blank line made of a lone CR at end of stream does end the event.
    assert_eq!(decode(b"data: a\r\r"), vec![raw(0, None, "a")]);
    assert_eq!(decode(b"data: a\n\r"), vec![raw(0, None, "a")]);
    // Bytes pushed after finish are ignored.
    let mut decoder = SseDecoder::new();
    decoder.push(b"data: a", Duration::ZERO);
    assert_eq!(decoder.pending_bytes(), 7);
    assert_eq!(decoder.finish(Duration::ZERO), vec![]);
    assert_eq!(decoder.push(b"\n\ndata: b\n\n", Duration::ZERO), vec![]);
}

#[test]
fn events_carry_the_time_of_the_chunk_that_completed_them() {
    let mut decoder = SseDecoder::new();
    assert_eq!(decoder.push(b"data: a\n", Duration::from_millis(5)), vec![]);
    let second = decoder.push(b"\ndata: b\n\ndata: c", Duration::from_millis(9));
    let third = decoder.push(b"\n\n", Duration::from_millis(20));
    let mk = |seq, data: &str, ms| RawEvent {
        seq,
        received_at: Duration::from_millis(ms),
        event: None,
        data: data.to_string(),
        bytes: None,
    };
    assert_eq!(second, vec![mk(0, "a", 9), mk(1, "b", 9)]);
    assert_eq!(third, vec![mk(2, "c", 20)]);
    assert_eq!(decoder.events_decoded(), 3);
}

#[test]
fn ten_megabyte_single_event() {
    let delta = "x".repeat(10 * 1024 * 1024);
    let data = format!("{{\"type\":\"response.output_text.delta\",\"delta\":\"{delta}\"}}");
    let done = "{\"type\":\"response.completed\",\"response\":{\"id\":\"resp_big\"}}";
    let stream = format!("event: response.output_text.delta\ndata: {data}\n\ndata: {done}\n\n");
    let bytes = stream.as_bytes();
    // As a network would deliver it: 16 KiB chunks.
    let chunks: Vec<&[u8]> = bytes.chunks(16 * 1024).collect();
    let started = std::time::Instant::now();
    let mut reader = StreamReader::new();
    let mut entries = Vec::new();
    for chunk in &chunks {
        entries.extend(reader.push(chunk, Duration::ZERO));
    }
    entries.extend(reader.finish(Duration::ZERO));
    let elapsed = started.elapsed();
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0].raw.data, data);
    // The text kept for display is bounded; the event keeps every byte.
    let kept = promptwire::core::stream::outcome::MAX_KEPT_TEXT_BYTES;
    assert_eq!(reader.outcome().text, delta[..kept]);
    assert_eq!(reader.outcome().left_out, (delta.len() - kept) as u64);
    assert_eq!(reader.outcome().response_id(), Some("resp_big"));
    // Linear, not quadratic, in the line length: re-scanning the buffered line for every 16 KiB
    // chunk would take many minutes; the bound is generous for debug builds on a loaded machine.
    assert!(elapsed < Duration::from_secs(60), "took {elapsed:?}");
    // The same event in one push.
    let events = decode(bytes);
    assert_eq!(events.len(), 2);
    assert_eq!(events[0].data.len(), data.len());
}

#[test]
fn every_recorded_stream_decodes_the_same_bytewise() {
    for (name, bytes) in recorded_streams() {
        let whole = read_split(&bytes, &[]);
        let cuts: Vec<usize> = (1..bytes.len()).collect();
        let bytewise = read_split(&bytes, &cuts);
        assert_eq!(whole, bytewise, "{name}");
        assert!(whole.1.events > 0, "{name}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any split of a recorded stream gives the same entries and outcome.
    #[test]
    fn chunk_boundaries_do_not_matter(
        index in 0usize..64,
        raw_cuts in proptest::collection::vec(0usize..100_000, 0..40),
    ) {
        let streams = recorded_streams();
        let (name, bytes) = &streams[index % streams.len()];
        let mut cuts: Vec<usize> = raw_cuts.into_iter().map(|c| c % (bytes.len() + 1)).collect();
        cuts.sort_unstable();
        let expected = read_split(bytes, &[]);
        let split = read_split(bytes, &cuts);
        prop_assert_eq!(&split, &expected, "{} split at {:?}", name, cuts);
    }

    /// Arbitrary SSE-ish text (fields, comments, mixed line ends) decodes the same whatever the
    /// chunking, and never panics.
    #[test]
    fn arbitrary_text_is_chunk_invariant(
        lines in proptest::collection::vec(
            (prop_oneof![
                Just("data: "), Just("data:"), Just("event: "), Just(": "), Just("id: "),
                Just("retry: 10"), Just(""), Just("data")
            ], "[a-z{}\":, \u{e9}]{0,12}", prop_oneof![Just("\n"), Just("\r\n"), Just("\r")]),
            0..30,
        ),
        raw_cuts in proptest::collection::vec(0usize..2_000, 0..20),
    ) {
        let text: String = lines
            .into_iter()
            .map(|(field, value, eol)| format!("{field}{value}{eol}"))
            .collect();
        let bytes = text.as_bytes();
        let mut cuts: Vec<usize> = raw_cuts.into_iter().map(|c| c % (bytes.len() + 1)).collect();
        cuts.sort_unstable();
        cuts.dedup();
        let mut chunks = Vec::new();
        let mut start = 0;
        for cut in cuts {
            chunks.push(&bytes[start..cut]);
            start = cut;
        }
        chunks.push(&bytes[start..]);
        prop_assert_eq!(decode_chunks(&chunks), decode(bytes));
    }

    /// Arbitrary bytes (invalid UTF-8, BOMs, stray CRs) never panic and are chunk invariant.
    #[test]
    fn arbitrary_bytes_never_panic(
        bom in proptest::bool::ANY,
        body in proptest::collection::vec(
            prop_oneof![
                Just(b'\n'), Just(b'\r'), Just(b':'), Just(b' '), Just(0xEF), Just(0xBB),
                Just(0xBF), Just(0xFF), Just(b'd'), Just(b'a'), Just(b't'), any::<u8>()
            ],
            0..200,
        ),
        cut in 0usize..200,
    ) {
        let mut bytes = if bom { vec![0xEF, 0xBB, 0xBF] } else { Vec::new() };
        bytes.extend(body);
        let cut = cut.min(bytes.len());
        let whole = decode(&bytes);
        prop_assert_eq!(decode_chunks(&[&bytes[..cut], &bytes[cut..]]), whole.clone());
        prop_assert_eq!(decode_bytewise(&bytes), whole);
    }
}
