//! Request bodies the proxy cannot store as text, tried as an attacker would, on loopback: one
//! that claims gzip and is not gzip (nor UTF-8), one that is `deflate`, and one that is not UTF-8.
//! The upstream gets every byte unchanged; the database never holds the raw bytes: the deflate
//! body is stored decoded and redacted, the others as a redacted escaped view (`\xNN`) whose
//! row says so (`body_stored`), and none of the planted secrets is in the database file.

use crate::support;

use std::io::Write as _;

use pretty_assertions::assert_eq;
use promptwire::core::redact::ESCAPED_NOTE;
use promptwire::store::{Page, Store};
use serde_json::{Value, json};
use support::scratch;
use support::upstream::{Reply, Upstream};

const SECRETS: [&str; 3] = [
    "GZIPSECRET0123456789",
    "DEFLATESECRET0123456789",
    "PLAINSECRET0123456789",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undecodable_deflate_and_non_utf8_bodies_are_never_stored_raw() {
    let upstream = Upstream::start(|_| Reply::json(200, r#"{"id":"resp_1","object":"response"}"#));
    let db = scratch("harden_bodies").join("rec.sqlite");
    let (proxy, _events) = support::upstream::recording_proxy(&upstream.base_url(), &db).await;
    let fake_gzip = b"\xff\xfe{\"api_key\":\"sk-live-GZIPSECRET0123456789\"}".to_vec();
    let mut deflate = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    deflate
        .write_all(br#"{"model":"m","api_key":"DEFLATESECRET0123456789"}"#)
        .expect("deflate");
    let deflate = deflate.finish().expect("deflate");
    let not_utf8 = b"{\"input\":\"\xff\",\"password\":\"PLAINSECRET0123456789\"}".to_vec();
    let sent = [
        (Some("gzip"), fake_gzip.clone()),
        (Some("deflate"), deflate.clone()),
        (None, not_utf8.clone()),
    ];
    let client = reqwest::Client::new();
    for (encoding, body) in &sent {
        let mut request = client
            .post(format!("{}/v1/responses", proxy.base_url()))
            .header("content-type", "application/json")
            .body(body.clone());
        if let Some(encoding) = encoding {
            request = request.header("content-encoding", *encoding);
        }
        assert_eq!(
            request.send().await.expect("response").status().as_u16(),
            200
        );
    }
    let received: Vec<Vec<u8>> = upstream.received().into_iter().map(|r| r.body).collect();
    assert_eq!(
        received,
        sent.iter()
            .map(|(_, body)| body.clone())
            .collect::<Vec<_>>()
    );
    proxy.stop();
    proxy.stopped().await;

    let store = Store::open(&db).expect("db");
    let mut stored: Vec<(i64, String, Option<Value>)> = Vec::new();
    for session in store.list_sessions(Page::ALL).expect("sessions") {
        for request in store.requests(session.id, Page::ALL).expect("requests") {
            let body = store.body(request.id).expect("body").bytes;
            stored.push((
                request.id,
                String::from_utf8(body).expect("stored as text"),
                store.request(request.id).expect("request").extra,
            ));
        }
    }
    stored.sort_by_key(|(id, _, _)| *id);
    let stored: Vec<(String, Option<Value>)> = stored
        .into_iter()
        .map(|(_, body, extra)| (body, extra))
        .collect();
    assert_eq!(
        stored,
        vec![
            (
                r#"\xff\xfe{"api_key":"<redacted>"}"#.to_string(),
                Some(json!({
                    "content_encoding": "gzip",
                    "decode_error": "cannot decode the gzip request body: invalid gzip header",
                    "body_stored": ESCAPED_NOTE,
                }))
            ),
            (
                r#"{"model":"m","api_key":"<redacted>"}"#.to_string(),
                Some(json!({"content_encoding": "deflate", "wire_body_bytes": deflate.len()}))
            ),
            (
                r#"{"input":"\xff","password":"<redacted>"}"#.to_string(),
                Some(json!({"body_stored": ESCAPED_NOTE}))
            ),
        ]
    );
    drop(store);
    let mut bytes = std::fs::read(&db).expect("db file");
    if let Ok(wal) = std::fs::read(format!("{}-wal", db.display())) {
        bytes.extend(wal);
    }
    let found: Vec<&str> = SECRETS
        .into_iter()
        .filter(|secret| bytes.windows(secret.len()).any(|w| w == secret.as_bytes()))
        .collect();
    assert_eq!(found, Vec::<&str>::new());
}
