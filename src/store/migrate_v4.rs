//! Schema 3 → 4, in one transaction: the tables of schema 3 are renamed out of the way, schema 4
//! is made beside them, and every request is copied over — its body rebuilt from whatever
//! schema 3 (or 2) kept (`fields`, `pieces`, `items`, verbatim bytes) to the exact same bytes and
//! cut again into packed texts, its header lines interned, its events packed into chunks, its
//! outcome's text packed — before the old tables are dropped. Ids, positions, times and every
//! byte of every body and event stay as they were; a kill mid-way leaves schema 3 untouched.
//! Rows that point at nothing (a request of a deleted session, an outcome of a deleted request)
//! are left behind rather than failing the migration.

use std::time::Duration;

use rusqlite::{Connection, OptionalExtension as _, Transaction, params};

use super::body::{self, read_varints};
use super::codec::{self, Level};
use super::error::{StoreError, StoreResult};
use super::event_chunks;
use super::pieces;
use super::schema::SCHEMA;
use super::write::{intern_headers, store_body};
use crate::core::stream::RawEvent;

/// Events copied per read of the old table (bounded memory on a long response).
const EVENT_PAGE: i64 = 20_000;

/// Runs the migration unless another process already has (foreign keys are off meanwhile, so
/// that renaming and dropping tables cascades nothing).
pub fn run(conn: &mut Connection) -> StoreResult<()> {
    conn.pragma_update(None, "foreign_keys", "OFF")?;
    let result = migrate(conn);
    conn.pragma_update(None, "foreign_keys", "ON")?;
    result
}

fn migrate(conn: &mut Connection) -> StoreResult<()> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let current: i64 = tx.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    if current != 3 {
        return Ok(());
    }
    tx.execute_batch(
        "ALTER TABLE requests RENAME TO requests_v3;
         ALTER TABLE events RENAME TO events_v3;
         ALTER TABLE outcomes RENAME TO outcomes_v3;
         DROP INDEX IF EXISTS sessions_by_replay_of;",
    )?;
    tx.execute_batch(SCHEMA)?;
    // Rows that point at nothing (written while foreign keys were off) are not carried over.
    tx.execute(
        "UPDATE sessions SET replay_of = NULL WHERE replay_of NOT IN (SELECT id FROM sessions)",
        [],
    )?;
    copy_requests(&tx)?;
    copy_outcomes(&tx)?;
    tx.execute_batch(
        "DROP TABLE events_v3; DROP TABLE outcomes_v3; DROP TABLE requests_v3;
         DROP TABLE session_items; DROP TABLE session_pieces;
         DROP TABLE items; DROP TABLE pieces; DROP TABLE fields;",
    )?;
    let broken: Option<String> = tx
        .query_row("PRAGMA foreign_key_check", [], |row| row.get(0))
        .optional()?;
    if let Some(table) = broken {
        return Err(StoreError::Damaged(format!(
            "schema 4 migration: a row of {table} points at nothing"
        )));
    }
    tx.pragma_update(None, "user_version", 4)?;
    tx.commit()?;
    Ok(())
}

/// The text of a schema 3 content-addressed row (`items.json`, `pieces.text`, `fields.json`).
fn old_text(tx: &Transaction<'_>, table: &str, id: u64) -> StoreResult<String> {
    let column = if table == "pieces" { "text" } else { "json" };
    let id = i64::try_from(id).unwrap_or(i64::MAX);
    tx.prepare_cached(&format!("SELECT {column} FROM {table} WHERE id = ?1"))?
        .query_row([id], |r| r.get(0))
        .optional()?
        .ok_or_else(|| StoreError::Damaged(format!("schema 3: missing {table} row {id}")))
}

/// A schema 3 request row's body parts.
struct OldBody {
    fields_id: Option<i64>,
    input_at: Option<i64>,
    items: Vec<u8>,
    verbatim: Option<Vec<u8>>,
    pieces: Option<Vec<u8>>,
}

/// The exact bytes schema 3 gave back for a body.
fn old_body(tx: &Transaction<'_>, old: OldBody) -> StoreResult<Vec<u8>> {
    if let Some(bytes) = old.verbatim {
        return Ok(bytes);
    }
    let items = read_varints(&old.items)
        .map_err(StoreError::Damaged)?
        .into_iter()
        .map(|id| old_text(tx, "items", id))
        .collect::<StoreResult<Vec<_>>>()?;
    if let Some(list) = old.pieces {
        let texts = read_varints(&list)
            .map_err(StoreError::Damaged)?
            .into_iter()
            .map(|id| match id {
                0 => Ok(None),
                id => old_text(tx, "pieces", id).map(Some),
            })
            .collect::<StoreResult<Vec<_>>>()?;
        return Ok(pieces::join(&texts, &items));
    }
    let fields = match old.fields_id {
        Some(id) => Some(old_text(tx, "fields", u64::try_from(id).unwrap_or(0))?),
        None => None,
    };
    let input_at = old
        .input_at
        .map(|i| usize::try_from(i).unwrap_or(usize::MAX));
    let value = body::rebuild(fields.as_deref(), input_at, &items).map_err(StoreError::Damaged)?;
    serde_json::to_vec(&value).map_err(|e| StoreError::Damaged(e.to_string()))
}

