//! A database is data, never code. Every connection is opened with `trusted_schema` off and in
//! defensive mode (SQLite's own settings: functions in the schema cannot have side effects, the
//! schema cannot be written to directly), and extension loading stays off (rusqlite never turns
//! it on). Before promptwire writes to a database it did not create in this process, the file's
//! schema is checked against the one it makes: a trigger, a view, or a table or index it does
//! not make is named in one line and writing is refused (the file still browses) — so a planted
//! `AFTER INSERT` trigger never runs — and a file that fails SQLite's quick integrity check is
//! refused for writing as it is for reading. A connection to a database that is browsed only
//! bounds every statement's running time with a progress handler, so a crafted file cannot hang
//! a listing.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use rusqlite::Connection;
use rusqlite::config::DbConfig;

use super::error::StoreResult;
use super::schema::SCHEMA;

/// Longest a statement on a browsed-only database may run.
pub const MAX_STATEMENT_TIME: Duration = Duration::from_secs(20);

/// SQLite virtual machine steps between two calls of the progress handler.
const PROGRESS_STEPS: std::os::raw::c_int = 10_000;

/// A gap this long between two calls of the progress handler means a new statement began.
const STATEMENT_GAP: Duration = Duration::from_millis(50);

/// Turns off what lets a database file run code: untrusted schema functions, direct schema
/// writes. Extension loading is never enabled.
pub fn harden(conn: &Connection) -> StoreResult<()> {
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA, false)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)?;
    conn.pragma_update(None, "trusted_schema", false)?;
    Ok(())
}

/// Bounds every statement on `conn` to [`MAX_STATEMENT_TIME`] of continuous running (the
/// statement fails as interrupted past it).
pub fn bound_statements(conn: &Connection) {
    let mut last = Instant::now();
    let mut began = last;
    conn.progress_handler(
        PROGRESS_STEPS,
        Some(move || {
            let now = Instant::now();
            if now.duration_since(last) > STATEMENT_GAP {
                began = now;
            }
            last = now;
            now.duration_since(began) > MAX_STATEMENT_TIME
        }),
    );
}

fn known() -> &'static Mutex<HashSet<PathBuf>> {
    static KNOWN: OnceLock<Mutex<HashSet<PathBuf>>> = OnceLock::new();
    KNOWN.get_or_init(|| Mutex::new(HashSet::new()))
}

fn key(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Remembers that this process created (or checked) the database at `path`.
pub fn trust(path: &Path) {
    known()
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(key(path));
}

/// True when this process created the database at `path` or checked it already.
pub fn is_trusted(path: &Path) -> bool {
    known()
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .contains(&key(path))
}

/// The schema objects promptwire makes: (type, name) of every table and index of [`SCHEMA`].
fn expected() -> &'static HashSet<(String, String)> {
    static EXPECTED: OnceLock<HashSet<(String, String)>> = OnceLock::new();
    EXPECTED.get_or_init(|| {
        Connection::open_in_memory()
            .and_then(|conn| {
                conn.execute_batch(SCHEMA)?;
                objects(&conn)
            })
            .map(|list| {
                list.into_iter()
                    .map(|(kind, name, _)| (kind, name))
                    .collect()
            })
            .unwrap_or_default()
    })
}

/// (type, name, table) of every object in the schema.
fn objects(conn: &Connection) -> rusqlite::Result<Vec<(String, String, String)>> {
    let mut stmt = conn.prepare("SELECT type, name, tbl_name FROM sqlite_schema")?;
    let rows = stmt.query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?;
    rows.collect()
}

/// What in the schema promptwire did not make, in one line (`None`: nothing). `current` is
/// true when the file is at the schema version this build writes (an older one is only checked
/// for triggers and views, which no version ever made).
pub fn foreign_objects(conn: &Connection, current: bool) -> rusqlite::Result<Option<String>> {
    let expected = expected();
    let mut foreign = Vec::new();
    for (kind, name, table) in objects(conn)? {
        let ours = match kind.as_str() {
            "trigger" | "view" => false,
            _ if !current => true,
            // SQLite's own statistics tables (ANALYZE).
            "table" if name.starts_with("sqlite_stat") => true,
            _ => expected.contains(&(kind.clone(), name.clone())),
        };
        if !ours {
            foreign.push(match kind.as_str() {
                "trigger" | "index" => format!("{kind} `{name}` on `{table}`"),
                _ => format!("{kind} `{name}`"),
            });
        }
    }
    if current {
        let present: HashSet<(String, String)> = objects(conn)?
            .into_iter()
            .map(|(kind, name, _)| (kind, name))
            .collect();
        for (kind, name) in expected {
            if kind == "table" && !present.contains(&(kind.clone(), name.clone())) {
                foreign.push(format!("no table `{name}`"));
            }
        }
    }
    if foreign.is_empty() {
        return Ok(None);
    }
    foreign.sort();
    let shown: Vec<&str> = foreign.iter().take(3).map(String::as_str).collect();
    let more = match foreign.len() {
        n if n > 3 => format!(" and {} more", n - 3),
        _ => String::new(),
    };
    Ok(Some(format!(
        "its schema has what promptwire does not make ({}{more})",
        shown.join(", ")
    )))
}

/// SQLite's quick integrity check: `None` when it passes, else its first complaint.
pub fn quick_check(conn: &Connection) -> Option<String> {
    match conn.query_row("PRAGMA quick_check(1)", [], |row| row.get::<_, String>(0)) {
        Ok(text) if text == "ok" => None,
        Ok(text) => Some(text),
        Err(e) => Some(e.to_string()),
    }
}
