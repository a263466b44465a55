//! A database is data, never code, tried through the command line (a new process, so the file is
//! not one it made): a planted `AFTER INSERT ON sessions` trigger that would delete every request
//! is never run — `sessions import` is refused with one line naming the trigger, nothing is
//! deleted, and `record` will not start on it; the file still browses. A view with a recursive
//! CTE is refused for writing too and does not hang `sessions list`. A file with a damaged page
//! (fails SQLite's quick integrity check) is refused for writing. Extension loading stays off.

use crate::support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use support::cli::run;
use support::scratch;

/// A seeded database (made by this process) at a fresh path, and the sample HAR to import.
fn seeded(name: &str) -> (PathBuf, PathBuf) {
    let db = scratch(&format!("store_foreign-{name}")).join("db.sqlite");
    drop(promptwire::store::seed::open_seeded(&db).expect("seeded"));
    let har = Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions/samples/tool-calls.har");
    (db, har)
}

fn requests(db: &Path) -> i64 {
    rusqlite::Connection::open(db)
        .expect("open")
        .query_row("SELECT count(*) FROM requests", [], |row| row.get(0))
        .expect("count")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).trim_end().to_string()
}

#[test]
fn a_planted_trigger_is_never_run_and_writing_is_refused_in_one_line() {
    let (db, har) = seeded("trigger");
    rusqlite::Connection::open(&db)
        .expect("open")
        .execute_batch(
            "CREATE TRIGGER wipe AFTER INSERT ON sessions BEGIN DELETE FROM requests; END;",
        )
        .expect("plant the trigger");
    let before = requests(&db);
    assert!(before > 0);
    let db_arg = db.to_string_lossy().into_owned();
    let out = run(
        &[
            "sessions",
            "import",
            &har.to_string_lossy(),
            "--db",
            &db_arg,
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!(
            "promptwire: not writing to this database: its schema has what promptwire does not make (trigger `wipe` on `sessions`): {}",
            db.display()
        )
    );
    assert_eq!(requests(&db), before, "nothing was deleted");
    // It still browses.
    let out = run(&["sessions", "list", "--db", &db_arg], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // The recording proxy does not start on it.
    let out = run(
        &[
            "record",
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            "http://127.0.0.1:9/v1",
            "--db",
            &db_arg,
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("trigger `wipe` on `sessions`"));
}

#[test]
fn a_recursive_view_is_refused_for_writing_and_does_not_hang_the_listing() {
    let (db, har) = seeded("view");
    rusqlite::Connection::open(&db)
        .expect("open")
        .execute_batch(
            "CREATE VIEW forever AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c;",
        )
        .expect("plant the view");
    let db_arg = db.to_string_lossy().into_owned();
    let started = Instant::now();
    let out = run(&["sessions", "list", "--db", &db_arg], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(started.elapsed() < Duration::from_secs(10));
    let out = run(
        &[
            "sessions",
            "import",
            &har.to_string_lossy(),
            "--db",
            &db_arg,
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("(view `forever`)"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_database_with_a_damaged_page_is_refused_for_writing() {
    let (db, har) = seeded("damaged");
    // The `requests` table's root page, overwritten with garbage.
    let (root, page_size): (i64, i64) = {
        let conn = rusqlite::Connection::open(&db).expect("open");
        conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
            .expect("checkpoint");
        (
            conn.query_row(
                "SELECT rootpage FROM sqlite_schema WHERE name = 'requests'",
                [],
                |row| row.get(0),
            )
            .expect("root"),
            conn.query_row("PRAGMA page_size", [], |row| row.get(0))
                .expect("page size"),
        )
    };
    {
        use std::io::{Seek as _, SeekFrom, Write as _};
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .open(&db)
            .expect("file");
        let at = u64::try_from((root - 1) * page_size).expect("offset");
        file.seek(SeekFrom::Start(at)).expect("seek");
        file.write_all(&vec![0xA5; usize::try_from(page_size).expect("size")])
            .expect("garbage");
    }
    let db_arg = db.to_string_lossy().into_owned();
    let out = run(
        &[
            "sessions",
            "import",
            &har.to_string_lossy(),
            "--db",
            &db_arg,
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.starts_with("promptwire: the database is damaged (integrity check: ")
            && err.ends_with(&format!("nothing is written to it: {}", db.display())),
        "{err}"
    );
}

#[test]
fn extension_loading_stays_off_and_the_schema_is_not_trusted() {
    let conn = rusqlite::Connection::open_in_memory().expect("open");
    promptwire::store::guard::harden(&conn).expect("harden");
    let err = conn
        .query_row("SELECT load_extension('libnothing')", [], |row| {
            row.get::<_, Option<String>>(0)
        })
        .expect_err("refused");
    assert!(err.to_string().contains("not authorized"), "{err}");
    let trusted: i64 = conn
        .query_row("PRAGMA trusted_schema", [], |row| row.get(0))
        .expect("pragma");
    assert_eq!(trusted, 0);
}
