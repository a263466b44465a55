//! Reads for the UI and the CLI: paged session and request lists, search by name, model and
//! text anywhere in the stored bodies, and the lazy parts — a request's headers, its rebuilt body, its events, its outcome.

use std::time::Duration;

use rusqlite::{OptionalExtension as _, Row, params};
use serde_json::Value;

use super::error::StoreResult;
use super::types::{
    OutcomeRecord, Page, RequestRecord, RequestSummary, SessionSummary, StoredBody,
};
use super::{Store, StoreError};
use super::{body, pieces};
use crate::core::stream::RawEvent;

fn limit(page: Page) -> (i64, i64) {
    (
        i64::try_from(page.limit).unwrap_or(i64::MAX),
        i64::try_from(page.offset).unwrap_or(i64::MAX),
    )
}

/// A session row with its counts, in one pass over its requests: `[requests, interrupted
/// (error classes `summary::INTERRUPTION_CLASSES`), without an outcome]` as a JSON array.
const SESSION_COLUMNS: &str = "s.id, s.name, s.source, s.provider, s.model, s.created_us, \
    (SELECT json_array(count(*), \
        count(*) FILTER (WHERE o.state = 'failed' AND o.error_class IN ('cancelled', 'interrupted')), \
        count(*) - count(o.request_id)) \
     FROM requests r LEFT JOIN outcomes o ON o.request_id = r.id WHERE r.session_id = s.id)";

fn session_row(row: &Row<'_>) -> rusqlite::Result<SessionSummary> {
    let counts: String = row.get(6)?;
    let [requests, interrupted, unanswered] =
        serde_json::from_str::<[i64; 3]>(&counts).map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(6, rusqlite::types::Type::Text, Box::new(e))
        })?;
    Ok(SessionSummary {
        id: row.get(0)?,
        name: row.get(1)?,
        source: row.get(2)?,
        provider: row.get(3)?,
        model: row.get(4)?,
        requests,
        created_us: row.get(5)?,
        interrupted,
        unanswered,
    })
}

const REQUEST_COLUMNS: &str = "r.id, r.session_id, r.position, r.model, r.dialect, r.rules, \
    r.provider, r.method, r.url, r.body_bytes, r.status, r.started_us, r.wait_us, r.total_us, \
    (SELECT state FROM outcomes o WHERE o.request_id = r.id)";

fn request_row(row: &Row<'_>) -> rusqlite::Result<RequestSummary> {
    Ok(RequestSummary {
        id: row.get(0)?,
        session_id: row.get(1)?,
        position: row.get(2)?,
        model: row.get(3)?,
        dialect: row.get(4)?,
        rules: row.get(5)?,
        provider: row.get(6)?,
        method: row.get(7)?,
        url: row.get(8)?,
        body_bytes: row.get(9)?,
        status: row.get(10)?,
        started_us: row.get(11)?,
        wait_us: row.get(12)?,
        total_us: row.get(13)?,
        state: row.get(14)?,
    })
}

fn headers(json: Option<String>) -> StoreResult<Vec<(String, String)>> {
    match json {
        None => Ok(Vec::new()),
        Some(text) => serde_json::from_str(&text)
            .map_err(|e| StoreError::Damaged(format!("stored headers: {e}"))),
    }
}

/// Bytes of a verbatim body (one that is not a JSON object) that a search reads.
pub const VERBATIM_SEARCHED: usize = 4 << 20;

/// `text` as it is spelled inside a JSON string, when that differs from `text`.
fn json_escaped(text: &str) -> Option<String> {
    let quoted = serde_json::to_string(text).ok()?;
    let inner = quoted.get(1..quoted.len().saturating_sub(1))?;
    (inner != text).then(|| inner.to_string())
}

/// Escapes `%`, `_` and `\` for a LIKE pattern with `ESCAPE '\'`.
fn like_pattern(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('%');
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('%');
    out
}

