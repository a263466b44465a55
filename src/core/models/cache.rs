//! The cache model of a model (WIRE_SPEC §19.1): how the server caches prompts for it, as data.
//!
//! - [`CacheModel::Prefix`] — models before the GPT-5.6 family (gpt-5.5, gpt-5.4, gpt-4.1, …):
//!   the longest matching prefix is reused from 1,024 tokens in 128-token steps, writes cost
//!   nothing extra, retention `in_memory` (5–10 idle minutes; the lower bound is used) or `24h`.
//! - [`CacheModel::Breakpoints`] — the GPT-5.6 family and later (every `gpt-5.6-*`, `gpt-6*`,
//!   the models Codex sends as Responses Lite): written and read at breakpoints only (an implicit
//!   one at the latest user or tool message, explicit `prompt_cache_breakpoint`s on content
//!   blocks), at most 4 writes per request, the latest 80 breakpoints considered, no fallback to
//!   a shorter unmarked prefix, TTL from `prompt_cache_options.ttl` (default 30 min), writes
//!   billed at 1.25× input.
//!
//! A slug is given its model by family ([`CacheModel::for_model`]): `gpt-X.Y…` with version 5.6
//! or later is `breakpoints`; everything else — older GPT families, `codex-*`, unknown slugs —
//! gets the stated default, `prefix`, the documented behaviour of every model before GPT-5.6.
//! [`CacheModels`] holds per-slug-prefix overrides (a JSON file like the catalog's) for a model
//! the family rule gets wrong.

use serde::{Deserialize, Serialize};

/// Which of the two cache behaviours, by name (`"prefix"` / `"breakpoints"` on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheKind {
    /// Longest common prefix, 1,024-token floor, 128-token steps, writes free.
    Prefix,
    /// Breakpoints only, writes at 1.25× input.
    Breakpoints,
}

impl CacheKind {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Prefix => "prefix",
            Self::Breakpoints => "breakpoints",
        }
    }
}

/// A cache model with its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CacheModel {
    /// Models before the GPT-5.6 family.
    Prefix {
        /// Prompts shorter than this cache nothing (1,024).
        floor_tokens: u64,
        /// Hits are counted in steps of this many tokens past the floor (128).
        step_tokens: u64,
        /// Retention when the request asks for none (`in_memory`: 5 min, the lower bound).
        default_retention_secs: u64,
    },
    /// The GPT-5.6 family and later.
    Breakpoints {
        /// A breakpoint shorter than this is not written (1,024, WIRE_SPEC §19).
        floor_tokens: u64,
        /// Breakpoints written per request at most, the implicit one included (4).
        max_writes: usize,
        /// Latest breakpoints considered for a match, per route (80).
        considered: usize,
        /// TTL when `prompt_cache_options.ttl` is not sent (30 min).
        default_ttl_secs: u64,
        /// Price of a written token relative to an uncached input token (1.25).
        write_multiplier: f64,
    },
}

/// The prefix model's documented parameters.
pub const PREFIX: CacheModel = CacheModel::Prefix {
    floor_tokens: 1024,
    step_tokens: 128,
    default_retention_secs: 5 * 60,
};

/// The breakpoint model's documented parameters.
pub const BREAKPOINTS: CacheModel = CacheModel::Breakpoints {
    floor_tokens: 1024,
    max_writes: 4,
    considered: 80,
    default_ttl_secs: 30 * 60,
    write_multiplier: 1.25,
};

impl CacheModel {
    /// The documented model of a kind.
    pub fn of_kind(kind: CacheKind) -> Self {
        match kind {
            CacheKind::Prefix => PREFIX,
            CacheKind::Breakpoints => BREAKPOINTS,
        }
    }

    /// Its kind.
    pub fn kind(&self) -> CacheKind {
        match self {
            Self::Prefix { .. } => CacheKind::Prefix,
            Self::Breakpoints { .. } => CacheKind::Breakpoints,
        }
    }

    /// The cache model of a requested slug, by family: `gpt-X.Y…` at version 5.6 or later
    /// (`gpt-5.6-sol`, `gpt-6`, `gpt-6.1-terra`, `openai/gpt-6-sol`) is `breakpoints`; anything
    /// else gets the stated default, `prefix`.
    pub fn for_model(slug: &str) -> Self {
        Self::of_kind(family_kind(slug))
    }

    /// Retention in seconds when the request asks for none.
    pub fn default_ttl_secs(&self) -> u64 {
        match self {
            Self::Prefix {
                default_retention_secs,
                ..
            } => *default_retention_secs,
            Self::Breakpoints {
                default_ttl_secs, ..
            } => *default_ttl_secs,
        }
    }

