//! The request inspector's state and jobs: the selected request of the open session is read on
//! a worker — its stored headers, exact body (pretty-printed once, its line offsets computed
//! once, so a 2 MB body is never re-laid out per frame: the view draws only visible lines),
//! response headers and outcome, and its recorded events — then its body tokens are counted in a
//! second report (the tokenizer's tables load on first use); selecting another request cancels
//! that count, which otherwise held both cores while the next request was read. The row actions
//! (Copy as cURL, Copy body, Export body / HAR) read what they need on a worker too; copied
//! text reaches the clipboard through [`InspectState::clipboard`], which the UI hands to egui
//! once per generation.

use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::SessionEvent;
use crate::app::error::AppResult;
use crate::app::event::AppEvent;
use crate::app::jobs::JobId;
use crate::app::state::AppState;
use crate::core::export::curl_for_recorded;
use crate::core::prefix::Tokenizer;
use crate::core::pretty::{PrettyText, pretty};
use crate::core::stream::{RawEvent, UsageCounts};
use crate::store::seed::open_seeded;
use crate::store::{OutcomeRecord, Page, RequestRecord, Store};

/// Events the inspector reads of one request (a longer recording says how many it has).
pub const MAX_INSPECTED_EVENTS: u64 = 20_000;

/// One stored request as the inspector shows it.
#[derive(Debug, Clone)]
pub struct Inspected {
    /// The session.
    pub session: i64,
    /// The request id.
    pub request: i64,
    /// Headers, extras and response metadata.
    pub record: RequestRecord,
    /// The exact body bytes.
    pub bytes: Vec<u8>,
    /// The body as JSON (None: not JSON).
    pub value: Option<Value>,
    /// The body as shown in the text view: pretty-printed JSON, or the bytes as text.
    pub text: String,
    /// Byte ranges of `text`'s lines (computed once).
    pub lines: Vec<Range<usize>>,
    /// The outcome, when recorded.
    pub outcome: Option<OutcomeRecord>,
    /// The usage the outcome recorded.
    pub usage: Option<UsageCounts>,
    /// The recorded events (at most [`MAX_INSPECTED_EVENTS`]).
    pub events: Vec<RawEvent>,
    /// How many events are stored.
    pub event_count: u64,
}

/// Bytes of one line the text view lays out (a longer line — a long string value — is cut
/// there, with how much was left out; Raw bytes shows all of it).
pub const MAX_LINE_BYTES: usize = 2_000;

impl Inspected {
    /// Line `i` of the text view.
    pub fn line(&self, i: usize) -> &str {
        self.lines
            .get(i)
            .and_then(|r| self.text.get(r.clone()))
            .unwrap_or("")
    }

    /// Line `i` as the text view shows it: cut after [`MAX_LINE_BYTES`] (at a character
    /// boundary), and the number of bytes left out.
    pub fn shown_line(&self, i: usize) -> (&str, usize) {
        let line = self.line(i);
        if line.len() <= MAX_LINE_BYTES {
            return (line, 0);
        }
        let mut end = MAX_LINE_BYTES;
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        (&line[..end], line.len() - end)
    }
}

/// What the inspector shows and the row actions' clipboard.
#[derive(Debug, Clone, Default)]
pub struct InspectState {
    /// Which read is the latest (stale results are dropped).
    pub generation: crate::app::jobs::Generation,
    /// The request being shown or read.
    pub request: Option<i64>,
    /// The table row's event count when the read started (a row that gains events is read
    /// again).
    pub row_events: Option<u64>,
    /// A read is under way.
    pub loading: bool,
    /// The worker reading (then counting) the request shown: cancelled when another request
    /// is selected, so a count nobody waits for does not hold the cores.
    pub job: Option<JobId>,
    /// The request read.
    pub result: Option<Arc<Inspected>>,
    /// Its body's o200k tokens, once counted.
    pub tokens: Option<u64>,
    /// Why the last read or row action failed.
    pub error: Option<String>,
    /// Text to put on the clipboard, with a generation the UI copies once.
    pub clipboard: Option<(u64, String)>,
    /// What the last row action did (`Copied the body (1,234 bytes)`).
    pub note: Option<String>,
}

