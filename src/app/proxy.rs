//! The app's recording proxy and replay endpoint (issue 11, "live in the app"): what the Record
//! panel (`crate::ui::proxy_panel`) shows — each server's listening address, requests so far,
//! errors and notes — and the jobs that run them. A server is a network job
//! ([`Workers::spawn_network`](super::jobs::Workers::spawn_network)) that starts
//! [`start_proxy`] / [`start_replay`] on the app's tokio runtime and forwards every
//! [`ProxyEvent`] as an [`AppEvent::Record`]; cancelling the job stops the server (everything
//! recorded is committed first). The proxy's upstream CA file (`Settings::upstream_ca`) is read
//! by that job before anything listens: a file that cannot be used is the server's error. When a request starts or finishes the Sessions view's list
//! (and the open session's rows) are read again, so recorded requests appear as they arrive,
//! and the newest proxied request streams into the Sessions view's timeline
//! (`session_view/live.rs`). Every request either server handles is a row of the Traffic view
//! (`traffic.rs`).
//!
//! Wiring: [`AppCommand::Record`](super::AppCommand::Record) goes to [`handle`],
//! [`AppEvent::Record`] to [`apply`], a finished job to [`job_finished`].

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::error::{AppError, AppResult};
use super::event::AppEvent;
use super::jobs::{JobContext, JobId};
use super::state::AppState;
use crate::store::summary::OutcomeClass;
use crate::transport::proxy::{ProxyEvent, ProxyOptions, ServerError, ServerHandle, start_proxy};
use crate::transport::replay::Timing;
use crate::transport::replay_server::{ReplayOptions, start_replay};
use crate::transport::tls::ExtraRoots;

/// Notes kept per server (older ones are dropped).
pub const NOTES_KEPT: usize = 50;

/// Which server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerKind {
    /// The recording proxy.
    Proxy,
    /// The replay endpoint.
    Replay,
}

impl ServerKind {
    fn name(self) -> &'static str {
        match self {
            Self::Proxy => "proxy",
            Self::Replay => "replay endpoint",
        }
    }
}

/// One server as the Record panel shows it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServerView {
    /// Its job while it starts or runs.
    pub job: Option<JobId>,
    /// The address it listens on, once started.
    pub addr: Option<SocketAddr>,
    /// The base URL clients are pointed at (`http://ADDR/v1` for the proxy).
    pub base_url: Option<String>,
    /// Requests that arrived.
    pub requests: u64,
    /// Requests that ended (with any outcome).
    pub finished: u64,
    /// Requests that ended in an error (HTTP error, failed or broken stream).
    pub errors: u64,
    /// The last session a request was recorded into.
    pub session: Option<i64>,
    /// The replay endpoint: the session it serves (fixed when it starts).
    pub serving: Option<i64>,
    /// Requests whose recording lost events (the database was busy or full past the writer's
    /// budget), or that could not be recorded at all.
    pub incomplete: u64,
    /// WebSocket upgrades that failed (refused by the upstream, unreachable, bad handshake).
    pub upgrade_failures: u64,
    /// The connection limits it serves with (shown in the panel).
    pub limits: Option<crate::transport::proxy::listen::ConnectionLimits>,
    /// Requests relayed without being recorded, by `METHOD /path` (at most
    /// [`PASSTHROUGH_KEPT`] kinds; the rest count under `other`), in the order first seen.
    pub passthrough: Vec<(String, u64)>,
    /// The latest store problem while it lasts ("database is locked; retrying").
    pub store_problem: Option<String>,
    /// Why it could not start.
    pub error: Option<String>,
    /// Warnings and notes (the non-loopback warning, replay differences), oldest first.
    pub notes: Vec<String>,
}

/// Kinds of passthrough requests the Record panel counts one by one.
pub const PASSTHROUGH_KEPT: usize = 16;

