//! [`AppState::handle`], the single place that applies what the UI asked for: prompt edits and
//! undo/redo, settings, dialogs, and the start of every job (files, store reads, imports) on the
//! worker bridge. Nothing here reads or writes a file or waits.

use std::path::PathBuf;
use std::sync::Arc;

use super::command::{AppCommand, EXAMPLES, PromptEdit};
use super::event::{OpenedFile, PromptSource};
use super::jobs::Workers;
use super::settings::{ExportKind, Settings};
use super::state::{AppState, Dialog, History, PendingAction, UNDO_LIMIT};
use super::worker::CompileWorker;
use super::{files, sessions};
use crate::core::models::ModelCatalog;
use crate::core::prompt::Prompt;

/// How the app is set up.
#[derive(Debug, Clone, Default)]
pub struct AppOptions {
    /// The session database (None: no sessions browser).
    pub db: Option<PathBuf>,
    /// Asked to repaint when workers report.
    pub ctx: Option<egui::Context>,
}

impl AppState {
    /// A workbench on the first bundled example with `settings`.
    pub fn new(settings: Settings, options: AppOptions) -> Self {
        let prompt = EXAMPLES
            .first()
            .and_then(|(_, text)| Prompt::from_json_str(text).ok())
            .unwrap_or_else(|| Prompt::new("gpt-5.5"));
        let prompt = Arc::new(prompt);
        let workers = Workers::start(options.ctx);
        let compiler = CompileWorker::start(workers.event_sender());
        Self {
            saved: Some(Arc::clone(&prompt)),
            prompt,
            revision: 1,
            prompt_path: None,
            source: None,
            history: History::default(),
            settings,
            catalog: Arc::new(ModelCatalog::bundled()),
            views: Vec::new(),
            views_revision: 0,
            compile_error: None,
            compile_millis: 0.0,
            status: super::state::Status {
                text: "Loaded the example prompt tools-session.json".to_string(),
                is_error: false,
            },
            selected_item: None,
            selected_tool: None,
            dialog: None,
            dialog_generation: 0,
            sessions: sessions::SessionsModel {
                db_path: options.db,
                ..sessions::SessionsModel::default()
            },
            browser: super::session_view::SessionBrowser::default(),
            record: super::proxy::RecordState::default(),
            otel: super::otel::OtelState::default(),
            traffic: super::traffic::TrafficLog::default(),
            live: super::session_view::live::LiveFollow::default(),
            imports: super::imports::ImportsState::default(),
            close_confirmed: false,
            send: super::send::SendState::default(),
            key_lookup: super::send::env_lookup(),
            workers,
            compiler,
            requested_revision: None,
            settings_generation: 1,
            requested_settings: None,
            views_settings: 0,
            replace_confirmed: false,
            unapplied_edits: Default::default(),
            after_save: None,
            pending_open: None,
        }
    }

    /// Replaces the prompt with one loaded from `source` (not an edit: the history restarts).
    pub fn replace_prompt(&mut self, prompt: Prompt, source: Option<PromptSource>) {
        self.prompt = Arc::new(prompt);
        self.saved = Some(Arc::clone(&self.prompt));
        self.prompt_path = match &source {
            Some(PromptSource::File(path)) => Some(path.clone()),
            _ => None,
        };
        self.sessions.loaded_request = match &source {
            Some(PromptSource::Stored { request, .. }) => Some(*request),
            _ => None,
        };
        self.source = source;
        self.revision += 1;
        self.history = History::default();
        // The UI drops the text of an unapplied raw edit once its entry is no longer selected.
        self.unapplied_edits.clear();
        self.selected_item = None;
        self.selected_tool = None;
    }

    fn open_dialog(&mut self, dialog: Dialog) {
        self.dialog = Some(dialog);
        self.dialog_generation += 1;
    }

    /// Runs `command` now, or first asks whether to drop unsaved edits.
    pub(crate) fn replace_guarded(&mut self, command: AppCommand) -> bool {
        if self.has_unsaved_work() && !self.replace_confirmed {
            self.open_dialog(Dialog::Unsaved {
                then: PendingAction::Run(Box::new(command)),
            });
            return false;
        }
        true
    }

