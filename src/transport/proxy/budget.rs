//! One memory budget shared by every request body the proxy is reading or holding: a body is
//! charged as its bytes arrive (in KiB) and released when its request is answered. A request
//! whose next bytes find no budget left is answered 503 at once, with a message saying why,
//! instead of buffering (ten 60 MB bodies at once took the proxy to 1.07 GB).

use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt as _;
use hyper::StatusCode;
use hyper::body::Incoming;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::forward::error_response;
use super::listen::Body;

/// Default budget for all request bodies at once.
pub const DEFAULT_BODY_BUDGET_BYTES: usize = 256 * 1024 * 1024;

/// The shared budget (permits are KiB).
#[derive(Debug, Clone)]
pub struct BodyBudget {
    permits: Arc<Semaphore>,
    bytes: usize,
}

/// Budget held by one body until it is dropped.
#[derive(Debug, Default)]
pub struct BudgetHold {
    permit: Option<OwnedSemaphorePermit>,
    kib: usize,
}

impl BodyBudget {
    /// A budget of `bytes` (at least 1 KiB).
    pub fn new(bytes: usize) -> Self {
        let kib = (bytes / 1024).clamp(1, Semaphore::MAX_PERMITS);
        Self {
            permits: Arc::new(Semaphore::new(kib)),
            bytes,
        }
    }

    /// Charges `hold` up to `total` bytes; false when the budget has no room for them.
    fn charge(&self, hold: &mut BudgetHold, total: usize) -> bool {
        let want = total.div_ceil(1024);
        if want <= hold.kib {
            return true;
        }
        let Ok(more) = u32::try_from(want - hold.kib) else {
            return false;
        };
        let Ok(permit) = Arc::clone(&self.permits).try_acquire_many_owned(more) else {
            return false;
        };
        match &mut hold.permit {
            Some(held) => held.merge(permit),
            None => hold.permit = Some(permit),
        }
        hold.kib = want;
        true
    }

    /// The 503 answer of a body that found no budget left.
    fn refused(&self) -> hyper::Response<Body> {
        let mut response = error_response(
            StatusCode::SERVICE_UNAVAILABLE,
            "body_budget_exhausted",
            &format!(
                "the proxy's memory for request bodies ({}, shared by all requests at once) is \
                 in use by other requests; try again in a moment",
                crate::core::stream::limits::human_size(self.bytes as u64)
            ),
        );
        response.headers_mut().insert(
            hyper::header::RETRY_AFTER,
            hyper::header::HeaderValue::from_static("1"),
        );
        response
    }
}

/// Reads a request body, at most `limit` bytes, charging `budget` as it arrives (when given);
/// the hold keeps the budget until it is dropped.
pub(crate) async fn read_body_within(
    mut body: Incoming,
    limit: usize,
    budget: Option<&BodyBudget>,
) -> Result<(Bytes, BudgetHold), hyper::Response<Body>> {
    let mut hold = BudgetHold::default();
    let mut bytes = BytesMut::new();
    let timeouts = super::listen::body_timeouts();
    loop {
        let wait = timeouts.gap.min(
            timeouts
                .deadline
                .saturating_duration_since(tokio::time::Instant::now()),
        );
        let frame = match tokio::time::timeout(wait, body.frame()).await {
            Ok(Some(frame)) => frame,
            Ok(None) => break,
            Err(_) => {
                let whole = tokio::time::Instant::now() >= timeouts.deadline;
                return Err(error_response(
                    StatusCode::REQUEST_TIMEOUT,
                    "request_timeout",
                    &if whole {
                        "the request was not sent whole in time (the whole-request deadline passed)"
                            .to_string()
                    } else {
                        format!(
                            "the request body stalled: nothing came for {} s",
                            timeouts.gap.as_secs()
                        )
                    },
                ));
            }
        };
        let frame = frame.map_err(|e| {
            error_response(
                StatusCode::BAD_REQUEST,
                "bad_request_body",
                &format!("cannot read the request body: {e}"),
            )
        })?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        let total = bytes.len().saturating_add(data.len());
        if total > limit {
            return Err(error_response(
                StatusCode::PAYLOAD_TOO_LARGE,
                "request_too_large",
                &format!("the request body is larger than {limit} bytes"),
            ));
        }
        if let Some(budget) = budget
            && !budget.charge(&mut hold, total)
        {
            return Err(budget.refused());
        }
        bytes.extend_from_slice(&data);
    }
    super::listen::mark_answering();
    Ok((bytes.freeze(), hold))
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn holds_share_the_budget_and_give_it_back() {
        let budget = BodyBudget::new(10 * 1024);
        let mut a = BudgetHold::default();
        assert!(budget.charge(&mut a, 6000));
        assert!(budget.charge(&mut a, 6100));
        let mut b = BudgetHold::default();
        assert!(!budget.charge(&mut b, 5 * 1024));
        assert!(budget.charge(&mut b, 4 * 1024));
        drop(a);
        assert!(budget.charge(&mut b, 10 * 1024));
        assert_eq!(budget.permits.available_permits(), 0);
        drop(b);
        assert_eq!(budget.permits.available_permits(), 10);
    }
}
