//! Rebuilding the requests from the lines: the history as it grows, where each model call
//! starts and ends, its usage, the governing `turn_context`, compaction, and what each request
//! body holds (recorded items verbatim, the rest reconstructed by Codex's rules).

use std::collections::HashSet;

use serde_json::{Value, json};

use super::lines::parse_timestamp_ms;
use super::{ReconstructedRequest, RequestKind, RolloutSession, UsageSource};
use crate::core::json::JsonMap;
use crate::core::stream::TokenUsage;

/// The handoff prompt Codex (0.169, 0.171) appends to the history of a compaction call. The
/// rollout does not record it.
pub const COMPACTION_PROMPT: &str = "You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary for another LLM that will resume the task.\n\nInclude:\n- Current progress and key decisions made\n- Important context, constraints, or user preferences\n- What remains to be done (clear next steps)\n- Any critical data, examples, or references needed to continue\n\nBe concise, structured, and focused on helping the next LLM seamlessly continue the work.\n";

/// Item types a model call produces: the first one after an input marks a call's start.
const OUTPUT_TYPES: &[&str] = &[
    "reasoning",
    "function_call",
    "custom_tool_call",
    "local_shell_call",
    "web_search_call",
    "image_generation_call",
    "tool_search_call",
    "compaction",
];

/// Item types Codex records but never sends.
const NOT_SENT: &[&str] = &["ghost_snapshot"];

/// The body fields of a request other than `input`, and what of them is not as recorded.
struct Head {
    fields: JsonMap,
    input_at: usize,
    reconstructed: Vec<&'static str>,
    not_recorded: Vec<&'static str>,
}

/// A call whose first output has been seen.
#[derive(Debug, Clone, Copy)]
struct OpenCall {
    /// History length when it started: its input.
    input_len: usize,
    sent_at_ms: Option<i64>,
}

/// One session being rebuilt.
#[derive(Debug, Default)]
struct Current {
    session: Option<RolloutSession>,
    base_instructions: Option<String>,
    /// Index in `items` of the reconstructed base-instructions message.
    instructions_item: Option<u32>,
    compaction_prompt_item: Option<u32>,
    turn_context: JsonMap,
    turn_id: Option<String>,
    /// The history, as indices into the session's items.
    history: Vec<u32>,
    call: Option<OpenCall>,
    last_ms: Option<i64>,
    records_seen: bool,
    last_total: Option<Value>,
    response_ids: HashSet<String>,
    /// Requests made before the current turn started.
    turn_start_request: usize,
}

/// Feeds lines; yields sessions.
#[derive(Debug, Default)]
pub(super) struct Builder {
    current: Current,
    done: Vec<RolloutSession>,
}

impl Builder {
    /// Takes one known line.
    pub(super) fn line(&mut self, line: usize, ms: Option<i64>, line_type: &str, payload: Value) {
        if line_type == "session_meta" {
            self.session_meta(ms, payload);
            if ms.is_some() {
                self.current.last_ms = ms;
            }
            return;
        }
        let c = &mut self.current;
        match line_type {
            _ if c.session.is_none() => {}
            "turn_context" => {
                if let Value::Object(map) = payload {
                    c.turn_id = str_field(&map, "turn_id").or(c.turn_id.take());
                    c.turn_context = map;
                }
            }
            "response_item" => c.item(ms, payload),
            "token_usage_record" => {
                c.records_seen = true;
                let usage = payload.get("usage").map(usage_of);
                let response_id = payload
                    .get("response_id")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                let turn_id = payload
                    .get("turn_id")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                c.close(
                    line,
                    ms,
                    usage,
                    UsageSource::TokenUsageRecord,
                    response_id,
                    turn_id,
                );
            }
            "event_msg" => match payload.get("type").and_then(Value::as_str) {
                Some("task_started" | "turn_started") => {
                    c.turn_start_request = c.session.as_ref().map_or(0, |s| s.requests.len());
                    if let Some(id) = payload.get("turn_id").and_then(Value::as_str) {
                        c.turn_id = Some(id.to_string());
                    }
                }
                Some("token_count") if !c.records_seen => {
                    let info = payload.get("info").filter(|i| !i.is_null());
                    let total = info.and_then(|i| i.get("total_token_usage")).cloned();
                    if total.is_some() && total != c.last_total {
                        c.last_total = total;
                        let usage = info.and_then(|i| i.get("last_token_usage")).map(usage_of);
                        let turn = c.turn_id.clone();
                        c.close(line, ms, usage, UsageSource::TokenCount, None, turn);
                    }
                }
                _ => {}
            },
            "compacted" => c.compacted(payload),
            _ => {}
        }
        if ms.is_some() {
            self.current.last_ms = ms;
        }
    }

