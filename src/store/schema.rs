//! The schema, its version (`PRAGMA user_version`) and forward migrations, and the checks made
//! before anything is written: a file that is not SQLite, a foreign SQLite database or a newer
//! schema is refused without being touched. A new file gets [`SCHEMA`] at once; an older one
//! climbs the SQL migrations to version 3, then `migrate_v4.rs` rewrites it into schema 4, and
//! schema 5 adds what a recording lost to each outcome, schema 6 the agent a session is (its
//! thread, the thread that spawned it, and how).

use std::path::Path;

use rusqlite::Connection;

use super::error::{StoreError, StoreResult};

/// The schema version this build writes. Migrations take any older version up to it.
pub const SCHEMA_VERSION: i64 = 6;

/// Schema 5, what a new database is made with (and what `migrate_v4.rs` builds beside the tables
/// of schema 3 before it drops them: hence `IF NOT EXISTS`). SQLite keeps this text in the file,
/// so its comments live here instead:
///
/// - `sessions`: `source` is form / send / proxy / import; `created_us` Unix microseconds;
///   `replay_of` the recording a replay was served from (no index: sessions are few);
///   `thread` the client's thread id (Codex's `thread-id`), `parent_thread` the thread that
///   spawned it and `agent_kind` how (`x-openai-subagent`: `review`, `collab_spawn`, …), all
///   NULL when the recording does not say (schema 6). A child's parent is the session whose
///   `thread` is its `parent_thread`: a link by text, so a child stored first finds its
///   parent once the parent is stored (no index either: sessions are few, and every b-tree
///   costs a page).
/// - `texts`: content-addressed texts — input items, body pieces (`pieces.rs`), header lines
///   `["name","value"]` — each stored once; `hash` is the content hash of the unpacked text,
///   `data` packed (`codec.rs`). Which request uses which is only in the requests' lists (search
///   and deleting scan them).
/// - `requests`: `body_pieces` text ids as LEB128 varints, 0 marking the input array;
///   `input_items` the items' text ids in order; `body_verbatim` the packed exact bytes of a body
///   that is not a JSON object; `headers` / `response_headers` text ids of header lines (secret
///   ones never stored; `response_headers` NULL before the response); `response_body` a packed
///   non-SSE (error) body; `extra` a JSON object; times in microseconds (`started_us` Unix,
///   `wait_us` to the response headers, `total_us` to the end).
/// - `events`: raw events in packed chunks of consecutive events (`event_chunks.rs`);
///   `raw_bytes` is a chunk's unpacked size.
/// - `outcomes`: `state` completed / failed / open; `usage` packed JSON; `text` the packed output
///   text; `lost_events` raw events that passed but could not be recorded, `lost_reason` why
///   (schema 5: the recording is incomplete when either is set).
///
/// Nine b-trees in all, each at least one page: a small database stays small.
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS sessions (
  id INTEGER PRIMARY KEY, name TEXT NOT NULL, source TEXT NOT NULL, provider TEXT, model TEXT,
  created_us INTEGER NOT NULL, replay_of INTEGER REFERENCES sessions(id) ON DELETE SET NULL,
  thread TEXT, parent_thread TEXT, agent_kind TEXT);
