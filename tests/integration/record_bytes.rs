//! Bytes as they came, over real HTTP on 127.0.0.1: an answer with an event whose data is not
//! valid UTF-8 reaches the client byte for byte through the recording proxy, is stored as those
//! bytes (the text view beside them), and the replay endpoint serves exactly the upstream's
//! bytes; the HAR export gives the body base64-encoded (`encoding: base64`) and importing it
//! back keeps the same bytes. An error body that is not UTF-8 is kept and served the same way.

use crate::support;

use std::time::Duration;

use bytes::Bytes;
use pretty_assertions::assert_eq;
use promptwire::store::{Page, Store};
use promptwire::transport::replay::Timing;
use promptwire::transport::replay_server::{ReplayOptions, start_replay};
use serde_json::json;
use support::scratch;
use support::upstream::{Reply, Upstream, joined, paced, post_responses};

/// The answer: a delta whose data carries bytes that are not UTF-8, then the completion.
fn answer() -> Vec<Bytes> {
    let mut odd = b"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"delta\":\"caf".to_vec();
    odd.extend_from_slice(&[0xE9, 0xFF, 0xC3]);
    odd.extend_from_slice(b"\"}\n\n");
    vec![
        Bytes::from(odd),
        Bytes::from_static(b"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_bytes\",\"status\":\"completed\"}}\n\n"),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_that_is_not_utf8_is_stored_replayed_and_exported_as_its_bytes() {
    let events = answer();
    let sent = joined(&events);
    let script = events.clone();
    let upstream = Upstream::start(move |_| Reply::sse(paced(&script, Duration::ZERO)));
    let db = scratch("record_bytes").join("rec.sqlite");
    let request = json!({"model": "gpt-5.5", "input": "bytes", "stream": true});
    let (proxy, _events) = support::upstream::recording_proxy(&upstream.base_url(), &db).await;
    assert_eq!(
        post_responses(&proxy.base_url(), &request).await,
        (200, sent.clone())
    );
    proxy.stop();
    proxy.stopped().await;

    let store = Store::open(&db).expect("db");
    let session = store.list_sessions(Page::ALL).expect("sessions")[0].id;
    let id = store.requests(session, Page::ALL).expect("requests")[0].id;
    let stored = store.events(id, Page::ALL).expect("events");
    let served: Vec<u8> = stored.iter().flat_map(|e| e.to_sse()).collect();
    assert_eq!(served, sent, "stored as the bytes that came");
    assert!(stored[0].bytes.is_some() && stored[0].data.contains('\u{FFFD}'));

    // The HAR export: base64, and back.
    let har = store.export_har(session, true).expect("har");
    let content = &har["log"]["entries"][0]["response"]["content"];
    assert_eq!(content["encoding"], json!("base64"));
    assert_eq!(
        promptwire::core::export::from_base64(content["text"].as_str().expect("text")),
        Some(sent.clone())
    );
    drop(store);
    let mut store = Store::open(&db).expect("db");
    let (imported, _) = store
        .import_har(&har.to_string(), "back", std::path::Path::new("back.har"))
        .expect("import");
    let back = store.requests(imported, Page::ALL).expect("requests")[0].id;
    let again: Vec<u8> = store
        .events(back, Page::ALL)
        .expect("events")
        .iter()
        .flat_map(|e| e.to_sse())
        .collect();
    assert_eq!(again, sent, "imported back as the same bytes");
    drop(store);

    // The replay endpoint serves the upstream's bytes.
    let mut options = ReplayOptions::new("127.0.0.1:0", db.clone(), session);
    options.timing = Timing::Instant;
    let (replay, _events) = start_replay(options).await.expect("replay");
    assert_eq!(
        post_responses(&replay.base_url(), &request).await,
        (200, sent)
    );
    replay.stop();
    replay.stopped().await;
}

/// An error answer whose body is not UTF-8 (a gateway's page in Latin-1): the client gets it
/// byte for byte, the store keeps those bytes (the inspector's text a view of them), the HAR
/// gives them base64-encoded and imports back to the same bytes, and the replay endpoint
/// serves them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_body_that_is_not_utf8_is_stored_replayed_and_exported_as_its_bytes() {
    let mut page = b"<html><body>Passerelle d\xE9faillante \xFF</body></html>".to_vec();
    page.push(b'\n');
    let body = page.clone();
    let upstream = Upstream::start(move |_| Reply {
        status: 502,
        headers: vec![(
            "content-type".to_string(),
            "text/html; charset=iso-8859-1".to_string(),
        )],
        steps: vec![support::upstream::Step::Send(Bytes::from(body.clone()))],
    });
    let db = scratch("record_error_bytes").join("rec.sqlite");
    let request = json!({"model": "gpt-5.5", "input": "bytes", "stream": true});
    let (proxy, _events) = support::upstream::recording_proxy(&upstream.base_url(), &db).await;
    assert_eq!(
        post_responses(&proxy.base_url(), &request).await,
        (502, page.clone())
    );
    proxy.stop();
    proxy.stopped().await;

    let store = Store::open(&db).expect("db");
    let session = store.list_sessions(Page::ALL).expect("sessions")[0].id;
    let id = store.requests(session, Page::ALL).expect("requests")[0].id;
    let record = store.request(id).expect("record");
    assert_eq!(record.response_body.as_deref(), Some(page.as_slice()));
    assert!(record.response_text().expect("text").contains('\u{FFFD}'));

    let har = store.export_har(session, true).expect("har");
    let content = &har["log"]["entries"][0]["response"]["content"];
    assert_eq!(content["encoding"], json!("base64"));
    assert_eq!(
        promptwire::core::export::from_base64(content["text"].as_str().expect("text")),
        Some(page.clone())
    );
    drop(store);
    let mut store = Store::open(&db).expect("db");
    let (imported, _) = store
        .import_har(&har.to_string(), "back", std::path::Path::new("back.har"))
        .expect("import");
    let back = store.requests(imported, Page::ALL).expect("requests")[0].id;
    assert_eq!(
        store.request(back).expect("record").response_body,
        Some(page.clone()),
        "imported back as the same bytes"
    );
    drop(store);

    let mut options = ReplayOptions::new("127.0.0.1:0", db.clone(), session);
    options.timing = Timing::Instant;
    let (replay, _events) = start_replay(options).await.expect("replay");
    assert_eq!(
        post_responses(&replay.base_url(), &request).await,
        (502, page)
    );
    replay.stop();
    replay.stopped().await;
}
