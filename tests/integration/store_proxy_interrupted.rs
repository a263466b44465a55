//! A client that goes away in the middle of a stream through the recording proxy (issue 15):
//! the request is recorded with the events that passed, as interrupted, and its session is
//! listed with the interruption — never like a complete one.

use crate::support;

use std::time::{Duration, Instant};

use futures_util::StreamExt as _;
use pretty_assertions::assert_eq;
use promptwire::store::summary::OutcomeClass;
use promptwire::store::{Page, Store};
use promptwire::transport::proxy::{ProxyOptions, start_proxy};
use serde_json::json;
use support::scratch;
use support::upstream::{Reply, Upstream, paced, turn_events};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_gone_mid_stream_is_recorded_as_interrupted() {
    let events = turn_events(
        "resp_gone",
        "a long answer the client never waits for to the end",
    );
    let upstream = Upstream::start(move |_| Reply::sse(paced(&events, Duration::from_millis(150))));
    let db = scratch("client-gone").join("rec.sqlite");
    let (handle, _events) = start_proxy(ProxyOptions::new(
        "127.0.0.1:0",
        &upstream.base_url(),
        Some(db.clone()),
    ))
    .await
    .expect("proxy starts");
    let body = json!({"model": "gpt-5.5", "input": [], "stream": true,
        "prompt_cache_key": "pck-gone"});
    let response = reqwest::Client::new()
        .post(format!("{}/v1/responses", handle.base_url()))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .expect("headers arrive");
    assert_eq!(response.status().as_u16(), 200);
    let mut stream = response.bytes_stream();
    let mut got = Vec::new();
    while got.windows(2).filter(|w| w == b"\n\n").count() < 2 {
        let chunk = stream.next().await.expect("a chunk").expect("bytes");
        got.extend_from_slice(&chunk);
    }
    // The client goes away after two events.
    drop(stream);

    let deadline = Instant::now() + Duration::from_secs(20);
    let (rows, summary) = loop {
        let store = Store::open(&db).expect("db");
        let sessions = store.list_sessions(Page::ALL).expect("sessions");
        if let Some(session) = sessions.first() {
            let rows = store.request_rows(session.id, Page::ALL).expect("rows");
            if rows
                .first()
                .is_some_and(|r| r.outcome != OutcomeClass::None)
            {
                break (rows, session.clone());
            }
        }
        assert!(Instant::now() < deadline, "no outcome was recorded");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    handle.stop();
    handle.stopped().await;
    let row = &rows[0];
    assert_eq!(
        (
            row.status,
            row.outcome.clone(),
            summary.interrupted,
            summary.unanswered
        ),
        (Some(200), OutcomeClass::Interrupted, 1, 0)
    );
    assert!(
        (2..9).contains(&row.events),
        "the events that passed are kept: {}",
        row.events
    );
}
