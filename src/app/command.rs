//! [`AppCommand`]: everything a panel can ask the app for, and [`PromptEdit`], the edits of the
//! prompt (each one undoable). Panels send them through a
//! [`CommandSender`](super::sender::CommandSender); `handle.rs` applies them.

use std::path::PathBuf;

use super::jobs::JobId;
use super::settings::{Column, ExportKind, ThemeChoice};
use crate::core::items::ResponseItem;
use crate::core::prompt::{CompileTarget, PromptCacheOptions, Setting};
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
    /// `prompt_cache_options` (mode, ttl, comparison response id).
    CacheOptions(PromptCacheOptions),
    /// `prompt_cache_retention`.
    CacheRetention(Option<String>),
    /// The compile target the prompt records (dialect, rules, provider, base URL, auth).
    Target(CompileTarget),
    /// Only the base URL of the target (typed, so consecutive edits make one undo step).
    BaseUrl(Option<String>),
    /// The top-level body fields sent over what the rules compile (`temperature`…).
    BodyOverrides(crate::core::json::JsonMap),
}

/// A text field of the prompt that is typed into: consecutive edits of the same field make a
/// single undo step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EditField {
    /// The model slug.
    Model,
    /// The base instructions.
    Instructions,
    /// Input item `i`.
    Item(usize),
    /// Tool `i`.
    Tool(usize),
    /// The output schema.
    Schema,
    /// The prompt cache key.
    CacheKey,
    /// The prompt cache options' typed fields (ttl, comparison response id).
    CacheOptions,
    /// The target's base URL.
    BaseUrl,
    /// The other body fields' values.
    BodyOverrides,
}

impl PromptEdit {
    /// The text field this edit types into, when it is one (consecutive edits of the same
    /// field make a single undo step).
    pub fn field(&self) -> Option<EditField> {
        match self {
            Self::Model(_) => Some(EditField::Model),
            Self::BaseInstructions(_) => Some(EditField::Instructions),
            Self::SetItem(i, _) => Some(EditField::Item(*i)),
            Self::SetTool(i, _) => Some(EditField::Tool(*i)),
            Self::OutputSchema(_) => Some(EditField::Schema),
            Self::CacheKey(_) => Some(EditField::CacheKey),
            Self::CacheOptions(_) => Some(EditField::CacheOptions),
            Self::BaseUrl(_) => Some(EditField::BaseUrl),
            Self::BodyOverrides(_) => Some(EditField::BodyOverrides),
            _ => None,
        }
    }
}

/// Something the UI asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum AppCommand {
    /// Change the prompt.
    Edit(Box<PromptEdit>),
    /// Undo the last prompt edit.
    Undo,
    /// Redo an undone edit.
    Redo,
    /// Replace the compiled columns.
    SetColumns(Vec<Column>),
    /// Text or tree display of compiled JSON.
    SetTreeView(bool),
    /// Collapse, maximise or resize a pane.
    Pane(super::panes::PaneCommand),
    /// Theme.
    SetTheme(ThemeChoice),
    /// Sets the limits on what comes back (clamped to their allowed ranges).
    SetLimits(super::limits::Limits),
    /// Load a bundled example prompt.
    LoadExample(&'static str),
    /// Open a file: read on a worker, then what it holds decides (a Prompt, captured body or
    /// curl command goes into the form — asking first over unsaved work —; a HAR, rollout,
    /// folder or database does not touch the form).
    Open(PathBuf),
    /// Put the file Open… read, and that waited for the unsaved-changes question, into the form.
    ApplyPendingOpen,
    /// Save to the current path (or ask for one).
    Save,
    /// Show the file dialog for a kind of export (None: open a prompt).
    ShowFileDialog(Option<ExportKind>, usize),
    /// Write an export (or the prompt) to a path (a file already there, other than the one the
    /// prompt came from, is not replaced: the dialog asks).
    WriteFile(ExportKind, usize, PathBuf),
    /// Replace the existing file the file dialog asked about.
    ReplaceFile,
    /// Complete the path typed in the file dialog (Tab).
    CompletePath(String),
    /// Ask the system file dialog for the open file dialog's path.
    Browse,
    /// Open the paste-a-body dialog.
    ShowImportDialog,
    /// Import a pasted captured body.
    ImportBody(String),
    /// Import a captured body from a file (chosen in the import dialog).
    ImportBodyFile(PathBuf),
    /// Import providers from a Codex config.toml.
    ImportCodexConfig(PathBuf),
    /// Close the open dialog.
    CloseDialog,
    /// Drop unsaved edits and do what the unsaved-changes dialog was asked for.
    DiscardAndContinue,
    /// Save the prompt, and once the save succeeded do what the unsaved-changes dialog was
    /// asked for.
    SaveAndContinue,
    /// The raw JSON editor of `list` ("item", "tool") holds an edit of entry `index` that does
    /// not parse (None: no longer). Such an edit counts as unsaved work.
    UnappliedEdit {
        /// Which list editor.
        list: &'static str,
        /// The entry whose edit is pending, or None.
        index: Option<usize>,
    },
    /// The window is asked to close (asks first when there are unsaved edits).
    RequestClose,
    /// Send the target column and stream the answer into the timeline (`send.rs`).
    Send,
    /// Stop, pick the target, or a timeline command (`send.rs`).
    SendBar(super::send::SendCommand),
    /// Select an item in the list.
    SelectItem(Option<usize>),
    /// Select a tool.
    SelectTool(Option<usize>),
    /// Read the session list again.
    RefreshSessions,
    /// Expand a session (and read its requests).
    OpenSession(i64),
    /// Load a stored request's body into the form.
    LoadStoredRequest {
        /// Session id.
        session: i64,
        /// Request id.
        request: i64,
        /// Its position (turn) in the session.
        position: i64,
    },
    /// Something the UI did itself (copied to the clipboard): show it in the status bar.
    Notify(String),
    /// Stop a running job.
    CancelJob(JobId),
    /// The Sessions view (browser, prefix view, replay, compare): `session_view.rs`.
    Sessions(super::session_view::SessionCommand),
    /// The Record panel: recording proxy and replay endpoint (`proxy.rs`).
    Record(super::proxy::RecordCommand),
    /// Codex session and model catalog imports (`imports.rs`).
    Import(super::imports::ImportCommand),
    /// The Traffic view (`traffic.rs`).
    Traffic(super::traffic::TrafficCommand),
    /// OpenTelemetry export (`otel.rs`).
    Otel(super::otel::OtelCommand),
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
