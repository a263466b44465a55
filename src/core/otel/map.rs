//! A recorded session as spans: the session's root span ([`session_span`]) and one span per
//! request ([`request_spans`]), attributes in the OpenTelemetry GenAI semantic conventions
//! (`gen_ai.*`, `server.*`, `error.type`), OpenInference's (`llm.*`, `openinference.span.kind`,
//! which Arize Phoenix reads to show model and tokens) beside them, and `promptwire.*` for what
//! neither has: dialect, transport, the ledger's prefix verdict and dollars. A subagent's session
//! (its parent stored) goes into its run's root trace, its session span a child of its parent's,
//! with `gen_ai.agent.id` (its thread) and `gen_ai.agent.name` (its kind).

use serde_json::Value;

use super::ids;
use super::span::{AttrValue, Attrs, Span, SpanEvent, SpanKind, SpanStatus};
use crate::core::anatomy::AgentTag;
use crate::core::ledger::{Ledger, Row, RowKind};
use crate::core::redact::{RedactError, try_redact_value, try_redacted};
use crate::core::stream::{ErrorClass, UsageCounts};

/// What the mapping needs of a session.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionFacts {
    /// Stored session id.
    pub id: i64,
    /// Display name.
    pub name: String,
    /// Where it came from (`proxy`, `send`, `import`, …).
    pub source: String,
    /// Creation time, Unix microseconds.
    pub created_us: i64,
    /// The agent the session is (its thread, parent thread and kind), when recorded.
    pub agent: Option<AgentTag>,
    /// Where a subagent's session sits in its run, when its parent is stored: its spans go into
    /// the root agent's trace, its session span a child of its parent's.
    pub place: Option<AgentPlace>,
}

/// A subagent session's place in its run's trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgentPlace {
    /// The root agent's session (id, creation time): its trace holds the whole run.
    pub root: (i64, i64),
    /// The parent agent's session id.
    pub parent: i64,
}

impl SessionFacts {
    /// The trace the session's spans go into: the root agent's, else its own.
    pub fn trace_id(&self) -> [u8; 16] {
        match self.place {
            Some(place) => ids::trace_id(place.root.0, place.root.1),
            None => ids::trace_id(self.id, self.created_us),
        }
    }

    /// The session's own span in [`SessionFacts::trace_id`], and the span it is a child of (a
    /// subagent's parent session's span; none for a root).
    pub fn span_ids(&self) -> ([u8; 8], Option<[u8; 8]>) {
        let trace = self.trace_id();
        match self.place {
            Some(place) => (
                ids::agent_span_id(&trace, self.id),
                Some(if place.parent == place.root.0 {
                    ids::session_span_id(&trace)
                } else {
                    ids::agent_span_id(&trace, place.parent)
                }),
            ),
            None => (ids::session_span_id(&trace), None),
        }
    }
}

/// How a stored request ended, as the mapping reads it.
#[derive(Debug, Clone, PartialEq)]
pub enum Ended {
    /// The stream completed.
    Completed,
    /// The turn failed (its error class, and message).
    Failed {
        /// Error class.
        class: Option<ErrorClass>,
        /// Message.
        message: Option<String>,
    },
    /// Events but no terminal one.
    Open,
    /// No outcome recorded.
    Unknown,
}

/// What the mapping needs of a stored request.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestFacts {
    /// Stored request id.
    pub request_id: i64,
    /// Model slug the request named.
    pub model: Option<String>,
    /// `standard` / `lite`.
    pub dialect: Option<String>,
    /// Provider name or kind as stored.
    pub provider: Option<String>,
    /// `POST`, or `WS` for a WebSocket `response.create`.
    pub method: String,
    /// Upstream URL as stored (credential parameters were redacted before storing; redacted
    /// again here).
    pub url: String,
    /// HTTP status (101 for a WebSocket exchange).
    pub status: Option<u16>,
    /// Start, Unix microseconds.
    pub started_us: Option<i64>,
    /// Microseconds to the end of the response.
    pub total_us: Option<i64>,
    /// How it ended.
    pub ended: Ended,
    /// The answer's response id.
    pub response_id: Option<String>,
    /// The model the server reported.
    pub server_model: Option<String>,
    /// The answer's usage.
    pub usage: Option<UsageCounts>,
    /// Microseconds to the first event.
    pub first_event_us: Option<i64>,
    /// Microseconds to the first output text.
    pub first_text_us: Option<i64>,
    /// Raw events recorded.
    pub events: u64,
    /// `reasoning.effort` of the body.
    pub reasoning_effort: Option<String>,
    /// `prompt_cache_key` of the body (Codex: its conversation id).
    pub prompt_cache_key: Option<String>,
    /// The body's `instructions` and `input` (filled only when content is exported).
    pub input: Option<Value>,
    /// The answer's text (filled only when content is exported).
    pub output_text: Option<String>,
}

