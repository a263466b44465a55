//! The session store on a real SQLite file: bodies come back as the same JSON value (keys in
//! order) and the same bytes, items are stored once, HAR export → import keeps bodies, events and
//! timings, exports redact and are private, secrets never reach the database file, delete cleans
//! up, and search finds sessions by name, model and text.
#![allow(clippy::disallowed_methods, reason = "a test runs its own threads")]

use crate::support::packed;

use crate::support::db;

use std::path::{Path, PathBuf};
use std::time::Duration;

use pretty_assertions::assert_eq;
use promptwire::core::stream::{ErrorClass, RawEvent};
use promptwire::store::{
    NewRequest, NewSession, OutcomeRecord, Page, RecordedState, ResponseMeta, Source, Store, seed,
};
use serde_json::Value;

use db::scratch_db;

fn new_session(store: &mut Store, name: &str, model: &str) -> i64 {
    store
        .create_session(&NewSession {
            name: name.to_string(),
            source: Source::Send,
            provider: Some("openai".to_string()),
            model: Some(model.to_string()),
            created_us: 1_795_000_000_000_000,
        })
        .expect("create session")
}

fn request<'a>(body: &'a [u8], headers: &'a [(String, String)]) -> NewRequest<'a> {
    NewRequest {
        dialect: Some("standard".to_string()),
        rules: Some("codex-0.169".to_string()),
        provider: Some("openai".to_string()),
        method: "POST".to_string(),
        url: "https://api.openai.com/v1/responses".to_string(),
        body,
        headers,
        extra: None,
        started_us: Some(1_795_000_000_000_000),
    }
}

fn fixture_bodies() -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/bodies");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("bodies dir")
        .map(|e| e.expect("entry").path())
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| std::fs::read(p).expect("read body"))
        .collect()
}

