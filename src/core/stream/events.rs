//! Event mapping (WIRE_SPEC §13): what a client makes of each raw SSE event. Dispatch is on the
//! JSON `type` of the `data:` payload (the SSE `event:` name is not used). Every raw event becomes
//! a [`TimelineEntry`], also the ones a client ignores; data that does not parse is kept as an
//! `unparsed` entry instead of being skipped.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;

use super::cache_diagnostics::PromptCacheDiagnostics;
use super::errors::{StreamError, classify_failed, incomplete_error};
use super::sse::RawEvent;
pub use super::usage::TokenUsage;
use crate::core::items::ResponseItem;

/// A model verification the server recommends (`response.metadata`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ModelVerification {
    /// `trusted_access_for_cyber`.
    TrustedAccessForCyber,
}

/// `safety_buffering` on any event.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct SafetyBuffering {
    /// Why buffering applies.
    pub use_cases: Vec<String>,
    /// Reasons given.
    pub reasons: Vec<String>,
    /// A model to retry with, if any.
    #[serde(default)]
    pub retry_model: Option<String>,
}

/// An event a client acts on (Codex's `ResponseEvent`).
#[derive(Debug, Clone, PartialEq)]
pub enum MappedEvent {
    /// `response.created`.
    Created,
    /// `response.output_item.added` with an item that parses (boxed: items are large).
    OutputItemAdded(Box<ResponseItem>),
    /// `response.output_item.done` with an item that parses (boxed: items are large).
    OutputItemDone(Box<ResponseItem>),
    /// `response.output_text.delta`.
    OutputTextDelta(String),
    /// `response.custom_tool_call_input.delta`.
    ToolCallInputDelta {
        /// `item_id`, or else `call_id`.
        item_id: String,
        /// `call_id`.
        call_id: Option<String>,
        /// The input fragment.
        delta: String,
    },
    /// `response.reasoning_summary_text.delta`.
    ReasoningSummaryDelta {
        /// The text fragment.
        delta: String,
        /// Which summary part.
        summary_index: i64,
    },
    /// `response.reasoning_summary_text.done`.
    ReasoningSummaryDone {
        /// The reasoning item.
        item_id: String,
        /// The whole summary part.
        text: String,
        /// Which summary part.
        summary_index: i64,
    },
    /// `response.reasoning_text.delta`.
    ReasoningContentDelta {
        /// The text fragment.
        delta: String,
        /// Which content part.
        content_index: i64,
    },
    /// `response.reasoning_summary_part.added`.
    ReasoningSummaryPartAdded {
        /// Which summary part.
        summary_index: i64,
    },
    /// `response.completed`: the turn is over.
    Completed {
        /// `response.id`.
        response_id: String,
        /// `response.usage`.
        token_usage: Option<TokenUsage>,
        /// `response.end_turn`.
        end_turn: Option<bool>,
        /// `response.prompt_cache_diagnostics` (asked for with a comparison response id).
        cache_diagnostics: Option<PromptCacheDiagnostics>,
    },
    /// The model that served the request, when it changes (`openai-model` header).
    ServerModel(String),
    /// `response.metadata` verification recommendations.
    ModelVerifications(Vec<ModelVerification>),
    /// `response.metadata` moderation metadata.
    TurnModerationMetadata(Value),
    /// `safety_buffering` on an event (reported before the event's own mapping).
    SafetyBuffering(SafetyBuffering),
    /// `x-models-etag` response header.
    ModelsEtag(String),
    /// `x-reasoning-included` response header.
    ServerReasoningIncluded(bool),
}

