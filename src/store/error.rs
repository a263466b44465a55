//! Errors of the session store: one enum, each message a single line that names what failed and
//! (last) the path involved.

use std::path::PathBuf;

/// Everything that can go wrong opening, reading or writing a session database.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file exists but is not an SQLite database (or is damaged).
    #[error("not a promptwire database (not SQLite or damaged): {path}")]
    NotADatabase {
        /// The file.
        path: PathBuf,
    },
    /// The file cannot be opened or created (missing directory, no permission).
    #[error("cannot open or create the database: {path}")]
    CannotOpen {
        /// The file.
        path: PathBuf,
    },
    /// An SQLite database that was not made by promptwire.
    #[error("an SQLite database, but not a promptwire one: {path}")]
    Foreign {
        /// The file.
        path: PathBuf,
    },
    /// The schema is newer than this build understands.
    #[error(
        "database schema version {found} is newer than this promptwire supports ({supported}); use a newer promptwire: {path}"
    )]
    TooNew {
        /// Version in the file.
        found: i64,
        /// Newest version this build knows.
        supported: i64,
        /// The file.
        path: PathBuf,
    },
    /// Writing to a database whose schema has what promptwire does not make (a trigger, a
    /// view, a foreign table) is refused; `why` names it.
    #[error("not writing to this database: {why}: {path}")]
    Refused {
        /// What is foreign.
        why: String,
        /// The file.
        path: PathBuf,
    },
    /// The file fails SQLite's quick integrity check.
    #[error(
        "the database is damaged (integrity check: {problem}); nothing is written to it: {path}"
    )]
    Corrupt {
        /// SQLite's first complaint.
        problem: String,
        /// The file.
        path: PathBuf,
    },
    /// A write was attempted on a database opened read-only.
    #[error("database is read-only (browsing only): {path}")]
    ReadOnly {
        /// The file.
        path: PathBuf,
    },
    /// No session with this id.
    #[error("no session {0}")]
    NoSession(i64),
    /// No request with this id.
    #[error("no request {0}")]
    NoRequest(i64),
    /// Stored data that does not decode (a damaged row).
    #[error("damaged record: {0}")]
    Damaged(String),
    /// A file to import that cannot be understood.
    #[error("{message}: {path}")]
    BadImport {
        /// What is wrong.
        message: String,
        /// The file.
        path: PathBuf,
    },
    /// Redaction could not run on `what` (failed closed): nothing of it was written.
    #[error("not written: {what}: {source}")]
    Redaction {
        /// What was to be written (`request body`, `HAR export`, …).
        what: &'static str,
        /// Why it could not be redacted.
        source: crate::core::redact::RedactError,
    },
    /// The live recorder's thread stopped.
    /// A long operation (an import) was cancelled by its caller; nothing of it was kept.
    #[error("cancelled: nothing was imported")]
    Cancelled,
    #[error("the recorder stopped: {0}")]
    RecorderStopped(String),
    /// SQLite reported an error.
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// A file could not be read or written.
    #[error("{source}: {path}")]
    Io {
        /// The I/O error.
        source: std::io::Error,
        /// The file.
        path: PathBuf,
    },
}

impl StoreError {
    /// A refused redaction of `what`.
    pub fn redaction(what: &'static str) -> impl FnOnce(crate::core::redact::RedactError) -> Self {
        move |source| Self::Redaction { what, source }
    }

    /// An I/O error about `path`.
    pub fn io(source: std::io::Error, path: impl Into<PathBuf>) -> Self {
        Self::Io {
            source,
            path: path.into(),
        }
    }
}

/// Result of store operations.
pub type StoreResult<T> = Result<T, StoreError>;
