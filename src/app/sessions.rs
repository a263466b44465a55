//! The one sessions model: the listed page of sessions (searchable, paged), the open session
//! and its request rows. The sidebar's session list and the Sessions tab both read it. (Where
//! the workbench's next Send records is its own choice, `SendState::into`: browsing never
//! changes it.) Every write to the store — a
//! workbench send, a Re-send, the recording proxy, an import — refreshes it through one app
//! event, [`AppEvent::StoreChanged`], applied by [`store_changed`]: the page is read again, and
//! the open session's rows (and, through `session_view`, its prefix analysis) when it is the
//! one that changed. The reads run on worker threads; the UI thread only swaps results in.
//!
//! Also here: loading a stored request's exact body into the form (through body import).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::error::{AppError, AppResult};
use super::event::{AppEvent, OpenedFile, PromptSource};
use super::state::AppState;
use crate::core::import::import_body;
use crate::store::seed::open_seeded;
use crate::store::summary::RequestRow;
use crate::store::{Page, SessionSummary, Store};

/// Sessions listed per page.
pub const SESSIONS_PAGE: u64 = 50;

/// The sessions model (read by workers from the store, shown by the sidebar and the Sessions
/// tab).
#[derive(Debug, Clone, Default)]
pub struct SessionsModel {
    /// The database file (None: no store for this workbench).
    pub db_path: Option<PathBuf>,
    /// The applied search text (empty: all sessions).
    pub search: String,
    /// First session shown (a multiple of [`SESSIONS_PAGE`]).
    pub page_offset: u64,
    /// The listed page of sessions, newest first.
    pub sessions: Vec<SessionSummary>,
    /// Another page follows.
    pub more: bool,
    /// Bytes the session database takes on disk (file and WAL), as of the last list read.
    pub db_bytes: Option<u64>,
    /// Which list read is the latest (stale pages are dropped).
    pub list_generation: super::jobs::Generation,
    /// Sessions were asked for at least once.
    pub listed: bool,
    /// The open session: the one shown in both views.
    pub open: Option<i64>,
    /// Its name as last read (kept while a search hides it from the listed page).
    pub open_name: Option<String>,
    /// Its request rows.
    pub rows: Vec<RequestRow>,
    /// Which read of the open session is the latest (stale rows and analyses are dropped).
    pub rows_generation: super::jobs::Generation,
    /// The stored request whose body is in the form (when the form came from the store).
    pub loaded_request: Option<i64>,
    /// The last read error.
    pub error: Option<String>,
    /// Reads under way.
    pub loading: usize,
    /// Which sessions the list shows (source, dates, model).
    pub filter: crate::store::SessionFilter,
    /// A file being imported (HAR or rollout) by Open… or a drop.
    pub importing: Option<PathBuf>,
    /// The job importing it (cancelled from its chip in the status bar).
    pub import_job: Option<super::jobs::JobId>,
    /// The database is shown in the window title (opened with `--db` or switched to).
    pub db_shown: bool,
    /// A deleted session that can still be undone (hidden from the list, its rows kept).
    pub pending_delete: Option<super::session_admin::PendingDelete>,
}

/// What the model's reads report.
#[derive(Debug)]
pub enum SessionsEvent {
    /// A page of sessions was read.
    Listed {
        /// The read's generation.
        generation: u64,
        /// The page, whether another follows, and the database's bytes on disk.
        result: AppResult<(Vec<SessionSummary>, bool, u64)>,
    },
    /// The open session's rows were read.
    Rows {
        /// The session.
        session: i64,
        /// The read's generation.
        generation: u64,
        /// Its rows.
        result: AppResult<Vec<RequestRow>>,
        /// Its name.
        name: Option<String>,
    },
    /// A rename or delete was written (what it did, or why not).
    Edited {
        /// What was done.
        result: AppResult<String>,
    },
}

/// What changed in the store, reported by every writer as [`AppEvent::StoreChanged`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreChange {
    /// The session that gained, finished or lost requests (None: sessions were added or
    /// removed, e.g. by an import).
    pub session: Option<i64>,
    /// The session becomes the open one (the workbench's conversation follows its send).
    pub open: bool,
}

fn open_store(path: &Path) -> AppResult<Store> {
    Ok(open_seeded(path)?)
}

/// Starts `job` on a worker with the database path; it counts as a read under way until the
/// event it reports is applied.
fn start(state: &mut AppState, name: &str, job: impl FnOnce(&Path) -> AppEvent + Send + 'static) {
    let model = &mut state.sessions;
    let Some(path) = model.db_path.clone() else {
        model.error = Some(AppError::NoDatabase.to_string());
        return;
    };
    model.loading += 1;
    if let Err(e) = state.workers.spawn(name, move |ctx| {
        ctx.report(job(&path));
    }) {
        state.sessions.loading -= 1;
        state.sessions.error = Some(e.to_string());
    }
}

/// Reads the current page of sessions (searching when a search text is set).
pub fn list(state: &mut AppState) {
    let model = &mut state.sessions;
    model.listed = true;
    let generation = model.list_generation.bump();
    let search = model.search.trim().to_string();
    let mut filter = model.filter.clone();
    filter.exclude = model.pending_delete.as_ref().map(|p| p.session);
    // One row more than shown says whether another page follows.
    let page = Page {
        offset: model.page_offset,
        limit: SESSIONS_PAGE + 1,
    };
    start(state, "list-sessions", move |path| {
        let result = open_store(path).and_then(|store| {
            let found = store.list_sessions_filtered(&filter, &search, page);
            let mut sessions = found?;
            let more = sessions.len() as u64 > SESSIONS_PAGE;
            sessions.truncate(SESSIONS_PAGE as usize);
            Ok((sessions, more, store.disk_bytes()))
        });
        AppEvent::SessionsModel(SessionsEvent::Listed { generation, result })
    });
}

