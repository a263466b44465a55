//! The compile target as the workbench shows it: the Prompt's own `compile` record (what the top
//! bar edits, what opening or importing a prompt sets) resolved by
//! [`resolve_target`](crate::core::target::resolve_target) — the same function
//! `promptwire compile` uses — and the compiled columns derived from it, titled with what they
//! show (`Lite · OpenAI · HTTP body`).

use super::settings::{ColumnDialect, ProviderPreset};
use super::state::AppState;
use super::worker::ResolvedColumn;
use crate::core::prompt::{CompileTarget, Dialect};
use crate::core::provider::{Provider, ProviderKind};
use crate::core::rules::CompileRules;
use crate::core::target::{TargetOverrides, resolve_target};

/// Display name of a provider kind.
pub fn kind_label(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::Openai => "OpenAI",
        ProviderKind::Azure => "Azure",
        ProviderKind::Compatible => "compatible",
    }
}

/// The record a provider preset stands for: its kind, and its base URL unless it is the
/// OpenAI/Azure default (a compatible endpoint always names its URL).
pub fn target_with_preset(record: &CompileTarget, preset: &ProviderPreset) -> CompileTarget {
    let kind = preset.provider.kind();
    let default_url = Provider::preset(kind).base_url;
    CompileTarget {
        provider: kind,
        base_url: (kind == ProviderKind::Compatible || preset.provider.base_url != default_url)
            .then(|| preset.provider.base_url.clone()),
        ..record.clone()
    }
}

impl AppState {
    /// The base URL the prompt's provider uses (its own, or its kind's default).
    pub fn effective_base_url(&self) -> String {
        let record = &self.prompt.compile;
        record
            .base_url
            .clone()
            .unwrap_or_else(|| Provider::preset(record.provider).base_url)
    }

    /// The preset matching the prompt's provider kind and base URL, if one does (a compatible
    /// provider without a URL of its own matches none).
    pub fn matching_preset(&self) -> Option<usize> {
        let kind = self.prompt.compile.provider;
        if kind == ProviderKind::Compatible && self.prompt.compile.base_url.is_none() {
            return None;
        }
        let url = self.effective_base_url();
        self.settings
            .providers
            .iter()
            .position(|p| p.provider.kind() == kind && p.provider.base_url == url)
    }

    /// Name of the prompt's provider: a matching preset's label, else its kind.
    pub fn provider_label(&self) -> String {
        match self.matching_preset() {
            Some(i) => self.settings.providers[i].label.clone(),
            None => kind_label(self.prompt.compile.provider).to_string(),
        }
    }

    /// Whether the prompt's request (its dialect; auto follows the model) is Lite.
    pub fn primary_is_lite(&self) -> bool {
        match self.prompt.compile.dialect {
            Dialect::Lite => true,
            Dialect::Standard => false,
            Dialect::Auto => self.catalog.lookup(&self.prompt.model).use_responses_lite,
        }
    }

    /// The rules and the columns, resolved from the prompt's target.
    pub fn resolved_columns(&self) -> Result<(CompileRules, Vec<ResolvedColumn>), String> {
        let record = &self.prompt.compile;
        let primary =
            resolve_target(record, &TargetOverrides::default()).map_err(|e| e.to_string())?;
        let primary_lite = self.primary_is_lite();
        let own_label = self.provider_label();
        let columns = self
            .settings
            .columns
            .iter()
            .map(|c| {
                let lite = match c.dialect {
                    ColumnDialect::Primary => primary_lite,
                    ColumnDialect::Alternate => !primary_lite,
                    ColumnDialect::Standard => false,
                    ColumnDialect::Lite => true,
                };
                let (provider, provider_label) = match c.provider {
                    Some(kind) if kind != record.provider => {
                        (Provider::preset(kind), kind_label(kind).to_string())
                    }
                    _ => (primary.provider.clone(), own_label.clone()),
                };
                let dialect_label = if lite { "Lite" } else { "Standard" };
                ResolvedColumn {
                    label: format!("{dialect_label} · {provider_label} · {}", c.view.label()),
                    provider,
                    dialect: if lite {
                        Dialect::Lite
                    } else {
                        Dialect::Standard
                    },
                    view: c.view,
                }
            })
            .collect();
        Ok((primary.rules, columns))
    }
}
