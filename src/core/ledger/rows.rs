//! The ledger's rows: for each request, what it is (a turn, a warm-up, a compaction), the
//! request it is compared with, where its rendered prompt diverges and why, the tokens it read,
//! wrote and left uncached (the server's figures beside the prediction), and its dollars —
//! **paid**, **ideal** and **lost = paid − ideal**, the loss split by cause. The session's
//! figures are the rows summed.
//!
//! # Dollars (input side only: output is the same whatever the cache does)
//!
//! - *Paid*: the server's usage where the request has one (`input_tokens`, `cached_tokens`,
//!   `cache_write_tokens`), else the prediction.
//! - *Ideal*: what it would have paid had every token it shares with the request before it been
//!   read — the content it had sent before, wherever it now sits (a client that only appends
//!   would have had all of it read), counted from the model's floor (in steps on prefix models)
//!   and, on breakpoint models, with its new content written. A first request, a warm-up and a
//!   compaction request are their own cost (ideal = paid); the turn after a compaction can only
//!   have read what the compaction kept in place.
//! - *Lost*: paid − ideal (never below 0), split between the cause of the divergence (the
//!   shared content after it) and what kept the shared prefix itself from being read: a routing
//!   change (model, cache key, tier), an expired cache, a prefix no breakpoint covers, a routing
//!   overflow, or a server that read less for no reason the recording shows.
//!
//! Token figures in the rows are the analysis's estimates beside the server's own; dollars use
//! the server's where it reported them, scaling the estimate of what was shareable to its count.

use serde::Serialize;

use super::cause::Cause;
use super::compare::PairVerdict;
use super::models::CacheKind;
use super::prices::{PriceTable, cacheable_steps};
use super::sim::Prediction;
use crate::core::format::grouped;
use crate::core::prefix::Session;
use crate::core::stream::PromptCacheDiagnostics;

/// A disagreement between the server's `cached_tokens` and the prediction larger than this many
/// tokens …
pub const TOLERANCE_TOKENS: u64 = 1024;
/// … and than this share of the prompt is a finding: on 34 real Codex sessions (1,132 requests)
/// the calibrated estimate's reads land within 3 % of the server's on nine in ten requests, and
/// these bounds raise a finding on real misses only (0.2 % of requests alarm although the server
/// read at least 90 % of the input; any shortfall alarmed on 48 %).
pub const TOLERANCE_SHARE: f64 = 0.05;

/// An idle gap longer than this leaves only what other conversations keep warm (the
/// instructions and tools): no finding after one.
pub const COLD_GAP_SECS: u64 = 30 * 60;

/// Requests a minute on one route above which the server may overflow to other machines.
pub const OVERFLOW_PER_MINUTE: usize = 15;

/// What a request is in its conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RowKind {
    /// The first request of its conversation.
    First,
    /// A turn (it extends the conversation).
    Turn,
    /// A `generate: false` warm-up: it fills the cache and makes no turn.
    Warmup,
    /// A compaction request (in-band, `compaction_trigger`, or `/responses/compact`).
    Compaction,
    /// The first turn after a compaction: its history was rewritten.
    AfterCompaction,
    /// It continues a response the recording does not have: its prompt is unknown.
    Undetermined,
}

/// What the server reported for a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reported {
    /// `input_tokens`.
    pub input_tokens: Option<u64>,
    /// `cached_tokens`.
    pub cached_tokens: Option<u64>,
    /// `cache_write_tokens`.
    pub cache_write_tokens: Option<u64>,
    /// `prompt_cache_diagnostics`, when the request asked for them.
    pub diagnostics: Option<PromptCacheDiagnostics>,
}

/// Dollars of one request (or a session).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Dollars {
    /// What its input paid (or would pay).
    pub paid: f64,
    /// What it would have paid had every shared token been read.
    pub ideal: f64,
    /// `paid − ideal`.
    pub lost: f64,
}

/// One cause's share of a loss.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CauseLoss {
    /// The cause.
    pub cause: Cause,
    /// Its dollars.
    pub usd: f64,
    /// Its tokens (in the figures the dollars were computed from).
    pub tokens: u64,
}

