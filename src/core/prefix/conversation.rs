//! Requests read as the conversation the server sees. A request that names an earlier response
//! in `previous_response_id` — every turn of Codex's WebSocket transport, and SDK users' HTTP
//! continuations — sends only its new items: the server renders the named response's whole
//! prompt, then that response's output items, then the new items (WIRE_SPEC §9). The analysis
//! compares those whole prompts, so a WebSocket session reads as the same conversation over
//! HTTP would.
//!
//! The wire-only fields are not part of the prompt and are taken out of the head before it is
//! read: `previous_response_id` (the prompt it stands for is put in its place), `generate`
//! (`false` marks a *warm-up*: Codex's `response.create` that only fills the cache and makes no
//! turn) and a WebSocket frame's `"type": "response.create"`.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

use crate::core::json::JsonMap;

/// The WebSocket frame type of a request.
const CREATE_FRAME: &str = "response.create";

/// How a request's whole prompt was found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Continuation {
    /// The body carries the whole prompt.
    #[default]
    Whole,
    /// The body continues the response of request `request`: the whole prompt is that
    /// request's whole prompt, its response's output items, then the `sent_items` sent.
    Continues {
        /// Index of the request whose response is continued.
        request: usize,
        /// The id it named.
        previous_response_id: String,
        /// Items the body itself carries.
        sent_items: usize,
    },
    /// The body names a response this recording does not have: only its own items are known,
    /// so its prompt cannot be compared.
    Unrecorded {
        /// The id it named.
        previous_response_id: String,
    },
}

impl Continuation {
    /// Words for a report: `None` for a whole body.
    pub fn describe(&self) -> Option<String> {
        match self {
            Self::Whole => None,
            Self::Continues {
                request,
                previous_response_id,
                sent_items,
            } => Some(format!(
                "continues request {request} ({previous_response_id}): its whole prompt and output, then {sent_items} new {}",
                if *sent_items == 1 { "item" } else { "items" }
            )),
            Self::Unrecorded {
                previous_response_id,
            } => Some(format!(
                "continues a response this recording does not have ({previous_response_id})"
            )),
        }
    }
}

/// A request head with its wire-only fields taken out.
#[derive(Debug)]
pub struct WireHead<'a> {
    /// The head as the prompt sees it.
    pub head: Cow<'a, JsonMap>,
    /// The response it continues, when it names one.
    pub previous_response_id: Option<String>,
    /// `generate: false`: a warm-up, not a turn.
    pub warmup: bool,
}

/// Splits `head` into its prompt fields and its wire-only fields (see the module docs). Borrows
/// the head when it has none of them (every plain HTTP request).
pub fn split_head(head: &JsonMap) -> WireHead<'_> {
    let frame = head.get("type").and_then(Value::as_str) == Some(CREATE_FRAME);
    let previous = head.get("previous_response_id");
    let generate = head.get("generate");
    if !frame && previous.is_none() && generate.is_none() {
        return WireHead {
            head: Cow::Borrowed(head),
            previous_response_id: None,
            warmup: false,
        };
    }
    let previous_response_id = previous.and_then(Value::as_str).map(str::to_string);
    let warmup = generate.and_then(Value::as_bool) == Some(false);
    let head: JsonMap = head
        .iter()
        .filter(|(key, _)| {
            let wire_only = matches!(key.as_str(), "previous_response_id" | "generate")
                || (frame && key.as_str() == "type");
            !wire_only
        })
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    WireHead {
        head: Cow::Owned(head),
        previous_response_id,
        warmup,
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn map(value: Value) -> JsonMap {
        match value {
            Value::Object(map) => map,
            _ => JsonMap::new(),
        }
    }

    #[test]
    fn wire_fields_leave_the_head_and_a_plain_head_is_borrowed() {
        let frame = map(
            json!({"type": "response.create", "model": "m", "generate": false,
                               "previous_response_id": "resp_1", "tools": []}),
        );
        let split = split_head(&frame);
        assert_eq!(
            (
                Value::Object(split.head.into_owned()),
                split.previous_response_id,
                split.warmup
            ),
            (
                json!({"model": "m", "tools": []}),
                Some("resp_1".to_string()),
                true
            )
        );
        let plain = map(json!({"model": "m", "type": "other"}));
        let split = split_head(&plain);
        assert!(matches!(split.head, Cow::Borrowed(_)));
        assert_eq!((split.previous_response_id, split.warmup), (None, false));
        let turn = map(json!({"model": "m", "generate": true}));
        assert_eq!(
            Value::Object(split_head(&turn).head.into_owned()),
            json!({"model": "m"})
        );
    }
}
