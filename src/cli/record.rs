//! `promptwire record --listen 127.0.0.1:PORT --upstream URL [--upstream-ca FILE] [--session NAME]
//! [--db PATH] [--json]`: runs the recording proxy until interrupted (Ctrl-C / SIGTERM), printing one line per
//! request as it starts and as it ends. The first line names the address it listens on (port 0
//! picks a free one); then, before any request, what to paste into a client to point it here
//! (`core::setup_lines`, the Record panel's text).
//!
//! With `--json`: `{"listening":"ADDR","upstream":URL,"setup":{KEY:TEXT…}}`, then `{"request":…}` and `{"outcome":…}`
//! objects, `{"note":…}` lines, and `{"stopped":true,"requests":N,"sessions":[IDS]}` at the end.
//! A request line is printed once the request is in the database, an outcome line once its
//! outcome is: the state, event count and `"recording"` (`"complete"`, or what was lost and why)
//! are what was stored. A request the database never took is a `{"not_recorded":…}` line.
//!
//! With `--otlp URL` each recorded request is also exported to an OpenTelemetry collector as it
//! completes (`transport::otlp::live`); a note tells when spans fail, and a line before the last
//! says what was exported (`{"otlp":{"exported_spans",…}}`).

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;

use anyhow::Context as _;
use clap::Args;
use serde_json::json;
use tokio::sync::mpsc;

use super::limits::{ConnectionArgs, LimitArgs};
use super::out_lines::OutLines;
use crate::core::setup_lines::{setup_snippets, setup_text};
use crate::store::seed;
use crate::transport::otlp::LiveExport;
use crate::transport::proxy::{self, ProxyEvent, ProxyOptions, ServerHandle};

/// How long `record --otlp` waits at the end for the collector to take what is queued.
const OTLP_FINISH_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// Arguments of `record`.
#[derive(Debug, Args)]
pub struct RecordArgs {
    /// Address to listen on; a non-loopback address is allowed with a warning.
    #[arg(long, default_value = "127.0.0.1:8787")]
    listen: String,
    /// The real endpoint's base URL, e.g. https://api.openai.com/v1.
    #[arg(long)]
    upstream: String,
    /// PEM file of root certificates to trust for the upstream besides the web's (a private
    /// CA); at most 1 MiB.
    #[arg(long, value_name = "FILE")]
    upstream_ca: Option<PathBuf>,
    /// Name of the recorded session (later sessions get ` #2`, …).
    #[arg(long)]
    session: Option<String>,
    /// Database file (default: the embedded database).
    #[arg(long)]
    db: Option<PathBuf>,
    /// Machine-readable JSON lines.
    #[arg(long)]
    json: bool,
    /// Largest request body accepted from a client, in bytes.
    #[arg(long, default_value_t = proxy::DEFAULT_MAX_BODY_BYTES)]
    max_body_bytes: usize,
    /// Size limits on each recorded answer (the client still receives every byte).
    #[command(flatten)]
    limits: LimitArgs,
    /// Also export each recorded request, as it completes, to this OpenTelemetry collector
    /// (OTLP/HTTP; its base URL, e.g. http://127.0.0.1:6006 for Phoenix). Failures are counted
    /// and shown, never fatal, and never slow the relay.
    #[arg(long, value_name = "URL")]
    otlp: Option<String>,
    #[command(flatten)]
    otlp_args: super::otlp::OtlpArgs,
    /// Bounds on client connections.
    #[command(flatten)]
    connections: ConnectionArgs,
}

/// The database path to record into: `db`, or the embedded one (created and seeded if needed).
pub(super) fn database(db: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    Ok(match db {
        Some(path) => {
            // Opening creates the file and checks it is ours before anything listens.
            crate::store::Store::open(&path)?;
            path
        }
        None => {
            let path = seed::default_path();
            seed::open_seeded(&path)?;
            path
        }
    })
}

/// A runtime for a server command.
pub(super) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")
}

