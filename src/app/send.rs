//! Send from the workbench: the compiled column the user picked as the target (an HTTP body is
//! streamed over HTTP SSE, a WebSocket frame over a WebSocket to the provider's Responses
//! endpoint: [`wire_of`]) goes out through the one [`Sender`] on the app's network runtime; its
//! live events are consumed by [`live::run`] — recorded through the database's writer and
//! streamed into the workbench's [`TimelineModel`] through the bounded event channel — so the
//! send is recorded into the store as it streams — into the session the workbench's "Send into"
//! names ([`SendState::into`]: chosen there, or a new session), which the send then keeps for the
//! next one, so a conversation is one session. Browsing sessions (the Sessions tab, the
//! sidebar's list) never changes where Send records. Stop cancels the send's [`CancelToken`] at once (a
//! stalled stream too); the partial outcome still arrives and is recorded.
//!
//! The API key is read through the app's [`KeyLookup`] (the process environment, injectable for
//! tests) when Send is pressed: a missing variable is explained and nothing is sent. The Sessions
//! view's Re-send (`session_view/resend.rs`) goes the same way: same sender, same key lookup,
//! same [`live::run`], same recording.

pub mod live;
pub mod turn;

use std::path::PathBuf;
use std::sync::Arc;

use reqwest::header::HeaderMap;

use super::error::{AppError, AppResult};
use super::event::AppEvent;
use super::jobs::{JobContext, JobId};
use super::sessions::StoreChange;
use super::settings::ViewKind;
use super::state::AppState;
use super::timeline::{TimelineCommand, TimelineModel, TimelineUpdate};
use super::traffic::Origin;
use crate::core::compile::CompiledRequest;
use crate::core::compile::ask_why::with_comparison_response;
use crate::store::seed::open_seeded;
use crate::store::send_recording::StoredSend;
use crate::store::{SendRecording, Writer};
use crate::transport::recording::finish_recording;
use crate::transport::{CancelToken, SendOptions, Sender, Wire, resolve_headers};
use live::{UiChannel, UiStep};

/// Reads an environment variable by name (the API key); `std::env` unless a test injects one.
pub type KeyLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// The process environment.
#[allow(
    clippy::disallowed_methods,
    reason = "the API-key lookup: the one place the app reads a key's variable"
)]
pub fn env_lookup() -> KeyLookup {
    Arc::new(|name| std::env::var(name).ok())
}

/// The workbench's send: target column, the running job, its timeline and where it was recorded.
#[derive(Debug, Default)]
pub struct SendState {
    /// The compiled column sent (index into `AppState::views`).
    pub target: usize,
    /// The running send.
    pub job: Option<JobId>,
    /// Cancels the running send.
    pub cancel: Option<CancelToken>,
    /// Which send is the latest; reports of older sends are ignored.
    pub generation: super::jobs::Generation,
    /// The timeline of the last send.
    pub timeline: TimelineModel,
    /// A send was started at least once (the timeline panel shows from then on).
    pub shown: bool,
    /// Why the last send could not start, or its recording failed.
    pub error: Option<String>,
    /// The request last sent (Continue builds on it).
    pub sent: Option<Arc<CompiledRequest>>,
    /// Session and request id the last send was recorded as.
    pub recorded: Option<(i64, i64)>,
    /// The turn (position in its session, as the request table numbers it) it was recorded as.
    pub recorded_turn: Option<i64>,
    /// The session the running send records into.
    pub session: Option<i64>,
    /// The session the next Send records into (None: a new one). Changed only by the user's
    /// choice in the workbench ("Send into", "New session") and by a send, which goes on in the
    /// session it was recorded into; browsing sessions never changes it.
    pub into: Option<i64>,
    /// The Prompt last sent (Continue builds the next one from it).
    pub sent_prompt: Option<Arc<crate::core::prompt::Prompt>>,
    /// The request Continue loaded into the form, and its prefix verdict.
    pub continued: Option<turn::Continued>,
    /// "Ask the server why": each Send sets `prompt_cache_options.comparison_response_id` to
    /// the response of the previous send of the same conversation (its last response), so the
    /// answer carries the server's `prompt_cache_diagnostics`. Off unless the user ticks it.
    pub ask_why: bool,
    /// The user stopped the running send (its end says "Cancelled", not "Sent").
    pub stopped: bool,
}

