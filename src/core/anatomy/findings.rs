//! Findings that save tokens: tools offered in every request and never called (with what they
//! cost per request and over the session), the largest tool outputs (with the call that
//! produced them), the sources that grew fastest, and the turns left until the context window
//! and until Codex's auto-compaction at the current growth. Each names the request and item it
//! is about, so the app can open it.

use std::collections::HashMap;

use serde::Serialize;

use super::{BySource, RequestAnatomy, Tool};
use crate::core::ledger::render::{Kind, Place, SegmentId, pointer};
use crate::core::ledger::{Ledger, Row, RowKind, Source};

/// How many of the largest tool outputs are listed.
pub const LARGEST_OUTPUTS: usize = 5;

/// Turns over which the current growth is measured.
pub const GROWTH_WINDOW: usize = 10;

/// A tool offered in every request and never called.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UnusedTool {
    /// Its name.
    pub name: String,
    /// Its definition's tokens in the latest request that offers it.
    pub tokens_per_request: u64,
    /// Its tokens summed over the requests that offer it.
    pub tokens_total: u64,
    /// Its share of those requests' input dollars (each request's paid, split by tokens), when
    /// priced.
    pub usd_total: Option<f64>,
}

/// One large tool output.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LargeOutput {
    /// The tool whose call produced it.
    pub tool: String,
    /// Its tokens.
    pub tokens: u64,
    /// The first request whose prompt carries it.
    pub request: usize,
    /// Its item's position in that request's whole input.
    pub item: usize,
    /// The JSON pointer of its text there.
    pub pointer: String,
    /// Requests that carry it.
    pub carried_by: usize,
}

/// How much a source grew.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Growth {
    /// The source.
    pub source: Source,
    /// Its tokens in the first request of the span.
    pub from: u64,
    /// Its tokens in the latest request.
    pub to: u64,
    /// Tokens per turn over the span.
    pub per_turn: f64,
}

/// The headroom left at the current growth.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Headroom {
    /// The latest turn's input tokens (the server's count where reported).
    pub tokens: u64,
    /// Tokens added per turn, over the last turns since the latest compaction.
    pub growth_per_turn: f64,
    /// Turns until the context window is full.
    pub turns_to_window: Option<u64>,
    /// Turns until Codex compacts automatically.
    pub turns_to_auto_compact: Option<u64>,
}

/// Every finding of a session.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Findings {
    /// Tools offered in every request that offers tools, and never called.
    pub unused_tools: Vec<UnusedTool>,
    /// The largest tool outputs, largest first.
    pub largest_outputs: Vec<LargeOutput>,
    /// Sources by growth since the latest compaction (or the start), fastest first; only those
    /// that grew.
    pub growth: Vec<Growth>,
    /// Turns left, when the session has at least two turns since its latest compaction.
    pub headroom: Option<Headroom>,
}

/// The findings of a session.
pub(super) fn find(
    ledger: &Ledger,
    requests: &[RequestAnatomy],
    tools: &[Tool],
    window: Option<u64>,
    auto: Option<u64>,
) -> Findings {
    Findings {
        unused_tools: unused(ledger, requests, tools),
        largest_outputs: largest_outputs(ledger),
        growth: growth(ledger, requests),
        headroom: headroom(ledger, window, auto),
    }
}

/// Tools offered in every request that offers tools, never called.
fn unused(ledger: &Ledger, requests: &[RequestAnatomy], tools: &[Tool]) -> Vec<UnusedTool> {
    let with_tools = requests.iter().filter(|r| !r.tools.is_empty()).count();
    let mut out: Vec<UnusedTool> = Vec::new();
    for (id, tool) in tools.iter().enumerate() {
        if tool.called || tool.offered_in == 0 || tool.offered_in < with_tools {
            continue;
        }
        let mut total = 0;
        let mut latest = 0;
        let mut usd = Some(0.0);
        for r in requests {
            let Some(used) = r.tools.iter().find(|u| u.tool as usize == id) else {
                continue;
            };
            total += used.tokens;
            latest = used.tokens;
            let row = ledger.rows.get(r.index);
            usd = usd
                .zip(row.and_then(|row| share_usd(row, used.tokens)))
                .map(|(a, b)| a + b);
        }
        out.push(UnusedTool {
            name: tool.name.clone(),
            tokens_per_request: latest,
            tokens_total: total,
            usd_total: usd,
        });
    }
    out.sort_by(|a, b| {
        b.tokens_total
            .cmp(&a.tokens_total)
            .then_with(|| a.name.cmp(&b.name))
    });
    out
}