/// What goes into the spans.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SpanOptions {
    /// Message content (input and output), redacted.
    pub content: bool,
}

/// Dollars to the micro-dollar (no float noise in a backend's attribute table).
fn usd(value: f64) -> f64 {
    (value * 1e6).round() / 1e6
}

fn nanos(us: i64) -> u64 {
    u64::try_from(us).unwrap_or(0).saturating_mul(1000)
}

/// Start and end of a request, Unix nanoseconds (`fallback_us` when it has no start time).
fn request_times(r: &RequestFacts, fallback_us: i64) -> (u64, u64) {
    let start = r.started_us.unwrap_or(fallback_us);
    let end = start.saturating_add(r.total_us.unwrap_or(0).max(0));
    (nanos(start), nanos(end))
}

/// The session's root span: the whole session's time range, its request count and the ledger's
/// totals.
pub fn session_span(
    session: &SessionFacts,
    requests: &[RequestFacts],
    ledger: Option<&Ledger>,
) -> Span {
    let trace_id = session.trace_id();
    let (span_id, parent_span_id) = session.span_ids();
    let start = requests
        .iter()
        .filter_map(|r| r.started_us)
        .min()
        .unwrap_or(session.created_us);
    let end = requests
        .iter()
        .map(|r| request_times(r, start).1)
        .max()
        .unwrap_or(nanos(start))
        .max(nanos(start));
    let mut a = Attrs::default();
    a.str("gen_ai.operation.name", "invoke_agent");
    a.str("gen_ai.conversation.id", conversation_id(session, requests));
    a.str("openinference.span.kind", "AGENT");
    a.str("session.id", format!("promptwire-{}", session.id));
    a.int("promptwire.session.id", session.id);
    a.str("promptwire.session.name", session.name.clone());
    a.str("promptwire.session.source", session.source.clone());
    a.uint("promptwire.session.requests", requests.len() as u64);
    if let Some(agent) = &session.agent {
        a.str("gen_ai.agent.id", agent.thread.clone());
        a.str(
            "gen_ai.agent.name",
            agent.kind.clone().unwrap_or_else(|| "root".to_string()),
        );
        if let Some(parent) = &agent.parent {
            a.str("promptwire.agent.parent_thread", parent.clone());
        }
        if let Some(kind) = &agent.kind {
            a.str("promptwire.agent.kind", kind.clone());
        }
    }
    let (mut input, mut cached, mut written, mut output) = (0i64, 0i64, 0i64, 0i64);
    for u in requests.iter().filter_map(|r| r.usage.as_ref()) {
        input += u.input_tokens.unwrap_or(0);
        cached += u.cached_input_tokens.unwrap_or(0);
        written += u.cache_write_input_tokens.unwrap_or(0);
        output += u.output_tokens.unwrap_or(0);
    }
    a.int("gen_ai.usage.input_tokens", input);
    a.int("gen_ai.usage.output_tokens", output);
    a.int("gen_ai.usage.cache_read.input_tokens", cached);
    a.int("gen_ai.usage.cache_creation.input_tokens", written);
    if let Some(ledger) = ledger {
        let totals = &ledger.summary.totals;
        a.uint("promptwire.ledger.read_tokens", totals.read_tokens);
        a.uint("promptwire.ledger.write_tokens", totals.write_tokens);
        a.uint("promptwire.ledger.uncached_tokens", totals.uncached_tokens);
        if let Some(d) = totals.cost_usd {
            a.float("promptwire.cost.paid_usd", usd(d.paid));
            a.float("promptwire.cost.ideal_usd", usd(d.ideal));
            a.float("promptwire.cost.lost_usd", usd(d.lost));
        }
        a.uint(
            "promptwire.prefix.breaks",
            ledger.rows.iter().filter(|r| r.is_break()).count() as u64,
        );
    }
    Span {
        trace_id,
        span_id,
        parent_span_id,
        name: format!("session {}", session.name),
        kind: SpanKind::Internal,
        start_unix_nanos: nanos(start),
        end_unix_nanos: end,
        attributes: a.0,
        events: Vec::new(),
        status: SpanStatus::Unset,
    }
}