/// One ledger row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// Position in the session.
    pub index: usize,
    /// Model slug.
    pub model: String,
    /// Its cache model.
    pub cache_model: CacheKind,
    /// What it is.
    pub kind: RowKind,
    /// The request it is compared with (the latest turn of its conversation before it).
    pub previous: Option<usize>,
    /// The comparison with it.
    pub verdict: Option<PairVerdict>,
    /// Input tokens as the rendered view counts them (an estimate).
    pub tokens: u64,
    /// The simulator's prediction.
    pub prediction: Prediction,
    /// The server's figures.
    pub reported: Option<Reported>,
    /// What it would have read had every token it shares with the turn before it been read (in
    /// its own figures: the server's count where it reported one).
    pub ideal_read_tokens: u64,
    /// Dollars, when the model has a checked price.
    pub cost_usd: Option<Dollars>,
    /// The loss, by cause (empty when nothing was lost).
    pub lost_by_cause: Vec<CauseLoss>,
    /// Causes the recording adds to the server's (an idle gap, an overflow, …).
    pub notes: Vec<Cause>,
    /// The server disagreeing with the prediction beyond the tolerance, in words.
    pub finding: Option<String>,
    /// Parts the recording does not have (`tools`).
    pub not_recorded: Vec<&'static str>,
}

impl Row {
    /// Tokens it read, as the server reported (usage without `cached_tokens`: none), else as
    /// predicted.
    pub fn read_tokens(&self) -> u64 {
        match &self.reported {
            Some(r) if r.input_tokens.is_some() || r.cached_tokens.is_some() => {
                r.cached_tokens.unwrap_or(0)
            }
            _ => self.prediction.predicted.read_tokens,
        }
    }

    /// `tokens` of the rendered estimate in the row's own figures: scaled to the server's
    /// `input_tokens` where it reported them.
    pub fn scale(&self, tokens: u64) -> u64 {
        scaled(
            tokens,
            self.tokens,
            self.reported.as_ref().and_then(|r| r.input_tokens),
        )
    }

    /// Tokens it wrote, as the server reported (else as predicted).
    pub fn write_tokens(&self) -> u64 {
        match &self.reported {
            Some(r) if r.input_tokens.is_some() || r.cached_tokens.is_some() => {
                r.cache_write_tokens.unwrap_or(0)
            }
            _ => self.prediction.predicted.write_tokens,
        }
    }

    /// Its input tokens, as the server reported (else the estimate, and never fewer than the
    /// server says it read and wrote).
    pub fn input_tokens(&self) -> u64 {
        match self.reported.as_ref().and_then(|r| r.input_tokens) {
            Some(input) => input,
            None => self.tokens.max(self.read_tokens() + self.write_tokens()),
        }
    }

    /// Tokens neither read nor written.
    pub fn uncached_tokens(&self) -> u64 {
        self.input_tokens()
            .saturating_sub(self.read_tokens() + self.write_tokens())
    }

    /// Whether its figures are the server's.
    pub fn is_reported(&self) -> bool {
        self.reported
            .as_ref()
            .is_some_and(|r| r.input_tokens.is_some() || r.cached_tokens.is_some())
    }

    /// The primary cause of its divergence, if any.
    pub fn cause(&self) -> Option<Cause> {
        self.verdict.as_ref().and_then(PairVerdict::primary)
    }

    /// Dollars lost (0 when unpriced).
    pub fn lost(&self) -> f64 {
        self.cost_usd.map_or(0.0, |d| d.lost)
    }

    /// Whether its prefix broke in a way that costs (not a compaction, not a warm-up, not the
    /// server dropping earlier reasoning at a new user turn).
    pub fn is_break(&self) -> bool {
        matches!(self.kind, RowKind::Turn | RowKind::AfterCompaction)
            && self
                .verdict
                .as_ref()
                .is_some_and(|v| !v.prefix_kept || v.causes.iter().any(|c| c.is_routing()))
            && !matches!(
                self.cause(),
                Some(Cause::ContextCompacted | Cause::ReasoningDropped)
            )
    }
}

/// `tokens` of an estimate of `estimated` tokens, in a count of `input` (when there is one).
fn scaled(tokens: u64, estimated: u64, input: Option<u64>) -> u64 {
    match input {
        Some(input) if estimated > 0 => {
            ((tokens as f64 * input as f64 / estimated as f64).round() as u64).min(input)
        }
        _ => tokens,
    }
}

