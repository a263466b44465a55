//! `promptwire stream FILE.sse|-`: decodes and maps a recorded SSE stream, printing one line per
//! raw event as it is decoded, then the outcome. Also holds the timeline printer `send` shares.
//!
//! With `--json`, each raw event is `{"seq","event","type","mapped","unparsed"}` and the last
//! line is `{"outcome":"completed",…}` or `{"outcome":"failed",…}`. Without it, a readable
//! timeline. Exit status 0 once the stream was read, whatever its outcome.

use std::io::{Read as _, Write};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use clap::Args;
use serde_json::{Value, json};

use super::limits::LimitArgs;
use super::shown::shown;
use crate::core::stream::outcome::TurnOutcome;
use crate::core::stream::{ErrorClass, MappedEvent, StreamReader, TimelineEntry, TurnState};

/// Size of the reads from the file or standard input.
const READ_BYTES: usize = 64 * 1024;

/// Arguments of `stream`.
#[derive(Debug, Args)]
pub struct StreamArgs {
    /// Recorded SSE stream (`.sse`), or `-` for standard input.
    file: String,
    /// One JSON object per raw event, then one outcome line.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    limits: LimitArgs,
}

/// Runs `stream`.
pub fn run(args: &StreamArgs) -> anyhow::Result<()> {
    let mut input: Box<dyn std::io::Read> = if args.file == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(
            super::pipe::InputFile::open(std::path::Path::new(&args.file))
                .with_context(|| format!("cannot read {}", args.file))?,
        )
    };
    let start = Instant::now();
    let mut printer = Printer::new(std::io::stdout(), args.json);
    let mut reader = StreamReader::with_limits(args.limits.limits());
    let mut buf = vec![0u8; READ_BYTES];
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                return Err(anyhow::Error::new(e)).with_context(|| {
                    format!("reading {}", super::input::display_name(&args.file))
                });
            }
        };
        for entry in reader.push(&buf[..n], start.elapsed()) {
            printer.entry(&entry);
        }
        printer.flush();
        printer.check()?;
        if reader.is_done() {
            break;
        }
    }
    for entry in reader.finish(start.elapsed()) {
        printer.entry(&entry);
    }
    printer.outcome(reader.outcome(), None);
    printer.flush();
    printer.check()
}

/// How a turn ended, for the outcome line: completed, or a failure class with its message.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// Error class (`retryable`, `internal_server_error`, …).
    pub class: ErrorClass,
    /// The error message.
    pub message: String,
    /// The delay the server asked for.
    pub retry_after: Option<Duration>,
}

/// The JSON outcome line of a completed turn.
#[derive(serde::Serialize)]
struct CompletedLine<'a> {
    outcome: &'static str,
    response_id: Option<&'a str>,
    usage: Option<&'a crate::core::stream::TokenUsage>,
    /// The server's `prompt_cache_diagnostics`, when the response carried them.
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_diagnostics: Option<&'a crate::core::stream::PromptCacheDiagnostics>,
    #[serde(skip_serializing_if = "Option::is_none")]
    timings: Option<Value>,
    text: &'a str,
}

/// Whole microseconds of `d` (saturating).
fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// The outcome's recorded times, for [`Printer::with_recorded_times`].
fn timings_json(outcome: &TurnOutcome) -> Value {
    let t = &outcome.timings;
    json!({
        "first_event_us": t.first_event.map(micros),
        "first_text_us": t.first_text.map(micros),
        "last_event_us": t.last_event.map(micros),
        "total_us": t.total.map(micros),
    })
}

/// Prints timeline entries and the outcome, as JSON lines or readable text. Write errors are kept
/// and reported by [`Printer::check`].
pub struct Printer<W: Write> {
    out: std::io::BufWriter<W>,
    json: bool,
    /// JSON lines carry the recorded times (`replay`).
    times: bool,
    error: Option<std::io::Error>,
}

impl<W: Write> Printer<W> {
    /// A printer writing to `out`.
    pub fn new(out: W, json: bool) -> Self {
        Self {
            out: std::io::BufWriter::new(out),
            json,
            times: false,
            error: None,
        }
    }

    /// JSON lines with the recorded times: each event line gains `at_us` (its receive time, in
    /// microseconds since the request started) and each outcome line `timings` (`first_event_us`,
    /// `first_text_us`, `last_event_us`, `total_us`; null when unknown). Used by `replay`.
    pub fn with_recorded_times(mut self) -> Self {
        self.times = true;
        self
    }

    /// True for JSON-lines output.
    pub fn is_json(&self) -> bool {
        self.json
    }

    /// Prints one raw event.
    pub fn entry(&mut self, entry: &TimelineEntry) {
        if self.json {
            let mut line = json!({
                "seq": entry.raw.seq,
                "event": entry.raw.event,
                "type": entry.data_type,
                "mapped": entry.mapped_kind(),
                "unparsed": entry.is_unparsed(),
            });
            if self.times {
                line["at_us"] = json!(micros(entry.raw.received_at));
            }
            self.line(&line.to_string());
        } else {
            let kind = entry
                .data_type
                .as_deref()
                .or(entry.raw.event.as_deref())
                .unwrap_or("-");
            let text = format!(
                "{:>9.3}s  #{:<5} {kind:<40} {}",
                entry.raw.received_at.as_secs_f64(),
                entry.raw.seq,
                describe(entry)
            );
            self.line(&text);
        }
    }

