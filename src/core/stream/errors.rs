//! Error classification of a streamed turn: `response.failed` by exact `error.code` (WIRE_SPEC
//! §14.1), the retry-after hint in rate-limit messages (§14.2), and the stream's own errors
//! (§13: incomplete, closed before completion, unparseable completion, idle, transport), and
//! the reader's own limits.

use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use super::error_class::ErrorClass;

/// What a blank `cyber_policy` message is replaced with (§14.1 row 4).
pub const CYBER_POLICY_FALLBACK: &str =
    "This request has been flagged for possible cybersecurity risk.";

/// Message of the error reported at end of stream when no `response.completed` came.
pub const CLOSED_BEFORE_COMPLETED: &str = "stream closed before response.completed";

/// Message of the error reported when no bytes arrived within the idle timeout.
pub const IDLE_TIMEOUT: &str = "idle timeout waiting for SSE";

/// Message of a `response.failed` without a usable `response.error` object.
pub const FAILED_EVENT_RECEIVED: &str = "response.failed event received";

/// Why a streamed turn ended without a usable `response.completed`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StreamError {
    /// `context_length_exceeded`: the input does not fit the model's context window.
    #[error("context window exceeded: {}", or_none(.message))]
    ContextWindowExceeded {
        /// The server's message (may be empty).
        message: String,
    },
    /// `insufficient_quota`.
    #[error("quota exceeded: {}", or_none(.message))]
    QuotaExceeded {
        /// The server's message (may be empty).
        message: String,
    },
    /// `usage_not_included`: the plan does not include this usage.
    #[error("usage not included in the plan: {}", or_none(.message))]
    UsageNotIncluded {
        /// The server's message (may be empty).
        message: String,
    },
    /// `cyber_policy`; a missing or blank message is replaced by [`CYBER_POLICY_FALLBACK`].
    #[error("{message}")]
    CyberPolicy {
        /// The message shown to the user.
        message: String,
    },
    /// `invalid_prompt` or `bio_policy`; a missing message becomes `Invalid request.`.
    #[error("{message}")]
    InvalidRequest {
        /// The message shown to the user.
        message: String,
    },
    /// `server_is_overloaded` or `slow_down`. Not retried.
    #[error("server overloaded: {}", or_none(.message))]
    ServerOverloaded {
        /// The server's message (may be empty).
        message: String,
    },
    /// Any other `response.failed` error: worth retrying, after `retry_after` when given.
    #[error("{}", or_none(.message))]
    Retryable {
        /// The server's message (`""` when it sent none).
        message: String,
        /// The delay the server asked for (§14.2), if any.
        retry_after: Option<Duration>,
    },
    /// A stream-level failure: incomplete response, end of stream before completion, an
    /// unparseable completion, `response.failed` without an error object, idle timeout, or a
    /// transport error while reading. Retryable.
    #[error("{message}")]
    Stream {
        /// What happened.
        message: String,
    },
    /// A limit the reader sets was reached: an event or the whole response too large, or the
    /// send's overall deadline ([`super::limits`]). What arrived before it is kept. Not retried:
    /// the same response would reach it again.
    #[error("{message}")]
    LimitExceeded {
        /// Which limit, and its value.
        message: String,
    },
    /// The answer's `Content-Encoding` could not be decoded (an encoding not supported, or
    /// bytes that do not decode): it is not read as if it were plain. Not retried.
    #[error("{message}")]
    ContentEncoding {
        /// Which encoding, and why.
        message: String,
    },
}

fn or_none(message: &str) -> &str {
    if message.is_empty() {
        "(no message)"
    } else {
        message
    }
}

impl StreamError {
    /// A [`StreamError::Stream`] with `message`.
    pub fn stream(message: impl Into<String>) -> Self {
        Self::Stream {
            message: message.into(),
        }
    }

    /// The class recorded and printed in machine-readable output (`context_window_exceeded`,
    /// `retryable`, …).
    pub fn class(&self) -> ErrorClass {
        match self {
            Self::ContextWindowExceeded { .. } => ErrorClass::ContextWindowExceeded,
            Self::QuotaExceeded { .. } => ErrorClass::QuotaExceeded,
            Self::UsageNotIncluded { .. } => ErrorClass::UsageNotIncluded,
            Self::CyberPolicy { .. } => ErrorClass::CyberPolicy,
            Self::InvalidRequest { .. } => ErrorClass::InvalidRequest,
            Self::ServerOverloaded { .. } => ErrorClass::ServerOverloaded,
            Self::Retryable { .. } => ErrorClass::Retryable,
            Self::Stream { .. } => ErrorClass::Stream,
            Self::LimitExceeded { .. } => ErrorClass::LimitExceeded,
            Self::ContentEncoding { .. } => ErrorClass::ContentEncoding,
        }
    }

    /// Whether Codex's turn loop retries this error.
    pub fn is_retryable(&self) -> bool {
        matches!(self, Self::Retryable { .. } | Self::Stream { .. })
    }