/// The conversation id: the first `prompt_cache_key` (Codex sends its conversation id there),
/// else the session's own.
fn conversation_id(session: &SessionFacts, requests: &[RequestFacts]) -> String {
    requests
        .iter()
        .find_map(|r| r.prompt_cache_key.clone())
        .unwrap_or_else(|| format!("promptwire-{}", session.id))
}

/// One span per request of `requests` (a session's, in order; the ledger's rows are by that
/// order), children of the session's root span. `only` keeps the requests whose stored id it
/// names (all when `None`).
pub fn request_spans(
    session: &SessionFacts,
    requests: &[RequestFacts],
    ledger: Option<&Ledger>,
    options: SpanOptions,
    only: Option<&[i64]>,
) -> Result<Vec<Span>, RedactError> {
    let trace_id = session.trace_id();
    let (root, _) = session.span_ids();
    let conversation = conversation_id(session, requests);
    let mut out = Vec::new();
    for (index, r) in requests.iter().enumerate() {
        if only.is_some_and(|ids| !ids.contains(&r.request_id)) {
            continue;
        }
        let row = ledger
            .and_then(|l| l.rows.get(index))
            .filter(|row| row.index == index);
        let trace = Trace {
            trace_id: &trace_id,
            root,
            session,
            conversation: &conversation,
            options,
        };
        out.push(request_span(&trace, r, index, row)?);
    }
    Ok(out)
}

/// `gen_ai.provider.name`: the conventions' well-known names where the request went to OpenAI
/// or Azure OpenAI, else the stored provider name.
fn provider_name(r: &RequestFacts, host: Option<&str>) -> String {
    let host = host.unwrap_or("");
    let provider = r.provider.as_deref().unwrap_or("").to_ascii_lowercase();
    if host.ends_with(".openai.azure.com") || host.contains("azure") || provider == "azure" {
        "azure.ai.openai".to_string()
    } else if host == "api.openai.com" || provider.is_empty() || provider == "openai" {
        "openai".to_string()
    } else {
        provider
    }
}

/// Host and port of a URL (`scheme://[user@]host[:port]/…`).
fn host_port(url: &str) -> (Option<String>, Option<u16>) {
    let Some((scheme, rest)) = url.split_once("://") else {
        return (None, None);
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let authority = authority.rsplit('@').next().unwrap_or(authority);
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) if !h.is_empty() && !authority.ends_with(']') => (h, p.parse().ok()),
        _ => (authority, None),
    };
    let port = port.or(match scheme {
        "https" | "wss" => Some(443),
        "http" | "ws" => Some(80),
        _ => None,
    });
    let host = host.trim_start_matches('[').trim_end_matches(']');
    ((!host.is_empty()).then(|| host.to_string()), port)
}

fn row_kind(kind: RowKind) -> &'static str {
    match kind {
        RowKind::First => "first",
        RowKind::Turn => "turn",
        RowKind::Warmup => "warmup",
        RowKind::Compaction => "compaction",
        RowKind::AfterCompaction => "after_compaction",
        RowKind::Undetermined => "undetermined",
    }
}

