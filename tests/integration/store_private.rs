//! The store's files are private: a new database (and its `-wal`/`-shm`) is 0600 from the
//! moment it exists, a `--bodies` folder the export creates is 0700 with 0600 files, and an
//! export never writes through a symbolic link planted at one of its file names.
#![cfg(unix)]

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use pretty_assertions::assert_eq;
use serde_json::Value;

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("store_private")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn run_json(args: &[&str], db: &Path) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .args(args)
        .arg("--db")
        .arg(db)
        .arg("--json")
        .output()
        .expect("run promptwire");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json")
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .expect("stat")
        .permissions()
        .mode()
        & 0o777
}

fn sample() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("sessions/samples/tool-calls.har")
        .display()
        .to_string()
}

#[test]
fn a_new_database_and_its_wal_are_owner_only() {
    let dir = scratch("db");
    let db = dir.join("new.db");
    let imported = run_json(&["sessions", "import", &sample()], &db);
    assert!(imported["session"].is_i64(), "{imported}");
    let mut files = vec![(db.clone(), mode(&db))];
    for suffix in ["-wal", "-shm"] {
        let path = PathBuf::from(format!("{}{suffix}", db.display()));
        if path.exists() {
            files.push((path.clone(), mode(&path)));
        }
    }
    assert_eq!(
        files,
        files
            .iter()
            .map(|(p, _)| (p.clone(), 0o600))
            .collect::<Vec<_>>()
    );
}

#[test]
fn bodies_export_is_private_and_never_follows_a_link() {
    let dir = scratch("bodies");
    let db = dir.join("s.db");
    let session = run_json(&["sessions", "import", &sample()], &db)["session"]
        .as_i64()
        .expect("session id");
    // A first export creates the folder 0700 with 0600 files.
    let out = dir.join("out");
    let id = session.to_string();
    run_json(
        &[
            "sessions",
            "export",
            &id,
            "--bodies",
            &out.display().to_string(),
        ],
        &db,
    );
    assert_eq!(mode(&out), 0o700);
    let first = out.join("0000.json");
    assert_eq!(mode(&first), 0o600);
    let body = std::fs::read(&first).expect("body");
    // A link planted at 0000.json pointing at a file of the user's: the export replaces the
    // link, and the target keeps its contents.
    let target = dir.join("precious.txt");
    std::fs::write(&target, b"do not overwrite").expect("target");
    std::fs::remove_file(&first).expect("remove");
    std::os::unix::fs::symlink(&target, &first).expect("symlink");
    run_json(
        &[
            "sessions",
            "export",
            &id,
            "--bodies",
            &out.display().to_string(),
        ],
        &db,
    );
    assert_eq!(std::fs::read(&target).expect("target"), b"do not overwrite");
    let meta = std::fs::symlink_metadata(&first).expect("stat");
    assert!(meta.file_type().is_file());
    assert_eq!(mode(&first), 0o600);
    assert_eq!(std::fs::read(&first).expect("body"), body);
}
