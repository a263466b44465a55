//! The growth series for a chart: per request, the bytes actually sent, the bytes if every
//! request resent the full history, and the bytes with `previous_response_id` continuation.
//!
//! All figures are compact JSON bytes of the body, computed from element sizes (never by
//! serializing a body again):
//! - `sent_bytes`: the body as given;
//! - `full_history_bytes`: the body with its `input` replaced by the whole history so far — the
//!   same as `sent_bytes` unless the request itself continued with `previous_response_id`, in
//!   which case the history is the previous request's full history plus this input;
//! - `continuation_bytes`: the body with only the items added since the previous request, when
//!   the previous prefix was kept (a continuation cannot follow a break: it is sent in full). The
//!   `previous_response_id` field itself (about 50 bytes) is not added; items the previous
//!   response produced are counted as new items.

use serde::Serialize;

use super::compare::PairReport;
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

/// The series for `requests`, given the verdicts of their consecutive pairs.
pub fn growth(
    pool: &ElementPool,
    requests: &[SessionRequest],
    pairs: &[PairReport],
) -> Vec<GrowthPoint> {
    let mut points = Vec::with_capacity(requests.len());
    // (item count, item bytes) of the full history so far.
    let mut history = (0u64, 0u64);
    for (index, request) in requests.iter().enumerate() {
        let shape = &request.shape;
        let body_items: Vec<u64> = shape
            .header
            .iter()
            .filter(|p| p.pointer.starts_with("/input/"))
            .map(|p| pool.bytes(p.id))
            .chain(shape.input.iter().map(|id| pool.bytes(*id)))
            .collect();
        let own = (body_items.len() as u64, body_items.iter().sum::<u64>());
        let continues = shape
            .header
            .iter()
            .any(|p| &*p.pointer == "/previous_response_id");
        history = if continues && index > 0 {
            (history.0 + own.0, history.1 + own.1)
        } else {
            own
        };
        let full_history_bytes = if continues && index > 0 {
            shape.head_bytes + 2 + history.1 + history.0.saturating_sub(1)
        } else {
            shape.body_bytes
        };
        let is_step = |p: &&PairReport| p.to == index && p.from + 1 == index;
        let kept = index > 0
            && index
                .checked_sub(1)
                .and_then(|i| pairs.get(i))
                .filter(is_step)
                .or_else(|| pairs.iter().find(is_step))
                .is_some_and(|p| p.prefix_kept);
        let continuation_bytes = if kept && !continues {
            let previous = &requests[index - 1].shape;
            let new_items = shape.input[previous.input.len()..]
                .iter()
                .map(|id| pool.bytes(*id));
            shape.head_bytes + array_bytes(new_items)
        } else {
            shape.body_bytes
        };
        points.push(GrowthPoint {
            index,
            sent_bytes: shape.body_bytes,
            full_history_bytes,
            continuation_bytes,
        });
    }
    points
}
