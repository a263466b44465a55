//! File work of the workbench, as functions the workers run (never on the UI thread): read a
//! Prompt file (or import a captured body opened by mistake), import a pasted body, read a Codex
//! `config.toml`, and the exact bytes of each export (owner-readable when written).

use std::io::Read as _;
use std::path::Path;
use std::sync::Arc;

use super::event::OpenedFile;
use super::settings::ExportKind;
use super::state::AppState;
use super::worker::ViewResult;
use crate::core::codex_config::{ImportedProvider, providers_from_config};
use crate::core::error::PromptError;
use crate::core::export::{HarEntry, har_log};
use crate::core::import::{ImportOutcome, import_body};
use crate::core::models::ModelCatalog;
use crate::core::prompt::Prompt;

/// Largest file the workbench opens.
pub const MAX_OPEN_BYTES: u64 = 64 * 1024 * 1024;

/// Shows a native file dialog (`show`, which blocks its thread: call it on a job) and says what
/// it answered: the path chosen (`None`: cancelled) and whether no dialog could be shown at all —
/// a dialog that "answers" at once was never shown: no dialog service is running.
pub fn dialog_choice(
    show: impl FnOnce() -> Option<std::path::PathBuf>,
) -> (Option<std::path::PathBuf>, bool) {
    let started = std::time::Instant::now();
    let choice = show();
    let unavailable = choice.is_none() && started.elapsed().as_millis() < 300;
    (choice, unavailable)
}

/// Reads at most [`MAX_OPEN_BYTES`] of UTF-8 text from `path` (bounded while reading).
pub fn read_limited(path: &Path) -> Result<String, String> {
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    file.take(MAX_OPEN_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_OPEN_BYTES {
        return Err(format!(
            "larger than the {} MiB the workbench opens",
            MAX_OPEN_BYTES / (1024 * 1024)
        ));
    }
    String::from_utf8(bytes).map_err(|e| format!("not UTF-8 text ({e})"))
}

/// Reads a Prompt file; a file that is a captured request body instead is imported.
pub fn read_prompt_file(path: &Path, catalog: &ModelCatalog) -> Result<OpenedFile, String> {
    let shown = path.display();
    let text = read_limited(path).map_err(|e| format!("{shown}: {e}"))?;
    match Prompt::from_json_str(&text) {
        Ok(prompt) => Ok(OpenedFile::Prompt(Box::new(prompt))),
        Err(prompt_err) => {
            // Not a Prompt: maybe a captured body.
            if let Ok(value) = serde_json::from_str::<serde_json::Value>(&text)
                && value.get("input").is_some()
                && let Ok(outcome) = import_body(&value, catalog)
            {
                return Ok(OpenedFile::Body(Box::new(outcome)));
            }
            Err(format!("{shown}: {prompt_err}"))
        }
    }
}

/// What a file opened with Open… or dropped on the window holds (by its content, not its name).
#[derive(Debug)]
pub enum Opened {
    /// A Prompt file, a captured body or a curl command: into the form.
    Prompt(OpenedFile),
    /// A HAR log (its text): imported as a session.
    Har(String),
    /// A promptwire session database: the app switches to it.
    Database,
    /// A Codex rollout file: imported.
    Rollout,
    /// A folder (of Codex rollouts): imported.
    Folder,
}

/// The first bytes of a SQLite database file.
const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

/// True when the first line of `text` is a Codex rollout line (`{"timestamp", "type", "payload"}`).
fn is_rollout(text: &str) -> bool {
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    serde_json::from_str::<serde_json::Value>(first).is_ok_and(|line| {
        line.get("payload").is_some()
            && line
                .get("type")
                .and_then(serde_json::Value::as_str)
                .is_some_and(|t| {
                    matches!(
                        t,
                        "session_meta"
                            | "response_item"
                            | "turn_context"
                            | "event_msg"
                            | "compacted"
                    )
                })
    })
}

/// Reads `path` and says what it holds: a folder, a SQLite database, a HAR log, a Codex
/// rollout, a curl command, else a Prompt file or captured body ([`read_prompt_file`]).
pub fn read_any(path: &Path, catalog: &ModelCatalog) -> Result<Opened, String> {
    let shown = path.display();
    if path.is_dir() {
        return Ok(Opened::Folder);
    }
    let mut head = [0u8; 16];
    let read = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .map_err(|e| format!("{shown}: {e}"))?;
    if head.get(..read) == Some(SQLITE_MAGIC) {
        return Ok(Opened::Database);
    }
    let text = read_limited(path).map_err(|e| format!("{shown}: {e}"))?;
    if crate::core::import::curl::looks_like_curl(&text) {
        return import_curl_text(&text, catalog)
            .map(|o| Opened::Prompt(OpenedFile::Body(Box::new(o))))
            .map_err(|e| format!("{shown}: {e}"));
    }
    if is_rollout(&text) {
        return Ok(Opened::Rollout);
    }
    let trimmed = text.trim_start();
    if trimmed.starts_with('{')
        && let Ok(value) = serde_json::from_str::<serde_json::Value>(trimmed)
        && value.pointer("/log/entries").is_some()
    {
        return Ok(Opened::Har(text));
    }
    read_prompt_file(path, catalog).map(Opened::Prompt)
}

/// Imports a curl command (its body, and its headers as a capture) into a Prompt.
pub fn import_curl_text(text: &str, catalog: &ModelCatalog) -> Result<ImportOutcome, String> {
    let request = crate::core::import::curl::parse_curl(text).map_err(|e| e.to_string())?;
    let body = request
        .body
        .as_deref()
        .ok_or_else(|| "the curl command sends no body".to_string())?;
    let value: serde_json::Value = serde_json::from_str(body).map_err(|e| {
        format!(
            "the curl command's body: {}",
            PromptError::from_serde("", &e)
        )
    })?;
    crate::core::import::import_request(&value, Some(&request.captured_headers()), catalog)
        .map_err(|e| e.to_string())
}

/// Imports a captured body given as JSON text (or a curl command that sends one).
pub fn import_body_text(text: &str, catalog: &ModelCatalog) -> Result<ImportOutcome, String> {
    if crate::core::import::curl::looks_like_curl(text) {
        return import_curl_text(text, catalog);
    }
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| PromptError::from_serde("", &e).to_string())?;
    import_body(&value, catalog).map_err(|e| e.to_string())
}

