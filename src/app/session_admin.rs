//! Renaming and deleting sessions, and switching to another session database. Every write goes
//! through the database's one writer thread ([`Writer::run`]), waited for on a worker. A delete
//! is undoable until the app closes or the next delete: the session is only hidden from the
//! listing ([`SessionsModel::pending_delete`](super::sessions::SessionsModel::pending_delete))
//! and its rows kept; the next delete, or closing the app ([`commit_pending_delete`]), deletes
//! it for real.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::error::{AppError, AppResult};
use super::event::AppEvent;
use super::sessions::{self, SessionsEvent, StoreChange};
use super::state::AppState;
use crate::store::Writer;
use crate::store::seed::open_seeded;

/// A delete that can still be undone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingDelete {
    /// The session.
    pub session: i64,
    /// Its name (for the Undo bar).
    pub name: String,
}

/// Runs `write` on the database's writer thread and waits for it (on a worker thread).
fn on_writer(
    db: &Path,
    write: impl FnOnce(&mut crate::store::Store) -> crate::store::StoreResult<()> + Send + 'static,
) -> AppResult<()> {
    drop(open_seeded(db)?);
    let writer = Writer::open(db)?;
    Ok(writer.run(write).recv().map_err(|_| {
        AppError::Worker("the database's writer stopped before the write ran".to_string())
    })??)
}

/// Starts a write; its result comes back as [`SessionsEvent::Edited`].
fn start_write(
    state: &mut AppState,
    done: String,
    write: impl FnOnce(&mut crate::store::Store) -> crate::store::StoreResult<()> + Send + 'static,
) {
    let Some(db) = state.sessions.db_path.clone() else {
        state.sessions.error = Some(AppError::NoDatabase.to_string());
        return;
    };
    state.sessions.loading += 1;
    let spawned = state.workers.spawn("session-write", move |ctx| {
        let result = on_writer(&db, write).map(|()| done);
        ctx.report(AppEvent::SessionsModel(SessionsEvent::Edited { result }));
    });
    if let Err(e) = spawned {
        state.sessions.loading -= 1;
        state.sessions.error = Some(e.to_string());
    }
}

/// Renames `session`.
pub fn rename(state: &mut AppState, session: i64, name: String) {
    let name = name.trim().to_string();
    if name.is_empty() {
        return;
    }
    let done = format!("Renamed session #{session} to “{name}”");
    start_write(state, done, move |store| {
        store.rename_session(session, &name)
    });
}

/// Deletes `session` (undoable): the previous pending delete is carried out, this one hidden.
pub fn delete(state: &mut AppState, session: i64) {
    if let Some(previous) = state.sessions.pending_delete.take() {
        let id = previous.session;
        start_write(state, format!("Deleted session #{id}"), move |store| {
            store.delete_session(id)
        });
    }
    let name = state
        .sessions
        .sessions
        .iter()
        .find(|s| s.id == session)
        .map_or_else(String::new, |s| s.name.clone());
    state.sessions.pending_delete = Some(PendingDelete { session, name });
    if state.sessions.open == Some(session) {
        sessions::close(state);
    }
    if state.send.into == Some(session) {
        state.send.into = None;
    }
    state.set_status(
        format!("Deleted session #{session} (Undo brings it back)"),
        false,
    );
    sessions::list(state);
}

/// Brings the pending deleted session back.
pub fn undo_delete(state: &mut AppState) {
    if let Some(pending) = state.sessions.pending_delete.take() {
        state.set_status(format!("Session #{} is back", pending.session), false);
        sessions::list(state);
    }
}

/// Carries out the pending delete now, waiting for the writer up to `timeout` (the app is
/// closing). Returns whether a delete was carried out.
pub fn commit_pending_delete(state: &mut AppState, timeout: Duration) -> bool {
    let (Some(pending), Some(db)) = (
        state.sessions.pending_delete.take(),
        state.sessions.db_path.clone(),
    ) else {
        return false;
    };
    let Ok(writer) = Writer::open(&db) else {
        return false;
    };
    let id = pending.session;
    writer
        .run(move |store| store.delete_session(id))
        .recv_timeout(timeout)
        .is_ok_and(|r| r.is_ok())
}

/// Switches the app to the session database at `path` (a pending delete of the previous one
/// is carried out first): the listing, the open session and the views start over on it.
pub fn switch_db(state: &mut AppState, path: PathBuf) {
    commit_pending_delete(state, Duration::from_secs(5));
    sessions::close(state);
    // Its session ids mean nothing in another database.
    state.send.into = None;
    crate::app::traffic::database_switched(state);
    let model = &mut state.sessions;
    model.db_path = Some(path.clone());
    model.db_shown = true;
    model.sessions.clear();
    model.page_offset = 0;
    model.db_bytes = None;
    model.error = None;
    state.set_status(
        format!("Opened the session database {}", path.display()),
        false,
    );
    sessions::list(state);
}

/// Applies a finished write: the listing is read again.
pub fn edited(state: &mut AppState, result: AppResult<String>) {
    match result {
        Ok(done) => {
            state.set_status(done, false);
            sessions::store_changed(
                state,
                StoreChange {
                    session: None,
                    open: false,
                },
            );
        }
        Err(e) => state.set_status(e.to_string(), true),
    }
}
