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

/// Why a file was not written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WriteError {
    /// The path names a file that is not the one the prompt came from: the user is asked
    /// before it is replaced.
    #[error("a file exists there: replace it, or choose another path")]
    Exists,
    /// The bytes could not be made or written.
    #[error("{0}")]
    Failed(String),
}

/// Writes `bytes` to `path` (owner-readable), refusing to replace a file that exists unless
/// `replace`.
pub fn write_new_or_replace(path: &Path, bytes: &[u8], replace: bool) -> Result<(), WriteError> {
    if !replace && path.exists() {
        return Err(WriteError::Exists);
    }
    crate::store::har::write_private(path, bytes).map_err(|e| WriteError::Failed(e.to_string()))
}

/// Entries listed at most when a path is completed (a huge folder completes from these).
pub const MAX_COMPLETION_ENTRIES: usize = 20_000;

/// What Tab in a path field did to the text typed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PathCompletion {
    /// The text it completed.
    pub typed: String,
    /// The completed text (the typed text when nothing could be added).
    pub text: String,
    /// The names that match when more than one does (at most 12), for the dialog to show.
    pub candidates: Vec<String>,
}

/// Completes `typed` from `entries` (the names in its folder, each with whether it is a folder):
/// the longest common start of the names that begin with its last component, a `/` after a
/// single folder. Pure: [`complete_path`] lists the folder.
pub fn complete_from(typed: &str, entries: &[(String, bool)]) -> PathCompletion {
    let (folder, start) = match typed.rfind('/') {
        Some(i) => (&typed[..=i], &typed[i + 1..]),
        None => ("", typed),
    };
    let mut matching: Vec<&(String, bool)> = entries
        .iter()
        .filter(|(name, _)| {
            name.starts_with(start) && (!name.starts_with('.') || start.starts_with('.'))
        })
        .collect();
    matching.sort();
    let text = match matching.as_slice() {
        [] => typed.to_string(),
        [(name, is_dir)] => format!("{folder}{name}{}", if *is_dir { "/" } else { "" }),
        [(first, _), rest @ ..] => {
            let mut common = first.as_str();
            for (name, _) in rest {
                let shared = common
                    .char_indices()
                    .zip(name.chars())
                    .find(|((_, a), b)| a != b)
                    .map_or(common.len().min(name.len()), |((i, _), _)| i);
                common = &common[..shared];
            }
            format!("{folder}{common}")
        }
    };
    let candidates = if matching.len() > 1 {
        matching
            .iter()
            .take(12)
            .map(|(name, is_dir)| format!("{name}{}", if *is_dir { "/" } else { "" }))
            .collect()
    } else {
        Vec::new()
    };
    PathCompletion {
        typed: typed.to_string(),
        text,
        candidates,
    }
}

/// Completes `typed` from the folder it names (relative paths: the working folder), reading at
/// most [`MAX_COMPLETION_ENTRIES`] entries. A folder that cannot be read completes nothing.
pub fn complete_path(typed: &str) -> PathCompletion {
    let folder = match typed.rfind('/') {
        Some(0) => Path::new("/"),
        Some(i) => Path::new(&typed[..i]),
        None => Path::new("."),
    };
    let entries: Vec<(String, bool)> = std::fs::read_dir(folder)
        .map(|dir| {
            dir.filter_map(Result::ok)
                .take(MAX_COMPLETION_ENTRIES)
                .filter_map(|entry| {
                    let name = entry.file_name().into_string().ok()?;
                    let is_dir = entry.file_type().is_ok_and(|t| t.is_dir())
                        || std::fs::metadata(entry.path()).is_ok_and(|m| m.is_dir());
                    Some((name, is_dir))
                })
                .collect()
        })
        .unwrap_or_default();
    complete_from(typed, &entries)
}

#[cfg(test)]
mod completion_tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn tab_completes_a_unique_name_and_the_common_start_of_several() {
        let entries: Vec<(String, bool)> = [
            ("prompts", true),
            ("prompt.json", false),
            ("promptwire.sqlite", false),
            ("README.md", false),
            (".hidden", false),
        ]
        .iter()
        .map(|(n, d)| (n.to_string(), *d))
        .collect();
        let cases: Vec<(&str, String, Vec<String>)> = [
            "/work/REA",
            "/work/prom",
            "/work/prompts",
            "/work/x",
            "/work/",
        ]
        .into_iter()
        .map(|typed| {
            let c = complete_from(typed, &entries);
            (typed, c.text, c.candidates)
        })
        .collect();
        assert_eq!(
            cases,
            vec![
                ("/work/REA", "/work/README.md".to_string(), vec![]),
                (
                    "/work/prom",
                    "/work/prompt".to_string(),
                    vec![
                        "prompt.json".to_string(),
                        "prompts/".to_string(),
                        "promptwire.sqlite".to_string()
                    ]
                ),
                ("/work/prompts", "/work/prompts/".to_string(), vec![]),
                ("/work/x", "/work/x".to_string(), vec![]),
                (
                    "/work/",
                    "/work/".to_string(),
                    vec![
                        "README.md".to_string(),
                        "prompt.json".to_string(),
                        "prompts/".to_string(),
                        "promptwire.sqlite".to_string()
                    ]
                ),
            ]
        );
    }

    #[test]
    fn a_real_folder_completes_and_an_existing_file_is_not_replaced_unasked() {
        let dir = std::env::temp_dir().join(format!("pw-complete-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).expect("dir");
        std::fs::write(dir.join("only-file.json"), "{}").expect("file");
        let base = format!("{}/", dir.display());
        assert_eq!(
            complete_path(&format!("{base}on")).text,
            format!("{base}only-file.json")
        );
        assert_eq!(
            complete_path(&format!("{base}su")).text,
            format!("{base}sub/")
        );
        let file = dir.join("only-file.json");
        assert_eq!(
            write_new_or_replace(&file, b"new", false),
            Err(WriteError::Exists)
        );
        assert_eq!(std::fs::read(&file).expect("read"), b"{}");
        assert_eq!(write_new_or_replace(&file, b"new", true), Ok(()));
        assert_eq!(std::fs::read(&file).expect("read"), b"new");
        std::fs::remove_dir_all(&dir).expect("clean up");
    }
}
