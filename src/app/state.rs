//! `AppState`: the document the workbench shows — the prompt being edited and its undo history,
//! the compiled views, the open dialog, the sessions model, the status line — plus the
//! persisted settings and the worker bridge. Panels read it; only [`AppState::handle`] (commands,
//! `handle.rs`) and [`AppState::poll`] (worker events, `poll.rs`) change it.

use std::path::PathBuf;
use std::sync::Arc;

use super::command::AppCommand;
use super::event::PromptSource;
use super::jobs::Workers;
use super::settings::{ExportKind, Settings};
use super::worker::{CompileWorker, ViewResult};
use crate::core::models::ModelCatalog;
use crate::core::prompt::Prompt;

/// The message in the status bar.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Status {
    /// Text shown.
    pub text: String,
    /// Shown as an error.
    pub is_error: bool,
}

/// What happens once the user agrees to drop unsaved edits.
#[derive(Debug, Clone, PartialEq)]
pub enum PendingAction {
    /// Run this command (it replaces the prompt).
    Run(Box<AppCommand>),
    /// Close the window.
    Close,
}

/// The dialog shown over the workbench (at most one).
#[derive(Debug, Clone, PartialEq)]
pub enum Dialog {
    /// Paste (or pick a file of) a captured body.
    Import {
        /// Why the last import failed.
        error: Option<String>,
        /// An import is being read/parsed by a worker.
        busy: bool,
    },
    /// Open a Prompt file, or write one / an export.
    File {
        /// What to write (None: open a Prompt file).
        kind: Option<ExportKind>,
        /// Column to export.
        column: usize,
        /// Suggested absolute path (the dialog's text field starts from it).
        path: PathBuf,
        /// A note about the last Browse… attempt or write failure.
        note: Option<String>,
        /// A file exists at this path (not the one the prompt came from): the dialog asks
        /// before replacing it ([`AppCommand::ReplaceFile`](super::AppCommand::ReplaceFile)).
        replace: Option<PathBuf>,
        /// What Tab last completed the typed path to, and a count of completions (the UI
        /// takes each once).
        completion: Option<(u64, super::files::PathCompletion)>,
    },
    /// "You have unsaved changes" before replacing the prompt or closing.
    Unsaved {
        /// What to do when the user discards.
        then: PendingAction,
    },
}

/// Undo/redo of prompt edits: whole-prompt snapshots (shared, so a snapshot costs a pointer
/// until the next edit copies the prompt once); typing into one field makes one step.
#[derive(Debug, Clone, Default)]
pub struct History {
    /// Earlier prompts, oldest first.
    pub undo: Vec<Arc<Prompt>>,
    /// Undone prompts, most recent last.
    pub redo: Vec<Arc<Prompt>>,
    /// The field the last edit typed into (consecutive edits of it coalesce).
    pub last_field: Option<super::command::EditField>,
}

/// Undo steps kept.
pub const UNDO_LIMIT: usize = 100;

