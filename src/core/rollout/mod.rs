//! Codex's own session logs ("rollouts", `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`)
//! turned into the requests Codex sent: one request per model call, in order, with the server's
//! usage for that call and the timestamps of the lines. Pure: it takes bytes or lines, never
//! reads a file.
//!
//! A rollout line is `{"timestamp", "type", "payload"}`. What is read:
//!
//! - `session_meta`: thread id, CLI version, base instructions (for standard models they are not
//!   recorded as an item; the first input message is reconstructed from them);
//! - `turn_context`: the model and reasoning settings of the calls that follow (the other body
//!   fields — reasoning with the model's default effort, `include`, `text`,
//!   `parallel_tool_calls`, … — are compiled under the rules preset of the file's Codex version,
//!   [`rules_for_version`], with the bundled catalog, and listed as reconstructed);
//! - `response_item`: the history, item by item, as the client sends it: the compiler's item
//!   rules for the session's `model_provider` (Codex's passthrough metadata
//!   `internal_chat_message_metadata_passthrough` is kept for the OpenAI provider, dropped for
//!   any other; [`RolloutSession::item_rules`] says what was changed); an item the model produced
//!   (reasoning, a call, an assistant message) marks the start of a call, whose input is the
//!   history before it;
//! - `token_usage_record`: the end of a call, its `response_id` and its usage; files without
//!   them fall back to `event_msg` `token_count` events, counting a repeated total once;
//! - `compacted`: names the compaction call (`compaction_response_id`; the handoff prompt Codex
//!   appends is reconstructed) and replaces the history with `replacement_history`;
//! - `event_msg` `thread_rolled_back`: the history loses its last `num_turns` user turns.
//!
//! Lines of other types, and payload types this module does not know, are kept
//! ([`UnknownLine`]); a last line that does not parse (a session still being written) is
//! reported ([`TruncatedLine`]), not an error. What was reconstructed rather than recorded is
//! listed per request ([`ReconstructedRequest::reconstructed_items`],
//! [`ReconstructedRequest::reconstructed_fields`], [`ReconstructedRequest::not_recorded`]).

mod build;
mod lines;
pub mod provenance;

use std::path::PathBuf;

use serde::Serialize;
use serde_json::Value;

use crate::core::json::JsonMap;
use crate::core::rules::CompileRules;
use crate::core::stream::TokenUsage;

pub use lines::{RolloutParser, looks_like_rollout, parse};

/// Default longest accepted line: a session_meta line carries the base instructions, a
/// `compacted` line a whole history.
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 << 20;

/// Where Codex keeps its rollouts: `$CODEX_HOME/sessions`, `CODEX_HOME` defaulting to
/// `$HOME/.codex`. The caller passes the two environment values (core reads no environment).
pub fn default_sessions_dir(codex_home: Option<&str>, home: Option<&str>) -> Option<PathBuf> {
    let codex_home = match codex_home.filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(home.filter(|v| !v.is_empty())?).join(".codex"),
    };
    Some(codex_home.join("sessions"))
}

/// The rules preset a rollout written by Codex `cli_version` is rebuilt under: `codex-0.169`
/// for 0.169 and older, `codex-0.171` for 0.170 and newer, and for an unknown version.
pub fn rules_for_version(cli_version: Option<&str>) -> CompileRules {
    let minor = cli_version.and_then(|v| {
        let mut parts = v.split('.');
        let major: u64 = parts.next()?.trim().parse().ok()?;
        let minor: u64 = parts.next()?.trim().parse().ok()?;
        Some((major, minor))
    });
    match minor {
        Some((0, minor)) if minor <= 169 => CompileRules::codex_0_169(),
        _ => CompileRules::codex_0_171(),
    }
}

/// Bounds on what is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Longest line, in bytes (without its newline).
    pub max_line_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
        }
    }
}

