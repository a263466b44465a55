//! `promptwire record` end to end through the built binary: the first line names the address,
//! a request through it is recorded, SIGTERM stops it cleanly with a summary; a non-loopback
//! address warns; a bad upstream URL is a one-line user error.

use crate::support;

use std::io::{BufRead as _, BufReader};
use std::process::Command;
use std::time::Duration;

use pretty_assertions::assert_eq;
use promptwire::store::{Page, Store};
use serde_json::{Value, json};
use support::scratch;
use support::server::Server;
use support::upstream::{Reply, Upstream, paced, turn_events};

#[test]
fn record_prints_its_address_records_and_stops_on_sigterm() {
    let events = turn_events("resp_cli", "recorded by the command");
    let count = events.len();
    let upstream = Upstream::start(move |_| Reply::sse(paced(&events, Duration::from_millis(5))));
    let db = scratch("record").join("rec.sqlite");
    let mut child = Server::spawn(&[
        "record",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        &upstream.base_url(),
        "--db",
        db.to_str().expect("path"),
        "--session",
        "my run",
        "--json",
    ]);
    let mut lines = BufReader::new(child.0.stdout.take().expect("stdout")).lines();
    let first: Value =
        serde_json::from_str(&lines.next().expect("a line").expect("read")).expect("json");
    assert_eq!(first["upstream"], upstream.base_url());
    let addr = first["listening"].as_str().expect("address").to_string();

    let body = json!({"model": "gpt-5.5", "input": "hi", "stream": true});
    let response = reqwest::blocking_post(&format!("http://{addr}/v1/responses"), &body);
    assert_eq!(response.0, 200);

    let request: Value =
        serde_json::from_str(&lines.next().expect("line").expect("read")).expect("json");
    let outcome: Value =
        serde_json::from_str(&lines.next().expect("line").expect("read")).expect("json");
    let session = request["request"]["session"].clone();
    let id = request["request"]["id"].clone();
    assert_eq!(
        request,
        json!({"request": {"exchange": 1, "session": session, "id": id, "method": "POST",
            "url": format!("{}/responses", upstream.base_url()), "dialect": "standard"}})
    );
    assert_eq!(
        outcome,
        json!({"outcome": {"exchange": 1, "id": id, "status": 200, "state": "completed", "error": null, "events": count, "recording": "complete"}})
    );
    child.terminate();
    let last: Value =
        serde_json::from_str(&lines.next().expect("line").expect("read")).expect("json");
    assert_eq!(
        last,
        json!({"stopped": true, "requests": 1, "not_recorded": 0, "passthrough": 0, "sessions": [session]})
    );
    assert_eq!(child.0.wait().expect("wait").code(), Some(0));

    let store = Store::open(&db).expect("db");
    let sessions = store.list_sessions(Page::ALL).expect("sessions");
    assert_eq!(
        sessions
            .iter()
            .map(|s| (s.name.as_str(), s.requests))
            .collect::<Vec<_>>(),
        vec![("my run", 1)]
    );
}

#[test]
fn a_non_loopback_address_warns_and_bad_upstreams_are_user_errors() {
    let db = scratch("warn").join("rec.sqlite");
    let mut child = Server::spawn(&[
        "record",
        "--listen",
        "0.0.0.0:0",
        "--upstream",
        "http://127.0.0.1:9/v1",
        "--db",
        db.to_str().expect("path"),
    ]);
    let mut stdout = BufReader::new(child.0.stdout.take().expect("stdout")).lines();
    let first = stdout.next().expect("line").expect("read");
    assert!(first.starts_with("listening on http://0.0.0.0:"), "{first}");
    child.terminate();
    let mut stderr_text = String::new();
    std::io::Read::read_to_string(child.0.stderr.as_mut().expect("stderr"), &mut stderr_text)
        .expect("stderr");
    let status = child.0.wait().expect("wait");
    assert_eq!(status.code(), Some(0));
    let stderr = stderr_text;
    assert!(
        stderr.starts_with("promptwire: warning: listening on 0.0.0.0:"),
        "{stderr}"
    );

    let output = Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .args([
            "record",
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            "ftp://x",
            "--db",
            db.to_str().expect("path"),
        ])
        .output()
        .expect("wait");
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(output.stderr).expect("utf8"),
        "promptwire: invalid upstream URL ftp://x: unsupported scheme `ftp`\n"
    );
}

mod reqwest {
    /// POSTs JSON from a throwaway runtime; returns the status and body.
    pub fn blocking_post(url: &str, body: &serde_json::Value) -> (u16, Vec<u8>) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async {
            let response = ::reqwest::Client::new()
                .post(url)
                .header("content-type", "application/json")
                .body(body.to_string())
                .send()
                .await
                .expect("response");
            let status = response.status().as_u16();
            (status, response.bytes().await.expect("body").to_vec())
        })
    }
}
