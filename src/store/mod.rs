//! The session store: every request, raw event and outcome of a session in one SQLite file (WAL
//! mode, schema versioned with `PRAGMA user_version`, forward migrations).
//!
//! A request body is cut into content-addressed texts — its input items, its top-level values
//! (`pieces.rs`) — and so are its header lines; each distinct text is stored once, packed with
//! zstd and a dictionary trained on Codex traffic (`codec.rs`), so a session grows with its new
//! items, not with the square of its turns, and a tool list sent a thousand times is stored
//! once. [`Store::body`] rebuilds any stored body as the same bytes. Raw events are kept in
//! packed chunks with every byte and arrival time (`event_chunks.rs`). Secret headers are never
//! written.
//!
//! - [`Store`]: open (refusing foreign, damaged or newer files without touching them; read-only
//!   files browse), write, page through and search sessions, delete.
//! - [`Writer`]: the one live writer of a database (one store thread per file): sends, the proxy
//!   and the replay endpoint queue their writes and never wait on SQLite; it retries a busy,
//!   full or failing database and records honestly what it had to drop.
//! - [`har`]: HAR 1.2 import/export, a directory of bodies, JSON Lines.
//! - [`prefix_input`]: a stored session as the cache-prefix analysis's input (the Sessions
//!   view and `diff --session` both read it).
//! - [`seed`]: the embedded default database, seeded from `sessions/samples/*.har`.
//! - Codex rollouts (`$CODEX_HOME/sessions`): [`Store::import_rollout_file`],
//!   [`Store::import_rollout_dir`] (progress and cancel for a worker).

pub mod agents;
mod body;
mod codec;
mod continuations;
mod error;
mod event_chunks;
pub mod guard;
pub mod har;
mod links;
pub use links::MAX_AGENT_SESSIONS;
mod listing;
mod migrate_v4;
mod otel_facts;
mod pieces;
pub mod prefix_input;
mod read;
mod rollout;
mod rollout_files;
mod schema;
pub mod seed;
pub mod send_recording;
mod sql_functions;
mod sql_text;
pub mod summary;
mod types;
mod write;
pub mod writer;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

pub use body::{ContentHash, content_hash};
pub use error::{StoreError, StoreResult};
pub use listing::{MAX_SEARCHED, SessionFilter, SessionStatus};
pub use rollout::{DEFAULT_MAX_ROLLOUT_BYTES, FolderImport, FolderProgress, RolloutImport};
pub use schema::SCHEMA_VERSION;
pub use send_recording::{AttemptRecord, SendRecording, StoredTurn};
pub use types::{
    NewRequest, NewSession, OutcomeRecord, Page, RecordedState, RequestRecord, RequestSummary,
    ResponseMeta, SessionSummary, Source, StoredBody, UnknownRecordedState, nested,
};
pub use writer::{
    Notify, OwnedRequest, Report, RequestKey, RequestWriter, SessionKey, SessionRef, Writer,
    WriterOptions, WriterStatus,
};

/// How long a writer waits for another connection's lock before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Page size of a new database file. A session database holds twelve tables and indexes, each of
/// at least one page, and mostly small packed rows; small pages keep a small database small (a
/// real two-turn Codex session: see `tests/integration/store_growth.rs`) while large ones stay fast.
const NEW_PAGE_SIZE: i64 = 512;

/// True for the errors of a database that exists but cannot be written where it is.
fn cannot_write(err: &StoreError) -> bool {
    match err {
        StoreError::CannotOpen { .. } | StoreError::ReadOnly { .. } => true,
        StoreError::Sqlite(e) => matches!(
            e.sqlite_error_code(),
            Some(
                rusqlite::ErrorCode::ReadOnly
                    | rusqlite::ErrorCode::CannotOpen
                    | rusqlite::ErrorCode::PermissionDenied
                    | rusqlite::ErrorCode::SystemIoFailure
            )
        ),
        _ => false,
    }
}

/// `path` for an SQLite `file:` URI (`%`, `?` and `#` escaped).
fn uri_path(path: &Path) -> String {
    let mut out = String::new();
    for c in path.to_string_lossy().chars() {
        match c {
            '%' => out.push_str("%25"),
            '?' => out.push_str("%3f"),
            '#' => out.push_str("%23"),
            c => out.push(c),
        }
    }
    out
}

/// An open session database.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    path: PathBuf,
    read_only: bool,
    /// Why writing is refused though the file could be written (`guard.rs`: a schema with what
    /// promptwire does not make).
    refusal: Option<String>,
}

/// Creates the empty database file readable and writable by its owner only, before SQLite opens
/// it (an empty file is a new database); SQLite gives the `-wal` and `-shm` files the database
/// file's permissions.
fn create_private(path: &Path) {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    // Any failure (a file created meanwhile, a missing folder) is left for SQLite's open to
    // report in its own words.
    let _ = options.open(path);
}

impl Store {
    /// Opens the database at `path`, creating it (and the schema) when the file does not exist.
    /// A file without write permission, or one in a folder or on media that cannot be written, is
    /// opened read-only (see [`Store::open_read_only`]): it browses, writes fail with
    /// [`StoreError::ReadOnly`]. A file that is not SQLite, a foreign SQLite database, or one with
    /// a newer schema is refused and left untouched.
    pub fn open(path: impl AsRef<Path>) -> StoreResult<Self> {
        let path = path.as_ref().to_path_buf();
        let existing = match std::fs::metadata(&path) {
            Ok(meta) if meta.is_dir() => {
                return Err(StoreError::NotADatabase { path });
            }
            Ok(meta) => Some(meta),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(StoreError::io(e, path)),
        };
        let read_only = existing
            .as_ref()
            .is_some_and(|meta| meta.permissions().readonly());
        if read_only {
            return Self::open_read_only(path);
        }
        match Self::open_writable(&path, existing.is_none()) {
            // Read-only media or folder (the file, its `-wal` or `-shm` cannot be written):
            // browse it read-only instead; if that fails too, its error says more.
            Err(e) if existing.is_some() && cannot_write(&e) => Self::open_read_only(path),
            opened => opened,
        }
    }

