//! Compaction requests (WIRE_SPEC §11, §18): how a Prompt in a compaction mode compiles, and
//! [`is_compaction_request`], which says whether a captured body is one (for import and the
//! prefix analysis).
//!
//! - In-band (`PromptMode::Compaction`): what Codex CLI 0.169/0.171 send before a turn on a model
//!   switch — the history as is, `tools: []`, `parallel_tool_calls: false`, a trailing user message
//!   asking for a handoff summary ([`CHECKPOINT_PROMPT`]), and `request_kind: "compaction"` in the
//!   turn metadata.
//! - The unary `POST {base}/responses/compact` (`PromptMode::CompactEndpoint`, v1, vector 26):
//!   only `model, input, instructions?, tools?, parallel_tool_calls, reasoning?, service_tier?,
//!   prompt_cache_key?, text?`, in that order; Lite keeps its header, `reasoning.context` and
//!   `parallel_tool_calls: false`.

use serde::Serialize;
use serde_json::Value;

use super::CompileNote;
use crate::core::json::JsonMap;

/// The checkpoint message Codex 0.169/0.171 append to an in-band compaction request (captured
/// from Codex CLI 0.171, `tests/data/codex-0.171/compaction-model-switch/`).
pub const CHECKPOINT_PROMPT: &str = "You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary for another LLM that will resume the task.\n\nInclude:\n- Current progress and key decisions made\n- Important context, constraints, or user preferences\n- What remains to be done (clear next steps)\n- Any critical data, examples, or references needed to continue\n\nBe concise, structured, and focused on helping the next LLM seamlessly continue the work.\n";

/// Top-level fields of a `/responses/compact` body, in wire order (§11).
pub const COMPACT_FIELDS: [&str; 10] = [
    "model",
    "input",
    "instructions",
    "tools",
    "parallel_tool_calls",
    "reasoning",
    "service_tier",
    "prompt_cache_key",
    "text",
    "access_programs",
];

/// Which kind of compaction request a body is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactionKind {
    /// A streamed `/responses` request asking for a handoff summary (`request_kind:
    /// "compaction"`, `tools: []`, the checkpoint user message).
    InBand,
    /// A unary `/responses/compact` request (v1).
    Endpoint,
    /// A remote-compaction v2 request: the history plus a trailing `compaction_trigger` item.
    Trigger,
}

/// The checkpoint user message, as it goes on the wire (no id).
pub fn checkpoint_message() -> Value {
    serde_json::json!({
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": CHECKPOINT_PROMPT}],
    })
}

/// Says whether `body` (a request body as captured) is a compaction request, and which kind:
/// its turn metadata (`client_metadata["x-codex-turn-metadata"]`) says `request_kind:
/// "compaction"`, or its last input item is the checkpoint message → [`CompactionKind::InBand`];
/// its last input item is `compaction_trigger` → [`CompactionKind::Trigger`]; it has `model`, an
/// `input` array and `parallel_tool_calls` (always sent), no `stream`, and only
/// `/responses/compact` fields → [`CompactionKind::Endpoint`].
/// Also in-band: the looser forms [`compaction_kind`] lists. Anything else (not an object, a
/// turn) → None. Pure; never panics.
pub fn is_compaction_request(body: &Value) -> Option<CompactionKind> {
    let body = body.as_object()?;
    let input = match body.get("input") {
        Some(Value::Array(items)) => Some(items.last()),
        _ => None,
    };
    compaction_kind(body, input)
}

/// [`is_compaction_request`] for a body taken apart: its top-level `fields` and `input` — None
/// when it has no input array, else its last item (the prefix analysis interns the items
/// separately, so `fields` need not hold `input`). Besides the captured forms above, a
/// `request_kind: "compaction"` directly in `client_metadata`, or a last user message whose
/// first text starts with the checkpoint prompt's first sentence (an edited or shortened
/// handoff prompt) is [`CompactionKind::InBand`] too; those are checked last, so a body of the
/// compact endpoint's shape stays [`CompactionKind::Endpoint`].
pub fn compaction_kind(fields: &JsonMap, input: Option<Option<&Value>>) -> Option<CompactionKind> {
    let last = input.flatten();
    if metadata_kind(fields) == Some("compaction") || last.is_some_and(is_checkpoint_message) {
        return Some(CompactionKind::InBand);
    }
    if last.and_then(|i| i.get("type")).and_then(Value::as_str) == Some("compaction_trigger") {
        return Some(CompactionKind::Trigger);
    }
    let compact_shape = fields.contains_key("model")
        && input.is_some()
        && fields.contains_key("parallel_tool_calls")
        && !fields.contains_key("stream")
        && fields.keys().all(|k| COMPACT_FIELDS.contains(&k.as_str()));
    if compact_shape {
        return Some(CompactionKind::Endpoint);
    }
    let direct_kind = fields
        .get("client_metadata")
        .and_then(|m| m.get("request_kind"))
        .and_then(Value::as_str);
    (direct_kind == Some("compaction") || last.is_some_and(starts_like_checkpoint))
        .then_some(CompactionKind::InBand)
}

/// True for the checkpoint message exactly as Codex sends it (with or without an id).
pub fn is_checkpoint_message(item: &Value) -> bool {
    let Some(map) = item.as_object() else {
        return false;
    };
    let mut map = map.clone();
    map.shift_remove("id");
    Value::Object(map) == checkpoint_message()
}

/// A user message whose first text starts with the checkpoint prompt's first sentence.
fn starts_like_checkpoint(item: &Value) -> bool {
    let opening = CHECKPOINT_PROMPT
        .split_once('.')
        .map_or(CHECKPOINT_PROMPT, |(first, _)| first);
    item.get("role").and_then(Value::as_str) == Some("user")
        && item
            .get("content")
            .and_then(|c| c.get(0))
            .and_then(|c| c.get("text"))
            .and_then(Value::as_str)
            .is_some_and(|t| t.trim_start().starts_with(opening))
}

/// `request_kind` in the body's turn metadata, if it carries one.
fn metadata_kind(body: &JsonMap) -> Option<&'static str> {
    let text = body
        .get("client_metadata")?
        .get("x-codex-turn-metadata")?
        .as_str()?;
    let meta: Value = serde_json::from_str(text).ok()?;
    match meta.get("request_kind")?.as_str()? {
        "compaction" => Some("compaction"),
        _ => None,
    }
}

/// The `/responses/compact` body: the compact fields in their order, `reasoning` only when set.
pub fn compact_endpoint_body(mut body: JsonMap, notes: &mut Vec<CompileNote>) -> JsonMap {
    let mut out = JsonMap::with_capacity(COMPACT_FIELDS.len());
    for key in COMPACT_FIELDS {
        match body.shift_remove(key) {
            Some(Value::Null) if key == "reasoning" => {}
            Some(value) => {
                out.insert(key.to_string(), value);
            }
            None => {}
        }
    }
    let left_out: Vec<String> = body.keys().cloned().collect();
    if !left_out.is_empty() {
        notes.push(CompileNote::new(
            "body",
            format!(
                "{} left out: the /responses/compact request has no such fields",
                left_out.join(", ")
            ),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn check(body: Value) -> bool {
        let head = body.as_object().cloned().unwrap_or_default();
        let last = body["input"].as_array().and_then(|i| i.last()).cloned();
        compaction_kind(&head, Some(last.as_ref())).is_some()
    }

    #[test]
    fn compaction_forms_the_prefix_analysis_recognizes() {
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
