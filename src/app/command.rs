//! `AppCommand` and [`AppState::handle`], the single place that mutates the workbench state:
//! prompt edits, file actions, settings, and the hand-off to the compile worker.

use std::path::PathBuf;
use std::sync::Arc;

use super::files;
use super::state::{
    AppState, Column, ColumnDialect, ExportKind, FileDialog, ImportDialog, Settings, Status,
    ThemeChoice,
};
use super::worker::{CompileJob, CompileWorker, ResolvedColumn, WorkerEvent};
use crate::core::items::ResponseItem;
use crate::core::models::ModelCatalog;
use crate::core::prompt::{Dialect, Prompt, Setting};
use crate::core::provider::Provider;
use crate::core::rules::CompileRules;
use crate::core::tools::ToolSpec;

/// An edit of the prompt.
#[derive(Debug, Clone, PartialEq)]
pub enum PromptEdit {
    /// Model name.
    Model(String),
    /// Base instructions text.
    BaseInstructions(String),
    /// Replace item `i`.
    SetItem(usize, ResponseItem),
    /// Append an item.
    AddItem(ResponseItem),
    /// Remove item `i`.
    RemoveItem(usize),
    /// Duplicate item `i` (the copy goes after it).
    DuplicateItem(usize),
    /// Move item `i` by `delta` places.
    MoveItem(usize, isize),
    /// Replace tool `i`.
    SetTool(usize, ToolSpec),
    /// Append a tool.
    AddTool(ToolSpec),
    /// Remove tool `i`.
    RemoveTool(usize),
    /// Duplicate tool `i`.
    DuplicateTool(usize),
    /// Move tool `i` by `delta` places.
    MoveTool(usize, isize),
    /// Reasoning effort.
    Effort(Setting<String>),
    /// Reasoning summary.
    Summary(Setting<String>),
    /// Verbosity.
    Verbosity(Setting<String>),
    /// Output schema (None removes it).
    OutputSchema(Option<serde_json::Value>),
    /// Output schema strictness.
    Strict(bool),
    /// Parallel tool calls (None follows the model).
    Parallel(Option<bool>),
    /// Service tier.
    ServiceTier(Option<String>),
    /// Prompt cache key.
    CacheKey(Option<String>),
}

/// Something the UI asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum AppCommand {
    /// Change the prompt.
    Edit(Box<PromptEdit>),
    /// Choose a provider preset.
    SetProvider(usize),
    /// Change a provider preset's base URL.
    SetProviderUrl(usize, String),
    /// Standard / Lite / auto.
    SetDialect(Dialect),
    /// Rules preset.
    SetRules(String),
    /// Replace the compiled columns.
    SetColumns(Vec<Column>),
    /// Text or tree display of compiled JSON.
    SetTreeView(bool),
    /// Theme.
    SetTheme(ThemeChoice),
    /// Load a bundled example prompt.
    LoadExample(&'static str),
    /// Open a Prompt file (or a captured body, which is imported).
    Open(PathBuf),
    /// Save to the current path (or ask for one).
    Save,
    /// Show the file dialog for a kind of export (None: open a prompt).
    ShowFileDialog(Option<ExportKind>, usize),
    /// Write an export (or the prompt) to a path.
    WriteFile(ExportKind, usize, PathBuf),
    /// Copy a column as curl.
    CopyCurl(usize),
    /// Open the paste-a-body dialog.
    ShowImportDialog,
    /// Import a pasted captured body.
    ImportBody(String),
    /// Import providers from a Codex config.toml.
    ImportCodexConfig(PathBuf),
    /// Send (arrives with the streaming timeline).
    Send,
    /// Select an item in the list.
    SelectItem(Option<usize>),
    /// Select a tool.
    SelectTool(Option<usize>),
}

/// The bundled example prompts: (file name, contents).
pub const EXAMPLES: [(&str, &str); 4] = [
    (
        "tools-session.json",
        include_str!("../../assets/prompts/tools-session.json"),
    ),
    (
        "hello.json",
        include_str!("../../assets/prompts/hello.json"),
    ),
    (
        "lite-image.json",
        include_str!("../../assets/prompts/lite-image.json"),
    ),
    (
        "structured-output.json",
        include_str!("../../assets/prompts/structured-output.json"),
    ),
];

