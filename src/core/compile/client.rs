//! The client's identity and turn headers under the `codex` header style: `originator`, the
//! `User-Agent` (`<originator>/<version> (<platform>) <terminal> (<suffix>)`, as `codex exec`
//! sends it), `x-codex-beta-features`, `x-codex-window-id` and `x-codex-turn-metadata` (ASCII
//! JSON). Ids come from the Prompt: the captured `client_metadata` values when it has them (they
//! are the same strings Codex puts in the headers), else the thread id. [`parse_user_agent`] is
//! the inverse used by import.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Value, json};

use super::headers::{HeaderFacts, body_effort};
use crate::core::json::JsonMap;
use crate::core::prompt::{Prompt, Setting};
use crate::core::rules::CompileRules;

/// Platform in `User-Agent` when the Prompt sets none (what the shared captures show).
pub const DEFAULT_PLATFORM: &str = "Debian 12.0.0; x86_64";
/// Terminal in `User-Agent` when the Prompt sets none (what the shared captures show).
pub const DEFAULT_TERMINAL: &str = "xterm";
/// The `originator` of `codex exec`, whose user agent ends in `(codex_exec; <version>)`.
pub const EXEC_ORIGINATOR: &str = "codex_exec";

/// `client_metadata` key holding the window id (same value as the header).
const WINDOW_KEY: &str = "x-codex-window-id";
/// `client_metadata` key holding the turn metadata (same string as the header).
const TURN_METADATA_KEY: &str = "x-codex-turn-metadata";

/// The `originator` value.
pub fn originator<'a>(prompt: &'a Prompt, rules: &'a CompileRules) -> &'a str {
    prompt
        .client
        .originator
        .as_deref()
        .unwrap_or(&rules.default_originator)
}

/// The `User-Agent` suffix the client adds by default: `codex exec` names itself and its version.
pub fn default_suffix(originator: &str, version: &str) -> Option<String> {
    (originator == EXEC_ORIGINATOR).then(|| format!("{originator}; {version}"))
}

/// `<originator>/<version> (<platform>) <terminal>[ (<suffix>)]`, with characters outside
/// printable ASCII replaced by `_` (§4).
pub fn user_agent(prompt: &Prompt, rules: &CompileRules) -> String {
    let originator = originator(prompt, rules);
    let version = &rules.client_version;
    let client = &prompt.client;
    let platform = client.platform.as_deref().unwrap_or(DEFAULT_PLATFORM);
    let terminal = client.terminal.as_deref().unwrap_or(DEFAULT_TERMINAL);
    let mut ua = format!("{originator}/{version} ({platform}) {terminal}");
    let suffix = match &client.user_agent_suffix {
        Setting::Default => default_suffix(originator, version),
        Setting::Omit => None,
        Setting::Value(s) => Some(s.clone()),
    };
    if let Some(suffix) = suffix {
        ua.push_str(&format!(" ({suffix})"));
    }
    ua.chars()
        .map(|c| if (' '..='~').contains(&c) { c } else { '_' })
        .collect()
}

/// The parts of a `User-Agent` in the client's format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserAgentParts {
    /// Before the `/`.
    pub originator: String,
    /// After the `/`.
    pub version: String,
    /// Inside the first parentheses.
    pub platform: String,
    /// Between the platform and the suffix.
    pub terminal: String,
    /// Inside the trailing parentheses, if any.
    pub suffix: Option<String>,
}

static USER_AGENT: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^([^/ ]+)/(\S+) \(([^()]*)\) (.*?)(?: \(([^()]*)\))?$").ok());

/// Splits a `User-Agent` in the client's format; None for any other shape.
pub fn parse_user_agent(value: &str) -> Option<UserAgentParts> {
    let caps = USER_AGENT.as_ref()?.captures(value)?;
    let part = |i: usize| caps.get(i).map(|m| m.as_str().to_string());
    Some(UserAgentParts {
        originator: part(1)?,
        version: part(2)?,
        platform: part(3)?,
        terminal: part(4)?,
        suffix: part(5),
    })
}

/// `x-codex-beta-features`: the Prompt's setting, else the preset's.
pub fn beta_features(prompt: &Prompt, rules: &CompileRules) -> Option<String> {
    match &prompt.client.beta_features {
        Setting::Default => rules.beta_features.clone(),
        Setting::Omit => None,
        Setting::Value(v) => Some(v.clone()),
    }
}

fn metadata_str<'a>(prompt: &'a Prompt, key: &str) -> Option<&'a str> {
    prompt
        .client_metadata
        .as_ref()
        .and_then(|m| m.get(key))
        .and_then(Value::as_str)
}

/// `x-codex-window-id`: the captured value, else `<thread id>:0`.
pub fn window_id(prompt: &Prompt) -> Option<String> {
    if let Some(window) = metadata_str(prompt, WINDOW_KEY) {
        return Some(window.to_string());
    }
    prompt.thread_id.as_ref().map(|t| format!("{t}:0"))
}

/// `x-codex-turn-metadata`: the captured string, else one built from the Prompt in Codex's key
/// order (session, thread, turn, window, request kind, model, effort) — ASCII-escaped JSON.
pub fn turn_metadata(
    prompt: &Prompt,
    window: Option<&str>,
    facts: &HeaderFacts<'_>,
) -> Option<String> {
    if let Some(meta) = metadata_str(prompt, TURN_METADATA_KEY) {
        return Some(meta.to_string());
    }
    let thread = prompt.thread_id.as_deref()?;
    let mut meta = JsonMap::new();
    meta.insert("session_id".into(), json!(thread));
    meta.insert("thread_id".into(), json!(thread));
    if let Some(turn) = metadata_str(prompt, "turn_id") {
        meta.insert("turn_id".into(), json!(turn));
    }
    if let Some(window) = window {
        meta.insert("window_id".into(), json!(window));
        let number = window
            .rsplit_once(':')
            .and_then(|(_, n)| n.parse::<u64>().ok());
        meta.insert("window_number".into(), json!(number.unwrap_or(0)));
    }
    if facts.compaction {
        meta.insert("request_kind".into(), json!("compaction"));
        meta.insert(
            "compaction".into(),
            json!({"trigger": "auto", "reason": "comp_hash_changed",
                   "implementation": "responses", "phase": "pre_turn", "strategy": "memento"}),
        );
    } else {
        meta.insert("request_kind".into(), json!("turn"));
        meta.insert("model".into(), json!(prompt.model));
        if let Some(effort) = body_effort(facts.body) {
            meta.insert("reasoning_effort".into(), json!(effort));
        }
    }
    Some(ascii_json(&Value::Object(meta)))
}

/// Compact JSON with every non-ASCII character written as a `\u` escape.
fn ascii_json(value: &Value) -> String {
    let text = value.to_string();
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out
}
