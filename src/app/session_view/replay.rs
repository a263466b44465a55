//! Replay of a recorded request into the Sessions view's timeline: the job reads the recording
//! ([`Recording::load`], as `promptwire replay` does) and runs it through the one core replay
//! ([`RecordedRequest::replay`], as `promptwire replay` and the replay endpoint do): each stored
//! event read directly by the same reader and mapper as a live stream, stamped with its recorded
//! receive time, handed over at the pace of [`Timing`] (1×, 4×, instant) — or all at once for
//! step mode, where the view shows one more or one fewer event per step. The recorded outcome
//! is kept beside the replayed one.

use std::time::{Duration, Instant};

use super::{SessionBrowser, SessionEvent};
use crate::app::event::AppEvent;
use crate::app::jobs::{JobContext, JobId};
use crate::app::state::AppState;
use crate::app::timeline::{FailureInfo, TimelineUpdate};
use crate::core::stream::http_error::classify_http_error;
use crate::core::stream::replay::Replayed;
use crate::core::stream::{TimelineEntry, TurnOutcome, TurnState};
use crate::store::OutcomeRecord;
use crate::store::seed::open_seeded;
use crate::transport::CancelToken;
use crate::transport::replay::{RecordedRequest, Recording, Timing};

/// Entries handed over per event at most (an instant replay of a long stream).
const BATCH: usize = 256;

/// How a replay is paced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReplaySpeed {
    /// The recorded receive times.
    Original,
    /// Four times as fast.
    Fast4x,
    /// Everything at once.
    #[default]
    Instant,
    /// One event per step (next / previous).
    Step,
}

impl ReplaySpeed {
    /// Every speed, for the picker.
    pub const ALL: [Self; 4] = [Self::Original, Self::Fast4x, Self::Instant, Self::Step];

    /// Button text.
    pub fn label(self) -> &'static str {
        match self {
            Self::Original => "1×",
            Self::Fast4x => "4×",
            Self::Instant => "instant",
            Self::Step => "step",
        }
    }

    fn timing(self) -> Timing {
        match self {
            Self::Original => Timing::Original,
            Self::Fast4x => Timing::Speed(4.0),
            Self::Instant | Self::Step => Timing::Instant,
        }
    }
}

/// What the replay job reports.
#[derive(Debug)]
pub enum ReplayUpdate {
    /// The recording was read: what was recorded, and the answer's status.
    Started {
        /// The recorded outcome (shown beside the replayed one).
        recorded: Option<Box<OutcomeRecord>>,
        /// HTTP status and when the headers arrived.
        status: Option<(u16, Duration)>,
    },
    /// Events, in order.
    Entries(Vec<TimelineEntry>),
    /// The stream ended.
    Finished {
        /// The replayed outcome.
        outcome: Box<TurnOutcome>,
        /// Why it did not complete.
        failure: Option<FailureInfo>,
    },
    /// Step mode: every event at once, shown one per step.
    Buffered {
        /// All events.
        entries: Vec<TimelineEntry>,
        /// The replayed outcome.
        outcome: Box<TurnOutcome>,
        /// Why it did not complete.
        failure: Option<FailureInfo>,
    },
    /// The recording could not be read.
    Failed(crate::app::error::AppError),
    /// A re-send's progress (`resend.rs`).
    Live(TimelineUpdate),
    /// A re-send ended: the session it was recorded into, or why it could not be sent.
    Resent(Result<i64, crate::app::error::AppError>),
    /// A re-send: the recorded stream decoded, shown beside the new answer.
    RecordedOutcome(Box<TurnOutcome>),
    /// A re-send's request was stored (the Traffic view's row gets its ids).
    ResendStored(crate::store::send_recording::StoredSend),
}

/// The replay shown in the timeline.
#[derive(Debug, Clone, Default)]
pub struct ReplayState {
    /// Which replay (or re-send) the timeline shows: reports of older ones are dropped.
    pub generation: crate::app::jobs::Generation,
    /// The running job.
    pub job: Option<JobId>,
    /// Pace.
    pub speed: ReplaySpeed,
    /// Session and position replayed.
    pub request: Option<(i64, i64)>,
    /// The recorded outcome.
    pub recorded: Option<Box<OutcomeRecord>>,
    /// HTTP status and header time of the replayed answer.
    pub status: Option<(u16, Duration)>,
    /// Step mode: all events, and how many are shown.
    pub buffer: Vec<TimelineEntry>,
    /// Step mode: events shown.
    pub shown: usize,
    /// Step mode: how it ends (applied when the last event is shown).
    pub ending: Option<(Box<TurnOutcome>, Option<FailureInfo>)>,
    /// The timeline shows a re-send (a live answer), not a replay.
    pub resend: bool,
    /// The timeline shows the recording proxy's exchange of this number, live (`live.rs`).
    pub proxied: Option<u64>,
    /// A re-send: cancels its send (Stop).
    pub cancel: Option<CancelToken>,
    /// A re-send was stopped; its final report is on its way.
    pub stopping: bool,
    /// A re-send: the recorded stream decoded (items, timings) beside the new answer.
    pub recorded_outcome: Option<Box<TurnOutcome>>,
}

