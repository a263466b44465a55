//! The cache as the request's model keeps it (WIRE_SPEC §19.1, issue 21): a layout step that
//! turns each request's whole prompt into token offsets and breakpoints ([`layout`]), a
//! simulator that walks the session's requests by recorded time per route and predicts the
//! input tokens each one reads, writes and leaves uncached, with the reason in words ([`sim`]),
//! the server's own figures beside the prediction (a disagreement beyond the tolerance is a
//! finding), dollars paid / ideal / lost ([`report`]), what-if edits re-simulated ([`whatif`]),
//! and hazards with their fixes ([`hazards`]). Pure: no I/O, no clock.
//!
//! # Dollars
//!
//! Input-side dollars only (input, cache reads, cache writes): output is the same whatever the
//! cache does. *Paid* is from the server's usage where the request has one (`input_tokens`,
//! `cached_tokens`, `cache_write_tokens`), else from the prediction. *Lost* is what the tokens a
//! perfect cache would have read (the prefix shared with the previous request of the same model,
//! from the floor) and this one did not cost beyond the cached rate — at the write rate for as
//! many of them as were written, at the input rate for the rest; *ideal* is paid minus lost.
//! A request whose model has no checked price has no dollars ("price unknown"), and then the
//! session's totals are unknown too.
//!
//! # When it is only an estimate
//!
//! Token counts are the analysis's own (o200k over compact JSON per element), not the server's
//! rendering; a break inside an item loses the whole item; an explicit breakpoint counts at the
//! end of its item; routing is by the elements that cover the first 256 tokens. The server
//! disagreeing beyond [`TOLERANCE_TOKENS`] or [`TOLERANCE_SHARE`] of the prompt is reported.

pub mod hazards;
pub mod layout;
pub mod sim;
pub mod whatif;

use serde::Serialize;

pub use hazards::Hazard;
pub use sim::{Prediction, Prepared, Tokens, simulate};
pub use whatif::{Edit, Plan, WhatIfError};

use crate::core::format::grouped;
use crate::core::models::cache::{CacheKind, CacheModels};
use crate::core::prefix::{PriceTable, Session};

/// A disagreement between the server's `cached_tokens` and the prediction larger than this many
/// tokens …
pub const TOLERANCE_TOKENS: u64 = 256;
/// … and than this share of the prompt is a finding.
pub const TOLERANCE_SHARE: f64 = 0.10;

/// What the server reported for a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Reported {
    /// `cached_tokens`.
    pub cached_tokens: Option<u64>,
    /// `cache_write_tokens`.
    pub cache_write_tokens: Option<u64>,
}

/// Dollars of one request (or a session).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Dollars {
    /// What was (or would be) paid for its input.
    pub paid: f64,
    /// What it would have cost had every reusable token been read.
    pub ideal: f64,
    /// `paid − ideal`.
    pub lost: f64,
}

/// One request of the cache report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CacheRequest {
    /// The prediction.
    #[serde(flatten)]
    pub prediction: Prediction,
    /// The server's figures, when it said anything.
    pub reported: Option<Reported>,
    /// Dollars, when the model has a checked price.
    pub cost_usd: Option<Dollars>,
    /// The server disagreeing with the prediction beyond the tolerance, in words.
    pub finding: Option<String>,
}

/// Session totals.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CacheTotals {
    /// Predicted tokens read.
    pub read_tokens: u64,
    /// Predicted tokens written.
    pub write_tokens: u64,
    /// Predicted tokens uncached.
    pub uncached_tokens: u64,
    /// Dollars; `None` when any simulated request's model has no checked price.
    pub cost_usd: Option<Dollars>,
    /// Models without a checked price.
    pub unpriced_models: Vec<String>,
}

/// The cache report of a session.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CacheReport {
    /// One per request, in order.
    pub requests: Vec<CacheRequest>,
    /// Totals.
    pub totals: CacheTotals,
    /// Hazards with their fixes.
    pub hazards: Vec<Hazard>,
}

/// A what-if: the session re-simulated under edits, against the session as recorded (both
/// predicted, so that they compare).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WhatIf {
    /// The edits, as written.
    pub edits: Vec<String>,
    /// Predicted totals as recorded.
    pub before: CacheTotals,
    /// Predicted totals under the edits.
    pub after: CacheTotals,
    /// Tokens read more under the edits (negative: fewer).
    pub read_tokens_gained: i64,
    /// Dollars saved (negative: more paid), when both sides are priced.
    pub usd_saved: Option<f64>,
    /// Per request under the edits.
    pub requests: Vec<CacheRequest>,
}

/// The cache report of `session` as recorded.
pub fn report(session: &Session, cache_models: &CacheModels, prices: &PriceTable) -> CacheReport {
    let prepared = Prepared::new(session, cache_models);
    let predictions = simulate(&prepared, &Plan::none());
    let hazards = hazards::find(session, &predictions);
    let (requests, totals) = price(session, predictions, prices, true);
    CacheReport {
        requests,
        totals,
        hazards,
    }
}

/// The session re-simulated under `edits`.
pub fn what_if(
    session: &Session,
    cache_models: &CacheModels,
    prices: &PriceTable,
    edits: &[Edit],
) -> Result<WhatIf, WhatIfError> {
    let prepared = Prepared::new(session, cache_models);
    what_if_prepared(&prepared, prices, edits)
}

