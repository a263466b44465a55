//! Reads for the UI and the CLI: paged session and request lists, search by name, model and
//! text anywhere in the stored bodies, and the lazy parts — a request's headers, its rebuilt body, its events, its outcome.

use std::collections::HashSet;
use std::ops::ControlFlow;

use rusqlite::{OptionalExtension as _, Row, params};

use super::codec;
use super::error::StoreResult;
use super::event_chunks;
use super::types::{
    OutcomeRecord, Page, RequestRecord, RequestSummary, SessionSummary, StoredBody,
};
use super::{Store, StoreError};
use super::{body, pieces};
use crate::core::stream::RawEvent;

/// The most bytes one stored text (a body piece, a body kept verbatim, an error or JSON
/// answer's body, an outcome's text) may unpack to: 256 MiB, four times the largest request
/// body the proxy accepts by default, so nothing promptwire writes is refused, while a crafted frame that claims or
/// holds gigabytes is refused before it is allocated (the size its header states is checked
/// first, and decoding stops at it).
pub(super) const MAX_TEXT: usize = 256 << 20;

fn limit(page: Page) -> (i64, i64) {
    (
        i64::try_from(page.limit).unwrap_or(i64::MAX),
        i64::try_from(page.offset).unwrap_or(i64::MAX),
    )
}

/// A session row with its counts, in one pass over its requests: `[requests, interrupted
/// (error classes `summary::INTERRUPTION_CLASSES`), without an outcome, recorded incompletely]`
/// as a JSON array; then the agent it is (thread, parent thread, kind) and its parent's session.
pub(super) const SESSION_COLUMNS: &str = "s.id, s.name, s.source, s.provider, s.model, s.created_us, \
    (SELECT json_array(count(*), \
        count(*) FILTER (WHERE o.state = 'failed' AND o.error_class IN ('cancelled', 'interrupted')), \
        count(*) - count(o.request_id), \
        count(*) FILTER (WHERE o.lost_events > 0 OR o.lost_reason IS NOT NULL)) \
     FROM requests r LEFT JOIN outcomes o ON o.request_id = r.id WHERE r.session_id = s.id), \
    s.thread, s.parent_thread, s.agent_kind, \
    (SELECT p.id FROM sessions p WHERE p.thread = s.parent_thread AND p.id <> s.id \
     ORDER BY p.id LIMIT 1)";