/// A row action that reads the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyKind {
    /// A `curl` command (key as `$OPENAI_API_KEY`, the exact body).
    Curl,
    /// The exact body bytes.
    Body,
}

fn open_store(path: &Path) -> AppResult<Store> {
    Ok(open_seeded(path)?)
}

/// Line ranges of `text`.
fn line_ranges(text: &str) -> Vec<Range<usize>> {
    let mut lines = Vec::new();
    let mut start = 0;
    for (i, b) in text.bytes().enumerate() {
        if b == b'\n' {
            lines.push(start..i);
            start = i + 1;
        }
    }
    lines.push(start..text.len());
    lines
}

/// Reads request `request` of `session` for the inspector (run on a worker; also the bench's
/// measure).
pub fn read_inspected(store: &Store, session: i64, request: i64) -> AppResult<Inspected> {
    let record = store.request(request)?;
    let body = store.body(request)?;
    // JSON is re-indented from its bytes with every token as sent (serde_json would rewrite
    // escapes and numbers and keep one of a repeated key), in one pass that also finds the
    // lines; anything else is shown as text.
    let (text, lines) = match body.value.as_ref().and_then(|_| pretty(&body.bytes)) {
        Some(PrettyText { text, lines }) => (text, lines),
        None => {
            let text = match &body.value {
                Some(value) => serde_json::to_string_pretty(value)?,
                None => String::from_utf8_lossy(&body.bytes).into_owned(),
            };
            let lines = line_ranges(&text);
            (text, lines)
        }
    };
    let outcome = store.outcome(request)?;
    let usage = outcome
        .as_ref()
        .and_then(|o| o.usage.as_ref())
        .and_then(UsageCounts::from_value);
    let event_count = store.event_count(request)?;
    let events = store.events(request, Page::first(MAX_INSPECTED_EVENTS))?;
    Ok(Inspected {
        session,
        request,
        record,
        bytes: body.bytes,
        value: body.value,
        text,
        lines,
        outcome,
        usage,
        events,
        event_count,
    })
}

/// Reads the selected request when the inspector does not show it yet.
pub fn ensure(state: &mut AppState) {
    let (Some(session), Some(index)) = (state.sessions.open, state.browser.selected) else {
        return;
    };
    let Some(row) = state.sessions.rows.get(index) else {
        return;
    };
    let (request, events) = (row.id, row.events);
    let Some(path) = state.sessions.db_path.clone() else {
        return;
    };
    start_read(
        &mut state.workers,
        &mut state.browser.inspect,
        path,
        (session, request, Some(events)),
        |generation, report| {
            AppEvent::Sessions(match report {
                InspectReport::Read(result) => SessionEvent::Inspected { generation, result },
                InspectReport::Tokens(tokens) => SessionEvent::InspectTokens { generation, tokens },
            })
        },
    );
}

/// What an inspector's read reports: the request read, then its body's tokens.
#[derive(Debug)]
pub enum InspectReport {
    /// The request was read (or why not).
    Read(AppResult<Arc<Inspected>>),
    /// Its body's o200k tokens were counted.
    Tokens(u64),
}