impl MappedEvent {
    /// The snake_case kind used in machine-readable output.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Created => "created",
            Self::OutputItemAdded(_) => "output_item_added",
            Self::OutputItemDone(_) => "output_item_done",
            Self::OutputTextDelta(_) => "output_text_delta",
            Self::ToolCallInputDelta { .. } => "tool_call_input_delta",
            Self::ReasoningSummaryDelta { .. } => "reasoning_summary_delta",
            Self::ReasoningSummaryDone { .. } => "reasoning_summary_done",
            Self::ReasoningContentDelta { .. } => "reasoning_content_delta",
            Self::ReasoningSummaryPartAdded { .. } => "reasoning_summary_part_added",
            Self::Completed { .. } => "completed",
            Self::ServerModel(_) => "server_model",
            Self::ModelVerifications(_) => "model_verifications",
            Self::TurnModerationMetadata(_) => "turn_moderation_metadata",
            Self::SafetyBuffering(_) => "safety_buffering",
            Self::ModelsEtag(_) => "models_etag",
            Self::ServerReasoningIncluded(_) => "server_reasoning_included",
        }
    }
}

/// One raw event and what a client makes of it.
#[derive(Debug, Clone, PartialEq)]
pub struct TimelineEntry {
    /// The event as decoded.
    pub raw: RawEvent,
    /// The `type` of the data, when the data is a JSON object with a string `type` (borrowed for
    /// the event types of §13 and the common ones clients ignore).
    pub data_type: Option<Cow<'static, str>>,
    /// Mapped events, in the order a client receives them (server model, safety buffering, then
    /// the event's own mapping). Empty for events a client ignores.
    pub mapped: Vec<MappedEvent>,
    /// The error this event records (`response.failed`, `response.incomplete`, a completion that
    /// does not parse). It only ends the turn at end of stream, if no completion came later.
    pub error: Option<StreamError>,
    /// Why the data did not parse as an event, when it did not.
    pub unparsed: Option<String>,
    /// Why a known event produced nothing (for example, its item did not parse).
    pub note: Option<String>,
}

impl TimelineEntry {
    /// The kind shown for this event: its own mapping, else the last derived event.
    pub fn mapped_kind(&self) -> Option<&'static str> {
        self.mapped.last().map(MappedEvent::kind)
    }

    /// True when the data did not parse.
    pub fn is_unparsed(&self) -> bool {
        self.unparsed.is_some()
    }
}

/// The top-level keys a client reads from an event's data. Strings that are usually short and
/// escape-free borrow from the data.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    headers: Option<Value>,
    metadata: Option<Value>,
    response: Option<Value>,
    item: Option<Value>,
    #[serde(borrow)]
    item_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    call_id: Option<Cow<'a, str>>,
    delta: Option<String>,
    summary_index: Option<i64>,
    content_index: Option<i64>,
    safety_buffering: Option<Value>,
    text: Option<String>,
}

/// `response` of `response.completed`.
#[derive(Deserialize)]
struct ResponseCompleted {
    id: String,
    #[serde(default)]
    usage: Option<TokenUsage>,
    #[serde(default)]
    end_turn: Option<bool>,
    #[serde(default)]
    prompt_cache_diagnostics: Option<Value>,
}

/// Parses a `response.completed` event's `response` (§13). The error text is the client's.
pub fn parse_completed(response: Value) -> Result<MappedEvent, StreamError> {
    match serde_json::from_value::<ResponseCompleted>(response) {
        Ok(r) => Ok(MappedEvent::Completed {
            response_id: r.id,
            token_usage: r.usage,
            end_turn: r.end_turn,
            cache_diagnostics: r
                .prompt_cache_diagnostics
                .as_ref()
                .and_then(PromptCacheDiagnostics::from_value),
        }),
        Err(e) => Err(StreamError::stream(format!(
            "failed to parse ResponseCompleted: {e}"
        ))),
    }
}

/// Maps raw events one after another; remembers the last server model so it is reported only
/// when it changes.
#[derive(Debug, Clone, Default)]
pub struct EventMapper {
    last_server_model: Option<String>,
}

