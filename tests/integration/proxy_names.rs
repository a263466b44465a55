//! Proxy sessions named by what they are, through the built `promptwire record`: a Codex
//! request (the captured `codex exec "List the files here."` of Codex 0.171) makes a session
//! stored as `codex_exec · "List the files here." · HH:MM · session:<thread id>`, listed by
//! `sessions list` without the key; a curl request without a user message is named `curl ·
//! HH:MM`; a `--session NAME` stays the name as given.

use crate::support;

use std::io::{BufRead as _, BufReader};
use std::time::Duration;

use pretty_assertions::assert_eq;
use promptwire::store::{Page, Store};
use serde_json::{Value, json};
use support::scratch;
use support::server::Server;
use support::upstream::{Reply, Upstream, paced, turn_events};

const CODEX: &str = "tests/data/codex-0.171/standard-gpt-5.5-tool-call";
const THREAD: &str = "01a22d2e-1e12-7572-a9bb-3a07cdc8e803";

/// A request to post: its body and headers.
type Post = (Vec<u8>, Vec<(&'static str, String)>);

/// The captured first request of a Codex turn and the headers that name its client and thread.
fn codex_request() -> Post {
    let body = std::fs::read(format!("{CODEX}/req_00.json")).expect("req_00.json");
    let headers: Value = serde_json::from_slice(
        &std::fs::read(format!("{CODEX}/req_00.headers.json")).expect("headers"),
    )
    .expect("json");
    let kept = ["originator", "user-agent", "session-id", "thread-id"]
        .into_iter()
        .map(|name| {
            let value = headers["headers"][name].as_str().expect("header");
            (name, value.to_string())
        })
        .collect();
    (body, kept)
}

/// Runs `record` with `extra` arguments, posts each of `requests` through it, stops it, and
/// returns the database.
fn record(name: &str, extra: &[&str], requests: &[Post]) -> String {
    let events = turn_events("resp_names", "done");
    let upstream = Upstream::start(move |_| Reply::sse(paced(&events, Duration::from_millis(1))));
    let db = scratch(name).join("names.sqlite");
    let db = db.to_str().expect("path").to_string();
    let base = upstream.base_url();
    let mut args = vec![
        "record",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        &base,
        "--db",
        &db,
        "--json",
    ];
    args.extend_from_slice(extra);
    let mut child = Server::spawn(&args);
    let mut lines = BufReader::new(child.0.stdout.take().expect("stdout")).lines();
    let first: Value =
        serde_json::from_str(&lines.next().expect("a line").expect("read")).expect("json");
    let addr = first["listening"].as_str().expect("address").to_string();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    for (body, headers) in requests {
        let status = runtime.block_on(async {
            let mut post = reqwest::Client::new()
                .post(format!("http://{addr}/v1/responses"))
                .header("content-type", "application/json")
                .body(body.clone());
            for (name, value) in headers {
                post = post.header(*name, value);
            }
            let response = post.send().await.expect("response");
            let status = response.status().as_u16();
            response.bytes().await.expect("body");
            status
        });
        assert_eq!(status, 200);
        // The request's line and its outcome's line.
        lines.next().expect("request line").expect("read");
        lines.next().expect("outcome line").expect("read");
    }
    child.terminate();
    assert_eq!(child.0.wait().expect("wait").code(), Some(0));
    db
}

/// `HH:MM` (UTC) of a session's creation.
fn time(created_us: i64) -> String {
    chrono::DateTime::from_timestamp_micros(created_us)
        .expect("time")
        .format("%H:%M")
        .to_string()
}

#[test]
fn record_names_a_codex_session_by_client_first_message_and_time_unless_given_a_name() {
    let curl = (
        serde_json::to_vec(&json!({"model": "gpt-5.5", "input": [], "stream": true}))
            .expect("json"),
        vec![("user-agent", "curl/8.5.0".to_string())],
    );
    let db = record("proxy_names_codex", &[], &[codex_request(), curl]);
    let store = Store::open(std::path::Path::new(&db)).expect("db");
    let sessions = store.list_sessions(Page::ALL).expect("sessions");
    let names: Vec<(String, String, i64)> = sessions
        .iter()
        .map(|s| (s.name.clone(), s.source.clone(), s.requests))
        .collect();
    // Newest first: the curl request came second, on its own connection.
    let (curl_time, codex_time) = (time(sessions[0].created_us), time(sessions[1].created_us));
    let curl_key = sessions[0]
        .name
        .rsplit_once(" · ")
        .map(|(_, key)| key.to_string())
        .expect("a key");
    assert!(curl_key.starts_with("connection:"), "{curl_key}");
    assert_eq!(
        names,
        vec![
            (
                format!("curl · {curl_time} · {curl_key}"),
                "proxy".to_string(),
                1
            ),
            (
                format!("codex_exec · \"List the files here.\" · {codex_time} · session:{THREAD}"),
                "proxy".to_string(),
                1
            ),
        ]
    );

    let listed = support::cli::run(&["sessions", "list", "--db", &db], None);
    assert_eq!(listed.status.code(), Some(0));
    let names: Vec<String> = String::from_utf8(listed.stdout)
        .expect("utf8")
        .lines()
        .map(|line| {
            let rest = line.trim_start().split_once("  ").expect("columns").1;
            rest.split("  proxy")
                .next()
                .expect("name")
                .trim()
                .to_string()
        })
        .collect();
    assert_eq!(
        names,
        vec![
            format!("curl · {curl_time}"),
            format!("codex_exec · \"List the files here.\" · {codex_time}"),
        ]
    );

    // A name given to `record` wins over the derived one, as given.
    let db = record(
        "proxy_names_given",
        &["--session", "my Codex run"],
        &[codex_request()],
    );
    let store = Store::open(std::path::Path::new(&db)).expect("db");
    let names: Vec<String> = store
        .list_sessions(Page::ALL)
        .expect("sessions")
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, vec!["my Codex run".to_string()]);
}
