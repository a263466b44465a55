//! A session for prefix analysis: requests pushed one at a time (whole bodies, or a head plus
//! ids of items interned once, as a content-addressed store holds them), then pair verdicts, the
//! session summary, the cost of the misses and the growth series.
//!
//! Memory grows with the session's distinct elements plus one id per item per request, never
//! with copies of its bodies.

use serde::Serialize;
use serde_json::Value;

use super::PrefixError;
use super::compare::{PairReport, Warning, compare};
use super::cost::{CacheCost, PriceTable};
use super::growth::{GrowthPoint, growth};
use super::pair_diff::{PairDiff, pair_diff};
use super::pool::{ElementId, ElementPool};
use super::shape::RequestShape;
use super::tokens::Tokenizer;
use crate::core::json::{JsonMap, kind_of};

/// Default cache retention for the `idle_gap` warning: in-memory caches are typically cleared
/// after 5–10 minutes of inactivity (WIRE_SPEC §19); warn from the lower bound.
pub const DEFAULT_IDLE_GAP_SECS: u64 = 5 * 60;

/// What is known about a request besides its body.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RequestMeta {
    /// `usage.input_tokens_details.cached_tokens` of its response.
    pub reported_cached_tokens: Option<u64>,
    /// When it was sent, Unix milliseconds.
    pub sent_at_ms: Option<i64>,
    /// When its response finished, Unix milliseconds (the cache idles from here).
    pub finished_at_ms: Option<i64>,
}

/// One request of the session.
#[derive(Debug, Clone)]
pub struct SessionRequest {
    /// Its prompt order.
    pub shape: RequestShape,
    /// What is known besides the body.
    pub meta: RequestMeta,
    /// Tokens of its whole rendering.
    pub tokens: u64,
    /// Bytes of its whole rendering.
    pub bytes: u64,
}

/// Requests of one session, in order, over a shared element pool.
#[derive(Debug, Clone, Default)]
pub struct Session {
    pool: ElementPool,
    requests: Vec<SessionRequest>,
    idle_gap_secs: Option<u64>,
}

/// Totals over a session (consecutive pairs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionSummary {
    /// Number of requests.
    pub requests: usize,
    /// Consecutive pairs whose prefix broke.
    pub breaks: usize,
    /// Tokens of all renderings.
    pub input_tokens: u64,
    /// Reusable tokens summed over consecutive pairs.
    pub reusable_tokens: u64,
    /// Reported `cached_tokens` summed over the requests that report it (`None` if none does).
    pub reported_cached_tokens: Option<u64>,
}

/// Everything the analysis says about a session.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionReport {
    /// Verdicts of consecutive pairs.
    pub pairs: Vec<PairReport>,
    /// Totals.
    pub summary: SessionSummary,
    /// What the misses cost.
    pub cost: CacheCost,
    /// Bytes per request for the growth chart.
    pub growth: Vec<GrowthPoint>,
}

impl Session {
    /// An empty session counting tokens with `tokenizer`.
    pub fn new(tokenizer: Tokenizer) -> Self {
        Self {
            pool: ElementPool::new(tokenizer),
            requests: Vec::new(),
            idle_gap_secs: None,
        }
    }

    /// Sets the default cache retention used for `idle_gap` when a request does not ask for one.
    pub fn with_idle_gap_secs(mut self, secs: u64) -> Self {
        self.idle_gap_secs = Some(secs);
        self
    }

    /// Adds a whole request body; returns its index. Each input item is hashed once here; only
    /// items not seen before are serialized and tokenized.
    pub fn push_body(&mut self, body: &Value, meta: RequestMeta) -> Result<usize, PrefixError> {
        let Value::Object(head) = body else {
            return Err(PrefixError::InvalidBody {
                path: "$".to_string(),
                message: format!(
                    "a request body must be a JSON object, got {}",
                    kind_of(body)
                ),
            });
        };
        let input: Vec<ElementId> = match head.get("input") {
            Some(Value::Array(items)) => self.pool.intern_all(items),
            // A string input is one user message: one element.
            Some(text @ Value::String(_)) => vec![self.pool.intern(text)],
            Some(Value::Null) | None => Vec::new(),
            Some(other) => {
                return Err(PrefixError::InvalidBody {
                    path: "input".to_string(),
                    message: format!("input must be an array or a string, got {}", kind_of(other)),
                });
            }
        };
        self.push_parts(head, &input, meta)
    }

    /// [`Session::push_body`] taking the body: its input items move into the pool instead of
    /// being copied, so a large body is held once, not twice, while it is added.
    pub fn push_body_owned(
        &mut self,
        mut body: Value,
        meta: RequestMeta,
    ) -> Result<usize, PrefixError> {
        let items = match body.get_mut("input") {
            // The field stays in place (empty) so the body's key order and sizes are unchanged.
            Some(input @ Value::Array(_)) => std::mem::replace(input, Value::Array(Vec::new())),
            _ => return self.push_body(&body, meta),
        };
        let Value::Object(head) = &body else {
            return self.push_body(&body, meta);
        };
        let Value::Array(items) = items else {
            return self.push_body(&body, meta);
        };
        let input = self.pool.intern_all_owned(items);
        self.push_parts(head, &input, meta)
    }

