//! Token usage, parsed in one place from every shape it comes in: the Responses API's
//! (`input_tokens`, `input_tokens_details.cached_tokens` / `cache_write_tokens`,
//! `output_tokens`, `output_tokens_details.reasoning_tokens`, `total_tokens`), the Chat
//! Completions API's (`prompt_tokens`, `prompt_tokens_details.cached_tokens`,
//! `completion_tokens`, `completion_tokens_details.reasoning_tokens`), and the flat names of
//! Codex rollouts and of promptwire's stored [`TokenUsage`] (`cached_input_tokens`,
//! `cache_write_input_tokens`, `reasoning_output_tokens`).
//!
//! [`TokenUsage`] deserializes strictly, as a client reads `response.completed` (the input,
//! output and total counts must be there, and a details object must carry its count);
//! [`UsageCounts::from_value`] reads a stored or reported usage leniently, each count `None`
//! when absent.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// Token counts of a completed response. `cached_input_tokens` is part of `input_tokens`, not in
/// addition to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct TokenUsage {
    /// `usage.input_tokens`.
    pub input_tokens: i64,
    /// `usage.input_tokens_details.cached_tokens` (0 without details).
    pub cached_input_tokens: i64,
    /// `usage.input_tokens_details.cache_write_tokens` (0 when absent).
    pub cache_write_input_tokens: i64,
    /// `usage.output_tokens`.
    pub output_tokens: i64,
    /// `usage.output_tokens_details.reasoning_tokens` (0 without details).
    pub reasoning_output_tokens: i64,
    /// `usage.total_tokens`.
    pub total_tokens: i64,
}

/// The counts a usage object reports, each `None` when it does not (any of the shapes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UsageCounts {
    /// Input tokens (`input_tokens` / `prompt_tokens`).
    pub input_tokens: Option<i64>,
    /// Cached input tokens, part of the input.
    pub cached_input_tokens: Option<i64>,
    /// Input tokens written to the cache.
    pub cache_write_input_tokens: Option<i64>,
    /// Output tokens (`output_tokens` / `completion_tokens`).
    pub output_tokens: Option<i64>,
    /// Reasoning tokens, part of the output.
    pub reasoning_output_tokens: Option<i64>,
    /// `total_tokens`.
    pub total_tokens: Option<i64>,
}

/// Every name of every shape, as it is on the wire.
#[derive(Deserialize)]
struct Wire {
    #[serde(default, alias = "prompt_tokens")]
    input_tokens: Option<i64>,
    #[serde(default, alias = "prompt_tokens_details")]
    input_tokens_details: Option<InputDetails>,
    #[serde(default, alias = "completion_tokens")]
    output_tokens: Option<i64>,
    #[serde(default, alias = "completion_tokens_details")]
    output_tokens_details: Option<OutputDetails>,
    #[serde(default)]
    total_tokens: Option<i64>,
    #[serde(default)]
    cached_input_tokens: Option<i64>,
    #[serde(default)]
    cache_write_input_tokens: Option<i64>,
    #[serde(default)]
    reasoning_output_tokens: Option<i64>,
}

#[derive(Deserialize)]
struct InputDetails {
    #[serde(default)]
    cached_tokens: Option<i64>,
    #[serde(default)]
    cache_write_tokens: Option<i64>,
}

#[derive(Deserialize)]
struct OutputDetails {
    #[serde(default)]
    reasoning_tokens: Option<i64>,
}

impl Wire {
    fn counts(&self) -> UsageCounts {
        let input = self.input_tokens_details.as_ref();
        UsageCounts {
            input_tokens: self.input_tokens,
            cached_input_tokens: input
                .and_then(|d| d.cached_tokens)
                .or(self.cached_input_tokens),
            cache_write_input_tokens: input
                .and_then(|d| d.cache_write_tokens)
                .or(self.cache_write_input_tokens),
            output_tokens: self.output_tokens,
            reasoning_output_tokens: self
                .output_tokens_details
                .as_ref()
                .and_then(|d| d.reasoning_tokens)
                .or(self.reasoning_output_tokens),
            total_tokens: self.total_tokens,
        }
    }

    /// The first count a client requires that is missing (the details' own first, as they
    /// are read first).
    fn missing(&self) -> Option<&'static str> {
        let flat_cached = self.cached_input_tokens.is_some();
        if let Some(d) = &self.input_tokens_details
            && d.cached_tokens.is_none()
            && !flat_cached
        {
            return Some("cached_tokens");
        }
        if let Some(d) = &self.output_tokens_details
            && d.reasoning_tokens.is_none()
            && self.reasoning_output_tokens.is_none()
        {
            return Some("reasoning_tokens");
        }
        [
            ("input_tokens", self.input_tokens),
            ("output_tokens", self.output_tokens),
            ("total_tokens", self.total_tokens),
        ]
        .into_iter()
        .find_map(|(name, count)| count.is_none().then_some(name))
    }
}