impl AppState {
    /// A workbench on the embedded default prompt with `settings`, without a session store.
    pub fn new(settings: Settings) -> Self {
        Self::with_store(settings, None)
    }

    /// A workbench whose sidebar browses the session database at `db` (created and seeded on
    /// first use).
    pub fn with_store(settings: Settings, db: Option<PathBuf>) -> Self {
        let prompt = EXAMPLES
            .first()
            .and_then(|(_, text)| Prompt::from_json_str(text).ok())
            .unwrap_or_else(|| Prompt::new("gpt-5.5"));
        Self {
            prompt: Arc::new(prompt),
            revision: 1,
            prompt_path: None,
            dirty: false,
            settings,
            catalog: ModelCatalog::bundled(),
            views: Vec::new(),
            views_revision: 0,
            compile_error: None,
            compile_millis: 0.0,
            status: Status {
                text: "Loaded the example prompt tools-session.json".to_string(),
                is_error: false,
            },
            items_form: Default::default(),
            tools_form: Default::default(),
            settings_form: Default::default(),
            import_dialog: None,
            file_dialog: None,
            search: Default::default(),
            sessions: super::sessions::SessionsBrowser::new(db),
            worker: CompileWorker::start(),
            requested_revision: None,
            settings_generation: 1,
            requested_settings: None,
            pending_dialog: None,
        }
    }

    /// Replaces the prompt (open, import, example).
    pub fn replace_prompt(&mut self, prompt: Prompt, path: Option<PathBuf>) {
        self.prompt = Arc::new(prompt);
        self.prompt_path = path;
        self.dirty = false;
        self.revision += 1;
        self.items_form = Default::default();
        self.tools_form = Default::default();
        self.settings_form = Default::default();
    }

    /// Shows a message in the status bar.
    pub fn set_status(&mut self, text: impl Into<String>, is_error: bool) {
        self.status = Status {
            text: text.into(),
            is_error,
        };
    }

    /// Applies one command.
    pub fn handle(&mut self, command: AppCommand) {
        match command {
            AppCommand::Edit(edit) => self.apply_edit(*edit),
            AppCommand::SetProvider(i) => {
                if i < self.settings.providers.len() {
                    self.settings.provider = i;
                    self.settings_generation += 1;
                }
            }
            AppCommand::SetProviderUrl(i, url) => {
                if let Some(p) = self.settings.providers.get_mut(i) {
                    p.provider.base_url = url;
                    self.settings_generation += 1;
                }
            }
            AppCommand::SetDialect(d) => {
                self.settings.dialect = d;
                self.settings_generation += 1;
            }
            AppCommand::SetRules(r) => {
                if CompileRules::preset(&r).is_some() {
                    self.settings.rules = r;
                    self.settings_generation += 1;
                }
            }
            AppCommand::SetColumns(columns) => {
                if !columns.is_empty() {
                    self.settings.columns = columns;
                    self.settings_generation += 1;
                }
            }
            AppCommand::SetTreeView(on) => self.settings.tree_view = on,
            AppCommand::SetTheme(theme) => self.settings.theme = theme,
            AppCommand::LoadExample(name) => {
                if let Some((_, text)) = EXAMPLES.iter().find(|(n, _)| *n == name) {
                    match Prompt::from_json_str(text) {
                        Ok(prompt) => {
                            self.replace_prompt(prompt, None);
                            self.set_status(format!("Loaded the example prompt {name}"), false);
                        }
                        Err(e) => self.set_status(format!("{name}: {e}"), true),
                    }
                }
            }
            AppCommand::Open(path) => files::open(self, path),
            AppCommand::Save => match self.prompt_path.clone() {
                Some(path) => files::write(self, ExportKind::Prompt, 0, &path),
                None => {
                    self.file_dialog = Some(FileDialog {
                        kind: Some(ExportKind::Prompt),
                        column: 0,
                        path: "prompt.json".to_string(),
                    });
                }
            },
            AppCommand::ShowFileDialog(kind, column) => {
                let path = match kind {
                    Some(ExportKind::Json) => "body.json",
                    Some(ExportKind::Har) => "request.har",
                    Some(ExportKind::Prompt) => "prompt.json",
                    None => "",
                };
                self.file_dialog = Some(FileDialog {
                    kind,
                    column,
                    path: path.to_string(),
                });
            }
            AppCommand::WriteFile(kind, column, path) => files::write(self, kind, column, &path),
            AppCommand::CopyCurl(_) | AppCommand::Send => {
                // CopyCurl is handled by the UI (clipboard); Send arrives with streaming.
                if command == AppCommand::Send {
                    self.set_status(
                        "Sending is not available yet: the live stream view comes with the streaming timeline",
                        false,
                    );
                }
            }
            AppCommand::ShowImportDialog => self.import_dialog = Some(ImportDialog::default()),
            AppCommand::ImportBody(text) => files::import_body_text(self, &text),
            AppCommand::ImportCodexConfig(path) => files::import_codex_config(self, &path),
            AppCommand::SelectItem(i) => self.items_form.selected = i,
            AppCommand::SelectTool(i) => self.tools_form.selected = i,
        }
    }

