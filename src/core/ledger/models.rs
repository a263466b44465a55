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

/// The prefix model's parameters: the documented floor and steps; the retention as measured on
/// OpenAI's own figures for 34 real Codex sessions (documented `in_memory`: 5–10 idle minutes;
/// measured: 92 of 112 requests after 1–10 idle minutes and 9 of 14 after 10–30 read the whole
/// shared prefix, none of 7 after more than 30).
pub const PREFIX: CacheModel = CacheModel::Prefix {
    floor_tokens: 1024,
    step_tokens: 128,
    default_retention_secs: 30 * 60,
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

/// One row of a cache-models file: slugs starting with `prefix` have `cache_model`, with the
/// documented parameters of that kind unless the row sets its own (the field names of
/// [`CacheModel`]; a parameter of the other kind is an error).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawRow")]
pub struct CacheModelRow {
    /// Slug prefix (longest match wins).
    pub prefix: String,
    /// The model for those slugs.
    pub cache_model: CacheKind,
    /// Its parameters (the kind's documented ones where the row sets none).
    #[serde(skip)]
    pub model: Option<CacheModel>,
}

impl CacheModelRow {
    /// A row with the documented parameters of `cache_model`.
    pub fn new(prefix: impl Into<String>, cache_model: CacheKind) -> Self {
        Self {
            prefix: prefix.into(),
            cache_model,
            model: None,
        }
    }

    /// The cache model the row gives its slugs.
    pub fn cache_model(&self) -> CacheModel {
        self.model
            .unwrap_or_else(|| CacheModel::of_kind(self.cache_model))
    }
}

/// A row as written in the file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRow {
    prefix: String,
    cache_model: CacheKind,
    floor_tokens: Option<u64>,
    step_tokens: Option<u64>,
    default_retention_secs: Option<u64>,
    max_writes: Option<usize>,
    considered: Option<usize>,
    default_ttl_secs: Option<u64>,
    write_multiplier: Option<f64>,
}

impl TryFrom<RawRow> for CacheModelRow {
    type Error = String;

    fn try_from(raw: RawRow) -> Result<Self, String> {
        if raw.prefix.is_empty() {
            return Err("`prefix` is empty (it would match every slug)".to_string());
        }
        let other = |field: &str, kind: &str| {
            Err(format!(
                "`{field}` is a parameter of `{kind}` rows, not of `{}` (row `{}`)",
                raw.cache_model.as_str(),
                raw.prefix
            ))
        };
        let positive = |field: &str, value: Option<u64>| match value {
            Some(0) => Err(format!("`{field}` must be above 0 (row `{}`)", raw.prefix)),
            _ => Ok(()),
        };
        let model = match CacheModel::of_kind(raw.cache_model) {
            CacheModel::Prefix {
                floor_tokens,
                step_tokens,
                default_retention_secs,
            } => {
                if raw.max_writes.is_some() {
                    return other("max_writes", "breakpoints");
                }
                if raw.considered.is_some() {
                    return other("considered", "breakpoints");
                }
                if raw.default_ttl_secs.is_some() {
                    return other("default_ttl_secs", "breakpoints");
                }
                if raw.write_multiplier.is_some() {
                    return other("write_multiplier", "breakpoints");
                }
                positive("step_tokens", raw.step_tokens)?;
                positive("default_retention_secs", raw.default_retention_secs)?;
                CacheModel::Prefix {
                    floor_tokens: raw.floor_tokens.unwrap_or(floor_tokens),
                    step_tokens: raw.step_tokens.unwrap_or(step_tokens),
                    default_retention_secs: raw
                        .default_retention_secs
                        .unwrap_or(default_retention_secs),
                }
            }
            CacheModel::Breakpoints {
                floor_tokens,
                max_writes,
                considered,
                default_ttl_secs,
                write_multiplier,
            } => {
                if raw.step_tokens.is_some() {
                    return other("step_tokens", "prefix");
                }
                if raw.default_retention_secs.is_some() {
                    return other("default_retention_secs", "prefix");
                }
                positive("max_writes", raw.max_writes.map(|n| n as u64))?;
                positive("considered", raw.considered.map(|n| n as u64))?;
                positive("default_ttl_secs", raw.default_ttl_secs)?;
                if raw
                    .write_multiplier
                    .is_some_and(|m| !m.is_finite() || m < 0.0)
                {
                    return Err(format!(
                        "`write_multiplier` must be a number from 0 (row `{}`)",
                        raw.prefix
                    ));
                }
                CacheModel::Breakpoints {
                    floor_tokens: raw.floor_tokens.unwrap_or(floor_tokens),
                    max_writes: raw.max_writes.unwrap_or(max_writes),
                    considered: raw.considered.unwrap_or(considered),
                    default_ttl_secs: raw.default_ttl_secs.unwrap_or(default_ttl_secs),
                    write_multiplier: raw.write_multiplier.unwrap_or(write_multiplier),
                }
            }
        };
        Ok(Self {
            prefix: raw.prefix,
            cache_model: raw.cache_model,
            model: Some(model),
        })
    }
}