CREATE INDEX IF NOT EXISTS sessions_by_created ON sessions(created_us DESC, id DESC);
CREATE TABLE IF NOT EXISTS texts (
  id INTEGER PRIMARY KEY, hash BLOB NOT NULL UNIQUE, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS requests (
  id INTEGER PRIMARY KEY,
  session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  position INTEGER NOT NULL, dialect TEXT, rules TEXT, provider TEXT, model TEXT,
  method TEXT NOT NULL, url TEXT NOT NULL, body_pieces BLOB, input_items BLOB NOT NULL,
  body_verbatim BLOB, body_bytes INTEGER NOT NULL, headers BLOB NOT NULL, extra TEXT,
  started_us INTEGER, status INTEGER, response_headers BLOB, response_body BLOB,
  wait_us INTEGER, total_us INTEGER, UNIQUE (session_id, position));
CREATE TABLE IF NOT EXISTS events (
  request_id INTEGER NOT NULL REFERENCES requests(id) ON DELETE CASCADE,
  first_seq INTEGER NOT NULL, count INTEGER NOT NULL, raw_bytes INTEGER NOT NULL,
  data BLOB NOT NULL, PRIMARY KEY (request_id, first_seq)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS outcomes (
  request_id INTEGER PRIMARY KEY REFERENCES requests(id) ON DELETE CASCADE,
  state TEXT NOT NULL, response_id TEXT, error_class TEXT, error_message TEXT, usage BLOB,
  text BLOB, server_model TEXT, events INTEGER NOT NULL, first_event_us INTEGER,
  first_text_us INTEGER, total_us INTEGER, lost_events INTEGER NOT NULL DEFAULT 0,
  lost_reason TEXT);
";

/// Migrations in order: `MIGRATIONS[n]` takes version `n` to `n + 1` (up to schema 3; 3 → 4 is
/// `migrate_v4::run`).
const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE sessions (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL,
    source      TEXT NOT NULL,          -- form / send / proxy / import
    provider    TEXT,
    model       TEXT,
    created_us  INTEGER NOT NULL        -- Unix time, microseconds
);
CREATE INDEX sessions_by_created ON sessions(created_us DESC, id DESC);

-- Input items, content-addressed: each distinct item JSON stored once.
CREATE TABLE items (
    id    INTEGER PRIMARY KEY,
    hash  BLOB NOT NULL UNIQUE,
    json  TEXT NOT NULL
);

-- Non-input body fields (an ordered JSON object), content-addressed like items.
CREATE TABLE fields (
    id    INTEGER PRIMARY KEY,
    hash  BLOB NOT NULL UNIQUE,
    json  TEXT NOT NULL
);

CREATE TABLE requests (
    id               INTEGER PRIMARY KEY,
    session_id       INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    position         INTEGER NOT NULL,
    dialect          TEXT,
    rules            TEXT,
    provider         TEXT,
    model            TEXT,
    method           TEXT NOT NULL,
    url              TEXT NOT NULL,
    fields_id        INTEGER REFERENCES fields(id),
    input_at         INTEGER,           -- index of `input` among the body keys
    input_items      BLOB NOT NULL,     -- item ids, LEB128 varints, in order
    body_verbatim    BLOB,              -- exact bytes when the rebuilt value would differ
    body_bytes       INTEGER NOT NULL,
    headers          TEXT NOT NULL,     -- JSON [[name, value]], secret headers dropped
    extra            TEXT,              -- JSON object: anything else worth keeping
    started_us       INTEGER,           -- Unix time, microseconds
    status           INTEGER,
    response_headers TEXT,              -- JSON [[name, value]]
    response_body    TEXT,              -- a non-SSE (error) response body
    wait_us          INTEGER,           -- to the response headers
    total_us         INTEGER,           -- to the end of the response
    UNIQUE (session_id, position)
);

-- Which items a session uses (for search and for collecting unused items on delete).
CREATE TABLE session_items (
    session_id  INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    item_id     INTEGER NOT NULL,
    PRIMARY KEY (session_id, item_id)
) WITHOUT ROWID;
CREATE INDEX session_items_by_item ON session_items(item_id);

CREATE TABLE events (
    request_id   INTEGER NOT NULL REFERENCES requests(id) ON DELETE CASCADE,
    seq          INTEGER NOT NULL,
    received_us  INTEGER NOT NULL,     -- from the start of the request
    event        TEXT,                 -- SSE `event:` name
    data         TEXT NOT NULL
);
CREATE UNIQUE INDEX events_by_request ON events(request_id, seq);

CREATE TABLE outcomes (
    request_id      INTEGER PRIMARY KEY REFERENCES requests(id) ON DELETE CASCADE,
    state           TEXT NOT NULL,     -- completed / failed / open
    response_id     TEXT,
    error_class     TEXT,
    error_message   TEXT,
    usage           TEXT,              -- JSON
    text            TEXT,
    server_model    TEXT,
    events          INTEGER NOT NULL,
    first_event_us  INTEGER,
    first_text_us   INTEGER,
    total_us        INTEGER
);
"#,
    // 1 → 2: a replay session points at the recording it was served from (issue 11).
    r#"
ALTER TABLE sessions ADD COLUMN replay_of INTEGER REFERENCES sessions(id) ON DELETE SET NULL;
CREATE INDEX sessions_by_replay_of ON sessions(replay_of) WHERE replay_of IS NOT NULL;
"#,
    // 2 → 3: bodies cut into content-addressed pieces (issue 15, `pieces.rs`): a request written
    // from now on has `body_pieces` instead of `fields_id`; older rows keep theirs and rebuild
    // as before.
    r#"
CREATE TABLE pieces (
    id    INTEGER PRIMARY KEY,
    hash  BLOB NOT NULL UNIQUE,
    text  TEXT NOT NULL
);
ALTER TABLE requests ADD COLUMN body_pieces BLOB;  -- piece ids, LEB128 varints; 0 = the input array
-- Which pieces a session uses (for collecting unused pieces on delete).
CREATE TABLE session_pieces (
    session_id  INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    piece_id    INTEGER NOT NULL,
    PRIMARY KEY (session_id, piece_id)
) WITHOUT ROWID;
CREATE INDEX session_pieces_by_piece ON session_pieces(piece_id);
"#,
];

/// Reads the schema version, refusing files that are not promptwire databases.
pub fn check(conn: &Connection, path: &Path) -> StoreResult<i64> {
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .map_err(|e| classify(e, path))?;
    if version > SCHEMA_VERSION {
        return Err(StoreError::TooNew {
            found: version,
            supported: SCHEMA_VERSION,
            path: path.to_path_buf(),
        });
    }
    if version == 0 {
        let tables: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
                [],
                |row| row.get(0),
            )
            .map_err(|e| classify(e, path))?;
        if tables > 0 {
            return Err(StoreError::Foreign {
                path: path.to_path_buf(),
            });
        }
    }
    Ok(version)
}

