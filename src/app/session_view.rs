//! The Sessions view's state — over the one sessions model (`sessions.rs`: the listed page, the
//! open session and its rows, which the sidebar reads too) — the open session's cache-prefix
//! analysis (strip, badges, chart series), the selected request, the selected pair's
//! item-aligned diff, the compare slots, and the replay timeline — and the commands and events
//! that change it. Everything slow (store reads, the analysis, diffs, replays) is a job on
//! [`Workers`](super::jobs::Workers) (`session_view/jobs.rs`, `session_view/replay.rs`); the UI
//! thread only swaps in finished results, so a 1,000-request session never stalls a frame.
//!
//! Wiring: [`AppCommand::Sessions`](super::AppCommand::Sessions) goes to [`handle`],
//! [`AppEvent::Sessions`](super::AppEvent::Sessions) to [`apply`]; the panels are
//! `crate::ui::sessions`.

mod analysis;
pub mod filter;
pub mod inspect;
mod jobs;
pub mod live;
mod pair_view;
mod replay;
pub use replay::forget_other_session;
mod resend;
pub mod whatif;

use std::sync::Arc;

use super::state::AppState;
use super::timeline::{TimelineCommand, TimelineModel};
use crate::core::json::JsonMap;
use crate::core::json_diff::Aligned;

pub use super::sessions::SESSIONS_PAGE;
pub use analysis::{
    Analysis, CACHE_MODELS_FILE, CacheModelsNote, PrefixBadge, Waterfall, analyze_parts,
    analyze_parts_with, break_text, cache_models_beside, row_text,
};
pub use jobs::analyze_stored;
pub use pair_view::{LineKind, PairLine, PairView};
pub use replay::{ReplaySpeed, ReplayState, ReplayUpdate};

/// The top-level view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MainView {
    /// The Prompt form and its compiled columns.
    #[default]
    Workbench,
    /// The session browser, the cache-prefix view and replay.
    Sessions,
    /// Every request the app handles, live (`traffic.rs`).
    Traffic,
}

/// One side of a comparison.
#[derive(Debug, Clone, PartialEq)]
pub enum CompareSide {
    /// A stored request.
    Stored {
        /// Session id.
        session: i64,
        /// Request id.
        request: i64,
        /// Its position in the session.
        position: i64,
    },
    /// The current form's first compiled column.
    Form,
}

impl CompareSide {
    /// Short label (`#4 turn 2`, `the form`).
    pub fn label(&self) -> String {
        match self {
            Self::Stored {
                session, position, ..
            } => format!("session #{session} turn {position}"),
            Self::Form => "the form".to_string(),
        }
    }
}

/// Two requests laid out side by side by the structural diff.
#[derive(Debug, Clone)]
pub struct Compared {
    /// What is on the left and on the right.
    pub sides: [CompareSide; 2],
    /// The aligned rows.
    pub aligned: Aligned,
}

/// The compare slots and their result.
#[derive(Debug, Clone, Default)]
pub struct CompareState {
    /// Left and right.
    pub slots: [Option<CompareSide>; 2],
    /// The diff of the two slots, when both are set and read.
    pub result: Option<Arc<Compared>>,
    /// Why the last comparison failed.
    pub error: Option<String>,
    /// Which comparison is the latest (stale results are dropped).
    pub generation: crate::app::jobs::Generation,
}

/// Everything the Sessions view shows.
#[derive(Debug, Default)]
pub struct SessionBrowser {
    /// Which top-level view is shown.
    pub view: MainView,
    /// The selected request (index into the open session's rows).
    pub selected: Option<usize>,
    /// The open session's prefix analysis.
    pub analysis: Option<Arc<Analysis>>,
    /// The analysis is running.
    pub analyzing: bool,
    /// The selected pair (earlier, later) and its diff once computed.
    pub pair: Option<(usize, usize)>,
    /// The selected pair's item-aligned diff, flattened for drawing.
    pub pair_diff: Option<Arc<PairView>>,
    /// Compare two requests.
    pub compare: CompareState,
    /// The replay timeline.
    pub timeline: TimelineModel,
    /// The replay under way or shown.
    pub replay: ReplayState,
    /// The last error of a read, the analysis or a replay.
    pub error: Option<String>,
    /// "Ask the server why" on Re-send: the re-sent body's
    /// `prompt_cache_options.comparison_response_id` is the previous request's recorded
    /// response id. Off unless the user ticks it.
    pub ask_why: bool,
    /// The request inspector (the selected request, read on a worker).
    pub inspect: inspect::InspectState,
    /// The request table's filter and sort.
    pub filter: filter::RowFilter,
    /// The rows the table shows, in its order (indices into the open session's rows).
    pub visible: Vec<usize>,
    /// The prefix view's what-if: the edit asked for and the re-simulation (on a worker).
    pub whatif: whatif::WhatIfState,
    /// A stored request to select once the open session's rows are read (the Traffic view's
    /// "Open session").
    pub select_request: Option<i64>,
    /// Incremented when the selection is to be scrolled into view (the table follows it).
    pub reveal: u64,
}

