//! The one replay reads stored events as the stream they came from: for every recorded SSE file
//! of `tests/data/sse`, its events decoded (as the recorder stores them, each at its own time)
//! and replayed through [`Replay`] give the same entries and outcome as the file's bytes read
//! event by event at those times — without framing the stored events as SSE again.

use std::path::Path;
use std::time::Duration;

use pretty_assertions::assert_eq;
use promptwire::core::stream::{
    Paced, RawEvent, Replay, Replayed, SseDecoder, StreamReader, Timing,
};

/// The file's raw events as a recorder stores them, the `n`th received at `n × 7` ms.
fn recorded(name: &str) -> Vec<RawEvent> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/sse")
        .join(name);
    let bytes = std::fs::read(path).expect("fixture");
    let mut decoder = SseDecoder::new();
    let mut events = decoder.push(&bytes, Duration::ZERO);
    events.extend(decoder.finish(Duration::ZERO));
    for event in &mut events {
        event.received_at = Duration::from_millis(event.seq * 7);
    }
    events
}

#[test]
fn stored_events_replay_as_the_stream_they_came_from() {
    let mut names: Vec<String> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sse"))
            .expect("fixtures")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".sse"))
            .collect();
    names.sort();
    assert_eq!(names.len(), 8, "{names:?}");
    for name in &names {
        let events = recorded(name);
        let end = Duration::from_millis(events.len() as u64 * 7 + 3);
        // The oracle: each event's own SSE bytes pushed at its time, as a live read would.
        let mut reader = StreamReader::new();
        let mut expected = Vec::new();
        for event in &events {
            expected.extend(reader.push(&event.to_sse(), event.received_at));
        }
        expected.extend(reader.finish(end));
        let mut entries = Vec::new();
        let mut unread = Vec::new();
        let mut outcome = None;
        let mut recorded_at = Vec::new();
        for Paced {
            due,
            recorded_at: at,
            step,
        } in Replay::new(events.clone(), &[], end, Timing::Instant)
        {
            assert_eq!(due, Duration::ZERO, "{name}: instant");
            recorded_at.push(at);
            match step {
                Replayed::Entry(entry) => entries.push(entry),
                Replayed::Unread(raw) => unread.push(raw),
                Replayed::End(end) => outcome = Some(*end),
            }
        }
        assert_eq!(entries, expected, "{name}");
        assert_eq!(outcome.as_ref(), Some(reader.outcome()), "{name}");
        // Every stored event is handed over, read or not, and the end comes last.
        let mut times: Vec<Duration> = events.iter().map(|e| e.received_at).collect();
        times.push(end);
        assert_eq!(recorded_at, times, "{name}");
        assert_eq!(unread, events[entries.len()..].to_vec(), "{name}");
    }
}
