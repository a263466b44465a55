//! `TurnOutcome`: what one streamed turn amounts to — its terminal state, output items, streamed
//! text, reasoning summaries and content, tool-call inputs, token usage and timings — accumulated
//! from mapped events as they arrive.

use std::time::Duration;

use super::cache_diagnostics::PromptCacheDiagnostics;
use super::errors::StreamError;
use super::events::{MappedEvent, ModelVerification, TimelineEntry, TokenUsage};
use crate::core::items::ResponseItem;

/// Where a turn stands.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum TurnState {
    /// No terminal event yet (still streaming, or stopped early: cancelled).
    #[default]
    Open,
    /// `response.completed` arrived.
    Completed {
        /// `response.id`.
        response_id: String,
        /// `response.end_turn`.
        end_turn: Option<bool>,
    },
    /// The turn failed.
    Failed(StreamError),
}

/// One reasoning summary part or content part, assembled from deltas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextPart {
    /// `summary_index` or `content_index`.
    pub index: i64,
    /// The reasoning item, when the server named it (`…summary_text.done`).
    pub item_id: Option<String>,
    /// The text so far (the whole part once `done`).
    pub text: String,
    /// True once the server sent the whole part.
    pub done: bool,
}

/// A tool call, from its added/done items and streamed input deltas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    /// Item id (`fc_…`, `ctc_…`), when known.
    pub item_id: Option<String>,
    /// Call id.
    pub call_id: Option<String>,
    /// Tool name, once an item named it.
    pub name: Option<String>,
    /// Function arguments (JSON text) or custom tool input, streamed or final.
    pub arguments: String,
    /// True once the `output_item.done` item arrived.
    pub done: bool,
}

/// A gap between two consecutive raw events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gap {
    /// The event after which the gap started.
    pub after_seq: u64,
    /// How long nothing arrived.
    pub duration: Duration,
}

/// Timings, measured from the start of the request (times are passed in by the caller).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Timings {
    /// When the first raw event arrived.
    pub first_event: Option<Duration>,
    /// When the first output text delta arrived (time to first token).
    pub first_text: Option<Duration>,
    /// When the last raw event arrived.
    pub last_event: Option<Duration>,
    /// The longest gap between two consecutive raw events.
    pub longest_gap: Option<Gap>,
    /// When the turn ended (completion, end of stream or failure).
    pub total: Option<Duration>,
}

/// What one streamed turn amounts to.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TurnOutcome {
    /// Terminal state.
    pub state: TurnState,
    /// Items of `response.output_item.done`, in order.
    pub output_items: Vec<ResponseItem>,
    /// Concatenated `response.output_text.delta` text.
    pub text: String,
    /// Reasoning summary parts, in order.
    pub reasoning_summaries: Vec<TextPart>,
    /// Raw reasoning content parts, in order.
    pub reasoning_content: Vec<TextPart>,
    /// Tool calls, in order of first appearance.
    pub tool_calls: Vec<ToolCall>,
    /// Token usage of the completed response.
    pub usage: Option<TokenUsage>,
    /// The server's `prompt_cache_diagnostics`, when the request asked for them.
    pub cache_diagnostics: Option<PromptCacheDiagnostics>,
    /// The last model the server reported.
    pub server_model: Option<String>,
    /// Verifications the server recommended.
    pub model_verifications: Vec<ModelVerification>,
    /// Bytes of text (output text, reasoning, tool-call argument deltas) and output items past
    /// [`MAX_KEPT_TEXT_BYTES`] / [`MAX_KEPT_ITEMS`], left out of what is built here (the stored
    /// events keep every byte).
    pub left_out: u64,
    /// Raw events seen.
    pub events: u64,
    /// Raw events whose data did not parse.
    pub unparsed_events: u64,
    /// Timings.
    pub timings: Timings,
}

/// Bytes of each text a turn builds from its deltas (the output text, each reasoning part, each
/// tool call's arguments) kept at most: memory follows the limits, not the answer's length.
pub const MAX_KEPT_TEXT_BYTES: usize = 4 << 20;