    /// Prints a line of text as is (readable mode only; ignored with `--json`).
    pub fn note(&mut self, text: &str) {
        if !self.json {
            self.line(text);
        }
    }

    /// Prints the outcome: the turn's, or `failure` when the send itself failed.
    pub fn outcome(&mut self, outcome: &TurnOutcome, failure: Option<Failure>) {
        let failure = failure.or_else(|| match &outcome.state {
            TurnState::Completed { .. } => None,
            TurnState::Failed(e) => Some(Failure {
                class: e.class(),
                message: e.to_string(),
                retry_after: e.retry_after(),
            }),
            TurnState::Open => Some(Failure {
                class: ErrorClass::Stream,
                message: "the turn did not end".to_string(),
                retry_after: None,
            }),
        });
        if self.json {
            let mut line = match &failure {
                // Serialized from borrows: the text is not copied into a JSON value first.
                None => {
                    let line = serde_json::to_string(&CompletedLine {
                        outcome: "completed",
                        response_id: outcome.response_id(),
                        usage: outcome.usage.as_ref(),
                        prompt_cache_diagnostics: outcome.cache_diagnostics.as_ref(),
                        timings: self.times.then(|| timings_json(outcome)),
                        text: &outcome.text,
                    });
                    match line {
                        Ok(line) => self.line(&line),
                        Err(e) => self.error = Some(std::io::Error::other(e)),
                    }
                    return;
                }
                Some(f) => json!({
                    "outcome": "failed",
                    "error": f.class,
                    "message": f.message,
                    "retry_after_ms": f.retry_after.map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
                }),
            };
            if self.times {
                line["timings"] = timings_json(outcome);
            }
            self.line(&line.to_string());
            return;
        }
        for line in readable_outcome(outcome, failure.as_ref()) {
            self.line(&line);
        }
        // The text is written line by line from the outcome, never copied whole.
        for (n, line) in outcome.text.lines().enumerate() {
            let lead = if n == 0 { "text       " } else { "           " };
            self.write_parts(&[lead, line]);
        }
    }

    /// Flushes buffered lines.
    pub fn flush(&mut self) {
        if self.error.is_none()
            && let Err(e) = self.out.flush()
        {
            self.error = Some(e);
        }
    }

    /// The first write error, if any.
    pub fn check(&mut self) -> anyhow::Result<()> {
        match self.error.take() {
            Some(e) => Err(anyhow::Error::new(e).context("writing to standard output")),
            None => Ok(()),
        }
    }

    fn line(&mut self, text: &str) {
        if self.error.is_some() {
            return;
        }
        // Every line printed passes the redaction policy (a server echoing a key, a URL
        // with credentials in a message).
        if let Err(e) = writeln!(self.out, "{}", shown(text)) {
            self.error = Some(e);
        }
    }

    /// One line made of `parts`, each redacted on its own (no copy of a long part unless it
    /// holds a credential).
    fn write_parts(&mut self, parts: &[&str]) {
        if self.error.is_some() {
            return;
        }
        let written = parts
            .iter()
            .try_for_each(|part| write!(self.out, "{}", shown(part)))
            .and_then(|()| writeln!(self.out));
        if let Err(e) = written {
            self.error = Some(e);
        }
    }
}

