//! Redaction before the database, tried as an attacker would, through the recording proxy on
//! loopback: every element of an array under a credential key, a key spelled with JSON escapes
//! (`"pass\u0077ord"`), and a session name or model string that carries a key are redacted
//! before they are stored — the database file holds none of them — while the upstream gets the
//! request byte for byte.

use crate::support;

use pretty_assertions::assert_eq;
use promptwire::store::{Page, Store};
use serde_json::json;
use support::scratch;
use support::upstream::{Reply, Upstream};

/// The secrets planted in the request; none may reach the database file.
const SECRETS: [&str; 5] = [
    "SESSIONSECRET0123456789",
    "MODELSECRET0123456789",
    "ARRAYSECRET01",
    "ARRAYSECRET02",
    "ESCAPEDSECRET01",
];

/// The database file and its journal, as bytes.
fn database_bytes(db: &std::path::Path) -> Vec<u8> {
    let mut bytes = std::fs::read(db).expect("db file");
    for suffix in ["-wal", "-journal"] {
        if let Ok(more) = std::fs::read(format!("{}{suffix}", db.display())) {
            bytes.extend(more);
        }
    }
    bytes
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arrays_escaped_keys_session_names_and_models_are_redacted_before_the_database() {
    let upstream = Upstream::start(|_| Reply::json(200, r#"{"id":"resp_1","object":"response"}"#));
    let db = scratch("harden_redact").join("rec.sqlite");
    let (proxy, _events) = support::upstream::recording_proxy(&upstream.base_url(), &db).await;
    let body = r#"{"model":"sk-live-MODELSECRET0123456789","input":"hi","metadata":{"api_key":["ARRAYSECRET01","ARRAYSECRET02"]},"pass\u0077ord":"ESCAPEDSECRET01"}"#;
    let response = reqwest::Client::new()
        .post(format!("{}/v1/responses", proxy.base_url()))
        .header("content-type", "application/json")
        .header("session_id", "sk-live-SESSIONSECRET0123456789")
        .body(body)
        .send()
        .await
        .expect("response");
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(upstream.received()[0].body, body.as_bytes());
    proxy.stop();
    proxy.stopped().await;

    let store = Store::open(&db).expect("db");
    let sessions = store.list_sessions(Page::ALL).expect("sessions");
    let names: Vec<(String, Option<String>)> = sessions
        .iter()
        .map(|s| {
            let key = promptwire::core::session_label::split_key(&s.name).map(|(_, key)| key);
            (key.unwrap_or(&s.name).to_string(), s.model.clone())
        })
        .collect();
    assert_eq!(
        names,
        vec![(
            "session:sk-<redacted>".to_string(),
            Some("sk-<redacted>".to_string())
        )]
    );
    let request = &store.requests(sessions[0].id, Page::ALL).expect("requests")[0];
    assert_eq!(request.model.as_deref(), Some("sk-<redacted>"));
    assert_eq!(
        store.body(request.id).expect("body").value,
        Some(json!({
            "model": "sk-<redacted>",
            "input": "hi",
            "metadata": {"api_key": ["<redacted>", "<redacted>"]},
            "password": "<redacted>",
        }))
    );
    drop(store);
    let bytes = database_bytes(&db);
    let found: Vec<&str> = SECRETS
        .into_iter()
        .filter(|secret| bytes.windows(secret.len()).any(|w| w == secret.as_bytes()))
        .collect();
    assert_eq!(found, Vec::<&str>::new());
}