/// Output items a turn keeps at most.
pub const MAX_KEPT_ITEMS: usize = 4096;

/// Appends `delta` to `text` within [`MAX_KEPT_TEXT_BYTES`] (cut at a character boundary),
/// counting in `left_out` what did not fit.
fn push_bounded(text: &mut String, delta: &str, left_out: &mut u64) {
    let room = MAX_KEPT_TEXT_BYTES.saturating_sub(text.len());
    if delta.len() <= room {
        text.push_str(delta);
        return;
    }
    let mut cut = room;
    while cut > 0 && !delta.is_char_boundary(cut) {
        cut -= 1;
    }
    text.push_str(&delta[..cut]);
    *left_out += (delta.len() - cut) as u64;
}

impl TurnOutcome {
    /// True once the turn completed or failed.
    pub fn is_terminal(&self) -> bool {
        !matches!(self.state, TurnState::Open)
    }

    /// The failure, if the turn failed.
    pub fn error(&self) -> Option<&StreamError> {
        match &self.state {
            TurnState::Failed(err) => Some(err),
            _ => None,
        }
    }

    /// The response id, if the turn completed.
    pub fn response_id(&self) -> Option<&str> {
        match &self.state {
            TurnState::Completed { response_id, .. } => Some(response_id),
            _ => None,
        }
    }

    /// Accounts for one timeline entry: counts, timings and its mapped events.
    pub fn apply(&mut self, entry: &TimelineEntry) {
        let at = entry.raw.received_at;
        self.events += 1;
        if entry.is_unparsed() {
            self.unparsed_events += 1;
        }
        let timings = &mut self.timings;
        timings.first_event.get_or_insert(at);
        if let Some(last) = timings.last_event {
            let gap = at.saturating_sub(last);
            if timings.longest_gap.is_none_or(|g| gap > g.duration) {
                timings.longest_gap = Some(Gap {
                    after_seq: entry.raw.seq.saturating_sub(1),
                    duration: gap,
                });
            }
        }
        timings.last_event = Some(at);
        for event in &entry.mapped {
            self.apply_event(event, at);
        }
    }

    /// Accounts for one mapped event that arrived at `at`.
    pub fn apply_event(&mut self, event: &MappedEvent, at: Duration) {
        match event {
            MappedEvent::OutputTextDelta(delta) => {
                self.timings.first_text.get_or_insert(at);
                push_bounded(&mut self.text, delta, &mut self.left_out);
            }
            MappedEvent::OutputItemAdded(item) => {
                if let Some((id, call_id, name, _)) = tool_call_fields(item) {
                    let call = self.tool_call(id, call_id);
                    call.name = Some(name.to_string());
                }
            }
            MappedEvent::OutputItemDone(item) => {
                if let Some((id, call_id, name, arguments)) = tool_call_fields(item) {
                    let call = self.tool_call(id, call_id);
                    call.name = Some(name.to_string());
                    call.arguments = arguments.to_string();
                    call.done = true;
                }
                if self.output_items.len() < MAX_KEPT_ITEMS {
                    self.output_items.push(ResponseItem::clone(item));
                } else {
                    self.left_out += 1;
                }
            }
            MappedEvent::ToolCallInputDelta {
                item_id,
                call_id,
                delta,
            } => {
                let mut left_out = self.left_out;
                let call = self.tool_call(Some(item_id), call_id.as_deref());
                push_bounded(&mut call.arguments, delta, &mut left_out);
                self.left_out = left_out;
            }
            MappedEvent::ReasoningSummaryPartAdded { summary_index } => {
                self.reasoning_summaries.push(new_part(*summary_index));
            }
            MappedEvent::ReasoningSummaryDelta {
                delta,
                summary_index,
            } => append_part(
                &mut self.reasoning_summaries,
                *summary_index,
                delta,
                &mut self.left_out,
            ),
            MappedEvent::ReasoningSummaryDone {
                item_id,
                text,
                summary_index,
            } => {
                let parts = &mut self.reasoning_summaries;
                let open = parts
                    .iter()
                    .rposition(|p| p.index == *summary_index && !p.done);
                let part = match open {
                    Some(i) => &mut parts[i],
                    None => {
                        parts.push(new_part(*summary_index));
                        let last = parts.len() - 1;
                        &mut parts[last]
                    }
                };
                part.item_id = Some(item_id.clone());
                part.text = text.clone();
                part.done = true;
            }
            MappedEvent::ReasoningContentDelta {
                delta,
                content_index,
            } => append_part(
                &mut self.reasoning_content,
                *content_index,
                delta,
                &mut self.left_out,
            ),
            MappedEvent::Completed {
                response_id,
                token_usage,
                end_turn,
                cache_diagnostics,
            } => {
                self.usage = *token_usage;
                self.cache_diagnostics.clone_from(cache_diagnostics);
                self.state = TurnState::Completed {
                    response_id: response_id.clone(),
                    end_turn: *end_turn,
                };
                self.timings.total = Some(at);
            }
            MappedEvent::ServerModel(model) => self.server_model = Some(model.clone()),
            MappedEvent::ModelVerifications(found) => {
                for v in found {
                    if !self.model_verifications.contains(v) {
                        self.model_verifications.push(*v);
                    }
                }
            }
            MappedEvent::Created
            | MappedEvent::TurnModerationMetadata(_)
            | MappedEvent::SafetyBuffering(_)
            | MappedEvent::ModelsEtag(_)
            | MappedEvent::ServerReasoningIncluded(_) => {}
        }
    }

