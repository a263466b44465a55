//! The one ledger (DESIGN.md "One ledger"): every cache figure the product shows — a request's
//! badge, the inspector's cost, the analysis sentence and charts, a hazard, the what-if's
//! "before", `diff` text and JSON — is read from the [`Ledger`] of a session, computed once by
//! [`ledger`]. Pure: no I/O, no clock.
//!
//! How it is built, one module each:
//!
//! 1. [`render`] — each request as the segments the server renders (WIRE_SPEC §19.2), each with
//!    its [`source`] and its tokens, counted once per distinct segment by the rules of
//!    [`counting`] (o200k text plus markers; opaque parts estimated).
//! 2. [`compare`] — each request against the latest turn of its conversation, on the rendered
//!    token streams: the first differing token, its segment and JSON pointer, every difference in
//!    the server's vocabulary ([`cause`]).
//! 3. [`sim`] — what the server reads, writes and leaves uncached under the request's cache
//!    model ([`models`]: `prefix` or `breakpoints`, rows of data), by route and recorded time.
//! 4. [`rows`] — per request: the server's figures beside the prediction, dollars paid / ideal /
//!    lost from the dated price table ([`prices`]), the loss split by cause.
//! 5. [`hazards`] — what to fix, stated in figures the rows hold; [`summary`] — the rows summed
//!    and the sentence the app opens with; [`whatif`] — the session re-simulated under an edit,
//!    its "before" the ledger's paid.
//!
//! Token counts are estimates of a rendering OpenAI does not publish; the server's
//! `input_tokens`, `cached_tokens` and `cache_write_tokens` are the authority where they exist,
//! and a disagreement beyond the tolerance is a finding.

pub mod cause;
pub mod compare;
pub mod counting;
pub mod hazards;
pub mod models;
pub mod prices;
pub mod render;
pub mod rows;
pub mod sim;
pub mod source;
pub mod summary;
mod tool_text;
pub mod whatif;

use std::collections::HashMap;

use serde::Serialize;

pub use cause::Cause;
pub use compare::{Change, Divergence, PairVerdict, Partials};
pub use counting::Counting;
pub use hazards::Hazard;
pub use models::{CacheKind, CacheModel, CacheModels};
pub use prices::{ModelPrice, PriceTable};
pub use render::{Rendered, SegmentId};
pub use rows::{CauseLoss, Dollars, Reported, Row, RowKind};
pub use sim::{Prediction, Tokens};
pub use source::Source;
pub use summary::Summary;
pub use whatif::{Edit, Plan, WhatIfError};

use crate::core::prefix::Session;

/// A session's ledger.
#[derive(Debug)]
pub struct Ledger {
    /// One row per request, in order.
    pub rows: Vec<Row>,
    /// The rows summed.
    pub summary: Summary,
    /// Hazards with their fixes.
    pub hazards: Vec<Hazard>,
    /// The rendered view the rows were computed from (segments, sources, tokens).
    pub rendered: Rendered,
}

/// What the ledger is computed under.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    /// Cache models by slug.
    pub cache_models: CacheModels,
    /// Prices.
    pub prices: PriceTable,
    /// Counting rules.
    pub counting: Counting,
}

impl Rules {
    /// The bundled price table, the built-in cache models and the default counting.
    pub fn bundled() -> Self {
        Self {
            cache_models: CacheModels::default(),
            prices: PriceTable::bundled(),
            counting: Counting::default(),
        }
    }
}

/// The ledger of `session` under `rules`.
pub fn ledger(session: &Session, rules: &Rules) -> Ledger {
    let rendered = render::render(session, &rules.counting);
    let mut partials = Partials::default();
    let rows = rows_of(session, &rendered, rules, &Plan::none(), &mut partials);
    let summary = summary::sum(&rows, session);
    let hazards = hazards::find(session, &rendered, &rows);
    Ledger {
        rows,
        summary,
        hazards,
        rendered,
    }
}

