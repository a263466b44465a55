//! The session browser's reads: one summary row per request (position, time, model, dialect,
//! HTTP status and the stream's outcome class — so a failed or incomplete stream is flagged even
//! under HTTP 200 — tokens, duration, time to first event, bytes) in one query, and a session's
//! bodies as their content-addressed parts (each distinct item once), which the prefix analysis
//! interns without rebuilding a single body. The paged, searchable session list is
//! [`Store::list_sessions`] / [`Store::search_sessions`] (`read.rs`).

use std::collections::HashMap;

use rusqlite::params;
use serde::Serialize;
use serde_json::Value;

use super::codec;
use super::error::StoreResult;
use super::read::{MAX_TEXT, unpack_bytes};
use super::types::{Page, RecordedState};
use super::{Store, StoreError, body, pieces};
use crate::core::stream::{ErrorClass, UsageCounts};

/// How a request ended, as the browser flags it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "class", content = "detail")]
pub enum OutcomeClass {
    /// The stream completed.
    Completed,
    /// The stream reported a failure (`response.failed`, an error event); the error class.
    Failed(String),
    /// Stopped on purpose before it ended: Ctrl-C during `send`, Stop in the app, or the
    /// client went away from the proxy (recorded error class `cancelled` or `interrupted`).
    Interrupted,
    /// The stream ended without completing (`response.incomplete`, closed early, idle timeout).
    Incomplete,
    /// Events were recorded but no terminal one (still open when recording stopped).
    Open,
    /// The server answered with a non-2xx status (other than a WebSocket's 101) and no stream.
    Http(u16),
    /// Nothing came back (or nothing was recorded).
    None,
}

/// How a stored status reads: `HTTP 200`, `WS` for a WebSocket exchange (stored as 101,
/// Switching Protocols), `-` when no answer came.
pub fn status_label(status: Option<u16>) -> String {
    match status {
        Some(101) => "WS".to_string(),
        Some(code) => format!("HTTP {code}"),
        None => "-".to_string(),
    }
}

impl OutcomeClass {
    /// Classifies a stored request: its HTTP status and its outcome's state and error class
    /// (a request stopped on purpose, [`ErrorClass::is_interruption`], is interrupted).
    pub fn of(
        status: Option<u16>,
        state: Option<RecordedState>,
        error_class: Option<&ErrorClass>,
    ) -> Self {
        // 101 Switching Protocols is a WebSocket exchange: its outcome is what its frames said.
        if let Some(code) = status.filter(|s| !(200..300).contains(s) && *s != 101) {
            return Self::Http(code);
        }
        match (state, error_class) {
            (Some(RecordedState::Completed), _) => Self::Completed,
            (Some(RecordedState::Failed), Some(ErrorClass::Stream)) => Self::Incomplete,
            (Some(RecordedState::Failed), Some(class)) if class.is_interruption() => {
                Self::Interrupted
            }
            (Some(RecordedState::Failed), class) => {
                Self::Failed(class.map_or("failed", ErrorClass::as_str).to_string())
            }
            (Some(RecordedState::Open), _) => Self::Open,
            _ => Self::None,
        }
    }

    /// True for everything but a completed stream.
    pub fn is_problem(&self) -> bool {
        !matches!(self, Self::Completed)
    }

    /// Short text for the status column.
    pub fn label(&self) -> String {
        match self {
            Self::Completed => "completed".to_string(),
            Self::Failed(class) => format!("failed: {class}"),
            Self::Incomplete => "incomplete".to_string(),
            Self::Interrupted => "interrupted".to_string(),
            Self::Open => "open".to_string(),
            Self::Http(code) => format!("HTTP {code}"),
            Self::None => "no answer".to_string(),
        }
    }
}

