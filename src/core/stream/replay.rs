//! The one replay of a stored request: [`Replay`] hands its stored raw events, each with its
//! recorded receive time, to a [`StreamReader`] directly (no framing as SSE and decoding again)
//! and says when each is due under a [`Timing`] — at its recorded time, scaled (`4x`), or at
//! once. The recorded times are what the reader, and so the timeline and the outcome, are
//! stamped with, whatever the pace: an instant replay shows the times of the recording.
//!
//! Pure: the pace is a decision over times passed in ([`Timing::due`], [`Timing::wait`]); the
//! sleeping is the caller's (the replay endpoint in `transport`, the app's replay job, the CLI's
//! `replay`).

use std::str::FromStr;
use std::time::Duration;

use super::events::header_events;
use super::{RawEvent, StreamReader, TimelineEntry, TurnOutcome};

/// How fast recorded events are replayed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Timing {
    /// Each event at its recorded receive time.
    Original,
    /// Everything at once.
    Instant,
    /// The recorded times divided by this factor (`4x` is 4.0).
    Speed(f64),
}

impl FromStr for Timing {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "original" | "1x" => Ok(Self::Original),
            "instant" => Ok(Self::Instant),
            other => {
                let factor = other
                    .strip_suffix('x')
                    .and_then(|f| f.parse::<f64>().ok())
                    .filter(|f| f.is_finite() && *f > 0.0)
                    .ok_or_else(|| {
                        format!("`{other}` is not a timing (original, instant, or a speed like 4x)")
                    })?;
                Ok(Self::Speed(factor))
            }
        }
    }
}

impl Timing {
    /// When an event recorded at `at` (since its request started) is due, since the replay of
    /// that request started.
    pub fn due(self, at: Duration) -> Duration {
        match self {
            Self::Original => at,
            Self::Instant => Duration::ZERO,
            Self::Speed(factor) => {
                Duration::try_from_secs_f64(at.as_secs_f64() / factor).unwrap_or(Duration::MAX)
            }
        }
    }

    /// How long to wait, `elapsed` into the replay, before handing over what was recorded at
    /// `at`: nothing once it is due.
    pub fn wait(self, at: Duration, elapsed: Duration) -> Duration {
        self.due(at).saturating_sub(elapsed)
    }
}

/// One step of a replay and when it is due.
#[derive(Debug, Clone, PartialEq)]
pub struct Paced {
    /// When to hand it over, since the replay started ([`Timing::due`] of `recorded_at`).
    pub due: Duration,
    /// When it was recorded, since its request started.
    pub recorded_at: Duration,
    /// What is handed over.
    pub step: Replayed,
}

impl Paced {
    /// How long to wait, `elapsed` into the replay, before handing this over.
    pub fn wait(&self, elapsed: Duration) -> Duration {
        self.due.saturating_sub(elapsed)
    }
}

/// What a replay hands over: one per stored event, then the end.
#[derive(Debug, Clone, PartialEq)]
pub enum Replayed {
    /// A stored event the reader read: its timeline entry (which holds the event).
    Entry(TimelineEntry),
    /// A stored event the reader did not read, given back as stored: it came after the turn had
    /// ended (a client never sees it), or it was past a size limit.
    Unread(RawEvent),
    /// The recorded end of the request (after its last event): the replayed outcome.
    End(Box<TurnOutcome>),
}

/// The replay of one stored request's events: an iterator of [`Paced`] steps, one per stored
/// event in order, then [`Replayed::End`].
#[derive(Debug)]
pub struct Replay<I> {
    events: I,
    reader: StreamReader,
    timing: Timing,
    /// The recorded end; never before the last event.
    end: Duration,
    ended: bool,
}

impl<I: Iterator<Item = RawEvent>> Replay<I> {
    /// The replay of `events` (stored raw events in order, with their recorded times) answered
    /// with `response_headers` (read as the client reads them, at time zero), which ended at
    /// `end` (the recorded total; the last event's time when that is later), paced by `timing`.
    pub fn new(
        events: impl IntoIterator<IntoIter = I>,
        response_headers: &[(String, String)],
        end: Duration,
        timing: Timing,
    ) -> Self {
        let mut reader = StreamReader::new();
        reader.apply_header_events(&header_events(response_headers), Duration::ZERO);
        Self {
            events: events.into_iter(),
            reader,
            timing,
            end,
            ended: false,
        }
    }