/// What the Send bar and the timeline panel ask for.
#[derive(Debug, Clone, PartialEq)]
pub enum SendCommand {
    /// Stop the running send (its partial outcome is kept).
    Stop,
    /// Send column `i` from now on.
    Target(usize),
    /// A command of the timeline panel.
    Timeline(TimelineCommand),
    /// The next Send starts a new session.
    NewSession,
    /// The next Send records into this session (None: a new one).
    Into(Option<i64>),
    /// Turn "ask the server why" on or off.
    AskWhy(bool),
    /// Build the next request from the last response: (call id, output) per pending call, and
    /// an optional new user message.
    Continue {
        /// Output text per call id.
        outputs: Vec<(String, String)>,
        /// A new user message.
        user: Option<String>,
    },
}

/// What the send job reports.
#[derive(Debug)]
pub enum SendUpdate {
    /// Nothing was sent: why.
    Failed(AppError),
    /// Recording into this session (None: no store).
    Started(Option<i64>),
    /// An attempt's request was stored (the sidebar shows it while the stream runs).
    Recording {
        /// The session.
        session: i64,
        /// The stored request.
        request: i64,
    },
    /// A timeline update.
    Live(TimelineUpdate),
    /// The prefix verdict of the request Continue loaded (prompt `revision`).
    Prefix {
        /// The prompt revision checked.
        revision: u64,
        /// The pair report, or why it could not be computed.
        result: Result<crate::core::ledger::PairVerdict, String>,
    },
    /// The send ended: (session, request) recorded, or why the recording failed (None: not
    /// recorded, no store); and the recorded request's turn in its session, when read.
    Done(Option<AppResult<(i64, i64)>>, Option<i64>),
}

/// A report of send `generation`.
#[derive(Debug)]
pub struct SendReport {
    /// Which send.
    pub generation: u64,
    /// What happened.
    pub update: SendUpdate,
}

/// Applies a Send-bar command.
pub fn handle(state: &mut AppState, command: SendCommand) {
    match command {
        SendCommand::Stop => stop(state),
        SendCommand::Target(i) => state.send.target = i,
        SendCommand::Timeline(command) => state.send.timeline.handle(&command),
        SendCommand::NewSession | SendCommand::Into(None) => {
            state.send.into = None;
            state.set_status("The next Send starts a new session", false);
        }
        SendCommand::Into(Some(session)) => {
            state.send.into = Some(session);
            state.set_status(format!("The next Send adds to session #{session}"), false);
        }
        SendCommand::Continue { outputs, user } => turn::continue_turn(state, outputs, user),
        SendCommand::AskWhy(on) => state.send.ask_why = on,
    }
}

/// Stops the running send; its partial outcome arrives as it finishes.
pub fn stop(state: &mut AppState) {
    if let Some(cancel) = &state.send.cancel {
        cancel.cancel();
        state.send.stopped = true;
        state.set_status("Stopping the send (the partial response is kept)", false);
    }
}

