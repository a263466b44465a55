//! Writes: sessions, requests (bodies and headers cut into content-addressed texts), responses,
//! raw events (packed chunks, `event_chunks.rs`), outcomes, and deleting a session together
//! with the texts no other session uses (found by scanning the remaining requests' text lists:
//! no per-session index is kept, so a small database stays small).

use std::borrow::Cow;
use std::collections::HashSet;
use std::ops::ControlFlow;

use rusqlite::{Connection, OptionalExtension as _, params};

use super::body::{self, content_hash};
use super::codec::{self, Level};
use super::error::StoreResult;
use super::event_chunks;
use super::pieces::{self, Piece};
use super::read::scan_text_refs;
use super::types::{NewRequest, NewSession, OutcomeRecord, RecordedState, ResponseMeta};
use super::{Store, StoreError};
use crate::core::redact::{
    ESCAPED_NOTE, escaped_view, is_secret_header, try_redact_header, try_redact_value,
    try_redacted, try_redacted_json,
};
use crate::core::stream::RawEvent;

/// Header lines as stored, each `["name","value"]` (compact JSON): credential headers (by name)
/// dropped, the rest as the redaction policy shows them (authorization-shaped values, keys,
/// tokens and URL credentials redacted); an error when redaction cannot run.
pub(super) fn storable_headers(headers: &[(String, String)]) -> StoreResult<Vec<String>> {
    headers
        .iter()
        .filter(|(name, _)| !is_secret_header(name))
        .map(|(name, value)| {
            let value = try_redact_header(name, value)
                .map_err(StoreError::redaction("request or response headers"))?;
            Ok(serde_json::to_string(&(name, value)).unwrap_or_else(|_| "[\"\",\"\"]".to_string()))
        })
        .collect()
}

/// Inserts `text` into `texts` (packed) unless present; returns its id.
pub(super) fn intern(tx: &Connection, text: &str) -> StoreResult<i64> {
    let hash = content_hash(text);
    let mut find = tx.prepare_cached("SELECT id FROM texts WHERE hash = ?1")?;
    if let Some(id) = find
        .query_row([&hash[..]], |row| row.get::<_, i64>(0))
        .optional()?
    {
        return Ok(id);
    }
    tx.prepare_cached("INSERT INTO texts (hash, data) VALUES (?1, ?2)")?
        .execute(params![
            &hash[..],
            codec::pack(text.as_bytes(), Level::Kept)
        ])?;
    Ok(tx.last_insert_rowid())
}

/// Interns `texts`; returns their ids as LEB128 varints, `None` as 0.
pub(super) fn intern_list<'t>(
    tx: &Connection,
    texts: impl IntoIterator<Item = Option<&'t str>>,
) -> StoreResult<Vec<u8>> {
    let mut list = Vec::new();
    for text in texts {
        let id = match text {
            Some(text) => intern(tx, text)?,
            None => 0,
        };
        body::push_varint(&mut list, u64::try_from(id).unwrap_or(0));
    }
    Ok(list)
}

/// Interns a header list's storable lines; returns their ids as varints.
pub(super) fn intern_headers(
    tx: &Connection,
    headers: &[(String, String)],
) -> StoreResult<Vec<u8>> {
    let lines = storable_headers(headers)?;
    intern_list(tx, lines.iter().map(|l| Some(l.as_str())))
}

/// True when session `id` is in the database.
pub(super) fn session_exists(conn: &Connection, id: i64) -> StoreResult<bool> {
    Ok(conn
        .query_row("SELECT 1 FROM sessions WHERE id = ?1", [id], |_| Ok(()))
        .optional()?
        .is_some())
}

/// Inserts a session row; returns its id. Its name and model are stored redacted (a session
/// named after a client's session header, or a model string, can carry a key).
pub(super) fn insert_session(conn: &Connection, session: &NewSession) -> StoreResult<i64> {
    let model = session
        .model
        .as_deref()
        .map(try_redacted)
        .transpose()
        .map_err(StoreError::redaction("session model"))?;
    conn.execute(
        "INSERT INTO sessions (name, source, provider, model, created_us) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![
            try_redacted(&session.name).map_err(StoreError::redaction("session name"))?,
            session.source.as_str(),
            session.provider,
            model,
            session.created_us
        ],
    )?;
    Ok(conn.last_insert_rowid())
}

