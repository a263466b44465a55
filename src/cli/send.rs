//! `promptwire send [PROMPT] --provider P [--session ID [--continue …]]`: compiles a Prompt as
//! `compile` does, sends it live (API key from the provider's environment variable), and prints
//! the timeline as events arrive — the same lines as `stream` — then the outcome. Retries follow
//! the error class; notes about retries go to standard error with `--json` so standard output
//! stays JSON lines.
//!
//! Recording: a new session per send, or with `--session ID` the request is appended to that
//! session. `--continue` is the agent turn loop ([`crate::core::turn_loop`]): the next request is
//! built from the session's latest request and its outcome (both read from the store) — the
//! previous input, the response's output items, an output per tool call (`--tool-output
//! CALL_ID=TEXT|@FILE`, a placeholder otherwise) and an optional `--user` message; every output
//! and the message get `fco_…`/`msg_…` ids made from the clock (uuid v7), as Codex does
//! ([`Continuation::answering`], which the app's Continue uses too). Before sending,
//! it says whether the new request keeps the previous one's prompt prefix (with `--json`, one
//! `{"continue": …}` line first). A PROMPT given with `--continue` must be the prompt the session's
//! conversation started from (its prefix is checked).
//!
//! `--ws` sends the WebSocket `response.create` frame instead ([`crate::transport::ws`]); the
//! timeline and the outcome are the same. Either way the send goes through the one
//! [`Sender`] and its live events are printed and recorded as they arrive, the way the app's
//! Send and Re-send record them ([`record_live`]).
//!
//! Exit status 0 once a request was sent, whatever came back; 1 on a usage error (bad Prompt,
//! missing API key, bad URL, nothing to continue).

use anyhow::{Context as _, bail};
use clap::Args;
use serde_json::{Value, json};

use super::choices::{DialectArg, ProviderArg};
use super::compile::{TargetChoice, compile_prompt, load_and_compile, load_catalog};
use super::input::{display_name, read_text};
use super::limits::LimitArgs;
use super::shown::shown;
use super::stream::{Failure, Printer, describe_event, secs};
use crate::core::compile::CompiledRequest;
use crate::core::import::import_body;
use crate::core::ledger::PairVerdict;
use crate::core::prefix::Tokenizer;
use crate::core::prompt::{Dialect, Prompt};
use crate::core::rules::CompileRules;
use crate::core::stream::TurnOutcome;
use crate::core::turn_loop::{Continuation, next_prompt, prefix_check};
use crate::store::send_recording::open_or_default;
use crate::store::{SendRecording, Writer};
use crate::transport::http::DEFAULT_DEADLINE;
use crate::transport::recording::{finish_recording, record_live_owned};
use crate::transport::{
    CancelToken, LiveEvent, SendEvent, SendOptions, Sender, Wire, resolve_headers,
};