impl ServerView {
    /// Counts one passthrough request to `METHOD path`.
    fn passed_through(&mut self, method: &str, path: &str) {
        let key = format!("{method} {path}");
        if let Some((_, n)) = self.passthrough.iter_mut().find(|(k, _)| *k == key) {
            *n += 1;
            return;
        }
        if self.passthrough.len() < PASSTHROUGH_KEPT {
            self.passthrough.push((key, 1));
        } else if let Some((_, n)) = self.passthrough.iter_mut().find(|(k, _)| k == "other") {
            *n += 1;
        } else {
            self.passthrough.push(("other".to_string(), 1));
        }
    }

    /// Starting or running.
    pub fn is_active(&self) -> bool {
        self.job.is_some()
    }

    fn note(&mut self, text: String) {
        if self.notes.len() >= NOTES_KEPT {
            self.notes.remove(0);
        }
        self.notes.push(text);
    }
}

/// Both servers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RecordState {
    /// The recording proxy.
    pub proxy: ServerView,
    /// The replay endpoint.
    pub replay: ServerView,
    /// Bumped each time the upstream CA file is set from outside the panel's text field (a
    /// Browse… choice): the panel then shows the setting again.
    pub upstream_ca_changes: u64,
}

impl RecordState {
    fn server(&mut self, kind: ServerKind) -> &mut ServerView {
        match kind {
            ServerKind::Proxy => &mut self.proxy,
            ServerKind::Replay => &mut self.replay,
        }
    }
}

/// What the Record panel asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum RecordCommand {
    /// Start the recording proxy.
    StartProxy {
        /// `HOST:PORT` to listen on.
        listen: String,
        /// The upstream base URL.
        upstream: String,
    },
    /// Start the replay endpoint for a recorded session.
    StartReplay {
        /// The session to serve.
        session: i64,
        /// `HOST:PORT` to listen on.
        listen: String,
        /// Pace of the served events.
        timing: Timing,
    },
    /// Stop a server.
    Stop(ServerKind),
    /// Set the upstream CA file (the path typed; empty: none), kept in the settings and used
    /// when the proxy starts.
    SetUpstreamCa(String),
    /// Choose the upstream CA file in a file dialog.
    BrowseUpstreamCa,
}

/// What a server job reports.
#[derive(Debug)]
pub enum RecordEvent {
    /// The server started (address, warning) or could not.
    Started {
        /// Which server.
        kind: ServerKind,
        /// Its address and start warning, or why it did not start.
        result: AppResult<(SocketAddr, Option<String>)>,
    },
    /// Outcomes of this session reached the store (the recorder commits them in batches).
    Committed {
        /// The session.
        session: i64,
    },
    /// A CA file was chosen in the file dialog (`None`: cancelled; `unavailable`: no dialog
    /// could be shown).
    UpstreamCaChosen {
        /// The file.
        path: Option<PathBuf>,
        /// The dialog answered at once: no dialog service is running.
        unavailable: bool,
    },
    /// The server reported.
    Event {
        /// Which server.
        kind: ServerKind,
        /// What it said.
        event: Box<ProxyEvent>,
    },
}

/// True when `listen`'s host is not a loopback address (the panel warns before starting).
pub fn is_exposed(listen: &str) -> bool {
    let host = listen
        .rsplit_once(':')
        .map_or(listen, |(host, _)| host)
        .trim_start_matches('[')
        .trim_end_matches(']');
    match host.parse::<std::net::IpAddr>() {
        Ok(ip) => !ip.is_loopback(),
        Err(_) => !host.eq_ignore_ascii_case("localhost"),
    }
}