/// Stops what runs in the timeline: a re-send's send is cancelled at once and its job left to
/// record and report the partial answer; a replay's job is cancelled.
pub fn stop(browser: &mut SessionBrowser, workers: &crate::app::jobs::Workers) {
    let replay = &mut browser.replay;
    if replay.resend
        && replay.job.is_some()
        && let Some(cancel) = &replay.cancel
    {
        cancel.cancel();
        replay.stopping = true;
        return;
    }
    if let Some(job) = replay.job.take() {
        workers.cancel(job);
    }
}

/// Before a new replay or re-send: stops whatever ran. A re-send's send is cancelled (so a
/// stalled connection does not stay open) and its job left to record the partial answer and
/// report it, which reloads the session; a replay's job is cancelled.
pub fn stop_running(browser: &mut SessionBrowser, workers: &crate::app::jobs::Workers) {
    let replay = &mut browser.replay;
    if let Some(cancel) = replay.cancel.take() {
        cancel.cancel();
        replay.job = None;
        return;
    }
    if let Some(job) = replay.job.take() {
        workers.cancel(job);
    }
}

/// Another session was opened: a replay or re-send of a request of a different session is
/// stopped and its timeline emptied (the bottom pane never shows the previous session's
/// stream). The recording proxy's live exchange stays.
pub fn forget_other_session(
    browser: &mut SessionBrowser,
    workers: &crate::app::jobs::Workers,
    session: i64,
) {
    let shown = browser.replay.request.map(|(s, _)| s);
    if browser.replay.proxied.is_some() || shown.is_none_or(|s| s == session) {
        return;
    }
    stop_running(browser, workers);
    let mut generation = browser.replay.generation;
    generation.bump();
    browser.replay = ReplayState {
        generation,
        ..ReplayState::default()
    };
    browser.timeline.clear();
}

/// Starts replaying request `index` of the open session.
pub fn start(state: &mut AppState, index: usize, speed: ReplaySpeed) {
    let browser = &mut state.browser;
    let (Some(session), Some(row), Some(path)) = (
        state.sessions.open,
        state.sessions.rows.get(index),
        state.sessions.db_path.clone(),
    ) else {
        return;
    };
    let position = row.position;
    stop_running(browser, &state.workers);
    let mut next = browser.replay.generation;
    let generation = next.bump();
    browser.replay = ReplayState {
        generation: next,
        speed,
        request: Some((session, position)),
        ..ReplayState::default()
    };
    browser.timeline.clear();
    let spawned = state.workers.spawn("replay", move |ctx| {
        let report = |update| {
            ctx.report(AppEvent::Sessions(SessionEvent::Replay {
                generation,
                update,
            }))
        };
        let loaded = open_seeded(&path)
            .and_then(|store| Recording::load(&store, session, Some(position)))
            .map_err(crate::app::error::AppError::from);
        match loaded.map(|r| r.requests.into_iter().next()) {
            Ok(Some(request)) => run(ctx, &request, speed, &report),
            Ok(None) => {
                report(ReplayUpdate::Failed(crate::app::error::AppError::Reported(
                    format!("session {session} has no request {position}"),
                )));
            }
            Err(e) => {
                report(ReplayUpdate::Failed(e));
            }
        }
    });
    match spawned {
        Ok(id) => state.browser.replay.job = Some(id),
        Err(e) => state.browser.error = Some(e),
    }
}

/// Sleeps until `due` after `start`, in short slices; false when cancelled.
fn wait_until(ctx: &JobContext, start: Instant, due: Duration) -> bool {
    loop {
        if ctx.is_cancelled() {
            return false;
        }
        let now = start.elapsed();
        if now >= due {
            return true;
        }
        std::thread::sleep((due - now).min(Duration::from_millis(20)));
    }
}

pub(super) fn failure_of(outcome: &TurnOutcome) -> Option<FailureInfo> {
    match &outcome.state {
        TurnState::Failed(e) => Some(FailureInfo {
            class: e.class(),
            message: e.to_string(),
            retry_after: e.retry_after(),
            retried_after: None,
            retryable: e.is_retryable(),
        }),
        _ => None,
    }
}