fn old_headers(json: Option<String>) -> StoreResult<Option<Vec<(String, String)>>> {
    json.map(|text| {
        serde_json::from_str(&text)
            .map_err(|e| StoreError::Damaged(format!("schema 3 headers: {e}")))
    })
    .transpose()
}

fn copy_requests(tx: &Transaction<'_>) -> StoreResult<()> {
    let mut rows = tx.prepare(
        "SELECT id, session_id, position, dialect, rules, provider, model, method, url, fields_id,
                input_at, input_items, body_verbatim, body_bytes, headers, extra, started_us,
                status, response_headers, response_body, wait_us, total_us, body_pieces
         FROM requests_v3 WHERE session_id IN (SELECT id FROM sessions) ORDER BY id",
    )?;
    let mut rows = rows.query([])?;
    while let Some(row) = rows.next()? {
        let id: i64 = row.get(0)?;
        let session_id: i64 = row.get(1)?;
        let bytes = old_body(
            tx,
            OldBody {
                fields_id: row.get(9)?,
                input_at: row.get(10)?,
                items: row.get(11)?,
                verbatim: row.get(12)?,
                pieces: row.get(22)?,
            },
        )?;
        let cut = store_body(tx, &bytes)?;
        let headers = intern_headers(tx, &old_headers(row.get(14)?)?.unwrap_or_default())?;
        let response_headers = match old_headers(row.get(18)?)? {
            Some(list) => Some(intern_headers(tx, &list)?),
            None => None,
        };
        let response_body: Option<String> = row.get(19)?;
        tx.prepare_cached(
            "INSERT INTO requests (id, session_id, position, dialect, rules, provider, model, method, url,
                body_pieces, input_items, body_verbatim, body_bytes, headers, extra, started_us, status,
                response_headers, response_body, wait_us, total_us)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)",
        )?
        .execute(params![
            id,
            session_id,
            row.get::<_, i64>(2)?,
            row.get::<_, Option<String>>(3)?,
            row.get::<_, Option<String>>(4)?,
            row.get::<_, Option<String>>(5)?,
            row.get::<_, Option<String>>(6)?,
            row.get::<_, String>(7)?,
            row.get::<_, String>(8)?,
            cut.pieces,
            cut.items,
            cut.pieces
                .is_none()
                .then(|| codec::pack(&bytes, Level::Kept)),
            row.get::<_, i64>(13)?,
            headers,
            row.get::<_, Option<String>>(15)?,
            row.get::<_, Option<i64>>(16)?,
            row.get::<_, Option<i64>>(17)?,
            response_headers,
            response_body.map(|text| codec::pack(text.as_bytes(), Level::Kept)),
            row.get::<_, Option<i64>>(20)?,
            row.get::<_, Option<i64>>(21)?,
        ])?;
        copy_events(tx, id)?;
    }
    Ok(())
}

fn copy_events(tx: &Transaction<'_>, request_id: i64) -> StoreResult<()> {
    let mut after = -1i64;
    loop {
        let mut stmt = tx.prepare_cached(
            "SELECT seq, received_us, event, data FROM events_v3
             WHERE request_id = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3",
        )?;
        let page = stmt
            .query_map(params![request_id, after, EVENT_PAGE], |row| {
                Ok(RawEvent {
                    seq: u64::try_from(row.get::<_, i64>(0)?).unwrap_or(0),
                    received_at: Duration::from_micros(
                        u64::try_from(row.get::<_, i64>(1)?).unwrap_or(0),
                    ),
                    event: row.get(2)?,
                    data: row.get(3)?,
                    bytes: None,
                })
            })?
            .collect::<Result<Vec<_>, _>>()?;
        let Some(last) = page.last() else {
            return Ok(());
        };
        after = i64::try_from(last.seq).unwrap_or(i64::MAX);
        event_chunks::insert_stored(tx, request_id, &page)?;
    }
}

fn copy_outcomes(tx: &Transaction<'_>) -> StoreResult<()> {
    let mut rows = tx.prepare(
        "SELECT request_id, state, response_id, error_class, error_message, usage, text,
                server_model, events, first_event_us, first_text_us, total_us
         FROM outcomes_v3 WHERE request_id IN (SELECT id FROM requests) ORDER BY request_id",
    )?;
    let mut rows = rows.query([])?;
    while let Some(row) = rows.next()? {
        let text: Option<String> = row.get(6)?;
        tx.prepare_cached(
            "INSERT INTO outcomes (request_id, state, response_id, error_class, error_message, usage,
                text, server_model, events, first_event_us, first_text_us, total_us)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        )?
        .execute(params![
            row.get::<_, i64>(0)?,
            row.get::<_, String>(1)?,
            row.get::<_, Option<String>>(2)?,
            row.get::<_, Option<String>>(3)?,
            row.get::<_, Option<String>>(4)?,
            row.get::<_, Option<String>>(5)?
                .map(|usage| codec::pack(usage.as_bytes(), Level::Kept)),
            text.map(|text| codec::pack(text.as_bytes(), Level::Kept)),
            row.get::<_, Option<String>>(7)?,
            row.get::<_, i64>(8)?,
            row.get::<_, Option<i64>>(9)?,
            row.get::<_, Option<i64>>(10)?,
            row.get::<_, Option<i64>>(11)?,
        ])?;
    }
    Ok(())
}