/// Starts sending the target column.
pub fn start(state: &mut AppState) {
    if state.send.job.is_some() {
        state.set_status("A send is running: Stop it first (Esc)", true);
        return;
    }
    let fail = |state: &mut AppState, text: String| {
        state.set_status(text.clone(), true);
        state.send.error = Some(text);
    };
    // A raw JSON edit that does not parse is not what the form shows as sent: refuse.
    if let Some((list, index)) = state.unapplied_edits.iter().next() {
        return fail(
            state,
            format!(
                "Send: the raw JSON of {list} {} does not parse (its error is under the \
                 editor) — fix or undo it first; nothing was sent",
                index + 1
            ),
        );
    }
    if !state.views_are_current() {
        return fail(state, "Send: wait for the form to compile".to_string());
    }
    let Some(view) = state.views.get(state.send.target) else {
        return fail(
            state,
            "Send: the target column is gone; pick another".to_string(),
        );
    };
    let Some(wire) = wire_of(view.view) else {
        return fail(
            state,
            "Send: a headers column cannot be sent; pick a body or frame column".to_string(),
        );
    };
    let mut compiled = Arc::clone(&view.compiled);
    let mut asked = None;
    if state.send.ask_why {
        match previous_response(state) {
            Some(id) => match with_comparison_response(&compiled, &id) {
                Ok(patched) => {
                    compiled = Arc::new(patched);
                    asked = Some(id);
                }
                Err(e) => return fail(state, format!("Send: {e}")),
            },
            None => state.set_status(
                "Ask the server why: no earlier response in this conversation yet — sent without a comparison",
                false,
            ),
        }
    }
    let lookup = Arc::clone(&state.key_lookup);
    let headers = match resolve_headers(&compiled, |env| lookup(env)) {
        Ok(headers) => headers,
        // One wording with Re-send's (`AppError`).
        Err(e) => return fail(state, format!("Send: {}", AppError::from(e))),
    };
    let send = &mut state.send;
    let generation = send.generation.bump();
    send.timeline.clear();
    send.shown = true;
    send.error = None;
    send.recorded = None;
    send.recorded_turn = None;
    send.stopped = false;
    send.sent = Some(Arc::clone(&compiled));
    send.sent_prompt = Some(Arc::clone(&state.prompt));
    send.session = send.into;
    let cancel = CancelToken::new();
    send.cancel = Some(cancel.clone());
    let job = SendJob {
        compiled,
        headers,
        wire,
        db: state.sessions.db_path.clone(),
        session: send.into,
        model: state.prompt.model.clone(),
        generation,
        cancel,
        options: state.settings.limits.send_options(),
    };
    match state
        .workers
        .spawn_network("send", move |ctx| send_job(ctx, job))
    {
        Ok(id) => {
            state.send.job = Some(id);
            // The answer is what the user wants to see: a collapsed timeline opens again.
            let panes = &mut state.settings.panes;
            panes.collapsed.remove(&super::panes::PaneId::SendTimeline);
            if panes
                .maximised
                .is_some_and(|m| m != super::panes::PaneId::SendTimeline)
            {
                panes.maximised = None;
            }
            let method = match wire {
                Wire::Http => "POST",
                Wire::WebSocket => "WS",
            };
            let url = state
                .send
                .sent
                .as_ref()
                .map_or("", |c| c.url.as_str())
                .to_string();
            let model = state.prompt.model.clone();
            let generation = state.send.generation.current();
            super::traffic::started(state, Origin::Send, generation, method, &url, &model);
            let asking = asked.map_or_else(String::new, |id| {
                format!("; asking the server why against {id}")
            });
            state.set_status(
                format!(
                    "Sending to {} ({}){asking}",
                    state.send.sent.as_ref().map_or("", |c| c.url.as_str()),
                    match wire {
                        Wire::Http => "HTTP",
                        Wire::WebSocket => "WebSocket",
                    }
                ),
                false,
            );
        }
        Err(e) => fail(state, format!("Send: {e}")),
    }
}

/// The response "ask the server why" compares with: the previous send's, when it completed and
/// belongs to the conversation the next send records into (not after "new session", nor once
/// another session was chosen).
fn previous_response(state: &AppState) -> Option<String> {
    if state.send.session != state.send.into {
        return None;
    }
    state
        .send
        .timeline
        .current_outcome()
        .response_id()
        .filter(|id| !id.is_empty())
        .map(str::to_string)
}