#[test]
fn every_body_comes_back_as_the_same_value_keys_and_bytes() {
    let path = scratch_db("exact");
    let mut store = Store::open(&path).expect("open");
    let session = new_session(&mut store, "exact", "gpt-5.5");
    let mut bodies = fixture_bodies();
    // Compact renderings of the fixtures (the usual case: stored as parts, no verbatim copy).
    let compact: Vec<Vec<u8>> = bodies
        .iter()
        .map(|b| {
            let v: Value = serde_json::from_slice(b).expect("fixture is JSON");
            serde_json::to_vec(&v).expect("render")
        })
        .collect();
    bodies.extend(compact);
    // Key order that differs from any canonical order, and `input` not first nor last.
    bodies.push(br#"{"z":1,"input":[{"type":"message","role":"user","content":"hi"}],"a":{"y":2,"b":[1.5,null,"x"]}}"#.to_vec());
    bodies.push(b"{\"input\": \"a string input\"}".to_vec());
    bodies.push(b"not json at all".to_vec());
    let ids: Vec<i64> = bodies
        .iter()
        .map(|b| store.add_request(session, &request(b, &[])).expect("add"))
        .collect();
    drop(store);
    let store = Store::open(&path).expect("reopen");
    for (id, original) in ids.iter().zip(&bodies) {
        let stored = store.body(*id).expect("body");
        assert_eq!(
            String::from_utf8_lossy(&stored.bytes),
            String::from_utf8_lossy(original)
        );
        if let Ok(value) = serde_json::from_slice::<Value>(original) {
            let back = stored.value.expect("value");
            assert_eq!(back, value);
            let keys = |v: &Value| -> Vec<String> {
                v.as_object()
                    .map(|m| m.keys().cloned().collect())
                    .unwrap_or_default()
            };
            assert_eq!(keys(&back), keys(&value));
        }
    }
}

#[test]
fn a_growing_session_stores_each_item_once() {
    let path = scratch_db("dedup");
    let mut store = Store::open(&path).expect("open");
    let session = new_session(&mut store, "growing", "gpt-5.5");
    let mut input = Vec::new();
    let mut last = Vec::new();
    for turn in 0..30 {
        input.push(serde_json::json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": format!("turn {turn} {}", "x".repeat(2000))}]}));
        let body = serde_json::json!({"model": "gpt-5.5", "instructions": "long instructions ".repeat(200), "input": input, "tools": [], "stream": true});
        last = serde_json::to_vec(&body).expect("render");
        store
            .add_request(session, &request(&last, &[]))
            .expect("add");
    }
    drop(store);
    // Texts: the 30 items, and the pieces `{"model":"gpt-5.5","instructions":`, the
    // instructions, `,"input":` and `,"tools":[],"stream":true}`, each once for the 30 requests.
    let texts = packed::texts(&path);
    let items = texts.iter().filter(|t| t.contains("input_text")).count();
    assert_eq!((items, texts.len()), (30, 34));
    let size = std::fs::metadata(&path).expect("size").len();
    assert!(
        size * 2 < last.len() as u64,
        "database {size} B for a last body of {} B",
        last.len()
    );
}

fn sample_events() -> Vec<RawEvent> {
    (0..5u64)
        .map(|seq| RawEvent {
            seq,
            received_at: Duration::from_micros(400_000 + seq * 1234),
            event: Some("response.output_text.delta".to_string()),
            data: format!(
                r#"{{"type":"response.output_text.delta","sequence_number":{seq},"delta":"w{seq}"}}"#
            ), bytes: None,
        })
        .collect()
}

#[test]
fn har_export_then_import_keeps_bodies_events_timings_and_outcome() {
    let path = scratch_db("har");
    let mut store = Store::open(&path).expect("open");
    let session = new_session(&mut store, "har trip", "gpt-5.5");
    let body = br#"{"model":"gpt-5.5","instructions":"be brief","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hello"}]}],"stream":true}"#;
    let headers = vec![("content-type".to_string(), "application/json".to_string())];
    let id = store
        .add_request(session, &request(body, &headers))
        .expect("add");
    store
        .set_response(
            id,
            &ResponseMeta {
                status: Some(200),
                headers: vec![("x-request-id".to_string(), "req_1".to_string())],
                body: None,
                wait_us: Some(400_000),
                total_us: Some(406_000),
                http_version: None,
                extra: None,
            },
        )
        .expect("response");
    store.add_events(id, &sample_events()).expect("events");
    let outcome = OutcomeRecord {
        state: RecordedState::Completed,
        response_id: Some("resp_1".to_string()),
        text: "w0w1w2w3w4".to_string(),
        events: 5,
        ..OutcomeRecord::default()
    };
    store.set_outcome(id, &outcome).expect("outcome");
    let har = store.export_har(session, true).expect("export");
    assert_eq!(har.pointer("/log/version"), Some(&Value::from("1.2")));
    let text = serde_json::to_string(&har).expect("render");
    let (copy, n) = store
        .import_har(&text, "ignored", Path::new("x.har"))
        .expect("import");
    assert_eq!(n, 1);
    let copied = store.requests(copy, Page::ALL).expect("requests");
    assert_eq!(store.session(copy).expect("session").name, "har trip");
    let new_id = copied[0].id;
    assert_eq!(store.body(new_id).expect("body").bytes, body.to_vec());
    assert_eq!(
        store.events(new_id, Page::ALL).expect("events"),
        sample_events()
    );
    assert_eq!(store.outcome(new_id).expect("outcome"), Some(outcome));
    assert_eq!(copied[0].wait_us, Some(400_000));
    assert_eq!(copied[0].total_us, Some(406_000));
    assert_eq!(copied[0].dialect.as_deref(), Some("standard"));
    // Paged events.
    let page = store
        .events(
            new_id,
            Page {
                offset: 2,
                limit: 2,
            },
        )
        .expect("page");
    assert_eq!(page.iter().map(|e| e.seq).collect::<Vec<_>>(), vec![2, 3]);
}

#[test]
fn the_authorization_value_never_reaches_the_database_file() {
    let path = scratch_db("secrets");
    let secret = "sk-proj-SECRETVALUE0123456789abcdef";
    let mut store = Store::open(&path).expect("open");
    let session = new_session(&mut store, "secrets", "gpt-5.5");
    let headers = vec![
        ("Authorization".to_string(), format!("Bearer {secret}")),
        ("api-key".to_string(), "AZUREKEY0123456789".to_string()),
        ("x-trace".to_string(), format!("token Bearer {secret}")),
        ("content-type".to_string(), "application/json".to_string()),
    ];
    let body = br#"{"model":"gpt-5.5","input":[]}"#;
    let id = store
        .add_request(session, &request(body, &headers))
        .expect("add");
    store
        .set_response(
            id,
            &ResponseMeta {
                status: Some(401),
                headers: vec![("authorization".to_string(), format!("Bearer {secret}"))],
                body: Some(b"{}".to_vec()),
                wait_us: None,
                total_us: None,
                http_version: None,
                extra: None,
            },
        )
        .expect("response");
    let kept = store.request(id).expect("request").headers;
    assert_eq!(
        kept,
        vec![
            ("x-trace".to_string(), "token Bearer <redacted>".to_string()),
            ("content-type".to_string(), "application/json".to_string()),
        ]
    );
    drop(store);
    let mut bytes = Vec::new();
    for suffix in ["", "-wal", "-shm"] {
        if let Ok(b) = std::fs::read(format!("{}{suffix}", path.display())) {
            bytes.extend(b);
        }
    }
    assert!(!bytes.is_empty());
    for needle in [secret.as_bytes(), b"SECRETVALUE", b"AZUREKEY0123456789"] {
        assert!(
            !bytes.windows(needle.len()).any(|w| w == needle),
            "{} found in the database file",
            String::from_utf8_lossy(needle)
        );
    }
}

#[test]
fn exports_redact_by_default_and_are_owner_only() {
    use std::os::unix::fs::PermissionsExt as _;
    let path = scratch_db("redact");
    let mut store = Store::open(&path).expect("open");
    let session = new_session(&mut store, "redact", "gpt-5.5");
    let body = br#"{"model":"gpt-5.5","input":[{"type":"message","role":"user","content":"my key is sk-abcdefghijklmnop and api-key: AZ0123456789xyz"}]}"#;
    store
        .add_request(session, &request(body, &[]))
        .expect("add");
    let dir = path.with_extension("bodies");
    let _ = std::fs::remove_dir_all(&dir);
    store.export_bodies(session, &dir, true).expect("bodies");
    let file = dir.join("0000.json");
    let text = std::fs::read_to_string(&file).expect("read");
    assert!(!text.contains("sk-abcdefghijklmnop"), "{text}");
    assert!(!text.contains("AZ0123456789xyz"), "{text}");
    let mode = std::fs::metadata(&file).expect("meta").permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    // Credentials never reach the database: even an export that does not redact has none.
    store.export_bodies(session, &dir, false).expect("bodies");
    assert_eq!(
        String::from_utf8(std::fs::read(&file).expect("read")).expect("utf-8"),
        r#"{"model":"gpt-5.5","input":[{"type":"message","role":"user","content":"my key is sk-<redacted> and api-key: <redacted>"}]}"#
    );
    let har = serde_json::to_string(&store.export_har(session, true).expect("har")).expect("json");
    assert!(!har.contains("sk-abcdefghijklmnop"));
    let jsonl = store.export_jsonl(session, true).expect("jsonl");
    assert!(!jsonl.contains("sk-abcdefghijklmnop"));
    assert_eq!(jsonl.lines().count(), 1);
}

#[test]
fn delete_removes_the_session_and_items_no_one_else_uses() {
    let path = scratch_db("delete");
    let mut store = Store::open(&path).expect("open");
    let shared = br#"{"model":"m","input":[{"type":"message","role":"user","content":"shared"}]}"#;
    let own = br#"{"model":"m","input":[{"type":"message","role":"user","content":"shared"},{"type":"message","role":"user","content":"own"}]}"#;
    let a = new_session(&mut store, "a", "m");
    let b = new_session(&mut store, "b", "m");
    store.add_request(a, &request(shared, &[])).expect("add");
    let kept = store.add_request(b, &request(shared, &[])).expect("add");
    store.add_request(a, &request(own, &[])).expect("add");
    store.delete_session(a).expect("delete");
    assert!(store.session(a).is_err());
    assert_eq!(store.body(kept).expect("body").bytes, shared.to_vec());
    drop(store);
    // What b uses stays (its two pieces and the shared item); a's own item is gone.
    assert_eq!(
        packed::texts(&path),
        vec![
            r#"{"model":"m","input":"#.to_string(),
            "}".to_string(),
            r#"{"type":"message","role":"user","content":"shared"}"#.to_string(),
        ]
    );
}

#[test]
fn search_finds_by_name_model_and_text_and_lists_page() {
    let path = scratch_db("search");
    let mut store = Store::open(&path).expect("open");
    seed::seed(&mut store).expect("seed");
    let names = |list: Vec<promptwire::store::SessionSummary>| -> Vec<String> {
        list.into_iter().map(|s| s.name).collect()
    };
    assert_eq!(
        names(store.search_sessions("lite", Page::ALL).expect("search")),
        vec!["lite-image"]
    );
    assert_eq!(
        names(
            store
                .search_sessions("gpt-6-sol", Page::ALL)
                .expect("search")
        ),
        vec!["lite-image"]
    );
    // Text of an input item, and of an answer.
    assert_eq!(
        names(
            store
                .search_sessions("footer overlapping", Page::ALL)
                .expect("search")
        ),
        vec!["lite-image"]
    );
    assert_eq!(
        names(
            store
                .search_sessions("main.rs is the largest", Page::ALL)
                .expect("search")
        ),
        vec!["cache-prefix-break"]
    );
    let all = names(store.list_sessions(Page::ALL).expect("list"));
    assert_eq!(all.len(), 4);
    let second = names(
        store
            .list_sessions(Page {
                offset: 1,
                limit: 2,
            })
            .expect("page"),
    );
    assert_eq!(second, all[1..3].to_vec());
}

#[test]
fn first_run_seeds_the_samples_once_even_when_racing() {
    let path = scratch_db("seeded");
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let path = path.clone();
            std::thread::spawn(move || seed::open_seeded(&path).map(|_| ()))
        })
        .collect();
    for thread in threads {
        thread.join().expect("thread").expect("open seeded");
    }
    let store = seed::open_seeded(&path).expect("open again");
    let mut names: Vec<String> = store
        .list_sessions(Page::ALL)
        .expect("list")
        .into_iter()
        .map(|s| s.name)
        .collect();
    names.sort();
    assert_eq!(
        names,
        vec![
            "cache-prefix-break",
            "failing-stream",
            "lite-image",
            "tool-calls"
        ]
    );
    // The samples are what the issue asks for: tools, Lite, a failure, a prefix break.
    let requests = |name: &str| {
        let id = store
            .search_sessions(name, Page::ALL)
            .expect("search")
            .into_iter()
            .find(|s| s.name == name)
            .expect("session")
            .id;
        store.requests(id, Page::ALL).expect("requests")
    };
    assert!(
        requests("lite-image")
            .iter()
            .all(|r| r.dialect.as_deref() == Some("lite"))
    );
    assert!(
        requests("failing-stream")
            .iter()
            .all(|r| r.state == Some(RecordedState::Failed))
    );
    assert_eq!(requests("tool-calls").len(), 3);
    let leftovers: Vec<_> = std::fs::read_dir(path.parent().expect("dir"))
        .expect("dir")
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("seeding"))
        .collect();
    assert!(leftovers.is_empty());
}