    fn apply_edit(&mut self, edit: PromptEdit) {
        let prompt = Arc::make_mut(&mut self.prompt);
        let items = &mut prompt.input;
        let moved = |len: usize, i: usize, delta: isize| -> Option<usize> {
            let j = i as isize + delta;
            (i < len && j >= 0 && (j as usize) < len).then_some(j as usize)
        };
        match edit {
            PromptEdit::Model(m) => prompt.model = m,
            PromptEdit::BaseInstructions(t) => prompt.base_instructions = t,
            PromptEdit::SetItem(i, item) => {
                if let Some(slot) = items.get_mut(i) {
                    *slot = item;
                }
            }
            PromptEdit::AddItem(item) => {
                items.push(item);
                self.items_form.selected = Some(items.len() - 1);
            }
            PromptEdit::RemoveItem(i) => {
                if i < items.len() {
                    items.remove(i);
                    self.items_form.selected = None;
                }
            }
            PromptEdit::DuplicateItem(i) => {
                if let Some(item) = items.get(i).cloned() {
                    items.insert(i + 1, item);
                    self.items_form.selected = Some(i + 1);
                }
            }
            PromptEdit::MoveItem(i, delta) => {
                if let Some(j) = moved(items.len(), i, delta) {
                    items.swap(i, j);
                    self.items_form.selected = Some(j);
                }
            }
            PromptEdit::SetTool(i, tool) => {
                if let Some(slot) = prompt.tools.get_mut(i) {
                    *slot = tool;
                }
            }
            PromptEdit::AddTool(tool) => {
                prompt.tools.push(tool);
                self.tools_form.selected = Some(prompt.tools.len() - 1);
            }
            PromptEdit::RemoveTool(i) => {
                if i < prompt.tools.len() {
                    prompt.tools.remove(i);
                    self.tools_form.selected = None;
                }
            }
            PromptEdit::DuplicateTool(i) => {
                if let Some(tool) = prompt.tools.get(i).cloned() {
                    prompt.tools.insert(i + 1, tool);
                    self.tools_form.selected = Some(i + 1);
                }
            }
            PromptEdit::MoveTool(i, delta) => {
                if let Some(j) = moved(prompt.tools.len(), i, delta) {
                    prompt.tools.swap(i, j);
                    self.tools_form.selected = Some(j);
                }
            }
            PromptEdit::Effort(s) => prompt.reasoning.effort = s,
            PromptEdit::Summary(s) => prompt.reasoning.summary = s,
            PromptEdit::Verbosity(s) => prompt.verbosity = s,
            PromptEdit::OutputSchema(s) => prompt.output_schema = s,
            PromptEdit::Strict(b) => prompt.output_schema_strict = b,
            PromptEdit::Parallel(p) => prompt.parallel_tool_calls = p,
            PromptEdit::ServiceTier(t) => prompt.service_tier = t,
            PromptEdit::CacheKey(k) => prompt.prompt_cache_key = k,
        }
        self.revision += 1;
        self.dirty = true;
    }

