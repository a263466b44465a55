//! The Traffic view's model (issue 32): one live list of every request the app handles in this
//! run — proxied by the Record panel's proxy, served by its replay endpoint, sent from the
//! workbench, re-sent from the Sessions view — across sessions, as Proxyman's flow list shows
//! them. Rows are made from what the app layer already receives (the servers' [`ProxyEvent`]s
//! through `proxy.rs`, the send and re-send reports), so a request shows the moment it starts;
//! once the store has it, a worker reads its stored truth (model, client, position, outcome:
//! `traffic/jobs.rs`), and once its session is analysed its prefix badge (the same
//! [`PrefixBadge`] the request table shows) is set. Nothing here touches the store or waits.
//!
//! Bounded: at most [`MAX_ROWS`] rows (the oldest go first). The shown rows under the view's
//! filter (`traffic/filter.rs`) are kept up to date row by row. Selecting a row reads it for the
//! Traffic view's inspector (the Sessions inspector's reader, `session_view::inspect`).
//!
//! Wiring: [`AppCommand::Traffic`](super::AppCommand::Traffic) goes to [`handle`],
//! [`AppEvent::Traffic`](super::AppEvent::Traffic) to [`apply`]; the proxy, send and re-send
//! call [`server_event`], [`started`], [`recorded_as`] and [`ended`].

mod filter;
mod jobs;
mod row;

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use filter::TrafficFilter;
pub use row::{Origin, StoredDetails, TrafficRow};

use super::jobs::JobId;
use super::proxy::ServerKind;
use super::session_view::PrefixBadge;
use super::session_view::inspect::{InspectState, Inspected};
use super::state::AppState;
use crate::store::OutcomeRecord;
use crate::transport::proxy::ProxyEvent;

/// Rows kept; older ones are dropped as new ones arrive.
pub const MAX_ROWS: usize = 20_000;

/// Request ids read per details job.
const DETAILS_BATCH: usize = 256;

/// How long a session that gained a request waits before its prefix is analysed again (one
/// analysis per burst, not per request).
const BADGE_SETTLE: Duration = Duration::from_millis(400);

/// Which report a row belongs to: a server's exchange number, or a send's generation.
type RowKey = (Origin, u64);

/// A session's requests' ids and prefix badges, in order (or why they could not be read).
pub type SessionBadges = super::error::AppResult<Vec<(i64, PrefixBadge)>>;

/// The Traffic view's rows, filter, selection and jobs.
#[derive(Debug, Default)]
pub struct TrafficLog {
    rows: VecDeque<TrafficRow>,
    /// The id the next row gets (ids start at 1 and only grow).
    next_id: u64,
    /// The filter applied.
    filter: TrafficFilter,
    /// The shown rows' ids, oldest first.
    visible: Vec<u64>,
    /// The selected row.
    pub selected: Option<u64>,
    /// The selected row's stored request, read for the inspector.
    pub inspect: InspectState,
    /// Rows still waiting for a report, by their report's key.
    keys: HashMap<RowKey, u64>,
    /// Rows by stored request id.
    by_request: HashMap<i64, u64>,
    /// Stored requests whose details are to be read.
    pending_details: BTreeSet<i64>,
    /// The details job running.
    details_job: Option<JobId>,
    /// Sessions whose prefix badges are to be read again, and since when.
    dirty: BTreeSet<i64>,
    /// When the dirty sessions are analysed (a burst settles first).
    badges_due: Option<Instant>,
    /// The badges job running.
    badges_job: Option<JobId>,
    /// Clients seen (the client filter's choices).
    pub clients: BTreeSet<String>,
    /// Rows dropped because [`MAX_ROWS`] were kept.
    pub dropped: u64,
    /// The database the rows' ids belong to (rows of another are not read).
    pub(crate) epoch: super::jobs::Generation,
}

impl TrafficLog {
    /// Every row kept, oldest first.
    pub fn rows(&self) -> impl DoubleEndedIterator<Item = &TrafficRow> + ExactSizeIterator {
        self.rows.iter()
    }

    /// Number of rows kept.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// No row yet.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Row `id`, while kept.
    pub fn row(&self, id: u64) -> Option<&TrafficRow> {
        let first = self.rows.front()?.id;
        let index = usize::try_from(id.checked_sub(first)?).ok()?;
        self.rows.get(index)
    }