/// The verdict on two requests of `session` (`from` earlier), rendering only those two: for
/// callers that compare one pair (the turn loop, the replay endpoint, Compare).
pub fn compare_pair(session: &Session, counting: &Counting, from: usize, to: usize) -> PairVerdict {
    let rendered = render::render_some(session, counting, &[from, to]);
    let mut partials = Partials::default();
    compare::compare(
        session,
        &rendered,
        &mut partials,
        from,
        to,
        compare::Context { compaction: false },
    )
}

/// The rows of `session` under `plan`.
fn rows_of(
    session: &Session,
    rendered: &Rendered,
    rules: &Rules,
    plan: &Plan,
    partials: &mut Partials,
) -> Vec<Row> {
    let prepared = sim::Prepared::new(session, rendered, &rules.cache_models);
    let predictions = sim::simulate(&prepared, plan, partials);
    let kinds = rows::kinds(session);
    let overflow = overflowing(session, &predictions);
    let mut rows = Vec::with_capacity(predictions.len());
    for (prediction, (kind, previous, compaction)) in predictions.into_iter().zip(kinds) {
        let i = prediction.index;
        let request = &session.requests()[i];
        let verdict = match (kind, previous) {
            (RowKind::Undetermined | RowKind::First, _) | (_, None) => None,
            (_, Some(p)) => Some(compare::compare(
                session,
                rendered,
                partials,
                p,
                i,
                compare::Context { compaction },
            )),
        };
        let meta = &request.meta;
        let reported = (meta.reported_input_tokens.is_some()
            || meta.reported_cached_tokens.is_some()
            || meta.reported_cache_write_tokens.is_some()
            || meta.diagnostics.is_some())
        .then(|| Reported {
            input_tokens: meta.reported_input_tokens,
            cached_tokens: meta.reported_cached_tokens,
            cache_write_tokens: meta.reported_cache_write_tokens,
            diagnostics: meta.diagnostics.clone(),
        });
        let mut row = Row {
            index: i,
            model: request.shape.model.clone(),
            cache_model: prediction.cache_model,
            kind,
            previous,
            verdict,
            tokens: rendered.layouts[i].total(),
            reported,
            ideal_read_tokens: 0,
            cost_usd: None,
            lost_by_cause: Vec::new(),
            notes: Vec::new(),
            finding: None,
            not_recorded: rendered.layouts[i].not_recorded.clone(),
            prediction,
        };
        if row.prediction.expired
            && row
                .prediction
                .idle_gap_secs
                .is_some_and(|g| g > row.prediction.ttl_secs)
        {
            row.notes.push(Cause::IdleGap);
        }
        if overflow.contains(&i) {
            row.notes.push(Cause::RoutingOverflow);
        }
        rows::price(
            &mut row,
            &rules.prices,
            request.shape.service_tier.as_deref(),
            overflow.contains(&i),
        );
        row.finding = rows::finding(&row);
        rows.push(row);
    }
    rows
}

/// Requests past the overflow rate on their route (more than ~15 in a sliding minute).
fn overflowing(session: &Session, predictions: &[Prediction]) -> Vec<usize> {
    let requests = session.requests();
    let mut out = Vec::new();
    let mut by_route: HashMap<u64, Vec<i64>> = HashMap::new();
    for p in predictions {
        let Some(now) = requests[p.index].meta.sent_at_ms else {
            continue;
        };
        let times = by_route.entry(p.route).or_default();
        times.push(now);
        let in_minute = times
            .iter()
            .rev()
            .take_while(|t| now - **t < 60_000)
            .count();
        if in_minute > rows::OVERFLOW_PER_MINUTE {
            out.push(p.index);
        }
    }
    out
}

