//! Providers from a Codex `config.toml`: each `[model_providers.<id>]` table (name, base_url,
//! env_key, http_headers, env_http_headers, query_params, wire_api) becomes a [`Provider`].

use serde::Deserialize;
use std::collections::BTreeMap;

use super::provider::Provider;

#[derive(Debug, Deserialize)]
struct ConfigFile {
    #[serde(default)]
    model_providers: BTreeMap<String, ProviderTable>,
}

#[derive(Debug, Deserialize)]
struct ProviderTable {
    name: Option<String>,
    base_url: Option<String>,
    env_key: Option<String>,
    #[serde(default)]
    http_headers: BTreeMap<String, String>,
    #[serde(default)]
    env_http_headers: BTreeMap<String, String>,
    #[serde(default)]
    query_params: BTreeMap<String, String>,
    wire_api: Option<String>,
}

/// A provider read from a config file, or why one was skipped.
#[derive(Debug, Clone, PartialEq)]
pub enum ImportedProvider {
    /// A Responses provider.
    Provider {
        /// The table id (`model_providers.<id>`).
        id: String,
        /// The provider.
        provider: Provider,
    },
    /// A table promptwire cannot use (for example `wire_api = "chat"`).
    Skipped {
        /// The table id.
        id: String,
        /// Why.
        reason: String,
    },
}

/// Error reading a config file.
#[derive(Debug, thiserror::Error)]
#[error("config.toml: {0}")]
pub struct ConfigError(String);

/// Reads the `[model_providers.*]` tables of a Codex `config.toml`.
pub fn providers_from_config(text: &str) -> Result<Vec<ImportedProvider>, ConfigError> {
    let config: ConfigFile = toml::from_str(text).map_err(|e| ConfigError(e.to_string()))?;
    Ok(config
        .model_providers
        .into_iter()
        .map(|(id, table)| {
            let wire = table.wire_api.as_deref().unwrap_or("responses");
            if wire != "responses" {
                return ImportedProvider::Skipped {
                    id,
                    reason: format!("wire_api = \"{wire}\"; promptwire speaks the Responses API"),
                };
            }
            let Some(base_url) = table.base_url else {
                return ImportedProvider::Skipped {
                    id,
                    reason: "no base_url".to_string(),
                };
            };
            ImportedProvider::Provider {
                provider: Provider {
                    name: table.name.unwrap_or_else(|| id.clone()),
                    base_url,
                    env_key: table.env_key,
                    headers: table.http_headers.into_iter().collect(),
                    query_params: table.query_params.into_iter().collect(),
                    env_headers: table.env_http_headers.into_iter().collect(),
                },
                id,
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_responses_providers_and_skips_others() {
        let text = r#"
model = "gpt-5.5"
[model_providers.azure]
name = "Azure"
base_url = "https://contoso.openai.azure.com/openai"
env_key = "AZURE_OPENAI_API_KEY"
query_params = { api-version = "2025-04-01-preview" }
wire_api = "responses"

[model_providers.ollama]
name = "Ollama"
base_url = "http://localhost:11434/v1"
wire_api = "chat"

[model_providers.proxy]
base_url = "http://127.0.0.1:8080/v1"
http_headers = { "x-team" = "infra" }
env_http_headers = { "x-proxy-token" = "PROXY_TOKEN" }
"#;
        let got = providers_from_config(text).expect("parse");
        assert_eq!(
            got,
            vec![
                ImportedProvider::Provider {
                    id: "azure".to_string(),
                    provider: Provider {
                        name: "Azure".to_string(),
                        base_url: "https://contoso.openai.azure.com/openai".to_string(),
                        env_key: Some("AZURE_OPENAI_API_KEY".to_string()),
                        headers: vec![],
                        query_params: vec![(
                            "api-version".to_string(),
                            "2025-04-01-preview".to_string()
                        )],
                        env_headers: vec![],
                    },
                },
                ImportedProvider::Skipped {
                    id: "ollama".to_string(),
                    reason: "wire_api = \"chat\"; promptwire speaks the Responses API".to_string(),
                },
                ImportedProvider::Provider {
                    id: "proxy".to_string(),
                    provider: Provider {
                        name: "proxy".to_string(),
                        base_url: "http://127.0.0.1:8080/v1".to_string(),
                        env_key: None,
                        headers: vec![("x-team".to_string(), "infra".to_string())],
                        query_params: vec![],
                        env_headers: vec![("x-proxy-token".to_string(), "PROXY_TOKEN".to_string())],
                    },
                },
            ]
        );
        assert!(providers_from_config("model_providers = 3").is_err());
    }
}