/// The ledger's verdict on one request as `promptwire.*` attributes.
fn ledger_attrs(a: &mut Attrs, row: &Row) {
    a.str("promptwire.ledger.kind", row_kind(row.kind));
    a.str("promptwire.cache_model", row.cache_model.as_str());
    if let Some(v) = &row.verdict {
        a.bool("promptwire.prefix.kept", v.prefix_kept);
        a.int("promptwire.prefix.compared_with", v.from as i64);
        a.uint("promptwire.prefix.reusable_tokens", v.reusable_tokens);
        if let Some(cause) = v.primary() {
            a.str("promptwire.prefix.cause", cause.as_str());
        }
        if !v.causes.is_empty() {
            a.strs(
                "promptwire.prefix.causes",
                v.causes.iter().map(|c| c.as_str().to_string()).collect(),
            );
        }
        if let Some(d) = &v.divergence {
            a.uint("promptwire.prefix.break_token", d.token);
            a.str("promptwire.prefix.break_pointer", d.pointer.clone());
            a.str("promptwire.prefix.break_source", d.source.as_str());
        }
    }
    a.bool("promptwire.prefix.broken", row.is_break());
    let predicted = &row.prediction.predicted;
    a.uint("promptwire.predicted.read_tokens", predicted.read_tokens);
    a.uint("promptwire.predicted.write_tokens", predicted.write_tokens);
    a.uint("promptwire.ledger.read_tokens", row.read_tokens());
    a.uint("promptwire.ledger.write_tokens", row.write_tokens());
    a.uint("promptwire.ledger.ideal_read_tokens", row.ideal_read_tokens);
    if let Some(d) = row.cost_usd {
        a.float("promptwire.cost.paid_usd", usd(d.paid));
        a.float("promptwire.cost.ideal_usd", usd(d.ideal));
        a.float("promptwire.cost.lost_usd", usd(d.lost));
    }
    for l in &row.lost_by_cause {
        a.float(
            &format!("promptwire.cost.lost_usd.{}", l.cause.as_str()),
            usd(l.usd),
        );
    }
    if !row.notes.is_empty() {
        a.strs(
            "promptwire.ledger.notes",
            row.notes.iter().map(|c| c.as_str().to_string()).collect(),
        );
    }
    if let Some(f) = &row.finding {
        a.str("promptwire.ledger.finding", f.clone());
    }
}

/// What every request span of a session shares.
struct Trace<'a> {
    trace_id: &'a [u8; 16],
    root: [u8; 8],
    session: &'a SessionFacts,
    conversation: &'a str,
    options: SpanOptions,
}

