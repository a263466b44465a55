//! `promptwire send PROMPT.json --provider P`: compiles a Prompt as `compile` does, sends it live
//! (API key from the provider's environment variable), and prints the timeline as events arrive —
//! the same lines as `stream` — then the outcome. Retries follow the error class; notes about
//! retries go to standard error with `--json` so standard output stays JSON lines.
//!
//! Exit status 0 once a request was sent, whatever came back; 1 on a usage error (bad Prompt,
//! missing API key, bad URL).

use anyhow::Context as _;
use clap::Args;

use super::compile::{TargetChoice, load_and_compile};
use super::input::display_name;
use super::stream::{Failure, Printer, describe_event, secs};
use crate::core::rules::CompileRules;
use crate::core::stream::TurnOutcome;
use crate::transport::{CancelToken, HttpSender, SendEvent, SendOptions, resolve_headers};

/// Arguments of `send`.
#[derive(Debug, Args)]
pub struct SendArgs {
    /// Prompt file, or `-` for standard input.
    prompt: String,
    /// Provider to send to (its base URL and API-key variable).
    #[arg(long, value_parser = ["openai", "azure", "compatible"])]
    provider: String,
    /// Base URL of the provider (the request goes to `{base_url}/responses`).
    #[arg(long)]
    base_url: Option<String>,
    /// One JSON object per raw event, then one outcome line.
    #[arg(long)]
    json: bool,
    /// Request shape; default: what the Prompt file records.
    #[arg(long, value_parser = ["standard", "lite", "auto"])]
    dialect: Option<String>,
    /// Rules preset; default: what the Prompt file records.
    #[arg(long, value_parser = CompileRules::PRESETS)]
    rules: Option<String>,
    /// Retries after the first attempt, for retryable failures.
    #[arg(long, default_value_t = 5)]
    max_retries: u32,
    /// Seconds to wait for the response headers and then for each chunk of the stream.
    #[arg(long, default_value_t = 300.0)]
    idle_timeout_secs: f64,
    /// Seconds to wait for the connection.
    #[arg(long, default_value_t = 10.0)]
    connect_timeout_secs: f64,
    /// Model catalog file to use instead of the bundled one.
    #[arg(long)]
    catalog: Option<String>,
    /// Largest accepted Prompt file, in bytes.
    #[arg(long, default_value_t = super::DEFAULT_MAX_BYTES)]
    max_bytes: u64,
    /// Database to record the send into (default: the embedded database).
    #[arg(long)]
    db: Option<std::path::PathBuf>,
    /// Do not record the send in the session store.
    #[arg(long)]
    no_record: bool,
}

fn duration(name: &str, secs: f64) -> anyhow::Result<std::time::Duration> {
    std::time::Duration::try_from_secs_f64(secs)
        .ok()
        .filter(|d| !d.is_zero())
        .with_context(|| format!("--{name} must be a positive number of seconds, got {secs}"))
}

/// Runs `send`.
pub fn run(args: &SendArgs) -> anyhow::Result<()> {
    let (prompt, compiled) = load_and_compile(
        &args.prompt,
        args.max_bytes,
        &TargetChoice {
            dialect: args.dialect.as_deref(),
            provider: Some(&args.provider),
            rules: args.rules.as_deref(),
            base_url: args.base_url.as_deref(),
            auth: None,
            catalog: args.catalog.as_deref(),
        },
    )?;
    let options = SendOptions {
        connect_timeout: duration("connect-timeout-secs", args.connect_timeout_secs)?,
        idle_timeout: duration("idle-timeout-secs", args.idle_timeout_secs)?,
        max_retries: args.max_retries,
        ..SendOptions::default()
    };
    let headers = resolve_headers(&compiled, |env| std::env::var(env).ok())?;
    let sender = HttpSender::new(&compiled.url, options)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;

    let mut printer = Printer::new(std::io::stdout(), args.json);
    printer.note(&format!("POST {}", compiled.url));
    // Recording into the session store: kept apart from the send (see `sessions::SendRecording`).
    let mut recording = match args.no_record {
        true => None,
        false => Some(super::sessions::SendRecording::start(
            args.db.as_deref(),
            display_name(&args.prompt),
            &prompt.model,
            &compiled,
        )?),
    };
    let cancel = CancelToken::new();
    let result = runtime.block_on(sender.send(&compiled, &headers, &cancel, |event| {
        if let Some(recording) = recording.as_mut() {
            recording.on_event(&event);
        }
        report(&mut printer, event);
    }));
    let outcome = result
        .outcome()
        .cloned()
        .unwrap_or_else(TurnOutcome::default);
    let failure = result.error.as_ref().map(|e| Failure {
        class: e.class(),
        message: e.to_string(),
        retry_after: e.retry_after(),
    });
    printer.outcome(&outcome, failure);
    if let Some(recording) = recording {
        match recording.finish(&result) {
            Ok(session) => printer.note(&format!("recorded as session {session}")),
            Err(e) => eprintln!("promptwire: recording failed: {e:#}"),
        }
    }
    printer.flush();
    printer.check()
}

/// Prints one progress event.
fn report<W: std::io::Write>(printer: &mut Printer<W>, event: SendEvent<'_>) {
    match event {
        SendEvent::AttemptStarted { attempt } => {
            if attempt > 1 {
                printer.note(&format!("attempt {attempt}"));
            }
        }
        SendEvent::Response { status, at, .. } => {
            printer.note(&format!("{:>9.3}s  HTTP {status}", at.as_secs_f64()));
        }
        SendEvent::HeaderEvents(events) => {
            let text: Vec<String> = events.iter().map(describe_event).collect();
            printer.note(&format!("           headers: {}", text.join("; ")));
        }
        SendEvent::Entry(entry) => printer.entry(entry),
        SendEvent::Retrying {
            attempt,
            error,
            delay,
        } => {
            let text = format!(
                "attempt {attempt} failed ({}: {error}); retrying in {}",
                error.class(),
                secs(delay)
            );
            if printer.is_json() {
                eprintln!("promptwire: {text}");
            } else {
                printer.note(&text);
            }
        }
    }
    printer.flush();
}
