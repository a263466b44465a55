//! Limits on what comes back: the size of one SSE event and of a whole response, checked by
//! [`StreamReader`](super::StreamReader) while bytes are fed (the core reads no clock: the
//! overall deadline of a send is the transport's, and only its error is built here). A stream
//! that reaches a limit ends as a [`StreamError::LimitExceeded`] failure; what arrived before it
//! is kept.

use std::time::Duration;

use super::errors::StreamError;

/// Default bound on one event (its data and any unfinished line): far above any real event.
pub const DEFAULT_MAX_EVENT_BYTES: u64 = 64 * 1024 * 1024;

/// Default bound on a whole response body: far above any real response.
pub const DEFAULT_MAX_RESPONSE_BYTES: u64 = 1024 * 1024 * 1024;

/// Size limits applied while a stream is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamLimits {
    /// Largest event: the bytes since the last completed event, including an unfinished line.
    pub max_event_bytes: u64,
    /// Largest response: every byte pushed.
    pub max_response_bytes: u64,
}

impl Default for StreamLimits {
    fn default() -> Self {
        Self {
            max_event_bytes: DEFAULT_MAX_EVENT_BYTES,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
        }
    }
}

impl StreamLimits {
    /// The failure of an event past [`StreamLimits::max_event_bytes`].
    pub fn event_too_large(&self) -> StreamError {
        StreamError::LimitExceeded {
            message: format!(
                "an event is larger than the limit of {} per event",
                human_size(self.max_event_bytes)
            ),
        }
    }

    /// The failure of a response past [`StreamLimits::max_response_bytes`].
    pub fn response_too_large(&self) -> StreamError {
        StreamError::LimitExceeded {
            message: format!(
                "the response is larger than the limit of {}",
                human_size(self.max_response_bytes)
            ),
        }
    }
}

/// The failure of a send still running when its overall `deadline` passed.
pub fn deadline_passed(deadline: Duration) -> StreamError {
    StreamError::LimitExceeded {
        message: format!(
            "the send's deadline of {:.3} s passed",
            deadline.as_secs_f64()
        ),
    }
}

/// A size in GiB/MiB/KiB/bytes for messages (`32.0 MiB`, `100 bytes`).
pub fn human_size(bytes: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = KIB * 1024;
    const GIB: u64 = MIB * 1024;
    match bytes {
        b if b >= GIB => format!("{:.1} GiB", b as f64 / GIB as f64),
        b if b >= MIB => format!("{:.1} MiB", b as f64 / MIB as f64),
        b if b >= KIB => format!("{:.1} KiB", b as f64 / KIB as f64),
        b => format!("{b} bytes"),
    }
}
