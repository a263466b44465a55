//! `ModelInfo` and the model catalog: the capabilities that change what a compiled request
//! contains (Lite, verbosity, summaries, parallel tools, default effort, service tiers), with
//! Codex's longest-prefix slug lookup and unknown-slug fallback (WIRE_SPEC §7). A catalog file is
//! ours (`assets/models.json`), what `codex debug models` prints, or Codex's cache
//! ([`CODEX_CACHE_FILE`] in `$CODEX_HOME`); unknown fields are ignored, and catalogs merge
//! ([`ModelCatalog::merge`]) reporting the models added or changed.

mod shape;

use serde::{Deserialize, Serialize};

/// Codex's cached catalog, in `$CODEX_HOME` (`{"fetched_at", "etag", "client_version",
/// "models": […]}`: the same model entries as `codex debug models` prints).
pub const CODEX_CACHE_FILE: &str = "models_cache.json";

/// The catalog bundled with promptwire (`assets/models.json`).
pub const BUNDLED_CATALOG_JSON: &str = include_str!("../../assets/models.json");

fn yes() -> bool {
    true
}

/// Capabilities of one model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelInfo {
    /// Catalog slug (a prefix of the requested model name).
    pub slug: String,
    /// Name shown in pickers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// Requests use Responses Lite (§6).
    #[serde(default)]
    pub use_responses_lite: bool,
    /// Whether the model takes `reasoning.summary` (the seed rules send a summary only then).
    #[serde(default = "yes")]
    pub supports_reasoning_summaries: bool,
    /// B-era gate for `reasoning.summary`.
    #[serde(default = "yes")]
    pub supports_reasoning_summary_parameter: bool,
    /// `text.verbosity` is sent only when true.
    #[serde(default)]
    pub support_verbosity: bool,
    /// Verbosity used when the prompt sets none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_verbosity: Option<String>,
    /// Effort used when the prompt sets none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_reasoning_level: Option<String>,
    /// Summary used when the prompt sets none (`none` omits it); absent means `auto`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_reasoning_summary: Option<String>,
    /// Efforts the model accepts (Codex's catalogs: `supported_reasoning_levels`, objects with
    /// an `effort`).
    #[serde(
        default,
        alias = "supported_reasoning_levels",
        deserialize_with = "shape::effort_ids"
    )]
    pub supported_reasoning_efforts: Vec<String>,
    /// Default for `parallel_tool_calls`. Absent means true: Codex's own catalogs (0.169 on) no
    /// longer carry the field, and their clients ask for parallel calls.
    #[serde(default = "yes")]
    pub supports_parallel_tool_calls: bool,
    /// Context window in tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    /// Largest context window in tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_context_window: Option<u64>,
    /// Service tier ids the model accepts (`priority`, `flex`); Codex's catalogs list objects
    /// (`{"id": "priority", "name": "Fast", …}`).
    #[serde(
        default,
        alias = "service_tier_ids",
        deserialize_with = "shape::service_tier_ids"
    )]
    pub service_tiers: Vec<String>,
    /// Tier the client would pick by default (informational; not sent unless chosen).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_service_tier: Option<String>,
    /// Where this entry came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

impl ModelInfo {
    /// Fallback metadata for a slug no catalog entry matches (§7, "Unknown slug fallback").
    pub fn fallback(slug: &str) -> Self {
        Self {
            slug: slug.to_string(),
            display_name: None,
            use_responses_lite: false,
            supports_reasoning_summaries: false,
            supports_reasoning_summary_parameter: true,
            support_verbosity: false,
            default_verbosity: None,
            default_reasoning_level: None,
            default_reasoning_summary: None,
            supported_reasoning_efforts: Vec::new(),
            supports_parallel_tool_calls: false,
            context_window: Some(272_000),
            max_context_window: Some(272_000),
            service_tiers: Vec::new(),
            default_service_tier: None,
            source: Some("fallback".to_string()),
        }
    }

    /// True for the unknown-slug fallback.
    pub fn is_fallback(&self) -> bool {
        self.source.as_deref() == Some("fallback")
    }

    /// True when every field but `source` is equal.
    fn same_capabilities(&self, other: &ModelInfo) -> bool {
        let mut other = other.clone();
        other.source.clone_from(&self.source);
        *self == other
    }
}

/// What [`ModelCatalog::merge`] did: slugs of the models it added and of those it changed, in
/// the incoming catalog's order.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct CatalogMerge {
    /// Slugs that were not in the catalog.
    pub added: Vec<String>,
    /// Slugs that were there with different capabilities (now replaced).
    pub changed: Vec<String>,
}

/// Error loading a catalog file.
#[derive(Debug, thiserror::Error)]
#[error("model catalog: {0}")]
pub struct CatalogError(String);

/// A list of models with Codex's lookup rules.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelCatalog {
    /// The models, in display order.
    pub models: Vec<ModelInfo>,
}

impl ModelCatalog {
    /// The catalog bundled in `assets/models.json`.
    pub fn bundled() -> Self {
        // The bundled file is checked by a unit test; an error here is a build defect.
        Self::from_json(BUNDLED_CATALOG_JSON).unwrap_or(Self { models: Vec::new() })
    }

    /// Parses a catalog file: `{"models":[…]}` in our shape, as `codex debug models` prints it,
    /// or Codex's cache file; unknown fields are ignored. An error names the JSON path of the
    /// problem (`models[0].service_tiers[0]: …`).
    pub fn from_json(text: &str) -> Result<Self, CatalogError> {
        crate::core::json::from_value_with_path::<Self>(
            serde_json::from_str(text).map_err(|e| CatalogError(e.to_string()))?,
        )
        .map_err(CatalogError)
    }

    /// Looks a requested model name up: the longest catalog slug that is a prefix of it; else,
    /// for `ns/model` with `ns` of `[A-Za-z0-9_-]+`, the same on `model`; else the fallback.
    /// The wire `model` stays the requested string whatever matched.
    pub fn lookup(&self, requested: &str) -> ModelInfo {
        if let Some(found) = self.longest_prefix(requested) {
            return found.clone();
        }
        if let Some((ns, rest)) = requested.split_once('/') {
            let ns_ok = !ns.is_empty()
                && ns
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if ns_ok && let Some(found) = self.longest_prefix(rest) {
                return found.clone();
            }
        }
        ModelInfo::fallback(requested)
    }

    /// Merges `incoming` into this catalog: a model with a new slug is appended; one whose slug
    /// is already here replaces the entry when any capability differs (`source` is not
    /// compared). Entries without a `source` are given `source`. Returns what was added and
    /// changed.
    pub fn merge(&mut self, incoming: ModelCatalog, source: &str) -> CatalogMerge {
        let mut report = CatalogMerge::default();
        for mut model in incoming.models {
            if model.source.is_none() {
                model.source = Some(source.to_string());
            }
            match self.models.iter_mut().find(|m| m.slug == model.slug) {
                Some(existing) if existing.same_capabilities(&model) => {}
                Some(existing) => {
                    report.changed.push(model.slug.clone());
                    *existing = model;
                }
                None => {
                    report.added.push(model.slug.clone());
                    self.models.push(model);
                }
            }
        }
        report
    }

    fn longest_prefix(&self, requested: &str) -> Option<&ModelInfo> {
        self.models
            .iter()
            .filter(|m| !m.slug.is_empty() && requested.starts_with(&m.slug))
            .max_by_key(|m| m.slug.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_catalog_parses() {
        let catalog = ModelCatalog::from_json(BUNDLED_CATALOG_JSON).expect("bundled catalog");
        assert_eq!(catalog.models.len(), 18);
    }
}