/// Makes a new database's schema, or applies the migrations from `version` up to
/// [`SCHEMA_VERSION`], each in one transaction.
pub fn migrate(conn: &mut Connection, mut version: i64) -> StoreResult<()> {
    if version == 0 {
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let current: i64 = tx.query_row("PRAGMA user_version", [], |row| row.get(0))?;
        if current == 0 {
            tx.execute_batch(SCHEMA)?;
            tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
            tx.commit()?;
            return Ok(());
        }
        version = current;
    }
    while version < SCHEMA_VERSION {
        if version == 3 {
            super::migrate_v4::run(conn)?;
            version = 4;
            continue;
        }
        if version == 4 {
            migrate_v5(conn)?;
            version = 5;
            continue;
        }
        if version == 5 {
            migrate_v6(conn)?;
            version = 6;
            continue;
        }
        let index = usize::try_from(version).unwrap_or(usize::MAX);
        let Some(sql) = MIGRATIONS.get(index) else {
            break;
        };
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        // Another process may have migrated between our check and our lock.
        let current: i64 = tx.query_row("PRAGMA user_version", [], |row| row.get(0))?;
        if current != version {
            version = current;
            continue;
        }
        tx.execute_batch(sql)?;
        version += 1;
        tx.pragma_update(None, "user_version", version)?;
        tx.commit()?;
    }
    Ok(())
}

/// Schema 4 → 5: the outcome says what the recording lost. (A file `migrate_v4` just built
/// already has the columns: its `outcomes` comes from [`SCHEMA`].)
fn migrate_v5(conn: &mut Connection) -> StoreResult<()> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let current: i64 = tx.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    if current != 4 {
        return Ok(());
    }
    let has_column: bool = tx.query_row(
        "SELECT count(*) > 0 FROM pragma_table_info('outcomes') WHERE name = 'lost_events'",
        [],
        |row| row.get(0),
    )?;
    if !has_column {
        tx.execute_batch(
            "ALTER TABLE outcomes ADD COLUMN lost_events INTEGER NOT NULL DEFAULT 0;
             ALTER TABLE outcomes ADD COLUMN lost_reason TEXT;",
        )?;
    }
    tx.pragma_update(None, "user_version", 5)?;
    tx.commit()?;
    Ok(())
}

/// Schema 5 → 6: a session says which agent it is (its thread, its parent's thread, its kind).
/// (A file `migrate_v4` just built already has the columns: its `sessions` comes from
/// [`SCHEMA`].)
fn migrate_v6(conn: &mut Connection) -> StoreResult<()> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let current: i64 = tx.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    if current != 5 {
        return Ok(());
    }
    let has_column: bool = tx.query_row(
        "SELECT count(*) > 0 FROM pragma_table_info('sessions') WHERE name = 'thread'",
        [],
        |row| row.get(0),
    )?;
    if !has_column {
        tx.execute_batch(
            "ALTER TABLE sessions ADD COLUMN thread TEXT;
             ALTER TABLE sessions ADD COLUMN parent_thread TEXT;
             ALTER TABLE sessions ADD COLUMN agent_kind TEXT;",
        )?;
    }
    tx.pragma_update(None, "user_version", 6)?;
    tx.commit()?;
    Ok(())
}

/// Turns SQLite's "not a database" into a clear error about `path`.
pub fn classify(err: rusqlite::Error, path: &Path) -> StoreError {
    match err.sqlite_error_code() {
        Some(rusqlite::ErrorCode::NotADatabase) | Some(rusqlite::ErrorCode::DatabaseCorrupt) => {
            StoreError::NotADatabase {
                path: path.to_path_buf(),
            }
        }
        Some(rusqlite::ErrorCode::CannotOpen) => StoreError::CannotOpen {
            path: path.to_path_buf(),
        },
        _ => StoreError::Sqlite(err),
    }
}
