//! `promptwire replay` (printing) through the built binary, on sessions recorded by the proxy
//! from an upstream the test starts: `--timing instant` prints exactly what `stream` prints for
//! the same bytes, with the recorded receive times besides; `--timing original` takes the recorded duration (within 20%) and `4x` a
//! quarter of it; a recorded HTTP error replays as its classified failure; bad arguments are
//! one-line user errors.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use bytes::Bytes;
use pretty_assertions::assert_eq;
use promptwire::store::{Page, Store};
use serde_json::{Value, json};
use support::scratch;
use support::upstream::{Reply, Step, Upstream};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/sse")
        .join(name)
}

fn promptwire(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .args(args)
        .output()
        .expect("run promptwire")
}

/// Sends one request through a recording proxy to an upstream answering with `reply`; returns
/// the recorded session's id.
fn record(db: &Path, reply: Reply) -> i64 {
    let upstream = Upstream::start(move |_| reply.clone());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let (handle, _events) = support::upstream::recording_proxy(&upstream.base_url(), db).await;
        let response = reqwest::Client::new()
            .post(format!("{}/v1/responses", handle.base_url()))
            .header("content-type", "application/json")
            .body(json!({"model": "gpt-5.5", "input": "replay me", "stream": true}).to_string())
            .send()
            .await
            .expect("response");
        let _ = response.bytes().await;
        handle.stop();
        handle.stopped().await;
    });
    let store = Store::open(db).expect("db");
    store.list_sessions(Page::first(1)).expect("sessions")[0].id
}

