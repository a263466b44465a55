//! Replaying recordings: a stored session loaded with its requests, raw events and responses
//! ([`Recording`]), and the pace at which recorded events are handed out again ([`Timing`]:
//! their original receive times, scaled, or at once). Shared by `promptwire replay` (which prints
//! the stream as `stream` does) and the replay endpoint ([`crate::transport::replay_server`]).

use std::str::FromStr;
use std::time::Duration;

use serde_json::Value;

use crate::core::stream::RawEvent;
use crate::store::{OutcomeRecord, Page, Store, StoreError};

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
}

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
    /// A non-SSE answer's body (an error's).
    pub response_body: Option<String>,
    /// Raw events in order, with their receive times.
    pub events: Vec<RawEvent>,
    /// How it ended.
    pub outcome: Option<OutcomeRecord>,
}

impl RecordedRequest {
    /// The recorded duration: the outcome's total, else the last event's receive time.
    pub fn duration(&self) -> Duration {
        let last = self.events.last().map_or(Duration::ZERO, |e| e.received_at);
        self.outcome
            .as_ref()
            .and_then(|o| o.total_us)
            .and_then(|us| u64::try_from(us).ok())
            .map_or(last, |us| Duration::from_micros(us).max(last))
    }

    /// True when the answer was an SSE stream (2xx with events, or events at all).
    pub fn is_stream(&self) -> bool {
        !self.events.is_empty() || self.response_body.is_none()
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
            let record = store.request(summary.id)?;
            requests.push(RecordedRequest {
                id: summary.id,
                position: summary.position,
                url: summary.url.clone(),
                body: store.body(summary.id)?.value,
                status: summary.status,
                response_headers: record.response_headers,
                response_body: record.response_body,
                events: store.events(summary.id, Page::ALL)?,
                outcome: store.outcome(summary.id)?,
            });
        }
        Ok(Self {
            session_id,
            name: session.name,
            requests,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timings_parse_and_scale() {
        assert_eq!("original".parse(), Ok(Timing::Original));
        assert_eq!("instant".parse(), Ok(Timing::Instant));
        assert_eq!("4x".parse(), Ok(Timing::Speed(4.0)));
        assert_eq!(
            "fast".parse::<Timing>(),
            Err("`fast` is not a timing (original, instant, or a speed like 4x)".to_string())
        );
        assert!("0x".parse::<Timing>().is_err());
        let at = Duration::from_millis(800);
        assert_eq!(Timing::Original.due(at), at);
        assert_eq!(Timing::Instant.due(at), Duration::ZERO);
        assert_eq!(Timing::Speed(4.0).due(at), Duration::from_millis(200));
    }
}
