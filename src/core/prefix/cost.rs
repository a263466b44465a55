//! What cache misses cost: the price table (`assets/prices.json`, editable) and the tokens a
//! broken prefix kept out of the cache.
//!
//! Caching applies from 1,024 prompt tokens and counts hits in 128-token steps past that
//! (WIRE_SPEC §19), so a pair's *missed* tokens are `cacheable(from_tokens) −
//! cacheable(reusable_tokens)`, priced at the difference between input and cached input.

use serde::{Deserialize, Serialize};

use super::PrefixError;
use super::compare::PairReport;

/// The bundled price table.
pub const BUNDLED_PRICES_JSON: &str = include_str!("../../../assets/prices.json");

/// Prices of one model family, in US dollars per million tokens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelPrice {
    /// Model slug prefix this row applies to (longest matching prefix wins).
    pub prefix: String,
    /// Uncached input tokens.
    pub input: f64,
    /// Cached input tokens.
    pub cached_input: f64,
    /// Output tokens.
    pub output: f64,
    /// Where the figures come from (`openai-list-2025`, `placeholder`, or your own note).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source: String,
}

/// A price table file: `{"about": "...", "models": [{"prefix", "input", "cached_input", "output"}]}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PriceTable {
    /// Where the figures come from.
    #[serde(default)]
    pub about: String,
    /// One row per model slug prefix.
    pub models: Vec<ModelPrice>,
}

impl PriceTable {
    /// The bundled table (an empty one if the bundled file were broken; a unit test checks it).
    pub fn bundled() -> Self {
        Self::from_json(BUNDLED_PRICES_JSON).unwrap_or(Self {
            about: String::new(),
            models: Vec::new(),
        })
    }

    /// Parses a price table file.
    pub fn from_json(text: &str) -> Result<Self, PrefixError> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| PrefixError::Prices(e.to_string()))?;
        let table: Self =
            crate::core::json::from_value_with_path(value).map_err(PrefixError::Prices)?;
        for (i, row) in table.models.iter().enumerate() {
            let prices = [row.input, row.cached_input, row.output];
            if prices.iter().any(|p| !p.is_finite() || *p < 0.0) {
                return Err(PrefixError::Prices(format!(
                    "models[{i}]: prices must be non-negative numbers"
                )));
            }
        }
        Ok(table)
    }

    /// The row whose prefix is the longest prefix of `model`.
    pub fn lookup(&self, model: &str) -> Option<&ModelPrice> {
        self.models
            .iter()
            .filter(|row| model.starts_with(&row.prefix))
            .max_by_key(|row| row.prefix.len())
    }
}

/// Tokens the server can serve from cache out of a reusable prefix of `tokens`: nothing below
/// 1,024, then 1,024 plus whole 128-token steps.
pub fn cacheable_tokens(tokens: u64) -> u64 {
    if tokens < 1024 {
        0
    } else {
        1024 + (tokens - 1024) / 128 * 128
    }
}

/// The cost of a session's cache misses.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CacheCost {
    /// Tokens that a kept prefix would have served from cache, over all broken pairs.
    pub missed_tokens: u64,
    /// What those tokens cost beyond the cached price, in US dollars (priced models only).
    pub miss_cost_usd: f64,
    /// Models of broken pairs that the price table does not cover.
    pub unpriced_models: Vec<String>,
}

impl CacheCost {
    /// Sums the misses of `pairs`; `model_of(to)` names the model of request `to`.
    pub fn of_pairs<'a>(
        pairs: &[PairReport],
        model_of: impl Fn(usize) -> &'a str,
        prices: &PriceTable,
    ) -> Self {
        let mut cost = Self {
            missed_tokens: 0,
            miss_cost_usd: 0.0,
            unpriced_models: Vec::new(),
        };
        for pair in pairs.iter().filter(|p| !p.prefix_kept) {
            let missed = cacheable_tokens(pair.from_tokens)
                .saturating_sub(cacheable_tokens(pair.reusable_tokens));
            cost.missed_tokens += missed;
            let model = model_of(pair.to);
            match prices.lookup(model) {
                Some(row) => {
                    cost.miss_cost_usd +=
                        missed as f64 * (row.input - row.cached_input).max(0.0) / 1_000_000.0;
                }
                None => {
                    if !cost.unpriced_models.iter().any(|m| m == model) {
                        cost.unpriced_models.push(model.to_string());
                    }
                }
            }
        }
        cost
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_table_parses_and_matches_longest_prefix() {
        let table = PriceTable::from_json(BUNDLED_PRICES_JSON).expect("bundled prices parse");
        assert!(!table.about.is_empty());
        let gpt5 = table.lookup("gpt-5").expect("gpt-5 row");
        let mini = table.lookup("gpt-5-mini-2025").expect("gpt-5-mini row");
        assert_eq!(gpt5.prefix, "gpt-5");
        assert_eq!(mini.prefix, "gpt-5-mini");
        assert!(table.lookup("llama3").is_none());
    }

    #[test]
    fn cacheable_steps() {
        assert_eq!(cacheable_tokens(0), 0);
        assert_eq!(cacheable_tokens(1023), 0);
        assert_eq!(cacheable_tokens(1024), 1024);
        assert_eq!(cacheable_tokens(1151), 1024);
        assert_eq!(cacheable_tokens(1152), 1152);
    }

    #[test]
    fn bad_tables_are_rejected() {
        assert!(PriceTable::from_json("{").is_err());
        let negative = r#"{"models":[{"prefix":"x","input":-1,"cached_input":0,"output":0}]}"#;
        assert_eq!(
            PriceTable::from_json(negative),
            Err(PrefixError::Prices(
                "models[0]: prices must be non-negative numbers".to_string()
            ))
        );
    }
}