/// [`what_if`] over a session already prepared (the app keeps it between edits).
pub fn what_if_prepared(
    prepared: &Prepared<'_>,
    prices: &PriceTable,
    edits: &[Edit],
) -> Result<WhatIf, WhatIfError> {
    let session = prepared.session;
    let plan = Plan::new(session, edits)?;
    let (_, before) = price(session, simulate(prepared, &Plan::none()), prices, false);
    let (requests, after) = price(session, simulate(prepared, &plan), prices, false);
    let read_tokens_gained = i64::try_from(after.read_tokens).unwrap_or(i64::MAX)
        - i64::try_from(before.read_tokens).unwrap_or(i64::MAX);
    let usd_saved = before
        .cost_usd
        .zip(after.cost_usd)
        .map(|(b, a)| b.paid - a.paid);
    Ok(WhatIf {
        edits: edits.iter().map(ToString::to_string).collect(),
        before,
        after,
        read_tokens_gained,
        usd_saved,
        requests,
    })
}

/// Prices the predictions; `reported` uses the server's usage for *paid* where there is one.
fn price(
    session: &Session,
    predictions: Vec<Prediction>,
    prices: &PriceTable,
    reported: bool,
) -> (Vec<CacheRequest>, CacheTotals) {
    let mut totals = CacheTotals {
        read_tokens: 0,
        write_tokens: 0,
        uncached_tokens: 0,
        cost_usd: Some(Dollars {
            paid: 0.0,
            ideal: 0.0,
            lost: 0.0,
        }),
        unpriced_models: Vec::new(),
    };
    let mut out = Vec::with_capacity(predictions.len());
    for prediction in predictions {
        let meta = &session.requests()[prediction.index].meta;
        let server = Reported {
            cached_tokens: meta.reported_cached_tokens,
            cache_write_tokens: meta.reported_cache_write_tokens,
        };
        let said = server.cached_tokens.is_some() || server.cache_write_tokens.is_some();
        let p = &prediction.predicted;
        totals.read_tokens += p.read_tokens;
        totals.write_tokens += p.write_tokens;
        totals.uncached_tokens += p.uncached_tokens;
        // (input, read, written) the dollars are computed from.
        let (input, read, written) = match (reported, said || meta.reported_input_tokens.is_some())
        {
            (true, true) => (
                meta.reported_input_tokens
                    .unwrap_or(prediction.input_tokens),
                server.cached_tokens.unwrap_or(0),
                server.cache_write_tokens.unwrap_or(0),
            ),
            _ => (prediction.input_tokens, p.read_tokens, p.write_tokens),
        };
        let tier = session.requests()[prediction.index]
            .shape
            .service_tier
            .as_deref();
        let cost = if prediction.undetermined {
            None
        } else {
            prices
                .rates(&prediction.model, prediction.cache_model, input, tier)
                .map(|rates| {
                    let uncached = input.saturating_sub(read + written);
                    let paid = rates.input_cost(read, written, uncached);
                    let missed = prediction.ideal_read_tokens.saturating_sub(read);
                    let from_written = missed.min(written);
                    let from_uncached = (missed - from_written).min(uncached);
                    let lost = (from_written as f64 * (rates.cache_write - rates.cached_input)
                        + from_uncached as f64 * (rates.input - rates.cached_input))
                        .max(0.0)
                        / 1_000_000.0;
                    Dollars {
                        paid,
                        ideal: paid - lost,
                        lost,
                    }
                })
        };
        match (&cost, &mut totals.cost_usd) {
            (Some(c), Some(t)) => {
                t.paid += c.paid;
                t.ideal += c.ideal;
                t.lost += c.lost;
            }
            (None, _) if !prediction.undetermined => {
                totals.cost_usd = None;
                if !totals.unpriced_models.contains(&prediction.model) {
                    totals.unpriced_models.push(prediction.model.clone());
                }
            }
            _ => {}
        }
        let finding = server
            .cached_tokens
            .filter(|_| reported && !prediction.undetermined)
            .and_then(|cached| disagreement(&prediction, cached));
        out.push(CacheRequest {
            prediction,
            reported: said.then_some(server),
            cost_usd: cost,
            finding,
        });
    }
    (out, totals)
}

/// The server's `cached_tokens` against the predicted read, in words, beyond the tolerance.
fn disagreement(prediction: &Prediction, cached: u64) -> Option<String> {
    let predicted = prediction.predicted.read_tokens;
    let tolerance = TOLERANCE_TOKENS.max((prediction.input_tokens as f64 * TOLERANCE_SHARE) as u64);
    if cached.abs_diff(predicted) <= tolerance {
        return None;
    }
    Some(if cached < predicted {
        format!(
            "server read {} where the rules predict {}: evicted, overflowed past ~15 \
             requests/min, or routed elsewhere",
            grouped(cached),
            grouped(predicted)
        )
    } else {
        let model = match prediction.cache_model {
            CacheKind::Prefix => "prefix",
            CacheKind::Breakpoints => "breakpoints",
        };
        format!(
            "server read {}, more than the {} the rules predict: the server renders and counts \
             the prompt its own way, or this model does not cache as the `{model}` model",
            grouped(cached),
            grouped(predicted)
        )
    })
}