/// Applies a search (empty: all sessions) from the first page.
pub fn search(state: &mut AppState, text: String) {
    state.sessions.search = text;
    state.sessions.page_offset = 0;
    list(state);
}

/// Shows the page of sessions starting at `offset`.
pub fn page(state: &mut AppState, offset: u64) {
    state.sessions.page_offset = offset;
    list(state);
}

/// Opens `session`: what the views showed of the previous one is cleared, then its rows are
/// read (and its prefix analysed).
pub fn open(state: &mut AppState, session: i64) {
    let model = &mut state.sessions;
    model.open = Some(session);
    model.open_name = model
        .sessions
        .iter()
        .find(|s| s.id == session)
        .map(|s| s.name.clone());
    model.rows.clear();
    state.browser.clear_open();
    super::session_view::forget_other_session(&mut state.browser, &state.workers, session);
    read_open(state, session);
}

/// Reads the open `session` again (it gained or finished a request): what is shown stays
/// until the new rows and analysis replace it, so a live session never blinks empty.
pub fn reload(state: &mut AppState, session: i64) {
    if state.sessions.open != Some(session) {
        return open(state, session);
    }
    read_open(state, session);
}

/// No session is open.
pub fn close(state: &mut AppState) {
    state.sessions.open = None;
    state.sessions.open_name = None;
    state.sessions.rows.clear();
    state.sessions.rows_generation.bump();
    state.browser.clear_open();
}

/// The store changed ([`AppEvent::StoreChanged`]): the page is read again, and the open
/// session when it is the one that changed (or becomes open).
pub fn store_changed(state: &mut AppState, change: StoreChange) {
    list(state);
    match change.session {
        Some(session) if change.open || state.sessions.open == Some(session) => {
            reload(state, session);
        }
        _ => {}
    }
}

/// Starts the worker that reads `session`'s rows and then (on the same worker) analyses its
/// prefix for the Sessions view.
fn read_open(state: &mut AppState, session: i64) {
    let model = &mut state.sessions;
    let generation = model.rows_generation.bump();
    model.error = None;
    let Some(path) = model.db_path.clone() else {
        model.error = Some(AppError::NoDatabase.to_string());
        return;
    };
    model.loading += 1;
    state.browser.analyzing = true;
    let spawned = state.workers.spawn("open-session", move |ctx| {
        let rows_event = |result, name| {
            AppEvent::SessionsModel(SessionsEvent::Rows {
                session,
                generation,
                result,
                name,
            })
        };
        let store = match open_store(&path) {
            Ok(store) => store,
            Err(e) => {
                ctx.report(rows_event(Err(e), None));
                return;
            }
        };
        let rows = store
            .request_rows(session, Page::ALL)
            .map_err(AppError::from);
        let read = rows.is_ok();
        let name = store.session(session).ok().map(|s| s.name);
        if !ctx.report(rows_event(rows, name)) || !read {
            return;
        }
        ctx.report(AppEvent::Sessions(super::session_view::analyze_stored(
            &store, session, generation,
        )));
    });
    if let Err(e) = spawned {
        state.sessions.loading -= 1;
        state.sessions.error = Some(e.to_string());
        state.browser.analyzing = false;
    }
}

/// Applies what the model's reads report.
pub fn apply(state: &mut AppState, event: SessionsEvent) {
    let model = &mut state.sessions;
    model.loading = model.loading.saturating_sub(1);
    match event {
        SessionsEvent::Listed { generation, result } => {
            if !model.list_generation.is_current(generation) {
                return;
            }
            match result {
                Ok((sessions, more, db_bytes)) => {
                    model.sessions = sessions;
                    model.more = more;
                    model.db_bytes = Some(db_bytes);
                    model.error = None;
                }
                Err(e) => model.error = Some(e.to_string()),
            }
        }
        SessionsEvent::Rows {
            session,
            generation,
            result,
            name,
        } => {
            if model.open != Some(session) || !model.rows_generation.is_current(generation) {
                return;
            }
            if name.is_some() {
                model.open_name = name;
            }
            match result {
                Ok(rows) => {
                    let ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
                    super::session_view::rows_read(&mut state.browser, &ids);
                    state.sessions.rows = rows;
                    super::session_view::filter::refresh(state);
                    super::session_view::inspect::ensure(state);
                }
                Err(e) => {
                    // No rows: the analysis that would follow them never starts.
                    state.browser.analyzing = false;
                    model.error = Some(e.to_string());
                }
            }
        }
        SessionsEvent::Edited { result } => super::session_admin::edited(state, result),
    }
}

/// Loads stored request `request` (turn `position` of `session`) into the form.
pub fn load_request(state: &mut AppState, session: i64, request: i64, position: i64) {
    let catalog = Arc::clone(&state.catalog);
    start(state, "load-request", move |path| AppEvent::PromptLoaded {
        source: PromptSource::Stored {
            session,
            request,
            position,
        },
        result: open_store(path)
            .and_then(|store| Ok(store.body(request)?))
            .and_then(|body| {
                body.value.ok_or(AppError::StoredBody {
                    request,
                    what: "the stored body is not JSON",
                })
            })
            .and_then(|value| {
                import_body(&value, &catalog).map_err(|e| AppError::Reported(e.to_string()))
            })
            .map(|o| OpenedFile::Body(Box::new(o)))
            .map_err(|e| format!("session #{session} turn {position}: {e}")),
    });
}
