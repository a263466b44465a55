//! Non-streaming answers: `responses.create` without `stream: true` — and `…/responses/compact`
//! — is answered with one JSON object instead of an event stream. It is read as one raw event
//! named [`JSON_RESPONSE_EVENT`] whose data is the whole body, mapped into the same events a
//! stream of that response would give: each `output` item as `response.output_item.done` (a
//! message's `output_text` parts also as its text), then the terminal event of its `status` —
//! `completed` (id, usage with cached and cache-write tokens, `end_turn`), `incomplete` or
//! `failed` (their errors, as the stream's). A compaction answer has no `status`; its `output`
//! is what it gives back, so it reads as completed. Stored, replayed and shown as one entry
//! (labelled [`JSON_RESPONSE_LABEL`]), through the same [`super::StreamReader`].

use std::borrow::Cow;

use serde_json::Value;

use super::errors::{StreamError, classify_failed, incomplete_error};
use super::events::{MappedEvent, TimelineEntry, item_event, parse_completed, server_model};
use super::sse::RawEvent;

/// The raw event name a JSON answer is stored under (no SSE stream uses it).
pub const JSON_RESPONSE_EVENT: &str = "response.json";

/// How a JSON answer is labelled in a timeline.
pub const JSON_RESPONSE_LABEL: &str = "response (JSON)";

impl RawEvent {
    /// A whole non-streaming JSON answer `body`, received at `at`, as the one event it is stored
    /// as.
    pub fn json_response(body: String, at: std::time::Duration) -> Self {
        Self {
            seq: 0,
            received_at: at,
            event: Some(JSON_RESPONSE_EVENT.to_string()),
            data: body,
            bytes: None,
        }
    }

    /// A whole non-streaming JSON answer as the bytes received (kept as they came when they are
    /// not UTF-8).
    pub fn json_response_bytes(body: Vec<u8>, at: std::time::Duration) -> Self {
        Self::from_bytes(0, at, Some(JSON_RESPONSE_EVENT.to_string()), body)
    }

    /// True for the event of a non-streaming JSON answer.
    pub fn is_json_response(&self) -> bool {
        self.event.as_deref() == Some(JSON_RESPONSE_EVENT)
    }
}

/// Maps the JSON answer `data` into `entry` (its events, its error, or why it does not parse).
pub(super) fn map(data: &str, entry: &mut TimelineEntry) {
    entry.data_type = Some(Cow::Borrowed(JSON_RESPONSE_LABEL));
    let mut value = match serde_json::from_str::<Value>(data) {
        Ok(value @ Value::Object(_)) => value,
        Ok(_) => {
            entry.unparsed = Some("the JSON answer is not an object".to_string());
            return;
        }
        Err(e) => {
            entry.unparsed = Some(e.to_string());
            return;
        }
    };
    if let Some(model) = server_model(Some(&value), None) {
        entry.mapped.push(MappedEvent::ServerModel(model));
    }
    // The items are taken out, not copied: the rest of the object is all the terminal needs
    // (`output` stays present, as null, for the compaction check below).
    let output = value.get_mut("output").map(Value::take);
    if let Some(Value::Array(items)) = output {
        for item in items {
            for text in output_texts(&item) {
                entry
                    .mapped
                    .push(MappedEvent::OutputTextDelta(text.to_string()));
            }
            let mut note = None;
            if let Some(event) = item_event(Some(item), MappedEvent::OutputItemDone, &mut note) {
                entry.mapped.push(event);
            }
            if note.is_some() && entry.note.is_none() {
                entry.note = note;
            }
        }
    }
    let status = value.get("status").and_then(Value::as_str);
    match status {
        Some("completed") => match parse_completed(value) {
            Ok(completed) => entry.mapped.push(completed),
            Err(error) => entry.error = Some(error),
        },
        Some("incomplete") => entry.error = Some(incomplete_error(Some(&value))),
        Some("failed") => entry.error = Some(classify_failed(Some(&value))),
        // A compaction answer: what it gives back is its `output`.
        None if value.get("output").is_some() => entry.mapped.push(MappedEvent::Completed {
            response_id: value
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            token_usage: value
                .get("usage")
                .cloned()
                .and_then(|u| serde_json::from_value(u).ok()),
            end_turn: None,
            cache_diagnostics: None,
        }),
        other => {
            entry.error = Some(StreamError::stream(match other {
                Some(status) => format!("the JSON response is still `{status}`"),
                None => "the JSON answer is neither a response nor a compaction".to_string(),
            }));
        }
    }
}

/// The `output_text` parts of a message item, in order.
fn output_texts(item: &Value) -> impl Iterator<Item = &str> {
    item.get("content")
        .and_then(Value::as_array)
        .filter(|_| item.get("type").and_then(Value::as_str) == Some("message"))
        .into_iter()
        .flatten()
        .filter(|part| part.get("type").and_then(Value::as_str) == Some("output_text"))
        .filter_map(|part| part.get("text").and_then(Value::as_str))
}