    fn row_mut(&mut self, id: u64) -> Option<&mut TrafficRow> {
        let first = self.rows.front()?.id;
        let index = usize::try_from(id.checked_sub(first)?).ok()?;
        self.rows.get_mut(index)
    }

    /// The shown rows' ids, oldest first (the view draws them newest first).
    pub fn visible(&self) -> &[u64] {
        &self.visible
    }

    /// The `i`-th shown row counting from the newest (the view's row `i`).
    pub fn shown_newest_first(&self, i: usize) -> Option<&TrafficRow> {
        let id = *self.visible.get(self.visible.len().checked_sub(i + 1)?)?;
        self.row(id)
    }

    /// The filter applied.
    pub fn filter(&self) -> &TrafficFilter {
        &self.filter
    }

    /// The selected row.
    pub fn selected_row(&self) -> Option<&TrafficRow> {
        self.row(self.selected?)
    }

    /// The inspector's read of the selected row, when it is that row's.
    pub fn inspected(&self) -> Option<&Arc<Inspected>> {
        let request = self.selected_row()?.request?;
        self.inspect
            .result
            .as_ref()
            .filter(|i| i.request == request && self.inspect.request == Some(request))
    }

    /// Sets the filter and computes the shown rows again.
    fn set_filter(&mut self, filter: TrafficFilter) {
        self.visible = filter::shown(self.rows.iter(), &filter);
        self.filter = filter;
    }

    /// Adds a row (dropping the oldest past [`MAX_ROWS`]); returns its id.
    fn push(&mut self, origin: Origin, method: &str, url: &str) -> u64 {
        self.next_id = self.next_id.max(1);
        let id = self.next_id;
        self.next_id += 1;
        let now = crate::store::send_recording::now_us();
        let row = TrafficRow::started(id, origin, method, url, now);
        filter::update_one(&mut self.visible, &row, &self.filter);
        self.rows.push_back(row);
        while self.rows.len() > MAX_ROWS {
            if let Some(old) = self.rows.pop_front() {
                self.dropped += 1;
                if let Some(request) = old.request {
                    self.by_request.remove(&request);
                }
                if self.visible.first() == Some(&old.id) {
                    self.visible.remove(0);
                }
                if self.selected == Some(old.id) {
                    self.selected = None;
                }
            }
        }
        id
    }

    /// The row a report belongs to, made when its first report is not a start (a full channel
    /// may have dropped it).
    fn row_for(&mut self, key: RowKey) -> u64 {
        if let Some(&id) = self.keys.get(&key)
            && self.row(id).is_some()
        {
            return id;
        }
        let id = self.push(key.0, "POST", "");
        self.keys.insert(key, id);
        id
    }

    /// Changes row `id` with `change`, then keeps the shown rows right.
    fn update(&mut self, id: u64, change: impl FnOnce(&mut TrafficRow)) {
        let Some(row) = self.row_mut(id) else {
            return;
        };
        change(row);
        let client = row.client.clone();
        if let Some(client) = client
            && !self.clients.contains(&client)
        {
            self.clients.insert(client);
        }
        let first = self.rows.front().map_or(0, |r| r.id);
        let index = id
            .checked_sub(first)
            .and_then(|i| usize::try_from(i).ok())
            .unwrap_or(usize::MAX);
        if let Some(row) = self.rows.get(index) {
            filter::update_one(&mut self.visible, row, &self.filter);
        }
    }

    /// Row `id` is stored as `request` of `session`: its details are to be read.
    fn stored_as(&mut self, id: u64, session: i64, request: i64) {
        self.by_request.insert(request, id);
        self.update(id, |row| {
            row.session = Some(session);
            row.request = Some(request);
            row.refresh_haystack();
        });
        self.pending_details.insert(request);
    }
}

/// What the Traffic view asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum TrafficCommand {
    /// Filter the rows.
    Filter(TrafficFilter),
    /// Select a row (by id); its stored request is read for the inspector.
    Select(u64),
    /// Open row `id`'s session in the Sessions view, with its request selected.
    OpenSession(u64),
    /// Forget every row (the list starts over).
    Clear,
}

