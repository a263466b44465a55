//! OpenTelemetry export in the app (issue 33): the Record panel's "also export to
//! OpenTelemetry" (the proxy job runs a [`LiveExport`] beside the server: see
//! [`live_export`] and `proxy.rs`) and the session menu's "Export to OpenTelemetry…" (a job that
//! reads each session, maps it to spans and sends them through an [`OtlpExporter`], reporting
//! progress and a result line). The endpoint and the switches are settings; headers for an
//! authenticated collector come from `OTEL_EXPORTER_OTLP_HEADERS`, read from the environment
//! when an export starts and never stored.
//!
//! Wiring: [`AppCommand::Otel`](super::AppCommand::Otel) goes to [`handle`],
//! [`AppEvent::Otel`] to [`apply`], a finished job to [`job_finished`].

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::event::AppEvent;
use super::jobs::{JobContext, JobId};
use super::state::AppState;
use crate::core::otel::SpanOptions;
use crate::store::Store;
use crate::transport::otlp::headers::env_headers;
use crate::transport::otlp::{LiveExport, OtlpConfig, OtlpExporter, OtlpStats, SessionForExport};

/// The collector the app exports to, and how (persisted).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct OtelSettings {
    /// The collector's base URL (or its `…/v1/traces` endpoint).
    pub endpoint: String,
    /// The Record panel's "also export to OpenTelemetry".
    pub live: bool,
    /// Put message content (redacted) into the spans.
    pub content: bool,
}

impl Default for OtelSettings {
    fn default() -> Self {
        Self {
            endpoint: "http://127.0.0.1:6006".to_string(),
            live: false,
            content: false,
        }
    }
}

/// What the OpenTelemetry controls ask for.
#[derive(Debug, Clone, PartialEq)]
pub enum OtelCommand {
    /// Set the collector endpoint.
    SetEndpoint(String),
    /// Export recorded requests live from the proxy (from its next start).
    SetLive(bool),
    /// Put message content into the spans.
    SetContent(bool),
    /// Show the export dialog for a session (`None`: close it).
    ShowExport(Option<i64>),
    /// Export these sessions.
    Export(Vec<i64>),
}

/// What the export jobs report.
#[derive(Debug)]
pub enum OtelEvent {
    /// Sessions read and queued so far.
    Progress {
        /// Sessions done.
        done: usize,
        /// Sessions in all.
        total: usize,
    },
    /// A stored export ended.
    Finished(Result<OtlpStats, String>),
    /// The live export's counters (while the proxy runs, and at its stop).
    Live(OtlpStats),
}

/// What the OpenTelemetry controls show.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OtelState {
    /// The session the export dialog is open for.
    pub dialog: Option<i64>,
    /// The running stored export.
    pub job: Option<JobId>,
    /// Its progress: sessions done of all.
    pub progress: (usize, usize),
    /// The last stored export's result line (and whether it failed).
    pub result: Option<(String, bool)>,
    /// The live export's counters, while it runs and after.
    pub live: Option<OtlpStats>,
}

/// The exporter configuration for the settings' endpoint.
pub fn config(settings: &OtelSettings) -> OtlpConfig {
    let mut config = OtlpConfig::new(&settings.endpoint);
    config.headers = env_headers(&|name| (super::send::env_lookup())(name));
    config
}

/// The live export the proxy job runs beside the server, when the settings ask for it: `Err`
/// says why it cannot start (the proxy starts all the same).
pub fn live_export(settings: &OtelSettings, db: PathBuf) -> Option<Result<LiveExport, String>> {
    settings.live.then(|| {
        LiveExport::start(
            db,
            config(settings),
            SpanOptions {
                content: settings.content,
            },
        )
        .map_err(|e| e.to_string())
    })
}

/// Applies an OpenTelemetry command (called from `AppState::handle`).
pub fn handle(state: &mut AppState, command: OtelCommand) {
    match command {
        OtelCommand::SetEndpoint(url) => state.settings.otel.endpoint = url,
        OtelCommand::SetLive(on) => state.settings.otel.live = on,
        OtelCommand::SetContent(on) => state.settings.otel.content = on,
        OtelCommand::ShowExport(session) => {
            state.otel.dialog = session;
            if session.is_some() && state.otel.job.is_none() {
                state.otel.result = None;
            }
        }
        OtelCommand::Export(sessions) => export(state, sessions),
    }
}

fn export(state: &mut AppState, sessions: Vec<i64>) {
    if state.otel.job.is_some() || sessions.is_empty() {
        return;
    }
    let Some(db) = state.sessions.db_path.clone() else {
        state.otel.result = Some(("no session database to export from".to_string(), true));
        return;
    };
    let settings = state.settings.otel.clone();
    let total = sessions.len();
    let spawned = state.workers.spawn("otlp-export", move |job| {
        let result = run_export(job, &db, &settings, &sessions);
        job.report(AppEvent::Otel(OtelEvent::Finished(result)));
    });
    match spawned {
        Ok(job) => {
            state.otel.job = Some(job);
            state.otel.progress = (0, total);
            state.otel.result = None;
        }
        Err(e) => state.otel.result = Some((e, true)),
    }
}

/// Reads, maps and sends each session; waits for the collector at the end.
fn run_export(
    job: &JobContext,
    db: &std::path::Path,
    settings: &OtelSettings,
    sessions: &[i64],
) -> Result<OtlpStats, String> {
    let store = Store::open(db).map_err(|e| e.to_string())?;
    let exporter = OtlpExporter::start(config(settings)).map_err(|e| e.to_string())?;
    let options = SpanOptions {
        content: settings.content,
    };
    for (done, id) in sessions.iter().enumerate() {
        if job.is_cancelled() {
            break;
        }
        let read = SessionForExport::read(&store, *id, options).map_err(|e| e.to_string())?;
        let spans = read.all_spans(options).map_err(|e| e.to_string())?;
        exporter.submit_wait(spans);
        job.report(AppEvent::Otel(OtelEvent::Progress {
            done: done + 1,
            total: sessions.len(),
        }));
    }
    Ok(exporter.shutdown(Duration::from_secs(60)))
}

/// Applies an export job's report (called from `AppState::apply_event`).
pub fn apply(state: &mut AppState, event: OtelEvent) {
    match event {
        OtelEvent::Progress { done, total } => state.otel.progress = (done, total),
        OtelEvent::Finished(result) => {
            let line = match result {
                Ok(stats) => {
                    let failed = stats.failed_spans + stats.dropped_spans + stats.pending_spans > 0;
                    (
                        format!(
                            "{} to {}",
                            stats.line(),
                            crate::transport::otlp::traces_url(&state.settings.otel.endpoint)
                        ),
                        failed,
                    )
                }
                Err(e) => (format!("export failed: {e}"), true),
            };
            state.set_status(format!("OpenTelemetry: {}", line.0), line.1);
            state.otel.result = Some(line);
        }
        OtelEvent::Live(stats) => state.otel.live = Some(stats),
    }
}

/// A job ended: when it was the stored export, it is no longer running.
pub fn job_finished(state: &mut AppState, job: JobId) {
    if state.otel.job == Some(job) {
        state.otel.job = None;
    }
}
