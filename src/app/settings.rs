//! Persisted settings and the small value types they are made of: compiled columns (dialect ×
//! provider × view), provider presets, theme; and what an export writes.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::core::provider::{Provider, ProviderKind};

/// Which request shape a compiled column shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ColumnDialect {
    /// The prompt's dialect (auto: the model's) — the request Send would send.
    Primary,
    /// The other dialect, for comparison.
    Alternate,
    /// Always standard.
    Standard,
    /// Always Responses Lite.
    Lite,
}

/// What a compiled column shows of the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ViewKind {
    /// The HTTP body.
    Body,
    /// The WebSocket `response.create` frame.
    WsFrame,
    /// The request headers.
    Headers,
}

impl ViewKind {
    /// All kinds, in menu order.
    pub const ALL: [ViewKind; 3] = [Self::Body, Self::WsFrame, Self::Headers];

    /// Short label.
    pub fn label(self) -> &'static str {
        match self {
            Self::Body => "HTTP body",
            Self::WsFrame => "WebSocket frame",
            Self::Headers => "Headers",
        }
    }
}

/// One compiled column: dialect × provider × view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Column {
    /// Standard or Lite.
    pub dialect: ColumnDialect,
    /// A provider kind, or `None` for the prompt's provider (the top bar's).
    pub provider: Option<ProviderKind>,
    /// Body, frame or headers.
    pub view: ViewKind,
}

/// The default columns: the request's body beside the other dialect's, for the chosen provider.
pub fn default_columns() -> Vec<Column> {
    vec![
        Column {
            dialect: ColumnDialect::Primary,
            provider: None,
            view: ViewKind::Body,
        },
        Column {
            dialect: ColumnDialect::Alternate,
            provider: None,
            view: ViewKind::Body,
        },
    ]
}

/// A named provider configuration the user can pick.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProviderPreset {
    /// Name in the picker.
    pub label: String,
    /// The provider.
    pub provider: Provider,
}

/// The built-in provider presets: OpenAI, Azure, Ollama, LM Studio, vLLM, custom.
pub fn builtin_providers() -> Vec<ProviderPreset> {
    let compatible = |label: &str, url: &str| ProviderPreset {
        label: label.to_string(),
        provider: Provider {
            name: label.to_string(),
            base_url: url.to_string(),
            ..Provider::preset(ProviderKind::Compatible)
        },
    };
    vec![
        ProviderPreset {
            label: "OpenAI".to_string(),
            provider: Provider::preset(ProviderKind::Openai),
        },
        ProviderPreset {
            label: "Azure".to_string(),
            provider: Provider::preset(ProviderKind::Azure),
        },
        compatible("Ollama", "http://localhost:11434/v1"),
        compatible("LM Studio", "http://localhost:1234/v1"),
        compatible("vLLM", "http://localhost:8000/v1"),
        ProviderPreset {
            label: "Custom".to_string(),
            provider: Provider {
                name: "Custom".to_string(),
                base_url: "http://127.0.0.1:8080/v1".to_string(),
                env_key: Some("CUSTOM_API_KEY".to_string()),
                ..Provider::preset(ProviderKind::Compatible)
            },
        },
    ]
}

/// Light, dark, or follow the system.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum ThemeChoice {
    /// Follow the operating system.
    #[default]
    System,
    /// Light.
    Light,
    /// Dark.
    Dark,
}

/// What is persisted between runs (window state is persisted by eframe).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// Provider presets (built-ins plus imported ones): picking one sets the prompt's provider
    /// kind and base URL.
    pub providers: Vec<ProviderPreset>,
    /// Compiled columns.
    pub columns: Vec<Column>,
    /// Show compiled JSON as a tree instead of text.
    pub tree_view: bool,
    /// Theme.
    pub theme: ThemeChoice,
    /// Recently opened Prompt files.
    pub recent: Vec<PathBuf>,
    /// Limits on what comes back (sends and recordings).
    pub limits: super::limits::Limits,
    /// Pane sizes, collapsed panes and the maximised one.
    pub panes: super::panes::PaneLayout,
    /// The Record panel's upstream CA file: a PEM file of roots trusted for the proxy's
    /// upstream besides the web's (`record --upstream-ca`); `None`: the web's roots only.
    pub upstream_ca: Option<PathBuf>,
    /// OpenTelemetry export: the collector, live export from the proxy, content.
    pub otel: super::otel::OtelSettings,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            providers: builtin_providers(),
            columns: default_columns(),
            tree_view: false,
            theme: ThemeChoice::System,
            recent: Vec::new(),
            limits: super::limits::Limits::default(),
            panes: super::panes::PaneLayout::default(),
            upstream_ca: None,
            otel: super::otel::OtelSettings::default(),
        }
    }
}

/// What an export writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportKind {
    /// The compiled body as `.json` (its exact bytes).
    Json,
    /// A HAR 1.2 file of the request.
    Har,
    /// The Prompt file itself.
    Prompt,
    /// A stored request's exact body (the column is the row of the open session).
    StoredBody,
    /// A stored request as HAR 1.2 (the column is the row of the open session).
    StoredHar,
}

impl ExportKind {
    /// The file name suggested for this export.
    pub fn default_file_name(self) -> &'static str {
        match self {
            Self::Json => "body.json",
            Self::Har => "request.har",
            Self::Prompt => "prompt.json",
            Self::StoredBody => "request-body.json",
            Self::StoredHar => "request.har",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_upstream_ca_file_is_persisted_and_older_settings_have_none() {
        let settings = Settings {
            upstream_ca: Some(PathBuf::from("/etc/corp/ca.pem")),
            ..Settings::default()
        };
        let saved = serde_json::to_string(&settings).expect("save");
        let restored: Settings = serde_json::from_str(&saved).expect("restore");
        assert_eq!(restored, settings);
        let older: Settings = serde_json::from_str(r#"{"tree_view": true}"#).expect("older");
        assert_eq!(
            (older.upstream_ca, older.tree_view),
            (None::<PathBuf>, true)
        );
    }
}