/// What the Traffic view's jobs report.
#[derive(Debug)]
pub enum TrafficEvent {
    /// Stored requests were read.
    Details {
        /// The database the read was of.
        epoch: u64,
        /// Per request id, what the store has (or why it could not be read).
        result: super::error::AppResult<Vec<(i64, StoredDetails)>>,
    },
    /// Sessions were analysed: their requests' badges, in order.
    Badges {
        /// The database the analysis was of.
        epoch: u64,
        /// Per session, its requests' ids and badges in order (or why not).
        result: Vec<(i64, SessionBadges)>,
    },
    /// The inspector's read of the selected row.
    Inspected {
        /// The read's generation.
        generation: u64,
        /// What it read.
        report: super::session_view::inspect::InspectReport,
    },
}

/// Applies a Traffic command (called from `AppState::handle`).
pub fn handle(state: &mut AppState, command: TrafficCommand) {
    match command {
        TrafficCommand::Filter(filter) => state.traffic.set_filter(filter),
        TrafficCommand::Select(id) => {
            if state.traffic.row(id).is_some() {
                state.traffic.selected = Some(id);
                jobs::inspect_selected(state);
            }
        }
        TrafficCommand::OpenSession(id) => {
            let Some((session, request)) = state
                .traffic
                .row(id)
                .and_then(|row| Some((row.session?, row.request?)))
            else {
                return;
            };
            state.handle(super::AppCommand::Sessions(
                super::session_view::SessionCommand::ShowView(
                    super::session_view::MainView::Sessions,
                ),
            ));
            super::session_view::open_at(state, session, request);
        }
        TrafficCommand::Clear => {
            let log = &mut state.traffic;
            log.rows.clear();
            log.visible.clear();
            log.keys.clear();
            log.by_request.clear();
            log.pending_details.clear();
            log.dirty.clear();
            log.selected = None;
            super::session_view::inspect::clear(&mut log.inspect);
        }
    }
}

/// Applies what the Traffic view's jobs report (called from `AppState::apply_event`).
pub fn apply(state: &mut AppState, event: TrafficEvent) {
    match event {
        TrafficEvent::Details { epoch, result } => {
            state.traffic.details_job = None;
            if state.traffic.epoch.is_current(epoch) {
                match result {
                    Ok(found) => {
                        for (request, details) in found {
                            let Some(&id) = state.traffic.by_request.get(&request) else {
                                continue;
                            };
                            state.traffic.update(id, |row| row.stored(details));
                            if state.traffic.selected == Some(id) {
                                jobs::inspect_selected(state);
                            }
                        }
                    }
                    Err(e) => state.set_status(format!("Traffic: {e}"), true),
                }
            }
        }
        TrafficEvent::Badges { epoch, result } => {
            state.traffic.badges_job = None;
            if state.traffic.epoch.is_current(epoch) {
                for (_, found) in result {
                    // A session that cannot be analysed keeps its rows without a badge.
                    for (request, badge) in found.into_iter().flatten() {
                        badge_for(state, request, badge);
                    }
                }
            }
        }
        TrafficEvent::Inspected { generation, report } => {
            jobs::apply_inspected(state, generation, report);
        }
    }
    poll(state);
}

fn badge_for(state: &mut AppState, request: i64, badge: PrefixBadge) {
    if let Some(&id) = state.traffic.by_request.get(&request) {
        state
            .traffic
            .update(id, |row| row.set_badge(Some(badge.clone())));
    }
}

/// The open session's analysis arrived (its rows, in order): the Traffic rows of that session
/// take their badges from it (no second analysis).
pub fn analysed(state: &mut AppState, session: i64, rows: &[i64], badges: &[PrefixBadge]) {
    for (request, badge) in rows.iter().zip(badges) {
        badge_for(state, *request, badge.clone());
    }
    state.traffic.dirty.remove(&session);
}

/// Starts the jobs whose work is due (details to read, sessions to analyse); called after every
/// report and once per frame by `poll.rs`.
pub fn poll(state: &mut AppState) {
    if state.traffic.details_job.is_none() && !state.traffic.pending_details.is_empty() {
        jobs::read_details(state);
    }
    let Some(due) = state.traffic.badges_due else {
        return;
    };
    let now = Instant::now();
    if now < due {
        // Nothing else may wake the UI before then.
        state.workers.repaint_after(due - now);
    } else if state.traffic.badges_job.is_none() && !state.traffic.dirty.is_empty() {
        jobs::read_badges(state);
    } else if state.traffic.dirty.is_empty() {
        state.traffic.badges_due = None;
    }
}

/// Marks `session` for a new prefix analysis once its burst settles.
fn session_changed(log: &mut TrafficLog, session: i64) {
    log.dirty.insert(session);
    log.badges_due
        .get_or_insert_with(|| Instant::now() + BADGE_SETTLE);
}