/// Applies a Record command (called from `AppState::handle`).
pub fn handle(state: &mut AppState, command: RecordCommand) {
    let db = state.sessions.db_path.clone();
    let kind = match &command {
        RecordCommand::StartProxy { .. } => ServerKind::Proxy,
        RecordCommand::StartReplay { .. } => ServerKind::Replay,
        RecordCommand::Stop(kind) => {
            if let Some(job) = state.record.server(*kind).job {
                state.workers.cancel(job);
            }
            return;
        }
        RecordCommand::SetUpstreamCa(path) => {
            let path = path.trim();
            state.settings.upstream_ca = (!path.is_empty()).then(|| PathBuf::from(path));
            return;
        }
        RecordCommand::BrowseUpstreamCa => {
            browse_upstream_ca(state);
            return;
        }
    };
    if state.record.server(kind).is_active() {
        return;
    }
    let Some(db) = db else {
        state.record.server(kind).error = Some("no session database to record into".into());
        return;
    };
    let serving = match &command {
        RecordCommand::StartReplay { session, .. } => Some(*session),
        _ => None,
    };
    let spawned = match command {
        RecordCommand::StartProxy { listen, upstream } => {
            let otel = state.settings.otel.clone();
            let live_db = PathBuf::from(&db);
            let mut options = ProxyOptions::new(listen.trim(), upstream.trim(), Some(db));
            state.settings.limits.apply_to_proxy(&mut options);
            let ca = state.settings.upstream_ca.clone();
            state.workers.spawn_network("proxy", move |ctx| async move {
                // The CA file is read (bounded, off the async workers) before anything listens:
                // a bad one is the panel's error and no proxy starts.
                if let Some(path) = ca {
                    let read = tokio::task::spawn_blocking(move || ExtraRoots::read_file(&path))
                        .await
                        .map_err(|e| AppError::Worker(e.to_string()))
                        .and_then(|read| read.map_err(AppError::from));
                    match read {
                        Ok(roots) => options.upstream_ca = Some(roots),
                        Err(e) => {
                            ctx.report(AppEvent::Record(RecordEvent::Started {
                                kind: ServerKind::Proxy,
                                result: Err(e),
                            }));
                            return ctx;
                        }
                    }
                }
                // "Also export to OpenTelemetry": beside the proxy, never in its way.
                let live = match super::otel::live_export(&otel, live_db) {
                    Some(Ok(live)) => Some(live),
                    Some(Err(e)) => {
                        ctx.report(AppEvent::Record(RecordEvent::Event {
                            kind: ServerKind::Proxy,
                            event: Box::new(ProxyEvent::Note(format!(
                                "OpenTelemetry export did not start: {e}"
                            ))),
                        }));
                        None
                    }
                    None => None,
                };
                server_job(ctx, ServerKind::Proxy, start_proxy(options), live).await
            })
        }
        RecordCommand::StartReplay {
            session,
            listen,
            timing,
        } => {
            let mut options = ReplayOptions::new(listen.trim(), PathBuf::from(&db), session);
            options.timing = timing;
            state.workers.spawn_network("replay-endpoint", move |ctx| {
                server_job(ctx, ServerKind::Replay, start_replay(options), None)
            })
        }
        RecordCommand::Stop(_)
        | RecordCommand::SetUpstreamCa(_)
        | RecordCommand::BrowseUpstreamCa => return,
    };
    let server = state.record.server(kind);
    match spawned {
        Ok(job) => {
            *server = ServerView {
                job: Some(job),
                serving,
                // The app's servers run with the default connection limits.
                limits: Some(crate::transport::proxy::listen::ConnectionLimits::default()),
                ..ServerView::default()
            };
        }
        Err(e) => server.error = Some(e),
    }
}

/// Opens a file dialog for the upstream CA file (on a job: the dialog blocks its thread).
fn browse_upstream_ca(state: &mut AppState) {
    let current = state.settings.upstream_ca.clone();
    let spawned = state.workers.spawn("ca-file-dialog", move |job| {
        let (path, unavailable) = super::files::dialog_choice(|| {
            let mut picker = rfd::FileDialog::new()
                .add_filter("PEM certificates", &["pem", "crt", "cer"])
                .add_filter("All files", &["*"]);
            if let Some(dir) = current.as_deref().and_then(std::path::Path::parent) {
                picker = picker.set_directory(dir);
            }
            picker.pick_file()
        });
        job.report(AppEvent::Record(RecordEvent::UpstreamCaChosen {
            path,
            unavailable,
        }));
    });
    if let Err(e) = spawned {
        state.set_status(e, true);
    }
}