impl Store {
    /// Sessions, newest first.
    pub fn list_sessions(&self, page: Page) -> StoreResult<Vec<SessionSummary>> {
        let (limit, offset) = limit(page);
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {SESSION_COLUMNS} FROM sessions s ORDER BY s.created_us DESC, s.id DESC LIMIT ?1 OFFSET ?2"
        ))?;
        let rows = stmt.query_map(params![limit, offset], session_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Sessions whose name, model, an output text or any stored part of a request body
    /// contains `text` (case-insensitive for ASCII), newest first. The body is searched where it
    /// is stored: input items, the content-addressed pieces of schema 3 (every top-level value —
    /// `tools`, `instructions`, `prompt_cache_key`, …), the fields of older rows, and the first
    /// [`VERBATIM_SEARCHED`] bytes of a body kept verbatim. Bodies hold JSON, so `text` is also
    /// looked for as it appears inside a JSON string (`"` as `\"`, a line break as `\n`). The
    /// scan walks sessions newest first and stops once the page is full.
    pub fn search_sessions(&self, text: &str, page: Page) -> StoreResult<Vec<SessionSummary>> {
        let (limit, offset) = limit(page);
        let pattern = like_pattern(text);
        let escaped = json_escaped(text).map(|e| like_pattern(&e));
        // `col` matches the plain text, or its JSON-escaped spelling where that differs.
        let matches = |col: &str| match escaped {
            Some(_) => format!("({col} LIKE ?1 ESCAPE '\\' OR {col} LIKE ?4 ESCAPE '\\')"),
            None => format!("{col} LIKE ?1 ESCAPE '\\'"),
        };
        let sql = format!(
            "SELECT {SESSION_COLUMNS} FROM sessions s
             WHERE s.name LIKE ?1 ESCAPE '\\' OR s.model LIKE ?1 ESCAPE '\\'
                OR EXISTS (SELECT 1 FROM requests r WHERE r.session_id = s.id AND r.model LIKE ?1 ESCAPE '\\')
                OR EXISTS (SELECT 1 FROM requests r JOIN outcomes o ON o.request_id = r.id
                           WHERE r.session_id = s.id AND o.text LIKE ?1 ESCAPE '\\')
                OR EXISTS (SELECT 1 FROM session_items si JOIN items i ON i.id = si.item_id
                           WHERE si.session_id = s.id AND {items})
                OR EXISTS (SELECT 1 FROM session_pieces sp JOIN pieces p ON p.id = sp.piece_id
                           WHERE sp.session_id = s.id AND {pieces})
                OR EXISTS (SELECT 1 FROM requests r JOIN fields f ON f.id = r.fields_id
                           WHERE r.session_id = s.id AND {fields})
                OR EXISTS (SELECT 1 FROM requests r
                           WHERE r.session_id = s.id AND r.body_verbatim IS NOT NULL
                             AND {verbatim})
             ORDER BY s.created_us DESC, s.id DESC LIMIT ?2 OFFSET ?3",
            items = matches("i.json"),
            pieces = matches("p.text"),
            fields = matches("f.json"),
            verbatim = matches(&format!(
                "CAST(substr(r.body_verbatim, 1, {VERBATIM_SEARCHED}) AS TEXT)"
            )),
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let rows = match &escaped {
            Some(escaped) => {
                stmt.query_map(params![pattern, limit, offset, escaped], session_row)?
            }
            None => stmt.query_map(params![pattern, limit, offset], session_row)?,
        };
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One session.
    pub fn session(&self, session_id: i64) -> StoreResult<SessionSummary> {
        self.conn
            .query_row(
                &format!("SELECT {SESSION_COLUMNS} FROM sessions s WHERE s.id = ?1"),
                [session_id],
                session_row,
            )
            .optional()?
            .ok_or(StoreError::NoSession(session_id))
    }

    /// A session's requests in order.
    pub fn requests(&self, session_id: i64, page: Page) -> StoreResult<Vec<RequestSummary>> {
        self.session(session_id)?;
        let (limit, offset) = limit(page);
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {REQUEST_COLUMNS} FROM requests r WHERE r.session_id = ?1 ORDER BY r.position LIMIT ?2 OFFSET ?3"
        ))?;
        let rows = stmt.query_map(params![session_id, limit, offset], request_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// A request's headers, extras and response metadata (not its body or events).
    pub fn request(&self, request_id: i64) -> StoreResult<RequestRecord> {
        let found = self
            .conn
            .query_row(
                &format!(
                    "SELECT {REQUEST_COLUMNS}, r.headers, r.extra, r.response_headers, r.response_body FROM requests r WHERE r.id = ?1"
                ),
                [request_id],
                |row| {
                    Ok((
                        request_row(row)?,
                        row.get::<_, Option<String>>(15)?,
                        row.get::<_, Option<String>>(16)?,
                        row.get::<_, Option<String>>(17)?,
                        row.get::<_, Option<String>>(18)?,
                    ))
                },
            )
            .optional()?;
        let Some((summary, request_headers, extra, response_headers, response_body)) = found else {
            return Err(StoreError::NoRequest(request_id));
        };
        Ok(RequestRecord {
            summary,
            headers: headers(request_headers)?,
            extra: extra.and_then(|e| serde_json::from_str(&e).ok()),
            response_headers: headers(response_headers)?,
            response_body,
        })
    }

    /// Rebuilds a stored body: the same bytes, and the same JSON value (keys in the same order).
    pub fn body(&self, request_id: i64) -> StoreResult<StoredBody> {
        let row = self
            .conn
            .query_row(
                "SELECT f.json, r.input_at, r.input_items, r.body_verbatim, r.body_pieces
                 FROM requests r LEFT JOIN fields f ON f.id = r.fields_id WHERE r.id = ?1",
                [request_id],
                |row| {
                    Ok((
                        row.get::<_, Option<String>>(0)?,
                        row.get::<_, Option<i64>>(1)?,
                        row.get::<_, Vec<u8>>(2)?,
                        row.get::<_, Option<Vec<u8>>>(3)?,
                        row.get::<_, Option<Vec<u8>>>(4)?,
                    ))
                },
            )
            .optional()?;
        let Some((fields, input_at, list, verbatim, piece_list)) = row else {
            return Err(StoreError::NoRequest(request_id));
        };
        if let Some(bytes) = verbatim {
            let value = serde_json::from_slice(&bytes).ok();
            return Ok(StoredBody { bytes, value });
        }
        let items = self.item_texts(&list)?;
        if let Some(piece_list) = piece_list {
            let bytes = pieces::join(&self.piece_texts(&piece_list)?, &items);
            // The bytes are whole; a body serde_json cannot read as a value (a lone surrogate
            // escape, `"\udc00"`, found by fuzz/har_import) is kept and shown as bytes, as a
            // verbatim body is.
            let value = serde_json::from_slice(&bytes).ok();
            return Ok(StoredBody { bytes, value });
        }
        let input_at = input_at.map(|i| usize::try_from(i).unwrap_or(usize::MAX));
        let value =
            body::rebuild(fields.as_deref(), input_at, &items).map_err(StoreError::Damaged)?;
        let bytes = serde_json::to_vec(&value).map_err(|e| StoreError::Damaged(e.to_string()))?;
        Ok(StoredBody {
            bytes,
            value: Some(value),
        })
    }

    /// The texts of a stored item list (LEB128 item ids), in order.
    fn item_texts(&self, list: &[u8]) -> StoreResult<Vec<String>> {
        let ids = body::read_varints(list).map_err(StoreError::Damaged)?;
        let mut stmt = self
            .conn
            .prepare_cached("SELECT json FROM items WHERE id = ?1")?;
        let mut items = Vec::with_capacity(ids.len());
        for id in ids {
            let id = i64::try_from(id).unwrap_or(i64::MAX);
            let json: Option<String> = stmt.query_row([id], |r| r.get(0)).optional()?;
            items.push(json.ok_or_else(|| StoreError::Damaged(format!("missing item {id}")))?);
        }
        Ok(items)
    }

    /// The texts of a stored piece list (LEB128 piece ids), in order; `None` for the input
    /// array's place (id 0).
    pub(super) fn piece_texts(&self, list: &[u8]) -> StoreResult<Vec<Option<String>>> {
        let ids = body::read_varints(list).map_err(StoreError::Damaged)?;
        let mut stmt = self
            .conn
            .prepare_cached("SELECT text FROM pieces WHERE id = ?1")?;
        let mut texts = Vec::with_capacity(ids.len());
        for id in ids {
            if id == 0 {
                texts.push(None);
                continue;
            }
            let id = i64::try_from(id).unwrap_or(i64::MAX);
            let text: Option<String> = stmt.query_row([id], |r| r.get(0)).optional()?;
            texts.push(Some(text.ok_or_else(|| {
                StoreError::Damaged(format!("missing piece {id}"))
            })?));
        }
        Ok(texts)
    }

    /// A request's raw events in order.
    pub fn events(&self, request_id: i64, page: Page) -> StoreResult<Vec<RawEvent>> {
        let (limit, offset) = limit(page);
        let mut stmt = self.conn.prepare_cached(
            "SELECT seq, received_us, event, data FROM events WHERE request_id = ?1 ORDER BY seq LIMIT ?2 OFFSET ?3",
        )?;
        let rows = stmt.query_map(params![request_id, limit, offset], |row| {
            Ok(RawEvent {
                seq: u64::try_from(row.get::<_, i64>(0)?).unwrap_or(0),
                received_at: Duration::from_micros(
                    u64::try_from(row.get::<_, i64>(1)?).unwrap_or(0),
                ),
                event: row.get(2)?,
                data: row.get(3)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Number of raw events stored for a request.
    pub fn event_count(&self, request_id: i64) -> StoreResult<u64> {
        let n: i64 = self.conn.query_row(
            "SELECT count(*) FROM events WHERE request_id = ?1",
            [request_id],
            |r| r.get(0),
        )?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    /// A request's outcome, when recorded.
    pub fn outcome(&self, request_id: i64) -> StoreResult<Option<OutcomeRecord>> {
        Ok(self
            .conn
            .query_row(
                "SELECT state, response_id, error_class, error_message, usage, text, server_model, events, first_event_us, first_text_us, total_us
                 FROM outcomes WHERE request_id = ?1",
                [request_id],
                |row| {
                    Ok(OutcomeRecord {
                        state: row.get(0)?,
                        response_id: row.get(1)?,
                        error_class: row.get(2)?,
                        error_message: row.get(3)?,
                        usage: row
                            .get::<_, Option<String>>(4)?
                            .and_then(|u| serde_json::from_str::<Value>(&u).ok()),
                        text: row.get::<_, Option<String>>(5)?.unwrap_or_default(),
                        server_model: row.get(6)?,
                        events: u64::try_from(row.get::<_, i64>(7)?).unwrap_or(0),
                        first_event_us: row.get(8)?,
                        first_text_us: row.get(9)?,
                        total_us: row.get(10)?,
                    })
                },
            )
            .optional()?)
    }
}
