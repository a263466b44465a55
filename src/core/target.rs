//! The compile target: which dialect, provider (kind and base URL), rules and auth a Prompt is
//! compiled with. A Prompt records them in its `compile` section; the command line and the
//! workbench may override each. [`resolve_target`] is the one place that combines the two, so
//! `promptwire compile` and the GUI produce the same request for the same Prompt.

use super::compile::{CompiledRequest, compile};
use super::error::PromptError;
use super::models::ModelInfo;
use super::prompt::{AuthMode, CompileTarget, Dialect, Prompt};
use super::provider::{Provider, ProviderKind};
use super::rules::CompileRules;

/// Choices that replace what the Prompt records (None: keep the record's).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TargetOverrides {
    /// Standard, Lite, or follow the model.
    pub dialect: Option<Dialect>,
    /// Provider behaviour.
    pub provider: Option<ProviderKind>,
    /// Rules preset name.
    pub rules: Option<String>,
    /// Base URL of the provider.
    pub base_url: Option<String>,
    /// Authentication mode.
    pub auth: Option<AuthMode>,
}

/// Everything besides the prompt and its model that a compile needs.
#[derive(Debug, Clone)]
pub struct ResolvedTarget {
    /// Requested dialect (`Auto` follows the model).
    pub dialect: Dialect,
    /// The provider: the preset of its kind with the chosen base URL.
    pub provider: Provider,
    /// The rules.
    pub rules: CompileRules,
    /// The authentication mode (ChatGPT-style auth compresses OpenAI bodies).
    pub auth: AuthMode,
}

/// Why a target cannot be resolved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// No rules preset has this name.
    #[error("unknown rules preset `{name}` (known: {known})")]
    UnknownRules {
        /// The name asked for.
        name: String,
        /// The preset names.
        known: String,
    },
}

/// Combines the Prompt's `record` with `overrides`: each override wins; the base URL is the
/// override's, else the record's, else the provider preset's.
pub fn resolve_target(
    record: &CompileTarget,
    overrides: &TargetOverrides,
) -> Result<ResolvedTarget, TargetError> {
    let rules_name = overrides.rules.as_deref().unwrap_or(&record.rules);
    let rules = CompileRules::preset(rules_name).ok_or_else(|| TargetError::UnknownRules {
        name: rules_name.to_string(),
        known: CompileRules::PRESETS.join(", "),
    })?;
    let mut provider = Provider::preset(overrides.provider.unwrap_or(record.provider));
    if let Some(url) = overrides.base_url.as_ref().or(record.base_url.as_ref()) {
        provider.base_url = url.clone();
    }
    if let Some(env) = &record.api_key_env {
        provider.env_key = Some(env.clone());
    }
    provider.headers.extend(record.headers.iter().cloned());
    Ok(ResolvedTarget {
        dialect: overrides.dialect.unwrap_or(record.dialect),
        provider,
        rules,
        auth: overrides.auth.unwrap_or(record.auth),
    })
}

/// Compiles `prompt` for `target` (the prompt is copied only when the target's auth differs
/// from the one it records).
pub fn compile_for(
    prompt: &Prompt,
    model: &ModelInfo,
    target: &ResolvedTarget,
) -> Result<CompiledRequest, PromptError> {
    if prompt.compile.auth == target.auth {
        return compile(
            prompt,
            model,
            &target.provider,
            target.dialect,
            &target.rules,
        );
    }
    let mut prompt = prompt.clone();
    prompt.compile.auth = target.auth;
    compile(
        &prompt,
        model,
        &target.provider,
        target.dialect,
        &target.rules,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> CompileTarget {
        CompileTarget {
            dialect: Dialect::Lite,
            rules: "seed".to_string(),
            provider: ProviderKind::Compatible,
            base_url: Some("http://127.0.0.1:9/v1".to_string()),
            auth: AuthMode::Chatgpt,
            ..CompileTarget::default()
        }
    }

    #[test]
    fn the_record_is_used_when_nothing_overrides_it() {
        let target = resolve_target(&record(), &TargetOverrides::default()).expect("target");
        assert_eq!(target.dialect, Dialect::Lite);
        assert_eq!(target.rules.name, "seed");
        assert_eq!(
            target.provider,
            Provider {
                base_url: "http://127.0.0.1:9/v1".to_string(),
                ..Provider::preset(ProviderKind::Compatible)
            }
        );
        assert_eq!(target.auth, AuthMode::Chatgpt);
    }

    #[test]
    fn each_override_wins() {
        let overrides = TargetOverrides {
            dialect: Some(Dialect::Standard),
            provider: Some(ProviderKind::Openai),
            rules: Some("codex-0.169".to_string()),
            base_url: Some("https://example.test/v1".to_string()),
            auth: Some(AuthMode::ApiKey),
        };
        let target = resolve_target(&record(), &overrides).expect("target");
        assert_eq!(target.dialect, Dialect::Standard);
        assert_eq!(target.rules.name, "codex-0.169");
        assert_eq!(
            target.provider,
            Provider {
                base_url: "https://example.test/v1".to_string(),
                ..Provider::preset(ProviderKind::Openai)
            }
        );
        assert_eq!(target.auth, AuthMode::ApiKey);
    }

    #[test]
    fn an_unknown_rules_name_is_an_error_naming_the_presets() {
        let overrides = TargetOverrides {
            rules: Some("nope".to_string()),
            ..TargetOverrides::default()
        };
        let err = resolve_target(&record(), &overrides).expect_err("unknown rules");
        assert_eq!(
            err.to_string(),
            format!(
                "unknown rules preset `nope` (known: {})",
                CompileRules::PRESETS.join(", ")
            )
        );
    }
}