    /// Whether the request (top-bar dialect; auto follows the model) is Lite.
    pub fn primary_is_lite(&self) -> bool {
        match self.settings.dialect {
            Dialect::Lite => true,
            Dialect::Standard => false,
            Dialect::Auto => self.catalog.lookup(&self.prompt.model).use_responses_lite,
        }
    }

    /// The columns resolved against the chosen provider and dialect.
    pub fn resolved_columns(&self) -> Vec<ResolvedColumn> {
        let chosen = self.settings.chosen_provider();
        let primary_lite = self.primary_is_lite();
        let dialect = |lite: bool| {
            if lite {
                Dialect::Lite
            } else {
                Dialect::Standard
            }
        };
        self.settings
            .columns
            .iter()
            .map(|c| ResolvedColumn {
                label: c.label(&chosen),
                provider: match c.provider {
                    None => chosen.provider.clone(),
                    Some(kind) if kind == chosen.provider.kind() => chosen.provider.clone(),
                    Some(kind) => Provider::preset(kind),
                },
                dialect: match c.dialect {
                    ColumnDialect::Primary => dialect(primary_lite),
                    ColumnDialect::Alternate => dialect(!primary_lite),
                    ColumnDialect::Standard => Dialect::Standard,
                    ColumnDialect::Lite => Dialect::Lite,
                },
                view: c.view,
            })
            .collect()
    }

    /// True when the worker has been asked for the current prompt and settings.
    pub fn requested_revision_is_current(&self) -> bool {
        self.requested_revision == Some(self.revision)
            && self.requested_settings == Some(self.settings_generation)
    }

    /// Drains worker results and, when the prompt or settings changed, queues a compile.
    pub fn poll_worker(&mut self, ctx: &egui::Context) {
        while let Some(event) = self.worker.try_recv() {
            match event {
                WorkerEvent::Compiled {
                    revision,
                    result,
                    millis,
                    ..
                } => {
                    if revision < self.views_revision {
                        continue;
                    }
                    self.compile_millis = millis;
                    match result {
                        Ok(views) => {
                            self.views = views;
                            self.views_revision = revision;
                            self.compile_error = None;
                        }
                        // Keep the last good compile on screen.
                        Err(e) => self.compile_error = Some(e),
                    }
                }
                WorkerEvent::Tokens {
                    revision, tokens, ..
                } => {
                    if revision == self.views_revision && tokens.len() == self.views.len() {
                        for (view, n) in self.views.iter_mut().zip(tokens) {
                            view.tokens = Some(n);
                        }
                    }
                }
            }
        }
        let stale = self.requested_revision != Some(self.revision)
            || self.requested_settings != Some(self.settings_generation);
        if stale {
            let rules = CompileRules::preset(&self.settings.rules)
                .unwrap_or_else(CompileRules::codex_0_169);
            let model = self.catalog.lookup(&self.prompt.model);
            let columns = self.resolved_columns();
            self.worker.submit(
                CompileJob {
                    revision: self.revision,
                    settings_generation: self.settings_generation,
                    prompt: Arc::clone(&self.prompt),
                    model,
                    rules,
                    columns,
                },
                ctx,
            );
            self.requested_revision = Some(self.revision);
            self.requested_settings = Some(self.settings_generation);
        }
        if let Some((request, body)) = self.sessions.poll() {
            match body {
                Ok(value) => {
                    files::import_body_value(self, &value, &format!("stored request {request}"))
                }
                Err(e) => {
                    self.set_status(format!("Cannot load stored request {request}: {e}"), true)
                }
            }
        }
        if let Some(rx) = &self.pending_dialog
            && let Ok(choice) = rx.try_recv()
        {
            self.pending_dialog = None;
            if let (Some(path), Some(dialog)) = (choice, self.file_dialog.as_mut()) {
                dialog.path = path.display().to_string();
            }
        }
    }
}