#[test]
fn a_foreign_har_imports_with_outcomes_read_from_its_sse_and_no_key() {
    let sse = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sse/failed-rate-limit.sse"),
    )
    .expect("sse");
    let body = r#"{"model":"gpt-5.5","input":[{"type":"message","role":"user","content":"hi"}],"stream":true}"#;
    let har = serde_json::json!({"log": {"version": "1.2", "creator": {"name": "browser", "version": "1"}, "entries": [
        {"startedDateTime": "2026-11-21T08:00:00.250+01:00", "time": 900,
         "request": {"method": "POST", "url": "https://api.openai.com/v1/responses", "headers": [
             {"name": "Authorization", "value": "Bearer sk-live-FOREIGNKEY123456789"},
             {"name": "Content-Type", "value": "application/json"}],
           "postData": {"mimeType": "application/json", "text": body}},
         "response": {"status": 200, "headers": [], "content": {"mimeType": "text/event-stream", "text": sse}},
         "timings": {"send": 1, "wait": 300, "receive": 600}},
        {"startedDateTime": "2026-11-21T08:01:00Z", "time": 50,
         "request": {"method": "POST", "url": "https://api.openai.com/v1/responses", "headers": [],
           "postData": {"mimeType": "application/json", "text": body}},
         "response": {"status": 429, "headers": [{"name": "retry-after", "value": "2"}], "content": {"mimeType": "application/json", "text": "{\"error\":{\"message\":\"slow down\",\"type\":\"requests\",\"code\":\"rate_limit_exceeded\"}}"}},
         "timings": {"send": 0, "wait": 50, "receive": 0}}
    ]}});
    let path = scratch_db("foreign");
    let mut store = Store::open(&path).expect("open");
    let text = serde_json::to_string(&har).expect("render");
    let (session, n) = store
        .import_har(&text, "browser-capture", Path::new("capture.har"))
        .expect("import");
    assert_eq!(n, 2);
    let summary = store.session(session).expect("session");
    assert_eq!(summary.name, "browser-capture");
    assert_eq!(summary.model.as_deref(), Some("gpt-5.5"));
    assert_eq!(summary.created_us, 1_795_244_400_250_000);
    let requests = store.requests(session, Page::ALL).expect("requests");
    assert_eq!(requests[0].wait_us, Some(300_000));
    assert_eq!(requests[0].total_us, Some(900_000));
    let first = store
        .outcome(requests[0].id)
        .expect("outcome")
        .expect("some");
    assert_eq!(first.state, RecordedState::Failed);
    assert_eq!(first.error_class, Some(ErrorClass::Retryable));
    assert_eq!(store.event_count(requests[0].id).expect("count"), 3);
    let second = store
        .outcome(requests[1].id)
        .expect("outcome")
        .expect("some");
    assert_eq!(second.state, RecordedState::Failed);
    assert!(
        second
            .error_message
            .as_deref()
            .unwrap_or_default()
            .contains("429"),
        "{second:?}"
    );
    assert_eq!(
        store.body(requests[1].id).expect("body").bytes,
        body.as_bytes()
    );
    drop(store);
    let bytes = std::fs::read(&path).expect("read");
    let wal = std::fs::read(format!("{}-wal", path.display())).unwrap_or_default();
    for file in [&bytes, &wal] {
        assert!(!file.windows(10).any(|w| w == b"FOREIGNKEY"));
    }
}