/// Arguments of `send`.
#[derive(Debug, Args)]
pub struct SendArgs {
    /// Prompt file, or `-` for standard input (optional with `--continue`).
    #[arg(required_unless_present = "continue_")]
    prompt: Option<String>,
    /// Provider to send to (its base URL and API-key variable).
    #[arg(long, value_enum)]
    provider: ProviderArg,
    /// Base URL of the provider (the request goes to `{base_url}/responses`); with `--continue`,
    /// default: the URL of the session's latest request.
    #[arg(long)]
    base_url: Option<String>,
    /// One JSON object per raw event, then one outcome line.
    #[arg(long)]
    json: bool,
    /// Request shape; default: what the Prompt file records.
    #[arg(long, value_enum)]
    dialect: Option<DialectArg>,
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
    /// Seconds the whole send may take, retries included (keep-alives do not extend it).
    #[arg(long, value_name = "SECS", default_value_t = DEFAULT_DEADLINE.as_secs_f64())]
    deadline: f64,
    #[command(flatten)]
    limits: LimitArgs,
    /// Model catalog file to use instead of the bundled one.
    #[arg(long)]
    catalog: Option<String>,
    /// Largest accepted Prompt file (and `--tool-output @FILE`), in bytes.
    #[arg(long, default_value_t = super::DEFAULT_MAX_BYTES)]
    max_bytes: u64,
    /// Database to record the send into (default: the embedded database).
    #[arg(long)]
    db: Option<std::path::PathBuf>,
    /// Do not record the send in the session store.
    #[arg(long, conflicts_with = "session")]
    no_record: bool,
    /// Record into this existing session instead of a new one.
    #[arg(long)]
    session: Option<i64>,
    /// Send the next request of the session's conversation (needs `--session`).
    #[arg(long = "continue", id = "continue_", requires = "session")]
    continue_: bool,
    /// Output of a tool call of the previous response: `CALL_ID=TEXT` or `CALL_ID=@FILE`.
    #[arg(
        long = "tool-output",
        value_name = "CALL_ID=TEXT|@FILE",
        requires = "continue_"
    )]
    tool_outputs: Vec<String>,
    /// A new user message after the tool outputs.
    #[arg(long, value_name = "TEXT", requires = "continue_")]
    user: Option<String>,
    /// Send over a WebSocket (the `response.create` frame) instead of an HTTP POST.
    #[arg(long)]
    ws: bool,
    /// PEM file of root certificates to trust besides the web's (a private CA); at most 1 MiB.
    #[arg(long, value_name = "FILE")]
    ca: Option<std::path::PathBuf>,
}

fn duration(name: &str, secs: f64) -> anyhow::Result<std::time::Duration> {
    std::time::Duration::try_from_secs_f64(secs)
        .ok()
        .filter(|d| !d.is_zero())
        .with_context(|| format!("--{name} must be a positive number of seconds, got {secs}"))
}

/// What is about to be sent.
struct Plan {
    prompt: Prompt,
    compiled: CompiledRequest,
    /// Session name for a new session.
    name: String,
    /// The prefix verdict against the previous request and the number of items added
    /// (`--continue`).
    prefix: Option<(PairVerdict, usize)>,
}

impl SendArgs {
    fn choice<'a>(&'a self, base_url: Option<&'a str>) -> TargetChoice<'a> {
        TargetChoice {
            dialect: self.dialect.map(Dialect::from),
            provider: Some(self.provider.into()),
            rules: self.rules.as_deref(),
            base_url: self.base_url.as_deref().or(base_url),
            auth: None,
            catalog: self.catalog.as_deref(),
        }
    }
}

/// The next request of session `session`'s conversation.
fn plan_continue(args: &SendArgs, session: i64) -> anyhow::Result<Plan> {
    let store = open_or_default(args.db.as_deref())?;
    let turn = store
        .last_turn(session)?
        .with_context(|| format!("session {session} has no request to continue"))?;
    drop(store);
    if args.base_url.is_none() && turn.url.contains(crate::core::redact::REDACTED) {
        // Credentials in a URL are never stored: the stored one cannot be sent again.
        bail!(
            "session {session}'s URL had credentials, which are never stored; give --base-url: {}",
            turn.url
        );
    }
    let catalog = load_catalog(args.catalog.as_deref(), args.max_bytes)?;
    let previous = import_body(&turn.body, &catalog)
        .map_err(|e| anyhow::anyhow!("session {session}, request {}: {e}", turn.position))?
        .prompt;
    let previous_body = turn.body.as_object().cloned().unwrap_or_default();
    let tokenizer = Tokenizer::o200k();
    if let Some(path) = &args.prompt {
        let (_, start) = load_and_compile(path, args.max_bytes, &args.choice(None))?;
        let report = prefix_check(&start.body, &previous_body, tokenizer)?;
        if let Some(at) = &report.divergence {
            bail!(
                "{}: session {session} did not start from this prompt (its request {} differs at {})",
                display_name(path),
                turn.position,
                at.pointer
            );
        }
    }
    let outputs = args
        .tool_outputs
        .iter()
        .map(|arg| parse_tool_output(arg, args.max_bytes))
        .collect::<anyhow::Result<_>>()?;
    let continuation = Continuation::answering(
        &turn.outcome,
        outputs,
        args.user.clone(),
        uuid::Uuid::now_v7,
    );
    let next = next_prompt(&previous, &turn.outcome, &continuation)
        .map_err(|e| anyhow::anyhow!("session {session}, request {}: {e}", turn.position))?;
    let added = next.input.len() - previous.input.len();
    let base = turn.url.strip_suffix("/responses");
    let name = format!("session {session}");
    let (prompt, compiled) = compile_prompt(next, &name, args.max_bytes, &args.choice(base))?;
    let prefix = prefix_check(&previous_body, &compiled.body, tokenizer)?;
    Ok(Plan {
        prompt,
        compiled,
        name,
        prefix: Some((prefix, added)),
    })
}

