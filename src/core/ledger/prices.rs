//! What input costs: the price table (`assets/prices.json`, editable), the rates one request is
//! billed at, and the cache's counting in steps.
//!
//! The table is dated data (WIRE_SPEC §19.1): per model slug prefix the input, cached-input,
//! cache-write and output prices, each row with its `source` and the date it was `checked`. A
//! row nobody checked prices nothing ("price unknown"). [`PriceTable::rates`] applies the
//! long-context rule (more than 272K input tokens: 2× input and cache rates, 1.5× output) and
//! the service tier (`flex` ½, `priority` 2×).

use serde::{Deserialize, Serialize};

use crate::core::prefix::PrefixError;

/// The bundled price table.
pub const BUNDLED_PRICES_JSON: &str = include_str!("../../../assets/prices.json");

/// Prices of one model family, in US dollars per million tokens, with where they come from and
/// when someone checked them. A row without a `checked` date (or without the figures a cache
/// model needs) prices nothing: its models show "price unknown", never a copied number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelPrice {
    /// Model slug prefix this row applies to (longest matching prefix wins).
    pub prefix: String,
    /// Uncached input tokens.
    #[serde(default)]
    pub input: Option<f64>,
    /// Cached input tokens (cache reads).
    #[serde(default)]
    pub cached_input: Option<f64>,
    /// Tokens written to the cache (breakpoint models; prefix models write for free).
    #[serde(default)]
    pub cache_write: Option<f64>,
    /// Output tokens.
    #[serde(default)]
    pub output: Option<f64>,
    /// Where the figures come from (the page's address, or your own note).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source: String,
    /// The date (`YYYY-MM-DD`) someone checked the figures against the source.
    #[serde(default)]
    pub checked: Option<String>,
}

/// A price table file: `{"about": "...", "models": [{"prefix", "input", "cached_input",
/// "cache_write", "output", "source", "checked"}]}`. The default is empty (every price unknown).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PriceTable {
    /// Where the figures come from.
    #[serde(default)]
    pub about: String,
    /// One row per model slug prefix.
    pub models: Vec<ModelPrice>,
}

/// Prompts with more input tokens than this are billed at the long-context rates.
pub const LONG_CONTEXT_TOKENS: u64 = 272_000;

/// The rates one request is billed at, US dollars per million tokens, multipliers applied.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rates {
    /// Uncached input.
    pub input: f64,
    /// Cache reads.
    pub cached_input: f64,
    /// Cache writes (the input rate on prefix models: writes cost nothing extra).
    pub cache_write: f64,
    /// Output.
    pub output: f64,
}

impl Rates {
    /// Dollars of `read`, `written` and `uncached` input tokens.
    pub fn input_cost(&self, read: u64, written: u64, uncached: u64) -> f64 {
        (read as f64 * self.cached_input
            + written as f64 * self.cache_write
            + uncached as f64 * self.input)
            / 1_000_000.0
    }
}

/// The service-tier multiplier: `flex` (and `batch`) ½, `priority` 2×, anything else 1×.
pub fn tier_multiplier(service_tier: Option<&str>) -> f64 {
    match service_tier {
        Some("flex" | "batch") => 0.5,
        Some("priority") => 2.0,
        _ => 1.0,
    }
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
            let prices = [row.input, row.cached_input, row.cache_write, row.output];
            if prices.iter().flatten().any(|p| !p.is_finite() || *p < 0.0) {
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

    /// (input, cached input) of `model` when its row was checked and has both figures.
    pub fn priced(&self, model: &str) -> Option<(f64, f64)> {
        let row = self.lookup(model).filter(|r| r.is_checked())?;
        Some((row.input?, row.cached_input?))
    }

    /// The rates a request of `model` with `input_tokens` input tokens at `service_tier` is
    /// billed at, under cache model `kind`; `None` ("price unknown") when the row is missing,
    /// unchecked, or lacks a figure the model needs (a breakpoint model needs `cache_write`).
    pub fn rates(
        &self,
        model: &str,
        kind: super::models::CacheKind,
        input_tokens: u64,
        service_tier: Option<&str>,
    ) -> Option<Rates> {
        use super::models::CacheKind;
        let row = self.lookup(model).filter(|r| r.is_checked())?;
        let (input, cached_input, output) = (row.input?, row.cached_input?, row.output?);
        let cache_write = match kind {
            CacheKind::Prefix => input,
            CacheKind::Breakpoints => row.cache_write?,
        };
        let long = input_tokens > LONG_CONTEXT_TOKENS;
        let (in_x, out_x) = if long { (2.0, 1.5) } else { (1.0, 1.0) };
        let tier = tier_multiplier(service_tier);
        Some(Rates {
            input: input * in_x * tier,
            cached_input: cached_input * in_x * tier,
            cache_write: cache_write * in_x * tier,
            output: output * out_x * tier,
        })
    }
}

impl ModelPrice {
    /// Whether someone checked the row (a `checked` date is set).
    pub fn is_checked(&self) -> bool {
        self.checked
            .as_deref()
            .is_some_and(|d| !d.trim().is_empty())
    }
}

/// Tokens cacheable out of a reusable prefix of `tokens`: nothing below `floor`, then `floor`
/// plus whole `step`s.
pub fn cacheable_steps(tokens: u64, floor: u64, step: u64) -> u64 {
    if tokens < floor {
        0
    } else {
        floor + (tokens - floor) / step.max(1) * step.max(1)
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
    fn cacheable_steps_count_from_the_floor() {
        let steps = |t| cacheable_steps(t, 1024, 128);
        assert_eq!(
            [0, 1023, 1024, 1151, 1152].map(steps),
            [0, 0, 1024, 1024, 1152]
        );
    }

    #[test]
    fn bad_tables_are_rejected() {
        assert!(PriceTable::from_json("{").is_err());
        let negative = r#"{"models":[{"prefix":"x","input":-1,"cached_input":0,"output":0}]}"#;
        let unchecked = r#"{"models":[{"prefix":"x","input":1,"cached_input":0.1,"output":2}]}"#;
        let unchecked = PriceTable::from_json(unchecked).expect("parses");
        assert_eq!(unchecked.priced("x-1"), None);
        assert_eq!(
            PriceTable::from_json(negative),
            Err(PrefixError::Prices(
                "models[0]: prices must be non-negative numbers".to_string()
            ))
        );
    }
}