    fn spawn(&mut self, name: &str, job: impl FnOnce(&super::jobs::JobContext) + Send + 'static) {
        if let Err(e) = self.workers.spawn(name, job) {
            self.set_status(e, true);
        }
    }

    /// Applies one command.
    pub fn handle(&mut self, command: AppCommand) {
        if self.status.is_error
            && matches!(
                command,
                AppCommand::Edit(_) | AppCommand::Undo | AppCommand::Redo
            )
        {
            // A later edit went through: the old error is no longer news.
            self.set_status("", false);
        }
        match command {
            AppCommand::Edit(edit) => self.apply_edit(*edit),
            AppCommand::Undo => self.undo(),
            AppCommand::Redo => self.redo(),
            AppCommand::SetColumns(columns) => {
                if !columns.is_empty() {
                    self.settings.columns = columns;
                    self.settings_generation += 1;
                }
            }
            AppCommand::SetTreeView(on) => self.settings.tree_view = on,
            AppCommand::Pane(command) => self.settings.panes.apply(command),
            AppCommand::SetTheme(theme) => self.settings.theme = theme,
            AppCommand::SetLimits(limits) => self.settings.limits = limits.clamped(),
            AppCommand::LoadExample(name) => {
                if !self.replace_guarded(AppCommand::LoadExample(name)) {
                    return;
                }
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
            AppCommand::Open(path) => {
                // Read first: only what goes into the form asks about unsaved work (a session
                // database, HAR, rollout file or folder does not replace the prompt), and it
                // asks once its content is known (`open::opened`), whatever the file's name.
                let catalog = Arc::clone(&self.catalog);
                self.spawn("open", move |job| {
                    let result = files::read_any(&path, &catalog);
                    job.report(super::AppEvent::Opened { path, result });
                });
            }
            AppCommand::ApplyPendingOpen => {
                if let Some((path, file)) = self.pending_open.take() {
                    self.prompt_loaded(PromptSource::File(path), Ok(*file));
                }
            }
            // The file the prompt came from is saved over; a form from anywhere else (an
            // import, a session, an example, Continue) asks where.
            AppCommand::Save => match self.prompt_path.clone() {
                Some(path) => self.write_file(ExportKind::Prompt, 0, path, true),
                None => self.show_file_dialog(Some(ExportKind::Prompt), 0),
            },
            AppCommand::ShowFileDialog(kind, column) => self.show_file_dialog(kind, column),
            AppCommand::WriteFile(kind, column, path) => {
                self.write_file(kind, column, path, false);
            }
            AppCommand::ReplaceFile => {
                if let Some(Dialog::File {
                    kind: Some(kind),
                    column,
                    replace,
                    ..
                }) = self.dialog.as_mut()
                    && let Some(path) = replace.take()
                {
                    let (kind, column) = (*kind, *column);
                    self.write_file(kind, column, path, true);
                }
            }
            AppCommand::CompletePath(typed) => self.spawn("complete-path", move |job| {
                job.report(super::AppEvent::PathCompleted(files::complete_path(&typed)));
            }),
            AppCommand::Browse => self.browse(),
            AppCommand::ShowImportDialog => self.open_dialog(Dialog::Import {
                error: None,
                busy: false,
            }),
            AppCommand::ImportBody(text) => {
                // Validate first: a body that cannot be imported never asks to discard the
                // edits (its error stays in the import dialog).
                if self.has_unsaved_work()
                    && !self.replace_confirmed
                    && let Err(e) = files::import_body_text(&text, &self.catalog)
                {
                    if let Some(Dialog::Import { error, busy }) = self.dialog.as_mut() {
                        *error = Some(e.clone());
                        *busy = false;
                    }
                    return self.set_status(format!("Cannot load: {e}"), true);
                }
                if !self.replace_guarded(AppCommand::ImportBody(text.clone())) {
                    return;
                }
                self.set_import_busy();
                let catalog = Arc::clone(&self.catalog);
                self.spawn("import", move |job| {
                    let result = files::import_body_text(&text, &catalog)
                        .map(|o| OpenedFile::Body(Box::new(o)));
                    job.report(super::AppEvent::PromptLoaded {
                        source: PromptSource::Pasted,
                        result,
                    });
                });
            }
            AppCommand::ImportBodyFile(path) => {
                if !self.replace_guarded(AppCommand::ImportBodyFile(path.clone())) {
                    return;
                }
                self.set_import_busy();
                let catalog = Arc::clone(&self.catalog);
                self.spawn("import", move |job| {
                    let result = files::read_limited(&path)
                        .map_err(|e| format!("{}: {e}", path.display()))
                        .and_then(|text| files::import_body_text(&text, &catalog))
                        .map(|o| OpenedFile::Body(Box::new(o)));
                    job.report(super::AppEvent::PromptLoaded {
                        source: PromptSource::Pasted,
                        result,
                    });
                });
            }
            AppCommand::ImportCodexConfig(path) => self.spawn("codex-config", move |job| {
                let result = files::read_codex_config(&path);
                job.report(super::AppEvent::ProvidersImported { path, result });
            }),
            AppCommand::CloseDialog => {
                self.dialog = None;
                // Closing the Save dialog of "Save first" gives up what was to follow.
                self.after_save = None;
            }
            AppCommand::SaveAndContinue => {
                if let Some(Dialog::Unsaved { then }) = self.dialog.take() {
                    self.after_save = Some(then);
                    self.handle(AppCommand::Save);
                }
            }
            AppCommand::UnappliedEdit { list, index } => match index {
                Some(i) => {
                    self.unapplied_edits.insert(list, i);
                }
                None => {
                    self.unapplied_edits.remove(list);
                }
            },
            AppCommand::DiscardAndContinue => {
                if let Some(Dialog::Unsaved { then }) = self.dialog.take() {
                    self.run_confirmed(then);
                }
            }
            AppCommand::RequestClose => {
                if self.has_unsaved_work() {
                    self.open_dialog(Dialog::Unsaved {
                        then: PendingAction::Close,
                    });
                } else {
                    self.close_confirmed = true;
                }
            }
            AppCommand::Send => super::send::start(self),
            AppCommand::SendBar(command) => super::send::handle(self, command),
            AppCommand::SelectItem(i) => self.selected_item = i,
            AppCommand::SelectTool(i) => self.selected_tool = i,
            AppCommand::RefreshSessions => sessions::list(self),
            AppCommand::OpenSession(id) => sessions::open(self, id),
            AppCommand::LoadStoredRequest {
                session,
                request,
                position,
            } => {
                let command = AppCommand::LoadStoredRequest {
                    session,
                    request,
                    position,
                };
                if self.replace_guarded(command) {
                    sessions::load_request(self, session, request, position);
                }
            }
            AppCommand::Notify(text) => self.set_status(text, false),
            AppCommand::CancelJob(id) => self.workers.cancel(id),
            AppCommand::Sessions(command) => super::session_view::handle(self, command),
            AppCommand::Record(command) => super::proxy::handle(self, command),
            AppCommand::Otel(command) => super::otel::handle(self, command),
            AppCommand::Traffic(command) => super::traffic::handle(self, command),
            AppCommand::Import(command) => super::imports::handle(self, command),
        }
    }

    /// After a write finished (`poll.rs`): when it was the save "Save first" asked for, does
    /// what was to follow — unless the prompt changed again meanwhile (then asks again) or the
    /// save failed (then nothing follows and the status says so).
    pub(crate) fn continue_after_save(&mut self, kind: ExportKind, saved: bool) {
        if kind != ExportKind::Prompt {
            return;
        }
        let Some(then) = self.after_save.take() else {
            return;
        };
        if !saved {
            if matches!(self.dialog, Some(Dialog::File { .. })) {
                // The Save dialog stays open to try another path; Cancel gives up.
                self.after_save = Some(then);
                return;
            }
            let text = format!("{} — nothing else was done", self.status.text);
            self.set_status(text, true);
            return;
        }
        if self.is_dirty() {
            self.open_dialog(Dialog::Unsaved { then });
            return;
        }
        // Saved; what is left (an unapplied invalid raw edit) was in the question.
        self.run_confirmed(then);
    }

    /// Carries out `then`, which the user confirmed may replace (or close) unsaved work.
    fn run_confirmed(&mut self, then: PendingAction) {
        match then {
            PendingAction::Run(command) => {
                self.replace_confirmed = true;
                self.handle(*command);
                self.replace_confirmed = false;
            }
            PendingAction::Close => self.close_confirmed = true,
        }
    }

    fn set_import_busy(&mut self) {
        if let Some(Dialog::Import { busy, error }) = self.dialog.as_mut() {
            *busy = true;
            *error = None;
        }
    }

    fn show_file_dialog(&mut self, kind: Option<ExportKind>, column: usize) {
        let name = kind.map_or("", ExportKind::default_file_name);
        let dir = self
            .prompt_path
            .as_ref()
            .and_then(|p| p.parent().map(PathBuf::from))
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_default();
        self.open_dialog(Dialog::File {
            kind,
            column,
            path: dir.join(name),
            note: None,
            replace: None,
            completion: None,
        });
    }

    /// Writes `kind` to `path` on a worker; a file already there is replaced only when
    /// `replace` or when it is the file the prompt came from (else the dialog asks).
    fn write_file(&mut self, kind: ExportKind, column: usize, path: PathBuf, replace: bool) {
        let source = match files::ExportSource::of(self, kind, column) {
            Ok(source) => source,
            Err(e) => return self.set_status(e, true),
        };
        let own = kind == ExportKind::Prompt && self.prompt_path.as_ref() == Some(&path);
        let replace = replace || own;
        let written = (kind == ExportKind::Prompt).then(|| Arc::clone(&self.prompt));
        let started = self.workers.spawn("write", move |job| {
            // The bytes are made here, on the worker: pretty-printing a large prompt, a HAR
            // log or redacting a whole body must not hold up a frame.
            let result = source
                .bytes(kind)
                .map_err(files::WriteError::Failed)
                .and_then(|bytes| {
                    files::write_new_or_replace(&path, &bytes, replace).map(|()| bytes.len())
                });
            job.report(super::AppEvent::FileWritten {
                path,
                kind,
                prompt: written,
                result,
            });
        });
        if let Err(e) = started {
            // No write: nothing may follow it later.
            self.after_save = None;
            self.set_status(e, true);
        }
    }

    fn browse(&mut self) {
        let Some(Dialog::File { kind, path, .. }) = &self.dialog else {
            return;
        };
        let saving = kind.is_some();
        let suggested = path.clone();
        self.spawn("file-dialog", move |job| {
            let (choice, unavailable) = files::dialog_choice(|| {
                let mut picker = rfd::FileDialog::new().add_filter("JSON / HAR", &["json", "har"]);
                if let Some(dir) = suggested.parent() {
                    picker = picker.set_directory(dir);
                }
                if saving {
                    let name = suggested
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    picker.set_file_name(name).save_file()
                } else {
                    picker.pick_file()
                }
            });
            job.report(super::AppEvent::PathChosen {
                path: choice,
                unavailable,
            });
        });
    }

    fn apply_edit(&mut self, edit: PromptEdit) {
        let field = edit.field();
        if field.is_none() || field != self.history.last_field {
            self.history.undo.push(Arc::clone(&self.prompt));
            if self.history.undo.len() > UNDO_LIMIT {
                self.history.undo.remove(0);
            }
        }
        self.history.redo.clear();
        self.history.last_field = field;
        super::edit::apply(self, edit);
        self.revision += 1;
    }

    fn undo(&mut self) {
        if let Some(previous) = self.history.undo.pop() {
            let current = std::mem::replace(&mut self.prompt, previous);
            self.history.redo.push(current);
            self.after_history_step("Undid the last edit");
        }
    }

    fn redo(&mut self) {
        if let Some(next) = self.history.redo.pop() {
            let current = std::mem::replace(&mut self.prompt, next);
            self.history.undo.push(current);
            self.after_history_step("Redid the edit");
        }
    }

    fn after_history_step(&mut self, text: &str) {
        self.history.last_field = None;
        self.revision += 1;
        let items = self.prompt.input.len();
        self.selected_item = self.selected_item.filter(|&i| i < items);
        let tools = self.prompt.tools.len();
        self.selected_tool = self.selected_tool.filter(|&i| i < tools);
        self.set_status(text, false);
    }
}
