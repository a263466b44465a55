//! The drill-down of one request: its rendered parts grouped by source, then by item (a tool
//! definition, a message, a call, an output), each with its tokens, its share, whether the
//! cache read it, its JSON pointer (to open in the inspector) and a short preview.

use serde::Serialize;

use super::RequestAnatomy;
use crate::core::ledger::render::{Kind, Place, Segment, pointer};
use crate::core::ledger::{Ledger, Source};

/// Characters of text a preview keeps.
pub const PREVIEW_CHARS: usize = 80;

/// One part of a request's breakdown: an item (or a header part) of one source.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Part {
    /// Its source.
    pub source: Source,
    /// What it is (`tool`, `block`, `call`, `output`, …).
    pub kind: &'static str,
    /// A tool's name, a message's role.
    pub label: String,
    /// Its tokens (its segments summed).
    pub tokens: u64,
    /// Tokens of it the cache read (the prompt up to the request's cached count).
    pub cached_tokens: u64,
    /// Position of its item in the whole input (None for the header: settings, tools,
    /// instructions).
    pub item: Option<usize>,
    /// The JSON pointer of its first segment.
    pub pointer: String,
    /// The start of its text (one line).
    pub preview: String,
}

/// The parts of request `anatomy.index`, largest first within each source, sources in
/// [`Source::ALL`] order. Consecutive segments of one item and source are one part.
pub fn parts(ledger: &Ledger, anatomy: &RequestAnatomy) -> Vec<Part> {
    let rendered = &ledger.rendered;
    let Some(layout) = rendered.layouts.get(anatomy.index) else {
        return Vec::new();
    };
    let tools_not_recorded = layout.not_recorded.contains(&"tools");
    let anchor = layout.anchor_segment();
    let mut out: Vec<Part> = Vec::new();
    let mut last_key: Option<(Source, Option<usize>, bool)> = None;
    for (k, id) in layout.parts.iter().enumerate() {
        let segment = rendered.segments.get(*id);
        let is_anchor = Some(*id) == anchor;
        let source = if tools_not_recorded && is_anchor {
            Source::Tools
        } else {
            segment.source
        };
        let item = match layout.place(k) {
            Some(Place::Item { index, .. }) => Some(index),
            _ => None,
        };
        let start = layout.cum[k];
        let end = layout.cum[k + 1];
        let cached = anatomy.cached.clamp(start, end) - start;
        // Header parts are one part each (each tool its own); an item's segments merge.
        let key = (source, item, item.is_none());
        if item.is_some()
            && last_key == Some(key)
            && let Some(last) = out.last_mut()
        {
            last.tokens += segment.tokens;
            last.cached_tokens += cached;
            // A marker (a call run's framing) names nothing: the item's content does.
            if last.kind == Kind::Marker.as_str() && segment.kind != Kind::Marker {
                last.kind = segment.kind.as_str();
                last.label = segment.label.as_deref().unwrap_or("").to_string();
                last.pointer = pointer(layout, &rendered.segments, k);
                last.preview = preview_of(segment);
            }
            continue;
        }
        last_key = Some(key);
        let label = if is_anchor && tools_not_recorded {
            "tools and framing (not recorded; sized on the server's count)".to_string()
        } else {
            segment.label.as_deref().unwrap_or("").to_string()
        };
        out.push(Part {
            source,
            kind: segment.kind.as_str(),
            label,
            tokens: segment.tokens,
            cached_tokens: cached,
            item,
            pointer: pointer(layout, &rendered.segments, k),
            preview: preview_of(segment),
        });
    }
    out.sort_by(|a, b| {
        a.source
            .cmp(&b.source)
            .then_with(|| b.tokens.cmp(&a.tokens))
            .then_with(|| a.item.cmp(&b.item))
    });
    out
}

/// The preview of a segment's content.
fn preview_of(segment: &Segment) -> String {
    match segment.text() {
        Some(text) => preview(text),
        None if matches!(segment.kind, Kind::Reasoning | Kind::Compaction) => {
            "(encrypted)".to_string()
        }
        None => String::new(),
    }
}

/// The first [`PREVIEW_CHARS`] characters of `text` on one line.
fn preview(text: &str) -> String {
    let mut out: String = text
        .trim_start()
        .chars()
        .take(PREVIEW_CHARS)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if text.trim_start().chars().count() > PREVIEW_CHARS {
        out.push('…');
    }
    out
}