impl<'de> Deserialize<'de> for TokenUsage {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let wire = Wire::deserialize(deserializer)?;
        if let Some(name) = wire.missing() {
            return Err(serde::de::Error::missing_field(name));
        }
        Ok(wire.counts().or_zero())
    }
}

impl UsageCounts {
    /// The counts of a usage object in any of the shapes; `None` when `value` is not one (not
    /// an object, or a count that is not an integer).
    pub fn from_value(value: &Value) -> Option<Self> {
        Wire::deserialize(value).ok().map(|wire| wire.counts())
    }

    /// As a [`TokenUsage`], a missing count 0.
    pub fn or_zero(self) -> TokenUsage {
        TokenUsage {
            input_tokens: self.input_tokens.unwrap_or(0),
            cached_input_tokens: self.cached_input_tokens.unwrap_or(0),
            cache_write_input_tokens: self.cache_write_input_tokens.unwrap_or(0),
            output_tokens: self.output_tokens.unwrap_or(0),
            reasoning_output_tokens: self.reasoning_output_tokens.unwrap_or(0),
            total_tokens: self.total_tokens.unwrap_or(0),
        }
    }

    /// Input, cached and output tokens, each `None` when absent or negative.
    pub fn input_cached_output(&self) -> (Option<u64>, Option<u64>, Option<u64>) {
        let u = |n: Option<i64>| n.and_then(|n| u64::try_from(n).ok());
        (
            u(self.input_tokens),
            u(self.cached_input_tokens),
            u(self.output_tokens),
        )
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    const FULL: TokenUsage = TokenUsage {
        input_tokens: 1912,
        cached_input_tokens: 1792,
        cache_write_input_tokens: 64,
        output_tokens: 12,
        reasoning_output_tokens: 5,
        total_tokens: 1924,
    };

    #[test]
    fn every_shape_reads_as_the_same_usage() {
        let shapes = [
            json!({"input_tokens": 1912,
                "input_tokens_details": {"cached_tokens": 1792, "cache_write_tokens": 64},
                "output_tokens": 12, "output_tokens_details": {"reasoning_tokens": 5},
                "total_tokens": 1924}),
            json!({"prompt_tokens": 1912,
                "prompt_tokens_details": {"cached_tokens": 1792, "cache_write_tokens": 64},
                "completion_tokens": 12, "completion_tokens_details": {"reasoning_tokens": 5},
                "total_tokens": 1924}),
            json!({"input_tokens": 1912, "cached_input_tokens": 1792,
                "cache_write_input_tokens": 64, "output_tokens": 12,
                "reasoning_output_tokens": 5, "total_tokens": 1924}),
            serde_json::to_value(FULL).expect("serialize"),
        ];
        let strict: Vec<TokenUsage> = shapes
            .iter()
            .map(|v| TokenUsage::deserialize(v).expect("usage"))
            .collect();
        assert_eq!(strict, vec![FULL; 4]);
        let lenient: Vec<TokenUsage> = shapes
            .iter()
            .filter_map(UsageCounts::from_value)
            .map(UsageCounts::or_zero)
            .collect();
        assert_eq!(lenient, vec![FULL; 4]);
    }

    #[test]
    fn strict_reading_names_the_missing_count_and_lenient_reading_keeps_what_is_there() {
        let missing = |v: Value| TokenUsage::deserialize(v).map_err(|e| e.to_string()).err();
        assert_eq!(
            [
                missing(json!({"input_tokens": 1, "output_tokens": 2})),
                missing(json!({"input_tokens": 1, "input_tokens_details": {},
                    "output_tokens": 2, "total_tokens": 3})),
                missing(json!({"input_tokens": 1, "output_tokens": 2, "total_tokens": 3})),
            ],
            [
                Some("missing field `total_tokens`".to_string()),
                Some("missing field `cached_tokens`".to_string()),
                None,
            ]
        );
        let partial = UsageCounts::from_value(&json!({"input_tokens": 7, "output_tokens": 2}));
        assert_eq!(
            partial.map(|u| u.input_cached_output()),
            Some((Some(7), None, Some(2)))
        );
        assert_eq!(
            UsageCounts::from_value(&json!({"input_tokens": "many"})),
            None
        );
        assert_eq!(UsageCounts::from_value(&json!([1, 2])), None);
    }
}