/// `CALL_ID=TEXT` or `CALL_ID=@FILE` (read with the size limit): (call id, output text).
fn parse_tool_output(arg: &str, max_bytes: u64) -> anyhow::Result<(String, String)> {
    let Some((call_id, value)) = arg.split_once('=').filter(|(id, _)| !id.trim().is_empty()) else {
        bail!("--tool-output `{arg}`: expected CALL_ID=TEXT or CALL_ID=@FILE");
    };
    let output = match value.strip_prefix('@') {
        Some(path) => {
            read_text(path, max_bytes).with_context(|| format!("--tool-output {call_id}"))?
        }
        None => value.to_string(),
    };
    Ok((call_id.trim().to_string(), output))
}

fn prefix_json(report: &PairVerdict, added: usize) -> Value {
    json!({"continue": {
        "previous_request": report.from,
        "added_items": added,
        "prefix_kept": report.prefix_kept,
        "break": report.divergence,
        "causes": report.causes,
        "reusable_tokens": report.reusable_tokens,
        "previous_tokens": report.from_tokens,
    }})
}

/// Runs `send`.
pub fn run(args: &SendArgs) -> anyhow::Result<()> {
    let plan = match (args.continue_, args.session) {
        (true, Some(session)) => plan_continue(args, session)?,
        _ => {
            let path = args.prompt.as_deref().unwrap_or("-");
            let (prompt, compiled) = load_and_compile(path, args.max_bytes, &args.choice(None))?;
            Plan {
                prompt,
                compiled,
                name: display_name(path).to_string(),
                prefix: None,
            }
        }
    };
    let compiled = &plan.compiled;
    let options = SendOptions {
        connect_timeout: duration("connect-timeout-secs", args.connect_timeout_secs)?,
        idle_timeout: duration("idle-timeout-secs", args.idle_timeout_secs)?,
        max_retries: args.max_retries,
        deadline: duration("deadline", args.deadline)?,
        limits: args.limits.limits(),
        // The printer and the recorder take each entry as it arrives: none is kept twice.
        keep_entries: false,
        ca: args
            .ca
            .as_deref()
            .map(super::ca::read_ca_file)
            .transpose()?,
        ..SendOptions::default()
    };
    #[allow(
        clippy::disallowed_methods,
        reason = "the CLI edge and the API-key lookup: the key's variable is read here"
    )]
    let headers = resolve_headers(compiled, |env| std::env::var(env).ok())?;
    // One network worker; this thread consumes the live events (see `transport::send`).
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .context("starting the async runtime")?;

    if let Some((report, added)) = &plan.prefix {
        use std::io::Write as _;
        let line = match args.json {
            true => prefix_json(report, *added).to_string(),
            false => prefix_note(report),
        };
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "{line}").and_then(|()| stdout.flush())?;
    }
    let mut printer = Printer::new(std::io::stdout(), args.json);
    let wire = match args.ws {
        true => Wire::WebSocket,
        false => Wire::Http,
    };
    let sender = Sender::new(wire, &compiled.url, options)?;
    match &sender {
        Sender::Ws(ws) => printer.note(&format!("WebSocket {}", ws.url())),
        Sender::Http(_) => printer.note(&format!("POST {}", compiled.url)),
    }
    // Recording into the session store: kept apart from the send (see `store::SendRecording`).
    // A database that cannot be opened never stops the send: it goes out unrecorded, with a
    // warning (a session given by id that does not exist stays a usage error).
    let store = match args.no_record {
        true => None,
        false => open_or_default(args.db.as_deref())
            .inspect_err(|e| eprintln!("promptwire: not recording this send: {e}"))
            .ok(),
    };
    if let (Some(store), Some(session)) = (&store, args.session) {
        store.session(session)?;
    }
    let writer = store.and_then(|store| {
        Writer::open(store.path())
            .inspect_err(|e| eprintln!("promptwire: not recording this send: {e}"))
            .ok()
    });
    // The CLI may wait (briefly) for each request row before it goes out: a `send` killed
    // mid-stream leaves its request listed as "without an answer".
    let row_wait = std::time::Duration::from_secs(2);
    let mut recording = match (writer, args.session) {
        (None, _) => None,
        (Some(writer), Some(session)) => Some(
            SendRecording::into_session(&writer, session, compiled, None)?
                .waiting_for_rows(row_wait),
        ),
        (Some(writer), None) => {
            match SendRecording::new_session(
                &writer,
                &plan.name,
                &plan.prompt.model,
                compiled,
                None,
            ) {
                Ok(recording) => Some(recording.waiting_for_rows(row_wait)),
                Err(e) => {
                    eprintln!("promptwire: not recording this send: {e}");
                    None
                }
            }
        }
    };
    let cancel = CancelToken::new();
    // Ctrl-C (or SIGTERM) stops the send like Stop in the app: what arrived is kept, printed and
    // recorded, the request as interrupted (exit status 130).
    let interrupted = {
        let _runtime = runtime.enter();
        let signal = super::record::interrupted();
        let cancel = cancel.clone();
        runtime.spawn(async move {
            signal.await;
            cancel.cancel();
        })
    };
    let mut live = sender.start(
        runtime.handle(),
        std::sync::Arc::new(compiled.clone()),
        headers,
        cancel.clone(),
    );
    let mut result = None;
    while let Some(event) = live.next_blocking() {
        // Printed first, then handed to the recording (which keeps the raw event, not a copy).
        match event.progress() {
            Some(progress) => report(&mut printer, progress),
            None => {
                if let LiveEvent::Done(done) = event {
                    result = Some(*done);
                }
                break;
            }
        }
        if let Some(recording) = recording.as_mut() {
            record_live_owned(recording, event);
        }
    }
    let result = result.context("the send ended without a result")?;
    let no_outcome = TurnOutcome::default();
    let outcome = result.outcome().unwrap_or(&no_outcome);
    let failure = result.error.as_ref().map(|e| Failure {
        class: e.class(),
        message: e.to_string(),
        retry_after: e.retry_after(),
    });
    printer.outcome(outcome, failure);
    if let Some(recording) = recording {
        match finish_recording(recording, result) {
            Ok(stored) => printer.note(&format!("recorded in session {}", stored.session)),
            Err(e) => eprintln!("promptwire: recording failed: {e:#}"),
        }
    }
    printer.flush();
    interrupted.abort();
    if cancel.is_cancelled() {
        eprintln!("promptwire: interrupted");
        std::process::exit(130);
    }
    printer.check()
}

/// One readable line about the prefix property of a continued request.
fn prefix_note(report: &PairVerdict) -> String {
    match &report.divergence {
        None => format!(
            "prefix kept: the new request begins with request {} exactly ({} of its {} tokens reusable)",
            report.from, report.reusable_tokens, report.from_tokens
        ),
        Some(at) => format!(
            "prefix BROKEN at {} ({}): {} of {} tokens reusable",
            at.pointer,
            report
                .causes
                .iter()
                .map(|c| c.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            report.reusable_tokens,
            report.from_tokens
        ),
    }
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
                eprintln!("promptwire: {}", shown(&text));
            } else {
                printer.note(&text);
            }
        }
    }
    printer.flush();
}
