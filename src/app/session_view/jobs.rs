//! The Sessions view's analysis jobs: the open session's prefix analysis (run by the sessions
//! model's read of the open session, after its rows), a pair's item-aligned diff, and the
//! structural comparison of two requests. Each runs on a worker thread and reports one
//! [`SessionEvent`].

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::analysis::{analyze_parts_with, cache_models_beside};
use super::{CompareSide, Compared, PairView, SessionEvent, form_body};
use crate::app::error::{AppError, AppResult};
use crate::app::event::AppEvent;
use crate::app::state::AppState;
use crate::core::json_diff::align;
use crate::core::ledger::{self, Rules};
use crate::store::Store;
use crate::store::agents::stored_agents;
use crate::store::seed::open_seeded;

fn open_store(path: &Path) -> AppResult<Store> {
    Ok(open_seeded(path)?)
}

/// Analyses stored session `session`'s prefix (read `generation` of the open session), on the
/// worker that read its rows (`sessions::read_open`), with the cache models of
/// `cache-models.json` beside the database when there is one.
pub fn analyze_stored(store: &Store, session: i64, generation: u64) -> SessionEvent {
    let (cache_models, note) = cache_models_beside(store.path());
    let rules = Arc::new(Rules {
        cache_models,
        ..Rules::bundled()
    });
    let result = store
        .session_parts(session)
        .map_err(|e| e.to_string())
        .and_then(|parts| analyze_parts_with(session, parts, rules, note))
        .and_then(|mut analysis| {
            // The agents: this session and its subagents' sessions, each from its own ledger.
            analysis.agents = stored_agents(store, session, &analysis.rules, &analysis.ledger)
                .map_err(|e| e.to_string())?;
            Ok(analysis)
        })
        .map(Arc::new);
    SessionEvent::Analyzed {
        session,
        generation,
        result,
    }
}

/// Computes the item-aligned diff of requests `from` and `to` of the open session.
pub fn pair_diff(state: &mut AppState, from: usize, to: usize) {
    let browser = &mut state.browser;
    let (Some(session), Some(analysis)) = (state.sessions.open, browser.analysis.clone()) else {
        return;
    };
    browser.pair = Some((from, to));
    browser.pair_diff = None;
    let spawned = state.workers.spawn("pair-diff", move |ctx| {
        let result = analysis
            .prefix
            .pair_diff(from, to)
            .map(|diff| {
                // The ledger's own verdict when the pair is a row's; any other pair is compared
                // on the rendered prompt the same way.
                let verdict = analysis
                    .row(to)
                    .and_then(|r| r.verdict.clone())
                    .filter(|v| v.from == from)
                    .unwrap_or_else(|| {
                        ledger::compare_pair(&analysis.prefix, &analysis.rules.counting, from, to)
                    });
                let causes: Vec<&str> = verdict.causes.iter().map(|c| c.as_str()).collect();
                PairView::new(
                    &diff,
                    verdict.divergence.as_ref().map(|d| d.pointer.as_str()),
                    &causes.join(", "),
                )
            })
            .map(Arc::new)
            .map_err(|e| AppError::Reported(e.to_string()));
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
fn side_body(store: Option<&Store>, side: &CompareSide, form: Option<&Value>) -> AppResult<Value> {
    match side {
        CompareSide::Form => form
            .cloned()
            .ok_or_else(|| AppError::Reported("the form has no compiled body yet".to_string())),
        CompareSide::Stored { request, .. } => {
            let store = store.ok_or(AppError::NoDatabase)?;
            store.body(*request)?.value.ok_or(AppError::StoredBody {
                request: *request,
                what: "the stored body is not JSON",
            })
        }
    }
}

/// Compares the two compare slots once both are set.
pub fn compare(state: &mut AppState) {
    let [Some(left), Some(right)] = state.browser.compare.slots.clone() else {
        return;
    };
    let generation = state.browser.compare.generation.bump();
    state.browser.compare.result = None;
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
