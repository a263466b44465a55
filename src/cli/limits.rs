//! The stream size limit flags shared by `send`, `stream` and `record`
//! (`--max-event-bytes`, `--max-response-bytes`), and the connection limit flags of the two
//! servers, `record` and `replay --listen` (`--header-timeout-secs`, `--body-timeout-secs`,
//! `--request-deadline-secs`, `--max-connections`, `--max-connections-per-peer`).

use std::time::Duration;

use clap::Args;

use crate::transport::proxy::listen::ConnectionLimits;

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

/// The connection limit flags shared by `record` and `replay --listen`.
#[derive(Debug, Clone, Copy, Args)]
pub struct ConnectionArgs {
    /// Seconds a client has to send a request's head.
    #[arg(long, default_value_t = 10)]
    header_timeout_secs: u64,
    /// Seconds a client may pause while sending a request body.
    #[arg(long, default_value_t = 10)]
    body_timeout_secs: u64,
    /// Seconds a client has to send a whole request (head and body).
    #[arg(long, default_value_t = 60)]
    request_deadline_secs: u64,
    /// Open client connections at most.
    #[arg(long, default_value_t = 512)]
    max_connections: usize,
    /// Open client connections one peer address may hold at most.
    #[arg(long, default_value_t = 448)]
    max_connections_per_peer: usize,
}

impl ConnectionArgs {
    /// The limits these flags ask for (the slots kept for new peers: 1/32 of the connections,
    /// at least one when there are two or more).
    pub fn limits(&self) -> ConnectionLimits {
        let max = self.max_connections.max(1);
        ConnectionLimits {
            header_timeout: Duration::from_secs(self.header_timeout_secs.max(1)),
            body_timeout: Duration::from_secs(self.body_timeout_secs.max(1)),
            request_deadline: Duration::from_secs(self.request_deadline_secs.max(1)),
            max_connections: max,
            max_per_peer: self.max_connections_per_peer.max(1),
            reserved_for_new_peers: if max < 2 { 0 } else { (max / 32).max(1) },
        }
    }
}