/// A request body already taken apart, its texts already interned.
pub(super) struct RequestParts<'a> {
    /// Piece ids, LEB128 varints, 0 for the input array ([`super::pieces`]).
    pub pieces: Option<&'a [u8]>,
    /// The body's model.
    pub model: Option<&'a str>,
    /// Item ids, LEB128 varints, in order.
    pub item_list: &'a [u8],
    /// Exact bytes of a body that is not a JSON object (packed when written).
    pub verbatim: Option<&'a [u8]>,
    /// Length of the whole body.
    pub body_bytes: usize,
}

/// A body cut into pieces and items, interned (or kept verbatim).
pub(super) struct StoredCut {
    /// Piece ids (None: verbatim).
    pub pieces: Option<Vec<u8>>,
    /// Item ids.
    pub items: Vec<u8>,
    /// The body's effective `model`.
    pub model: Option<String>,
}

/// Cuts `body` (already redacted) into pieces and items and interns them.
pub(super) fn store_body(tx: &Connection, body: &[u8]) -> StoreResult<StoredCut> {
    let Some(cut) = pieces::cut(body) else {
        return Ok(StoredCut {
            pieces: None,
            items: Vec::new(),
            model: None,
        });
    };
    let pieces = intern_list(
        tx,
        cut.pieces.iter().map(|piece| match piece {
            Piece::Text(text) => Some(*text),
            Piece::Input => None,
        }),
    )?;
    let items = intern_list(tx, cut.items.iter().copied().map(Some))?;
    Ok(StoredCut {
        pieces: Some(pieces),
        items,
        model: cut.model,
    })
}

/// Inserts a request at the session's next position (inside the caller's transaction); the
/// body comes from `parts`, not from `request.body`. Returns its id.
pub(super) fn insert_request_parts(
    tx: &Connection,
    session_id: i64,
    request: &NewRequest<'_>,
    parts: &RequestParts<'_>,
) -> StoreResult<i64> {
    let position: i64 = tx.query_row(
        "SELECT coalesce(max(position) + 1, 0) FROM requests WHERE session_id = ?1",
        [session_id],
        |r| r.get(0),
    )?;
    let headers = intern_headers(tx, request.headers)?;
    tx.execute(
        "INSERT INTO requests (session_id, position, dialect, rules, provider, model, method, url, body_pieces, input_items, body_verbatim, body_bytes, headers, extra, started_us)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
        params![
            session_id,
            position,
            request.dialect,
            request.rules,
            request.provider,
            parts
                .model
                .map(try_redacted)
                .transpose()
                .map_err(StoreError::redaction("request model"))?,
            request.method,
            try_redacted(&request.url).map_err(StoreError::redaction("request URL"))?,
            parts.pieces,
            parts.item_list,
            parts.verbatim.map(|bytes| codec::pack(bytes, Level::Kept)),
            i64::try_from(parts.body_bytes).unwrap_or(i64::MAX),
            headers,
            request
                .extra
                .as_ref()
                .map(|extra| try_redact_value(extra).map(|extra| extra.to_string()))
                .transpose()
                .map_err(StoreError::redaction("request extra fields"))?,
            request.started_us,
        ],
    )?;
    Ok(tx.last_insert_rowid())
}

/// Inserts a request at the session's next position inside the caller's transaction, its body
/// cut into pieces and items (see [`Store::add_request`]); returns its id.
pub(super) fn insert_request(
    tx: &Connection,
    session_id: i64,
    request: &NewRequest<'_>,
) -> StoreResult<i64> {
    // Credentials in the body (secret fields, keys) are never stored: a body that cannot be
    // redacted (or whose JSON would not parse back) is not stored at all.
    // A body that is not UTF-8 is stored as its escaped view, redacted, and says so.
    let (text, escaped) = match std::str::from_utf8(request.body) {
        Ok(text) => (
            try_redacted_json(text).map_err(StoreError::redaction("request body"))?,
            None,
        ),
        Err(_) => {
            let view = escaped_view(request.body);
            let text = try_redacted(&view)
                .map_err(StoreError::redaction("request body"))?
                .into_owned();
            (Cow::Owned(text), Some(noted_extra(request.extra.as_ref())))
        }
    };
    let noted;
    let request = match escaped {
        Some(extra) => {
            noted = NewRequest {
                extra: Some(extra),
                ..request.clone()
            };
            &noted
        }
        None => request,
    };
    let body = text.as_bytes();
    let cut = store_body(tx, body)?;
    let parts = RequestParts {
        pieces: cut.pieces.as_deref(),
        model: cut.model.as_deref(),
        item_list: &cut.items,
        verbatim: cut.pieces.is_none().then_some(body),
        body_bytes: body.len(),
    };
    insert_request_parts(tx, session_id, request, &parts)
}