/// Runs a server until its job is cancelled, forwarding its events.
async fn server_job(
    ctx: JobContext,
    kind: ServerKind,
    start: impl Future<Output = Result<(ServerHandle, mpsc::Receiver<ProxyEvent>), ServerError>>,
    mut live: Option<crate::transport::otlp::LiveExport>,
) -> JobContext {
    let (handle, mut events) = match start.await {
        Ok(started) => started,
        Err(e) => {
            ctx.report(AppEvent::Record(RecordEvent::Started {
                kind,
                result: Err(AppError::from(e)),
            }));
            return ctx;
        }
    };
    let started = (handle.local_addr(), handle.warning().map(str::to_string));
    let mut open = ctx.report(AppEvent::Record(RecordEvent::Started {
        kind,
        result: Ok(started),
    }));
    // The rows are read again once the writer says a request or its outcome is stored (once
    // per burst of them).
    let settle = Duration::from_millis(100);
    let mut session = None;
    let mut commit_due: Option<Instant> = None;
    let mut live_shown = None;
    while open && !ctx.is_cancelled() {
        match tokio::time::timeout(Duration::from_millis(50), events.recv()).await {
            Ok(Some(event)) => {
                if let Some(live) = live.as_mut() {
                    live.observe(&event);
                }
                match &event {
                    ProxyEvent::Stored { session_id, .. } => {
                        session = Some(*session_id);
                        commit_due.get_or_insert_with(|| Instant::now() + settle);
                    }
                    ProxyEvent::Recorded { .. } => {
                        commit_due.get_or_insert_with(|| Instant::now() + settle);
                    }
                    _ => {}
                }
                open = ctx.report(AppEvent::Record(RecordEvent::Event {
                    kind,
                    event: Box::new(event),
                }));
            }
            Ok(None) => break,
            Err(_) => {}
        }
        if let (Some(due), Some(session)) = (commit_due, session)
            && Instant::now() >= due
        {
            commit_due = None;
            open = open && ctx.report(AppEvent::Record(RecordEvent::Committed { session }));
        }
        // The live export's counters, when they change.
        if let Some(stats) = live.as_ref().map(crate::transport::otlp::LiveExport::stats)
            && live_shown.as_ref() != Some(&stats)
        {
            live_shown = Some(stats.clone());
            open = open && ctx.report(AppEvent::Otel(super::otel::OtelEvent::Live(stats)));
        }
    }
    handle.stop();
    handle.stopped().await;
    if let Some(live) = live {
        let stats = tokio::task::spawn_blocking(move || live.finish(Duration::from_secs(10)))
            .await
            .unwrap_or_default();
        ctx.report(AppEvent::Otel(super::otel::OtelEvent::Live(stats)));
    }
    ctx
}

/// Applies a server's report (called from `AppState::apply_event`).
pub fn apply(state: &mut AppState, event: RecordEvent) {
    match event {
        RecordEvent::Started { kind, result } => {
            let server = state.record.server(kind);
            match result {
                Ok((addr, warning)) => {
                    server.addr = Some(addr);
                    server.base_url = Some(format!("http://{addr}/v1"));
                    if let Some(warning) = warning {
                        server.note(warning);
                    }
                    let text = format!("The {} listens on {addr}", kind.name());
                    state.set_status(text, false);
                }
                Err(e) => {
                    server.error = Some(e.to_string());
                    state.set_status(format!("The {} did not start: {e}", kind.name()), true);
                }
            }
        }
        RecordEvent::Committed { session } => refresh_sessions(state, session),
        RecordEvent::UpstreamCaChosen { path, unavailable } => match path {
            Some(path) => {
                state.settings.upstream_ca = Some(path);
                state.record.upstream_ca_changes += 1;
            }
            None if unavailable => state.set_status(
                "No file dialog could be shown: type the CA file's path instead",
                true,
            ),
            None => {}
        },
        RecordEvent::Event { kind, event } => server_event(state, kind, *event),
    }
}

