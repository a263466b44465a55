//! Bodies cut into content-addressed pieces (schema 3, packed since schema 4; issue 15), on real SQLite files: every
//! spelling comes back byte for byte (reordered `client_metadata`, whitespace, duplicate keys,
//! bodies that are not objects or not JSON; one that is not UTF-8 comes back as its escaped view); a reordered `client_metadata` stores only its short
//! key pieces again, never the tool list; a database written by schema 2 (a file the previous
//! code wrote, `tests/data/store/schema2.sql`, an SQL dump of its file) migrates and still rebuilds every body exactly.

use crate::support::packed;

use crate::support::db;

use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use promptwire::store::{NewRequest, NewSession, Page, SCHEMA_VERSION, Source, Store};
use serde_json::Value;

use db::scratch_db;

fn request(body: &[u8]) -> NewRequest<'_> {
    NewRequest {
        dialect: Some("standard".to_string()),
        rules: Some("codex-0.169".to_string()),
        provider: Some("openai".to_string()),
        method: "POST".to_string(),
        url: "https://api.openai.com/v1/responses".to_string(),
        body,
        headers: &[],
        extra: None,
        started_us: Some(1_795_000_000_000_000),
    }
}

fn new_session(store: &mut Store) -> i64 {
    store
        .create_session(&NewSession {
            name: "pieces".to_string(),
            source: Source::Proxy,
            provider: None,
            model: None,
            created_us: 1_795_000_000_000_000,
        })
        .expect("session")
}

fn count(path: &Path, sql: &str) -> i64 {
    let conn = rusqlite::Connection::open(path).expect("raw open");
    conn.query_row(sql, [], |r| r.get(0)).expect("count")
}

