//! Hazards: what to fix, each read from the ledger's rows and stated in the figures they hold
//! (no hazard computes a figure of its own):
//!
//! - `cache_stuck` — three or more requests on one route read about the same number of tokens
//!   while what they share with the turn before them grows past it: only the start of the
//!   prompt is reused;
//! - `tools_changed` — the tools changed between two turns of one model (never a compaction);
//! - `cache_key_changed` — `prompt_cache_key` changed mid-conversation;
//! - `idle_gap` — a gap longer than the cache's retention lost a kept prefix;
//! - `overflow_rate` — more than ~15 requests a minute on one route;
//! - `stable_prefix_behind_break` — a breakpoint model lost a shared prefix no breakpoint covers.

use serde::Serialize;

use super::cause::Cause;
use super::render::Rendered;
use super::rows::{OVERFLOW_PER_MINUTE, Row, RowKind};
use super::summary::usd;
use crate::core::format::grouped;
use crate::core::prefix::Session;

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

fn lost_words(row: &Row, cause: Cause) -> String {
    row.lost_by_cause
        .iter()
        .find(|l| l.cause == cause && l.usd > 0.0)
        .map_or_else(String::new, |l| format!(" ({} lost)", usd(l.usd)))
}

/// The hazards of a session, from its rows (and its rendered view, to name items).
pub fn find(session: &Session, rendered: &Rendered, rows: &[Row]) -> Vec<Hazard> {
    let mut out = Vec::new();
    stuck(rows, &mut out);
    for row in rows {
        let Some(previous) = row.previous else {
            continue;
        };
        let causes = row
            .verdict
            .as_ref()
            .map(|v| v.causes.as_slice())
            .unwrap_or(&[]);
        let turn = matches!(row.kind, RowKind::Turn);
        if turn && causes.contains(&Cause::ToolsChanged) && !causes.contains(&Cause::ModelChanged) {
            out.push(Hazard {
                code: "tools_changed",
                request: row.index,
                message: format!(
                    "the tools of request {} differ from request {previous}'s: everything after \
                     them is read again{}",
                    row.index,
                    lost_words(row, Cause::ToolsChanged)
                ),
                fix: "keep the tools, their order and each schema's property order fixed for \
                      the whole session (serialize them once); what-if undo-tools:K shows the \
                      saving"
                    .to_string(),
            });
        }
        if causes.contains(&Cause::PromptCacheKeyChanged) {
            out.push(Hazard {
                code: "cache_key_changed",
                request: row.index,
                message: format!(
                    "prompt_cache_key changes at request {}: it is routed where nothing of this \
                     conversation is held{}",
                    row.index,
                    lost_words(row, Cause::PromptCacheKeyChanged)
                ),
                fix: "send one prompt_cache_key per conversation (Codex: the thread id) for \
                      every request of it"
                    .to_string(),
            });
        }
        if row.notes.contains(&Cause::IdleGap)
            && let Some(gap) = row.prediction.idle_gap_secs
        {
            out.push(Hazard {
                code: "idle_gap",
                request: row.index,
                message: format!(
                    "{} s idle before request {}, past the {} s the cache is held{}",
                    grouped(gap),
                    row.index,
                    grouped(row.prediction.ttl_secs),
                    lost_words(row, Cause::IdleGap)
                ),
                fix: "ask for a longer TTL (prompt_cache_options.ttl \"12h\" on breakpoint \
                      models, prompt_cache_retention \"24h\" on prefix models); what-if ttl:12h \
                      or close-gap:K shows the saving"
                    .to_string(),
            });
        }
        if let Some(l) = row
            .lost_by_cause
            .iter()
            .find(|l| l.cause == Cause::NoBreakpoint && l.tokens >= 1024)
        {
            let divergence = row.verdict.as_ref().and_then(|v| v.divergence.as_ref());
            let item = divergence.map_or_else(String::new, |d| format!(" at {}", d.pointer));
            // The last body input item the request shares with the turn before it: where an
            // explicit breakpoint would keep the shared prefix.
            let shared_item = divergence
                .and_then(|d| d.part.checked_sub(1))
                .and_then(|k| rendered.layouts.get(row.index)?.item_of(k))
                .map_or_else(|| "K".to_string(), |k| k.to_string());
            out.push(Hazard {
                code: "stable_prefix_behind_break",
                request: row.index,
                message: format!(
                    "request {} shares {} tokens of its prefix with request {previous} but \
                     reads {}: the prefix runs past the last breakpoint before the change{item}, \
                     and no breakpoint marks it ({} lost)",
                    row.index,
                    grouped(row.read_tokens() + l.tokens),
                    grouped(row.read_tokens()),
                    usd(l.usd)
                ),
                fix: format!(
                    "put an explicit prompt_cache_breakpoint on the last stable item (what-if \
                     breakpoint-after:{shared_item}), or keep changing content after the latest \
                     user message"
                ),
            });
        }
    }
    let mut flagged: Vec<u64> = Vec::new();
    for row in rows {
        if row.notes.contains(&Cause::RoutingOverflow) && !flagged.contains(&row.prediction.route) {
            flagged.push(row.prediction.route);
            let in_minute = rows
                .iter()
                .filter(|r| r.prediction.route == row.prediction.route)
                .filter(|r| {
                    let t = |r: &Row| session.requests()[r.index].meta.sent_at_ms;
                    matches!((t(r), t(row)), (Some(a), Some(b)) if a <= b && b - a < 60_000)
                })
                .count();
            out.push(Hazard {
                code: "overflow_rate",
                request: row.index,
                message: format!(
                    "{in_minute} requests within a minute on one prefix and key by request {}: \
                     past ~{OVERFLOW_PER_MINUTE} a minute the server may overflow to other \
                     machines and miss",
                    row.index
                ),
                fix: "spread the requests over more prompt_cache_key values (one per \
                      conversation), or slow them down"
                    .to_string(),
            });
        }
    }
    out.sort_by_key(|h| h.request);
    out
}

