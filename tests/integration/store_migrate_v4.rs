//! Schema 3 → 4 (issue 15), on a real file: `tests/data/store/schema3.sql` is a database the
//! schema-3 build wrote (two sample HARs with their events and outcomes, a Codex rollout whose
//! bodies are field sets plus items, bodies that are not JSON objects or whose input is not
//! compact, error responses), and `schema3.expected.jsonl` is what that build read back from it.
//! Opened by this build, the file migrates in place and every request, body byte, header, event
//! and outcome reads back exactly as before; the old tables are gone, and the file is smaller.

use crate::support::db;

use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use promptwire::store::{Page, SCHEMA_VERSION, Store};
use serde_json::{Value, json};

use db::scratch_db;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/store")
        .join(name)
}

/// Builds the schema-3 file from its dump.
fn schema3_file(name: &str) -> PathBuf {
    let dump = std::fs::read_to_string(fixture("schema3.sql")).expect("the schema-3 dump");
    let path = scratch_db(name);
    rusqlite::Connection::open(&path)
        .and_then(|conn| conn.execute_batch(&dump))
        .expect("build the schema-3 file");
    path
}

/// What a store reads back, in the shape the schema-3 build wrote it.
fn read_back(store: &Store) -> Vec<Value> {
    let mut out = Vec::new();
    for session in store.list_sessions(Page::ALL).expect("sessions") {
        for r in store.requests(session.id, Page::ALL).expect("requests") {
            let record = store.request(r.id).expect("request");
            let body = store.body(r.id).expect("body");
            let events: Vec<Value> = store
                .events(r.id, Page::ALL)
                .expect("events")
                .into_iter()
                .map(|e| json!([e.seq, e.received_at.as_micros() as u64, e.event, e.data]))
                .collect();
            let outcome = store.outcome(r.id).expect("outcome").map(|o| {
                json!([
                    o.state,
                    o.response_id,
                    o.error_class,
                    o.error_message,
                    o.usage,
                    o.text,
                    o.server_model,
                    o.events,
                    o.first_event_us,
                    o.first_text_us,
                    o.total_us
                ])
            });
            out.push(json!({
                "session": session.name, "request": r.id,
                "summary": serde_json::to_value(&r).expect("summary"),
                "body": String::from_utf8_lossy(&body.bytes), "headers": record.headers,
                "extra": record.extra, "response_headers": record.response_headers,
                "response_body": record.response_text(), "events": events, "outcome": outcome,
            }));
        }
    }
    out
}

fn tables(path: &Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(path).expect("raw open");
    let mut stmt = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .expect("prepare");
    stmt.query_map([], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("names")
}

#[test]
fn a_schema_3_file_migrates_and_reads_back_exactly_as_before() {
    let path = schema3_file("migrate");
    let before = std::fs::metadata(&path).expect("size").len();
    let version = |path: &Path| -> i64 {
        rusqlite::Connection::open(path)
            .and_then(|c| c.query_row("PRAGMA user_version", [], |r| r.get(0)))
            .expect("version")
    };
    assert_eq!(version(&path), 3);
    let store = Store::open(&path).expect("open migrates");
    assert_eq!(version(&path), SCHEMA_VERSION);
    let expected: Vec<Value> = std::fs::read_to_string(fixture("schema3.expected.jsonl"))
        .expect("expected")
        .lines()
        .map(|line| serde_json::from_str(line).expect("JSON line"))
        .collect();
    let got = read_back(&store);
    assert_eq!(got.len(), 15);
    for (got, want) in got.iter().zip(&expected) {
        assert_eq!(got, want);
    }
    // Analysis reads migrated rows too.
    for session in store.list_sessions(Page::ALL).expect("sessions") {
        store.session_parts(session.id).expect("parts");
    }
    drop(store);
    assert_eq!(
        tables(&path),
        vec!["events", "outcomes", "requests", "sessions", "texts"]
    );
    // The same content takes less room than schema 3 gave it (compacted, to compare pages in use).
    let conn = rusqlite::Connection::open(&path).expect("raw open");
    conn.execute_batch("VACUUM").expect("vacuum");
    drop(conn);
    let after = std::fs::metadata(&path).expect("size").len();
    assert!(after < before, "{after} B after, {before} B before");
    // And it browses read-only once migrated.
    let store = Store::open_read_only(&path).expect("read-only open");
    assert_eq!(read_back(&store), expected);
}

#[test]
fn a_read_only_schema_3_file_is_refused_untouched() {
    let path = schema3_file("readonly");
    let bytes = std::fs::read(&path).expect("read");
    let error = Store::open_read_only(&path).expect_err("needs upgrading");
    assert!(
        error
            .to_string()
            .contains("schema version 3 needs upgrading"),
        "{error}"
    );
    assert_eq!(std::fs::read(&path).expect("read"), bytes);
}

#[test]
fn rows_that_point_at_nothing_are_left_behind_not_fatal() {
    let path = schema3_file("orphans");
    rusqlite::Connection::open(&path)
        .and_then(|conn| {
            conn.execute_batch(
                "PRAGMA foreign_keys = OFF;
                 INSERT INTO requests (id, session_id, position, method, url, input_items, body_bytes, headers)
                   VALUES (9000, 777, 0, 'POST', 'http://x/v1/responses', x'', 0, '[]');
                 INSERT INTO events (request_id, seq, received_us, event, data) VALUES (9001, 0, 0, NULL, '{}');
                 INSERT INTO outcomes (request_id, state, events) VALUES (9002, 'completed', 0);
                 UPDATE sessions SET replay_of = 555 WHERE id = 1;",
            )
        })
        .expect("plant orphans");
    let store = Store::open(&path).expect("open migrates");
    assert!(store.request(9000).is_err());
    assert_eq!(store.outcome(9002).expect("outcome"), None);
    assert_eq!(store.replay_of(1).expect("replay_of"), None);
    assert_eq!(read_back(&store).len(), 15);
}
