//! Store work for the sessions browser, started from `AppState::handle` and run by workers:
//! list sessions, list a session's requests, load a stored request's exact body into the form
//! (through body import), and a session's cache-prefix report (store + `core::prefix`, the same
//! conversion `promptwire diff --session` makes).

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::event::{AppEvent, OpenedFile, PromptSource};
use super::state::AppState;
use crate::core::import::import_body;
use crate::core::prefix::{PriceTable, RequestMeta, Session, SessionReport};
use crate::core::stream::UsageCounts;
use crate::store::seed::open_seeded;
use crate::store::{Page, Store};

/// Sessions listed per read.
const PAGE: u64 = 200;
/// Requests listed per session.
const REQUESTS_PAGE: u64 = 10_000;

fn start(state: &mut AppState, name: &str, job: impl FnOnce(&Path) -> AppEvent + Send + 'static) {
    let Some(path) = state.sessions.db_path.clone() else {
        return;
    };
    state.sessions.loading += 1;
    if let Err(e) = state.workers.spawn(name, move |ctx| {
        ctx.report(job(&path));
    }) {
        state.sessions.loading -= 1;
        state.sessions.error = Some(e);
    }
}

/// Lists the sessions (newest first).
pub fn list(state: &mut AppState) {
    state.sessions.listed = true;
    start(state, "list-sessions", |path| {
        AppEvent::SessionsListed(
            open_seeded(path)
                .and_then(|store| store.list_sessions(Page::first(PAGE)))
                .map_err(|e| e.to_string()),
        )
    });
}

/// Expands `session` and reads its requests.
pub fn open(state: &mut AppState, session: i64) {
    state.sessions.open_session = Some(session);
    state.sessions.requests.clear();
    start(state, "list-requests", move |path| {
        AppEvent::RequestsListed {
            session,
            result: open_seeded(path)
                .and_then(|store| store.requests(session, Page::first(REQUESTS_PAGE)))
                .map_err(|e| e.to_string()),
        }
    });
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
        result: open_seeded(path)
            .and_then(|store| store.body(request))
            .map_err(|e| e.to_string())
            .and_then(|body| {
                body.value
                    .ok_or_else(|| "the stored body is not JSON".to_string())
            })
            .and_then(|value| import_body(&value, &catalog).map_err(|e| e.to_string()))
            .map(|o| OpenedFile::Body(Box::new(o)))
            .map_err(|e| format!("session #{session} turn {position}: {e}")),
    });
}

/// Why a stored session could not be analysed.
#[derive(Debug, thiserror::Error)]
pub enum SessionPrefixError {
    /// The store could not be read.
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    /// The session has no requests.
    #[error("session {0} has no requests")]
    Empty(i64),
    /// A stored body is not a JSON object the analysis accepts.
    #[error("session {session}, request {position}: {message}")]
    Body {
        /// Session id.
        session: i64,
        /// Position of the request.
        position: usize,
        /// What is wrong.
        message: String,
    },
}

/// The cache-prefix report of stored session `id`: each request's body with its recorded
/// usage and timing, compared turn by turn.
pub fn session_prefix_report(
    store: &Store,
    id: i64,
    prices: &PriceTable,
) -> Result<SessionReport, SessionPrefixError> {
    let mut session = Session::default();
    push_stored_session(&mut session, store, id)?;
    Ok(session.report(prices))
}

/// Pushes the requests of stored session `id` onto `session`, each body with its recorded usage
/// (the server's cached tokens) and timing — what the Sessions view and `diff --session` analyse.
pub fn push_stored_session(
    session: &mut Session,
    store: &Store,
    id: i64,
) -> Result<(), SessionPrefixError> {
    let requests = store.requests(id, Page::ALL)?;
    if requests.is_empty() {
        return Err(SessionPrefixError::Empty(id));
    }
    for (position, request) in requests.iter().enumerate() {
        let body_error = |message: String| SessionPrefixError::Body {
            session: id,
            position,
            message,
        };
        let Some(body) = store.body(request.id)?.value else {
            return Err(body_error("the stored body is not JSON".to_string()));
        };
        let usage = store.outcome(request.id)?.and_then(|o| o.usage);
        let sent_at_ms = request.started_us.map(|us| us / 1000);
        let meta = RequestMeta {
            reported_cached_tokens: usage.as_ref().and_then(stored_cached_tokens),
            sent_at_ms,
            finished_at_ms: sent_at_ms
                .zip(request.total_us)
                .map(|(ms, total)| ms + total / 1000),
        };
        session
            .push_body(&body, meta)
            .map_err(|e| body_error(e.to_string()))?;
    }
    Ok(())
}

/// Cached tokens of a stored usage, in any shape ([`UsageCounts`]).
pub fn stored_cached_tokens(usage: &Value) -> Option<u64> {
    UsageCounts::from_value(usage)?.input_cached_output().1
}