/// `tokens` of `row`'s rendered count's share of its paid input dollars.
fn share_usd(row: &Row, tokens: u64) -> Option<f64> {
    let paid = row.cost_usd?.paid;
    (row.tokens > 0).then(|| paid * tokens as f64 / row.tokens as f64)
}

/// The largest distinct tool outputs.
fn largest_outputs(ledger: &Ledger) -> Vec<LargeOutput> {
    let rendered = &ledger.rendered;
    // Per distinct output segment: where it first appears, and how many requests carry it.
    let mut first: HashMap<u32, (usize, usize)> = HashMap::new();
    let mut carried: HashMap<u32, usize> = HashMap::new();
    for (i, layout) in rendered.layouts.iter().enumerate() {
        for (k, id) in layout.parts.iter().enumerate() {
            if rendered.segments.get(*id).kind == Kind::Output {
                *carried.entry(id.0).or_default() += 1;
                first.entry(id.0).or_insert((i, k));
            }
        }
    }
    let mut ids: Vec<(u32, u64)> = first
        .keys()
        .map(|id| (*id, rendered.segments.get(SegmentId(*id)).tokens))
        .collect();
    ids.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| first[&a.0].cmp(&first[&b.0])));
    ids.truncate(LARGEST_OUTPUTS);
    ids.into_iter()
        .filter_map(|(id, tokens)| {
            let (request, k) = first[&id];
            let layout = &rendered.layouts[request];
            let Some(Place::Item { index, .. }) = layout.place(k) else {
                return None;
            };
            Some(LargeOutput {
                tool: rendered
                    .segments
                    .get(SegmentId(id))
                    .label
                    .as_deref()
                    .unwrap_or("")
                    .to_string(),
                tokens,
                request,
                item: index,
                pointer: pointer(layout, &rendered.segments, k),
                carried_by: carried.get(&id).copied().unwrap_or(0),
            })
        })
        .collect()
}

/// The turns since the latest compaction (the first after it included), in order.
fn span_since_compaction<'a, T>(
    ledger: &Ledger,
    items: &'a [T],
    index: impl Fn(&T) -> usize,
) -> Vec<&'a T> {
    let start = ledger
        .rows
        .iter()
        .rposition(|r| r.kind == RowKind::AfterCompaction)
        .unwrap_or(0);
    items
        .iter()
        .filter(|t| {
            let i = index(t);
            i >= start
                && ledger.rows.get(i).is_some_and(|r| {
                    matches!(
                        r.kind,
                        RowKind::First | RowKind::Turn | RowKind::AfterCompaction
                    )
                })
        })
        .collect()
}

/// Sources by growth over the span since the latest compaction.
fn growth(ledger: &Ledger, requests: &[RequestAnatomy]) -> Vec<Growth> {
    let span = span_since_compaction(ledger, requests, |r| r.index);
    let (Some(first), Some(last)) = (span.first(), span.last()) else {
        return Vec::new();
    };
    if span.len() < 2 {
        return Vec::new();
    }
    let turns = (span.len() - 1) as f64;
    let grow = |a: &BySource, b: &BySource| -> Vec<Growth> {
        a.iter()
            .zip(b.iter())
            .filter(|((_, x), (_, y))| y > x)
            .map(|((source, x), (_, y))| Growth {
                source,
                from: x,
                to: y,
                per_turn: (y - x) as f64 / turns,
            })
            .collect()
    };
    let mut out = grow(&first.by_source, &last.by_source);
    out.sort_by(|a, b| {
        (b.to - b.from)
            .cmp(&(a.to - a.from))
            .then_with(|| a.source.cmp(&b.source))
    });
    out
}

/// Turns left at the growth of the last [`GROWTH_WINDOW`] turns since the latest compaction.
fn headroom(ledger: &Ledger, window: Option<u64>, auto: Option<u64>) -> Option<Headroom> {
    let span = span_since_compaction(ledger, &ledger.rows, |r| r.index);
    let recent = &span[span.len().saturating_sub(GROWTH_WINDOW)..];
    let (first, last) = (recent.first()?, recent.last()?);
    if recent.len() < 2 {
        return None;
    }
    let tokens = last.input_tokens();
    let growth = (tokens as f64 - first.input_tokens() as f64) / (recent.len() - 1) as f64;
    let turns = |limit: Option<u64>| -> Option<u64> {
        let limit = limit?;
        if tokens >= limit {
            return Some(0);
        }
        (growth > 0.0).then(|| ((limit - tokens) as f64 / growth).floor() as u64)
    };
    Some(Headroom {
        tokens,
        growth_per_turn: growth,
        turns_to_window: turns(window),
        turns_to_auto_compact: turns(auto),
    })
}
