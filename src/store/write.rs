//! Writes: sessions, requests (bodies split into content-addressed parts), responses, raw events,
//! outcomes, and deleting a session together with the items no other session uses.

use rusqlite::{Connection, OptionalExtension as _, Transaction, params};
use serde_json::Value;

use super::body::{self, content_hash};
use super::error::StoreResult;
use super::pieces::{self, Piece};
use super::types::{NewRequest, NewSession, OutcomeRecord, ResponseMeta};
use super::{Store, StoreError};
use crate::core::redact::{is_secret_header, redact_header, redact_url, redacted};
use crate::core::stream::RawEvent;

/// Headers as stored: credential headers (by name) dropped, the rest as the redaction policy
/// shows them (authorization-shaped values, keys, tokens and URL credentials redacted).
pub(super) fn storable_headers(headers: &[(String, String)]) -> String {
    let kept: Vec<(&str, String)> = headers
        .iter()
        .filter(|(name, _)| !is_secret_header(name))
        .map(|(name, value)| (name.as_str(), redact_header(name, value)))
        .collect();
    serde_json::to_string(&kept).unwrap_or_else(|_| "[]".to_string())
}

/// Inserts `json` into the content-addressed table `table` (`items`, `fields` or `pieces`)
/// unless present; returns its id.
pub(super) fn intern(tx: &Transaction<'_>, table: &str, json: &str) -> StoreResult<i64> {
    let hash = content_hash(json);
    let mut find = tx.prepare_cached(&format!("SELECT id FROM {table} WHERE hash = ?1"))?;
    if let Some(id) = find
        .query_row([&hash[..]], |row| row.get::<_, i64>(0))
        .optional()?
    {
        return Ok(id);
    }
    let column = if table == "pieces" { "text" } else { "json" };
    let mut insert = tx.prepare_cached(&format!(
        "INSERT INTO {table} (hash, {column}) VALUES (?1, ?2)"
    ))?;
    insert.execute(params![&hash[..], json])?;
    Ok(tx.last_insert_rowid())
}

/// Interns `texts` into `table` and links each to the session through `link` (`session_items` /
/// `session_pieces`, column `column`); returns their ids as LEB128 varints, `None` as 0.
fn intern_linked<'t>(
    tx: &Transaction<'_>,
    session_id: i64,
    (table, link, column): (&str, &str, &str),
    texts: impl IntoIterator<Item = Option<&'t str>>,
) -> StoreResult<Vec<u8>> {
    let mut list = Vec::new();
    let mut insert = tx.prepare_cached(&format!(
        "INSERT OR IGNORE INTO {link} (session_id, {column}) VALUES (?1, ?2)"
    ))?;
    for text in texts {
        let id = match text {
            Some(text) => {
                let id = intern(tx, table, text)?;
                insert.execute(params![session_id, id])?;
                id
            }
            None => 0,
        };
        body::push_varint(&mut list, u64::try_from(id).unwrap_or(0));
    }
    Ok(list)
}

/// Inserts a session row; returns its id.
pub(super) fn insert_session(conn: &Connection, session: &NewSession) -> StoreResult<i64> {
    conn.execute(
        "INSERT INTO sessions (name, source, provider, model, created_us) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![
            session.name,
            session.source.as_str(),
            session.provider,
            session.model,
            session.created_us
        ],
    )?;
    Ok(conn.last_insert_rowid())
}

/// A request body already taken apart, its items already interned and linked to the session.
pub(super) struct RequestParts<'a> {
    /// Compact JSON of the non-input fields (schema 2 and rollout imports).
    pub fields_json: Option<&'a str>,
    /// Piece ids, LEB128 varints, 0 for the input array (schema 3, [`super::pieces`]).
    pub pieces: Option<&'a [u8]>,
    /// The body's model, when `fields_json` does not say it.
    pub model: Option<&'a str>,
    /// Index of `input` among the body keys.
    pub input_at: Option<usize>,
    /// Item ids, LEB128 varints, in order.
    pub item_list: &'a [u8],
    /// Exact bytes when rebuilding would not reproduce them.
    pub verbatim: Option<&'a [u8]>,
    /// Length of the whole body.
    pub body_bytes: usize,
}

