//! Open anything: what Open… or a file dropped on the window does once its content is known
//! ([`files::read_any`](super::files::read_any) on a worker): a Prompt file, captured body or
//! curl command goes into the form; a HAR log is imported as a session (on the database's writer
//! thread, the status saying so while it runs) and opened in the Sessions view; a Codex rollout
//! file or folder is imported; another promptwire database becomes the app's session database.

use std::path::{Path, PathBuf};

use super::event::{AppEvent, PromptSource};
use super::files::Opened;
use super::imports::ImportCommand;
use super::jobs::JobContext;
use super::session_view::{MainView, SessionCommand};
use super::sessions::StoreChange;
use super::state::{AppState, Dialog};
use crate::core::rollout::Limits;
use crate::store::seed::open_seeded;
use crate::store::{DEFAULT_MAX_ROLLOUT_BYTES, Writer};

/// The session name of an imported file: its stem.
fn stem(path: &Path) -> String {
    path.file_stem().map_or_else(
        || "import".to_string(),
        |s| s.to_string_lossy().into_owned(),
    )
}

/// Closes the Open… dialog (what it opened is not a prompt).
fn close_file_dialog(state: &mut AppState) {
    if matches!(state.dialog, Some(Dialog::File { kind: None, .. })) {
        state.dialog = None;
    }
}

/// Imports on the database's writer thread, waited for on a worker; a HAR reports its progress
/// as the job's (about a hundred steps) and stops, keeping nothing, when the job is cancelled.
fn import_on_writer(
    db: &Path,
    path: &Path,
    har: Option<String>,
    job: &JobContext,
) -> Result<(i64, usize, Option<String>), String> {
    drop(open_seeded(db).map_err(|e| e.to_string())?);
    let writer = Writer::open(db).map_err(|e| e.to_string())?;
    let path = path.to_path_buf();
    let job = job.clone();
    let done = writer.run(move |store| match har {
        Some(text) => {
            let what = format!("Importing {}", stem(&path));
            let mut progress = |done: usize, total: usize| {
                let step = (total / 100).max(1);
                if done.is_multiple_of(step) || done == total {
                    let percent = done * 100 / total.max(1);
                    job.progress(format!("{what}: {percent}%"), done as u64, total as u64)
                } else {
                    !job.is_cancelled()
                }
            };
            store
                .import_har_with(&text, &stem(&path), &path, &mut progress)
                .map(|(session, requests)| (session, requests, None))
                .map_err(|e| e.to_string())
        }
        None => {
            let imports = store
                .import_rollout_file(&path, DEFAULT_MAX_ROLLOUT_BYTES, &Limits::default())
                .map_err(|e| e.to_string())?;
            let first = imports
                .iter()
                .find_map(|i| i.session_id)
                .ok_or_else(|| "nothing new: its thread was imported before".to_string())?;
            // A last line that could not be read is said, not passed over.
            let note = imports.iter().find_map(|i| i.truncated_line).map(|line| {
                format!("line {line} could not be read (cut off or damaged) and was left out")
            });
            Ok((first, imports.iter().map(|i| i.requests).sum(), note))
        }
    });
    done.recv()
        .map_err(|_| "the database's writer stopped before the import ran".to_string())?
}

/// Starts the import of a HAR log (`har`: its text) or a rollout file (`None`).
fn import(state: &mut AppState, path: PathBuf, har: Option<String>) {
    let Some(db) = state.sessions.db_path.clone() else {
        return state.set_status("No session database to import into", true);
    };
    close_file_dialog(state);
    state.set_status(format!("Importing {}…", path.display()), false);
    state.sessions.importing = Some(path.clone());
    // The Sessions tab shows the import's progress and its Cancel, then the new session.
    state.handle(super::AppCommand::Sessions(SessionCommand::ShowView(
        MainView::Sessions,
    )));
    let spawned = state.workers.spawn("import-file", move |ctx| {
        let result = import_on_writer(&db, &path, har, ctx);
        ctx.report(AppEvent::HarImported { path, result });
    });
    match spawned {
        Ok(job) => state.sessions.import_job = Some(job),
        Err(e) => {
            state.sessions.importing = None;
            state.set_status(e, true);
        }
    }
}

/// A job ended: when it was the file import and it never reported (it was cancelled), the
/// import is over and says so.
pub fn job_finished(state: &mut AppState, job: super::jobs::JobId) {
    if state.sessions.import_job != Some(job) {
        return;
    }
    state.sessions.import_job = None;
    if let Some(path) = state.sessions.importing.take() {
        state.set_status(
            format!(
                "Import of {} cancelled: nothing was imported",
                path.display()
            ),
            false,
        );
    }
}

/// Applies what a file turned out to hold.
pub fn opened(state: &mut AppState, path: PathBuf, result: Result<Opened, String>) {
    match result {
        Err(e) => state.prompt_loaded(PromptSource::File(path), Err(e)),
        Ok(Opened::Prompt(file)) => {
            // It waits, read, while the unsaved-changes question (if any) is asked.
            state.pending_open = Some((path, Box::new(file)));
            if state.replace_guarded(super::AppCommand::ApplyPendingOpen) {
                state.handle(super::AppCommand::ApplyPendingOpen);
            }
        }
        Ok(Opened::Har(text)) => import(state, path, Some(text)),
        Ok(Opened::Rollout) => import(state, path, None),
        Ok(Opened::Folder) => {
            close_file_dialog(state);
            state.handle(super::AppCommand::Import(ImportCommand::CodexSessions(
                path,
            )));
        }
        Ok(Opened::Database) => {
            close_file_dialog(state);
            state.handle(super::AppCommand::Sessions(SessionCommand::SwitchDb(path)));
            state.handle(super::AppCommand::Sessions(SessionCommand::ShowView(
                MainView::Sessions,
            )));
        }
    }
}

/// Applies a finished import: the new session opens in the Sessions view.
pub fn har_imported(
    state: &mut AppState,
    path: &Path,
    result: Result<(i64, usize, Option<String>), String>,
) {
    state.sessions.importing = None;
    state.sessions.import_job = None;
    match result {
        Ok((session, requests, note)) => {
            state.set_status(
                format!(
                    "Imported {} as session #{session} ({}){}",
                    path.display(),
                    crate::core::format::count(requests as u64, "request"),
                    note.as_deref()
                        .map_or_else(String::new, |note| format!("; {note}"))
                ),
                note.is_some(),
            );
            state.handle(super::AppCommand::Sessions(SessionCommand::ShowView(
                MainView::Sessions,
            )));
            super::sessions::store_changed(
                state,
                StoreChange {
                    session: Some(session),
                    open: true,
                },
            );
        }
        Err(e) => state.set_status(format!("{}: {e}", path.display()), true),
    }
}