/// The bodies the schema-2 file was written with (the generator used this same list, in this
/// order, one request each).
fn legacy_bodies() -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/bodies");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("bodies dir")
        .map(|e| e.expect("entry").path())
        .collect();
    paths.sort();
    let mut bodies: Vec<Vec<u8>> = paths
        .iter()
        .map(|p| std::fs::read(p).expect("read"))
        .collect();
    let compact: Vec<Vec<u8>> = bodies
        .iter()
        .map(|b| {
            let value: Value = serde_json::from_slice(b).expect("fixture is JSON");
            serde_json::to_vec(&value).expect("render")
        })
        .collect();
    bodies.extend(compact);
    bodies.push(br#"{"z":1,"input":[{"type":"message","role":"user","content":"hi"}],"a":{"y":2,"b":[1.5,null,"x"]}}"#.to_vec());
    bodies.push(br#"{"model":"gpt-5.5","input":[{"type":"message","role":"user","content":"hi"}],"client_metadata":{"b":"2","a":"1"}}"#.to_vec());
    bodies.push(br#"{"model":"gpt-5.5","input":[{"type":"message","role":"user","content":"hi"}],"client_metadata":{"a":"1","b":"2"}}"#.to_vec());
    bodies.push(b"{\"input\": \"a string input\"}".to_vec());
    bodies.push(br#"{"model":"a","model":"b","input":[1]}"#.to_vec());
    bodies.push(b"not json at all".to_vec());
    bodies.push(b"[1,2,3]".to_vec());
    bodies
}

fn tools() -> String {
    let tool = |name: &str| {
        format!(
            r#"{{"type":"function","name":"{name}","description":"{}","strict":false,"parameters":{{"type":"object","properties":{{"cmd":{{"type":"string"}}}}}}}}"#,
            "Runs a command in a PTY and returns its output. ".repeat(20)
        )
    };
    format!("[{},{}]", tool("exec_command"), tool("write_stdin"))
}

#[test]
fn every_spelling_of_a_body_comes_back_byte_for_byte() {
    let path = scratch_db("spellings");
    let mut store = Store::open(&path).expect("open");
    let session = new_session(&mut store);
    let tools = tools();
    let long = "a value long enough to be a piece of its own";
    let mut bodies: Vec<Vec<u8>> = vec![
        format!(r#"{{"model":"gpt-5.5","input":[{{"type":"message"}}],"tools":{tools},"client_metadata":{{"turn_id":"{long}","session_id":"{long}2"}}}}"#),
        format!(r#"{{"model":"gpt-5.5","input":[{{"type":"message"}}],"tools":{tools},"client_metadata":{{"session_id":"{long}2","turn_id":"{long}"}}}}"#),
        format!("{{\n  \"model\": \"gpt-5.5\",\n  \"input\": [\n    {{\"type\": \"message\"}}\n  ],\n  \"tools\": {tools}\n}}\n"),
        format!(" {{ \"input\" : [{{\"type\":\"message\"}}] , \"meta\" : {{ \"k\" : \"{long}\" }} }} "),
        format!(r#"{{"input":[1],"model":"first","model":"gpt-5.5","input":[{{"x":"{long}"}},2.50,1e3,"\u00e9\n"]}}"#),
        r#"{"input":[],"client_metadata":{},"tools":[]}"#.to_string(),
        r#"{"input":{"not":"an array"},"n":-0.0}"#.to_string(),
        format!(r#"["an array", {tools}]"#),
        r#""a string""#.to_string(),
        "12".to_string(),
        "{\"truncated\": [1, 2".to_string(),
        String::new(),
    ]
    .into_iter()
    .map(String::into_bytes)
    .collect();
    bodies.push(b"{\"bytes\":\"\xff\xfe\"}".to_vec());
    bodies.push(vec![0, 159, 146, 150]);
    let ids: Vec<i64> = bodies
        .iter()
        .map(|b| store.add_request(session, &request(b)).expect("add"))
        .collect();
    drop(store);
    let store = Store::open(&path).expect("reopen");
    for (id, original) in ids.iter().zip(&bodies) {
        let stored = store.body(*id).expect("body");
        // A body that is not UTF-8 is stored as its escaped view (`\xNN`), never raw.
        let expected = match std::str::from_utf8(original) {
            Ok(_) => original.clone(),
            Err(_) => promptwire::core::redact::escaped_view(original).into_bytes(),
        };
        assert_eq!(
            stored.bytes,
            expected,
            "{}",
            String::from_utf8_lossy(original)
        );
        let value = serde_json::from_slice::<Value>(original).ok();
        assert_eq!(stored.value, value);
    }
    let models: Vec<Option<String>> = store
        .requests(session, Page::ALL)
        .expect("requests")
        .into_iter()
        .map(|r| r.model)
        .take(5)
        .collect();
    let gpt = Some("gpt-5.5".to_string());
    assert_eq!(
        models,
        vec![gpt.clone(), gpt.clone(), gpt.clone(), None, gpt]
    );
}

#[test]
fn a_reordered_client_metadata_does_not_store_the_tools_again() {
    let path = scratch_db("reordered");
    let mut store = Store::open(&path).expect("open");
    let session = new_session(&mut store);
    let tools = tools();
    let keys = ["turn_id", "root_turn_id", "thread_id", "session_id"];
    let orders = [[0, 1, 2, 3], [3, 2, 1, 0], [1, 3, 0, 2], [2, 0, 3, 1]];
    for (turn, order) in orders.iter().enumerate() {
        let metadata: Vec<String> = order
            .iter()
            .map(|&k| format!(r#""{}":"01a2280b-0194-7913-9ff6-8112b507168e""#, keys[k]))
            .collect();
        let body = format!(
            r#"{{"model":"gpt-5.5","input":[{{"type":"message","text":"turn {turn}"}}],"tools":{tools},"client_metadata":{{{}}}}}"#,
            metadata.join(",")
        );
        let id = store
            .add_request(session, &request(body.as_bytes()))
            .expect("add");
        assert_eq!(store.body(id).expect("body").bytes, body.into_bytes());
    }
    drop(store);
    // One piece holds the tool list; the other pieces are the id value and the short texts
    // around it (`,"turn_id":` …), whatever the order.
    let texts = packed::texts(&path);
    let tools_pieces = texts.iter().filter(|text| **text == tools).count();
    let bytes: usize = texts
        .iter()
        .filter(|text| !text.contains("turn "))
        .map(String::len)
        .sum();
    assert_eq!(tools_pieces, 1);
    assert!(
        bytes < tools.len() + 400,
        "pieces hold {bytes} B for a {} B tool list",
        tools.len()
    );
}

#[test]
fn deleting_a_session_removes_the_pieces_no_one_else_uses() {
    let path = scratch_db("delete");
    let mut store = Store::open(&path).expect("open");
    let tools = tools();
    let shared = format!(r#"{{"input":[],"tools":{tools}}}"#);
    let own = format!(
        r#"{{"input":[],"instructions":"{}"}}"#,
        "only mine ".repeat(10)
    );
    let a = new_session(&mut store);
    let b = new_session(&mut store);
    store
        .add_request(a, &request(shared.as_bytes()))
        .expect("add");
    store.add_request(a, &request(own.as_bytes())).expect("add");
    let kept = store
        .add_request(b, &request(shared.as_bytes()))
        .expect("add");
    store.delete_session(a).expect("delete");
    assert_eq!(store.body(kept).expect("body").bytes, shared.as_bytes());
    drop(store);
    let texts = packed::texts(&path);
    assert_eq!(
        texts,
        vec![
            r#"{"input":"#.to_string(),
            r#","tools":"#.to_string(),
            tools.clone(),
            "}".to_string()
        ]
    );
}

#[test]
fn a_database_written_by_schema_2_migrates_and_rebuilds_every_body_exactly() {
    // The file as schema 2 wrote it, rebuilt from its SQL dump (no database is kept in git).
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/store/schema2.sql");
    let dump = std::fs::read_to_string(&fixture).expect("the schema-2 dump");
    let path = scratch_db("schema2");
    rusqlite::Connection::open(&path)
        .and_then(|conn| conn.execute_batch(&dump))
        .expect("build the schema-2 file");
    let version = |path: &Path| count(path, "PRAGMA user_version");
    assert_eq!(version(&path), 2);
    let mut store = Store::open(&path).expect("open migrates");
    assert_eq!(version(&path), SCHEMA_VERSION);
    let session = store
        .list_sessions(Page::ALL)
        .expect("list")
        .first()
        .map(|s| s.id)
        .expect("a session");
    let requests = store.requests(session, Page::ALL).expect("requests");
    let bodies = legacy_bodies();
    assert_eq!(requests.len(), bodies.len());
    for (summary, original) in requests.iter().zip(&bodies) {
        let stored = store.body(summary.id).expect("body");
        assert_eq!(
            String::from_utf8_lossy(&stored.bytes),
            String::from_utf8_lossy(original)
        );
    }
    // The analysis reads old rows (field sets) and new ones (pieces) alike.
    let added = store
        .add_request(session, &request(&bodies[5]))
        .expect("add after migrating");
    assert_eq!(store.body(added).expect("body").bytes, bodies[5]);
    let parts = store.session_parts(session).expect("parts");
    let old = &parts.requests[5];
    let new = parts.requests.last().expect("the new request");
    let head = |id: Option<i64>| -> Value {
        let json = id.and_then(|id| parts.fields.get(&id)).expect("field set");
        serde_json::from_str(json).expect("JSON")
    };
    assert_eq!(
        (old.verbatim.is_none(), new.verbatim.is_none()),
        (true, true)
    );
    assert_eq!(head(new.fields_id), head(old.fields_id));
    assert_eq!(new.items, old.items);
    drop(store);
    let store = Store::open_read_only(&path).expect("read-only open after migrating");
    assert_eq!(store.body(added).expect("body").bytes, bodies[5]);
}