/// A rollout that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RolloutError {
    /// A line longer than the limit.
    #[error("line {line}: longer than {limit} bytes")]
    LineTooLong {
        /// 1-based line number.
        line: usize,
        /// The limit.
        limit: usize,
    },
    /// A line before the last that is not JSON.
    #[error("line {line}: not JSON ({message})")]
    InvalidJson {
        /// 1-based line number.
        line: usize,
        /// The parser's message.
        message: String,
    },
    /// A line that is JSON but not a rollout line.
    #[error("line {line}: {message}")]
    InvalidLine {
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// No `session_meta` line: not a Codex rollout.
    #[error("not a Codex rollout: no session_meta line")]
    NoSessionMeta,
}

/// Everything read from one rollout file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rollout {
    /// The sessions it records (one, unless the file holds more than one `session_meta` id).
    pub sessions: Vec<RolloutSession>,
    /// Lines and payloads of types this version does not know, kept verbatim.
    pub unknown: Vec<UnknownLine>,
    /// The last line, when it did not parse (the file was still being written).
    pub truncated_last_line: Option<TruncatedLine>,
    /// Lines read (blank lines included).
    pub lines: usize,
}

/// One Codex thread and its model calls.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RolloutSession {
    /// The thread id (`session_meta.id`).
    pub thread_id: String,
    /// `session_meta.cli_version`.
    pub cli_version: Option<String>,
    /// The rules preset the requests were rebuilt under ([`rules_for_version`]).
    pub rules: String,
    /// What the compiler's item rules changed in recorded items, once per kind
    /// (`internal_chat_message_metadata_passthrough: dropped: …`); empty when every recorded
    /// item is sent as recorded.
    pub item_rules: Vec<String>,
    /// `session_meta.timestamp` (or the line's), Unix milliseconds.
    pub started_at_ms: Option<i64>,
    /// The `session_meta` payload without its base instructions text.
    pub meta: JsonMap,
    /// Every input item the requests use, each once; requests index into it.
    pub items: Vec<Value>,
    /// The model calls, in order.
    pub requests: Vec<ReconstructedRequest>,
}

/// What kind of model call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestKind {
    /// A turn's call.
    Turn,
    /// The compaction call (handoff summary, or remote compaction).
    Compaction,
}

/// Where a call's usage came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum UsageSource {
    /// Its `token_usage_record` line.
    TokenUsageRecord,
    /// The `last_token_usage` of a `token_count` event (older files).
    TokenCount,
}

/// One model call as Codex sent it, as far as the rollout records it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReconstructedRequest {
    /// Body fields other than `input`, in body order.
    pub head: JsonMap,
    /// Position of `input` among the body keys.
    pub input_at: usize,
    /// The input items, as indices into [`RolloutSession::items`].
    pub input: Vec<u32>,
    /// Turn call or compaction call.
    pub kind: RequestKind,
    /// The server's response id, when recorded.
    pub response_id: Option<String>,
    /// The Codex turn id, when recorded.
    pub turn_id: Option<String>,
    /// The server-reported usage of this call.
    pub usage: Option<TokenUsage>,
    /// Where `usage` came from.
    pub usage_source: UsageSource,
    /// When the request was sent (the time of the last line before its first output), Unix ms.
    pub sent_at_ms: Option<i64>,
    /// When its usage was recorded (the call finished), Unix ms.
    pub finished_at_ms: Option<i64>,
    /// 1-based line that closed the call.
    pub line: usize,
    /// Positions in `input` of items that were reconstructed, not recorded verbatim (the
    /// standard base-instructions message, the compaction prompt).
    pub reconstructed_items: Vec<usize>,
    /// Body fields filled by rule or from `turn_context` rather than recorded as sent.
    pub reconstructed_fields: Vec<&'static str>,
    /// Parts of the request the rollout does not record at all.
    pub not_recorded: Vec<&'static str>,
}

