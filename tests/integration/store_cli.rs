//! `promptwire sessions …` as scripts use it: the JSON contracts of `list`, `import` and
//! `export --bodies`, and the refusals — a corrupt or non-SQLite file, a newer schema, a
//! read-only file — each one line on stderr, exit status 1, the file left as it was; a
//! read-only database still browses.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use pretty_assertions::assert_eq;
use serde_json::Value;

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("store_cli")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .args(args)
        .output()
        .expect("run promptwire")
}

fn ok_json(args: &[&str]) -> Value {
    let out = run(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

fn sample(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("sessions/samples")
        .join(name)
        .display()
        .to_string()
}

/// Asserts a one-line error on stderr, exit status 1, no panic.
fn assert_user_error(out: &Output, contains: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "stderr: {stderr}");
    assert!(stderr.contains(contains), "stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "stderr: {stderr}");
}

#[test]
fn import_list_show_export_delete() {
    let dir = scratch("contract");
    let db = dir.join("s.sqlite").display().to_string();
    let har = sample("tool-calls.har");
    let imported = ok_json(&["sessions", "import", &har, "--db", &db, "--json"]);
    assert_eq!(imported, serde_json::json!({"session": 1, "requests": 3}));
    let list = ok_json(&["sessions", "list", "--db", &db, "--json"]);
    assert_eq!(
        list,
        serde_json::json!([{"id": 1, "name": "tool-calls", "source": "import", "model": "gpt-5.5", "requests": 3, "created_at": "2026-11-20T10:00:00.000Z", "interrupted": 0, "unanswered": 0,
            // The thread its requests name (a root: no parent, no kind).
            "thread": "0196a2c2-0000-7000-8000-00000000abcd", "parent_thread": null, "agent_kind": null, "parent": null}])
    );
    let show = ok_json(&["sessions", "show", "1", "--db", &db, "--json"]);
    assert_eq!(show["requests"].as_array().map(Vec::len), Some(3));
    assert_eq!(show["requests"][2]["state"], "completed");
    assert_eq!(show["requests"][2]["outcome"], "completed");

    // Bodies: one file per request, in order, each the exact body from the HAR.
    let bodies = dir.join("bodies");
    let out = run(&[
        "sessions",
        "export",
        "1",
        "--bodies",
        &bodies.display().to_string(),
        "--db",
        &db,
    ]);
    assert!(out.status.success());
    let har_value: Value =
        serde_json::from_str(&std::fs::read_to_string(&har).expect("read har")).expect("har json");
    for i in 0..3 {
        let exported = std::fs::read(bodies.join(format!("{i:04}.json"))).expect("body file");
        let original = har_value["log"]["entries"][i]["request"]["postData"]["text"]
            .as_str()
            .expect("body text");
        assert_eq!(String::from_utf8_lossy(&exported), original);
    }
    assert!(!bodies.join("0003.json").exists());

    // HAR and JSON Lines, then re-import of our own HAR gives the same bodies.
    let har_out = dir.join("out.har").display().to_string();
    let jsonl_out = dir.join("out.jsonl").display().to_string();
    assert!(
        run(&["sessions", "export", "1", "--har", &har_out, "--db", &db])
            .status
            .success()
    );
    assert!(
        run(&[
            "sessions", "export", "1", "--jsonl", &jsonl_out, "--db", &db
        ])
        .status
        .success()
    );
    assert_eq!(
        std::fs::read_to_string(&jsonl_out)
            .expect("jsonl")
            .lines()
            .count(),
        3
    );
    let again = ok_json(&["sessions", "import", &har_out, "--db", &db, "--json"]);
    assert_eq!(again, serde_json::json!({"session": 2, "requests": 3}));
    let bodies2 = dir.join("bodies2");
    assert!(
        run(&[
            "sessions",
            "export",
            "2",
            "--bodies",
            &bodies2.display().to_string(),
            "--db",
            &db
        ])
        .status
        .success()
    );
    for i in 0..3 {
        let name = format!("{i:04}.json");
        assert_eq!(
            std::fs::read(bodies.join(&name)).expect("a"),
            std::fs::read(bodies2.join(&name)).expect("b")
        );
    }

    assert!(
        run(&["sessions", "delete", "1", "--db", &db])
            .status
            .success()
    );
    let list = ok_json(&["sessions", "list", "--db", &db, "--json"]);
    assert_eq!(list.as_array().map(Vec::len), Some(1));
    assert_user_error(
        &run(&["sessions", "show", "1", "--db", &db]),
        "no session 1",
    );
    // No format given: a usage error.
    assert_eq!(
        run(&["sessions", "export", "2", "--db", &db]).status.code(),
        Some(1)
    );
}

#[test]
fn not_a_database_is_refused_and_left_untouched() {
    let dir = scratch("corrupt");
    let text = dir.join("notes.sqlite");
    let contents = b"these are my notes, not a database\n".repeat(200);
    std::fs::write(&text, &contents).expect("write");
    let damaged = dir.join("damaged.sqlite");
    let mut header = b"SQLite format 3\0".to_vec();
    header.extend(std::iter::repeat_n(0xA5u8, 8192));
    std::fs::write(&damaged, &header).expect("write");
    for (path, bytes) in [(&text, &contents), (&damaged, &header)] {
        let db = path.display().to_string();
        for args in [
            vec!["sessions", "list", "--db", &db],
            vec!["sessions", "import", "/dev/null", "--db", &db],
        ] {
            let out = run(&args);
            assert_user_error(&out, "not a promptwire database");
            assert_eq!(&std::fs::read(path).expect("read back"), bytes);
        }
    }
    // A HAR that is not one: refused, nothing added.
    let db = dir.join("ok.sqlite").display().to_string();
    let bad = dir.join("bad.har");
    std::fs::write(&bad, b"{\"log\": {}}").expect("write");
    assert_user_error(
        &run(&[
            "sessions",
            "import",
            &bad.display().to_string(),
            "--db",
            &db,
        ]),
        "not a HAR file",
    );
    assert_eq!(
        ok_json(&["sessions", "list", "--db", &db, "--json"]),
        serde_json::json!([])
    );
}

#[test]
fn newer_schema_and_foreign_databases_are_refused() {
    let dir = scratch("versions");
    let newer = dir.join("newer.sqlite");
    {
        let conn = rusqlite::Connection::open(&newer).expect("create");
        conn.execute_batch("CREATE TABLE future (x); PRAGMA user_version = 99;")
            .expect("setup");
    }
    let before = std::fs::read(&newer).expect("read");
    let out = run(&["sessions", "list", "--db", &newer.display().to_string()]);
    assert_user_error(&out, "schema version 99 is newer");
    assert_eq!(std::fs::read(&newer).expect("read"), before);

    let foreign = dir.join("foreign.sqlite");
    {
        let conn = rusqlite::Connection::open(&foreign).expect("create");
        conn.execute_batch("CREATE TABLE contacts (name TEXT);")
            .expect("setup");
    }
    let out = run(&["sessions", "list", "--db", &foreign.display().to_string()]);
    assert_user_error(&out, "not a promptwire one");
}

#[test]
fn a_read_only_database_browses_but_refuses_writes() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = scratch("readonly");
    let db_path = dir.join("ro.sqlite");
    let db = db_path.display().to_string();
    ok_json(&[
        "sessions",
        "import",
        &sample("lite-image.har"),
        "--db",
        &db,
        "--json",
    ]);
    std::fs::set_permissions(&db_path, std::fs::Permissions::from_mode(0o444)).expect("chmod");
    let before = std::fs::read(&db_path).expect("read");
    let list = ok_json(&["sessions", "list", "--db", &db, "--json"]);
    assert_eq!(list.as_array().map(Vec::len), Some(1));
    let show = ok_json(&["sessions", "show", "1", "--db", &db, "--json"]);
    assert_eq!(show["session"]["name"], "lite-image");
    let har = dir.join("ro.har").display().to_string();
    assert!(
        run(&["sessions", "export", "1", "--har", &har, "--db", &db])
            .status
            .success()
    );
    assert_user_error(&run(&["sessions", "delete", "1", "--db", &db]), "read-only");
    assert_user_error(
        &run(&["sessions", "import", &sample("lite-image.har"), "--db", &db]),
        "read-only",
    );
    assert_eq!(std::fs::read(&db_path).expect("read"), before);
}

#[test]
fn a_database_in_a_missing_directory_is_a_clear_error() {
    let dir = scratch("missing");
    let db = dir.join("no/such/dir/x.sqlite").display().to_string();
    assert_user_error(
        &run(&["sessions", "list", "--db", &db]),
        "cannot open or create the database",
    );
}

/// The import line counts its requests in the right number: one request, three requests.
#[test]
fn import_lines_count_requests_in_the_right_number() {
    let dir = scratch("import_counts");
    let db = dir.join("s.sqlite").display().to_string();
    let mut lines = Vec::new();
    for name in ["lite-image.har", "tool-calls.har"] {
        let out = run(&["sessions", "import", &sample(name), "--db", &db]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        lines.push(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    assert_eq!(
        lines,
        [
            "imported session 1 (1 request)\n",
            "imported session 2 (3 requests)\n"
        ]
    );
}
