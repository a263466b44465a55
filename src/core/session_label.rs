//! What a recorded proxy session is called: the client that sent its first request (Codex's
//! `originator` header, else the product token of `User-Agent`), the last user message of that
//! request (Codex's `<environment_context>` / `<user_instructions>` context messages skipped),
//! and the time — `codex_exec · "Count the Rust files" · 14:03`. Pure: header pairs and the body
//! JSON in, text out.

use serde_json::Value;

/// Characters of the user message kept in a label (an ellipsis marks a cut).
pub const MESSAGE_CHARS: usize = 48;

/// What stands between a proxy session's stored label and its grouping key
/// (`codex_exec · "Say hello." · 14:03 · session:0199…`).
pub const KEY_SEPARATOR: &str = " · ";

/// Prefixes of the proxy's grouping keys (`transport::proxy::wire::session_key`).
const KEY_PREFIXES: &[&str] = &["session:", "cache:", "connection:"];

/// Wrappers of the context messages Codex sends as `user` messages before the user's own.
const CONTEXT_WRAPPERS: &[&str] = &[
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
];

/// The client a request names: the `originator` header (Codex: `codex_exec`, `codex_cli_rs`),
/// else the first token of `User-Agent` without a trailing version (`OpenAI/Python 1.54.0` →
/// `OpenAI/Python`, `curl/8.5.0` → `curl`). Header names compare case-insensitively.
pub fn client_of(headers: &[(String, String)]) -> Option<String> {
    let header = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim())
            .filter(|v| !v.is_empty())
    };
    if let Some(originator) = header("originator") {
        return Some(collapsed(originator, MESSAGE_CHARS));
    }
    let token = header("user-agent")?.split_whitespace().next()?;
    let product = match token.rsplit_once('/') {
        Some((name, version))
            if !name.is_empty() && version.starts_with(|c: char| c.is_ascii_digit()) =>
        {
            name
        }
        _ => token,
    };
    Some(collapsed(product, MESSAGE_CHARS))
}

/// The text of the last `role: user` message in the body's `input` (its `input_text` parts, or
/// a string content) that is not a Codex context message, whitespace collapsed and cut to
/// [`MESSAGE_CHARS`] characters. `None`: no such message (a plain string `input` counts as one).
pub fn first_user_message(body: &Value) -> Option<String> {
    let input = body.get("input")?;
    if let Some(text) = input.as_str() {
        return message_text(text);
    }
    input
        .as_array()?
        .iter()
        .rev()
        .filter(|item| item.get("role").and_then(Value::as_str) == Some("user"))
        .filter(|item| {
            item.get("type")
                .and_then(Value::as_str)
                .unwrap_or("message")
                == "message"
        })
        .find_map(|item| match item.get("content")? {
            Value::String(text) => message_text(text),
            Value::Array(parts) => {
                let texts: Vec<&str> = parts
                    .iter()
                    .filter(|p| p.get("type").and_then(Value::as_str) == Some("input_text"))
                    .filter_map(|p| p.get("text").and_then(Value::as_str))
                    .filter(|t| !is_context(t))
                    .collect();
                message_text(&texts.join(" "))
            }
            _ => None,
        })
}

/// The label of a session whose first request had `headers` and `body`, created at
/// `created_us` (Unix microseconds; the time shown as `HH:MM`, UTC): `client · "message" ·
/// time`, leaving out what is unknown; `fallback` stands for an unknown client.
pub fn session_label(
    headers: &[(String, String)],
    body: Option<&Value>,
    created_us: i64,
    fallback: &str,
) -> String {
    let client = client_of(headers).unwrap_or_else(|| fallback.to_string());
    let mut parts = vec![client];
    if let Some(message) = body.and_then(first_user_message) {
        parts.push(format!("\"{message}\""));
    }
    if let Some(time) = chrono::DateTime::from_timestamp_micros(created_us) {
        parts.push(time.format("%H:%M").to_string());
    }
    parts.join(" · ")
}

/// A stored proxy session name split into the label shown and the grouping key kept for the
/// hover text; `None` for a name that does not end in a key (a user's name, an older
/// `proxy session:<uuid>`).
pub fn split_key(name: &str) -> Option<(&str, &str)> {
    let (label, key) = name.rsplit_once(KEY_SEPARATOR)?;
    (!label.is_empty()
        && KEY_PREFIXES
            .iter()
            .any(|p| key.strip_prefix(p).is_some_and(|id| !id.is_empty())))
    .then_some((label, key))
}