/// A recording server reported (called by `proxy.rs` for the proxy and the replay endpoint).
pub fn server_event(state: &mut AppState, kind: ServerKind, event: &ProxyEvent) {
    let origin = match kind {
        ServerKind::Proxy => Origin::Proxy,
        ServerKind::Replay => Origin::Replay,
    };
    let log = &mut state.traffic;
    match event {
        ProxyEvent::RequestStarted {
            exchange,
            method,
            url,
            dialect,
        } => {
            let id = log.push(origin, method, url);
            log.keys.insert((origin, *exchange), id);
            let dialect = dialect.clone();
            log.update(id, |row| {
                row.dialect = dialect;
                row.refresh_haystack();
            });
        }
        ProxyEvent::Stored {
            exchange,
            session_id,
            request_id,
        } => {
            let id = log.row_for((origin, *exchange));
            log.stored_as(id, *session_id, *request_id);
        }
        ProxyEvent::Outcome {
            exchange,
            status,
            outcome,
            ..
        } => {
            let id = log.row_for((origin, *exchange));
            log.update(id, |row| row.finished(*status, outcome));
        }
        ProxyEvent::Recorded {
            exchange,
            request_id,
            ..
        } => {
            let id = log.row_for((origin, *exchange));
            log.keys.remove(&(origin, *exchange));
            log.pending_details.insert(*request_id);
            if let Some(session) = log.row(id).and_then(|r| r.session) {
                session_changed(log, session);
            }
        }
        ProxyEvent::NotRecorded { exchange, reason } => {
            let id = log.row_for((origin, *exchange));
            log.keys.remove(&(origin, *exchange));
            let reason = format!("not recorded: {reason}");
            log.update(id, |row| {
                row.error = Some(reason);
                row.refresh_haystack();
            });
        }
        ProxyEvent::Event { .. }
        | ProxyEvent::Passthrough { .. }
        | ProxyEvent::StoreProblem(_)
        | ProxyEvent::Note(_)
        | ProxyEvent::UpgradeFailed { .. } => {}
    }
    poll(state);
}

/// A send (`Origin::Send`, key its generation) or re-send started: `method` (`POST` / `WS`) to
/// `url` for `model`.
pub fn started(
    state: &mut AppState,
    origin: Origin,
    key: u64,
    method: &str,
    url: &str,
    model: &str,
) {
    let log = &mut state.traffic;
    let id = log.push(origin, method, url);
    log.keys.insert((origin, key), id);
    let model = model.to_string();
    log.update(id, |row| {
        row.model = Some(model);
        row.client = Some("promptwire".to_string());
        row.refresh_haystack();
    });
}

/// A send or re-send's request is stored as `request` of `session`.
pub fn recorded_as(state: &mut AppState, origin: Origin, key: u64, session: i64, request: i64) {
    let log = &mut state.traffic;
    let Some(&id) = log.keys.get(&(origin, key)) else {
        return;
    };
    log.stored_as(id, session, request);
    poll(state);
}

/// A send or re-send ended: its outcome as the timeline has it (`outcome`, `status`), or why it
/// failed (`error`); a recorded one is then read from the store.
pub fn ended(
    state: &mut AppState,
    origin: Origin,
    key: u64,
    outcome: Option<(&OutcomeRecord, Option<u16>)>,
    error: Option<String>,
) {
    let log = &mut state.traffic;
    let Some(id) = log.keys.remove(&(origin, key)) else {
        return;
    };
    log.update(id, |row| {
        match outcome {
            Some((outcome, status)) => row.finished(status, outcome),
            None => {
                row.outcome = Some(crate::store::summary::OutcomeClass::None);
                row.refresh_haystack();
            }
        }
        if let Some(error) = error {
            row.error = Some(error);
            row.refresh_haystack();
        }
    });
    if let Some(row) = log.row(id)
        && let (Some(session), Some(request)) = (row.session, row.request)
    {
        log.pending_details.insert(request);
        session_changed(log, session);
    }
    poll(state);
}

/// The app switched to another database: rows stay, their stored ids are not read again.
pub fn database_switched(state: &mut AppState) {
    state.traffic.epoch.bump();
    state.traffic.pending_details.clear();
    state.traffic.dirty.clear();
    state.traffic.by_request.clear();
}