    /// The delay the server asked for before a retry.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::Retryable { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

/// `response.error` (and the `error` object of an HTTP error body), as the client reads it.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
pub struct ApiErrorBody {
    /// `error.type`.
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    /// `error.code`: the only field that decides the class.
    #[serde(default)]
    pub code: Option<String>,
    /// `error.message`.
    #[serde(default)]
    pub message: Option<String>,
    /// `error.plan_type` (usage limits).
    #[serde(default)]
    pub plan_type: Option<String>,
    /// `error.resets_at`, unix seconds (usage limits).
    #[serde(default)]
    pub resets_at: Option<i64>,
}

impl ApiErrorBody {
    /// Parses an error object; `None` when `value` is not an object of that shape.
    pub fn from_value(value: &Value) -> Option<Self> {
        Self::deserialize(value).ok()
    }

    fn code_is(&self, code: &str) -> bool {
        self.code.as_deref() == Some(code)
    }

    fn message_or_empty(&self) -> String {
        self.message.clone().unwrap_or_default()
    }

    /// The `cyber_policy` message: the server's unless missing or blank.
    pub fn cyber_policy_message(&self) -> String {
        match &self.message {
            Some(m) if !m.trim().is_empty() => m.clone(),
            _ => CYBER_POLICY_FALLBACK.to_string(),
        }
    }
}

/// Classifies a `response.failed` event from its `response` value (§14.1). Only exact
/// `error.code` values count; the message is read only for the retry-after hint.
pub fn classify_failed(response: Option<&Value>) -> StreamError {
    let Some(error) = response
        .and_then(|r| r.get("error"))
        .and_then(ApiErrorBody::from_value)
    else {
        return StreamError::stream(FAILED_EVENT_RECEIVED);
    };
    if error.code_is("context_length_exceeded") {
        StreamError::ContextWindowExceeded {
            message: error.message_or_empty(),
        }
    } else if error.code_is("insufficient_quota") {
        StreamError::QuotaExceeded {
            message: error.message_or_empty(),
        }
    } else if error.code_is("usage_not_included") {
        StreamError::UsageNotIncluded {
            message: error.message_or_empty(),
        }
    } else if error.code_is("cyber_policy") {
        StreamError::CyberPolicy {
            message: error.cyber_policy_message(),
        }
    } else if error.code_is("invalid_prompt") || error.code_is("bio_policy") {
        StreamError::InvalidRequest {
            message: error
                .message
                .clone()
                .unwrap_or_else(|| "Invalid request.".to_string()),
        }
    } else if error.code_is("server_is_overloaded") || error.code_is("slow_down") {
        StreamError::ServerOverloaded {
            message: error.message_or_empty(),
        }
    } else {
        StreamError::Retryable {
            retry_after: retry_after_hint(&error),
            message: error.message_or_empty(),
        }
    }
}

/// The `response.incomplete` error (§13).
pub fn incomplete_error(response: Option<&Value>) -> StreamError {
    let reason = response
        .and_then(|r| r.get("incomplete_details"))
        .and_then(|d| d.get("reason"))
        .and_then(Value::as_str)
        .unwrap_or("unknown");
    StreamError::stream(format!("Incomplete response returned, reason: {reason}"))
}

/// The delay in a rate-limit message (§14.2): only for `code == "rate_limit_exceeded"`.
pub fn retry_after_hint(error: &ApiErrorBody) -> Option<Duration> {
    if !error.code_is("rate_limit_exceeded") {
        return None;
    }
    parse_try_again_in(error.message.as_deref()?)
}

/// Finds the first `try again in <number><unit>` (case-insensitive) in `message`, as the pattern
/// `(?i)try again in\s*(\d+(?:\.\d+)?)\s*(s|ms|seconds?)` does: `s`/`seconds` are seconds
/// (fractions allowed), `ms` is milliseconds truncated to an integer.
pub fn parse_try_again_in(message: &str) -> Option<Duration> {
    const NEEDLE: &[u8] = b"try again in";
    let bytes = message.as_bytes();
    let mut from = 0;
    while from + NEEDLE.len() <= bytes.len() {
        let offset = bytes[from..]
            .windows(NEEDLE.len())
            .position(|w| w.eq_ignore_ascii_case(NEEDLE))?;
        let start = from + offset + NEEDLE.len();
        if let Some(delay) = parse_amount(&message[start..]) {
            return Some(delay);
        }
        from = from + offset + 1;
    }
    None
}

/// `\s*(\d+(?:\.\d+)?)\s*(s|ms|seconds?)` at the start of `text`.
fn parse_amount(text: &str) -> Option<Duration> {
    let text = text.trim_start();
    let int_len = text.bytes().take_while(u8::is_ascii_digit).count();
    if int_len == 0 {
        return None;
    }
    let mut number_len = int_len;
    let after_int = &text.as_bytes()[int_len..];
    if after_int.first() == Some(&b'.') {
        let frac_len = after_int[1..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if frac_len > 0 {
            number_len += 1 + frac_len;
        }
    }
    let value: f64 = text[..number_len].parse().ok()?;
    let unit = text[number_len..].trim_start().as_bytes();
    match unit.first().map(u8::to_ascii_lowercase) {
        // `s` is the first alternative, so `seconds` also matches here.
        Some(b's') => Duration::try_from_secs_f64(value).ok(),
        Some(b'm') if unit.get(1).map(u8::to_ascii_lowercase) == Some(b's') => {
            // An f64 → u64 `as` cast truncates and saturates, as the client does.
            Some(Duration::from_millis(value as u64))
        }
        _ => None,
    }
}