/// The kind of each request and the request it is compared with: the latest turn of its
/// conversation (its `prompt_cache_key`, else the latest turn), or — for a first turn — the
/// warm-up before it. A warm-up is compared with the latest turn (a resumed session's warm-up
/// re-sends the history), a compaction request with the turn before it, and the turn after a
/// compaction with the last turn before the compaction.
pub fn kinds(session: &Session) -> Vec<(RowKind, Option<usize>, bool)> {
    let mut out = Vec::with_capacity(session.len());
    let compactions = compaction_counts(session);
    // The latest turn per prompt_cache_key, and the latest turn of all.
    let mut last_by_key: std::collections::HashMap<Option<&str>, usize> = Default::default();
    let mut last_turn: Option<usize> = None;
    // A warm-up before any turn: what the first turn reads.
    let mut last_warmup: Option<usize> = None;
    let mut compacted_since: bool = false;
    for (i, request) in session.requests().iter().enumerate() {
        let key = request.shape.prompt_cache_key.as_deref();
        let previous = last_by_key
            .get(&key)
            .copied()
            .or(last_turn)
            .or(last_warmup.filter(|_| !request.warmup));
        if let crate::core::prefix::Continuation::Unrecorded { .. } = request.continuation {
            out.push((RowKind::Undetermined, previous, false));
            continue;
        }
        let kind = if request.warmup {
            RowKind::Warmup
        } else if request.shape.is_compaction {
            RowKind::Compaction
        } else if previous.is_none() {
            RowKind::First
        } else if compacted_since || previous.is_some_and(|p| compactions[i] > compactions[p]) {
            RowKind::AfterCompaction
        } else {
            RowKind::Turn
        };
        out.push((kind, previous, kind == RowKind::AfterCompaction));
        match kind {
            RowKind::Compaction => compacted_since = true,
            RowKind::Warmup => last_warmup = Some(i),
            _ => {
                compacted_since = false;
                last_turn = Some(i);
                last_by_key.insert(key, i);
            }
        }
    }
    out
}

/// How many compaction items each request carries (each distinct item read once).
fn compaction_counts(session: &Session) -> Vec<usize> {
    // By item id (ids are dense indices into the pool): no hashing per item and request.
    let mut is_compaction: Vec<Option<bool>> = vec![None; session.pool().len()];
    session
        .requests()
        .iter()
        .map(|r| {
            r.shape
                .input
                .iter()
                .filter(|id| {
                    let at = id.0 as usize;
                    if is_compaction.len() <= at {
                        is_compaction.resize(at + 1, None);
                    }
                    *is_compaction[at].get_or_insert_with(|| {
                        matches!(
                            session
                                .pool()
                                .value(**id)
                                .get("type")
                                .and_then(serde_json::Value::as_str),
                            Some("compaction" | "compaction_summary")
                        )
                    })
                })
                .count()
        })
        .collect()
}

