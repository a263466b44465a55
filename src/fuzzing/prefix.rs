//! Target `prefix_pair`: the cache analysis of two request bodies (what `promptwire diff
//! A.json B.json` and `--requests 0,1` compute): the verdict both ways, the aligned pair diff,
//! the session's ledger.
//!
//! Invariant checked: a body compared with itself keeps its whole prefix (no break).

use serde_json::Value;

use super::split_pair;
use crate::core::ledger::{self, Counting, Rules};
use crate::core::prefix::{RequestMeta, Session};

/// Input: two bodies (JSON) separated by [`super::SEPARATOR`]; without one, the body is
/// compared with itself.
pub fn prefix_pair(data: &[u8]) {
    let _ = try_prefix_pair(data);
}

fn try_prefix_pair(data: &[u8]) -> Result<(), String> {
    let (first, second) = split_pair(data);
    let first: Value = serde_json::from_slice(first).map_err(|e| e.to_string())?;
    let second: Value = match second {
        Some(bytes) => serde_json::from_slice(bytes).map_err(|e| e.to_string())?,
        None => first.clone(),
    };
    let mut session = Session::default();
    session
        .push_body(&first, RequestMeta::default())
        .map_err(|e| e.to_string())?;
    session
        .push_body(&second, RequestMeta::default())
        .map_err(|e| e.to_string())?;
    session
        .push_body(&first, RequestMeta::default())
        .map_err(|e| e.to_string())?;
    for (from, to) in [(0, 1), (1, 0), (0, 2)] {
        let report = ledger::compare_pair(&session, &Counting::default(), from, to);
        if (from, to) == (0, 2) {
            assert!(
                report.prefix_kept && report.divergence.is_none(),
                "a body compared with itself breaks the prefix: {report:?}"
            );
        }
        session.pair_diff(from, to).expect("both requests exist");
    }
    let _ = ledger::ledger(&session, &Rules::bundled());
    Ok(())
}
