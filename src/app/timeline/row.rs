//! Building a [`TimelineRow`] from an arriving event: its filter type, badge and preview, computed
//! once so that drawing a row costs nothing but the text already there.

use crate::core::items::ResponseItem;
use crate::core::stream::{MappedEvent, TimelineEntry};

use super::{Badge, PREVIEW_CHARS, TimelineRow};

/// Filter type of events whose data did not parse.
pub const UNPARSED_TYPE: &str = "(unparsed)";
/// Filter type of events whose data has no `type`.
pub const UNTYPED: &str = "(no type)";

impl TimelineRow {
    /// The row for `entry` of attempt `attempt`.
    pub fn new(attempt: u32, entry: TimelineEntry) -> Self {
        let type_key = match (&entry.data_type, entry.is_unparsed()) {
            (_, true) => UNPARSED_TYPE.to_string(),
            (Some(t), false) => t.to_string(),
            (None, false) => UNTYPED.to_string(),
        };
        let badge = if entry.error.is_some() {
            Some(Badge::Error)
        } else if entry.is_unparsed() {
            Some(Badge::Unparsed)
        } else if entry.mapped.is_empty() {
            Some(Badge::Ignored)
        } else {
            None
        };
        let preview = shorten(&crate::core::redact::redacted(&preview_of(&entry)));
        Self {
            attempt,
            entry,
            type_key,
            preview,
            badge,
        }
    }

    /// True when the raw data or event name contains `needle` (already lower-case).
    pub fn matches_text(&self, needle: &str) -> bool {
        needle.is_empty()
            || contains_ignore_case(&self.entry.raw.data, needle)
            || self
                .entry
                .raw
                .event
                .as_deref()
                .is_some_and(|e| contains_ignore_case(e, needle))
    }
}

fn contains_ignore_case(haystack: &str, needle_lower: &str) -> bool {
    if haystack.is_ascii() && needle_lower.is_ascii() {
        let (h, n) = (haystack.as_bytes(), needle_lower.as_bytes());
        return n.len() <= h.len()
            && h.windows(n.len())
                .any(|w| w.iter().zip(n).all(|(a, b)| a.to_ascii_lowercase() == *b));
    }
    haystack.to_lowercase().contains(needle_lower)
}

/// What a row previews: the error, the unparsed reason, or the mapped event's payload.
fn preview_of(entry: &TimelineEntry) -> String {
    if let Some(error) = &entry.error {
        return error.to_string();
    }
    if let Some(why) = &entry.unparsed {
        return format!("{why}: {}", entry.raw.data);
    }
    match entry.mapped.last() {
        Some(event) => preview_event(event),
        None => entry.note.clone().unwrap_or_default(),
    }
}

fn preview_event(event: &MappedEvent) -> String {
    match event {
        MappedEvent::OutputTextDelta(delta) => format!("{delta:?}"),
        MappedEvent::ToolCallInputDelta { delta, .. } => format!("{delta:?}"),
        MappedEvent::ReasoningSummaryDelta { delta, .. }
        | MappedEvent::ReasoningContentDelta { delta, .. } => format!("{delta:?}"),
        MappedEvent::ReasoningSummaryDone { text, .. } => format!("{text:?}"),
        MappedEvent::OutputItemAdded(item) | MappedEvent::OutputItemDone(item) => {
            item_preview(item)
        }
        MappedEvent::Completed {
            response_id,
            token_usage,
            ..
        } => match token_usage {
            Some(u) => format!(
                "{response_id} · {} in ({} cached) · {} out",
                u.input_tokens, u.cached_input_tokens, u.output_tokens
            ),
            None => response_id.clone(),
        },
        MappedEvent::ServerModel(model) => model.clone(),
        MappedEvent::ModelsEtag(etag) => etag.clone(),
        MappedEvent::ServerReasoningIncluded(on) => on.to_string(),
        MappedEvent::ReasoningSummaryPartAdded { summary_index } => {
            format!("summary part {summary_index}")
        }
        MappedEvent::SafetyBuffering(b) => b.use_cases.join(", "),
        MappedEvent::ModelVerifications(v) => format!("{v:?}"),
        MappedEvent::TurnModerationMetadata(_) | MappedEvent::Created => String::new(),
    }
}

/// `type id name` of an item (the call name for calls).
fn item_preview(item: &ResponseItem) -> String {
    let name = match item {
        ResponseItem::FunctionCall(call) => Some(call.name.as_str()),
        ResponseItem::CustomToolCall(call) => Some(call.name.as_str()),
        ResponseItem::Message(message) => Some(message.role.as_str()),
        _ => None,
    };
    let mut text = item.type_name().to_string();
    if let Some(id) = item.id() {
        text.push(' ');
        text.push_str(id);
    }
    if let Some(name) = name {
        text.push(' ');
        text.push_str(name);
    }
    text
}

/// At most [`PREVIEW_CHARS`] characters on one line.
fn shorten(text: &str) -> String {
    let mut out: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(PREVIEW_CHARS)
        .collect();
    if text.chars().nth(PREVIEW_CHARS).is_some() {
        out.push('…');
    }
    out
}
