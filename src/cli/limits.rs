//! The stream size limit flags shared by `send`, `stream` and `record`
//! (`--max-event-bytes`, `--max-response-bytes`).

use clap::Args;

use crate::core::stream::StreamLimits;
use crate::core::stream::limits::{DEFAULT_MAX_EVENT_BYTES, DEFAULT_MAX_RESPONSE_BYTES};

/// Size limits on a response stream: past either, the stream ends as `limit_exceeded` with what
/// arrived before kept.
#[derive(Debug, Clone, Copy, Args)]
pub struct LimitArgs {
    /// Largest accepted event of a response stream, in bytes.
    #[arg(long, default_value_t = DEFAULT_MAX_EVENT_BYTES)]
    max_event_bytes: u64,
    /// Largest accepted response stream, in bytes (what follows is not read).
    #[arg(long, default_value_t = DEFAULT_MAX_RESPONSE_BYTES)]
    max_response_bytes: u64,
}

impl LimitArgs {
    /// The limits these flags ask for.
    pub fn limits(&self) -> StreamLimits {
        StreamLimits {
            max_event_bytes: self.max_event_bytes,
            max_response_bytes: self.max_response_bytes,
        }
    }
}
