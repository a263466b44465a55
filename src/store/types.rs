//! Plain data going in and out of the store, and the recorded state of a turn
//! ([`RecordedState`]), which is text only in SQL (`sql_text.rs`) and in JSON.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;
use serde_json::Value;

use crate::core::stream::{ErrorClass, TurnOutcome, TurnState};

/// Where a session came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// Compiled from the Prompt form.
    Form,
    /// Sent live with `send`.
    Send,
    /// Captured by the recording proxy.
    Proxy,
    /// Imported from a file.
    Import,
    /// A client served from a recording by the replay endpoint.
    Replay,
}

impl Source {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Form => "form",
            Self::Send => "send",
            Self::Proxy => "proxy",
            Self::Import => "import",
            Self::Replay => "replay",
        }
    }

    /// Parses a stored name.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "form" => Some(Self::Form),
            "send" => Some(Self::Send),
            "proxy" => Some(Self::Proxy),
            "import" => Some(Self::Import),
            "replay" => Some(Self::Replay),
            _ => None,
        }
    }
}

/// A session to create.
#[derive(Debug, Clone, PartialEq)]
pub struct NewSession {
    /// Display name.
    pub name: String,
    /// Where it came from.
    pub source: Source,
    /// Provider name, when known.
    pub provider: Option<String>,
    /// Model slug, when known.
    pub model: Option<String>,
    /// Creation time, Unix microseconds (passed in).
    pub created_us: i64,
}

/// A request to store. Secret headers in `headers` are dropped, never written.
#[derive(Debug, Clone, PartialEq)]
pub struct NewRequest<'a> {
    /// `standard` / `lite`.
    pub dialect: Option<String>,
    /// Rules preset name.
    pub rules: Option<String>,
    /// Provider kind or name.
    pub provider: Option<String>,
    /// `POST`.
    pub method: String,
    /// Request URL.
    pub url: String,
    /// The exact body bytes (JSON).
    pub body: &'a [u8],
    /// Request headers as sent or shown.
    pub headers: &'a [(String, String)],
    /// Other fields worth keeping (a JSON object), exported under `_promptwire`.
    pub extra: Option<Value>,
    /// Start time, Unix microseconds.
    pub started_us: Option<i64>,
}

impl<'a> NewRequest<'a> {
    /// A `POST` of `body` to `url`, with no headers, extra fields, start time or labels (fill
    /// those in with struct update syntax).
    pub fn post(url: impl Into<String>, body: &'a [u8]) -> Self {
        Self {
            dialect: None,
            rules: None,
            provider: None,
            method: "POST".to_string(),
            url: url.into(),
            body,
            headers: &[],
            extra: None,
            started_us: None,
        }
    }
}

/// The response half of a stored request.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ResponseMeta {
    /// HTTP status.
    pub status: Option<u16>,
    /// Response headers (secret ones dropped).
    pub headers: Vec<(String, String)>,
    /// A non-SSE body (an HTTP error's), as the bytes received (stored as they are unless a
    /// secret in it must be redacted).
    pub body: Option<Vec<u8>>,
    /// Microseconds to the response headers.
    pub wait_us: Option<i64>,
    /// Microseconds to the end of the response.
    pub total_us: Option<i64>,
    /// The HTTP version the answer came over (`HTTP/2.0`, `HTTP/1.1`), kept in the request's
    /// extra fields as `http_version` (the HAR's `httpVersion`); `None` leaves them as they are.
    pub http_version: Option<String>,
    /// Fields merged into the request's extra fields (a compressed answer's encoding, its size
    /// on the wire, why it was not decoded); `None` leaves them as they are.
    pub extra: Option<serde_json::Value>,
}

/// How a stored turn ended, as recorded (stored as `open` / `completed` / `failed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordedState {
    /// Events were recorded but no terminal one yet.
    #[default]
    Open,
    /// The turn completed.
    Completed,
    /// The turn failed (the outcome's error class says how).
    Failed,
}

impl RecordedState {
    /// Every state, in declaration order.
    pub const ALL: [Self; 3] = [Self::Open, Self::Completed, Self::Failed];

    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::Completed => "completed",
            Self::Failed => "failed",
        }
    }
}

/// A stored state name that is none of [`RecordedState`]'s.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown recorded state `{0}` (expected open, completed or failed)")]
pub struct UnknownRecordedState(pub String);

impl FromStr for RecordedState {
    type Err = UnknownRecordedState;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|state| state.as_str() == name)
            .ok_or_else(|| UnknownRecordedState(name.to_string()))
    }
}