pub(super) fn session_row(row: &Row<'_>) -> rusqlite::Result<SessionSummary> {
    let counts: String = row.get(6)?;
    let [requests, interrupted, unanswered, incomplete] = serde_json::from_str::<[i64; 4]>(&counts)
        .map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(6, rusqlite::types::Type::Text, Box::new(e))
        })?;
    let agent = super::links::agent_columns(row, 7)?;
    Ok(SessionSummary {
        agent,
        parent_session: row.get(10)?,
        id: row.get(0)?,
        name: row.get(1)?,
        source: row.get(2)?,
        provider: row.get(3)?,
        model: row.get(4)?,
        requests,
        created_us: row.get(5)?,
        interrupted,
        unanswered,
        incomplete,
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

/// Unpacks a packed column; damage is reported as `what`'s.
pub(super) fn unpack_bytes(packed: &[u8], what: &str) -> StoreResult<Vec<u8>> {
    codec::unpack(packed, MAX_TEXT).map_err(|e| StoreError::Damaged(format!("{what}: {e}")))
}

/// Unpacks a packed text column.
pub(super) fn unpack_text(packed: &[u8], what: &str) -> StoreResult<String> {
    codec::unpack_text(packed, MAX_TEXT).map_err(|e| StoreError::Damaged(format!("{what}: {e}")))
}

/// Visits the text ids the requests of `session` (every session: `None`) refer to — body
/// pieces, items, header lines — until `visit` breaks.
pub(super) fn scan_text_refs(
    conn: &rusqlite::Connection,
    session: Option<i64>,
    mut visit: impl FnMut(i64) -> ControlFlow<()>,
) -> StoreResult<()> {
    let sql = "SELECT body_pieces, input_items, headers, response_headers FROM requests";
    let mut stmt = match session {
        Some(_) => conn.prepare_cached(&format!("{sql} WHERE session_id = ?1"))?,
        None => conn.prepare_cached(sql)?,
    };
    let mut rows = match session {
        Some(id) => stmt.query([id])?,
        None => stmt.query([])?,
    };
    while let Some(row) = rows.next()? {
        for column in 0..4 {
            let Some(list) = row.get::<_, Option<Vec<u8>>>(column)? else {
                continue;
            };
            for id in body::read_varints(&list).map_err(StoreError::Damaged)? {
                let id = i64::try_from(id).unwrap_or(0);
                if id != 0 && visit(id).is_break() {
                    return Ok(());
                }
            }
        }
    }
    Ok(())
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
pub(super) fn like_pattern(text: &str) -> String {
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

    /// Sessions whose name, model, an output text or any stored text of a request contains
    /// `text` (case-insensitive for ASCII), newest first. The body is searched where it is
    /// stored: input items, the content-addressed pieces (every top-level value — `tools`,
    /// `instructions`, `prompt_cache_key`, …), header lines, and the first
    /// [`VERBATIM_SEARCHED`] bytes of a body kept verbatim (texts are unpacked by the SQL
    /// function `pw_text`, see `sql_functions`). Each stored text is unpacked and matched once,
    /// however many sessions share it; then the sessions are walked newest first, each checked
    /// against the matching texts, until the page is full. Bodies hold JSON, so `text` is also
    /// looked for as it appears inside a JSON string (`"` as `\"`, a line break as `\n`). The
    /// scan walks sessions newest first and stops once the page is full.
    pub fn search_sessions(&self, text: &str, page: Page) -> StoreResult<Vec<SessionSummary>> {
        let pattern = like_pattern(text);
        let escaped = json_escaped(text).map(|e| like_pattern(&e));
        // `col` matches the plain text, or its JSON-escaped spelling where that differs.
        let matches = |col: &str| match escaped {
            Some(_) => format!("({col} LIKE ?1 ESCAPE '\\' OR {col} LIKE ?2 ESCAPE '\\')"),
            None => format!("{col} LIKE ?1 ESCAPE '\\'"),
        };
        let bind = |stmt: &mut rusqlite::CachedStatement<'_>| -> rusqlite::Result<()> {
            stmt.raw_bind_parameter(1, &pattern)?;
            if let Some(escaped) = &escaped {
                stmt.raw_bind_parameter(2, escaped)?;
            }
            Ok(())
        };
        // Every stored text is unpacked and matched once, whichever sessions share it.
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT id FROM texts WHERE {}",
            matches("pw_text(data)")
        ))?;
        bind(&mut stmt)?;
        let mut texts = HashSet::new();
        let mut rows = stmt.raw_query();
        while let Some(row) = rows.next()? {
            texts.insert(row.get::<_, i64>(0)?);
        }
        drop(rows);
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT s.id, coalesce(s.name LIKE ?1 ESCAPE '\\' OR s.model LIKE ?1 ESCAPE '\\'
                OR EXISTS (SELECT 1 FROM requests r WHERE r.session_id = s.id AND r.model LIKE ?1 ESCAPE '\\')
                OR EXISTS (SELECT 1 FROM requests r JOIN outcomes o ON o.request_id = r.id
                           WHERE r.session_id = s.id AND pw_text(o.text) LIKE ?1 ESCAPE '\\')
                OR EXISTS (SELECT 1 FROM requests r
                           WHERE r.session_id = s.id AND r.body_verbatim IS NOT NULL
                             AND {verbatim}), 0) AS direct
             FROM sessions s ORDER BY s.created_us DESC, s.id DESC",
            verbatim = matches(&format!("pw_text(r.body_verbatim, {VERBATIM_SEARCHED})")),
        ))?;
        bind(&mut stmt)?;
        let mut found = Vec::new();
        let mut skip = page.offset;
        let mut rows = stmt.raw_query();
        while let Some(row) = rows.next()? {
            if found.len() as u64 >= page.limit {
                break;
            }
            let id: i64 = row.get(0)?;
            let direct: bool = row.get(1)?;
            let hit = direct || {
                let mut uses = false;
                if !texts.is_empty() {
                    scan_text_refs(&self.conn, Some(id), |text| {
                        uses = texts.contains(&text);
                        if uses {
                            ControlFlow::Break(())
                        } else {
                            ControlFlow::Continue(())
                        }
                    })?;
                }
                uses
            };
            if !hit {
                continue;
            }
            if skip > 0 {
                skip -= 1;
                continue;
            }
            found.push(id);
        }
        drop(rows);
        found.into_iter().map(|id| self.session(id)).collect()
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
                        row.get::<_, Vec<u8>>(15)?,
                        row.get::<_, Option<String>>(16)?,
                        row.get::<_, Option<Vec<u8>>>(17)?,
                        row.get::<_, Option<Vec<u8>>>(18)?,
                    ))
                },
            )
            .optional()?;
        let Some((summary, request_headers, extra, response_headers, response_body)) = found else {
            return Err(StoreError::NoRequest(request_id));
        };
        Ok(RequestRecord {
            summary,
            headers: self.headers(&request_headers)?,
            extra: extra.and_then(|e| serde_json::from_str(&e).ok()),
            response_headers: match response_headers {
                Some(list) => self.headers(&list)?,
                None => Vec::new(),
            },
            response_body: response_body
                .map(|packed| unpack_bytes(&packed, "stored response body"))
                .transpose()?,
        })
    }

    /// A stored header list (text ids of `["name","value"]` lines).
    fn headers(&self, list: &[u8]) -> StoreResult<Vec<(String, String)>> {
        self.texts(list)?
            .into_iter()
            .flatten()
            .map(|line| {
                serde_json::from_str(&line)
                    .map_err(|e| StoreError::Damaged(format!("stored header line: {e}")))
            })
            .collect()
    }

    /// Rebuilds a stored body: the same bytes, and the same JSON value (keys in the same order).
    pub fn body(&self, request_id: i64) -> StoreResult<StoredBody> {
        let row = self
            .conn
            .prepare_cached(
                "SELECT input_items, body_verbatim, body_pieces FROM requests WHERE id = ?1",
            )?
            .query_row([request_id], |row| {
                Ok((
                    row.get::<_, Vec<u8>>(0)?,
                    row.get::<_, Option<Vec<u8>>>(1)?,
                    row.get::<_, Option<Vec<u8>>>(2)?,
                ))
            })
            .optional()?;
        let Some((list, verbatim, piece_list)) = row else {
            return Err(StoreError::NoRequest(request_id));
        };
        let bytes = match (verbatim, piece_list) {
            (Some(packed), _) => unpack_bytes(&packed, &format!("body of request {request_id}"))?,
            (None, Some(piece_list)) => {
                let items: Vec<String> = self.texts(&list)?.into_iter().flatten().collect();
                pieces::join(&self.texts(&piece_list)?, &items)
            }
            (None, None) => {
                return Err(StoreError::Damaged(format!(
                    "request {request_id} has no body"
                )));
            }
        };
        // The bytes are whole; a body serde_json cannot read as a value (a lone surrogate
        // escape, `"\udc00"`, found by fuzz/har_import) is kept and shown as bytes, as a
        // verbatim body is.
        let value = serde_json::from_slice(&bytes).ok();
        Ok(StoredBody { bytes, value })
    }

    /// The texts of a stored list (LEB128 text ids), in order; `None` for id 0 (the input
    /// array's place in a piece list).
    pub(super) fn texts(&self, list: &[u8]) -> StoreResult<Vec<Option<String>>> {
        body::read_varints(list)
            .map_err(StoreError::Damaged)?
            .into_iter()
            .map(|id| match id {
                0 => Ok(None),
                id => self.text(i64::try_from(id).unwrap_or(i64::MAX)).map(Some),
            })
            .collect()
    }

    /// Stored text `id`, unpacked.
    pub(super) fn text(&self, id: i64) -> StoreResult<String> {
        let data: Option<Vec<u8>> = self
            .conn
            .prepare_cached("SELECT data FROM texts WHERE id = ?1")?
            .query_row([id], |r| r.get(0))
            .optional()?;
        let data = data.ok_or_else(|| StoreError::Damaged(format!("missing text {id}")))?;
        unpack_text(&data, &format!("text {id}"))
    }

    /// A request's raw events in order.
    pub fn events(&self, request_id: i64, page: Page) -> StoreResult<Vec<RawEvent>> {
        event_chunks::page(&self.conn, request_id, page.offset, page.limit)
    }

    /// Number of raw events stored for a request.
    pub fn event_count(&self, request_id: i64) -> StoreResult<u64> {
        event_chunks::count(&self.conn, request_id)
    }

    /// A request's outcome, when recorded.
    pub fn outcome(&self, request_id: i64) -> StoreResult<Option<OutcomeRecord>> {
        let found = self
            .conn
            .query_row(
                "SELECT state, response_id, error_class, error_message, usage, text, server_model, events, first_event_us, first_text_us, total_us, lost_events, lost_reason
                 FROM outcomes WHERE request_id = ?1",
                [request_id],
                |row| {
                    Ok((OutcomeRecord {
                        state: row.get(0)?,
                        response_id: row.get(1)?,
                        error_class: row.get(2)?,
                        error_message: row.get(3)?,
                        usage: super::summary::parse_usage(row.get(4)?),
                        text: String::new(),
                        server_model: row.get(6)?,
                        events: u64::try_from(row.get::<_, i64>(7)?).unwrap_or(0),
                        first_event_us: row.get(8)?,
                        first_text_us: row.get(9)?,
                        total_us: row.get(10)?,
                        lost_events: u64::try_from(row.get::<_, i64>(11)?).unwrap_or(0),
                        lost_reason: row.get(12)?,
                    },
                    row.get::<_, Option<Vec<u8>>>(5)?))
                },
            )
            .optional()?;
        let Some((mut outcome, text)) = found else {
            return Ok(None);
        };
        if let Some(packed) = text {
            outcome.text = unpack_text(&packed, "stored output text")?;
        }
        Ok(Some(outcome))
    }
}
