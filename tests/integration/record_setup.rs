//! `promptwire record` prints, when it starts and before the first request, what to paste into a
//! client to point it at the proxy (`core::setup_lines`, the same text the Record panel shows):
//! the Codex `config.toml` entry, the one-line `codex -c …`, `OPENAI_BASE_URL` for the SDKs and a
//! curl line, each naming the address it really listens on. In text the block follows the first
//! line; with `--json` it is the first line's `setup` object. Read from the built binary.

use crate::support;

use std::io::{BufRead as _, BufReader};
use std::time::Duration;

use pretty_assertions::assert_eq;
use promptwire::core::setup_lines::{setup_snippets, setup_text};
use serde_json::{Value, json};
use support::scratch;
use support::server::Server;
use support::upstream::{Reply, Upstream, paced, turn_events};

fn start(name: &str, upstream: &Upstream, json: bool) -> Server {
    let db = scratch(name).join("rec.sqlite");
    let base = upstream.base_url();
    let mut args = vec![
        "record",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        &base,
        "--db",
        db.to_str().expect("path"),
    ];
    if json {
        args.push("--json");
    }
    Server::spawn(&args)
}

fn post(url: &str) -> u16 {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let response = reqwest::Client::new()
            .post(url)
            .header("content-type", "application/json")
            .body(json!({"model": "gpt-5.5", "input": "hi", "stream": true}).to_string())
            .send()
            .await
            .expect("response");
        let status = response.status().as_u16();
        response.bytes().await.expect("body");
        status
    })
}

#[test]
fn record_prints_the_client_setup_for_its_address_before_the_first_request() {
    let events = turn_events("resp_setup", "set up");
    let upstream = Upstream::start(move |_| Reply::sse(paced(&events, Duration::from_millis(1))));
    let mut child = start("record-setup", &upstream, false);
    let mut lines = BufReader::new(child.0.stdout.take().expect("stdout")).lines();
    let mut next = || lines.next().expect("a line").expect("read");
    let first = next();
    let prefix = "listening on http://";
    let addr = first
        .strip_prefix(prefix)
        .and_then(|rest| rest.split_once(" -> "))
        .map(|(addr, _)| addr.to_string())
        .unwrap_or_else(|| panic!("first line: {first}"));
    let addr: std::net::SocketAddr = addr.parse().expect("listening address");
    // Everything up to the first request's line, which the request below makes.
    let expected_block = setup_text(addr);
    let block_lines = expected_block.lines().count();
    let mut printed: Vec<String> = vec![first];
    for _ in 0..block_lines + 2 {
        printed.push(next());
    }
    assert_eq!(post(&format!("http://{addr}/v1/responses")), 200);
    let request = next();
    let mut expected: Vec<String> = vec![
        format!("listening on http://{addr} -> {}", upstream.base_url()),
        String::new(),
    ];
    expected.extend(expected_block.lines().map(str::to_string));
    expected.push(String::new());
    assert_eq!(printed, expected);
    assert!(
        request.starts_with("#1    POST "),
        "the request follows the setup: {request}"
    );
    // The block names the address it listens on, the config entry and the one-line form.
    let url = format!("http://{addr}/v1");
    assert_eq!(
        (
            printed.contains(&format!("base_url = \"{url}\"")),
            printed.contains(&format!("OPENAI_BASE_URL={url}")),
            printed.contains(&"supports_websockets = true".to_string()),
            printed
                .iter()
                .any(|l| l.starts_with("codex -c model_provider=promptwire ")),
        ),
        (true, true, true, true)
    );
    child.terminate();
    assert_eq!(child.0.wait().expect("wait").code(), Some(0));
}

#[test]
fn record_json_puts_the_setup_in_its_first_line() {
    let events = turn_events("resp_setup_json", "set up");
    let upstream = Upstream::start(move |_| Reply::sse(paced(&events, Duration::from_millis(1))));
    let mut child = start("record-setup-json", &upstream, true);
    let mut lines = BufReader::new(child.0.stdout.take().expect("stdout")).lines();
    let first: Value =
        serde_json::from_str(&lines.next().expect("a line").expect("read")).expect("json");
    let addr: std::net::SocketAddr = first["listening"]
        .as_str()
        .expect("address")
        .parse()
        .expect("socket address");
    let setup: serde_json::Map<String, Value> = setup_snippets(addr)
        .into_iter()
        .map(|s| (s.key.to_string(), json!(s.text)))
        .collect();
    assert_eq!(
        first,
        json!({"listening": addr.to_string(), "upstream": upstream.base_url(), "setup": setup})
    );
    assert_eq!(
        first["setup"]["sdk_env"],
        json!(format!("OPENAI_BASE_URL=http://{addr}/v1"))
    );
    // The next line is the first request's, as before.
    assert_eq!(post(&format!("http://{addr}/v1/responses")), 200);
    let request: Value =
        serde_json::from_str(&lines.next().expect("line").expect("read")).expect("json");
    assert_eq!(request["request"]["exchange"], json!(1));
    child.terminate();
    assert_eq!(child.0.wait().expect("wait").code(), Some(0));
}