/// `extra` with `body_stored` saying the body was kept as an escaped view ([`ESCAPED_NOTE`]).
fn noted_extra(extra: Option<&serde_json::Value>) -> serde_json::Value {
    let mut extra = match extra {
        Some(serde_json::Value::Object(map)) => map.clone(),
        Some(other) => {
            let mut map = serde_json::Map::new();
            map.insert("extra".to_string(), other.clone());
            map
        }
        None => serde_json::Map::new(),
    };
    extra
        .entry("body_stored")
        .or_insert_with(|| serde_json::Value::String(ESCAPED_NOTE.to_string()));
    serde_json::Value::Object(extra)
}

/// A response body as it is stored: the bytes received, unless redaction finds a secret in its
/// text (then the redacted text; a body that is not UTF-8 is redacted on its lossy text, so a
/// secret is never kept for the sake of exact bytes).
fn redacted_body_bytes(body: &[u8]) -> Result<Vec<u8>, crate::core::redact::RedactError> {
    let text = String::from_utf8_lossy(body);
    let redacted = try_redacted_json(&text)?;
    Ok(if redacted == text {
        body.to_vec()
    } else {
        redacted.into_owned().into_bytes()
    })
}

/// Sets the response half of a request; false when there is no such request.
pub(super) fn update_response(
    conn: &Connection,
    request_id: i64,
    response: &ResponseMeta,
) -> StoreResult<bool> {
    let headers = intern_headers(conn, &response.headers)?;
    let body = response
        .body
        .as_deref()
        .map(redacted_body_bytes)
        .transpose()
        .map_err(StoreError::redaction("response body"))?;
    let changed = conn.execute(
        "UPDATE requests SET status = ?2, response_headers = ?3, response_body = ?4, wait_us = ?5, total_us = ?6 WHERE id = ?1",
        params![
            request_id,
            response.status,
            headers,
            body.map(|body| codec::pack(&body, Level::Kept)),
            response.wait_us,
            response.total_us,
        ],
    )?;
    if let Some(version) = &response.http_version {
        conn.execute(
            "UPDATE requests SET extra = json_set(COALESCE(extra, '{}'), '$.http_version', ?2) WHERE id = ?1",
            params![request_id, version],
        )?;
    }
    if let Some(extra) = response.extra.as_ref().filter(|e| e.is_object()) {
        conn.execute(
            "UPDATE requests SET extra = json_patch(COALESCE(extra, '{}'), ?2) WHERE id = ?1",
            params![request_id, extra.to_string()],
        )?;
    }
    Ok(changed > 0)
}

/// Inserts raw events of one request inside a transaction (packed chunks).
pub(super) fn insert_events<'a>(
    conn: &Connection,
    request_id: i64,
    events: impl IntoIterator<Item = &'a RawEvent>,
    level: Level,
) -> StoreResult<()> {
    event_chunks::insert(conn, request_id, events, level)
}

/// Inserts or replaces the outcome of a request, and packs its events for keeping (the
/// response is over).
pub(super) fn upsert_outcome(
    conn: &Connection,
    request_id: i64,
    o: &OutcomeRecord,
) -> StoreResult<()> {
    let error_message = o
        .error_message
        .as_deref()
        .map(try_redacted)
        .transpose()
        .map_err(StoreError::redaction("outcome error message"))?;
    let text = try_redacted(&o.text).map_err(StoreError::redaction("outcome text"))?;
    let lost_reason = o
        .lost_reason
        .as_deref()
        .map(try_redacted)
        .transpose()
        .map_err(StoreError::redaction("outcome recording gap"))?;
    conn.prepare_cached(
        "INSERT OR REPLACE INTO outcomes (request_id, state, response_id, error_class, error_message, usage, text, server_model, events, first_event_us, first_text_us, total_us, lost_events, lost_reason)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
    )?
    .execute(params![
        request_id,
        o.state,
        o.response_id,
        o.error_class,
        error_message,
        o.usage
            .as_ref()
            .map(|usage| codec::pack(usage.to_string().as_bytes(), Level::Kept)),
        codec::pack(text.as_bytes(), Level::Kept),
        o.server_model
            .as_deref()
            .map(try_redacted)
            .transpose()
            .map_err(StoreError::redaction("server model"))?,
        i64::try_from(o.events).unwrap_or(i64::MAX),
        o.first_event_us,
        o.first_text_us,
        o.total_us,
        i64::try_from(o.lost_events).unwrap_or(i64::MAX),
        lost_reason,
    ])?;
    if o.state != RecordedState::Open {
        event_chunks::repack(conn, request_id)?;
    }
    Ok(())
}