/// What the Sessions view asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionCommand {
    /// Show a top-level view (the first switch to Sessions lists them).
    ShowView(MainView),
    /// Search sessions by name, model and text inside bodies (empty: all).
    Search(String),
    /// Show the page of sessions starting at this offset.
    Page(u64),
    /// Open a session: its rows, then its prefix analysis.
    Open(i64),
    /// Select a request (index into the rows).
    Select(usize),
    /// Open request `index` in the Prompt form (switches to the workbench).
    OpenInForm(usize),
    /// Replay request `index`'s recorded stream into the timeline.
    Replay(usize, ReplaySpeed),
    /// In step mode: show one more (+1) or one fewer (-1) event.
    Step(i64),
    /// Send request `index`'s recorded body again to the workbench's provider; the answer
    /// streams into the timeline beside the recorded outcome and is recorded in the session.
    Resend(usize),
    /// Stop a running replay or re-send (what arrived stays).
    StopReplay,
    /// Turn "ask the server why" on Re-send on or off.
    AskWhy(bool),
    /// Show the item-aligned diff of requests `from` and `to` of the open session.
    SelectPair(usize, usize),
    /// Put a request (or the form) in compare slot 0 (left) or 1 (right).
    SetCompare(usize, CompareSide),
    /// Empty both compare slots.
    ClearCompare,
    /// A command of the timeline panel.
    Timeline(TimelineCommand),
    /// Copy request `index` as a curl command or its exact body.
    Copy(usize, inspect::CopyKind),
    /// Export request `index`'s body or HAR (asks where, through the file dialog).
    Export(usize, crate::app::settings::ExportKind),
    /// Filter and sort the request table.
    Filter(filter::RowFilter),
    /// Filter the session list (source, dates, model).
    FilterSessions(crate::store::SessionFilter),
    /// Rename a session.
    Rename(i64, String),
    /// Delete a session (undoable until the app closes or the next delete).
    Delete(i64),
    /// Bring the deleted session back.
    UndoDelete,
    /// Switch to another session database.
    SwitchDb(std::path::PathBuf),
    /// Re-simulate the open session under a what-if edit (`KIND:ARGS`, as `diff --what-if`).
    WhatIf(String),
}

/// What the Sessions view's jobs report.
#[derive(Debug)]
pub enum SessionEvent {
    /// A session's prefix analysis finished.
    Analyzed {
        /// The session.
        session: i64,
        /// The generation of the read of the open session it analysed.
        generation: u64,
        /// The analysis.
        result: Result<Arc<Analysis>, String>,
    },
    /// A pair's diff was computed.
    PairDiffed {
        /// The session.
        session: i64,
        /// The pair.
        pair: (usize, usize),
        /// The diff.
        result: crate::app::error::AppResult<Arc<PairView>>,
    },
    /// Two requests were compared.
    Compared {
        /// The comparison's generation.
        generation: u64,
        /// The result.
        result: crate::app::error::AppResult<Arc<Compared>>,
    },
    /// The inspector read its request.
    Inspected {
        /// The read's generation.
        generation: u64,
        /// What it read.
        result: crate::app::error::AppResult<Arc<inspect::Inspected>>,
    },
    /// The inspected body's tokens were counted.
    InspectTokens {
        /// The read's generation.
        generation: u64,
        /// o200k tokens.
        tokens: u64,
    },
    /// A row copy was read.
    CopyReady {
        /// What was copied.
        kind: inspect::CopyKind,
        /// The text, or why not.
        result: crate::app::error::AppResult<String>,
    },
    /// A what-if re-simulation finished.
    WhatIfDone {
        /// The session.
        session: i64,
        /// The what-if's generation.
        generation: u64,
        /// The session under the edit, or why the edit does not apply.
        result: Result<Arc<crate::core::ledger::WhatIf>, String>,
    },
    /// The replay job reports.
    Replay {
        /// The replay's generation.
        generation: u64,
        /// What happened.
        update: ReplayUpdate,
    },
}

