//! Redaction fails closed on a real SQLite file: a request body, an event or an extra whose JSON
//! would not parse back once redacted is refused with an error naming why (nothing of it is
//! written), and a HAR export of a stored value that cannot be redacted (a database written
//! before extras were redacted) is refused rather than written unredacted or broken.
//!
//! The body that cannot round-trip is real, not injected: `"db.password": 12345678` — the
//! dotted key is no credential key, but `password` followed by `":` is an assignment, so the
//! number becomes a bare `<redacted>`.

use crate::support::db;

use pretty_assertions::assert_eq;
use promptwire::core::stream::RawEvent;
use promptwire::store::{NewRequest, NewSession, Page, Source, Store};
use serde_json::json;

use db::scratch_db;

const UNROUNDTRIPPABLE: &str = r#"{"model":"m","input":[],"metadata":{"db.password":12345678}}"#;

fn new_session(store: &mut Store) -> i64 {
    store
        .create_session(&NewSession {
            name: "fail closed".to_string(),
            source: Source::Send,
            provider: None,
            model: Some("m".to_string()),
            created_us: 1_700_000_000_000_000,
        })
        .expect("session")
}

fn request(body: &[u8]) -> NewRequest<'_> {
    NewRequest {
        dialect: Some("standard".to_string()),
        rules: None,
        provider: None,
        method: "POST".to_string(),
        url: "http://127.0.0.1:9/v1/responses".to_string(),
        body,
        headers: &[],
        extra: Some(json!({"note": "kept"})),
        started_us: Some(1_700_000_000_000_000),
    }
}

#[test]
fn a_body_whose_redaction_would_not_parse_back_is_not_stored() {
    let path = scratch_db("body");
    let mut store = Store::open(&path).expect("open");
    let session = new_session(&mut store);
    let refused = store
        .add_request(session, &request(UNROUNDTRIPPABLE.as_bytes()))
        .map_err(|e| e.to_string());
    assert_eq!(
        refused,
        Err(
            "not written: request body: the redacted JSON does not parse back \
             (expected value at line 1 column 51)"
                .to_string()
        )
    );
    assert_eq!(
        store.requests(session, Page::ALL).expect("requests"),
        vec![]
    );
}

#[test]
fn an_event_whose_redaction_would_not_parse_back_is_not_stored() {
    let path = scratch_db("event");
    let mut store = Store::open(&path).expect("open");
    let session = new_session(&mut store);
    let id = store
        .add_request(session, &request(br#"{"model":"m","input":[]}"#))
        .expect("request");
    let event = RawEvent {
        seq: 0,
        received_at: std::time::Duration::from_millis(5),
        event: Some("response.created".to_string()),
        data: r#"{"type":"response.created","db.password":12345678}"#.to_string(),
        bytes: None,
    };
    let refused = store.add_events(id, &[event]).map_err(|e| e.to_string());
    assert_eq!(
        refused,
        Err(
            "not written: event data: the redacted JSON does not parse back \
             (expected value at line 1 column 42)"
                .to_string()
        )
    );
    assert_eq!(store.event_count(id).expect("count"), 0);
}

#[test]
fn exports_of_a_value_that_cannot_be_redacted_are_refused_not_written_unredacted() {
    let path = scratch_db("export");
    let mut store = Store::open(&path).expect("open");
    let session = new_session(&mut store);
    let id = store
        .add_request(session, &request(br#"{"model":"m","input":[]}"#))
        .expect("request");
    drop(store);
    // A database written before extras were redacted on write: the value is stored as it came.
    let conn = rusqlite::Connection::open(&path).expect("sqlite");
    conn.execute(
        "UPDATE requests SET extra = ?1 WHERE id = ?2",
        rusqlite::params![r#"{"db.password":12345678}"#, id],
    )
    .expect("update");
    drop(conn);
    let store = Store::open(&path).expect("reopen");

    let har = store.export_har(session, true).map_err(|e| e.to_string());
    assert_eq!(
        har,
        Err(
            "not written: HAR export: the redacted JSON does not parse back \
             (expected value at line 1 column 16)"
                .to_string()
        )
    );
    // JSON Lines carries no extras: it has nothing it cannot redact, and is written.
    let jsonl = store.export_jsonl(session, true).expect("JSON Lines");
    assert_eq!(
        jsonl,
        "{\"session\":1,\"session_name\":\"fail closed\",\"position\":0,\
         \"started_at\":\"2023-11-14T22:13:20.000Z\",\"method\":\"POST\",\
         \"url\":\"http://127.0.0.1:9/v1/responses\",\"dialect\":\"standard\",\"rules\":null,\
         \"provider\":null,\"headers\":[],\"body\":{\"model\":\"m\",\"input\":[]},\
         \"status\":null,\"wait_us\":null,\"total_us\":null,\"response_body\":null,\
         \"events\":[],\"outcome\":null}\n"
    );
    // Unredacted exports are what the user asked for: they still work.
    let raw = store.export_har(session, false).expect("unredacted HAR");
    assert_eq!(
        raw.pointer("/log/entries/0/_promptwire/db.password"),
        Some(&json!(12345678))
    );
}