    /// The reader, with the outcome so far (a fresh one after [`Replayed::End`]).
    pub fn reader(&self) -> &StreamReader {
        &self.reader
    }

    /// The pace.
    pub fn timing(&self) -> Timing {
        self.timing
    }

    /// Reads the rest of the events at once and returns the replayed outcome (what a stored
    /// turn amounts to, without its entries).
    pub fn into_outcome(self) -> TurnOutcome {
        self.filter_map(|paced| match paced.step {
            Replayed::End(outcome) => Some(*outcome),
            Replayed::Entry(_) | Replayed::Unread(_) => None,
        })
        .next()
        .unwrap_or_default()
    }
}

impl<I: Iterator<Item = RawEvent>> Iterator for Replay<I> {
    type Item = Paced;

    fn next(&mut self) -> Option<Paced> {
        if self.ended {
            return None;
        }
        if let Some(raw) = self.events.next() {
            let at = raw.received_at;
            self.end = self.end.max(at);
            let step = match self.reader.push_event(raw) {
                Ok(entry) => Replayed::Entry(entry),
                Err(raw) => Replayed::Unread(raw),
            };
            return Some(Paced {
                due: self.timing.due(at),
                recorded_at: at,
                step,
            });
        }
        self.ended = true;
        let end = self.end;
        // Stored events were read whole: nothing is left buffered to map at the end.
        let _ = self.reader.finish(end);
        let outcome = std::mem::take(&mut self.reader).into_outcome();
        Some(Paced {
            due: self.timing.due(end),
            recorded_at: end,
            step: Replayed::End(Box::new(outcome)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::stream::read_all;
    use pretty_assertions::assert_eq;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// Recorded at 0, 120, 500 and 800 ms.
    const RECORDED: [u64; 4] = [0, 120, 500, 800];

    #[test]
    fn timings_parse() {
        assert_eq!("original".parse(), Ok(Timing::Original));
        assert_eq!("1x".parse(), Ok(Timing::Original));
        assert_eq!("instant".parse(), Ok(Timing::Instant));
        assert_eq!("4x".parse(), Ok(Timing::Speed(4.0)));
        assert_eq!("0.5x".parse(), Ok(Timing::Speed(0.5)));
        for bad in ["fast", "0x", "-2x", "infx", "x", ""] {
            assert_eq!(
                bad.parse::<Timing>(),
                Err(format!(
                    "`{bad}` is not a timing (original, instant, or a speed like 4x)"
                ))
            );
        }
    }

    #[test]
    fn each_timing_says_when_each_recorded_event_is_due() {
        let due = |timing: Timing| -> Vec<Duration> {
            RECORDED.iter().map(|at| timing.due(ms(*at))).collect()
        };
        assert_eq!(
            due(Timing::Original),
            vec![ms(0), ms(120), ms(500), ms(800)]
        );
        assert_eq!(due(Timing::Instant), vec![ms(0), ms(0), ms(0), ms(0)]);
        assert_eq!(
            due(Timing::Speed(4.0)),
            vec![ms(0), ms(30), ms(125), ms(200)]
        );
        assert_eq!(
            Timing::Speed(f64::MIN_POSITIVE).due(ms(1)),
            Duration::MAX,
            "a due time past what a Duration holds is never"
        );
    }

    #[test]
    fn each_timing_says_how_long_to_wait_before_each_event() {
        // The replay has run 100 ms when each event is considered (a slow consumer).
        let waits = |timing: Timing| -> Vec<Duration> {
            RECORDED
                .iter()
                .map(|at| timing.wait(ms(*at), ms(100)))
                .collect()
        };
        assert_eq!(
            waits(Timing::Original),
            vec![ms(0), ms(20), ms(400), ms(700)]
        );
        assert_eq!(waits(Timing::Instant), vec![ms(0), ms(0), ms(0), ms(0)]);
        assert_eq!(
            waits(Timing::Speed(4.0)),
            vec![ms(0), ms(0), ms(25), ms(100)]
        );
    }

    fn event(seq: u64, at: u64, name: &str, data: &str) -> RawEvent {
        RawEvent {
            seq,
            received_at: ms(at),
            event: Some(name.to_string()),
            data: data.to_string(),
            bytes: None,
        }
    }

    /// A text answer recorded at [`RECORDED`], then one event after the completion.
    fn stored() -> Vec<RawEvent> {
        vec![
            event(
                0,
                0,
                "response.created",
                r#"{"type":"response.created","response":{"id":"resp_1"}}"#,
            ),
            event(
                1,
                120,
                "response.output_text.delta",
                r#"{"type":"response.output_text.delta","delta":"Hel"}"#,
            ),
            event(
                2,
                500,
                "response.output_text.delta",
                r#"{"type":"response.output_text.delta","delta":"lo"}"#,
            ),
            event(
                3,
                800,
                "response.completed",
                r#"{"type":"response.completed","response":{"id":"resp_1"}}"#,
            ),
            event(
                4,
                810,
                "response.output_text.delta",
                r#"{"type":"response.output_text.delta","delta":"!"}"#,
            ),
        ]
    }

    #[test]
    fn a_replay_reads_stored_events_as_their_sse_bytes_read_at_the_recorded_times() {
        let events = stored();
        // The same events as SSE bytes, each pushed at its recorded time.
        let mut reader = StreamReader::new();
        let mut expected = Vec::new();
        for event in &events {
            expected.extend(reader.push(&event.to_sse(), event.received_at));
        }
        expected.extend(reader.finish(ms(900)));
        let steps: Vec<Paced> =
            Replay::new(events.clone(), &[], ms(900), Timing::Speed(4.0)).collect();
        let mut entries = Vec::new();
        let mut paces = Vec::new();
        let mut outcome = None;
        for paced in steps {
            paces.push((paced.due, paced.recorded_at));
            match paced.step {
                Replayed::Entry(entry) => entries.push(entry),
                Replayed::Unread(raw) => assert_eq!(raw, events[4]),
                Replayed::End(end) => outcome = Some(*end),
            }
        }
        assert_eq!(entries, expected);
        assert_eq!(outcome.as_ref(), Some(reader.outcome()));
        assert_eq!(
            paces,
            vec![
                (ms(0), ms(0)),
                (ms(30), ms(120)),
                (ms(125), ms(500)),
                (ms(200), ms(800)),
                (ms(202) + Duration::from_micros(500), ms(810)),
                (ms(225), ms(900)),
            ]
        );
    }

    #[test]
    fn the_end_is_never_before_the_last_event() {
        let steps: Vec<(Duration, Duration)> = Replay::new(stored(), &[], ms(0), Timing::Original)
            .map(|p| (p.due, p.recorded_at))
            .collect();
        assert_eq!(steps.last(), Some(&(ms(810), ms(810))));
    }

    #[test]
    fn an_event_past_the_response_limit_is_given_back_unread() {
        let events = stored();
        let limit = events[0].sse_len() + events[1].sse_len();
        let mut reader = StreamReader::with_limits(crate::core::stream::StreamLimits {
            max_response_bytes: limit,
            ..Default::default()
        });
        let mut read = Vec::new();
        for event in events.iter().take(3) {
            read.push(reader.push_event(event.clone()).map(|e| e.raw.seq));
        }
        assert_eq!(read, vec![Ok(0), Ok(1), Err(events[2].clone())]);
        assert_eq!(reader.bytes_received(), limit);
        // The same bytes pushed as SSE end the same way.
        let sse: Vec<u8> = events.iter().take(3).flat_map(RawEvent::to_sse).collect();
        let mut pushed = StreamReader::with_limits(reader.limits());
        pushed.push(&sse, ms(500));
        assert_eq!(
            pushed.outcome().state,
            reader.outcome().state,
            "limit_exceeded either way"
        );
    }

    #[test]
    fn sse_len_is_the_length_of_the_sse_bytes() {
        let events = [
            event(0, 0, "a", ""),
            event(1, 0, "response.created", "{}"),
            RawEvent {
                seq: 2,
                received_at: ms(0),
                event: None,
                data: "line one\nline two\n\nfour".to_string(),
                bytes: None,
            },
        ];
        let lens: Vec<(u64, u64)> = events
            .iter()
            .map(|e| (e.sse_len(), e.to_sse().len() as u64))
            .collect();
        assert_eq!(lens, vec![(17, 17), (34, 34), (49, 49)]);
        // And decoding the stream of them gives the events back.
        let bytes: Vec<u8> = events.iter().flat_map(RawEvent::to_sse).collect();
        let (entries, _) = read_all(&bytes, ms(0));
        let raws: Vec<RawEvent> = entries.into_iter().map(|e| e.raw).collect();
        assert_eq!(raws, events);
    }
}
