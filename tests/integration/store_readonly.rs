//! A database on read-only media browses (issue 15): in a folder nothing can be created in (so
//! not even the WAL's `-shm` file), with the file itself writable or not, `sessions list`,
//! `show` and `export` work, the store opens read-only with every body intact, writes are
//! refused, and `send --db` on it still sends, with one warning line.
//!
//! The folder is made read-only with `chmod 0500` (and the file `0400`). Root ignores those
//! modes: then the immutable attribute (`chattr +i`) is used instead; if that is not available
//! either the test says so and skips — the only case it does not run — except under `CI=true`,
//! where it fails (the one rule of `tests/support/shared.rs`).

#![cfg(unix)]

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use pretty_assertions::assert_eq;
use promptwire::store::{NewSession, Page, Source, Store, StoreError, seed};
use serde_json::{Value, json};

use crate::support::shared::skip;
use crate::support::upstream::{Reply, Step, Upstream};

/// A folder (and optionally its database file) made read-only; undone on drop.
struct ReadOnly {
    paths: Vec<PathBuf>,
    immutable: bool,
}

impl ReadOnly {
    /// Makes `dir` (and `file`, when given) read-only; `None` when this process can still
    /// write there whatever it does (root without `chattr`).
    fn make(dir: &Path, file: Option<&Path>) -> Option<Self> {
        let mut paths = vec![dir.to_path_buf()];
        paths.extend(file.map(Path::to_path_buf));
        for path in &paths {
            let mode = if path == dir { 0o500 } else { 0o400 };
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
        }
        let mut guard = Self {
            paths,
            immutable: false,
        };
        if !can_create_in(dir) {
            return Some(guard);
        }
        // Running as root: permission bits do not apply.
        let attr = Command::new("chattr").arg("+i").args(&guard.paths).output();
        guard.immutable = attr.is_ok_and(|o| o.status.success());
        if guard.immutable && !can_create_in(dir) {
            return Some(guard);
        }
        None
    }
}

impl Drop for ReadOnly {
    fn drop(&mut self) {
        if self.immutable {
            let _ = Command::new("chattr").arg("-i").args(&self.paths).status();
        }
        for path in &self.paths {
            let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700));
        }
    }
}

fn can_create_in(dir: &Path) -> bool {
    let probe = dir.join(".probe");
    let created = std::fs::File::create(&probe).is_ok();
    let _ = std::fs::remove_file(&probe);
    created
}

/// A seeded database (the four bundled samples), closed cleanly (no `-wal`, no `-shm`).
fn seeded(name: &str) -> (PathBuf, PathBuf) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("store_readonly")
        .join(name);
    if dir.exists() {
        let _ = Command::new("chattr")
            .arg("-R")
            .arg("-i")
            .arg(&dir)
            .status();
        let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700));
        std::fs::remove_dir_all(&dir).expect("clear scratch");
    }
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let db = dir.join("sessions.sqlite");
    let mut store = Store::open(&db).expect("create");
    seed::seed(&mut store).expect("seed");
    drop(store);
    assert!(!Path::new(&format!("{}-shm", db.display())).exists());
    (dir, db)
}

fn promptwire(args: &[&str], db: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .args(args)
        .arg("--db")
        .arg(db)
        .output()
        .expect("run promptwire")
}

fn ok_json(args: &[&str], db: &Path) -> Value {
    let out = promptwire(args, db);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

/// Everything a reader does, on a database that cannot be written where it is.
fn browse_read_only(dir: &Path, db: &Path, writable: &[Vec<u8>]) {
    let exports = dir.with_extension("exports");
    let _ = std::fs::remove_dir_all(&exports);
    std::fs::create_dir_all(&exports).expect("exports dir");

    let mut store = Store::open(db).expect("opens read-only");
    assert!(store.is_read_only());
    let sessions = store.list_sessions(Page::ALL).expect("list");
    assert_eq!(sessions.len(), 4);
    assert_eq!(read_bodies(&store), writable.to_vec());
    let refused = store.create_session(&NewSession {
        name: "x".to_string(),
        source: Source::Form,
        provider: None,
        model: None,
        created_us: 0,
    });
    assert!(
        matches!(refused, Err(StoreError::ReadOnly { .. })),
        "{refused:?}"
    );
    drop(store);

    let list = ok_json(&["sessions", "list", "--json"], db);
    assert_eq!(list.as_array().map(Vec::len), Some(4));
    let show = ok_json(&["sessions", "show", "1", "--json"], db);
    assert_eq!(show["requests"].as_array().map(Vec::len), Some(3));
    let har = exports.join("one.har");
    let har_arg = har.display().to_string();
    let exported = ok_json(
        &["sessions", "export", "1", "--har", &har_arg, "--json"],
        db,
    );
    assert_eq!(exported["requests"], json!(3));
    let bodies = exports.join("bodies");
    let bodies_arg = bodies.display().to_string();
    let out = promptwire(&["sessions", "export", "1", "--bodies", &bodies_arg], db);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_dir(&bodies).map(Iterator::count).ok(),
        Some(3)
    );

    // A send still goes out; recording is refused with one warning line.
    let sse = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sse/text-answer.sse"),
    )
    .expect("sse fixture");
    let server = Upstream::in_order(vec![Reply {
        status: 200,
        headers: vec![("content-type".to_string(), "text/event-stream".to_string())],
        steps: vec![Step::Send(sse.into())],
    }]);
    let base = server.base_url();
    let prompt = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/prompts/hello.json");
    let out = Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .arg("send")
        .arg(&prompt)
        .args(["--provider", "openai", "--base-url", &base, "--json"])
        .args(["--max-retries", "0", "--idle-timeout-secs", "10"])
        .arg("--db")
        .arg(db)
        .env("OPENAI_API_KEY", "sk-test-readonly")
        .output()
        .expect("run send");
    assert_eq!(server.received().len(), 1);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "promptwire: not recording this send: database is read-only (browsing only): {}\n",
            db.display()
        )
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last: Value = serde_json::from_str(stdout.lines().last().unwrap_or("")).expect("outcome");
    assert_eq!(last["outcome"], json!("completed"));
}

fn read_bodies(store: &Store) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for session in store.list_sessions(Page::ALL).expect("list") {
        for request in store.requests(session.id, Page::ALL).expect("requests") {
            out.push(store.body(request.id).expect("body").bytes);
        }
    }
    out
}

fn seeded_bodies(db: &Path) -> Vec<Vec<u8>> {
    let copy = db.with_extension("copy.sqlite");
    std::fs::copy(db, &copy).expect("copy");
    let store = Store::open(&copy).expect("open the copy");
    let bodies = read_bodies(&store);
    drop(store);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", copy.display()));
    }
    bodies
}

#[test]
fn a_database_in_a_read_only_folder_browses() {
    let (dir, db) = seeded("folder");
    let bodies = seeded_bodies(&db);
    assert_eq!(bodies.len(), 10);
    let Some(_guard) = ReadOnly::make(&dir, None) else {
        skip("running as root without chattr: a read-only folder cannot be made");
        return;
    };
    browse_read_only(&dir, &db, &bodies);
}

#[test]
fn a_read_only_database_in_a_read_only_folder_browses() {
    let (dir, db) = seeded("media");
    let bodies = seeded_bodies(&db);
    let Some(_guard) = ReadOnly::make(&dir, Some(&db)) else {
        skip("running as root without chattr: a read-only folder cannot be made");
        return;
    };
    browse_read_only(&dir, &db, &bodies);
}