impl EventMapper {
    /// A mapper at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Maps one raw event.
    pub fn map(&mut self, raw: RawEvent) -> TimelineEntry {
        let mut entry = TimelineEntry {
            raw,
            data_type: None,
            mapped: Vec::new(),
            error: None,
            unparsed: None,
            note: None,
        };
        let data = std::mem::take(&mut entry.raw.data);
        if entry.raw.is_json_response() {
            super::json_response::map(&data, &mut entry);
            entry.raw.data = data;
            return entry;
        }
        match serde_json::from_str::<Envelope>(&data) {
            Ok(envelope) => self.map_envelope(envelope, &mut entry),
            Err(err) => {
                entry.unparsed = Some(err.to_string());
                // Still show the type when the data is JSON with one (slow path, errors only).
                entry.data_type = serde_json::from_str::<Value>(&data)
                    .ok()
                    .and_then(|v| v.get("type").and_then(Value::as_str).map(type_name));
            }
        }
        entry.raw.data = data;
        entry
    }

    fn map_envelope(&mut self, ev: Envelope, entry: &mut TimelineEntry) {
        if let Some(model) = server_model(ev.response.as_ref(), ev.headers.as_ref())
            && self.last_server_model.as_deref() != Some(model.as_str())
        {
            self.last_server_model = Some(model.clone());
            entry.mapped.push(MappedEvent::ServerModel(model));
        }
        if let Some(value) = ev.safety_buffering.as_ref().filter(|v| !v.is_null()) {
            match SafetyBuffering::deserialize(value) {
                Ok(sb) => entry.mapped.push(MappedEvent::SafetyBuffering(sb)),
                Err(e) => entry.note = Some(format!("safety_buffering does not parse: {e}")),
            }
        }
        let own = match ev.kind.as_ref() {
            "response.created" => ev.response.map(|_| MappedEvent::Created),
            "response.output_item.added" => {
                item_event(ev.item, MappedEvent::OutputItemAdded, &mut entry.note)
            }
            "response.output_item.done" => {
                item_event(ev.item, MappedEvent::OutputItemDone, &mut entry.note)
            }
            "response.output_text.delta" => ev.delta.map(MappedEvent::OutputTextDelta),
            "response.custom_tool_call_input.delta" => match (ev.delta, ev.item_id, ev.call_id) {
                (Some(delta), item_id, call_id) if item_id.is_some() || call_id.is_some() => {
                    let call_id = call_id.map(Cow::into_owned);
                    Some(MappedEvent::ToolCallInputDelta {
                        item_id: item_id
                            .map(Cow::into_owned)
                            .or_else(|| call_id.clone())
                            .unwrap_or_default(),
                        call_id,
                        delta,
                    })
                }
                _ => None,
            },
            "response.reasoning_summary_text.delta" => match (ev.delta, ev.summary_index) {
                (Some(delta), Some(summary_index)) => Some(MappedEvent::ReasoningSummaryDelta {
                    delta,
                    summary_index,
                }),
                _ => None,
            },
            "response.reasoning_summary_text.done" => {
                match (ev.item_id, ev.text, ev.summary_index) {
                    (Some(item_id), Some(text), Some(summary_index)) => {
                        Some(MappedEvent::ReasoningSummaryDone {
                            item_id: item_id.into_owned(),
                            text,
                            summary_index,
                        })
                    }
                    _ => None,
                }
            }
            "response.reasoning_text.delta" => match (ev.delta, ev.content_index) {
                (Some(delta), Some(content_index)) => Some(MappedEvent::ReasoningContentDelta {
                    delta,
                    content_index,
                }),
                _ => None,
            },
            "response.reasoning_summary_part.added" => ev
                .summary_index
                .map(|summary_index| MappedEvent::ReasoningSummaryPartAdded { summary_index }),
            "response.completed" => match ev.response.map(parse_completed) {
                Some(Ok(completed)) => Some(completed),
                Some(Err(err)) => {
                    entry.error = Some(err);
                    None
                }
                None => None,
            },
            "response.failed" => {
                entry.error = Some(classify_failed(ev.response.as_ref()));
                None
            }
            "response.incomplete" => {
                entry.error = Some(incomplete_error(ev.response.as_ref()));
                None
            }
            "response.metadata" => {
                entry.mapped.extend(metadata_events(ev.metadata.as_ref()));
                None
            }
            _ => None,
        };
        entry.mapped.extend(own);
        entry.data_type = Some(type_name(&ev.kind));
    }
}