/// A what-if: the session re-simulated under edits, against the ledger.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WhatIf {
    /// The edits, as written.
    pub edits: Vec<String>,
    /// The ledger's totals (its paid is the ledger's paid).
    pub before: summary::Totals,
    /// The totals under the edits: per request, the ledger's figures moved by what the edit
    /// changes in the prediction.
    pub after: summary::Totals,
    /// Tokens read more under the edits (negative: fewer).
    pub read_tokens_gained: i64,
    /// Dollars saved (negative: more paid), when both sides are priced.
    pub usd_saved: Option<f64>,
    /// Per request under the edits: (index, read, written, uncached, paid).
    pub requests: Vec<WhatIfRow>,
}

/// One request of a what-if.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WhatIfRow {
    /// Position.
    pub index: usize,
    /// Tokens read, written, uncached under the edits.
    pub tokens: Tokens,
    /// Paid under the edits.
    pub paid: Option<f64>,
    /// Why, in words.
    pub reason: String,
}

impl Ledger {
    /// The session re-simulated under `edits`: each request's figures are the ledger's, moved by
    /// the difference the edits make to the prediction (so no edit gives the ledger back).
    pub fn what_if(
        &self,
        session: &Session,
        rules: &Rules,
        edits: &[Edit],
    ) -> Result<WhatIf, WhatIfError> {
        let plan = Plan::new(session, &self.rendered, edits)?;
        let mut partials = Partials::default();
        // Only the predictions move with an edit: the verdicts, kinds and prices of the rows
        // are the ledger's.
        let prepared = sim::Prepared::new(session, &self.rendered, &rules.cache_models);
        let after = sim::simulate(&prepared, &plan, &mut partials);
        let before = self.summary.totals.clone();
        let after_predictions = after;
        let mut after = summary::Totals {
            cost_usd: before.cost_usd.map(|_| Dollars::default()),
            unpriced_models: before.unpriced_models.clone(),
            ..summary::Totals::default()
        };
        let mut requests = Vec::with_capacity(after_predictions.len());
        for (row, edited) in self.rows.iter().zip(&after_predictions) {
            let (b, a) = (&row.prediction.predicted, &edited.predicted);
            // The row's figures moved by the edit's change to the prediction, in the row's own
            // figures (scaled to the server's count where it reported one).
            let moved = |was: u64, pred_b: u64, pred_a: u64| -> u64 {
                (was as i64 + row.scale(pred_a) as i64 - row.scale(pred_b) as i64).max(0) as u64
            };
            let input = row.input_tokens();
            let read = moved(row.read_tokens(), b.read_tokens, a.read_tokens).min(input);
            let written = moved(row.write_tokens(), b.write_tokens, a.write_tokens)
                .min(input.saturating_sub(read));
            let tokens = Tokens {
                read_tokens: read,
                write_tokens: written,
                uncached_tokens: input.saturating_sub(read + written),
            };
            let rates = rules.prices.rates(
                &row.model,
                row.cache_model,
                input,
                session.requests()[row.index].shape.service_tier.as_deref(),
            );
            let paid = match (row.cost_usd, rates) {
                (Some(d), _) if b == a => Some(d.paid),
                (Some(_), Some(rates)) => {
                    Some(rates.input_cost(read, written, tokens.uncached_tokens))
                }
                _ => None,
            };
            after.read_tokens += read;
            after.write_tokens += written;
            after.uncached_tokens += tokens.uncached_tokens;
            after.input_tokens += input;
            // What a perfect cache would pay does not move with the edit (never above paid).
            if let (Some(t), Some(p), Some(d)) = (after.cost_usd.as_mut(), paid, row.cost_usd) {
                let ideal = d.ideal.min(p);
                t.paid += p;
                t.ideal += ideal;
                t.lost += p - ideal;
            }
            requests.push(WhatIfRow {
                index: row.index,
                tokens,
                paid,
                reason: edited.reason.clone(),
            });
        }
        let read_tokens_gained = after.read_tokens as i64 - before.read_tokens as i64;
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
}