/// Everything the workbench shows.
pub struct AppState {
    /// The prompt being edited (shared with the compile worker and the history without copying).
    pub prompt: Arc<Prompt>,
    /// Increments on every change of the prompt (edit, undo, load).
    pub revision: u64,
    /// The prompt as last loaded or saved (unsaved edits: a different pointer).
    pub saved: Option<Arc<Prompt>>,
    /// Where the prompt was opened from / saved to.
    pub prompt_path: Option<PathBuf>,
    /// Where the prompt came from.
    pub source: Option<PromptSource>,
    /// Undo / redo.
    pub history: History,
    /// Persisted settings.
    pub settings: Settings,
    /// The model catalog.
    pub catalog: Arc<ModelCatalog>,
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
    /// Selected input item.
    pub selected_item: Option<usize>,
    /// Selected tool.
    pub selected_tool: Option<usize>,
    /// The open dialog.
    pub dialog: Option<Dialog>,
    /// Increments whenever a dialog opens or its suggested path changes (UI buffers refill).
    pub dialog_generation: u64,
    /// The sessions model: the listed page, the open session and its rows (the sidebar and
    /// the Sessions tab both read it).
    pub sessions: super::sessions::SessionsModel,
    /// The Sessions view: browser, prefix view, replay, compare.
    pub browser: super::session_view::SessionBrowser,
    /// The Record panel: recording proxy and replay endpoint.
    pub record: super::proxy::RecordState,
    /// OpenTelemetry export: the dialog, the running export, the live counters.
    pub otel: super::otel::OtelState,
    /// The Traffic view: every request the app handled in this run, newest last.
    pub traffic: super::traffic::TrafficLog,
    /// The proxied request the Sessions view's timeline follows live.
    pub live: super::session_view::live::LiveFollow,
    /// Codex session and catalog imports.
    pub imports: super::imports::ImportsState,
    /// The user agreed to close with unsaved edits: the window should close now.
    pub close_confirmed: bool,
    /// The workbench's send and its timeline (`send.rs`).
    pub send: super::send::SendState,
    /// Reads the API key's environment variable (injectable for tests).
    pub key_lookup: super::send::KeyLookup,
    /// The worker bridge.
    pub workers: Workers,
    /// The compile worker.
    pub(crate) compiler: CompileWorker,
    /// Revision last sent to the compile worker.
    pub(crate) requested_revision: Option<u64>,
    /// Settings generation (column/provider changes force a recompile).
    pub(crate) settings_generation: u64,
    /// Settings generation last sent.
    pub(crate) requested_settings: Option<u64>,
    /// Settings generation the shown views were compiled under.
    pub(crate) views_settings: u64,
    /// Set while re-running a command the user confirmed in the unsaved-changes dialog.
    pub(crate) replace_confirmed: bool,
    /// Raw JSON edits the UI holds that do not parse, so were never applied, by list ("item",
    /// "tool") and entry index. They are unsaved work: replacing the prompt or closing asks.
    pub unapplied_edits: std::collections::BTreeMap<&'static str, usize>,
    /// What to do once the save the user chose in the unsaved-changes dialog has succeeded.
    pub(crate) after_save: Option<PendingAction>,
    /// A file read by Open… (or dropped) that would replace unsaved work: it waits here, read,
    /// while the unsaved-changes dialog asks ([`AppCommand::ApplyPendingOpen`] applies it).
    ///
    /// [`AppCommand::ApplyPendingOpen`]: super::AppCommand::ApplyPendingOpen
    pub(crate) pending_open: Option<(std::path::PathBuf, Box<super::event::OpenedFile>)>,
}

impl AppState {
    /// True when the prompt has edits that are not in a file.
    pub fn is_dirty(&self) -> bool {
        self.saved
            .as_ref()
            .is_none_or(|saved| !Arc::ptr_eq(saved, &self.prompt))
    }

    /// True when there is work a replace or close would lose: unsaved edits of the prompt, or
    /// a raw JSON edit that does not parse and so was never applied.
    pub fn has_unsaved_work(&self) -> bool {
        self.is_dirty() || !self.unapplied_edits.is_empty()
    }

    /// The unapplied raw JSON edits, for the unsaved-changes question ("item 3", "tool 0").
    pub fn unapplied_edit_names(&self) -> Vec<String> {
        self.unapplied_edits
            .iter()
            .map(|(list, i)| format!("{list} {i}"))
            .collect()
    }

    /// True when the worker has been asked for the current prompt and settings.
    pub fn requested_revision_is_current(&self) -> bool {
        self.requested_revision == Some(self.revision)
            && self.requested_settings == Some(self.settings_generation)
    }

    /// True when the views show the current prompt and settings.
    pub fn views_are_current(&self) -> bool {
        !self.views.is_empty()
            && self.views_revision == self.revision
            && self.views_settings == self.settings_generation
            && self.requested_revision_is_current()
    }

    /// Shows a message in the status bar.
    pub fn set_status(&mut self, text: impl Into<String>, is_error: bool) {
        let text = text.into();
        self.status = Status {
            // Errors may quote a server's echo of a key or a URL with credentials.
            text: crate::core::redact::redacted(&text).into_owned(),
            is_error,
        };
    }

    /// The window title: file (or what the prompt came from), unsaved mark, app name.
    pub fn window_title(&self) -> String {
        let name = match (&self.prompt_path, &self.source) {
            (Some(path), _) => path.file_name().map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into(),
            ),
            (
                None,
                Some(PromptSource::Stored {
                    session, position, ..
                }),
            ) => format!("session #{session} turn {position}"),
            (None, Some(PromptSource::Pasted)) => "imported body".to_string(),
            _ => "untitled prompt".to_string(),
        };
        let dirty = if self.has_unsaved_work() {
            " • unsaved"
        } else {
            ""
        };
        let db = match (&self.sessions.db_path, self.sessions.db_shown) {
            (Some(path), true) => format!(
                " — {}",
                path.file_name().map_or_else(
                    || path.display().to_string(),
                    |n| n.to_string_lossy().into()
                )
            ),
            _ => String::new(),
        };
        format!("{name}{dirty}{db} — promptwire")
    }
}