/// Event types named in §13, plus common ones clients ignore: shown without an allocation. The
/// most frequent come first.
const KNOWN_TYPES: [&str; 24] = [
    "response.output_text.delta",
    "response.function_call_arguments.delta",
    "response.reasoning_summary_text.delta",
    "response.custom_tool_call_input.delta",
    "response.created",
    "response.in_progress",
    "response.output_item.added",
    "response.output_item.done",
    "response.content_part.added",
    "response.content_part.done",
    "response.output_text.done",
    "response.output_text.annotation.added",
    "response.custom_tool_call_input.done",
    "response.function_call_arguments.done",
    "response.reasoning_summary_part.added",
    "response.reasoning_summary_part.done",
    "response.reasoning_summary_text.done",
    "response.reasoning_text.delta",
    "response.reasoning_text.done",
    "response.completed",
    "response.failed",
    "response.incomplete",
    "response.metadata",
    "error",
];

fn type_name(kind: &str) -> Cow<'static, str> {
    match KNOWN_TYPES.iter().find(|k| **k == kind) {
        Some(known) => Cow::Borrowed(known),
        None => Cow::Owned(kind.to_string()),
    }
}

pub(super) fn item_event(
    item: Option<Value>,
    wrap: fn(Box<ResponseItem>) -> MappedEvent,
    note: &mut Option<String>,
) -> Option<MappedEvent> {
    match ResponseItem::from_value(item?) {
        Ok(item) => Some(wrap(Box::new(item))),
        Err(e) => {
            *note = Some(format!("item does not parse, dropped: {e}"));
            None
        }
    }
}

/// `openai-model` / `x-openai-model` in `response.headers`, else in the top-level `headers`.
pub(super) fn server_model(response: Option<&Value>, headers: Option<&Value>) -> Option<String> {
    response
        .and_then(|r| r.get("headers"))
        .and_then(model_from_headers)
        .or_else(|| headers.and_then(model_from_headers))
}

fn model_from_headers(headers: &Value) -> Option<String> {
    headers.as_object()?.iter().find_map(|(name, value)| {
        if name.eq_ignore_ascii_case("openai-model") || name.eq_ignore_ascii_case("x-openai-model")
        {
            string_or_first(value)
        } else {
            None
        }
    })
}

fn string_or_first(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Array(items) => items.first().and_then(string_or_first),
        _ => None,
    }
}

/// `response.metadata`: verification recommendations (known values only, no duplicates) and
/// moderation metadata.
fn metadata_events(metadata: Option<&Value>) -> Vec<MappedEvent> {
    let mut out = Vec::new();
    let Some(metadata) = metadata else {
        return out;
    };
    if let Some(Value::Array(values)) = metadata.get("openai_verification_recommendation") {
        let mut verifications = Vec::new();
        for value in values {
            if value.as_str() == Some("trusted_access_for_cyber")
                && !verifications.contains(&ModelVerification::TrustedAccessForCyber)
            {
                verifications.push(ModelVerification::TrustedAccessForCyber);
            }
        }
        if !verifications.is_empty() {
            out.push(MappedEvent::ModelVerifications(verifications));
        }
    }
    if let Some(moderation) = metadata
        .get("openai_chatgpt_moderation_metadata")
        .filter(|v| !v.is_null())
    {
        out.push(MappedEvent::TurnModerationMetadata(moderation.clone()));
    }
    out
}

/// Events derived from HTTP response headers, in the order a client reports them before any body
/// event: server model (`openai-model`), models etag (`x-models-etag`), reasoning included
/// (`x-reasoning-included`). The `openai-verification-recommendation` header gives nothing.
pub fn header_events(headers: &[(String, String)]) -> Vec<MappedEvent> {
    let get = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    let mut out = Vec::new();
    if let Some(model) = get("openai-model") {
        out.push(MappedEvent::ServerModel(model));
    }
    if let Some(etag) = get("x-models-etag") {
        out.push(MappedEvent::ModelsEtag(etag));
    }
    if get("x-reasoning-included").is_some() {
        out.push(MappedEvent::ServerReasoningIncluded(true));
    }
    out
}