/// Applies a report of the send job.
pub fn apply(state: &mut AppState, report: SendReport) {
    if !state.send.generation.is_current(report.generation) {
        return;
    }
    match report.update {
        SendUpdate::Started(session) => state.send.session = session,
        SendUpdate::Recording { session, request } => {
            state.send.session = Some(session);
            state.send.into = Some(session);
            super::traffic::recorded_as(state, Origin::Send, report.generation, session, request);
            state.set_status(format!("Sending; recording into session #{session}"), false);
            // The session and its new request show while the stream runs.
            state.apply_event(AppEvent::StoreChanged(StoreChange {
                session: Some(session),
                open: true,
            }));
        }
        SendUpdate::Failed(e) => {
            state.send.job = None;
            state.send.cancel = None;
            // The edge: the error becomes the line the status bar and the send bar show.
            let e = crate::core::redact::redact_text(&format!("Send: {e}"));
            super::traffic::ended(
                state,
                Origin::Send,
                report.generation,
                None,
                Some(e.clone()),
            );
            state.set_status(e.clone(), true);
            state.send.error = Some(e);
        }
        SendUpdate::Live(update) => state.send.timeline.apply(update),
        SendUpdate::Prefix { revision, result } => turn::apply_prefix(state, revision, result),
        SendUpdate::Done(recorded, turn) => {
            state.send.job = None;
            state.send.cancel = None;
            if let Some(Ok((session, request))) = recorded {
                super::traffic::recorded_as(
                    state,
                    Origin::Send,
                    report.generation,
                    session,
                    request,
                );
            }
            let outcome =
                crate::store::OutcomeRecord::from_turn(state.send.timeline.current_outcome());
            let status = state.send.timeline.attempts().last().and_then(|a| a.status);
            let error = match &recorded {
                Some(Err(e)) => Some(format!("not recorded: {e}")),
                _ => None,
            };
            super::traffic::ended(
                state,
                Origin::Send,
                report.generation,
                Some((&outcome, status)),
                error,
            );
            // Stopped by the user: say so, not "Sent".
            let verb = if state.send.stopped {
                "Cancelled"
            } else {
                "Sent"
            };
            match recorded {
                Some(Ok((session, request))) => {
                    // Where it was recorded, whether or not the live "recording into" step got
                    // through before the stream ended (the writer may report it after).
                    state.send.session = Some(session);
                    state.send.into = Some(session);
                    state.send.recorded = Some((session, request));
                    state.send.recorded_turn = turn;
                    let what = turn.map_or_else(
                        || format!("a request of session #{session}"),
                        |turn| format!("turn {turn} of session #{session}"),
                    );
                    state.set_status(format!("{verb}; recorded as {what}"), false);
                    // The conversation stays one session: it is the open one.
                    state.apply_event(AppEvent::StoreChanged(StoreChange {
                        session: Some(session),
                        open: true,
                    }));
                }
                Some(Err(e)) => {
                    state.send.error = Some(format!("The send was not recorded: {e}"));
                    state.set_status(format!("The send was not recorded: {e}"), true);
                }
                None => {
                    state.set_status(format!("{verb} (no session database: not recorded)"), false)
                }
            }
        }
    }
}

/// The wire a compiled column goes out on (None: a headers column, which cannot be sent).
pub fn wire_of(view: ViewKind) -> Option<Wire> {
    match view {
        ViewKind::Body => Some(Wire::Http),
        ViewKind::WsFrame => Some(Wire::WebSocket),
        ViewKind::Headers => None,
    }
}

/// Everything the job needs, owned.
struct SendJob {
    compiled: Arc<CompiledRequest>,
    headers: HeaderMap,
    wire: Wire,
    db: Option<PathBuf>,
    session: Option<i64>,
    model: String,
    generation: u64,
    cancel: CancelToken,
    options: SendOptions,
}

fn open_recording(
    path: &std::path::Path,
    session: Option<i64>,
    model: &str,
    compiled: &CompiledRequest,
    on_stored: Arc<dyn Fn(StoredSend) + Send + Sync>,
) -> AppResult<SendRecording> {
    let store = open_seeded(path)?;
    if let Some(id) = session {
        store.session(id)?;
    }
    let writer = Writer::open(store.path())?;
    drop(store);
    Ok(match session {
        Some(id) => SendRecording::into_session(&writer, id, compiled, Some(on_stored)),
        None => SendRecording::new_session(
            &writer,
            &format!("send {model}"),
            model,
            compiled,
            Some(on_stored),
        ),
    }?)
}