    fn session_meta(&mut self, ms: Option<i64>, payload: Value) {
        let Value::Object(mut meta) = payload else {
            return;
        };
        let Some(id) = str_field(&meta, "id").or_else(|| str_field(&meta, "session_id")) else {
            return;
        };
        if self
            .current
            .session
            .as_ref()
            .is_some_and(|s| s.thread_id == id)
        {
            // Written again on resume: the same thread goes on.
            return;
        }
        let previous = std::mem::take(&mut self.current);
        if let Some(session) = previous.session {
            self.done.push(session);
        }
        let instructions = match meta.shift_remove("base_instructions") {
            Some(Value::Object(b)) => b.get("text").and_then(Value::as_str).map(str::to_string),
            Some(Value::String(text)) => Some(text),
            _ => None,
        }
        .or_else(|| {
            meta.shift_remove("instructions")
                .and_then(|v| v.as_str().map(str::to_string))
        })
        .filter(|t| !t.is_empty());
        let started_at_ms = meta
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(parse_timestamp_ms)
            .or(ms);
        self.current.base_instructions = instructions;
        self.current.session = Some(RolloutSession {
            thread_id: id,
            cli_version: str_field(&meta, "cli_version"),
            started_at_ms,
            meta,
            items: Vec::new(),
            requests: Vec::new(),
        });
    }

    /// The sessions read.
    pub(super) fn finish(mut self) -> Vec<RolloutSession> {
        if let Some(session) = self.current.session.take() {
            self.done.push(session);
        }
        self.done
    }
}

impl Current {
    fn push_item(&mut self, value: Value) -> u32 {
        let Some(session) = self.session.as_mut() else {
            return 0;
        };
        session.items.push(value);
        u32::try_from(session.items.len() - 1).unwrap_or(u32::MAX)
    }

    fn item(&mut self, ms: Option<i64>, payload: Value) {
        let Value::Object(mut item) = payload else {
            return;
        };
        let item_type = str_field(&item, "type").unwrap_or_default();
        if NOT_SENT.contains(&item_type.as_str()) {
            return;
        }
        item.retain(|key, _| !key.starts_with("internal_"));
        let is_output = OUTPUT_TYPES.contains(&item_type.as_str())
            || (item_type == "message" && str_field(&item, "role").as_deref() == Some("assistant"));
        if is_output && self.call.is_none() {
            self.call = Some(OpenCall {
                input_len: self.history.len(),
                sent_at_ms: self.last_ms.or(ms),
            });
        }
        let index = self.push_item(Value::Object(item));
        self.history.push(index);
    }

    /// Ends the open call (or, when none is open, a call with the whole history as input).
    fn close(
        &mut self,
        line: usize,
        ms: Option<i64>,
        usage: Option<TokenUsage>,
        usage_source: UsageSource,
        response_id: Option<String>,
        turn_id: Option<String>,
    ) {
        let call = self.call.take().unwrap_or(OpenCall {
            input_len: self.history.len(),
            sent_at_ms: self.last_ms,
        });
        if let Some(id) = &response_id
            && !self.response_ids.insert(id.clone())
        {
            return;
        }
        let lite = self.is_lite_request();
        let mut input = Vec::with_capacity(call.input_len + 1);
        let mut reconstructed_items = Vec::new();
        if !lite && let Some(text) = self.base_instructions.clone() {
            let index = match self.instructions_item {
                Some(i) => i,
                None => {
                    let i = self.push_item(json!({
                        "type": "message",
                        "role": "developer",
                        "content": [{"type": "input_text", "text": text}]
                    }));
                    self.instructions_item = Some(i);
                    i
                }
            };
            reconstructed_items.push(0);
            input.push(index);
        }
        input.extend_from_slice(&self.history[..call.input_len.min(self.history.len())]);
        let head = self.head(lite, false);
        let Some(session) = self.session.as_mut() else {
            return;
        };
        session.requests.push(ReconstructedRequest {
            head: head.fields,
            input_at: head.input_at,
            input,
            kind: RequestKind::Turn,
            response_id,
            turn_id: turn_id.or_else(|| self.turn_id.clone()),
            usage,
            usage_source,
            sent_at_ms: call.sent_at_ms,
            finished_at_ms: ms,
            line,
            reconstructed_items,
            reconstructed_fields: head.reconstructed,
            not_recorded: head.not_recorded,
        });
    }