/// A future resolving on Ctrl-C or SIGTERM; the handlers are installed before this returns, so
/// a signal sent right after the first line is printed is not missed.
pub(super) fn interrupted() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let term = signal(SignalKind::terminate()).ok();
        let int = signal(SignalKind::interrupt()).ok();
        async move {
            let wait = |s: Option<tokio::signal::unix::Signal>| async move {
                match s {
                    Some(mut s) => {
                        s.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                () = wait(term) => {}
                () = wait(int) => {}
            }
        }
    }
    #[cfg(not(unix))]
    {
        async {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// Prints server events until interrupted, then stops the server and prints the summary.
pub(super) async fn run_until_interrupted(
    handle: ServerHandle,
    mut events: mpsc::Receiver<ProxyEvent>,
    mut out: EventPrinter,
    interrupt: impl std::future::Future<Output = ()>,
) -> anyhow::Result<()> {
    tokio::pin!(interrupt);
    loop {
        tokio::select! {
            () = &mut interrupt => break,
            event = events.recv() => match event {
                Some(event) => out.event(&event)?,
                None => break,
            },
        }
    }
    handle.stop();
    // While it stops — the writer drains its queue and journal — what it reports is printed
    // (the channel would fill up and drop the last outcomes otherwise).
    let stopped = handle.stopped();
    tokio::pin!(stopped);
    loop {
        tokio::select! {
            () = &mut stopped => break,
            event = events.recv() => match event {
                Some(event) => out.event(&event)?,
                None => {
                    (&mut stopped).await;
                    break;
                }
            },
        }
    }
    while let Ok(event) = events.try_recv() {
        out.event(&event)?;
    }
    out.summary().await
}

/// One line per request start, outcome and note.
pub(super) struct EventPrinter {
    json: bool,
    /// Standard output, never blocking (a reader that stops reading loses lines, counted).
    out: OutLines,
    requests: u64,
    unrecorded: u64,
    passthrough: u64,
    upgrade_failures: u64,
    sessions: BTreeSet<i64>,
    /// Method, URL and dialect of exchanges not stored yet.
    started: HashMap<u64, (String, String, Option<String>)>,
    /// HTTP status of exchanges whose outcome is not stored yet.
    statuses: HashMap<u64, Option<u16>>,
    /// The live OpenTelemetry export (`--otlp`), and the failures already told.
    otlp: Option<(LiveExport, u64)>,
}

impl EventPrinter {
    /// A printer writing through [`OutLines`] (started on the current runtime).
    pub(super) fn new(json: bool) -> Self {
        Self {
            json,
            out: OutLines::start(),
            requests: 0,
            unrecorded: 0,
            passthrough: 0,
            upgrade_failures: 0,
            sessions: BTreeSet::new(),
            started: HashMap::new(),
            statuses: HashMap::new(),
            otlp: None,
        }
    }

    /// Exports each recorded request through `live` as well.
    pub(super) fn with_otlp(mut self, live: LiveExport) -> Self {
        self.otlp = Some((live, 0));
        self
    }

    /// Hands `event` to the live export; a note when more spans failed since the last one.
    fn export(&mut self, event: &ProxyEvent) -> anyhow::Result<()> {
        let Some((live, told)) = self.otlp.as_mut() else {
            return Ok(());
        };
        live.observe(event);
        let stats = live.stats();
        let failed = stats.failed_spans + stats.dropped_spans;
        if failed <= *told {
            return Ok(());
        }
        *told = failed;
        let text = format!("OpenTelemetry export: {}", stats.line());
        if self.json {
            self.line(&json!({"note": text}).to_string())
        } else {
            self.line(&format!("note: {text}"))
        }
    }

    fn line(&mut self, text: &str) -> anyhow::Result<()> {
        self.out
            .line(super::shown::shown(text).into_owned())
            .map_err(anyhow::Error::msg)
    }

    /// Prints the first line: where it listens, and what it serves (`key`: `target`).
    pub(super) fn listening(
        &mut self,
        handle: &ServerHandle,
        key: &str,
        target: serde_json::Value,
    ) -> anyhow::Result<()> {
        if let Some(warning) = handle.warning() {
            eprintln!("promptwire: warning: {warning}");
        }
        if self.json {
            let mut line = serde_json::Map::new();
            line.insert(
                "listening".to_string(),
                json!(handle.local_addr().to_string()),
            );
            line.insert(key.to_string(), target);
            self.line(&serde_json::Value::Object(line).to_string())
        } else {
            let shown = match &target {
                serde_json::Value::String(s) => s.clone(),
                other => format!("{key} {other}"),
            };
            self.line(&format!("listening on {} -> {shown}", handle.base_url()))
        }
    }

    /// Prints the first line as [`Self::listening`] does, then the client setup
    /// (`core::setup_lines`): in text, a blank line and the snippets; with `--json`, a `setup`
    /// object (snippet key → text) in the first line itself.
    pub(super) fn listening_with_setup(
        &mut self,
        handle: &ServerHandle,
        key: &str,
        target: serde_json::Value,
    ) -> anyhow::Result<()> {
        let addr = handle.local_addr();
        if self.json {
            if let Some(warning) = handle.warning() {
                eprintln!("promptwire: warning: {warning}");
            }
            let setup: serde_json::Map<String, serde_json::Value> = setup_snippets(addr)
                .into_iter()
                .map(|s| (s.key.to_string(), json!(s.text)))
                .collect();
            let mut line = serde_json::Map::new();
            line.insert("listening".to_string(), json!(addr.to_string()));
            line.insert(key.to_string(), target);
            line.insert("setup".to_string(), serde_json::Value::Object(setup));
            return self.line(&serde_json::Value::Object(line).to_string());
        }
        self.listening(handle, key, target)?;
        self.line("")?;
        for line in setup_text(addr).lines() {
            self.line(line)?;
        }
        self.line("")
    }

    /// Prints one server event. The request and outcome lines are printed when the database
    /// has them — what a later `sessions show` will show, not what passed on the wire — so under
    /// a busy database they come late, and a request that could not be stored says so.
    pub(super) fn event(&mut self, event: &ProxyEvent) -> anyhow::Result<()> {
        self.export(event)?;
        match event {
            ProxyEvent::RequestStarted {
                exchange,
                method,
                url,
                dialect,
            } => {
                self.started
                    .insert(*exchange, (method.clone(), url.clone(), dialect.clone()));
                Ok(())
            }
            ProxyEvent::Stored {
                exchange,
                session_id,
                request_id,
            } => {
                self.requests += 1;
                self.sessions.insert(*session_id);
                let (method, url, dialect) = self.started.remove(exchange).unwrap_or_default();
                if self.json {
                    self.line(&json!({"request": {"exchange": exchange, "session": session_id, "id": request_id, "method": method, "url": url, "dialect": dialect}}).to_string())
                } else {
                    self.line(&format!(
                        "#{exchange:<4} {method} {url}  (session {session_id}, request {request_id})"
                    ))
                }
            }
            ProxyEvent::Outcome {
                exchange, status, ..
            } => {
                self.statuses.insert(*exchange, *status);
                Ok(())
            }
            ProxyEvent::Recorded {
                exchange,
                request_id,
                outcome,
                stored_events,
                status,
            } => {
                // The stored status; the wire's only if the store had none (a lost response).
                let seen = self.statuses.remove(exchange).flatten();
                let status = status.or(seen);
                let gap = outcome.recording_gap();
                if self.json {
                    let recording = match &gap {
                        None => json!("complete"),
                        Some(_) => {
                            json!({"lost_events": outcome.lost_events, "reason": outcome.lost_reason})
                        }
                    };
                    self.line(&json!({"outcome": {"exchange": exchange, "id": request_id, "status": status, "state": outcome.state, "error": outcome.error_class, "events": stored_events, "recording": recording}}).to_string())
                } else {
                    let how = match &outcome.error_class {
                        Some(class) => format!(
                            "{} {class}: {}",
                            outcome.state,
                            outcome.error_message.as_deref().unwrap_or("")
                        ),
                        None => outcome.state.to_string(),
                    };
                    let gap = gap.map(|g| format!("; {g}")).unwrap_or_default();
                    self.line(&format!(
                        "#{exchange:<4} {} {how} ({stored_events} events stored{gap})",
                        crate::store::summary::status_label(status),
                    ))
                }
            }
            ProxyEvent::NotRecorded { exchange, reason } => {
                self.started.remove(exchange);
                self.statuses.remove(exchange);
                self.unrecorded += 1;
                if self.json {
                    self.line(
                        &json!({"not_recorded": {"exchange": exchange, "reason": reason}})
                            .to_string(),
                    )
                } else {
                    self.line(&format!("#{exchange:<4} not recorded: {reason}"))
                }
            }
            ProxyEvent::Event { .. } => Ok(()),
            ProxyEvent::Passthrough { method, path } => {
                self.passthrough += 1;
                if self.json {
                    self.line(&json!({"passthrough": {"method": method, "path": path}}).to_string())
                } else {
                    self.line(&format!(
                        "      passed through, not recorded: {method} {path}"
                    ))
                }
            }
            ProxyEvent::StoreProblem(problem) => {
                let text = match problem {
                    Some(problem) => format!("recording delayed: {problem}"),
                    None => "recording resumed: the database is written again".to_string(),
                };
                if self.json {
                    self.line(&json!({"note": text}).to_string())
                } else {
                    self.line(&format!("note: {text}"))
                }
            }
            ProxyEvent::UpgradeFailed {
                path,
                status,
                reason,
            } => {
                self.upgrade_failures += 1;
                if self.json {
                    self.line(&json!({"upgrade_failed": {"path": path, "status": status, "reason": reason}}).to_string())
                } else {
                    self.line(&format!(
                        "      WebSocket upgrade of {path} failed: {reason}"
                    ))
                }
            }
            ProxyEvent::Note(text) => {
                if self.json {
                    self.line(&json!({"note": text}).to_string())
                } else {
                    self.line(&format!("note: {text}"))
                }
            }
        }
    }

    /// Prints the last line (after every queued one) and waits a moment for it to be written.
    async fn summary(&mut self) -> anyhow::Result<()> {
        if let Some((live, _)) = self.otlp.take() {
            // Root spans, then what is queued, up to the timeout (on a blocking thread).
            let stats = tokio::task::spawn_blocking(move || live.finish(OTLP_FINISH_TIMEOUT))
                .await
                .unwrap_or_default();
            let line = if self.json {
                json!({"otlp": stats}).to_string()
            } else {
                format!("OpenTelemetry export: {}", stats.line())
            };
            self.line(&line)?;
        }
        let line = self.summary_line();
        self.out
            .finish(super::shown::shown(&line).into_owned())
            .await
            .map_err(anyhow::Error::msg)
    }

    fn summary_line(&self) -> String {
        let sessions: Vec<i64> = self.sessions.iter().copied().collect();
        let dropped = self.out.dropped();
        if self.json {
            let mut line = json!({"stopped": true, "requests": self.requests, "not_recorded": self.unrecorded, "passthrough": self.passthrough, "sessions": sessions});
            if dropped > 0 {
                line["dropped_lines"] = json!(dropped);
            }
            if self.upgrade_failures > 0 {
                line["upgrade_failures"] = json!(self.upgrade_failures);
            }
            line.to_string()
        } else {
            let list: Vec<String> = sessions.iter().map(i64::to_string).collect();
            let unrecorded = match self.unrecorded {
                0 => String::new(),
                n => format!(" ({n} could not be recorded)"),
            };
            let upgrades = match self.upgrade_failures {
                0 => String::new(),
                n => format!(
                    " ({} failed)",
                    crate::core::format::count(n, "WebSocket upgrade")
                ),
            };
            let dropped = match dropped {
                0 => String::new(),
                n => format!(" ({n} output lines dropped: standard output was not read)"),
            };
            format!(
                "stopped: {} requests recorded{unrecorded}{upgrades} in sessions {}{dropped}",
                self.requests,
                if list.is_empty() {
                    "-".to_string()
                } else {
                    list.join(", ")
                }
            )
        }
    }
}

/// Runs `record`.
pub fn run(args: &RecordArgs) -> anyhow::Result<()> {
    let upstream_ca = args
        .upstream_ca
        .as_deref()
        .map(super::ca::read_ca_file)
        .transpose()?;
    let db = database(args.db.clone())?;
    let runtime = runtime()?;
    let result = runtime.block_on(async {
        let mut options = ProxyOptions::new(&args.listen, &args.upstream, Some(db.clone()));
        options.session_name = args.session.clone();
        options.max_body_bytes = args.max_body_bytes;
        options.limits = args.limits.limits();
        options.connections = args.connections.limits();
        options.upstream_ca = upstream_ca;
        let (handle, events) = proxy::start_proxy(options).await?;
        let interrupt = interrupted();
        let mut printer = EventPrinter::new(args.json);
        if let Some(url) = &args.otlp {
            let config = args.otlp_args.config(url)?;
            let live = LiveExport::start(db.clone(), config, args.otlp_args.options())?;
            printer = printer.with_otlp(live);
        }
        printer.listening_with_setup(&handle, "upstream", json!(args.upstream))?;
        run_until_interrupted(handle, events, printer, interrupt).await
    });
    // An output writer stuck on a pipe nobody reads is not waited for.
    runtime.shutdown_background();
    result
}