/// A line (or a payload) of a type this module does not know.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UnknownLine {
    /// 1-based line number.
    pub line: usize,
    /// The line's `type`.
    pub line_type: String,
    /// The payload's `type`, when it has one.
    pub payload_type: Option<String>,
    /// The whole line.
    pub value: Value,
}

/// A last line that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TruncatedLine {
    /// 1-based line number.
    pub line: usize,
    /// Its length in bytes.
    pub bytes: usize,
    /// Why it does not parse.
    pub message: String,
}

impl RolloutSession {
    /// The agent this thread is: its id, and for a subagent the thread that spawned it
    /// (`session_meta.parent_thread_id`, or the older `source.subagent.thread_spawn
    /// .parent_thread_id`) and how, in the words of Codex's `x-openai-subagent` header
    /// (`source.subagent`: `"review"`, `"compact"`, …; `thread_spawn` is `collab_spawn`; an
    /// `{"other": NAME}` is NAME).
    pub fn agent(&self) -> crate::core::anatomy::AgentTag {
        let text = |v: Option<&Value>| {
            v.and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        let subagent = self.meta.get("source").and_then(|s| s.get("subagent"));
        let kind = match subagent {
            Some(Value::String(kind)) => Some(kind.clone()),
            Some(Value::Object(map)) => {
                map.iter()
                    .next()
                    .map(|(key, value)| match (key.as_str(), value.as_str()) {
                        ("thread_spawn", _) => "collab_spawn".to_string(),
                        (_, Some(name)) => name.to_string(),
                        (key, None) => key.to_string(),
                    })
            }
            _ => None,
        };
        let parent = text(self.meta.get("parent_thread_id")).or_else(|| {
            text(
                subagent
                    .and_then(|s| s.get("thread_spawn"))
                    .and_then(|t| t.get("parent_thread_id")),
            )
        });
        crate::core::anatomy::AgentTag {
            thread: self.thread_id.clone(),
            parent,
            kind,
        }
    }

    /// The whole body of one of this session's requests.
    pub fn body(&self, request: &ReconstructedRequest) -> Value {
        let input: Vec<Value> = request
            .input
            .iter()
            .map(|i| self.items.get(*i as usize).cloned().unwrap_or(Value::Null))
            .collect();
        let mut body = JsonMap::with_capacity(request.head.len() + 1);
        let mut input = Some(Value::Array(input));
        for (index, (key, value)) in request.head.iter().enumerate() {
            if index == request.input_at
                && let Some(input) = input.take()
            {
                body.insert("input".to_string(), input);
            }
            body.insert(key.clone(), value.clone());
        }
        if let Some(input) = input {
            body.insert("input".to_string(), input);
        }
        Value::Object(body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_pick_their_rules() {
        let name = |v: Option<&str>| rules_for_version(v).name;
        assert_eq!(name(Some("0.169.0")), "codex-0.169");
        assert_eq!(name(Some("0.120.3")), "codex-0.169");
        assert_eq!(name(Some("0.171.0")), "codex-0.171");
        assert_eq!(name(Some("0.180.0-alpha.1")), "codex-0.171");
        assert_eq!(name(Some("1.0.0")), "codex-0.171");
        assert_eq!(name(Some("garbage")), "codex-0.171");
        assert_eq!(name(None), "codex-0.171");
    }

    #[test]
    fn sessions_dir_follows_codex_home() {
        assert_eq!(
            default_sessions_dir(Some("/srv/codex"), Some("/home/u")),
            Some(PathBuf::from("/srv/codex/sessions"))
        );
        assert_eq!(
            default_sessions_dir(None, Some("/home/u")),
            Some(PathBuf::from("/home/u/.codex/sessions"))
        );
        assert_eq!(
            default_sessions_dir(Some(""), Some("/home/u")),
            Some(PathBuf::from("/home/u/.codex/sessions"))
        );
        assert_eq!(default_sessions_dir(None, None), None);
    }
}