    /// The body fields other than `input`, in Codex's order, and what of them is reconstructed.
    fn head(&self, lite: bool, compaction: bool) -> Head {
        let tc = &self.turn_context;
        let settings = tc.get("collaboration_mode").and_then(|m| m.get("settings"));
        let model = tc
            .get("model")
            .or_else(|| settings.and_then(|s| s.get("model")))
            .or_else(|| self.session.as_ref().and_then(|s| s.meta.get("model")))
            .and_then(Value::as_str)
            .unwrap_or("unknown");
        let effort = tc
            .get("effort")
            .filter(|v| !v.is_null())
            .or_else(|| settings.and_then(|s| s.get("reasoning_effort")))
            .and_then(Value::as_str);
        let summary = tc
            .get("summary")
            .and_then(Value::as_str)
            .filter(|s| *s != "none");
        let mut head = JsonMap::new();
        head.insert("model".to_string(), json!(model));
        head.insert("stream".to_string(), json!(true));
        let mut fields = vec!["stream", "tool_choice", "store", "prompt_cache_key"];
        let mut not_recorded = vec!["text", "include", "client_metadata"];
        if compaction && !lite {
            // Codex sends a standard compaction call no tools; Lite calls never send `tools`.
            head.insert("tools".to_string(), json!([]));
            fields.push("tools");
        } else if !lite {
            not_recorded.insert(0, "tools");
        }
        head.insert("tool_choice".to_string(), json!("auto"));
        if lite || compaction {
            head.insert("parallel_tool_calls".to_string(), json!(false));
            fields.push("parallel_tool_calls");
        } else {
            not_recorded.push("parallel_tool_calls");
        }
        let mut reasoning = JsonMap::new();
        if let Some(effort) = effort {
            reasoning.insert("effort".to_string(), json!(effort));
        }
        if let Some(summary) = summary {
            reasoning.insert("summary".to_string(), json!(summary));
        }
        if reasoning.is_empty() {
            not_recorded.push("reasoning");
        } else {
            head.insert("reasoning".to_string(), Value::Object(reasoning));
        }
        head.insert("store".to_string(), json!(false));
        let thread = self.session.as_ref().map(|s| s.thread_id.clone());
        head.insert("prompt_cache_key".to_string(), json!(thread));
        fields.sort_unstable();
        Head {
            fields: head,
            input_at: 2,
            reconstructed: fields,
            not_recorded,
        }
    }

    /// A `compacted` line: marks the compaction call and replaces the history.
    fn compacted(&mut self, payload: Value) {
        self.call = None;
        let target = payload
            .get("compaction_response_id")
            .and_then(Value::as_str)
            .map(str::to_string);
        let turn_start = self.turn_start_request;
        let prompt = match self.compaction_prompt_item {
            Some(i) => i,
            None => {
                let i = self.push_item(json!({
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": COMPACTION_PROMPT}]
                }));
                self.compaction_prompt_item = Some(i);
                i
            }
        };
        let lite_before = self.is_lite_request();
        let head = self.head(lite_before, true);
        if let Some(session) = self.session.as_mut() {
            let by_id = target.as_deref().and_then(|id| {
                session
                    .requests
                    .iter()
                    .rposition(|r| r.response_id.as_deref() == Some(id))
            });
            // Without response ids (older files): the call made since the turn started, if any.
            let position = by_id.or_else(|| {
                session
                    .requests
                    .len()
                    .checked_sub(1)
                    .filter(|last| *last >= turn_start)
            });
            if let Some(request) = position.and_then(|p| session.requests.get_mut(p)) {
                request.kind = RequestKind::Compaction;
                request.reconstructed_items.push(request.input.len());
                request.input.push(prompt);
                request.head = head.fields;
                request.input_at = head.input_at;
                request.reconstructed_fields = head.reconstructed;
                request.not_recorded = head.not_recorded;
            }
        }
        let replacement = match payload.get("replacement_history") {
            Some(Value::Array(items)) => items.clone(),
            // Older files: the summary alone, as a user message.
            _ => payload
                .get("message")
                .and_then(Value::as_str)
                .map(|text| {
                    vec![json!({
                        "type": "message",
                        "role": "user",
                        "content": [{"type": "input_text", "text": text}]
                    })]
                })
                .unwrap_or_default(),
        };
        self.history.clear();
        for item in replacement {
            if let Value::Object(mut map) = item {
                map.retain(|key, _| !key.starts_with("internal_"));
                let index = self.push_item(Value::Object(map));
                self.history.push(index);
            }
        }
    }

    fn is_lite_request(&self) -> bool {
        self.history
            .first()
            .and_then(|i| self.session.as_ref()?.items.get(*i as usize))
            .and_then(|v| v.get("type"))
            .and_then(Value::as_str)
            == Some("additional_tools")
    }
}

fn str_field(map: &JsonMap, key: &str) -> Option<String> {
    map.get(key).and_then(Value::as_str).map(str::to_string)
}

/// A rollout usage object (`input_tokens`, `cached_input_tokens`, …; 0 when absent).
fn usage_of(value: &Value) -> TokenUsage {
    let n = |key: &str| value.get(key).and_then(Value::as_i64).unwrap_or(0);
    TokenUsage {
        input_tokens: n("input_tokens"),
        cached_input_tokens: n("cached_input_tokens"),
        cache_write_input_tokens: n("cache_write_input_tokens"),
        output_tokens: n("output_tokens"),
        reasoning_output_tokens: n("reasoning_output_tokens"),
        total_tokens: n("total_tokens"),
    }
}
