//! Whether a request body is a compaction request rather than a turn of the conversation: the
//! in-band form Codex sends before a model switch (`client_metadata.request_kind: "compaction"`,
//! a trailing context-checkpoint user message, `tools: []` or, under Lite, no tools), remote compaction v2 (a trailing
//! `compaction_trigger` item) and the unary `/responses/compact` body (WIRE_SPEC §11, §18).
//!
//! TODO(lead): on merge, switch the prefix analysis to the shared
//! `core::compile::compaction::is_compaction_request` and delete this file.

use serde_json::Value;

use crate::core::json::JsonMap;

/// The start of the user message Codex appends to ask for a handoff summary.
const CHECKPOINT_PROMPT: &str = "You are performing a CONTEXT CHECKPOINT COMPACTION";

/// Whether the body with these top-level fields and this last input item asks the server to
/// compact the history.
pub(super) fn is_compaction_request(head: &JsonMap, last_item: Option<&Value>) -> bool {
    if head
        .get("client_metadata")
        .is_some_and(is_compaction_metadata)
    {
        return true;
    }
    let last_type = last_item
        .and_then(|i| i.get("type"))
        .and_then(Value::as_str);
    if last_type == Some("compaction_trigger") {
        return true;
    }
    // The handoff prompt closes the history (with `tools: []`, or no `tools` under Lite).
    if last_item.is_some_and(is_checkpoint_message) {
        return true;
    }
    // `/responses/compact`: the turn fields a streamed request always has are absent.
    head.contains_key("parallel_tool_calls")
        && [
            "stream",
            "store",
            "include",
            "tool_choice",
            "client_metadata",
        ]
        .iter()
        .all(|k| !head.contains_key(*k))
}

/// `request_kind: "compaction"` in client_metadata, directly or inside the
/// `x-codex-turn-metadata` JSON string Codex puts there.
fn is_compaction_metadata(metadata: &Value) -> bool {
    let kind = |m: &Value| m.get("request_kind").and_then(Value::as_str) == Some("compaction");
    if kind(metadata) {
        return true;
    }
    metadata
        .get("x-codex-turn-metadata")
        .and_then(Value::as_str)
        .and_then(|text| serde_json::from_str::<Value>(text).ok())
        .is_some_and(|m| kind(&m))
}

/// A user message whose first text starts with Codex's checkpoint prompt.
fn is_checkpoint_message(item: &Value) -> bool {
    item.get("role").and_then(Value::as_str) == Some("user")
        && item
            .get("content")
            .and_then(|c| c.get(0))
            .and_then(|c| c.get("text"))
            .and_then(Value::as_str)
            .is_some_and(|t| t.trim_start().starts_with(CHECKPOINT_PROMPT))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn check(body: Value) -> bool {
        let head = body.as_object().cloned().unwrap_or_default();
        let last = body["input"].as_array().and_then(|i| i.last()).cloned();
        is_compaction_request(&head, last.as_ref())
    }

    #[test]
    fn compaction_forms() {
        let turn = json!({"model": "m", "stream": true, "input": [], "tools": [], "tool_choice": "auto",
            "parallel_tool_calls": false, "store": false, "include": [], "client_metadata": {}});
        assert!(!check(turn.clone()));
        let mut in_band = turn.clone();
        in_band["client_metadata"] = json!({"x": "1", "request_kind": "compaction"});
        assert!(check(in_band.clone()));
        in_band["client_metadata"] =
            json!({"x-codex-turn-metadata": "{\"request_kind\":\"compaction\"}"});
        assert!(check(in_band.clone()));
        in_band["client_metadata"] =
            json!({"x-codex-turn-metadata": "{\"request_kind\":\"turn\"}"});
        assert!(!check(in_band));
        let mut checkpoint = turn.clone();
        checkpoint["input"] = json!([{"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "You are performing a CONTEXT CHECKPOINT COMPACTION. …"}]}]);
        assert!(check(checkpoint));
        let mut v2 = turn;
        v2["input"] = json!([{"type": "compaction_trigger"}]);
        assert!(check(v2));
        assert!(check(
            json!({"model": "m", "input": [], "parallel_tool_calls": false})
        ));
        assert!(!check(json!({"model": "m", "input": []})));
    }
}