/// The span of request `r`, at `index` in its session, with its ledger row.
fn request_span(
    t: &Trace<'_>,
    r: &RequestFacts,
    index: usize,
    row: Option<&Row>,
) -> Result<Span, RedactError> {
    let Trace {
        trace_id,
        root,
        session,
        conversation,
        options,
    } = *t;
    let (start, end) = request_times(r, session.created_us);
    let url = try_redacted(&r.url)?.into_owned();
    let (host, port) = host_port(&url);
    let model = r.model.clone().unwrap_or_default();
    let mut a = Attrs::default();
    a.str("gen_ai.operation.name", "chat");
    let provider = provider_name(r, host.as_deref());
    a.str("gen_ai.provider.name", provider.clone());
    a.str("gen_ai.request.model", model.clone());
    a.opt_str("gen_ai.response.model", r.server_model.as_deref());
    a.opt_str("gen_ai.response.id", r.response_id.as_deref());
    a.str("gen_ai.conversation.id", conversation);
    a.opt_str(
        "gen_ai.request.reasoning_effort",
        r.reasoning_effort.as_deref(),
    );
    a.opt_str("server.address", host.as_deref());
    if let Some(p) = port {
        a.int("server.port", i64::from(p));
    }
    a.str("url.full", url);
    if let Some(s) = r.status.filter(|s| *s != 101) {
        a.int("http.response.status_code", i64::from(s));
    }
    let u = r.usage.unwrap_or_default();
    let non_neg = |v: Option<i64>| v.map(|v| v.max(0) as u64);
    a.opt_uint("gen_ai.usage.input_tokens", non_neg(u.input_tokens));
    a.opt_uint("gen_ai.usage.output_tokens", non_neg(u.output_tokens));
    a.opt_uint(
        "gen_ai.usage.cache_read.input_tokens",
        non_neg(u.cached_input_tokens),
    );
    a.opt_uint(
        "gen_ai.usage.cache_creation.input_tokens",
        non_neg(u.cache_write_input_tokens),
    );
    a.opt_uint(
        "gen_ai.usage.reasoning.output_tokens",
        non_neg(u.reasoning_output_tokens),
    );
    // OpenInference, for Phoenix's model and token columns.
    a.str("openinference.span.kind", "LLM");
    a.str(
        "llm.model_name",
        r.server_model.clone().unwrap_or(model.clone()),
    );
    a.str(
        "llm.provider",
        if provider == "azure.ai.openai" {
            "azure"
        } else {
            "openai"
        },
    );
    a.str("llm.system", "openai");
    a.opt_uint("llm.token_count.prompt", non_neg(u.input_tokens));
    a.opt_uint("llm.token_count.completion", non_neg(u.output_tokens));
    let total = u
        .total_tokens
        .or_else(|| Some(u.input_tokens? + u.output_tokens?));
    a.opt_uint("llm.token_count.total", non_neg(total));
    a.opt_uint(
        "llm.token_count.prompt_details.cache_read",
        non_neg(u.cached_input_tokens),
    );
    a.opt_uint(
        "llm.token_count.prompt_details.cache_write",
        non_neg(u.cache_write_input_tokens),
    );
    a.str("session.id", format!("promptwire-{}", session.id));
    // promptwire's own.
    a.int("promptwire.session.id", session.id);
    a.int("promptwire.request.id", r.request_id);
    a.uint("promptwire.request.index", index as u64);
    a.opt_str("promptwire.dialect", r.dialect.as_deref());
    a.str(
        "promptwire.transport",
        if r.method == "WS" {
            "websocket"
        } else {
            "http"
        },
    );
    a.uint("promptwire.events", r.events);
    if let Some(row) = row {
        ledger_attrs(&mut a, row);
    }
    let mut status = SpanStatus::Unset;
    match &r.ended {
        Ended::Failed { class, message } => {
            let kind = class.as_ref().map_or("failed", ErrorClass::as_str);
            a.str("error.type", kind);
            status =
                SpanStatus::Error(try_redacted(message.as_deref().unwrap_or(kind))?.into_owned());
        }
        Ended::Completed => {}
        Ended::Open => a.str("promptwire.outcome", "open"),
        Ended::Unknown => a.str("promptwire.outcome", "none"),
    }
    if let Some(code) = r.status.filter(|s| !(200..300).contains(s) && *s != 101)
        && !matches!(r.ended, Ended::Failed { .. })
    {
        a.str("error.type", code.to_string());
        status = SpanStatus::Error(format!("HTTP {code}"));
    }
    if options.content {
        content_attrs(&mut a, r)?;
    }
    let mut events = Vec::new();
    let base = r.started_us.unwrap_or(session.created_us);
    if let Some(first) = r.first_text_us.or(r.first_event_us) {
        events.push(SpanEvent {
            name: "promptwire.first_token".to_string(),
            time_unix_nanos: nanos(base.saturating_add(first)).clamp(start, end.max(start)),
            attributes: vec![(
                "promptwire.ttft_ms".to_string(),
                AttrValue::Float(first as f64 / 1000.0),
            )],
        });
    }
    if r.total_us.is_some() {
        events.push(SpanEvent {
            name: "promptwire.stream_end".to_string(),
            time_unix_nanos: end,
            attributes: vec![(
                "promptwire.events".to_string(),
                AttrValue::Int(i64::try_from(r.events).unwrap_or(i64::MAX)),
            )],
        });
    }
    Ok(Span {
        trace_id: *trace_id,
        span_id: ids::request_span_id(trace_id, r.request_id),
        parent_span_id: Some(root),
        name: format!("chat {model}"),
        kind: SpanKind::Client,
        start_unix_nanos: start,
        end_unix_nanos: end.max(start),
        attributes: a.0,
        events,
        status,
    })
}

/// Input and output, redacted (fails closed): the GenAI conventions' `gen_ai.input.messages` /
/// `gen_ai.output.messages` / `gen_ai.system_instructions`, and OpenInference's `input.value` /
/// `output.value`.
fn content_attrs(a: &mut Attrs, r: &RequestFacts) -> Result<(), RedactError> {
    if let Some(input) = &r.input {
        let redacted = try_redact_value(input)?;
        if let Some(instructions) = redacted.get("instructions").filter(|v| !v.is_null()) {
            let text = match instructions {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            a.str(
                "gen_ai.system_instructions",
                serde_json::json!([{"type": "text", "content": text}]).to_string(),
            );
        }
        if let Some(items) = redacted.get("input") {
            a.str("gen_ai.input.messages", items.to_string());
            a.str("input.value", items.to_string());
            a.str("input.mime_type", "application/json");
        }
    }
    if let Some(text) = &r.output_text {
        let text = try_redacted(text)?.into_owned();
        a.str(
            "gen_ai.output.messages",
            serde_json::json!([{"role": "assistant", "parts": [{"type": "text", "content": text}]}])
                .to_string(),
        );
        a.str("output.value", text);
        a.str("output.mime_type", "text/plain");
    }
    Ok(())
}
