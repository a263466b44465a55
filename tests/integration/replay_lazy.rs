//! The replay endpoint keeps only what it matches on in memory and reads a recorded answer from
//! the database when a request matches it: events stored for the recorded request after the
//! endpoint started are the ones served (a matcher that loaded every answer at start would serve
//! the old ones).

use crate::support;

use std::time::Duration;

use pretty_assertions::assert_eq;
use promptwire::store::{Page, Store};
use promptwire::transport::replay::Timing;
use promptwire::transport::replay_server::{ReplayOptions, start_replay};
use serde_json::{Value, json};
use support::scratch;
use support::upstream::{Reply, Upstream, joined, paced, post_responses, turn_events};

fn body(text: &str, cache_key: &str) -> Value {
    json!({
        "model": "gpt-5.5",
        "instructions": "You are a careful coding agent. ".repeat(20),
        "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}],
        "stream": true,
        "prompt_cache_key": cache_key,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorded_answer_is_read_when_a_request_matches_it() {
    let first = turn_events("resp_a", "The first answer");
    let other = turn_events("resp_b", "Another answer entirely");
    let (a, b) = (first.clone(), other.clone());
    let upstream = Upstream::start(move |req| {
        let body: Value = serde_json::from_slice(&req.body).expect("json");
        let events = if body["prompt_cache_key"] == "key-a" {
            &a
        } else {
            &b
        };
        Reply::sse(paced(events, Duration::ZERO))
    });
    let db = scratch("replay_lazy").join("rec.sqlite");
    let (proxy, _events) = support::upstream::recording_proxy(&upstream.base_url(), &db).await;
    assert_eq!(
        post_responses(&proxy.base_url(), &body("fix the bug", "key-a")).await,
        (200, joined(&first))
    );
    assert_eq!(
        post_responses(&proxy.base_url(), &body("something else", "key-b")).await,
        (200, joined(&other))
    );
    proxy.stop();
    proxy.stopped().await;
    let store = Store::open(&db).expect("db");
    let sessions = store.list_sessions(Page::ALL).expect("sessions");
    let ids: Vec<(i64, i64)> = sessions
        .iter()
        .map(|s| {
            (
                s.id,
                store.requests(s.id, Page::ALL).expect("requests")[0].id,
            )
        })
        .collect();
    drop(store);
    let (recording, recorded_request) = *ids
        .iter()
        .find(|(session, _)| {
            Store::open(&db)
                .expect("db")
                .session(*session)
                .expect("session")
                .name
                .ends_with("cache:key-a")
        })
        .expect("session a");
    let other_request = ids
        .iter()
        .find(|(_, request)| *request != recorded_request)
        .expect("session b")
        .1;

    let mut options = ReplayOptions::new("127.0.0.1:0", db.clone(), recording);
    options.timing = Timing::Instant;
    options.record = false;
    let (replay, _events) = start_replay(options).await.expect("replay");

    // After the endpoint started, the recorded request's events are replaced by the other's.
    let conn = rusqlite::Connection::open(&db).expect("sqlite");
    conn.execute(
        "DELETE FROM events WHERE request_id = ?1",
        [recorded_request],
    )
    .expect("delete");
    conn.execute(
        "UPDATE events SET request_id = ?1 WHERE request_id = ?2",
        [recorded_request, other_request],
    )
    .expect("move");
    drop(conn);

    assert_eq!(
        post_responses(&replay.base_url(), &body("fix the bug", "new-key")).await,
        (200, joined(&other))
    );
    replay.stop();
    replay.stopped().await;
}
