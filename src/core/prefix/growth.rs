//! The growth series for a chart: per request, the bytes actually sent, the bytes if every
//! request resent the full history, and the bytes with `previous_response_id` continuation.
//!
//! All figures are compact JSON bytes of the body, computed from element sizes (never by
//! serializing a body again):
//! - `sent_bytes`: the body as sent;
//! - `full_history_bytes`: the body with its `input` replaced by the whole prompt — the same as
//!   `sent_bytes` unless the request continued a response with `previous_response_id`
//!   ([`super::conversation`]);
//! - `continuation_bytes`: what a continuation sends: the body as sent for a request that
//!   continued; otherwise the body with only the items added since the previous request, when
//!   the previous prefix was kept (a continuation cannot follow a break: it is sent in full). The
//!   `previous_response_id` field itself (about 50 bytes) is not added; items the previous
//!   response produced are counted as new items.

use serde::Serialize;

use super::conversation::Continuation;
use super::pool::ElementPool;
use super::session::SessionRequest;
use super::shape::array_bytes;

/// One point of the growth chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct GrowthPoint {
    /// Request index.
    pub index: usize,
    /// Bytes of the body as sent.
    pub sent_bytes: u64,
    /// Bytes if the request resent the whole history.
    pub full_history_bytes: u64,
    /// Bytes with `previous_response_id` continuation (only the new items).
    pub continuation_bytes: u64,
}

/// The series for `requests`; `kept(i)` says whether request `i` kept the prefix of request
/// `i − 1`.
pub fn growth(
    pool: &ElementPool,
    requests: &[SessionRequest],
    kept: impl Fn(usize) -> bool,
) -> Vec<GrowthPoint> {
    let mut points = Vec::with_capacity(requests.len());
    for (index, request) in requests.iter().enumerate() {
        let shape = &request.shape;
        let kept = index > 0 && kept(index);
        let continuation_bytes = match request.continuation {
            Continuation::Whole if kept => {
                let previous = &requests[index - 1].shape;
                let new_items = shape.input[previous.input.len().min(shape.input.len())..]
                    .iter()
                    .map(|id| pool.bytes(*id));
                shape.head_bytes + array_bytes(new_items)
            }
            Continuation::Whole => shape.body_bytes,
            _ => request.sent_bytes,
        };
        points.push(GrowthPoint {
            index,
            sent_bytes: request.sent_bytes,
            full_history_bytes: shape.body_bytes,
            continuation_bytes,
        });
    }
    points
}
