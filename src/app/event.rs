//! [`AppEvent`]: what workers report to the app. One variant per kind of result; the app applies
//! them in `AppState::apply_event` (see `handle.rs`). Adding a job means adding a variant here
//! and a worker function that reports it.

use std::path::PathBuf;
use std::sync::Arc;

use super::jobs::JobId;
use super::settings::ExportKind;
use super::worker::ViewResult;
use crate::core::codex_config::ImportedProvider;
use crate::core::import::ImportOutcome;
use crate::core::prompt::Prompt;

/// What a file turned out to hold.
#[derive(Debug)]
pub enum OpenedFile {
    /// A Prompt file.
    Prompt(Box<Prompt>),
    /// A captured request body, imported into a prompt.
    Body(Box<ImportOutcome>),
}

/// Where a loaded prompt came from (status text, and which sidebar entry to select).
#[derive(Debug, Clone, PartialEq)]
pub enum PromptSource {
    /// A file on disk.
    File(PathBuf),
    /// Pasted into the import dialog, or a body file chosen there.
    Pasted,
    /// A stored request of a recorded session.
    Stored {
        /// Session id.
        session: i64,
        /// Request id.
        request: i64,
        /// Position (turn) in the session.
        position: i64,
    },
}

/// What a worker reports.
#[derive(Debug)]
pub enum AppEvent {
    /// A compile finished.
    Compiled {
        /// Prompt revision compiled.
        revision: u64,
        /// Settings generation compiled.
        settings_generation: u64,
        /// The views, or the compile error.
        result: Result<Vec<ViewResult>, String>,
        /// Wall time of compile + render + diff.
        millis: f64,
    },
    /// Token counts for the views of a compile.
    Tokens {
        /// Prompt revision.
        revision: u64,
        /// Settings generation.
        settings_generation: u64,
        /// One count per column.
        tokens: Vec<usize>,
    },
    /// A Prompt file or captured body was read and parsed.
    PromptLoaded {
        /// Where it came from.
        source: PromptSource,
        /// The prompt, or why it could not be loaded.
        result: Result<OpenedFile, String>,
    },
    /// A file opened with Open… or dropped on the window was read (`files::read_any`).
    Opened {
        /// The file.
        path: PathBuf,
        /// What it holds, or why it could not be read.
        result: Result<super::files::Opened, String>,
    },
    /// A HAR file was imported as a session (`open.rs`).
    HarImported {
        /// The file.
        path: PathBuf,
        /// The new session, its request count and a note on what was left out (a rollout's
        /// unreadable last line), or why not.
        result: Result<(i64, usize, Option<String>), String>,
    },
    /// A file was written.
    FileWritten {
        /// Where.
        path: PathBuf,
        /// What.
        kind: ExportKind,
        /// For a Prompt file: the prompt that was written (compared by pointer, never guessed).
        prompt: Option<Arc<Prompt>>,
        /// Bytes written, or why not.
        result: Result<usize, super::files::WriteError>,
    },
    /// The file dialog's typed path was completed (Tab).
    PathCompleted(super::files::PathCompletion),
    /// A read of the sessions model reports (`sessions.rs`).
    SessionsModel(super::sessions::SessionsEvent),
    /// A write changed the store (a send, a Re-send, the proxy, an import): the one event that
    /// refreshes the sessions model (`sessions::store_changed`).
    StoreChanged(super::sessions::StoreChange),
    /// Providers were read from a Codex config.toml.
    ProvidersImported {
        /// The file.
        path: PathBuf,
        /// What it held.
        result: Result<Vec<ImportedProvider>, String>,
    },
    /// The native file dialog closed.
    PathChosen {
        /// The chosen path (None: cancelled or unavailable).
        path: Option<PathBuf>,
        /// No dialog could be shown (no dialog service): the user should type the path.
        unavailable: bool,
    },
    /// A job says how far it got.
    Progress {
        /// The job.
        job: JobId,
        /// What it is doing.
        text: String,
        /// Steps done.
        done: u64,
        /// Steps in all (0: unknown).
        total: u64,
    },
    /// A job failed in a way that belongs in the status bar.
    Failed {
        /// What was being done.
        what: String,
        /// Why it failed.
        error: String,
    },
    /// A job ended (sent by the bridge after the job returns).
    JobFinished {
        /// The job.
        job: JobId,
    },
    /// The workbench's send reports (`send.rs`).
    Send(super::send::SendReport),
    /// A job of the Sessions view reports (`session_view.rs`).
    Sessions(super::session_view::SessionEvent),
    /// A recording proxy or replay endpoint reports (`proxy.rs`).
    Record(super::proxy::RecordEvent),
    /// A Codex session or catalog import reports (`imports.rs`).
    Import(super::imports::ImportEvent),
    /// A job of the Traffic view reports (`traffic.rs`).
    Traffic(super::traffic::TrafficEvent),
    /// An OpenTelemetry export reports (`otel.rs`).
    Otel(super::otel::OtelEvent),
}