    /// Interns one input item (for callers that hold items content-addressed): items that
    /// serialize identically (same keys in the same order) get the same id.
    pub fn intern_item(&mut self, item: &Value) -> ElementId {
        self.pool.intern(item)
    }

    /// Interns one input item, taking ownership.
    pub fn intern_item_owned(&mut self, item: Value) -> ElementId {
        self.pool.intern_owned(item)
    }

    /// Adds a request given as its body's top-level fields (`input` is ignored if present) and
    /// the ids of its input items; returns its index.
    pub fn push_parts(
        &mut self,
        head: &JsonMap,
        input: &[ElementId],
        meta: RequestMeta,
    ) -> Result<usize, PrefixError> {
        let shape = RequestShape::new(head, input, &mut self.pool)?;
        let (tokens, bytes) = shape.elements().fold((0, 0), |(t, b), id| {
            (t + self.pool.tokens(id), b + self.pool.bytes(id))
        });
        self.requests.push(SessionRequest {
            shape,
            meta,
            tokens,
            bytes,
        });
        Ok(self.requests.len() - 1)
    }

    /// Number of requests.
    pub fn len(&self) -> usize {
        self.requests.len()
    }

    /// Whether the session has no request.
    pub fn is_empty(&self) -> bool {
        self.requests.is_empty()
    }

    /// The requests.
    pub fn requests(&self) -> &[SessionRequest] {
        &self.requests
    }

    /// The element pool.
    pub fn pool(&self) -> &ElementPool {
        &self.pool
    }

    fn request(&self, index: usize) -> Result<&SessionRequest, PrefixError> {
        self.requests.get(index).ok_or(PrefixError::NoSuchRequest {
            index,
            len: self.requests.len(),
        })
    }

    /// The verdict for any two requests (`from` earlier). `idle_gap` is only judged for
    /// consecutive requests: requests in between keep the cache warm.
    pub fn compare(&self, from: usize, to: usize) -> Result<PairReport, PrefixError> {
        let a = self.request(from)?;
        let b = self.request(to)?;
        let verdict = compare(&self.pool, &a.shape, &b.shape);
        let idle_gap_secs = if to == from + 1 {
            let idle_from = a.meta.finished_at_ms.or(a.meta.sent_at_ms);
            match (idle_from, b.meta.sent_at_ms) {
                (Some(start), Some(end)) => Some(u64::try_from((end - start) / 1000).unwrap_or(0)),
                _ => None,
            }
        } else {
            None
        };
        let mut warnings = verdict.warnings;
        let retention = a
            .shape
            .cache_ttl_secs
            .or(self.idle_gap_secs)
            .unwrap_or(DEFAULT_IDLE_GAP_SECS);
        if idle_gap_secs.is_some_and(|gap| gap > retention) {
            warnings.push(Warning::IdleGap);
        }
        Ok(PairReport {
            from,
            to,
            prefix_kept: verdict.break_at.is_none(),
            break_at: verdict.break_at,
            causes: verdict.causes,
            warnings,
            reusable_bytes: verdict.reusable_bytes,
            reusable_tokens: verdict.reusable_tokens,
            from_tokens: a.tokens,
            to_tokens: b.tokens,
            idle_gap_secs,
            reported_cached_tokens: b.meta.reported_cached_tokens,
        })
    }

    /// Verdicts of all consecutive pairs.
    pub fn consecutive_pairs(&self) -> Vec<PairReport> {
        (1..self.requests.len())
            .filter_map(|to| self.compare(to - 1, to).ok())
            .collect()
    }

    /// Totals over the session, given its consecutive pair verdicts.
    pub fn summary(&self, pairs: &[PairReport]) -> SessionSummary {
        let reported: Vec<u64> = self
            .requests
            .iter()
            .filter_map(|r| r.meta.reported_cached_tokens)
            .collect();
        SessionSummary {
            requests: self.requests.len(),
            breaks: pairs.iter().filter(|p| !p.prefix_kept).count(),
            input_tokens: self.requests.iter().map(|r| r.tokens).sum(),
            reusable_tokens: pairs.iter().map(|p| p.reusable_tokens).sum(),
            reported_cached_tokens: (!reported.is_empty()).then(|| reported.iter().sum()),
        }
    }

    /// The full report: consecutive pairs, totals, cost of the misses, growth series.
    pub fn report(&self, prices: &PriceTable) -> SessionReport {
        let pairs = self.consecutive_pairs();
        let summary = self.summary(&pairs);
        let cost = CacheCost::of_pairs(
            &pairs,
            |to| self.requests.get(to).map_or("", |r| r.shape.model.as_str()),
            prices,
        );
        let growth = growth(&self.pool, &self.requests, &pairs);
        SessionReport {
            pairs,
            summary,
            cost,
            growth,
        }
    }

    /// Item-aligned diff of two requests, for the app.
    pub fn pair_diff(&self, from: usize, to: usize) -> Result<PairDiff, PrefixError> {
        let a = self.request(from)?;
        let b = self.request(to)?;
        Ok(pair_diff(&self.pool, from, &a.shape, to, &b.shape))
    }
}
