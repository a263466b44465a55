//! `prompt_cache_diagnostics` of a completed response (WIRE_SPEC §19): the server's own verdict
//! on cache reuse against the response named in `prompt_cache_options.comparison_response_id`.
//! A union on `type` — `cache_hit`; `cache_miss` with a `reason` (`input_changed`,
//! `tools_changed`, `model_changed`, …), `cache_missed_tokens` (the input tokens affected
//! after the first divergence) and `comparison_reusable_tokens` (the reusable prefix of the
//! compared response); `comparison_response_not_found`; `unavailable`. Read leniently: an
//! unknown `type` or reason is kept as its text, a missing figure is `None`, and a malformed
//! object never fails the response it came with.

use serde::Serialize;
use serde_json::Value;

/// What the server said about cache reuse.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum PromptCacheDiagnostics {
    /// The expected prefix was reused.
    CacheHit,
    /// The expected prefix was not (fully) reused.
    CacheMiss {
        /// Why (`input_changed`, `tools_changed`, `model_changed`, `prompt_cache_key_changed`,
        /// `service_tier_changed`, `context_compacted`, …; kept as sent).
        reason: Option<String>,
        /// Input tokens affected after the first detected divergence (an estimate).
        cache_missed_tokens: Option<i64>,
        /// Tokens of the reusable prefix in the compared response.
        comparison_reusable_tokens: Option<i64>,
    },
    /// The comparison response is unknown to the server (other organisation, too old, …).
    ComparisonResponseNotFound,
    /// No diagnosis could be made.
    Unavailable,
    /// A `type` this client does not know, kept as sent.
    #[serde(untagged)]
    Other(String),
}

impl PromptCacheDiagnostics {
    /// Reads a `prompt_cache_diagnostics` value; `None` when it is not an object with a string
    /// `type` (null, absent, malformed).
    pub fn from_value(value: &Value) -> Option<Self> {
        let kind = value.get("type")?.as_str()?;
        let count = |key: &str| value.get(key).and_then(Value::as_i64);
        Some(match kind {
            "cache_hit" => Self::CacheHit,
            "cache_miss" => Self::CacheMiss {
                reason: value
                    .get("reason")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                cache_missed_tokens: count("cache_missed_tokens"),
                comparison_reusable_tokens: count("comparison_reusable_tokens"),
            },
            "comparison_response_not_found" => Self::ComparisonResponseNotFound,
            "unavailable" => Self::Unavailable,
            other => Self::Other(other.to_string()),
        })
    }

    /// One line in words: `miss — input_changed, 2,048 tokens affected, 1,024 reusable in the
    /// compared response`.
    pub fn describe(&self) -> String {
        match self {
            Self::CacheHit => "hit".to_string(),
            Self::CacheMiss {
                reason,
                cache_missed_tokens,
                comparison_reusable_tokens,
            } => {
                let mut parts = vec![reason.clone().unwrap_or_else(|| "no reason given".into())];
                if let Some(n) = cache_missed_tokens {
                    parts.push(format!("{} tokens affected", grouped(*n)));
                }
                if let Some(n) = comparison_reusable_tokens {
                    parts.push(format!("{} reusable in the compared response", grouped(*n)));
                }
                format!("miss — {}", parts.join(", "))
            }
            Self::ComparisonResponseNotFound => {
                "comparison response not found (nothing to compare with)".to_string()
            }
            Self::Unavailable => "unavailable (the server made no diagnosis)".to_string(),
            Self::Other(kind) => format!("`{kind}` (a diagnosis this client does not know)"),
        }
    }
}

/// A signed count with thousands grouped (`2,048`); a negative one (a server's oddity) with its sign.
fn grouped(n: i64) -> String {
    let digits = crate::core::format::grouped(n.unsigned_abs());
    if n < 0 { format!("-{digits}") } else { digits }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn every_outcome_reads_and_reads_out() {
        let read = |v: Value| PromptCacheDiagnostics::from_value(&v);
        let values = [
            json!({"type": "cache_hit"}),
            json!({"type": "cache_miss", "reason": "input_changed", "cache_missed_tokens": 2048,
                "comparison_reusable_tokens": 1024}),
            json!({"type": "cache_miss", "reason": "tools_changed", "cache_missed_tokens": 5629}),
            json!({"type": "comparison_response_not_found"}),
            json!({"type": "unavailable"}),
            json!({"type": "partial_hit"}),
        ];
        let parsed: Vec<_> = values.into_iter().map(read).collect();
        assert_eq!(
            parsed,
            vec![
                Some(PromptCacheDiagnostics::CacheHit),
                Some(PromptCacheDiagnostics::CacheMiss {
                    reason: Some("input_changed".to_string()),
                    cache_missed_tokens: Some(2048),
                    comparison_reusable_tokens: Some(1024),
                }),
                Some(PromptCacheDiagnostics::CacheMiss {
                    reason: Some("tools_changed".to_string()),
                    cache_missed_tokens: Some(5629),
                    comparison_reusable_tokens: None,
                }),
                Some(PromptCacheDiagnostics::ComparisonResponseNotFound),
                Some(PromptCacheDiagnostics::Unavailable),
                Some(PromptCacheDiagnostics::Other("partial_hit".to_string())),
            ]
        );
        assert_eq!(
            parsed
                .iter()
                .flatten()
                .map(PromptCacheDiagnostics::describe)
                .collect::<Vec<_>>(),
            vec![
                "hit",
                "miss — input_changed, 2,048 tokens affected, 1,024 reusable in the compared response",
                "miss — tools_changed, 5,629 tokens affected",
                "comparison response not found (nothing to compare with)",
                "unavailable (the server made no diagnosis)",
                "`partial_hit` (a diagnosis this client does not know)",
            ]
        );
        assert_eq!(read(json!(null)), None);
        assert_eq!(read(json!({"reason": "input_changed"})), None);
    }
}