/// The label a session of `source` named `name` is listed by, without the grouping key its name
/// ends in: a proxy session's, or a replay's (`replay of <label>`); `None` for any other name,
/// listed as it is.
pub fn listed_label<'a>(source: &str, name: &'a str) -> Option<&'a str> {
    if source != "proxy" && source != "replay" {
        return None;
    }
    split_key(name).map(|(label, _)| label)
}

/// True for a Codex context message (environment, user instructions, AGENTS.md).
fn is_context(text: &str) -> bool {
    let text = text.trim_start();
    CONTEXT_WRAPPERS.iter().any(|w| text.starts_with(w))
}

/// `text` collapsed and cut, unless it is empty or a context message.
fn message_text(text: &str) -> Option<String> {
    if is_context(text) {
        return None;
    }
    let text = collapsed(text, MESSAGE_CHARS);
    (!text.is_empty()).then_some(text)
}

/// `text` with each run of whitespace as one space, trimmed, and cut to `max` characters (an
/// ellipsis ending a cut one).
fn collapsed(text: &str, max: usize) -> String {
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if words.chars().count() <= max {
        return words;
    }
    let cut: String = words.chars().take(max.saturating_sub(1)).collect();
    format!("{}…", cut.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    /// 2026-12-02 14:03:30 UTC.
    const AT: i64 = 1_796_220_210_000_000;

    #[test]
    fn a_codex_request_is_named_by_originator_and_the_users_message() {
        let headers = pairs(&[
            ("session-id", "01a22d2e-1e12-7572-a9bb-3a07cdc8e803"),
            ("originator", "codex_exec"),
            (
                "user-agent",
                "codex_exec/0.171.0 (Debian 12.0.0; x86_64) xterm (codex_exec; 0.171.0)",
            ),
        ]);
        let body = json!({"model": "gpt-5.5", "input": [
            {"type": "message", "role": "developer",
             "content": [{"type": "input_text", "text": "You are Codex."}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text",
             "text": "<user_instructions>\nBe brief.\n</user_instructions>"}]},
            {"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "  Count the Rust\n files\there, then list the largest ones by size"}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text",
             "text": "<environment_context>\n  <cwd>/home/dev</cwd>\n</environment_context>"}]},
        ]});
        assert_eq!(
            session_label(&headers, Some(&body), AT, "proxy"),
            "codex_exec · \"Count the Rust files here, then list the larges…\" · 14:03"
        );
    }

    #[test]
    fn sdk_and_curl_clients_are_named_by_their_user_agent_product() {
        let body = json!({"model": "gpt-5.5", "input": "Say hello."});
        assert_eq!(
            session_label(
                &pairs(&[("User-Agent", "OpenAI/Python 1.54.0")]),
                Some(&body),
                AT,
                "proxy"
            ),
            "OpenAI/Python · \"Say hello.\" · 14:03"
        );
        let body = json!({"input": [{"role": "user", "content": "Ünïcödé  text"}]});
        assert_eq!(
            session_label(
                &pairs(&[("user-agent", "curl/8.5.0")]),
                Some(&body),
                AT,
                "proxy"
            ),
            "curl · \"Ünïcödé text\" · 14:03"
        );
    }

    #[test]
    fn without_a_user_message_or_a_client_the_label_says_what_is_known() {
        let body = json!({"input": [
            {"type": "message", "role": "developer", "content": "rules"},
            {"type": "function_call_output", "call_id": "c1", "output": "42"},
        ]});
        assert_eq!(
            session_label(
                &pairs(&[("originator", "codex_cli_rs")]),
                Some(&body),
                AT,
                "proxy"
            ),
            "codex_cli_rs · 14:03"
        );
        assert_eq!(session_label(&[], None, AT, "proxy"), "proxy · 14:03");
        assert_eq!(first_user_message(&json!({"input": "   "})), None);
    }

    #[test]
    fn a_stored_name_splits_into_label_and_key_only_when_it_ends_in_a_key() {
        assert_eq!(
            split_key("codex_exec · \"Say · hi\" · 14:03 · session:01a2-77"),
            Some(("codex_exec · \"Say · hi\" · 14:03", "session:01a2-77"))
        );
        assert_eq!(
            split_key("proxy · 14:03 · connection:3"),
            Some(("proxy · 14:03", "connection:3"))
        );
        assert_eq!(split_key("my run · session:"), None);
        assert_eq!(split_key("proxy session:01a2-77"), None);
        assert_eq!(split_key("A · B"), None);
    }

    #[test]
    fn a_long_message_is_cut_on_a_character_boundary() {
        let body = json!({"input": "é".repeat(60)});
        assert_eq!(
            first_user_message(&body),
            Some(format!("{}…", "é".repeat(MESSAGE_CHARS - 1)))
        );
    }
}