/// One row of the session browser.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RequestRow {
    /// Request id.
    pub id: i64,
    /// Position in the session, from 0.
    pub position: i64,
    /// Start time, Unix microseconds.
    pub started_us: Option<i64>,
    /// Model slug.
    pub model: Option<String>,
    /// `standard` / `lite`.
    pub dialect: Option<String>,
    /// HTTP status.
    pub status: Option<u16>,
    /// How the stream ended.
    pub outcome: OutcomeClass,
    /// The failure message, when it failed.
    pub error_message: Option<String>,
    /// `usage.input_tokens` the server reported.
    pub input_tokens: Option<u64>,
    /// `usage.input_tokens_details.cached_tokens` the server reported.
    pub cached_tokens: Option<u64>,
    /// `usage.output_tokens`.
    pub output_tokens: Option<u64>,
    /// Microseconds to the end of the response.
    pub total_us: Option<i64>,
    /// Microseconds to the first event.
    pub first_event_us: Option<i64>,
    /// Body size in bytes.
    pub body_bytes: u64,
    /// Raw events recorded.
    pub events: u64,
    /// For a request imported from a Codex rollout, its `extra.rollout` (what was recorded and
    /// what reconstructed; unknown lines by number and type only), else None.
    pub rollout: Option<Value>,
    /// What the recording of this request lost ("recording incomplete: 12 events lost (…)"),
    /// when it lost anything.
    pub recording_gap: Option<String>,
}

impl RequestRow {
    /// Input tokens the server did not read from its cache.
    pub fn uncached_tokens(&self) -> Option<u64> {
        Some(
            self.input_tokens?
                .saturating_sub(self.cached_tokens.unwrap_or(0)),
        )
    }
}

/// A session's bodies as stored: each distinct item and field set once, each request as
/// references to them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionParts {
    /// Distinct input items of the session: item id → compact JSON.
    pub items: HashMap<i64, String>,
    /// Distinct non-input field sets: fields id → compact JSON object.
    pub fields: HashMap<i64, String>,
    /// The requests in order.
    pub requests: Vec<StoredParts>,
    /// Output items (compact JSON, as the server sent them) of the responses a later request
    /// continues (`previous_response_id`), by request id.
    pub outputs: HashMap<i64, Vec<String>>,
}

/// One request of [`SessionParts`].
#[derive(Debug, Clone, PartialEq)]
pub struct StoredParts {
    /// Request id.
    pub id: i64,
    /// Its field set (None: the body is kept verbatim only).
    pub fields_id: Option<i64>,
    /// Its input items, in order.
    pub items: Vec<i64>,
    /// The exact bytes, when the parts would not rebuild them.
    pub verbatim: Option<Vec<u8>>,
    /// Start time, Unix microseconds.
    pub started_us: Option<i64>,
    /// Microseconds to the end of the response.
    pub total_us: Option<i64>,
    /// The outcome's usage (JSON), when recorded.
    pub usage: Option<Value>,
    /// The id of its response, when recorded.
    pub response_id: Option<String>,
    /// Parts of the request its source did not record (a Codex rollout's `tools` and
    /// `client_metadata`, from `extra.rollout.not_recorded`).
    pub not_recorded: Vec<String>,
}

/// Input, cached and output tokens of a stored usage, in any shape ([`UsageCounts`]).
pub fn usage_tokens(usage: &Value) -> (Option<u64>, Option<u64>, Option<u64>) {
    UsageCounts::from_value(usage).map_or((None, None, None), |u| u.input_cached_output())
}

fn page_params(page: Page) -> (i64, i64) {
    (
        i64::try_from(page.limit).unwrap_or(i64::MAX),
        i64::try_from(page.offset).unwrap_or(i64::MAX),
    )
}

/// A stored (packed) usage as JSON; `None` when absent or unreadable (the counts are then
/// unknown, nothing more).
pub(super) fn parse_usage(packed: Option<Vec<u8>>) -> Option<Value> {
    let text = codec::unpack(&packed?, MAX_TEXT).ok()?;
    serde_json::from_slice(&text).ok()
}

/// A row's `extra.rollout`, without the unknown lines' contents (they stay in the store).
fn rollout_provenance(text: Option<String>) -> Option<Value> {
    let mut value: Value = serde_json::from_str(&text?).ok()?;
    if let Some(Value::Array(unknown)) = value.get_mut("unknown_lines") {
        for line in unknown.iter_mut() {
            if let Some(map) = line.as_object_mut() {
                map.shift_remove("value");
            }
        }
    }
    value.is_object().then_some(value)
}