    /// Tokens below which nothing is cached.
    pub fn floor_tokens(&self) -> u64 {
        match self {
            Self::Prefix { floor_tokens, .. } | Self::Breakpoints { floor_tokens, .. } => {
                *floor_tokens
            }
        }
    }
}

/// The family rule of [`CacheModel::for_model`].
pub fn family_kind(slug: &str) -> CacheKind {
    // `ns/model`: the namespace does not change the family.
    let name = slug.rsplit('/').next().unwrap_or(slug);
    let Some(version) = name.strip_prefix("gpt-") else {
        return CacheKind::Prefix;
    };
    let digits = |s: &str| -> Option<u64> {
        let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
        s[..end].parse().ok()
    };
    let Some(major) = digits(version) else {
        return CacheKind::Prefix;
    };
    let rest = &version[major.to_string().len()..];
    let minor = rest.strip_prefix('.').and_then(digits).unwrap_or(0);
    if (major, minor) >= (5, 6) {
        CacheKind::Breakpoints
    } else {
        CacheKind::Prefix
    }
}

/// One override row: slugs starting with `prefix` have `cache_model`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheModelRow {
    /// Slug prefix (longest match wins).
    pub prefix: String,
    /// The model for those slugs.
    pub cache_model: CacheKind,
}

/// Cache models by slug prefix over the family rule: `{"models": [{"prefix", "cache_model"}]}`
/// (the catalog's way of being edited).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheModels {
    /// Override rows.
    #[serde(default)]
    pub models: Vec<CacheModelRow>,
}

/// A cache-model file that does not parse.
#[derive(Debug, thiserror::Error)]
#[error("cache models: {0}")]
pub struct CacheModelsError(String);

impl CacheModels {
    /// Parses an override file.
    pub fn from_json(text: &str) -> Result<Self, CacheModelsError> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| CacheModelsError(e.to_string()))?;
        crate::core::json::from_value_with_path(value).map_err(CacheModelsError)
    }

    /// The model of `slug`: the longest matching override, else the family rule.
    pub fn lookup(&self, slug: &str) -> CacheModel {
        self.models
            .iter()
            .filter(|row| !row.prefix.is_empty() && slug.starts_with(&row.prefix))
            .max_by_key(|row| row.prefix.len())
            .map_or_else(
                || CacheModel::for_model(slug),
                |row| CacheModel::of_kind(row.cache_model),
            )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families() {
        let kinds: Vec<(&str, CacheKind)> = [
            "gpt-5.6-sol",
            "gpt-5.6",
            "gpt-6",
            "gpt-6-sol",
            "gpt-6.2-astra",
            "openai/gpt-6.1-terra",
            "gpt-10",
            "gpt-5.5",
            "gpt-5.4-mini",
            "gpt-5",
            "gpt-4.1",
            "codex-auto-review",
            "gpt-daybreak-blue-latest",
            "o3",
        ]
        .into_iter()
        .map(|s| (s, family_kind(s)))
        .collect();
        use CacheKind::{Breakpoints as B, Prefix as P};
        assert_eq!(
            kinds,
            vec![
                ("gpt-5.6-sol", B),
                ("gpt-5.6", B),
                ("gpt-6", B),
                ("gpt-6-sol", B),
                ("gpt-6.2-astra", B),
                ("openai/gpt-6.1-terra", B),
                ("gpt-10", B),
                ("gpt-5.5", P),
                ("gpt-5.4-mini", P),
                ("gpt-5", P),
                ("gpt-4.1", P),
                ("codex-auto-review", P),
                ("gpt-daybreak-blue-latest", P),
                ("o3", P),
            ]
        );
    }

    #[test]
    fn overrides_win_by_longest_prefix() {
        let table = CacheModels::from_json(
            r#"{"models":[{"prefix":"gpt-daybreak","cache_model":"breakpoints"},
                {"prefix":"gpt-daybreak-red","cache_model":"prefix"}]}"#,
        )
        .expect("parses");
        assert_eq!(table.lookup("gpt-daybreak-blue-latest"), BREAKPOINTS);
        assert_eq!(table.lookup("gpt-daybreak-red-latest"), PREFIX);
        assert_eq!(table.lookup("gpt-6-sol"), BREAKPOINTS);
        assert!(
            CacheModels::from_json(r#"{"models":[{"prefix":"x","cache_model":"lru"}]}"#).is_err()
        );
    }
}