fn run(
    ctx: &JobContext,
    request: &RecordedRequest,
    speed: ReplaySpeed,
    report: &impl Fn(ReplayUpdate) -> bool,
) {
    let timing = speed.timing();
    let started = Instant::now();
    let status = request.status.map(|s| (s, Duration::ZERO));
    if !report(ReplayUpdate::Started {
        recorded: request.outcome.clone().map(Box::new),
        status,
    }) {
        return;
    }
    if !request.is_stream() {
        if !wait_until(ctx, started, timing.due(request.duration())) {
            return;
        }
        let error = classify_http_error(
            request.status.unwrap_or(0),
            &request.response_headers,
            &request.response_text(),
            &request.url,
        );
        report(ReplayUpdate::Finished {
            outcome: Box::default(),
            failure: Some(FailureInfo {
                class: error.class(),
                message: error.to_string(),
                retry_after: error.retry_after(),
                retried_after: None,
                retryable: error.is_retryable(),
            }),
        });
        return;
    }
    let step = speed == ReplaySpeed::Step;
    let mut all = Vec::new();
    let mut batch = Vec::new();
    let mut replay = request.replay(timing).peekable();
    while let Some(paced) = replay.next() {
        let unread = matches!(paced.step, Replayed::Unread(_));
        if !step && !unread && !wait_until(ctx, started, paced.due) {
            return;
        }
        match paced.step {
            Replayed::Entry(entry) if step => all.push(entry),
            Replayed::Entry(entry) => {
                batch.push(entry);
                // Handed over when the next event is not due yet, or the batch is full.
                let next_later = replay.peek().is_some_and(|next| {
                    !matches!(next.step, Replayed::End(_)) && next.due > started.elapsed()
                });
                if (next_later || batch.len() >= BATCH)
                    && !report(ReplayUpdate::Entries(std::mem::take(&mut batch)))
                {
                    return;
                }
            }
            // After the turn ended: a client never reads it.
            Replayed::Unread(_) => {}
            Replayed::End(outcome) => {
                let failure = failure_of(&outcome);
                if step {
                    report(ReplayUpdate::Buffered {
                        entries: std::mem::take(&mut all),
                        outcome,
                        failure,
                    });
                } else {
                    if !batch.is_empty()
                        && !report(ReplayUpdate::Entries(std::mem::take(&mut batch)))
                    {
                        return;
                    }
                    report(ReplayUpdate::Finished { outcome, failure });
                }
            }
        }
    }
}

/// Applies a replay report to the view.
pub fn apply(browser: &mut SessionBrowser, generation: u64, update: ReplayUpdate) {
    if !browser.replay.generation.is_current(generation) {
        return;
    }
    let timeline = &mut browser.timeline;
    match update {
        ReplayUpdate::Started { recorded, status } => {
            browser.replay.recorded = recorded;
            browser.replay.status = status;
            timeline.apply(TimelineUpdate::AttemptStarted { attempt: 1 });
            if let Some((status, at)) = status {
                timeline.apply(TimelineUpdate::Response { status, at });
            }
        }
        ReplayUpdate::Entries(entries) => {
            for entry in entries {
                timeline.push(entry);
            }
        }
        ReplayUpdate::Finished { outcome, failure } => {
            timeline.apply(TimelineUpdate::Finished { outcome, failure });
            browser.replay.job = None;
        }
        ReplayUpdate::Buffered {
            entries,
            outcome,
            failure,
        } => {
            browser.replay.buffer = entries;
            browser.replay.shown = 0;
            browser.replay.ending = Some((outcome, failure));
            browser.replay.job = None;
        }
        ReplayUpdate::Failed(e) => {
            browser.error = Some(e.to_string());
            browser.replay.job = None;
            browser.replay.stopping = false;
        }
        ReplayUpdate::Resent(Err(e)) => {
            browser.error = Some(format!("Re-send: {e}"));
            browser.replay.job = None;
            browser.replay.stopping = false;
        }
        ReplayUpdate::Live(update) => timeline.apply(update),
        ReplayUpdate::Resent(Ok(_)) => {
            browser.replay.job = None;
            browser.replay.stopping = false;
        }
        ReplayUpdate::RecordedOutcome(outcome) => browser.replay.recorded_outcome = Some(outcome),
        // The Traffic view's business (`session_view::apply`).
        ReplayUpdate::ResendStored(_) => {}
    }
}

/// Step mode: shows `delta` more (or fewer) events, rebuilding the timeline from the buffer.
pub fn step(browser: &mut SessionBrowser, delta: i64) {
    let replay = &mut browser.replay;
    if replay.speed != ReplaySpeed::Step || replay.job.is_some() {
        return;
    }
    let len = replay.buffer.len();
    let shown = if delta < 0 {
        replay.shown.saturating_sub(delta.unsigned_abs() as usize)
    } else {
        (replay.shown + delta as usize).min(len)
    };
    replay.shown = shown;
    let timeline = &mut browser.timeline;
    timeline.clear();
    timeline.apply(TimelineUpdate::AttemptStarted { attempt: 1 });
    if let Some((status, at)) = replay.status {
        timeline.apply(TimelineUpdate::Response { status, at });
    }
    for entry in &replay.buffer[..shown] {
        timeline.push(entry.clone());
    }
    if shown == len
        && let Some((outcome, failure)) = &replay.ending
    {
        timeline.apply(TimelineUpdate::Finished {
            outcome: outcome.clone(),
            failure: failure.clone(),
        });
    }
}