impl fmt::Display for RecordedState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a stored turn ended.
#[derive(Debug, Clone, PartialEq, Default, Serialize, serde::Deserialize)]
#[serde(default)]
pub struct OutcomeRecord {
    /// Open, completed or failed.
    pub state: RecordedState,
    /// Response id of a completed turn.
    pub response_id: Option<String>,
    /// Error class of a failed turn.
    pub error_class: Option<ErrorClass>,
    /// Error message of a failed turn.
    pub error_message: Option<String>,
    /// Token usage (JSON).
    pub usage: Option<Value>,
    /// Streamed output text.
    pub text: String,
    /// Model the server reported.
    pub server_model: Option<String>,
    /// Raw events seen.
    pub events: u64,
    /// Microseconds to the first event.
    pub first_event_us: Option<i64>,
    /// Microseconds to the first text.
    pub first_text_us: Option<i64>,
    /// Microseconds to the end of the turn.
    pub total_us: Option<i64>,
    /// Raw events that passed but could not be recorded (the database was busy, full or
    /// failing past the writer's memory budget): the recording is incomplete when this is not 0.
    pub lost_events: u64,
    /// Why the recording is incomplete, when it is.
    pub lost_reason: Option<String>,
}

impl OutcomeRecord {
    /// "recording incomplete: 12 events lost (reason)", when the recording lost anything.
    pub fn recording_gap(&self) -> Option<String> {
        let reason = self.lost_reason.as_deref();
        match (self.lost_events, reason) {
            (0, None) => None,
            (0, Some(reason)) => Some(format!("recording incomplete: {reason}")),
            (n, reason) => Some(format!(
                "recording incomplete: {n} {} lost ({})",
                if n == 1 { "event" } else { "events" },
                reason.unwrap_or("no reason recorded")
            )),
        }
    }
}

fn micros(d: std::time::Duration) -> i64 {
    i64::try_from(d.as_micros()).unwrap_or(i64::MAX)
}

/// A turn's usage as stored (JSON), with the server's `prompt_cache_diagnostics` under that
/// key when the response carried them (so a stored session's ledger sets them beside its
/// prediction without re-reading the events).
fn usage_with_diagnostics(outcome: &TurnOutcome) -> Option<Value> {
    let mut usage = serde_json::to_value(outcome.usage.as_ref()?).ok()?;
    if let (Some(diagnostics), Some(map)) = (&outcome.cache_diagnostics, usage.as_object_mut())
        && let Ok(value) = serde_json::to_value(diagnostics)
    {
        map.insert("prompt_cache_diagnostics".to_string(), value);
    }
    Some(usage)
}

impl OutcomeRecord {
    /// The record of a turn outcome.
    /// The record of a turn outcome, taking its text instead of copying it (an answer's text
    /// can be as large as the response limit).
    pub fn from_turn_owned(mut outcome: TurnOutcome) -> Self {
        let text = std::mem::take(&mut outcome.text);
        Self {
            text,
            ..Self::from_turn(&outcome)
        }
    }

    pub fn from_turn(outcome: &TurnOutcome) -> Self {
        let (state, response_id, error_class, error_message) = match &outcome.state {
            TurnState::Open => (RecordedState::Open, None, None, None),
            TurnState::Completed { response_id, .. } => (
                RecordedState::Completed,
                Some(response_id.clone()),
                None,
                None,
            ),
            TurnState::Failed(e) => (
                RecordedState::Failed,
                None,
                Some(e.class()),
                Some(e.to_string()),
            ),
        };
        Self {
            state,
            response_id,
            error_class,
            error_message,
            usage: usage_with_diagnostics(outcome),
            text: outcome.text.clone(),
            server_model: outcome.server_model.clone(),
            events: outcome.events,
            first_event_us: outcome.timings.first_event.map(micros),
            first_text_us: outcome.timings.first_text.map(micros),
            total_us: outcome.timings.total.map(micros),
            lost_events: 0,
            lost_reason: None,
        }
    }
}

/// A page of a list: rows `offset..offset + limit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    /// Rows to skip.
    pub offset: u64,
    /// Rows to return at most.
    pub limit: u64,
}

impl Page {
    /// Everything.
    pub const ALL: Self = Self {
        offset: 0,
        limit: i64::MAX as u64,
    };

    /// The first `limit` rows.
    pub fn first(limit: u64) -> Self {
        Self { offset: 0, limit }
    }
}

/// One row of the session list.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionSummary {
    /// Session id.
    pub id: i64,
    /// Display name.
    pub name: String,
    /// `form` / `send` / `proxy` / `import`.
    pub source: String,
    /// Provider, when known.
    pub provider: Option<String>,
    /// Model slug, when known.
    pub model: Option<String>,
    /// Number of requests.
    pub requests: i64,
    /// Creation time, Unix microseconds.
    pub created_us: i64,
    /// Requests recorded as interrupted (Ctrl-C, Stop, the client went away).
    pub interrupted: i64,
    /// Requests with no outcome recorded: still running, or cut off before one could be
    /// written (the process was killed).
    pub unanswered: i64,
    /// Requests whose recording lost events (the database was busy or full past the writer's
    /// budget): their events are not all there.
    pub incomplete: i64,
    /// The agent it is (its thread, the thread that spawned it, how), when the recording says.
    pub agent: Option<crate::core::anatomy::AgentTag>,
    /// The stored session of the agent that spawned it.
    pub parent_session: Option<i64>,
}