/// Applies a Sessions command (called from `AppState::handle`).
pub fn handle(state: &mut AppState, command: SessionCommand) {
    let browser = &mut state.browser;
    match command {
        SessionCommand::ShowView(view) => {
            browser.view = view;
            if view == MainView::Sessions && !state.sessions.listed {
                super::sessions::list(state);
            }
        }
        SessionCommand::Search(text) => super::sessions::search(state, text),
        SessionCommand::Page(offset) => super::sessions::page(state, offset),
        SessionCommand::Open(session) => {
            whatif::forget(state);
            super::sessions::open(state, session);
        }
        SessionCommand::Select(index) => {
            if index < state.sessions.rows.len() {
                browser.selected = Some(index);
                inspect::ensure(state);
            }
        }
        SessionCommand::Copy(index, kind) => inspect::copy(state, index, kind),
        SessionCommand::Export(index, kind) => {
            state.handle(super::AppCommand::ShowFileDialog(Some(kind), index));
        }
        SessionCommand::Filter(filter) => {
            browser.filter = filter;
            filter::refresh(state);
        }
        SessionCommand::FilterSessions(filter) => {
            state.sessions.filter = filter;
            state.sessions.page_offset = 0;
            super::sessions::list(state);
        }
        SessionCommand::Rename(session, name) => super::session_admin::rename(state, session, name),
        SessionCommand::Delete(session) => super::session_admin::delete(state, session),
        SessionCommand::UndoDelete => super::session_admin::undo_delete(state),
        SessionCommand::SwitchDb(path) => super::session_admin::switch_db(state, path),
        SessionCommand::OpenInForm(index) => {
            let model = &state.sessions;
            let (Some(session), Some(row)) = (model.open, model.rows.get(index)) else {
                return;
            };
            let command = super::AppCommand::LoadStoredRequest {
                session,
                request: row.id,
                position: row.position,
            };
            browser.view = MainView::Workbench;
            state.handle(command);
        }
        SessionCommand::Replay(index, speed) => replay::start(state, index, speed),
        SessionCommand::Step(delta) => replay::step(&mut state.browser, delta),
        SessionCommand::Resend(index) => resend::start(state, index),
        SessionCommand::StopReplay => replay::stop(&mut state.browser, &state.workers),
        SessionCommand::AskWhy(on) => browser.ask_why = on,
        SessionCommand::SelectPair(from, to) => jobs::pair_diff(state, from, to),
        SessionCommand::SetCompare(slot, side) => {
            if let Some(place) = browser.compare.slots.get_mut(slot) {
                *place = Some(side);
                jobs::compare(state);
            }
        }
        SessionCommand::ClearCompare => {
            let mut generation = browser.compare.generation;
            generation.bump();
            browser.compare = CompareState {
                generation,
                ..CompareState::default()
            };
        }
        SessionCommand::Timeline(command) => browser.timeline.handle(&command),
        SessionCommand::WhatIf(text) => whatif::start(state, text),
    }
}

/// Applies a Sessions event (called from `AppState::apply_event`).
pub fn apply(state: &mut AppState, event: SessionEvent) {
    let browser = &mut state.browser;
    match event {
        SessionEvent::Analyzed {
            session,
            generation,
            result,
        } if state.sessions.open == Some(session)
            && state.sessions.rows_generation.is_current(generation) =>
        {
            browser.analyzing = false;
            match result {
                Ok(analysis) => {
                    let first_break = analysis.first_note();
                    let requests = analysis.badges.len();
                    let ids: Vec<i64> = state.sessions.rows.iter().map(|r| r.id).collect();
                    super::traffic::analysed(state, session, &ids, &analysis.badges);
                    let browser = &mut state.browser;
                    browser.analysis = Some(analysis);
                    // A reload keeps the pair the user is looking at (computed again on the new
                    // analysis); a first open shows the first break.
                    let pair = browser
                        .pair
                        .filter(|(from, to)| *from < requests && *to < requests)
                        .or(first_break);
                    if let Some((from, to)) = pair {
                        jobs::pair_diff(state, from, to);
                    }
                }
                Err(e) => browser.error = Some(e),
            }
        }
        SessionEvent::PairDiffed {
            session,
            pair,
            result,
        } if state.sessions.open == Some(session) && browser.pair == Some(pair) => match result {
            Ok(diff) => browser.pair_diff = Some(diff),
            Err(e) => browser.error = Some(e.to_string()),
        },
        SessionEvent::Compared { generation, result }
            if browser.compare.generation.is_current(generation) =>
        {
            match result {
                Ok(compared) => {
                    browser.compare.result = Some(compared);
                    browser.compare.error = None;
                }
                Err(e) => browser.compare.error = Some(e.to_string()),
            }
        }
        SessionEvent::Inspected { generation, result } => {
            inspect::inspected(&mut browser.inspect, generation, result);
        }
        SessionEvent::InspectTokens { generation, tokens }
            if browser.inspect.generation.is_current(generation) =>
        {
            browser.inspect.tokens = Some(tokens);
        }
        SessionEvent::CopyReady { kind, result } => {
            inspect::copied(&mut browser.inspect, kind, result);
        }
        SessionEvent::WhatIfDone {
            session,
            generation,
            result,
        } => whatif::done(state, session, generation, result),
        SessionEvent::Replay { generation, update } => {
            // The new request is in the session: read its rows and prefix again — also for a
            // re-send that a newer replay stopped (its generation is stale, its row is real).
            let resent = match &update {
                ReplayUpdate::Resent(Ok(session)) => Some(*session),
                _ => None,
            };
            traffic_of_resend(state, generation, &update);
            let browser = &mut state.browser;
            replay::apply(browser, generation, update);
            if let Some(session) = resent {
                state.apply_event(super::AppEvent::StoreChanged(
                    super::sessions::StoreChange {
                        session: Some(session),
                        open: false,
                    },
                ));
            }
        }
        _ => {}
    }
}

