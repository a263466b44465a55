//! The redaction policy on real Codex traffic: every captured request body, every captured
//! header but `authorization`, and every response stream passes through unchanged, byte for
//! byte; a body with planted credentials loses exactly those.

use crate::support::shared;

use pretty_assertions::assert_eq;
use promptwire::core::redact::{redact_header, redact_text};

fn fixture_dirs() -> Vec<std::path::PathBuf> {
    ["codex-cli-0.169", "codex-cli-0.171"]
        .into_iter()
        .filter_map(shared::shared_fixtures)
        .collect()
}

#[test]
fn real_codex_bodies_and_streams_are_unchanged() {
    let mut bodies = 0;
    let mut streams = 0;
    for dir in fixture_dirs() {
        for body in shared::request_bodies(&dir) {
            let text = std::fs::read_to_string(&body).expect("read body");
            assert_eq!(redact_text(&text), text, "{}", body.display());
            bodies += 1;
            let stream = body
                .with_file_name(
                    body.file_name()
                        .and_then(|n| n.to_str())
                        .unwrap_or_default()
                        .replace("req_", "resp_"),
                )
                .with_extension("sse");
            if let Ok(sse) = std::fs::read_to_string(&stream) {
                assert_eq!(redact_text(&sse), sse, "{}", stream.display());
                streams += 1;
            }
        }
    }
    if !fixture_dirs().is_empty() {
        assert!(bodies >= 15, "only {bodies} bodies found");
        assert!(streams >= 10, "only {streams} streams found");
    }
}

#[test]
fn real_codex_headers_only_lose_authorization() {
    let mut seen = 0;
    for dir in fixture_dirs() {
        for body in shared::request_bodies(&dir) {
            let Some(path) = shared::headers_beside(&body) else {
                continue;
            };
            let text = std::fs::read_to_string(&path).expect("read headers");
            let pairs: Vec<(String, String)> = if path.extension().is_some_and(|e| e == "json") {
                let value: serde_json::Value = serde_json::from_str(&text).expect("headers json");
                value
                    .get("headers")
                    .and_then(serde_json::Value::as_object)
                    .expect("headers object")
                    .iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                    .collect()
            } else {
                text.lines()
                    .filter_map(|l| l.split_once(": "))
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect()
            };
            for (name, value) in pairs {
                let expected = match name.as_str() {
                    "authorization" => "Bearer <redacted>".to_string(),
                    _ => value.clone(),
                };
                assert_eq!(redact_header(&name, &value), expected, "{name}");
                seen += 1;
            }
        }
    }
    if !fixture_dirs().is_empty() {
        assert!(seen >= 100, "only {seen} headers found");
    }
}

#[test]
fn planted_body_fields_are_redacted_and_nothing_else() {
    let Some(dir) = shared::shared_fixtures("codex-cli-0.171") else {
        return;
    };
    let body = shared::request_bodies(&dir)
        .into_iter()
        .next()
        .expect("a body");
    let text = std::fs::read_to_string(&body).expect("read body");
    let mut value: serde_json::Value = serde_json::from_str(&text).expect("json");
    let map = value.as_object_mut().expect("object");
    map.insert("password".into(), "hunter2-planted".into());
    map.insert(
        "client_metadata_extra".into(),
        serde_json::json!({"token": "tok-planted", "deep": {"secret": "sec-planted"}}),
    );
    let planted = serde_json::to_string(&value).expect("json");
    let mut expected = value.clone();
    expected["password"] = "<redacted>".into();
    expected["client_metadata_extra"]["token"] = "<redacted>".into();
    expected["client_metadata_extra"]["deep"]["secret"] = "<redacted>".into();
    let redacted: serde_json::Value =
        serde_json::from_str(&redact_text(&planted)).expect("still json");
    assert_eq!(redacted, expected);
}