/// The order a list of sessions is shown in with each subagent under its parent: (index into
/// `sessions`, depth). A session whose parent is in the list follows it (after the parent's
/// earlier children), one level deeper; the others keep their order at depth 0. Cycles and
/// missing parents leave a session at the top.
pub fn nested(sessions: &[SessionSummary]) -> Vec<(usize, usize)> {
    let index: std::collections::HashMap<i64, usize> = sessions
        .iter()
        .enumerate()
        .map(|(i, s)| (s.id, i))
        .collect();
    let parent: Vec<Option<usize>> = sessions
        .iter()
        .enumerate()
        .map(|(i, s)| {
            s.parent_session
                .and_then(|p| index.get(&p).copied())
                .filter(|&p| p != i)
        })
        .collect();
    // A session whose ancestry returns to itself is shown at the top.
    let rooted: Vec<bool> = (0..sessions.len())
        .map(|i| {
            let mut at = i;
            for _ in 0..sessions.len() {
                match parent[at] {
                    None => return true,
                    Some(p) if p == i => return false,
                    Some(p) => at = p,
                }
            }
            false
        })
        .collect();
    let parent: Vec<Option<usize>> = (0..sessions.len())
        .map(|i| parent[i].filter(|_| rooted[i]))
        .collect();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); sessions.len()];
    for (i, p) in parent.iter().enumerate() {
        if let Some(p) = p {
            children[*p].push(i);
        }
    }
    let mut out = Vec::with_capacity(sessions.len());
    let mut stack: Vec<(usize, usize)> = (0..sessions.len())
        .rev()
        .filter(|&i| parent[i].is_none())
        .map(|i| (i, 0))
        .collect();
    while let Some((i, depth)) = stack.pop() {
        out.push((i, depth));
        stack.extend(children[i].iter().rev().map(|&c| (c, depth + 1)));
    }
    out
}

impl SessionSummary {
    /// What keeps the session from being complete (`1 interrupted, 2 without an answer`), or
    /// `None` when every request has its outcome and none was interrupted.
    pub fn unfinished(&self) -> Option<String> {
        let mut parts = Vec::new();
        if self.interrupted > 0 {
            parts.push(format!("{} interrupted", self.interrupted));
        }
        if self.unanswered > 0 {
            parts.push(format!("{} without an answer", self.unanswered));
        }
        if self.incomplete > 0 {
            parts.push(format!("{} recorded incompletely", self.incomplete));
        }
        (!parts.is_empty()).then(|| parts.join(", "))
    }
}

/// One row of a session's request list.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RequestSummary {
    /// Request id.
    pub id: i64,
    /// Session id.
    pub session_id: i64,
    /// Position in the session, from 0.
    pub position: i64,
    /// Model slug (the body's `model`).
    pub model: Option<String>,
    /// `standard` / `lite`.
    pub dialect: Option<String>,
    /// Rules preset name.
    pub rules: Option<String>,
    /// Provider.
    pub provider: Option<String>,
    /// HTTP method.
    pub method: String,
    /// URL.
    pub url: String,
    /// Body size in bytes.
    pub body_bytes: i64,
    /// HTTP status.
    pub status: Option<u16>,
    /// Start time, Unix microseconds.
    pub started_us: Option<i64>,
    /// Microseconds to the response headers.
    pub wait_us: Option<i64>,
    /// Microseconds to the end of the response.
    pub total_us: Option<i64>,
    /// Outcome state, when recorded.
    pub state: Option<RecordedState>,
}

/// A request with everything but its body and events.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestRecord {
    /// The list row.
    pub summary: RequestSummary,
    /// Request headers (secret ones were never stored).
    pub headers: Vec<(String, String)>,
    /// Extra fields (JSON object).
    pub extra: Option<Value>,
    /// Response headers.
    pub response_headers: Vec<(String, String)>,
    /// A non-SSE response body, as the bytes received.
    pub response_body: Option<Vec<u8>>,
}

impl RequestRecord {
    /// The non-SSE response body as text (invalid UTF-8 shown as U+FFFD: a view of the bytes).
    pub fn response_text(&self) -> Option<std::borrow::Cow<'_, str>> {
        self.response_body.as_deref().map(String::from_utf8_lossy)
    }
}

/// A rebuilt request body.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredBody {
    /// The exact bytes that were stored.
    pub bytes: Vec<u8>,
    /// The JSON value (`None` when the body was not JSON).
    pub value: Option<Value>,
}
