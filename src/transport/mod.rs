//! Transport: the only code that awaits. Sends compiled requests over the network and feeds the
//! bytes that come back into the pure core ([`crate::core::stream`]).
//!
//! - [`send`]: the one sender (HTTP or WebSocket) and its owned live events, which the app's
//!   Send, the Sessions Re-send and the CLI's `send` consume; the types every send shares.
//! - [`http`]: live HTTP SSE send with reqwest — retries by error class, connect and idle
//!   timeouts, cancellation that keeps the partial outcome.
//! - [`proxy`]: the recording proxy for real clients (HTTP and WebSocket), and the listening side
//!   the replay endpoint shares.
//! - [`replay`]: recordings loaded for replay, and replay timing.
//! - [`ws`]: live WebSocket send of the `response.create` frame, into the same stream reader.
//! - `read_loop`: the read loop both live sends share (idle timeout, cancel, entries, outcome).
//! - [`recording`]: applies a live send's events and result to its store recording.
//! - [`redirect`]: the redirect policy of live sends (never to another origin).
//! - [`replay_server`]: the replay endpoint, serving a recording to a real client.
//! - [`tls`]: extra root certificates for an upstream behind a private CA.
//! - [`otlp`]: OpenTelemetry export of recordings (OTLP/HTTP, protobuf or JSON).

pub mod http;
pub(crate) mod inflate;
pub mod otlp;
pub mod proxy;
mod read_loop;
pub mod recording;
pub mod redirect;
pub mod replay;
pub mod replay_match;
pub mod replay_server;
pub mod send;
pub mod tls;
pub mod ws;

pub use http::HttpSender;
pub use proxy::{ProxyEvent, ProxyOptions, ServerError, ServerHandle, ServerState, start_proxy};
pub use replay::{Recording, Timing};
pub use replay_server::{ReplayOptions, start_replay};
pub use send::{
    Attempt, CancelToken, LiveEvent, LiveSend, PrepareError, SendError, SendEvent, SendOptions,
    SendResult, Sender, Wire, resolve_headers,
};
pub use ws::WsSender;
