//! `AppState`: everything the workbench shows — the prompt being edited, the compiled views, the
//! persisted settings, and the small per-widget state of forms and dialogs. Mutated only through
//! [`AppState::handle`] (see `command.rs`), once per frame.

use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::worker::{CompileWorker, ViewResult};
use crate::core::models::ModelCatalog;
use crate::core::prompt::{Dialect, Prompt};
use crate::core::provider::{Provider, ProviderKind};

/// Which request shape a compiled column shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ColumnDialect {
    /// The dialect of the top bar (auto: the model's) — the request Send would send.
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
    /// A provider kind, or `None` for the provider chosen in the top bar.
    pub provider: Option<ProviderKind>,
    /// Body, frame or headers.
    pub view: ViewKind,
}

impl Column {
    /// Header text, e.g. `Lite · Azure · HTTP body`.
    pub fn label(&self, chosen: &ProviderPreset) -> String {
        let dialect = match self.dialect {
            ColumnDialect::Primary => "Request",
            ColumnDialect::Alternate => "Other dialect",
            ColumnDialect::Standard => "Standard",
            ColumnDialect::Lite => "Lite",
        };
        let provider = match self.provider {
            None => chosen.label.clone(),
            Some(ProviderKind::Openai) => "OpenAI".to_string(),
            Some(ProviderKind::Azure) => "Azure".to_string(),
            Some(ProviderKind::Compatible) => "compatible".to_string(),
        };
        format!("{dialect} · {provider} · {}", self.view.label())
    }
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
    /// Provider presets (built-ins plus imported/edited ones).
    pub providers: Vec<ProviderPreset>,
    /// Index of the chosen provider.
    pub provider: usize,
    /// Dialect override for the top bar (`auto` follows the model).
    pub dialect: Dialect,
    /// Rules preset name.
    pub rules: String,
    /// Compiled columns.
    pub columns: Vec<Column>,
    /// Show compiled JSON as a tree instead of text.
    pub tree_view: bool,
    /// Theme.
    pub theme: ThemeChoice,
    /// Recently opened Prompt files.
    pub recent: Vec<PathBuf>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            providers: builtin_providers(),
            provider: 0,
            dialect: Dialect::Auto,
            rules: "codex-0.169".to_string(),
            columns: default_columns(),
            tree_view: false,
            theme: ThemeChoice::System,
            recent: Vec::new(),
        }
    }
}

impl Settings {
    /// The chosen provider preset (the first one if the index is stale).
    pub fn chosen_provider(&self) -> ProviderPreset {
        self.providers
            .get(self.provider)
            .or_else(|| self.providers.first())
            .cloned()
            .unwrap_or_else(|| ProviderPreset {
                label: "OpenAI".to_string(),
                provider: Provider::preset(ProviderKind::Openai),
            })
    }
}

/// The message in the status bar.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Status {
    /// Text shown.
    pub text: String,
    /// Shown as an error.
    pub is_error: bool,
}

/// Editing state of a list (input items or tools) and its selected entry's raw JSON editor.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ListForm {
    /// Selected entry index.
    pub selected: Option<usize>,
    /// Raw JSON buffer of the selected entry.
    pub raw: String,
    /// The entry the buffer belongs to (and the prompt revision it was filled from).
    pub raw_for: Option<(usize, u64)>,
    /// Parse error of the buffer (line, column, message).
    pub raw_error: Option<String>,
}

impl ListForm {
    /// Refills the raw buffer with `file_value` (the entry as in a Prompt file) when another
    /// entry was selected, or when the prompt changed elsewhere and the buffer has no pending
    /// error the user is still fixing.
    pub fn refill_raw(
        &mut self,
        index: usize,
        revision: u64,
        file_value: impl FnOnce() -> serde_json::Value,
    ) {
        let other_entry = self.raw_for.map(|(j, _)| j) != Some(index);
        if other_entry || (self.raw_for != Some((index, revision)) && self.raw_error.is_none()) {
            self.raw = serde_json::to_string_pretty(&file_value()).unwrap_or_default();
            self.raw_for = Some((index, revision));
            self.raw_error = None;
        }
    }
}