/// Reads `(session, request)` for `inspect` on a worker when it does not show it yet (or shows
/// it with fewer events than `events`, the row's count: it was still streaming), cancelling the
/// read (and token count) of the request shown before. Reports go through `wrap` with the read's
/// generation. Used by the Sessions view's inspector and the Traffic view's.
pub fn start_read(
    workers: &mut crate::app::jobs::Workers,
    inspect: &mut InspectState,
    path: std::path::PathBuf,
    (session, request, events): (i64, i64, Option<u64>),
    wrap: fn(u64, InspectReport) -> AppEvent,
) {
    // The same request is read again once it gained events (it was still streaming).
    if inspect.request == Some(request) && inspect.row_events == events {
        return;
    }
    if let Some(job) = inspect.job.take() {
        workers.cancel(job);
    }
    let generation = inspect.generation.bump();
    inspect.request = Some(request);
    inspect.row_events = events;
    inspect.loading = true;
    inspect.tokens = None;
    inspect.error = None;
    let spawned = workers.spawn("inspect", move |ctx| {
        let result = open_store(&path)
            .and_then(|store| read_inspected(&store, session, request))
            .map(Arc::new);
        // Tokens of the exact bytes (what the model reads), not the pretty-printed text.
        let counted = result.as_ref().ok().filter(|i| i.value.is_some()).cloned();
        if !ctx.report(wrap(generation, InspectReport::Read(result))) {
            return;
        }
        let Some(found) = counted.filter(|i| !i.bytes.is_empty()) else {
            return;
        };
        let text = String::from_utf8_lossy(&found.bytes);
        // Stops between segments once another request is selected.
        if let Some(tokens) = Tokenizer::o200k().count_unless(&text, || ctx.is_cancelled()) {
            ctx.report(wrap(generation, InspectReport::Tokens(tokens)));
        }
    });
    match spawned {
        Ok(job) => inspect.job = Some(job),
        Err(e) => {
            inspect.loading = false;
            inspect.error = Some(e);
        }
    }
}

/// The open session closed or changed: the inspector forgets its request.
pub fn clear(inspect: &mut InspectState) {
    inspect.generation.bump();
    inspect.request = None;
    inspect.row_events = None;
    inspect.loading = false;
    inspect.result = None;
    inspect.tokens = None;
    inspect.error = None;
}

/// The text a copy of `kind` puts on the clipboard for stored request `request`.
pub fn copy_text(store: &Store, request: i64, kind: CopyKind) -> AppResult<String> {
    let body = store.body(request)?;
    match kind {
        CopyKind::Body => Ok(String::from_utf8_lossy(&body.bytes).into_owned()),
        CopyKind::Curl => {
            let record = store.request(request)?;
            Ok(curl_for_recorded(
                &record.summary.method,
                &record.summary.url,
                &record.headers,
                &body.bytes,
            ))
        }
    }
}

/// Copies request `index`'s curl command or body (read on a worker).
pub fn copy(state: &mut AppState, index: usize, kind: CopyKind) {
    let Some(row) = state.sessions.rows.get(index) else {
        return;
    };
    let request = row.id;
    let Some(path) = state.sessions.db_path.clone() else {
        return;
    };
    let spawned = state.workers.spawn("copy-request", move |ctx| {
        let result = open_store(&path).and_then(|store| copy_text(&store, request, kind));
        ctx.report(AppEvent::Sessions(SessionEvent::CopyReady { kind, result }));
    });
    if let Err(e) = spawned {
        state.browser.inspect.error = Some(e);
    }
}

/// Applies what a copy read.
pub fn copied(inspect: &mut InspectState, kind: CopyKind, result: AppResult<String>) {
    match result {
        Ok(text) => {
            let what = match kind {
                CopyKind::Curl => "Copied as cURL",
                CopyKind::Body => "Copied the body",
            };
            inspect.note = Some(format!(
                "{what} ({})",
                crate::core::stream::limits::human_size(text.len() as u64)
            ));
            let generation = inspect.clipboard.as_ref().map_or(0, |(g, _)| g + 1);
            inspect.clipboard = Some((generation, text));
        }
        Err(e) => inspect.error = Some(e.to_string()),
    }
}

/// Applies a finished read.
pub fn inspected(inspect: &mut InspectState, generation: u64, result: AppResult<Arc<Inspected>>) {
    if !inspect.generation.is_current(generation) {
        return;
    }
    inspect.loading = false;
    match result {
        Ok(found) => {
            inspect.result = Some(found);
            inspect.error = None;
        }
        Err(e) => {
            inspect.result = None;
            inspect.error = Some(e.to_string());
        }
    }
}
