//! `promptwire replay --session ID [--request N] [--timing original|instant|4x] [--json]
//! [--db PATH]`: prints a recorded stream as `stream` prints a file — the same printer, the same
//! JSON-lines contract with its final `outcome` line (one block per request), each event line
//! with its recorded time (`at_us`) and each outcome line with the recorded `timings` — through
//! the one core replay ([`RecordedRequest::replay`]), which stamps every event with its recorded
//! time whatever the pace: `--timing instant` prints the times the app's replay shows.
//!
//! With `--listen 127.0.0.1:PORT` it serves the recording to a real client instead (the replay
//! endpoint), until interrupted.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::bail;
use clap::Args;

use super::stream::{Failure, Printer};
use crate::core::stream::http_error::classify_http_error;
use crate::core::stream::replay::Replayed;
use crate::store::{Store, seed};
use crate::transport::replay::{RecordedRequest, Recording, Timing};

/// Arguments of `replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The recorded session.
    #[arg(long)]
    session: i64,
    /// Only this request (its position in the session, from 0); default: every request.
    #[arg(long, conflicts_with = "listen")]
    request: Option<i64>,
    /// Pace of the events: original, instant, or a speed such as 4x.
    #[arg(long, default_value = "original", value_parser = parse_timing)]
    timing: Timing,
    /// One JSON object per raw event, then one outcome line (per request).
    #[arg(long)]
    json: bool,
    /// Database file (default: the embedded database).
    #[arg(long)]
    db: Option<PathBuf>,
    /// Serve the recording to a client on this address instead of printing it.
    #[arg(long)]
    listen: Option<String>,
    /// With --listen: smallest share of the recorded request's prompt (0 to 1) an incoming
    /// request must keep to count as the same request.
    #[arg(long, default_value_t = crate::transport::replay_server::DEFAULT_MIN_SIMILARITY)]
    min_similarity: f64,
    /// With --listen: bounds on client connections.
    #[command(flatten)]
    connections: super::limits::ConnectionArgs,
}

fn parse_timing(text: &str) -> Result<Timing, String> {
    text.parse()
}

/// Opens `db` (which must exist) or the embedded database.
pub(super) fn open_existing(db: Option<&Path>) -> anyhow::Result<Store> {
    Ok(match db {
        Some(path) if !path.exists() => bail!("no database at {}", path.display()),
        Some(path) => Store::open(path)?,
        None => seed::open_seeded(&seed::default_path())?,
    })
}

/// Runs `replay`.
pub fn run(args: &ReplayArgs) -> anyhow::Result<()> {
    if let Some(listen) = &args.listen {
        return serve(args, listen);
    }
    let store = open_existing(args.db.as_deref())?;
    let recording = Recording::load(&store, args.session, args.request)?;
    drop(store);
    if recording.requests.is_empty() {
        match args.request {
            Some(n) => bail!("session {} has no request {n}", args.session),
            None => bail!("session {} has no requests", args.session),
        }
    }
    let mut printer = Printer::new(std::io::stdout(), args.json).with_recorded_times();
    for request in &recording.requests {
        printer.note(&format!("request #{} {}", request.position, request.url));
        print_request(&mut printer, request, args.timing)?;
    }
    printer.flush();
    printer.check()
}

/// Prints one recorded request's stream (or its HTTP error) at the pace of `timing`.
fn print_request<W: std::io::Write>(
    printer: &mut Printer<W>,
    request: &RecordedRequest,
    timing: Timing,
) -> anyhow::Result<()> {
    let start = Instant::now();
    let wait_until = |due: Duration| {
        let now = start.elapsed();
        if due > now {
            std::thread::sleep(due - now);
        }
    };
    if !request.is_stream() {
        wait_until(timing.due(request.duration()));
        let error = classify_http_error(
            request.status.unwrap_or(0),
            &request.response_headers,
            &request.response_text(),
            &request.url,
        );
        let failure = Failure {
            class: error.class(),
            message: error.to_string(),
            retry_after: error.retry_after(),
        };
        printer.outcome(&Default::default(), Some(failure));
        printer.flush();
        return printer.check();
    }
    for paced in request.replay(timing) {
        match paced.step {
            Replayed::Entry(entry) => {
                wait_until(paced.due);
                printer.entry(&entry);
            }
            // After the turn ended: a client never reads it.
            Replayed::Unread(_) => continue,
            Replayed::End(outcome) => {
                wait_until(paced.due);
                printer.outcome(&outcome, None);
            }
        }
        printer.flush();
        printer.check()?;
    }
    Ok(())
}

/// `replay --listen`: the replay endpoint, until interrupted.
fn serve(args: &ReplayArgs, listen: &str) -> anyhow::Result<()> {
    use super::record::{EventPrinter, interrupted, run_until_interrupted, runtime};
    use crate::transport::replay_server::{ReplayOptions, start_replay};
    if !(0.0..=1.0).contains(&args.min_similarity) {
        bail!(
            "--min-similarity must be between 0 and 1, got {}",
            args.min_similarity
        );
    }
    let db = match &args.db {
        Some(path) if !path.exists() => bail!("no database at {}", path.display()),
        Some(path) => path.clone(),
        None => {
            let path = seed::default_path();
            seed::open_seeded(&path)?;
            path
        }
    };
    let runtime = runtime()?;
    let result = runtime.block_on(async {
        let mut options = ReplayOptions::new(listen, db, args.session);
        options.timing = args.timing;
        options.min_similarity = args.min_similarity;
        options.connections = args.connections.limits();
        let (handle, events) = start_replay(options).await?;
        let interrupt = interrupted();
        let mut printer = EventPrinter::new(args.json);
        printer.listening(&handle, "replaying", serde_json::json!(args.session))?;
        run_until_interrupted(handle, events, printer, interrupt).await
    });
    // An output writer stuck on a pipe nobody reads is not waited for.
    runtime.shutdown_background();
    result
}
