//! The Traffic view's reads, each on a worker thread, one of a kind at a time: the stored truth
//! of recorded requests (a batch of ids per job: model, client from the headers, position,
//! status and outcome), the prefix badges of the sessions that gained requests (the same
//! analysis the Sessions view runs, `session_view::analyze_stored`), and the selected row's
//! request for the inspector (`session_view::inspect::start_read`).

use std::path::Path;

use super::{DETAILS_BATCH, StoredDetails, TrafficEvent};
use crate::app::error::{AppError, AppResult};
use crate::app::event::AppEvent;
use crate::app::session_view::inspect::{InspectReport, inspected, start_read};
use crate::app::session_view::{PrefixBadge, SessionEvent, analyze_stored};
use crate::app::state::AppState;
use crate::core::session_label::client_of;
use crate::store::seed::open_seeded;
use crate::store::{Page, Store};

fn open_store(path: &Path) -> AppResult<Store> {
    Ok(open_seeded(path)?)
}

/// What the store has of `request`.
pub fn stored_details(store: &Store, request: i64) -> AppResult<StoredDetails> {
    let record = store.request(request)?;
    let outcome = store.outcome(request)?;
    let summary = record.summary;
    Ok(StoredDetails {
        session: summary.session_id,
        position: summary.position,
        model: summary.model,
        client: client_of(&record.headers),
        status: summary.status,
        outcome,
        started_us: summary.started_us,
        total_us: summary.total_us,
    })
}

/// Reads the details of up to [`DETAILS_BATCH`] pending requests.
pub(super) fn read_details(state: &mut AppState) {
    let Some(path) = state.sessions.db_path.clone() else {
        state.traffic.pending_details.clear();
        return;
    };
    let log = &mut state.traffic;
    let batch: Vec<i64> = log
        .pending_details
        .iter()
        .copied()
        .take(DETAILS_BATCH)
        .collect();
    for request in &batch {
        log.pending_details.remove(request);
    }
    let epoch = log.epoch.current();
    let spawned = state.workers.spawn("traffic-details", move |ctx| {
        let result = open_store(&path).map(|store| {
            batch
                .iter()
                // A request the store does not have (yet) is read again on its next report.
                .filter_map(|&request| Some((request, stored_details(&store, request).ok()?)))
                .collect()
        });
        ctx.report(AppEvent::Traffic(TrafficEvent::Details { epoch, result }));
    });
    match spawned {
        Ok(job) => state.traffic.details_job = Some(job),
        Err(e) => state.set_status(format!("Traffic: {e}"), true),
    }
}

/// The badges of `session`'s requests, with their ids, in order.
fn session_badges(store: &Store, session: i64) -> AppResult<Vec<(i64, PrefixBadge)>> {
    let ids: Vec<i64> = store
        .requests(session, Page::ALL)?
        .into_iter()
        .map(|r| r.id)
        .collect();
    match analyze_stored(store, session, 0) {
        SessionEvent::Analyzed { result, .. } => {
            let analysis = result.map_err(AppError::Reported)?;
            Ok(ids
                .into_iter()
                .zip(analysis.badges.iter().cloned())
                .collect())
        }
        _ => Ok(Vec::new()),
    }
}

/// Analyses the sessions that gained requests (all of them in one job).
pub(super) fn read_badges(state: &mut AppState) {
    let log = &mut state.traffic;
    log.badges_due = None;
    let Some(path) = state.sessions.db_path.clone() else {
        log.dirty.clear();
        return;
    };
    let sessions: Vec<i64> = std::mem::take(&mut log.dirty).into_iter().collect();
    let epoch = log.epoch.current();
    let spawned = state.workers.spawn("traffic-badges", move |ctx| {
        let result = match open_store(&path) {
            Ok(store) => sessions
                .iter()
                .map(|&session| (session, session_badges(&store, session)))
                .collect(),
            Err(e) => {
                let e = e.to_string();
                sessions
                    .iter()
                    .map(|&s| (s, Err(AppError::Reported(e.clone()))))
                    .collect()
            }
        };
        ctx.report(AppEvent::Traffic(TrafficEvent::Badges { epoch, result }));
    });
    match spawned {
        Ok(job) => state.traffic.badges_job = Some(job),
        Err(e) => state.set_status(format!("Traffic: {e}"), true),
    }
}

/// Reads the selected row's stored request for the Traffic inspector (when it is stored).
pub(super) fn inspect_selected(state: &mut AppState) {
    let Some(row) = state.traffic.selected_row() else {
        return;
    };
    let (Some(session), Some(request)) = (row.session, row.request) else {
        return;
    };
    // Read again once it ended (it was read while still streaming).
    let ended = u64::from(!row.in_flight());
    let Some(path) = state.sessions.db_path.clone() else {
        return;
    };
    start_read(
        &mut state.workers,
        &mut state.traffic.inspect,
        path,
        (session, request, Some(ended)),
        |generation, report| AppEvent::Traffic(TrafficEvent::Inspected { generation, report }),
    );
}

/// Applies the inspector's read.
pub(super) fn apply_inspected(state: &mut AppState, generation: u64, report: InspectReport) {
    let inspect = &mut state.traffic.inspect;
    match report {
        InspectReport::Read(result) => inspected(inspect, generation, result),
        InspectReport::Tokens(tokens) => {
            if inspect.generation.is_current(generation) {
                inspect.tokens = Some(tokens);
            }
        }
    }
}