/// A re-send's report, as the Traffic view's row of it sees it: stored (its ids), or ended.
fn traffic_of_resend(state: &mut AppState, generation: u64, update: &ReplayUpdate) {
    use super::traffic::Origin;
    match update {
        ReplayUpdate::ResendStored(stored) => {
            if let Some(request) = stored.request {
                super::traffic::recorded_as(
                    state,
                    Origin::Resend,
                    generation,
                    stored.session,
                    request,
                );
            }
        }
        ReplayUpdate::Resent(result) => {
            // The timeline shows this re-send's answer while it is the latest replay.
            let current = state.browser.replay.generation.is_current(generation);
            let outcome = current.then(|| {
                let timeline = &state.browser.timeline;
                let status = timeline.attempts().last().and_then(|a| a.status);
                (
                    crate::store::OutcomeRecord::from_turn(timeline.current_outcome()),
                    status,
                )
            });
            let error = result.as_ref().err().map(|e| format!("Re-send: {e}"));
            super::traffic::ended(
                state,
                Origin::Resend,
                generation,
                outcome.as_ref().map(|(o, s)| (o, *s)),
                error,
            );
        }
        _ => {}
    }
}

/// Opens `session` in the Sessions view with stored request `request` selected once its rows
/// are read (the Traffic view's "Open session").
pub fn open_at(state: &mut AppState, session: i64, request: i64) {
    if state.sessions.open == Some(session)
        && let Some(index) = state.sessions.rows.iter().position(|r| r.id == request)
    {
        state.browser.selected = Some(index);
        state.browser.reveal += 1;
        inspect::ensure(state);
        return;
    }
    whatif::forget(state);
    super::sessions::open(state, session);
    state.browser.select_request = Some(request);
}

impl SessionBrowser {
    /// Another session opens (or none is): what was shown of the previous one goes — its
    /// selection, analysis, the table's sort (filters stay), and a comparison of two requests
    /// (a half-chosen one stays, so two sessions can still be compared).
    pub fn clear_open(&mut self) {
        self.selected = None;
        self.select_request = None;
        self.filter.sort = None;
        if self.compare.slots.iter().all(Option::is_some) {
            let mut generation = self.compare.generation;
            generation.bump();
            self.compare = CompareState {
                generation,
                ..CompareState::default()
            };
        }
        self.analysis = None;
        self.analyzing = false;
        self.pair = None;
        self.pair_diff = None;
        self.visible.clear();
        inspect::clear(&mut self.inspect);
        // The job (if any) was cancelled by `whatif::forget`; its result would be dropped.
        self.whatif = whatif::WhatIfState {
            job: self.whatif.job,
            generation: self.whatif.generation + 1,
            ..whatif::WhatIfState::default()
        };
    }
}

/// The open session's rows were read (their ids, in order): a request asked for
/// ([`SessionBrowser::select_request`]) is selected and revealed; else the selection stays on its
/// row when it still exists, else the first row is selected.
pub fn rows_read(browser: &mut SessionBrowser, ids: &[i64]) {
    if let Some(index) = browser
        .select_request
        .take()
        .and_then(|request| ids.iter().position(|id| *id == request))
    {
        browser.selected = Some(index);
        browser.reveal += 1;
        return;
    }
    let count = ids.len();
    browser.selected = browser
        .selected
        .filter(|i| *i < count)
        .or((count > 0).then_some(0));
}

/// The current form's first compiled body, for a comparison against it.
fn form_body(state: &AppState) -> Option<Arc<JsonMap>> {
    state.views.first().map(|view| view.compiled.body.shared())
}