impl Store {
    /// A session's requests as browser rows, in order (one query).
    pub fn request_rows(&self, session_id: i64, page: Page) -> StoreResult<Vec<RequestRow>> {
        self.session(session_id)?;
        let (limit, offset) = page_params(page);
        let mut stmt = self.conn.prepare_cached(
            "SELECT r.id, r.position, r.started_us, r.model, r.dialect, r.status, r.body_bytes,
                    r.total_us, o.state, o.error_class, o.error_message, o.usage, o.events,
                    o.first_event_us, o.total_us, json_extract(r.extra, '$.rollout'),
                    o.lost_events, o.lost_reason
             FROM requests r LEFT JOIN outcomes o ON o.request_id = r.id
             WHERE r.session_id = ?1 ORDER BY r.position LIMIT ?2 OFFSET ?3",
        )?;
        let rows = stmt.query_map(params![session_id, limit, offset], |row| {
            let status: Option<u16> = row.get(5)?;
            // A state this build does not know is shown as no answer, as before it was typed.
            let state: Option<RecordedState> = row
                .get::<_, Option<String>>(8)?
                .and_then(|state| state.parse().ok());
            let error_class: Option<ErrorClass> = row.get(9)?;
            let usage = parse_usage(row.get(11)?);
            let (input_tokens, cached_tokens, output_tokens) =
                usage.as_ref().map_or((None, None, None), usage_tokens);
            let request_total: Option<i64> = row.get(7)?;
            let outcome_total: Option<i64> = row.get(14)?;
            Ok(RequestRow {
                id: row.get(0)?,
                position: row.get(1)?,
                started_us: row.get(2)?,
                model: row.get(3)?,
                dialect: row.get(4)?,
                status,
                outcome: OutcomeClass::of(status, state, error_class.as_ref()),
                error_message: row.get(10)?,
                input_tokens,
                cached_tokens,
                output_tokens,
                total_us: request_total.or(outcome_total),
                first_event_us: row.get(13)?,
                body_bytes: u64::try_from(row.get::<_, i64>(6)?).unwrap_or(0),
                events: u64::try_from(row.get::<_, Option<i64>>(12)?.unwrap_or(0)).unwrap_or(0),
                rollout: rollout_provenance(row.get(15)?),
                recording_gap: crate::store::OutcomeRecord {
                    lost_events: u64::try_from(row.get::<_, Option<i64>>(16)?.unwrap_or(0))
                        .unwrap_or(0),
                    lost_reason: row.get(17)?,
                    ..crate::store::OutcomeRecord::default()
                }
                .recording_gap(),
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// A session's bodies as content-addressed parts, each distinct item read once. A body's
    /// non-input pieces give a field set under a negative id of this answer's own (equal sets
    /// share it); a body that is not a JSON object, or whose input was not split, comes back as
    /// its exact bytes in `verbatim`.
    pub fn session_parts(&self, session_id: i64) -> StoreResult<SessionParts> {
        self.session(session_id)?;
        let mut parts = SessionParts::default();
        let mut cut_bodies = Vec::new();
        let mut stmt = self.conn.prepare_cached(
            "SELECT r.id, r.input_items, r.body_verbatim, r.started_us, r.total_us,
                    o.usage, r.body_pieces, o.response_id,
                    CASE WHEN json_valid(r.extra) THEN json_extract(r.extra, '$.rollout.not_recorded') END
             FROM requests r LEFT JOIN outcomes o ON o.request_id = r.id
             WHERE r.session_id = ?1 ORDER BY r.position",
        )?;
        let mut rows = stmt.query([session_id])?;
        while let Some(row) = rows.next()? {
            let id: i64 = row.get(0)?;
            let list: Vec<u8> = row.get(1)?;
            let items = body::read_varints(&list)
                .map_err(StoreError::Damaged)?
                .into_iter()
                .map(|id| i64::try_from(id).unwrap_or(i64::MAX))
                .collect();
            let verbatim = row
                .get::<_, Option<Vec<u8>>>(2)?
                .map(|packed| unpack_bytes(&packed, &format!("body of request {id}")))
                .transpose()?;
            if let Some(pieces) = row.get::<_, Option<Vec<u8>>>(6)? {
                cut_bodies.push((parts.requests.len(), pieces));
            }
            parts.requests.push(StoredParts {
                id,
                fields_id: None,
                items,
                verbatim,
                started_us: row.get(3)?,
                total_us: row.get(4)?,
                usage: parse_usage(row.get(5)?),
                response_id: row.get(7)?,
                not_recorded: row
                    .get::<_, Option<String>>(8)?
                    .and_then(|json| serde_json::from_str::<Vec<String>>(&json).ok())
                    .unwrap_or_default(),
            });
        }
        for request in &parts.requests {
            for id in &request.items {
                if !parts.items.contains_key(id) {
                    parts.items.insert(*id, self.text(*id)?);
                }
            }
        }
        // Equal piece lists give equal heads: each distinct list is joined and parsed once.
        let mut by_list: HashMap<Vec<u8>, Result<i64, Vec<u8>>> = HashMap::new();
        let mut heads: HashMap<String, i64> = HashMap::new();
        for (index, list) in cut_bodies {
            let request = &mut parts.requests[index];
            if let Some(known) = by_list.get(&list) {
                match known {
                    Ok(id) => request.fields_id = Some(*id),
                    Err(bytes) => request.verbatim = Some(bytes.clone()),
                }
                continue;
            }
            let texts = self.texts(&list)?;
            let no_items: [String; 0] = [];
            let bytes = pieces::join(&texts, &no_items);
            if !texts.iter().any(Option::is_none) {
                request.verbatim = Some(bytes.clone());
                by_list.insert(list, Err(bytes));
                continue;
            }
            let mut head: crate::core::json::JsonMap = serde_json::from_slice(&bytes)
                .map_err(|e| StoreError::Damaged(format!("request {}: {e}", request.id)))?;
            head.shift_remove("input");
            let json = Value::Object(head).to_string();
            let next = -1 - i64::try_from(heads.len()).unwrap_or(0);
            let id = *heads.entry(json.clone()).or_insert(next);
            parts.fields.entry(id).or_insert(json);
            request.fields_id = Some(id);
            by_list.insert(list, Ok(id));
        }
        self.load_continued_outputs(&mut parts)?;
        Ok(parts)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::store::RecordedState::{Completed, Failed, Open};

    #[test]
    fn outcome_classes_flag_failures_under_http_200() {
        let cases = [
            ((Some(200), Some(Completed), None), OutcomeClass::Completed),
            (
                (Some(200), Some(Failed), Some(ErrorClass::Retryable)),
                OutcomeClass::Failed("retryable".to_string()),
            ),
            (
                (Some(200), Some(Failed), Some(ErrorClass::Stream)),
                OutcomeClass::Incomplete,
            ),
            ((Some(200), Some(Open), None), OutcomeClass::Open),
            (
                (Some(200), Some(Failed), Some(ErrorClass::Cancelled)),
                OutcomeClass::Interrupted,
            ),
            (
                (None, Some(Failed), Some(ErrorClass::Interrupted)),
                OutcomeClass::Interrupted,
            ),
            (
                (
                    Some(200),
                    Some(Failed),
                    Some(ErrorClass::Unknown("http".to_string())),
                ),
                OutcomeClass::Failed("http".to_string()),
            ),
            (
                (Some(200), Some(Failed), None),
                OutcomeClass::Failed("failed".to_string()),
            ),
            (
                (Some(429), Some(Failed), Some(ErrorClass::Retryable)),
                OutcomeClass::Http(429),
            ),
            ((None, None, None), OutcomeClass::None),
        ];
        let got: Vec<_> = cases
            .iter()
            .map(|((status, state, class), _)| OutcomeClass::of(*status, *state, class.as_ref()))
            .collect();
        let want: Vec<_> = cases.into_iter().map(|(_, want)| want).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn usage_tokens_read_both_stored_shapes_and_tolerate_missing_fields() {
        let reader =
            json!({"input_tokens": 1912, "cached_input_tokens": 1792, "output_tokens": 12});
        let api = json!({"input_tokens": 1912, "input_tokens_details": {"cached_tokens": 1792},
            "output_tokens": 12});
        assert_eq!(usage_tokens(&reader), (Some(1912), Some(1792), Some(12)));
        assert_eq!(usage_tokens(&api), (Some(1912), Some(1792), Some(12)));
        assert_eq!(
            usage_tokens(&json!({"input_tokens": "many"})),
            (None, None, None)
        );
    }
}
