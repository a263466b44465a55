//! The Prompt's prompt-cache settings as the Responses API takes them (WIRE_SPEC §19, §19.1):
//! `prompt_cache_options` (`mode`, `ttl`, `comparison_response_id`), `prompt_cache_retention`,
//! and the explicit `prompt_cache_breakpoint` a content block may carry. Codex sends none of
//! them; a Prompt sets them to try what the server does with them.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::core::items::ContentItem;
use crate::core::json::JsonMap;

/// The key of an explicit breakpoint on a content block.
pub const BREAKPOINT_KEY: &str = "prompt_cache_breakpoint";

/// `prompt_cache_options.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheMode {
    /// The server places one breakpoint at the latest user or tool message (the default).
    Implicit,
    /// Only the explicit `prompt_cache_breakpoint`s are written and read.
    Explicit,
}

impl CacheMode {
    /// The wire value.
    pub fn id(self) -> &'static str {
        match self {
            Self::Implicit => "implicit",
            Self::Explicit => "explicit",
        }
    }
}

/// `prompt_cache_options`: each field omitted when unset, in this order on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PromptCacheOptions {
    /// `implicit` or `explicit`; absent follows the server's default (`implicit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<CacheMode>,
    /// How long written breakpoints live (`"30m"`, `"12h"`); absent is the server's `30m`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<String>,
    /// An earlier response to compare against: the response then carries
    /// `prompt_cache_diagnostics`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comparison_response_id: Option<String>,
}

impl PromptCacheOptions {
    /// True when no field is set (nothing is sent).
    pub fn is_empty(&self) -> bool {
        self.mode.is_none() && self.ttl.is_none() && self.comparison_response_id.is_none()
    }

    /// The wire object, or `None` when no field is set.
    pub fn to_wire(&self) -> Option<Value> {
        if self.is_empty() {
            return None;
        }
        serde_json::to_value(self).ok()
    }

    /// Parses a body's `prompt_cache_options`; `None` when it is not an object this type
    /// reproduces exactly (import then keeps it as a body override).
    pub fn from_wire(value: &Value) -> Option<Self> {
        let options: Self = serde_json::from_value(value.clone()).ok()?;
        let same = options
            .to_wire()
            .is_some_and(|wire| serde_json::to_vec(&wire).ok() == serde_json::to_vec(value).ok());
        same.then_some(options)
    }
}

/// The block's fields a breakpoint lives among (a verbatim block's whole map).
fn extra_mut(part: &mut ContentItem) -> &mut JsonMap {
    match part {
        ContentItem::InputText { extra, .. }
        | ContentItem::InputImage { extra, .. }
        | ContentItem::OutputText { extra, .. }
        | ContentItem::InputAudio { extra, .. }
        | ContentItem::EncryptedContent { extra, .. } => extra,
        ContentItem::Other(map) => map,
    }
}

fn extra(part: &ContentItem) -> &JsonMap {
    match part {
        ContentItem::InputText { extra, .. }
        | ContentItem::InputImage { extra, .. }
        | ContentItem::OutputText { extra, .. }
        | ContentItem::InputAudio { extra, .. }
        | ContentItem::EncryptedContent { extra, .. } => extra,
        ContentItem::Other(map) => map,
    }
}

/// True when the block carries `"prompt_cache_breakpoint": {"mode": "explicit"}`.
pub fn has_breakpoint(part: &ContentItem) -> bool {
    extra(part).get(BREAKPOINT_KEY) == Some(&breakpoint_value())
}

/// Sets or clears the block's explicit breakpoint (the field goes after the block's own).
pub fn set_breakpoint(part: &mut ContentItem, on: bool) {
    let map = extra_mut(part);
    if on {
        map.insert(BREAKPOINT_KEY.to_string(), breakpoint_value());
    } else {
        map.shift_remove(BREAKPOINT_KEY);
    }
}

/// `{"mode": "explicit"}`.
pub fn breakpoint_value() -> Value {
    json!({"mode": "explicit"})
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn options_round_trip_only_when_reproduced() {
        let full = json!({"mode": "explicit", "ttl": "12h", "comparison_response_id": "resp_1"});
        let parsed = PromptCacheOptions::from_wire(&full);
        assert_eq!(
            parsed,
            Some(PromptCacheOptions {
                mode: Some(CacheMode::Explicit),
                ttl: Some("12h".to_string()),
                comparison_response_id: Some("resp_1".to_string()),
            })
        );
        // Another key order, an unknown key, an empty object: kept verbatim by import instead.
        assert_eq!(
            [
                json!({"ttl": "12h", "mode": "explicit"}),
                json!({"mode": "implicit", "other": 1}),
                json!({}),
            ]
            .iter()
            .map(PromptCacheOptions::from_wire)
            .collect::<Vec<_>>(),
            vec![None, None, None]
        );
    }

    #[test]
    fn a_breakpoint_toggles_on_a_text_block() {
        let mut part = ContentItem::InputText {
            text: "hi".to_string(),
            extra: JsonMap::new(),
        };
        set_breakpoint(&mut part, true);
        assert_eq!(
            serde_json::to_value(&part).expect("json"),
            json!({"type": "input_text", "text": "hi", "prompt_cache_breakpoint": {"mode": "explicit"}})
        );
        assert!(has_breakpoint(&part));
        set_breakpoint(&mut part, false);
        assert_eq!(
            serde_json::to_value(&part).expect("json"),
            json!({"type": "input_text", "text": "hi"})
        );
    }
}