/// Reads the providers of a Codex `config.toml`.
pub fn read_codex_config(path: &Path) -> Result<Vec<ImportedProvider>, String> {
    let shown = path.display();
    let text = read_limited(path).map_err(|e| format!("{shown}: {e}"))?;
    providers_from_config(&text).map_err(|e| format!("{shown}: {e}"))
}

/// What an export writes from, taken from the state on the UI thread by sharing (pointers, no
/// copy of the prompt or the body); the bytes are made from it on the worker.
#[derive(Debug, Clone)]
pub enum ExportSource {
    /// The Prompt file.
    Prompt(Arc<Prompt>),
    /// A compiled column (its body, WebSocket frame or headers).
    View(Box<ViewResult>),
    /// A stored request of the open session.
    Stored {
        /// The database.
        db: std::path::PathBuf,
        /// The session.
        session: i64,
        /// The request.
        request: i64,
    },
}

impl ExportSource {
    /// What exporting `kind` of column `column` writes from; fails when nothing is compiled.
    pub fn of(state: &AppState, kind: ExportKind, column: usize) -> Result<Self, String> {
        if kind == ExportKind::Prompt {
            return Ok(Self::Prompt(Arc::clone(&state.prompt)));
        }
        if matches!(kind, ExportKind::StoredBody | ExportKind::StoredHar) {
            let model = &state.sessions;
            return match (&model.db_path, model.open, model.rows.get(column)) {
                (Some(db), Some(session), Some(row)) => Ok(Self::Stored {
                    db: db.clone(),
                    session,
                    request: row.id,
                }),
                _ => Err("No stored request selected".to_string()),
            };
        }
        match state.views.get(column) {
            Some(view) => Ok(Self::View(Box::new(view.clone()))),
            None => Err("Nothing compiled to export yet".to_string()),
        }
    }

    /// The exact bytes an export of `kind` writes: the Prompt file, the column's bytes exactly
    /// as the view's size counts them (no added newline), or a HAR 1.2 log (secrets redacted).
    /// Pretty-printing, HAR and redaction of a large body take time: run on a worker.
    pub fn bytes(&self, kind: ExportKind) -> Result<Vec<u8>, String> {
        match (self, kind) {
            (Self::Prompt(prompt), _) => Ok(prompt.to_json_pretty().into_bytes()),
            (
                Self::Stored {
                    db,
                    session,
                    request,
                },
                kind,
            ) => stored_bytes(db, *session, *request, kind),
            (Self::View(_), ExportKind::StoredBody | ExportKind::StoredHar) => {
                Err("not a stored request".to_string())
            }
            (Self::View(view), ExportKind::Json | ExportKind::Prompt) => {
                Ok(view.export_text().into_owned().into_bytes())
            }
            (Self::View(view), ExportKind::Har) => {
                let started =
                    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
                let log = har_log(&[HarEntry::from_compiled(&view.compiled, &started)], true)
                    .map_err(|e| format!("not exported: {e}"))?;
                serde_json::to_vec_pretty(&log).map_err(|e| e.to_string())
            }
        }
    }
}

/// A stored request's exact body, or a HAR 1.2 log of it alone (secrets redacted).
fn stored_bytes(
    db: &Path,
    session: i64,
    request: i64,
    kind: ExportKind,
) -> Result<Vec<u8>, String> {
    let store = crate::store::seed::open_seeded(db).map_err(|e| e.to_string())?;
    if kind != ExportKind::StoredHar {
        return store
            .body(request)
            .map(|b| b.bytes)
            .map_err(|e| e.to_string());
    }
    let index = store
        .requests(session, crate::store::Page::ALL)
        .map_err(|e| e.to_string())?
        .iter()
        .position(|r| r.id == request)
        .ok_or_else(|| format!("request {request} is not in session #{session}"))?;
    let mut log = store.export_har(session, true).map_err(|e| e.to_string())?;
    if let Some(entries) = log
        .pointer_mut("/log/entries")
        .and_then(serde_json::Value::as_array_mut)
    {
        let kept = entries.get(index).cloned();
        entries.clear();
        entries.extend(kept);
    }
    serde_json::to_vec_pretty(&log).map_err(|e| e.to_string())
}

/// The exact bytes an export of column `column` writes ([`ExportSource::bytes`]), computed
/// here and now (the app itself makes them on a worker).
pub fn export_bytes(state: &AppState, kind: ExportKind, column: usize) -> Result<Vec<u8>, String> {
    ExportSource::of(state, kind, column)?.bytes(kind)
}