    /// Ends the turn with `error` at `at`, unless it already ended.
    pub fn fail(&mut self, error: StreamError, at: Duration) {
        if !self.is_terminal() {
            self.state = TurnState::Failed(error);
            self.timings.total = Some(at);
        }
    }

    /// The tool call with this item id (or call id), created if new.
    fn tool_call(&mut self, item_id: Option<&str>, call_id: Option<&str>) -> &mut ToolCall {
        let found = self.tool_calls.iter().position(|c| {
            (item_id.is_some() && c.item_id.as_deref() == item_id)
                || (call_id.is_some() && c.call_id.as_deref() == call_id)
        });
        let index = match found {
            Some(i) => i,
            None => {
                self.tool_calls.push(ToolCall {
                    item_id: None,
                    call_id: None,
                    name: None,
                    arguments: String::new(),
                    done: false,
                });
                self.tool_calls.len() - 1
            }
        };
        let call = &mut self.tool_calls[index];
        if call.item_id.is_none() {
            call.item_id = item_id.map(str::to_string);
        }
        if call.call_id.is_none() {
            call.call_id = call_id.map(str::to_string);
        }
        call
    }
}

fn new_part(index: i64) -> TextPart {
    TextPart {
        index,
        item_id: None,
        text: String::new(),
        done: false,
    }
}

/// Appends to the open part with `index`, or starts one (at most [`MAX_KEPT_ITEMS`] parts).
fn append_part(parts: &mut Vec<TextPart>, index: i64, delta: &str, left_out: &mut u64) {
    let full = parts.len() >= MAX_KEPT_ITEMS;
    match parts.last_mut() {
        Some(last) if last.index == index && !last.done => {
            push_bounded(&mut last.text, delta, left_out);
        }
        _ if full => *left_out += delta.len() as u64,
        _ => {
            let mut part = new_part(index);
            push_bounded(&mut part.text, delta, left_out);
            parts.push(part);
        }
    }
}

/// `(id, call_id, name, arguments or input)` of a function or custom tool call item.
fn tool_call_fields(item: &ResponseItem) -> Option<(Option<&str>, Option<&str>, &str, &str)> {
    match item {
        ResponseItem::FunctionCall(c) => Some((
            c.id.as_deref(),
            Some(c.call_id.as_str()),
            &c.name,
            &c.arguments,
        )),
        ResponseItem::CustomToolCall(c) => {
            Some((c.id.as_deref(), Some(c.call_id.as_str()), &c.name, &c.input))
        }
        _ => None,
    }
}