/// Inserts a request at the session's next position (inside the caller's transaction); the
/// body comes from `parts`, not from `request.body`. Returns its id.
pub(super) fn insert_request_parts(
    tx: &Transaction<'_>,
    session_id: i64,
    request: &NewRequest<'_>,
    parts: &RequestParts<'_>,
) -> StoreResult<i64> {
    let position: i64 = tx.query_row(
        "SELECT coalesce(max(position) + 1, 0) FROM requests WHERE session_id = ?1",
        [session_id],
        |r| r.get(0),
    )?;
    let model = parts.model.map(str::to_string).or_else(|| {
        parts.fields_json.and_then(|json| {
            serde_json::from_str::<Value>(json)
                .ok()
                .and_then(|v| v.get("model").and_then(Value::as_str).map(str::to_string))
        })
    });
    let fields_id = match parts.fields_json {
        Some(json) => Some(intern(tx, "fields", json)?),
        None => None,
    };
    tx.execute(
        "INSERT INTO requests (session_id, position, dialect, rules, provider, model, method, url, fields_id, input_at, input_items, body_verbatim, body_bytes, headers, extra, started_us, body_pieces)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
        params![
            session_id,
            position,
            request.dialect,
            request.rules,
            request.provider,
            model,
            request.method,
            redact_url(&request.url),
            fields_id,
            parts.input_at.map(|i| i64::try_from(i).unwrap_or(i64::MAX)),
            parts.item_list,
            parts.verbatim,
            i64::try_from(parts.body_bytes).unwrap_or(i64::MAX),
            storable_headers(request.headers),
            request
                .extra
                .as_ref()
                .map(|extra| redacted(&extra.to_string()).into_owned()),
            request.started_us,
            parts.pieces,
        ],
    )?;
    Ok(tx.last_insert_rowid())
}

/// Inserts a request at the session's next position inside the caller's transaction, its body
/// cut into pieces and items (see [`Store::add_request`]); returns its id.
pub(super) fn insert_request(
    tx: &Transaction<'_>,
    session_id: i64,
    request: &NewRequest<'_>,
) -> StoreResult<i64> {
    // Credentials in the body (secret fields, keys) are never stored.
    let text = std::str::from_utf8(request.body).map(redacted);
    let body: &[u8] = match &text {
        Ok(text) => text.as_bytes(),
        Err(_) => request.body,
    };
    let cut = pieces::cut(body);
    let (piece_list, item_list) = match &cut {
        Some(cut) => (
            Some(intern_linked(
                tx,
                session_id,
                ("pieces", "session_pieces", "piece_id"),
                cut.pieces.iter().map(|piece| match piece {
                    Piece::Text(text) => Some(*text),
                    Piece::Input => None,
                }),
            )?),
            intern_linked(
                tx,
                session_id,
                ("items", "session_items", "item_id"),
                cut.items.iter().copied().map(Some),
            )?,
        ),
        None => (None, Vec::new()),
    };
    let parts = RequestParts {
        fields_json: None,
        pieces: piece_list.as_deref(),
        model: cut.as_ref().and_then(|c| c.model.as_deref()),
        input_at: None,
        item_list: &item_list,
        verbatim: cut.is_none().then_some(body),
        body_bytes: body.len(),
    };
    insert_request_parts(tx, session_id, request, &parts)
}

/// Sets the response half of a request; false when there is no such request.
pub(super) fn update_response(
    conn: &Connection,
    request_id: i64,
    response: &ResponseMeta,
) -> StoreResult<bool> {
    let changed = conn.execute(
        "UPDATE requests SET status = ?2, response_headers = ?3, response_body = ?4, wait_us = ?5, total_us = ?6 WHERE id = ?1",
        params![
            request_id,
            response.status,
            storable_headers(&response.headers),
            response.body.as_deref().map(redacted),
            response.wait_us,
            response.total_us,
        ],
    )?;
    Ok(changed > 0)
}