/// Buffers of the free-text settings (so invalid JSON can be shown without being applied).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SettingsForm {
    /// Output schema JSON text.
    pub schema: String,
    /// Parse error of the schema text.
    pub schema_error: Option<String>,
    /// Revision the buffers were filled from.
    pub filled_for: Option<u64>,
    /// Custom model name being typed.
    pub model: String,
    /// Path of a Codex config.toml to import providers from.
    pub config_path: String,
}

/// The import-body dialog.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ImportDialog {
    /// Pasted body text.
    pub text: String,
    /// Why the last import failed.
    pub error: Option<String>,
}

/// What an export writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportKind {
    /// The compiled body as `.json`.
    Json,
    /// A HAR 1.2 file of the request.
    Har,
    /// The Prompt file itself.
    Prompt,
}

/// The export / save dialog (native dialog with a path-field fallback).
#[derive(Debug, Clone, PartialEq)]
pub struct FileDialog {
    /// What to write (or `None` to open a Prompt file).
    pub kind: Option<ExportKind>,
    /// Column to export.
    pub column: usize,
    /// Path typed or chosen.
    pub path: String,
}

/// Search in the compiled views.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SearchState {
    /// The search bar is shown.
    pub open: bool,
    /// Text searched for (case-insensitive).
    pub query: String,
    /// Index of the current match (into the first column with matches).
    pub current: usize,
    /// Request focus for the search field on the next frame.
    pub focus: bool,
    /// Scroll the columns to the current match on the next frame.
    pub scroll_pending: bool,
    /// Matching line numbers per column.
    pub matches: Vec<Vec<usize>>,
    /// What `matches` was computed for (views revision, query, column count).
    pub matches_for: Option<(u64, String, usize)>,
}

/// Everything the workbench shows.
pub struct AppState {
    /// The prompt being edited (shared with the compile worker without copying).
    pub prompt: Arc<Prompt>,
    /// Increments on every prompt edit.
    pub revision: u64,
    /// Where the prompt was opened from / saved to.
    pub prompt_path: Option<PathBuf>,
    /// There are unsaved edits.
    pub dirty: bool,
    /// Persisted settings.
    pub settings: Settings,
    /// The model catalog.
    pub catalog: ModelCatalog,
    /// Latest compiled views.
    pub views: Vec<ViewResult>,
    /// Revision the views were compiled from.
    pub views_revision: u64,
    /// Why the last compile failed (the views keep the last good compile).
    pub compile_error: Option<String>,
    /// Milliseconds the last compile took.
    pub compile_millis: f64,
    /// Status bar message.
    pub status: Status,
    /// Item list editing.
    pub items_form: ListForm,
    /// Tools editing.
    pub tools_form: ListForm,
    /// Settings text buffers.
    pub settings_form: SettingsForm,
    /// Import-body dialog, when open.
    pub import_dialog: Option<ImportDialog>,
    /// File dialog, when open.
    pub file_dialog: Option<FileDialog>,
    /// Search state.
    pub search: SearchState,
    /// Recorded sessions in the sidebar.
    pub sessions: super::sessions::SessionsBrowser,
    /// The background compiler.
    pub(crate) worker: CompileWorker,
    /// Revision last sent to the worker.
    pub(crate) requested_revision: Option<u64>,
    /// Settings generation (column/provider changes force a recompile).
    pub(crate) settings_generation: u64,
    /// Settings generation last sent.
    pub(crate) requested_settings: Option<u64>,
    /// A native file dialog result is pending.
    pub(crate) pending_dialog: Option<std::sync::mpsc::Receiver<Option<PathBuf>>>,
}
