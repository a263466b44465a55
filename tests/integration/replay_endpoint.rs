//! The replay endpoint over real HTTP on 127.0.0.1: a two-request session recorded through the
//! proxy from an upstream the test starts is served back to a reqwest client — the recorded
//! bytes at the recorded pace, matched by content (the best prefix fit); a streaming request
//! unlike any recorded one gets a `response.failed` event naming the closest recorded request
//! and how it differs, a non-streaming one an API error (HTTP 400, JSON) saying the same; a
//! recording is never used up: two identical client runs get the same answers; the incoming
//! requests are stored as a session linked to the recording, each with its comparison.

use crate::support;

use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use promptwire::store::{Page, Store};
use promptwire::transport::ProxyEvent;
use promptwire::transport::replay::Timing;
use promptwire::transport::replay_server::{ReplayOptions, start_replay};
use serde_json::{Value, json};
use support::scratch;
use support::upstream::{Reply, Upstream, joined, paced, post_responses, turn_events};

fn user(text: &str) -> Value {
    json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})
}

fn assistant(text: &str) -> Value {
    json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]})
}

/// A request body with long, stable instructions and tools (most of the prompt) and `input`.
fn body(input: Vec<Value>, cache_key: &str) -> Value {
    json!({
        "model": "gpt-5.5",
        "instructions": "You are a careful coding agent. ".repeat(40),
        "input": input,
        "tools": [{"type": "function", "name": "shell", "description": "Runs a command. ".repeat(20),
                   "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}}}],
        "stream": true,
        "prompt_cache_key": cache_key,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recording_is_served_back_matched_and_compared() {
    let turn1 = turn_events("resp_t1", "First answer here");
    let turn2 = turn_events("resp_t2", "Second answer");
    let (t1, t2) = (turn1.clone(), turn2.clone());
    let upstream = Upstream::start(move |req| {
        let body: Value = serde_json::from_slice(&req.body).expect("json");
        let events = if body["input"].as_array().map_or(0, Vec::len) == 1 {
            &t1
        } else {
            &t2
        };
        Reply::sse(paced(events, Duration::from_millis(40)))
    });
    let db = scratch("served").join("rec.sqlite");

    // Record two turns.
    let first = body(vec![user("fix the bug")], "rec-key");
    let second = body(
        vec![
            user("fix the bug"),
            assistant("First answer here"),
            user("now test it"),
        ],
        "rec-key",
    );
    let (proxy, _events) = support::upstream::recording_proxy(&upstream.base_url(), &db).await;
    assert_eq!(
        post_responses(&proxy.base_url(), &first).await,
        (200, joined(&turn1))
    );
    assert_eq!(
        post_responses(&proxy.base_url(), &second).await,
        (200, joined(&turn2))
    );
    proxy.stop();
    proxy.stopped().await;
    let recording = Store::open(&db)
        .expect("db")
        .list_sessions(Page::ALL)
        .expect("sessions")[0]
        .id;

    // Serve it back at the recorded pace.
    let mut options = ReplayOptions::new("127.0.0.1:0", db.clone(), recording);
    options.timing = Timing::Original;
    let (replay, mut events) = start_replay(options).await.expect("replay");
    let base = replay.base_url();

    // Unlike anything recorded: a response.failed event, at once.
    let foreign = json!({"model": "other-model", "instructions": "Different.", "input": [user("hello")], "stream": true});
    let (status, bytes) = post_responses(&base, &foreign).await;
    assert_eq!(status, 200);
    let unmatched_0 = format!(
        "promptwire replay: request 0 matches no recorded request of session {recording} (closest: recorded #0, differs from recorded at /tools (model_changed, tools_changed, input_changed); similarity 0.00 < 0.50)"
    );
    assert_eq!(
        String::from_utf8(bytes).expect("utf8"),
        format!(
            "event: response.failed\ndata: {}\n\n",
            json!({"type": "response.failed", "response": {"id": "resp_promptwire_unmatched_0", "status": "failed",
                "error": {"code": "invalid_prompt", "message": unmatched_0}}})
        )
    );

    // The first turn again (another cache key): the recorded bytes, taking the recorded time.
    let started = Instant::now();
    assert_eq!(
        post_responses(&base, &body(vec![user("fix the bug")], "new-key")).await,
        (200, joined(&turn1))
    );
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(40 * turn1.len() as u64 * 8 / 10),
        "{took:?}"
    );

    // The second turn with its first message edited: still matched by position, prefix broken.
    let edited = body(
        vec![
            user("fix the other bug"),
            assistant("First answer here"),
            user("now test it"),
        ],
        "new-key",
    );
    assert_eq!(post_responses(&base, &edited).await, (200, joined(&turn2)));

    // The recorded second turn again: a recording is never used up.
    assert_eq!(post_responses(&base, &second).await, (200, joined(&turn2)));
    replay.stop();
    replay.stopped().await;

    let mut notes = Vec::new();
    while let Ok(event) = events.try_recv() {
        // What the writer still had queued at the stop is said too, when there was any (the
        // machine's speed decides): not a matching note.
        if let ProxyEvent::Note(text) = event
            && !text.ends_with("into the database before stopping")
        {
            notes.push(text);
        }
    }
    let store = Store::open(&db).expect("db");
    let recorded_ids: Vec<i64> = store
        .requests(recording, Page::ALL)
        .expect("requests")
        .iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(
        notes,
        vec![
            format!(
                "incoming #0: {}",
                &unmatched_0["promptwire replay: ".len()..]
            ),
            format!(
                "incoming #1 -> recorded #0 (request {}): same as recorded, similarity 1.00",
                recorded_ids[0]
            ),
            format!(
                "incoming #2 -> recorded #1 (request {}): differs from recorded at /input/0/content/0/text (input_changed), similarity 0.95",
                recorded_ids[1]
            ),
            format!(
                "incoming #3 -> recorded #1 (request {}): same as recorded, similarity 1.00",
                recorded_ids[1]
            ),
        ]
    );

    // The replay session: linked to the recording, one request per incoming one.
    let replays = store.replays_of(recording).expect("replays");
    assert_eq!(replays.len(), 1);
    let session = store.session(replays[0]).expect("session");
    assert_eq!(
        (session.source.as_str(), session.name.as_str()),
        (
            "replay",
            format!(
                "replay of {}",
                store.session(recording).expect("recording").name
            )
            .as_str()
        )
    );
    let mut rows = Vec::new();
    for request in store.requests(replays[0], Page::ALL).expect("requests") {
        let extra = store
            .request(request.id)
            .expect("request")
            .extra
            .expect("extra");
        let outcome = store.outcome(request.id).expect("read").expect("outcome");
        rows.push(json!({
            "recorded_position": extra["replay"]["recorded_position"],
            "prefix_kept": extra["replay"]["comparison"]["prefix_kept"],
            "causes": extra["replay"]["comparison"]["causes"],
            "state": outcome.state,
            "error": outcome.error_class,
            "events": outcome.events,
        }));
    }
    assert_eq!(
        rows,
        vec![
            json!({"recorded_position": null, "prefix_kept": null, "causes": null, "state": "failed", "error": "invalid_request", "events": 1}),
            // A new run of the client: a new thread, so another cache key (stored beside the
            // content verdict, which the note line leaves out).
            json!({"recorded_position": 0, "prefix_kept": true, "causes": ["prompt_cache_key_changed"], "state": "completed", "error": null, "events": turn1.len()}),
            json!({"recorded_position": 1, "prefix_kept": false, "causes": ["prompt_cache_key_changed", "input_changed"], "state": "completed", "error": null, "events": turn2.len()}),
            json!({"recorded_position": 1, "prefix_kept": true, "causes": [], "state": "completed", "error": null, "events": turn2.len()}),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identical_runs_get_the_same_answers_and_an_unmatched_json_request_gets_an_api_error() {
    let turns = [
        turn_events("resp_a", "Answer one"),
        turn_events("resp_b", "Answer two"),
        turn_events("resp_c", "Answer three"),
    ];
    let by_len = turns.clone();
    let upstream = Upstream::start(move |req| {
        let body: Value = serde_json::from_slice(&req.body).expect("json");
        let n = body["input"].as_array().map_or(1, Vec::len);
        Reply::sse(paced(&by_len[(n - 1) / 2], Duration::ZERO))
    });
    let db = scratch("replay_runs").join("rec.sqlite");
    let run = [
        body(vec![user("one")], "key"),
        body(
            vec![user("one"), assistant("Answer one"), user("two")],
            "key",
        ),
        body(
            vec![
                user("one"),
                assistant("Answer one"),
                user("two"),
                assistant("Answer two"),
                user("three"),
            ],
            "key",
        ),
    ];
    let (proxy, _events) = support::upstream::recording_proxy(&upstream.base_url(), &db).await;
    for (request, turn) in run.iter().zip(&turns) {
        assert_eq!(
            post_responses(&proxy.base_url(), request).await,
            (200, joined(turn))
        );
    }
    proxy.stop();
    proxy.stopped().await;
    let recording = Store::open(&db)
        .expect("db")
        .list_sessions(Page::ALL)
        .expect("sessions")[0]
        .id;
    let mut options = ReplayOptions::new("127.0.0.1:0", db.clone(), recording);
    options.timing = Timing::Instant;
    let (replay, _events) = start_replay(options).await.expect("replay");
    let base = replay.base_url();
    // Two identical runs (each a new thread: another cache key), the same answers.
    for key in ["run-1", "run-2"] {
        for (request, turn) in run.iter().zip(&turns) {
            let mut request = request.clone();
            request["prompt_cache_key"] = json!(key);
            assert_eq!(post_responses(&base, &request).await, (200, joined(turn)));
        }
    }
    // A request for no stream that matches nothing: an API error the SDK raises as one.
    let foreign =
        json!({"model": "other-model", "instructions": "Different.", "input": [user("hello")]});
    let response = reqwest::Client::new()
        .post(format!("{base}/v1/responses"))
        .header("content-type", "application/json")
        .body(foreign.to_string())
        .send()
        .await
        .expect("send");
    assert_eq!(
        (
            response.status().as_u16(),
            response
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        ),
        (400, Some("application/json".to_string()))
    );
    let error: Value =
        serde_json::from_slice(&response.bytes().await.expect("body")).expect("json");
    assert_eq!(
        error,
        json!({"error": {
            "message": format!("promptwire replay: request 6 matches no recorded request of session {recording} (closest: recorded #0, differs from recorded at /tools (model_changed, tools_changed, input_changed); similarity 0.00 < 0.50)"),
            "type": "invalid_request_error",
            "param": null,
            "code": "replay_unmatched",
        }})
    );
    replay.stop();
    replay.stopped().await;
}