/// Cache models by slug prefix over the family rule (the built-in table, which has no rows):
/// `{"models": [{"prefix", "cache_model", …parameters}]}` — README, "The cache model".
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheModels {
    /// Override rows.
    #[serde(default)]
    pub models: Vec<CacheModelRow>,
}

/// A cache-models file that does not parse or holds a bad row: where, and what.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
pub struct CacheModelsError {
    /// 1-based line of the error.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong (with the JSON path when there is one).
    pub message: String,
}

impl CacheModels {
    /// Parses a cache-models file; any error rejects the whole file.
    pub fn from_json(text: &str) -> Result<Self, CacheModelsError> {
        let mut de = serde_json::Deserializer::from_str(text);
        let where_what = |path: String, inner: serde_json::Error| {
            let (line, column) = (inner.line(), inner.column());
            let text = inner.to_string();
            let suffix = format!(" at line {line} column {column}");
            let text = text.strip_suffix(&suffix).unwrap_or(&text).to_string();
            let message = if path.is_empty() || path == "." {
                text
            } else {
                format!("{path}: {text}")
            };
            CacheModelsError {
                line,
                column,
                message,
            }
        };
        let models: Self = serde_path_to_error::deserialize(&mut de).map_err(|err| {
            let path = err.path().to_string();
            where_what(path, err.into_inner())
        })?;
        de.end().map_err(|e| where_what(String::new(), e))?;
        Ok(models)
    }

    /// The model of `slug`: the longest matching row, else the family rule.
    pub fn lookup(&self, slug: &str) -> CacheModel {
        self.models
            .iter()
            .filter(|row| !row.prefix.is_empty() && slug.starts_with(&row.prefix))
            .max_by_key(|row| row.prefix.len())
            .map_or_else(|| CacheModel::for_model(slug), CacheModelRow::cache_model)
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

    #[test]
    fn rows_set_parameters_and_bad_rows_say_where() {
        let table = CacheModels::from_json(
            r#"{"models":[{"prefix":"gpt-7","cache_model":"breakpoints","default_ttl_secs":43200},
                {"prefix":"o3","cache_model":"prefix","step_tokens":64}]}"#,
        )
        .expect("parses");
        assert_eq!(
            (table.lookup("gpt-7-nova"), table.lookup("o3-mini")),
            (
                CacheModel::Breakpoints {
                    floor_tokens: 1024,
                    max_writes: 4,
                    considered: 80,
                    default_ttl_secs: 43_200,
                    write_multiplier: 1.25,
                },
                CacheModel::Prefix {
                    floor_tokens: 1024,
                    step_tokens: 64,
                    default_retention_secs: 1800,
                }
            )
        );
        let errors: Vec<Result<CacheModels, CacheModelsError>> = [
            "{\"models\": [\n  {\"prefix\": \"a\", \"cache_model\": \"prefix\", \"max_writes\": 2}\n]}",
            "{\"models\": [\n  {\"prefix\": \"a\", \"cache_model\": \"lru\"}]}",
            "{\"models\": [\n  {\"prefix\": \"a\", \"cache_model\": \"prefix\", \"colour\": 1}]}",
            "{\"models\": [\n  {\"prefix\": \"a\",\n   \"cache_model\": \"prefix\"},]}",
        ]
        .iter()
        .map(|t| CacheModels::from_json(t))
        .collect();
        let e = |line, column, message: &str| {
            Err(CacheModelsError {
                line,
                column,
                message: message.to_string(),
            })
        };
        assert_eq!(
            errors,
            vec![
                // A bad row is reported where the row ends (it names the row).
                e(
                    3,
                    1,
                    "models[0]: `max_writes` is a parameter of `breakpoints` rows, not of `prefix` (row `a`)"
                ),
                e(
                    2,
                    38,
                    "models[0].cache_model: unknown variant `lru`, expected `prefix` or `breakpoints`"
                ),
                e(
                    2,
                    51,
                    "models[0].colour: unknown field `colour`, expected one of `prefix`, `cache_model`, `floor_tokens`, `step_tokens`, `default_retention_secs`, `max_writes`, `considered`, `default_ttl_secs`, `write_multiplier`"
                ),
                e(3, 29, "models: trailing comma"),
            ]
        );
    }
}