/// `cache_stuck`: the first run of three or more requests on one route whose read stays within
/// 128 tokens while their input grows and each reads at least 1,024 tokens less than it shares
/// with the turn before it (the row's ideal read).
fn stuck(rows: &[Row], out: &mut Vec<Hazard>) {
    let short = |r: &Row| r.ideal_read_tokens >= r.read_tokens() + 1024;
    let same = |a: &Row, b: &Row| {
        a.read_tokens() > 0
            && a.read_tokens().abs_diff(b.read_tokens()) <= 128
            && b.input_tokens() > a.input_tokens()
            && short(a)
            && short(b)
            && a.prediction.route == b.prediction.route
            && !matches!(b.kind, RowKind::Warmup | RowKind::Compaction)
    };
    let mut start = 0;
    while start < rows.len() {
        let mut end = start;
        while end + 1 < rows.len() && same(&rows[end], &rows[end + 1]) {
            end += 1;
        }
        if end >= start + 2 {
            let (a, b) = (&rows[start], &rows[end]);
            let reads: Vec<u64> = rows[start..=end].iter().map(Row::read_tokens).collect();
            let (lo, hi) = (
                reads.iter().copied().min().unwrap_or(0),
                reads.iter().copied().max().unwrap_or(0),
            );
            let read = if lo == hi {
                grouped(lo)
            } else {
                format!("{} to {}", grouped(lo), grouped(hi))
            };
            out.push(Hazard {
                code: "cache_stuck",
                request: a.index,
                message: format!(
                    "requests {} to {} read {read} tokens each while their input grows from {} \
                     to {}: only the start of the prompt is reused",
                    a.index,
                    b.index,
                    grouped(a.input_tokens()),
                    grouped(b.input_tokens())
                ),
                fix: "end each request with the changing content after a stable, marked \
                      prefix: an explicit breakpoint after the conversation so far (what-if \
                      breakpoint-after:K), or no edits to earlier items"
                    .to_string(),
            });
            return;
        }
        start = end + 1;
    }
}