/// Inserts raw events of one request inside a transaction.
pub(super) fn insert_events<'a>(
    conn: &Connection,
    request_id: i64,
    events: impl IntoIterator<Item = &'a RawEvent>,
) -> StoreResult<()> {
    let mut stmt = conn.prepare_cached(
        "INSERT OR REPLACE INTO events (request_id, seq, received_us, event, data) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for event in events {
        stmt.execute(params![
            request_id,
            i64::try_from(event.seq).unwrap_or(i64::MAX),
            i64::try_from(event.received_at.as_micros()).unwrap_or(i64::MAX),
            event.event,
            redacted(&event.data),
        ])?;
    }
    Ok(())
}

/// Inserts or replaces the outcome of a request.
pub(super) fn upsert_outcome(
    conn: &Connection,
    request_id: i64,
    o: &OutcomeRecord,
) -> StoreResult<()> {
    conn.prepare_cached(
        "INSERT OR REPLACE INTO outcomes (request_id, state, response_id, error_class, error_message, usage, text, server_model, events, first_event_us, first_text_us, total_us)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
    )?
    .execute(params![
        request_id,
        o.state,
        o.response_id,
        o.error_class,
        o.error_message.as_deref().map(redacted),
        o.usage.as_ref().map(Value::to_string),
        redacted(&o.text),
        o.server_model,
        i64::try_from(o.events).unwrap_or(i64::MAX),
        o.first_event_us,
        o.first_text_us,
        o.total_us,
    ])?;
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
        let exists: Option<i64> = tx
            .query_row("SELECT id FROM sessions WHERE id = ?1", [session_id], |r| {
                r.get(0)
            })
            .optional()?;
        if exists.is_none() {
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
        insert_events(&tx, request_id, events)?;
        tx.commit()?;
        Ok(())
    }

    /// Records (or replaces) the outcome of a request.
    pub fn set_outcome(&mut self, request_id: i64, outcome: &OutcomeRecord) -> StoreResult<()> {
        let conn = self.writable()?;
        upsert_outcome(conn, request_id, outcome)
    }

    /// Deletes a session with its requests, events and outcomes, and the items, pieces and field
    /// sets no other request uses.
    pub fn delete_session(&mut self, session_id: i64) -> StoreResult<()> {
        let conn = self.writable()?;
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let changed = tx.execute("DELETE FROM sessions WHERE id = ?1", [session_id])?;
        if changed == 0 {
            return Err(StoreError::NoSession(session_id));
        }
        tx.execute_batch(
            "DELETE FROM items WHERE id NOT IN (SELECT item_id FROM session_items);
             DELETE FROM pieces WHERE id NOT IN (SELECT piece_id FROM session_pieces);
             DELETE FROM fields WHERE id NOT IN (SELECT fields_id FROM requests WHERE fields_id IS NOT NULL);",
        )?;
        tx.commit()?;
        Ok(())
    }
}

/// A JSON value's string form (`"standard"` → `standard`), for enums serialized as strings.
fn enum_name<T: serde::Serialize>(value: &T) -> Option<String> {
    match serde_json::to_value(value) {
        Ok(Value::String(s)) => Some(s),
        _ => None,
    }
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
        let headers: Vec<(String, String)> = request
            .headers
            .iter()
            .map(|h| (h.name.clone(), h.value.clone()))
            .collect();
        let extra = request
            .compressed_body
            .as_ref()
            .map(|c| serde_json::json!({"content_encoding": "zstd", "wire_body_bytes": c.len()}));
        self.add_request(
            session_id,
            &NewRequest {
                dialect: enum_name(&request.dialect),
                rules: Some(request.rules.clone()),
                provider: enum_name(&request.provider_kind),
                method: "POST".to_string(),
                url: request.url.clone(),
                body: &request.body_json,
                headers: &headers,
                extra,
                started_us,
            },
        )
    }
}
