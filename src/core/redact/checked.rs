//! Redaction for what is written or exported: it fails closed. Where [`super::redact_text`]
//! (for what is shown) hides a whole text it cannot redact, these refuse with a
//! [`RedactError`] naming why — a policy pattern that failed to build, or a JSON text that
//! would no longer parse once redacted — so the caller writes nothing rather than the
//! unredacted value or a broken document.

use std::borrow::Cow;

use serde_json::Value;

use super::text::PATTERNS;

/// Why a text could not be redacted; nothing should be written in its place.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RedactError {
    /// A pattern of the policy failed to build: no text can be redacted.
    #[error("redaction cannot run: its {name} pattern failed to build ({reason})")]
    Pattern {
        /// Which pattern (`secrets`, `containers`).
        name: &'static str,
        /// The regex engine's error.
        reason: String,
    },
    /// JSON text that does not parse back once redacted.
    #[error("the redacted JSON does not parse back ({reason})")]
    NotJson {
        /// The parser's error on the redacted text.
        reason: String,
    },
}

/// `text` with every credential the policy knows replaced (as [`super::redacted`]), or an error
/// when the policy cannot run.
pub fn try_redacted(text: &str) -> Result<Cow<'_, str>, RedactError> {
    PATTERNS.redact(text)
}

/// [`try_redacted`] for a text that may be JSON: when `text` parses as JSON and redaction
/// changed it, the result must parse too, or it is refused ([`RedactError::NotJson`]). Text
/// that redaction leaves alone is not parsed at all (the common case costs one scan).
pub fn try_redacted_json(text: &str) -> Result<Cow<'_, str>, RedactError> {
    let redacted = try_redacted(text)?;
    if let Cow::Owned(changed) = &redacted
        && let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(changed)
        && serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
    {
        return Err(RedactError::NotJson {
            reason: e.to_string(),
        });
    }
    Ok(redacted)
}

/// `value` with every credential in it redacted, the structure kept (through its JSON text,
/// which must parse back).
pub fn try_redact_value(value: &Value) -> Result<Value, RedactError> {
    let text = value.to_string();
    match try_redacted_json(&text)? {
        Cow::Borrowed(_) => Ok(value.clone()),
        Cow::Owned(redacted) => serde_json::from_str(&redacted).map_err(|e| RedactError::NotJson {
            reason: e.to_string(),
        }),
    }
}

/// The value to store or export for header `name` (as [`super::redact_header`]), or an error
/// when the policy cannot run.
pub fn try_redact_header(name: &str, value: &str) -> Result<String, RedactError> {
    try_redacted(value)?;
    Ok(super::redact_header(name, value))
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::super::text::Patterns;
    use super::*;

    #[test]
    fn a_pattern_that_failed_to_build_refuses_every_text() {
        let broken = Patterns::build("(unclosed", r"\{");
        let refused = broken.redact("api_key=sk-live-0123456789");
        assert_eq!(
            refused.map_err(|e| e.to_string()),
            Err("redaction cannot run: its secrets pattern failed to build (regex parse error:\n    \
                 (unclosed\n    ^\nerror: unclosed group)"
                .to_string())
        );
        // Text without any secret is refused too: nothing was checked.
        assert!(broken.redact("hello").is_err());
    }

    #[test]
    fn json_that_would_not_parse_back_is_refused() {
        // A dotted key is not a credential key, but its last part is an assignment name: the
        // number after it becomes bare `<redacted>`, which is no JSON value.
        let body = r#"{"metadata":{"db.password":12345678}}"#;
        assert_eq!(
            try_redacted_json(body),
            Err(RedactError::NotJson {
                reason: "expected value at line 1 column 28".to_string()
            })
        );
        assert_eq!(
            try_redact_value(&serde_json::from_str(body).expect("json")),
            Err(RedactError::NotJson {
                reason: "expected value at line 1 column 28".to_string()
            })
        );
        // Text that was not JSON is redacted as text.
        assert_eq!(
            try_redacted_json("db.password: 12345678").map(Cow::into_owned),
            Ok("db.password: <redacted>".to_string())
        );
    }

    #[test]
    fn json_that_parses_back_is_redacted() {
        let value = json!({"password": "p1", "n": 1});
        assert_eq!(
            try_redact_value(&value),
            Ok(json!({"password": "<redacted>", "n": 1}))
        );
        let plain = json!({"n": 1});
        assert_eq!(try_redact_value(&plain), Ok(plain));
    }
}