fn readable_outcome(outcome: &TurnOutcome, failure: Option<&Failure>) -> Vec<String> {
    let mut lines = Vec::new();
    match failure {
        None => {
            let mut text = format!(
                "outcome    completed {}",
                outcome.response_id().unwrap_or("")
            );
            if let TurnState::Completed {
                end_turn: Some(end),
                ..
            } = &outcome.state
            {
                text.push_str(&format!(" (end_turn {end})"));
            }
            lines.push(text);
        }
        Some(f) => {
            let mut text = format!("outcome    failed: {}: {}", f.class, f.message);
            if let Some(delay) = f.retry_after {
                text.push_str(&format!(" (retry after {})", secs(delay)));
            }
            lines.push(text);
        }
    }
    if let Some(model) = &outcome.server_model {
        lines.push(format!("model      {model} (reported by the server)"));
    }
    if let Some(u) = &outcome.usage {
        lines.push(format!(
            "usage      input {} (cached {}, cache write {}), output {} (reasoning {}), total {}",
            u.input_tokens,
            u.cached_input_tokens,
            u.cache_write_input_tokens,
            u.output_tokens,
            u.reasoning_output_tokens,
            u.total_tokens
        ));
    }
    if let Some(diagnosis) = &outcome.cache_diagnostics {
        lines.push(format!("cache      server: {}", diagnosis.describe()));
    }
    let t = &outcome.timings;
    let mut timing = vec![format!("{} events", outcome.events)];
    if outcome.unparsed_events > 0 {
        timing.push(format!("{} unparsed", outcome.unparsed_events));
    }
    if let Some(d) = t.first_event {
        timing.push(format!("first event {}", secs(d)));
    }
    if let Some(d) = t.first_text {
        timing.push(format!("first text {}", secs(d)));
    }
    if let Some(g) = t.longest_gap {
        timing.push(format!(
            "longest gap {} after #{}",
            secs(g.duration),
            g.after_seq
        ));
    }
    if let Some(d) = t.total {
        timing.push(format!("total {}", secs(d)));
    }
    lines.push(format!("timing     {}", timing.join(", ")));
    if !outcome.output_items.is_empty() {
        let items: Vec<String> = outcome
            .output_items
            .iter()
            .map(|item| match item.id() {
                Some(id) => format!("{} {id}", item.type_name()),
                None => item.type_name().to_string(),
            })
            .collect();
        lines.push(format!("items      {}", items.join(", ")));
    }
    for call in &outcome.tool_calls {
        lines.push(format!(
            "tool call  {} {} {}",
            call.name.as_deref().unwrap_or("?"),
            call.call_id.as_deref().unwrap_or("-"),
            quoted(&call.arguments, LONG_QUOTE_CHARS)
        ));
    }
    for part in &outcome.reasoning_summaries {
        lines.push(format!(
            "summary    [{}] {}",
            part.index,
            quoted(&part.text, LONG_QUOTE_CHARS)
        ));
    }
    lines
}

/// A short readable description of what a client made of one raw event.
fn describe(entry: &TimelineEntry) -> String {
    if let Some(err) = &entry.unparsed {
        return format!(
            "unparsed ({err}): {}",
            quoted(&entry.raw.data, SHORT_QUOTE_CHARS)
        );
    }
    let mut parts: Vec<String> = entry.mapped.iter().map(describe_event).collect();
    if let Some(e) = &entry.error {
        parts.push(format!(
            "error {}: {e} (ends the turn at end of stream unless a completion follows)",
            e.class()
        ));
    }
    if let Some(note) = &entry.note {
        parts.push(note.clone());
    }
    if parts.is_empty() {
        "(ignored by clients)".to_string()
    } else {
        parts.join("; ")
    }
}

/// One mapped event in a few words.
pub fn describe_event(event: &MappedEvent) -> String {
    let kind = event.kind();
    match event {
        MappedEvent::OutputItemAdded(item) | MappedEvent::OutputItemDone(item) => {
            format!("{kind} {} {}", item.type_name(), item.id().unwrap_or(""))
        }
        MappedEvent::OutputTextDelta(delta) => {
            format!("{kind} {}", quoted(delta, SHORT_QUOTE_CHARS))
        }
        MappedEvent::ToolCallInputDelta { item_id, delta, .. } => {
            format!("{kind} {item_id} {}", quoted(delta, SHORT_QUOTE_CHARS))
        }
        MappedEvent::ReasoningSummaryDelta {
            delta,
            summary_index,
        } => format!(
            "{kind} [{summary_index}] {}",
            quoted(delta, SHORT_QUOTE_CHARS)
        ),
        MappedEvent::ReasoningSummaryDone {
            item_id,
            text,
            summary_index,
        } => format!(
            "{kind} {item_id} [{summary_index}] {}",
            quoted(text, SHORT_QUOTE_CHARS)
        ),
        MappedEvent::ReasoningContentDelta {
            delta,
            content_index,
        } => format!(
            "{kind} [{content_index}] {}",
            quoted(delta, SHORT_QUOTE_CHARS)
        ),
        MappedEvent::ReasoningSummaryPartAdded { summary_index } => {
            format!("{kind} [{summary_index}]")
        }
        MappedEvent::Completed { response_id, .. } => format!("{kind} {response_id}"),
        MappedEvent::ServerModel(model) => format!("{kind} {model}"),
        MappedEvent::ModelsEtag(etag) => format!("{kind} {etag}"),
        MappedEvent::SafetyBuffering(sb) => format!("{kind} {}", sb.use_cases.join(",")),
        MappedEvent::Created
        | MappedEvent::ModelVerifications(_)
        | MappedEvent::TurnModerationMetadata(_)
        | MappedEvent::ServerReasoningIncluded(_) => kind.to_string(),
    }
}

/// Characters of a delta shown on a timeline line.
const SHORT_QUOTE_CHARS: usize = 60;

/// Characters of tool-call input and summaries shown under the outcome.
const LONG_QUOTE_CHARS: usize = 200;

/// `text` as a JSON string (one line), cut to `max_chars` characters.
fn quoted(text: &str, max_chars: usize) -> String {
    let mut cut: String = text.chars().take(max_chars).collect();
    let more = cut.len() < text.len();
    if more {
        cut.push('…');
    }
    Value::String(cut).to_string()
}

/// Seconds with milliseconds.
pub fn secs(d: Duration) -> String {
    format!("{:.3} s", d.as_secs_f64())
}