/// Each line of `out` as JSON.
fn json_lines(out: &[u8]) -> Vec<Value> {
    String::from_utf8(out.to_vec())
        .expect("utf8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// `replay --json` lines without their recorded times, and the events' `at_us`.
fn without_times(out: &[u8]) -> (Vec<Value>, Vec<u64>) {
    let mut at_us = Vec::new();
    let lines = json_lines(out)
        .into_iter()
        .map(|mut line| {
            let object = line.as_object_mut().expect("an object");
            if let Some(at) = object.shift_remove("at_us") {
                at_us.push(at.as_u64().expect("µs"));
            }
            object.shift_remove("timings");
            line
        })
        .collect();
    (lines, at_us)
}

/// The receive times (µs) of the events stored for the session's one request, up to its
/// completion (a client reads none after it).
fn stored_times(db: &Path, session: i64) -> Vec<u64> {
    let store = Store::open(db).expect("db");
    let request = &store.requests(session, Page::ALL).expect("requests")[0];
    let events = store.events(request.id, Page::ALL).expect("events");
    let done = events
        .iter()
        .position(|e| e.event.as_deref() == Some("response.completed"))
        .map_or(events.len(), |i| i + 1);
    events[..done]
        .iter()
        .map(|e| u64::try_from(e.received_at.as_micros()).expect("µs"))
        .collect()
}

/// The file's bytes in three chunks, `gap` apart.
fn chunked(bytes: &[u8], gap: Duration) -> Vec<Step> {
    let third = bytes.len() / 3;
    let mut steps = Vec::new();
    for part in [
        &bytes[..third],
        &bytes[third..2 * third],
        &bytes[2 * third..],
    ] {
        steps.push(Step::Sleep(gap));
        steps.push(Step::Send(Bytes::copy_from_slice(part)));
    }
    steps
}

#[test]
fn instant_replay_prints_what_stream_prints_for_the_same_bytes() {
    let dir = scratch("instant");
    for name in [
        "text-answer.sse",
        "tool-calls-crlf.sse",
        "failed-rate-limit.sse",
        "cut-off.sse",
    ] {
        let path = fixture(name);
        let bytes = std::fs::read(&path).expect("fixture");
        let db = dir.join(format!("{name}.sqlite"));
        let session = record(&db, Reply::sse(chunked(&bytes, Duration::from_millis(5))));
        let db_arg = db.to_str().expect("path");
        for json_flag in [true, false] {
            let mut replay_args = vec![
                "replay",
                "--session",
                &session.to_string(),
                "--timing",
                "instant",
                "--db",
                db_arg,
            ]
            .into_iter()
            .map(str::to_string)
            .collect::<Vec<_>>();
            let mut stream_args = vec![
                "stream".to_string(),
                path.to_str().expect("path").to_string(),
            ];
            if json_flag {
                replay_args.push("--json".to_string());
                stream_args.push("--json".to_string());
            }
            let replayed = promptwire(&replay_args.iter().map(String::as_str).collect::<Vec<_>>());
            let streamed = promptwire(&stream_args.iter().map(String::as_str).collect::<Vec<_>>());
            assert_eq!(replayed.status.code(), Some(0), "{name}: {replayed:?}");
            assert_eq!(streamed.status.code(), Some(0), "{name}: {streamed:?}");
            if json_flag {
                // The same lines, each with the recorded times (`at_us`, `timings`) besides.
                let (untimed, at_us) = without_times(&replayed.stdout);
                let streamed: Vec<Value> = json_lines(&streamed.stdout);
                assert_eq!(untimed, streamed, "{name}");
                assert_eq!(
                    at_us,
                    stored_times(&db, session),
                    "{name}: the recorded times"
                );
            } else {
                // Readable lines carry receive times; compare them without the time column.
                let untimed = |out: Vec<u8>| -> Vec<String> {
                    String::from_utf8(out)
                        .expect("utf8")
                        .lines()
                        .filter(|l| !l.starts_with("request #") && !l.starts_with("timing "))
                        .map(|l| match l.trim_start().split_once("s  #") {
                            Some((_, rest)) => rest.to_string(),
                            None => l.to_string(),
                        })
                        .collect()
                };
                assert_eq!(untimed(replayed.stdout), untimed(streamed.stdout), "{name}");
            }
        }
    }
}

#[test]
fn original_timing_takes_the_recorded_duration_and_4x_a_quarter() {
    let dir = scratch("timing");
    let bytes = std::fs::read(fixture("text-answer.sse")).expect("fixture");
    // Event by event, 50 ms apart.
    let mut steps = Vec::new();
    let text = String::from_utf8(bytes).expect("utf8");
    for event in text.split_inclusive("\n\n") {
        steps.push(Step::Sleep(Duration::from_millis(50)));
        steps.push(Step::Send(Bytes::from(event.to_string())));
    }
    let db = dir.join("rec.sqlite");
    let session = record(&db, Reply::sse(steps));
    let recorded = {
        let store = Store::open(&db).expect("db");
        let request = &store.requests(session, Page::ALL).expect("requests")[0];
        let outcome = store.outcome(request.id).expect("read").expect("outcome");
        Duration::from_micros(u64::try_from(outcome.total_us.expect("total")).expect("positive"))
    };
    assert!(recorded >= Duration::from_millis(500), "{recorded:?}");
    let run = |timing: &str| {
        let started = Instant::now();
        let out = promptwire(&[
            "replay",
            "--session",
            &session.to_string(),
            "--timing",
            timing,
            "--json",
            "--db",
            db.to_str().expect("path"),
        ]);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        (
            started.elapsed(),
            String::from_utf8(out.stdout).expect("utf8"),
        )
    };
    let (original, original_lines) = run("original");
    let (fast, fast_lines) = run("4x");
    let (_, instant_lines) = run("instant");
    let ratio = original.as_secs_f64() / recorded.as_secs_f64();
    assert!(
        (0.8..=1.2).contains(&ratio),
        "original {original:?} vs recorded {recorded:?}"
    );
    let quarter = recorded.as_secs_f64() / 4.0;
    assert!(
        fast.as_secs_f64() >= quarter * 0.8 && fast.as_secs_f64() <= quarter * 1.2 + 0.1,
        "4x {fast:?} vs recorded {recorded:?}"
    );
    assert_eq!(original_lines, instant_lines);
    assert_eq!(fast_lines, instant_lines);
}

#[test]
fn a_recorded_http_error_replays_as_its_failure_and_bad_arguments_are_user_errors() {
    let db = scratch("errors").join("rec.sqlite");
    let body = r#"{"error":{"type":"invalid_request_error","code":null,"message":"bad input"}}"#;
    let session = record(&db, Reply::json(400, body));
    let db_arg = db.to_str().expect("path");
    let out = promptwire(&[
        "replay",
        "--session",
        &session.to_string(),
        "--json",
        "--db",
        db_arg,
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let line: Value = serde_json::from_slice(&out.stdout).expect("one JSON line");
    assert_eq!(
        line,
        json!({"outcome": "failed", "error": "invalid_request", "message": format!("HTTP 400: invalid request: {body}"), "retry_after_ms": null, "timings": {"first_event_us": null, "first_text_us": null, "last_event_us": null, "total_us": null}})
    );
    for (args, message) in [
        (
            vec!["replay", "--session", "999", "--db", db_arg],
            "promptwire: no session 999\n".to_string(),
        ),
        (
            vec![
                "replay",
                "--session",
                &session.to_string(),
                "--request",
                "3",
                "--db",
                db_arg,
            ],
            format!("promptwire: session {session} has no request 3\n"),
        ),
        (
            vec![
                "replay",
                "--session",
                "1",
                "--timing",
                "slow",
                "--db",
                db_arg,
            ],
            String::new(),
        ),
    ] {
        let out = promptwire(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let stderr = String::from_utf8(out.stderr).expect("utf8");
        if message.is_empty() {
            assert!(stderr.contains("`slow` is not a timing"), "{stderr}");
        } else {
            assert_eq!(stderr, message);
        }
    }
}