/// Prices one row and splits its loss; fills `cost_usd`, `ideal_read_tokens`, `lost_by_cause`
/// and `finding`. `overflow` says the row's route ran past the overflow rate.
pub fn price(row: &mut Row, prices: &PriceTable, tier: Option<&str>, overflow: bool) {
    let p = row.prediction.clone();
    let counted = |tokens: u64| match p.cache_model {
        CacheKind::Prefix => cacheable_steps(tokens, p.floor_tokens, 128),
        CacheKind::Breakpoints if tokens >= p.floor_tokens => tokens,
        CacheKind::Breakpoints => 0,
    };
    // Estimate units: what was shareable, and what of it was at the front.
    let (shareable, prefix) = match (row.kind, row.verdict.as_ref()) {
        // The server itself stops at the dropped reasoning: what follows cannot be read.
        (RowKind::Turn, Some(v)) if v.causes.contains(&Cause::ReasoningDropped) => {
            (v.reusable_tokens, v.reusable_tokens)
        }
        (RowKind::Turn, Some(v)) => (v.shared_tokens, v.reusable_tokens),
        (RowKind::AfterCompaction, Some(v)) => (v.reusable_tokens, v.reusable_tokens),
        _ => (0, 0),
    };
    let causes: Vec<Cause> = row
        .verdict
        .as_ref()
        .map(|v| v.causes.clone())
        .unwrap_or_default();
    let input = row.input_tokens();
    let reported = row.is_reported();
    let (input_reported, estimated) = (
        row.reported.as_ref().and_then(|r| r.input_tokens),
        row.tokens,
    );
    let scale = move |tokens: u64| scaled(tokens, estimated, input_reported);
    let (read, written) = (row.read_tokens(), row.write_tokens());
    // In the row's own figures (the server's count where it reported one): the floor and the
    // steps apply to what the server counts.
    let ideal_read_paid = counted(scale(shareable)).max(read);
    row.ideal_read_tokens = ideal_read_paid;
    row.cost_usd = None;
    row.lost_by_cause.clear();
    let Some(rates) = prices.rates(&row.model, p.cache_model, input, tier) else {
        return;
    };
    if p.undetermined && !reported {
        return;
    }
    let paid = rates.input_cost(read, written, input.saturating_sub(read + written));
    let own_cost = matches!(
        row.kind,
        RowKind::First | RowKind::Warmup | RowKind::Compaction | RowKind::Undetermined
    );
    let ideal_write_paid = match p.cache_model {
        CacheKind::Breakpoints => scale(p.latest_breakpoint_tokens).saturating_sub(ideal_read_paid),
        CacheKind::Prefix => 0,
    };
    let ideal_cost = rates.input_cost(
        ideal_read_paid,
        ideal_write_paid,
        input.saturating_sub(ideal_read_paid + ideal_write_paid),
    );
    let ideal = if own_cost { paid } else { ideal_cost.min(paid) };
    let lost = (paid - ideal).max(0.0);
    row.cost_usd = Some(Dollars { paid, ideal, lost });
    if lost <= 0.0 {
        return;
    }
    let prefix_paid = counted(scale(prefix)).min(ideal_read_paid);
    let break_tokens = ideal_read_paid.saturating_sub(prefix_paid);
    let rest_tokens = prefix_paid.saturating_sub(read);
    let routing = causes.iter().copied().find(|c| c.is_routing());
    let divergence = causes
        .iter()
        .copied()
        .find(|c| !c.is_routing())
        .or(routing)
        .unwrap_or(Cause::InputChanged);
    let rest_cause = routing.unwrap_or(if p.expired {
        Cause::IdleGap
    } else if overflow {
        Cause::RoutingOverflow
    } else if p.cache_model == CacheKind::Breakpoints && p.predicted.read_tokens < counted(prefix) {
        Cause::NoBreakpoint
    } else {
        Cause::ServerShortfall
    });
    let total = break_tokens + rest_tokens;
    if total == 0 {
        row.lost_by_cause.push(CauseLoss {
            cause: rest_cause,
            usd: lost,
            tokens: 0,
        });
    }
    for (cause, tokens) in [(divergence, break_tokens), (rest_cause, rest_tokens)] {
        if tokens == 0 {
            continue;
        }
        let usd = lost * tokens as f64 / total as f64;
        match row.lost_by_cause.iter_mut().find(|l| l.cause == cause) {
            Some(l) => {
                l.usd += usd;
                l.tokens += tokens;
            }
            None => row.lost_by_cause.push(CauseLoss { cause, usd, tokens }),
        }
    }
    for l in &row.lost_by_cause {
        if !l.cause.is_servers() && !row.notes.contains(&l.cause) {
            row.notes.push(l.cause);
        }
    }
}

/// The server's `cached_tokens` against the predicted read, in words, beyond the tolerance.
pub fn finding(row: &Row) -> Option<String> {
    let cached = row.reported.as_ref()?.cached_tokens?;
    // What the recording cannot predict: the first request (it reads what earlier sessions left
    // warm), a compaction and the turn after it (the server reads only the instructions and
    // tools), and a request after a long idle gap.
    if row.prediction.undetermined
        || matches!(
            row.kind,
            RowKind::First | RowKind::Compaction | RowKind::AfterCompaction
        )
        || row
            .prediction
            .idle_gap_secs
            .is_some_and(|g| g > COLD_GAP_SECS)
    {
        return None;
    }
    let predicted = row.prediction.predicted.read_tokens;
    let input = row.input_tokens();
    let tolerance = TOLERANCE_TOKENS.max((input as f64 * TOLERANCE_SHARE) as u64);
    if cached.abs_diff(predicted) <= tolerance {
        return None;
    }
    let unsure = if row.not_recorded.is_empty() {
        String::new()
    } else {
        format!(
            " (cannot tell for sure: the recording does not have the {})",
            row.not_recorded.join(", ")
        )
    };
    Some(if cached < predicted {
        format!(
            "server read {} where the rules predict {} (beyond the estimate's ±{}): evicted, \
             overflowed past ~15 requests/min, or routed elsewhere{unsure}",
            grouped(cached),
            grouped(predicted),
            grouped(tolerance)
        )
    } else {
        format!(
            "server read {}, more than the {} the rules predict (beyond the estimate's ±{}): the \
             server renders and counts the prompt its own way, or this model does not cache as \
             the `{}` model{unsure}",
            grouped(cached),
            grouped(predicted),
            grouped(tolerance),
            row.cache_model.as_str()
        )
    })
}
