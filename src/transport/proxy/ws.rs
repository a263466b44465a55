//! The WebSocket relay (not yet: upgrades are refused with 501 so the client falls back).

use std::sync::Arc;

use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};

use super::forward::{Relay, error_response};
use super::listen::Body;

/// Refuses a WebSocket upgrade.
pub(super) async fn relay(
    _relay: Arc<Relay>,
    _req: Request<Incoming>,
    _conn: u64,
) -> Response<Body> {
    error_response(
        StatusCode::NOT_IMPLEMENTED,
        "websocket_unsupported",
        "this promptwire build does not relay WebSocket connections",
    )
}