impl Store {
    /// Creates a session; returns its id.
    pub fn create_session(&mut self, session: &NewSession) -> StoreResult<i64> {
        let conn = self.writable()?;
        insert_session(conn, session)
    }

    /// Appends a request to a session (next position); returns its id. The body is stored as
    /// content-addressed pieces plus content-addressed input items (a body that is not a JSON
    /// object: verbatim); secret headers are dropped.
    pub fn add_request(&mut self, session_id: i64, request: &NewRequest<'_>) -> StoreResult<i64> {
        let conn = self.writable()?;
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        if !session_exists(&tx, session_id)? {
            return Err(StoreError::NoSession(session_id));
        }
        let id = insert_request(&tx, session_id, request)?;
        tx.commit()?;
        Ok(id)
    }

    /// Records the response half of a request.
    pub fn set_response(&mut self, request_id: i64, response: &ResponseMeta) -> StoreResult<()> {
        let conn = self.writable()?;
        if !update_response(conn, request_id, response)? {
            return Err(StoreError::NoRequest(request_id));
        }
        Ok(())
    }

    /// Records raw events of a request, in one transaction.
    pub fn add_events(&mut self, request_id: i64, events: &[RawEvent]) -> StoreResult<()> {
        let conn = self.writable()?;
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        insert_events(&tx, request_id, events, Level::Kept)?;
        tx.commit()?;
        Ok(())
    }

    /// Records (or replaces) the outcome of a request.
    pub fn set_outcome(&mut self, request_id: i64, outcome: &OutcomeRecord) -> StoreResult<()> {
        let conn = self.writable()?;
        upsert_outcome(conn, request_id, outcome)
    }

    /// Deletes a session with its requests, events and outcomes, and the texts no other session
    /// uses.
    pub fn delete_session(&mut self, session_id: i64) -> StoreResult<()> {
        let conn = self.writable()?;
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        if !session_exists(&tx, session_id)? {
            return Err(StoreError::NoSession(session_id));
        }
        // The texts this session uses, then (once it is gone) those no other request uses.
        let used = referenced_texts(&tx, Some(session_id), &HashSet::new())?;
        tx.execute("DELETE FROM sessions WHERE id = ?1", [session_id])?;
        let mut candidates = used;
        if !candidates.is_empty() {
            let kept = referenced_texts(&tx, None, &candidates)?;
            candidates.retain(|id| !kept.contains(id));
            let mut delete = tx.prepare_cached("DELETE FROM texts WHERE id = ?1")?;
            for id in candidates {
                delete.execute([id])?;
            }
        }
        tx.commit()?;
        Ok(())
    }
}

/// The text ids the requests of `session` (every session: `None`) refer to — of `only`, when
/// it is not empty, the scan stopping once all of them are found.
fn referenced_texts(
    tx: &Connection,
    session: Option<i64>,
    only: &HashSet<i64>,
) -> StoreResult<HashSet<i64>> {
    let mut found = HashSet::new();
    scan_text_refs(tx, session, |id| {
        if only.is_empty() || only.contains(&id) {
            found.insert(id);
        }
        if !only.is_empty() && found.len() == only.len() {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    })?;
    Ok(found)
}

impl Store {
    /// Appends a compiled request to a session (its URL, headers — secret ones dropped —, exact
    /// body, dialect, rules and provider); returns its id.
    pub fn add_compiled(
        &mut self,
        session_id: i64,
        request: &crate::core::compile::CompiledRequest,
        started_us: Option<i64>,
    ) -> StoreResult<i64> {
        let row = super::send_recording::compiled_request(request, started_us);
        self.add_request(
            session_id,
            &NewRequest {
                dialect: row.dialect,
                rules: row.rules,
                provider: row.provider,
                method: row.method,
                url: row.url,
                body: &row.body,
                headers: &row.headers,
                extra: row.extra,
                started_us: row.started_us,
            },
        )
    }
}
