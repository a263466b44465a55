//! Reading a rollout line by line: the length bound, JSON parsing, the `{timestamp, type,
//! payload}` envelope (and the envelope-less lines of early files), which line and payload types
//! are known, and the truncated last line.

use serde_json::Value;

use super::build::Builder;
use super::{Limits, Rollout, RolloutError, TruncatedLine, UnknownLine};

/// Line types this module reads or knowingly skips.
const KNOWN_LINE_TYPES: &[&str] = &[
    "session_meta",
    "turn_context",
    "response_item",
    "event_msg",
    "token_usage_record",
    "compacted",
    "world_state",
];

/// `event_msg` payload types that carry nothing for the requests, or that are read.
const KNOWN_EVENTS: &[&str] = &[
    "task_started",
    "task_complete",
    "turn_started",
    "turn_complete",
    "turn_aborted",
    "thread_rolled_back",
    "token_count",
    "item_started",
    "item_completed",
    "thread_settings_applied",
    "user_message",
    "agent_message",
    "agent_message_delta",
    "agent_reasoning",
    "agent_reasoning_raw_content",
    "agent_reasoning_section_break",
    "exec_command_begin",
    "exec_command_end",
    "exec_command_output_delta",
    "patch_apply_begin",
    "patch_apply_end",
    "mcp_tool_call_begin",
    "mcp_tool_call_end",
    "web_search_begin",
    "web_search_end",
    "context_compacted",
    "entered_review_mode",
    "exited_review_mode",
    "error",
    "warning",
    "stream_error",
    "background_event",
    "plan_update",
    "turn_diff",
    "view_image_tool_call",
    "shutdown_complete",
];

/// Item types the history holds (others are kept too, and reported).
const KNOWN_ITEMS: &[&str] = &[
    "message",
    "reasoning",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "local_shell_call",
    "web_search_call",
    "image_generation_call",
    "tool_search_call",
    "tool_search_output",
    "additional_tools",
    "compaction",
    "compaction_summary",
    "context_compaction",
    "ghost_snapshot",
];

/// Whether bytes look like a rollout (the first line is an object with `type` and `payload`, or
/// an early file's session header), as opposed to a HAR file or anything else.
pub fn looks_like_rollout(bytes: &[u8]) -> bool {
    let first = bytes.split(|b| *b == b'\n').next().unwrap_or_default();
    match serde_json::from_slice::<Value>(first) {
        Ok(Value::Object(map)) => {
            (map.contains_key("type") && map.contains_key("payload"))
                || (map.contains_key("id")
                    && map.contains_key("timestamp")
                    && !map.contains_key("log"))
        }
        _ => false,
    }
}

/// Reads a whole rollout.
pub fn parse(bytes: &[u8], limits: &Limits) -> Result<Rollout, RolloutError> {
    let mut parser = RolloutParser::new(*limits);
    let mut rest = bytes;
    while !rest.is_empty() {
        match rest.iter().position(|b| *b == b'\n') {
            Some(end) => {
                parser.push_line(&rest[..end])?;
                rest = &rest[end + 1..];
            }
            None => {
                parser.push_line(rest)?;
                rest = &[];
            }
        }
    }
    parser.finish()
}

/// A rollout fed one line at a time (a reader that bounds its lines pushes them here).
#[derive(Debug, Default)]
pub struct RolloutParser {
    limits: Limits,
    line: usize,
    builder: Builder,
    unknown: Vec<UnknownLine>,
    /// A line that did not parse: an error if another line follows, the truncated last line if
    /// none does.
    pending_bad: Option<TruncatedLine>,
}

impl RolloutParser {
    /// A parser with these limits.
    pub fn new(limits: Limits) -> Self {
        Self {
            limits,
            ..Self::default()
        }
    }

    /// Feeds one line, without its newline (a trailing `\r` is ignored).
    pub fn push_line(&mut self, line: &[u8]) -> Result<(), RolloutError> {
        self.line += 1;
        let line_no = self.line;
        if line.len() > self.limits.max_line_bytes {
            return Err(RolloutError::LineTooLong {
                line: line_no,
                limit: self.limits.max_line_bytes,
            });
        }
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            return Ok(());
        }
        if let Some(bad) = self.pending_bad.take() {
            return Err(RolloutError::InvalidJson {
                line: bad.line,
                message: bad.message,
            });
        }
        let value: Value = match serde_json::from_slice(line) {
            Ok(v) => v,
            Err(e) => {
                self.pending_bad = Some(TruncatedLine {
                    line: line_no,
                    bytes: line.len(),
                    message: e.to_string(),
                });
                return Ok(());
            }
        };
        self.push_value(line_no, value)
    }

    fn push_value(&mut self, line: usize, value: Value) -> Result<(), RolloutError> {
        let Value::Object(mut map) = value else {
            return Err(RolloutError::InvalidLine {
                line,
                message: "a rollout line must be a JSON object".to_string(),
            });
        };
        let timestamp = map
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(parse_timestamp_ms);
        let line_type = match map.get("type") {
            Some(Value::String(t)) => t.clone(),
            _ if line == 1 || map.contains_key("instructions") => "session_meta".to_string(),
            _ => {
                return Err(RolloutError::InvalidLine {
                    line,
                    message: "the line has no `type`".to_string(),
                });
            }
        };
        let enveloped = map.contains_key("payload");
        let payload = match map.remove("payload") {
            Some(p) => p,
            // Early files: the line itself is the session header or a bare item.
            None if line_type == "session_meta" || KNOWN_ITEMS.contains(&line_type.as_str()) => {
                Value::Object(map.clone())
            }
            None => Value::Null,
        };
        let line_type = if KNOWN_ITEMS.contains(&line_type.as_str()) && !enveloped {
            "response_item".to_string()
        } else {
            line_type
        };
        let payload_type = payload.get("type").and_then(Value::as_str);
        let known = match line_type.as_str() {
            "event_msg" => payload_type.is_none_or(|t| KNOWN_EVENTS.contains(&t)),
            "response_item" => payload_type.is_some_and(|t| KNOWN_ITEMS.contains(&t)),
            other => KNOWN_LINE_TYPES.contains(&other),
        };
        if !known {
            let payload_type = payload_type.map(str::to_string);
            let mut whole = map;
            whole.insert("payload".to_string(), payload.clone());
            self.unknown.push(UnknownLine {
                line,
                line_type: line_type.clone(),
                payload_type,
                value: Value::Object(whole),
            });
            // An unknown item type is still part of the history Codex sends.
            if line_type != "response_item" {
                return Ok(());
            }
        }
        self.builder.line(line, timestamp, &line_type, payload);
        Ok(())
    }

    /// Ends the input: the sessions read, the unknown lines, the truncated last line.
    pub fn finish(self) -> Result<Rollout, RolloutError> {
        let sessions = self.builder.finish();
        if sessions.is_empty() {
            if let Some(bad) = self.pending_bad
                && self.line <= 1
            {
                return Err(RolloutError::InvalidJson {
                    line: bad.line,
                    message: bad.message,
                });
            }
            return Err(RolloutError::NoSessionMeta);
        }
        Ok(Rollout {
            sessions,
            unknown: self.unknown,
            truncated_last_line: self.pending_bad,
            lines: self.line,
        })
    }
}

/// RFC 3339 → Unix milliseconds.
pub(super) fn parse_timestamp_ms(text: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|t| t.timestamp_millis())
}
