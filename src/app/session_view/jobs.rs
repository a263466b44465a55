//! The Sessions view's store and analysis jobs: list a page of sessions (or search them), read
//! an open session's rows and then analyse its prefix, compute a pair's item-aligned diff, and
//! compare two requests with the structural diff. Each runs on a worker thread and reports one
//! [`SessionEvent`].

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::{
    CompareSide, Compared, PairView, SESSIONS_PAGE, SessionEvent, analyze_parts, form_body,
};
use crate::app::event::AppEvent;
use crate::app::state::AppState;
use crate::core::json_diff::align;
use crate::core::prefix::PriceTable;
use crate::store::seed::open_seeded;
use crate::store::{Page, Store};

/// Starts `job` on a worker with the database path; it reports one event.
fn start(
    state: &mut AppState,
    name: &str,
    job: impl FnOnce(Result<Store, String>) -> SessionEvent + Send + 'static,
) {
    let Some(path) = state.sessions.db_path.clone() else {
        state.browser.error = Some("no session database is open".to_string());
        return;
    };
    let spawned = state.workers.spawn(name, move |ctx| {
        let store = open_store(&path);
        ctx.report(AppEvent::Sessions(job(store)));
    });
    if let Err(e) = spawned {
        state.browser.error = Some(e);
    }
}

fn open_store(path: &Path) -> Result<Store, String> {
    open_seeded(path).map_err(|e| format!("{e}"))
}

/// Reads the current page of sessions (searching when a search text is set).
pub fn list(state: &mut AppState) {
    let browser = &mut state.browser;
    browser.list_generation += 1;
    let generation = browser.list_generation;
    let search = browser.search.trim().to_string();
    // One row more than shown says whether another page follows.
    let page = Page {
        offset: browser.page_offset,
        limit: SESSIONS_PAGE + 1,
    };
    start(state, "list-sessions", move |store| {
        let result = store.and_then(|store| {
            let found = if search.is_empty() {
                store.list_sessions(page)
            } else {
                store.search_sessions(&search, page)
            };
            let mut sessions = found.map_err(|e| e.to_string())?;
            let more = sessions.len() as u64 > SESSIONS_PAGE;
            sessions.truncate(SESSIONS_PAGE as usize);
            Ok((sessions, more, store.disk_bytes()))
        });
        SessionEvent::Listed { generation, result }
    });
}

/// Opens `session`: reads its rows, then (on the same worker) analyses its prefix.
pub fn open_session(state: &mut AppState, session: i64) {
    let browser = &mut state.browser;
    browser.open = Some(session);
    browser.rows.clear();
    browser.selected = None;
    browser.analysis = None;
    browser.pair = None;
    browser.pair_diff = None;
    read_session(state, session);
}

/// Reads the open `session` again (it gained or finished a request): what is shown — rows,
/// selection, prefix analysis, the pair diff — stays until the new rows and analysis replace it,
/// so a live session never blinks empty.
pub fn reload_session(state: &mut AppState, session: i64) {
    if state.browser.open != Some(session) {
        return open_session(state, session);
    }
    read_session(state, session);
}

/// Starts the worker that reads `session`'s rows and then analyses its prefix.
fn read_session(state: &mut AppState, session: i64) {
    let browser = &mut state.browser;
    browser.analyzing = true;
    browser.error = None;
    let Some(path) = state.sessions.db_path.clone() else {
        browser.error = Some("no session database is open".to_string());
        return;
    };
    let spawned = state.workers.spawn("open-session", move |ctx| {
        let store = match open_store(&path) {
            Ok(store) => store,
            Err(e) => {
                ctx.report(AppEvent::Sessions(SessionEvent::Rows {
                    session,
                    result: Err(e),
                }));
                return;
            }
        };
        let rows = store
            .request_rows(session, Page::ALL)
            .map_err(|e| e.to_string());
        if !ctx.report(AppEvent::Sessions(SessionEvent::Rows {
            session,
            result: rows,
        })) {
            return;
        }
        let result = store
            .session_parts(session)
            .map_err(|e| e.to_string())
            .and_then(|parts| analyze_parts(session, parts, &PriceTable::bundled()))
            .map(Arc::new);
        ctx.report(AppEvent::Sessions(SessionEvent::Analyzed {
            session,
            result,
        }));
    });
    if let Err(e) = spawned {
        state.browser.error = Some(e);
    }
}

/// Computes the item-aligned diff of requests `from` and `to` of the open session.
pub fn pair_diff(state: &mut AppState, from: usize, to: usize) {
    let browser = &mut state.browser;
    let (Some(session), Some(analysis)) = (browser.open, browser.analysis.clone()) else {
        return;
    };
    browser.pair = Some((from, to));
    browser.pair_diff = None;
    let spawned = state.workers.spawn("pair-diff", move |ctx| {
        let result = analysis
            .prefix
            .pair_diff(from, to)
            .and_then(|diff| {
                let verdict = analysis.prefix.compare(from, to)?;
                let causes: Vec<&str> = verdict.causes.iter().map(|c| c.as_str()).collect();
                Ok(PairView::new(
                    &diff,
                    verdict.break_at.as_ref(),
                    &causes.join(", "),
                ))
            })
            .map(Arc::new)
            .map_err(|e| e.to_string());
        ctx.report(AppEvent::Sessions(SessionEvent::PairDiffed {
            session,
            pair: (from, to),
            result,
        }));
    });
    if let Err(e) = spawned {
        state.browser.error = Some(e);
    }
}

/// The JSON body of one side of a comparison.
fn side_body(
    store: Option<&Store>,
    side: &CompareSide,
    form: Option<&Value>,
) -> Result<Value, String> {
    match side {
        CompareSide::Form => form
            .cloned()
            .ok_or_else(|| "the form has no compiled body yet".to_string()),
        CompareSide::Stored { request, .. } => {
            let store = store.ok_or_else(|| "no session database is open".to_string())?;
            store
                .body(*request)
                .map_err(|e| e.to_string())?
                .value
                .ok_or_else(|| format!("{}: the stored body is not JSON", side.label()))
        }
    }
}

/// Compares the two compare slots once both are set.
pub fn compare(state: &mut AppState) {
    let [Some(left), Some(right)] = state.browser.compare.slots.clone() else {
        return;
    };
    state.browser.compare.generation += 1;
    state.browser.compare.result = None;
    let generation = state.browser.compare.generation;
    let form = form_body(state);
    let path = state.sessions.db_path.clone();
    let spawned = state.workers.spawn("compare", move |ctx| {
        let result = (|| {
            let store = path.as_deref().map(open_store).transpose()?;
            let form = form.map(|body| Value::Object((*body).clone()));
            let a = side_body(store.as_ref(), &left, form.as_ref())?;
            let b = side_body(store.as_ref(), &right, form.as_ref())?;
            Ok(Arc::new(Compared {
                aligned: align(&[Some(&a), Some(&b)]),
                sides: [left, right],
            }))
        })();
        ctx.report(AppEvent::Sessions(SessionEvent::Compared {
            generation,
            result,
        }));
    });
    if let Err(e) = spawned {
        state.browser.compare.error = Some(e);
    }
}
