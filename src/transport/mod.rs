//! Transport: the only code that awaits. Sends compiled requests over the network and feeds the
//! bytes that come back into the pure core ([`crate::core::stream`]).
//!
//! - [`http`]: live HTTP SSE send with reqwest — retries by error class, connect and idle
//!   timeouts, cancellation that keeps the partial outcome.
//! - [`proxy`]: the recording proxy for real clients (HTTP and WebSocket), and the listening side
//!   the replay endpoint shares.
//! - [`replay`]: recordings loaded for replay, and replay timing.
//! - [`ws`]: live WebSocket send of the `response.create` frame, into the same stream reader.
//! - `read_loop`: the read loop both live sends share (idle timeout, cancel, entries, outcome).
//! - [`recording`]: feeds a send's progress into the session store.
//! - [`redirect`]: the redirect policy of live sends (never to another origin).
//! - [`replay_server`]: the replay endpoint, serving a recording to a real client.

pub mod http;
pub mod proxy;
mod read_loop;
pub mod recording;
pub mod redirect;
pub mod replay;
pub mod replay_server;
pub mod ws;

pub use http::{
    Attempt, CancelToken, HttpSender, PrepareError, SendError, SendEvent, SendOptions, SendResult,
    resolve_headers,
};
pub use proxy::{ProxyEvent, ProxyOptions, ServerError, ServerHandle, ServerState, start_proxy};
pub use replay::{Recording, Timing};
pub use replay_server::{ReplayOptions, start_replay};
pub use ws::WsSender;