async fn send_job(ctx: JobContext, job: SendJob) -> JobContext {
    let generation = job.generation;
    let report = |ctx: &JobContext, update| report_blocking(ctx, generation, update);
    let sender = match Sender::new(job.wire, &job.compiled.url, job.options.clone()) {
        Ok(sender) => sender,
        Err(e) => {
            report(&ctx, SendUpdate::Failed(AppError::from(e))).await;
            return ctx;
        }
    };
    let ui = UiChannel::default();
    let recording = match job.db.clone() {
        Some(path) => {
            let (session, model, compiled) =
                (job.session, job.model.clone(), Arc::clone(&job.compiled));
            let on_stored = ui.on_stored();
            let opened = tokio::task::spawn_blocking(move || {
                open_recording(&path, session, &model, &compiled, on_stored)
            })
            .await
            .map_err(|e| AppError::Worker(e.to_string()))
            .and_then(|r| r);
            match opened {
                Ok(recording) => Some(recording),
                Err(e) => {
                    report(&ctx, SendUpdate::Done(Some(Err(e)), None)).await;
                    return ctx;
                }
            }
        }
        None => None,
    };
    let session = recording.as_ref().and_then(SendRecording::session);
    if !report(&ctx, SendUpdate::Started(session)).await {
        return ctx;
    }
    let live = sender.start(
        &tokio::runtime::Handle::current(),
        Arc::clone(&job.compiled),
        job.headers,
        job.cancel,
    );
    let reporter = ctx.clone();
    let consumed = live::run(live, recording, ui, move |step| match step {
        UiStep::Live(update) => report_now(&reporter, generation, SendUpdate::Live(update)),
        UiStep::Stored(stored) => match stored.request {
            Some(request) => report_now(
                &reporter,
                generation,
                SendUpdate::Recording {
                    session: stored.session,
                    request,
                },
            ),
            None => true,
        },
    })
    .await;
    let (recording, result) = match consumed {
        Ok(consumed) => consumed,
        Err(e) => {
            report(&ctx, SendUpdate::Done(Some(Err(e)), None)).await;
            return ctx;
        }
    };
    // The end, off the async workers: the final timeline update, the recording's commit (the
    // writer's; this waits for it), and the report of where it was recorded.
    let done = {
        let ctx = ctx.clone();
        let db = job.db.clone();
        tokio::task::spawn_blocking(move || {
            let report = |update| report_now(&ctx, generation, update);
            report(SendUpdate::Live(TimelineUpdate::finished(&result)));
            let recorded = recording.map(|recording| {
                let stored = finish_recording(recording, result)
                    .map_err(|e| AppError::Reported(format!("{e:#}")))?;
                stored
                    .request
                    .map(|request| (stored.session, request))
                    .ok_or_else(|| AppError::Reported("no attempt was made".to_string()))
            });
            // The turn as the request table numbers it (its position), not the database id.
            let turn = match (&recorded, &db) {
                (Some(Ok((_, request))), Some(path)) => crate::store::Store::open(path)
                    .and_then(|store| store.request(*request))
                    .ok()
                    .map(|record| record.summary.position),
                _ => None,
            };
            report(SendUpdate::Done(recorded, turn));
        })
    };
    if let Err(e) = done.await {
        report(
            &ctx,
            SendUpdate::Done(
                Some(Err(AppError::Worker(format!("the recording failed: {e}")))),
                None,
            ),
        )
        .await;
    }
    ctx
}

/// Reports `update` of send `generation` to the UI, waiting while its channel is full; false
/// when the UI is gone.
fn report_now(ctx: &JobContext, generation: u64, update: SendUpdate) -> bool {
    ctx.report(AppEvent::Send(SendReport { generation, update }))
}

/// Reports `update` from a blocking thread of the runtime (the report waits while the UI's
/// channel is full; an async worker must not).
fn report_blocking(
    ctx: &JobContext,
    generation: u64,
    update: SendUpdate,
) -> impl Future<Output = bool> + Send + use<> {
    let ctx = ctx.clone();
    async move {
        tokio::task::spawn_blocking(move || report_now(&ctx, generation, update))
            .await
            .unwrap_or(false)
    }
}
