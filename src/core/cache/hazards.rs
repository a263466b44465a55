//! Hazards the simulator sees in a session, each with its fix (issue 21 item 6):
//!
//! - `cache_stuck` — the cached tokens stay at the same size (instructions + tools) over three or
//!   more requests while the prompt grows: the breakpoint pattern of Codex on Lite models;
//! - `tools_changed` — the tool list, or its key order, changes mid-session;
//! - `cache_key_changed` — `prompt_cache_key` changes mid-session (another route, nothing held);
//! - `idle_gap` — a gap between two requests longer than the TTL;
//! - `overflow_rate` — more than 15 requests in a minute on one route (prefix and key);
//! - `stable_prefix_behind_break` — a breakpoint model whose large stable prefix sits behind a
//!   changing message with no explicit breakpoint to keep it.

use serde::Serialize;

use super::sim::Prediction;
use crate::core::format::grouped;
use crate::core::models::cache::CacheKind;
use crate::core::prefix::{BreakAt, Session};

/// Requests a minute on one route above which the server may overflow to other machines.
pub const OVERFLOW_PER_MINUTE: usize = 15;

/// One hazard.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hazard {
    /// Fixed code (see the module docs).
    pub code: &'static str,
    /// The request where it shows.
    pub request: usize,
    /// What happens, in words.
    pub message: String,
    /// What to do.
    pub fix: String,
}

/// The hazards of `session` given its predictions.
pub fn find(session: &Session, predictions: &[Prediction]) -> Vec<Hazard> {
    let requests = session.requests();
    let mut out = Vec::new();
    let read = |p: &Prediction| {
        requests[p.index]
            .meta
            .reported_cached_tokens
            .unwrap_or(p.predicted.read_tokens)
    };
    // cache_stuck: one run of three or more.
    let mut run_start: Option<usize> = None;
    for w in predictions.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        let same = read(a) > 0
            && read(a).abs_diff(read(b)) <= 128
            && b.input_tokens > a.input_tokens
            && a.route == b.route;
        match (same, run_start) {
            (true, None) => run_start = Some(a.index),
            (true, Some(_)) => {}
            (false, Some(start)) => {
                push_stuck(&mut out, predictions, start, a.index, read(a));
                run_start = None;
            }
            (false, None) => {}
        }
        if out.iter().any(|h| h.code == "cache_stuck") {
            break;
        }
    }
    if let (Some(start), Some(last)) = (run_start, predictions.last())
        && !out.iter().any(|h| h.code == "cache_stuck")
    {
        push_stuck(&mut out, predictions, start, last.index, read(last));
    }
    for w in predictions.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        let (ra, rb) = (&requests[a.index], &requests[b.index]);
        if ra.shape.model == rb.shape.model {
            let tools = |s: &crate::core::prefix::RequestShape| -> Vec<_> {
                s.parts_at(BreakAt::Tools).map(|p| p.id).collect()
            };
            if tools(&ra.shape) != tools(&rb.shape) {
                out.push(Hazard {
                    code: "tools_changed",
                    request: b.index,
                    message: format!(
                        "the tool list (or its key order) of request {} differs from request {}'s: \
                         everything after it is uncached",
                        b.index, a.index
                    ),
                    fix: "keep the tools and each schema's key order fixed for the whole session \
                          (serialize them once); what-if undo-tools:K shows the saving"
                        .to_string(),
                });
            }
        }
        if ra.shape.prompt_cache_key != rb.shape.prompt_cache_key {
            out.push(Hazard {
                code: "cache_key_changed",
                request: b.index,
                message: format!(
                    "prompt_cache_key changes at request {}: it is routed where nothing of \
                     this thread is held",
                    b.index
                ),
                fix: "send one prompt_cache_key per thread (Codex: the thread id) for every \
                      request of it"
                    .to_string(),
            });
        }
        if let Some(gap) = b.idle_gap_secs
            && gap > a.ttl_secs
        {
            out.push(Hazard {
                code: "idle_gap",
                request: b.index,
                message: format!(
                    "{} s idle before request {}, past the {} s the cache is held",
                    grouped(gap),
                    b.index,
                    grouped(a.ttl_secs)
                ),
                fix: "ask for a longer TTL (prompt_cache_options.ttl \"12h\" on breakpoint \
                      models, prompt_cache_retention \"24h\" on prefix models); what-if ttl:12h \
                      or close-gap:K shows the saving"
                    .to_string(),
            });
        }
    }
    // overflow_rate: a sliding minute per route.
    let mut flagged: Vec<u64> = Vec::new();
    for (i, p) in predictions.iter().enumerate() {
        let Some(now) = requests[p.index].meta.sent_at_ms else {
            continue;
        };
        if flagged.contains(&p.route) {
            continue;
        }
        let in_minute = predictions[..=i]
            .iter()
            .rev()
            .filter(|q| q.route == p.route)
            .take_while(|q| {
                requests[q.index]
                    .meta
                    .sent_at_ms
                    .is_some_and(|t| now - t < 60_000)
            })
            .count();
        if in_minute > OVERFLOW_PER_MINUTE {
            flagged.push(p.route);
            out.push(Hazard {
                code: "overflow_rate",
                request: p.index,
                message: format!(
                    "{in_minute} requests within a minute on one prefix and key by request {}: \
                     past ~{OVERFLOW_PER_MINUTE} a minute the server may overflow to other \
                     machines and miss",
                    p.index
                ),
                fix: "spread the requests over more prompt_cache_key values (one per \
                      conversation), or slow them down"
                    .to_string(),
            });
        }
    }
    for p in predictions {
        let lost = p.ideal_read_tokens.saturating_sub(p.predicted.read_tokens);
        if p.cache_model == CacheKind::Breakpoints
            && p.explicit_breakpoints == 0
            && p.break_at.is_some()
            && lost >= 1024
        {
            let k = p
                .shared_item
                .map_or_else(|| "K".to_string(), |k| k.to_string());
            out.push(Hazard {
                code: "stable_prefix_behind_break",
                request: p.index,
                message: format!(
                    "request {} shares {} tokens with the one before but reads {}: the stable \
                     prefix sits behind a changed message{} and no breakpoint marks it (no \
                     fallback to an unmarked prefix)",
                    p.index,
                    grouped(p.ideal_read_tokens),
                    grouped(p.predicted.read_tokens),
                    p.break_at
                        .as_ref()
                        .map_or_else(String::new, |at| format!(" at {at}"))
                ),
                fix: format!(
                    "put an explicit prompt_cache_breakpoint on the last stable item (what-if \
                     breakpoint-after:{k}), or keep changing content after the latest user \
                     message"
                ),
            });
        }
    }
    out.sort_by_key(|h| h.request);
    out
}

fn push_stuck(out: &mut Vec<Hazard>, predictions: &[Prediction], from: usize, to: usize, at: u64) {
    if to < from + 2 {
        return;
    }
    let grew = |i: usize| {
        predictions
            .iter()
            .find(|p| p.index == i)
            .map_or(0, |p| p.input_tokens)
    };
    out.push(Hazard {
        code: "cache_stuck",
        request: from,
        message: format!(
            "requests {from} to {to} read about {} tokens each while the prompt grows from {} to \
             {}: only the instructions and tools are reused",
            grouped(at),
            grouped(grew(from)),
            grouped(grew(to))
        ),
        fix: "end each request with the changing content after a stable, marked prefix: an \
              explicit breakpoint after the conversation so far (what-if breakpoint-after:K), or \
              no edits to earlier items"
            .to_string(),
    });
}