fn server_event(state: &mut AppState, kind: ServerKind, event: ProxyEvent) {
    super::traffic::server_event(state, kind, &event);
    if kind == ServerKind::Proxy {
        super::session_view::live::apply(&mut state.live, &mut state.browser, &event);
    }
    let server = state.record.server(kind);
    let changed = match event {
        ProxyEvent::RequestStarted { .. } => {
            server.requests += 1;
            None
        }
        ProxyEvent::Stored { session_id, .. } => {
            let first = server.session != Some(session_id);
            server.session = Some(session_id);
            first.then_some(session_id)
        }
        ProxyEvent::Outcome {
            status, outcome, ..
        } => {
            server.finished += 1;
            let class = OutcomeClass::of(status, Some(outcome.state), outcome.error_class.as_ref());
            if class.is_problem() {
                server.errors += 1;
            }
            None
        }
        ProxyEvent::Recorded { outcome, .. } => {
            if outcome.recording_gap().is_some() {
                server.incomplete += 1;
            }
            None
        }
        ProxyEvent::NotRecorded { reason, .. } => {
            server.incomplete += 1;
            server.note(format!("a request was not recorded: {reason}"));
            None
        }
        ProxyEvent::StoreProblem(problem) => {
            if let Some(problem) = &problem {
                server.note(format!("recording delayed: {problem}"));
            } else if server.store_problem.is_some() {
                server.note("recording resumed: the database is written again".to_string());
            }
            server.store_problem = problem;
            None
        }
        ProxyEvent::Note(text) => {
            server.note(text);
            None
        }
        ProxyEvent::UpgradeFailed { path, reason, .. } => {
            server.upgrade_failures += 1;
            server.note(format!("WebSocket upgrade of {path} failed: {reason}"));
            None
        }
        ProxyEvent::Passthrough { method, path } => {
            server.passed_through(&method, &path);
            None
        }
        ProxyEvent::Event { .. } => None,
    };
    if let Some(session) = changed {
        refresh_sessions(state, session);
    }
}

/// The store changed: the sessions model reads the list again (and the open session's rows
/// when `session` is open).
fn refresh_sessions(state: &mut AppState, session: i64) {
    state.apply_event(AppEvent::StoreChanged(super::sessions::StoreChange {
        session: Some(session),
        open: false,
    }));
}

/// A job ended: when it was a server's, the server has stopped.
pub fn job_finished(state: &mut AppState, job: JobId) {
    for kind in [ServerKind::Proxy, ServerKind::Replay] {
        let server = state.record.server(kind);
        if server.job == Some(job) {
            server.job = None;
            if server.addr.take().is_some() {
                state.set_status(format!("The {} stopped", kind.name()), false);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::is_exposed;

    #[test]
    fn only_loopback_listen_addresses_are_unexposed() {
        let cases: Vec<(&str, bool)> = [
            "127.0.0.1:8787",
            "127.0.0.2:0",
            "[::1]:8787",
            "localhost:8787",
            "0.0.0.0:8787",
            "192.168.1.20:8787",
            "[::]:8787",
            "myhost:8787",
        ]
        .into_iter()
        .map(|listen| (listen, is_exposed(listen)))
        .collect();
        assert_eq!(
            cases,
            vec![
                ("127.0.0.1:8787", false),
                ("127.0.0.2:0", false),
                ("[::1]:8787", false),
                ("localhost:8787", false),
                ("0.0.0.0:8787", true),
                ("192.168.1.20:8787", true),
                ("[::]:8787", true),
                ("myhost:8787", true),
            ]
        );
    }
}