    fn open_writable(path: &Path, create: bool) -> StoreResult<Self> {
        let path = path.to_path_buf();
        let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        if create {
            flags |= OpenFlags::SQLITE_OPEN_CREATE;
            create_private(&path);
        }
        let mut conn =
            Connection::open_with_flags(&path, flags).map_err(|e| schema::classify(e, &path))?;
        guard::harden(&conn)?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        let version = schema::check(&conn, &path)?;
        // A file this process did not make is checked before anything is written to it.
        if !create && !guard::is_trusted(&path) {
            if let Some(problem) = guard::quick_check(&conn) {
                return Err(StoreError::Corrupt {
                    problem: problem.lines().next().unwrap_or_default().to_string(),
                    path,
                });
            }
            let foreign = guard::foreign_objects(&conn, version == SCHEMA_VERSION)
                .map_err(|e| schema::classify(e, &path))?;
            if let Some(foreign) = foreign {
                drop(conn);
                let mut store = Self::open_read_only(&path)?;
                store.refusal = Some(foreign);
                return Ok(store);
            }
        }
        if version == 0 {
            // A new file: smaller pages before the first table (see `NEW_PAGE_SIZE`).
            conn.pragma_update(None, "page_size", NEW_PAGE_SIZE)?;
            // Pages freed (a deleted session, event chunks packed again) go back to the
            // filesystem at commit instead of staying in the file.
            conn.pragma_update(None, "auto_vacuum", "FULL")?;
        }
        let mode: String = conn
            .query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))
            .map_err(|e| schema::classify(e, &path))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::Damaged(format!(
                "could not switch to WAL mode (got {mode})"
            )));
        }
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        sql_functions::register(&conn)?;
        schema::migrate(&mut conn, version)?;
        guard::trust(&path);
        Ok(Self {
            conn,
            path,
            read_only: false,
            refusal: None,
        })
    }

    /// Opens `path` read-only, whatever its permissions (`SQLITE_OPEN_READONLY`; when not even
    /// the WAL's `-shm` file can be made beside it, as immutable: `?mode=ro&immutable=1`). The
    /// schema must be current.
    pub fn open_read_only(path: impl AsRef<Path>) -> StoreResult<Self> {
        let path = path.as_ref().to_path_buf();
        if !path.exists() {
            return Err(StoreError::io(
                std::io::Error::from(std::io::ErrorKind::NotFound),
                path,
            ));
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn =
            Connection::open_with_flags(&path, flags).map_err(|e| schema::classify(e, &path))?;
        let conn = match schema::check(&conn, &path) {
            Ok(_) => conn,
            // A WAL database whose -shm cannot be created (read-only directory): open it as
            // immutable instead.
            Err(StoreError::CannotOpen { .. }) => {
                drop(conn);
                let uri = format!("file:{}?mode=ro&immutable=1", uri_path(&path));
                Connection::open_with_flags(uri, flags | OpenFlags::SQLITE_OPEN_URI)
                    .map_err(|e| schema::classify(e, &path))?
            }
            Err(e) => return Err(e),
        };
        guard::harden(&conn)?;
        guard::bound_statements(&conn);
        sql_functions::register(&conn)?;
        let version = schema::check(&conn, &path)?;
        if version != SCHEMA_VERSION {
            return Err(StoreError::Damaged(format!(
                "schema version {version} needs upgrading, which a read-only file does not allow: {}",
                path.display()
            )));
        }
        Ok(Self {
            conn,
            path,
            read_only: true,
            refusal: None,
        })
    }

    /// An in-memory database (for tests and previews).
    pub fn open_in_memory() -> StoreResult<Self> {
        let mut conn = Connection::open_in_memory()?;
        guard::harden(&conn)?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        sql_functions::register(&conn)?;
        schema::migrate(&mut conn, 0)?;
        Ok(Self {
            conn,
            path: PathBuf::from(":memory:"),
            read_only: false,
            refusal: None,
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes the database takes on disk: its file and its write-ahead log (0 in memory).
    pub fn disk_bytes(&self) -> u64 {
        ["", "-wal"]
            .iter()
            .filter_map(|suffix| std::fs::metadata(format!("{}{suffix}", self.path.display())).ok())
            .map(|meta| meta.len())
            .sum()
    }

    /// True when opened read-only.
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// How long a write waits for another connection's lock before failing with
    /// `SQLITE_BUSY` (5 s when opened).
    pub fn set_busy_timeout(&self, timeout: Duration) -> StoreResult<()> {
        self.conn.busy_timeout(timeout)?;
        Ok(())
    }

    /// Fails when nothing may be written: the file is read-only, or writing to it is refused
    /// (its schema has what promptwire does not make; the error names it).
    pub fn ensure_writable(&self) -> StoreResult<()> {
        if let Some(why) = &self.refusal {
            return Err(StoreError::Refused {
                why: why.clone(),
                path: self.path.clone(),
            });
        }
        if self.read_only {
            return Err(StoreError::ReadOnly {
                path: self.path.clone(),
            });
        }
        Ok(())
    }

    fn writable(&mut self) -> StoreResult<&mut Connection> {
        self.ensure_writable()?;
        Ok(&mut self.conn)
    }
}
