//! `record` says what it could not do, through the real binary on 127.0.0.1: a WebSocket
//! upgrade the upstream refuses is printed (`{"upgrade_failed":…}`) and counted in the last line
//! (`"upgrade_failures"`); a 429 is stored with the one class name it has everywhere
//! (`retry_limit`), and `sessions show` gives its class and the server's Retry-After.

use crate::support;

use std::io::{BufRead as _, Read as _};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::cli::run;
use support::scratch;
use support::upstream::{Reply, Upstream};

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_upgrades_are_counted_and_a_429_shows_its_class_and_retry_after() {
    let upstream = Upstream::start(|req| {
        if req.header("upgrade").is_some() {
            Reply::status(
                403,
                &[],
                &json!({"error": {"message": "no websockets here"}}),
            )
        } else {
            Reply::status(
                429,
                &[("retry-after", "2")],
                &json!({"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}),
            )
            .with_length()
        }
    });
    let db = scratch("record_reports").join("rec.sqlite");
    let mut child = Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .args(["record", "--json", "--listen", "127.0.0.1:0", "--upstream"])
        .arg(upstream.base_url())
        .arg("--db")
        .arg(&db)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn record");
    let mut stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    let mut first = String::new();
    stdout.read_line(&mut first).expect("first line");
    let first: Value = serde_json::from_str(&first).expect("json line");
    let addr = first["listening"].as_str().expect("address").to_string();

    // A WebSocket client is refused: it learns so, and `record` says so.
    let refused = tokio_tungstenite::connect_async(format!("ws://{addr}/v1/responses")).await;
    match refused {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            assert_eq!(response.status().as_u16(), 403);
        }
        other => panic!("expected a refusal, got {:?}", other.map(|_| ())),
    }
    // A 429 over HTTP.
    let response = reqwest::Client::new()
        .post(format!("http://{addr}/v1/responses"))
        .header("content-type", "application/json")
        .body(json!({"model": "gpt-5.5", "input": "hi", "stream": true}).to_string())
        .send()
        .await
        .expect("send");
    assert_eq!(response.status().as_u16(), 429);
    // Read whole, as a client does (one that hangs up early is recorded as cancelled).
    response.bytes().await.expect("body");
    // Once the outcome is stored, stop.
    let mut lines = Vec::new();
    let mut line = String::new();
    while stdout.read_line(&mut line).expect("line") > 0 {
        let value: Value = serde_json::from_str(&line).expect("json line");
        line.clear();
        let done = value.get("outcome").is_some();
        lines.push(value);
        if done {
            break;
        }
    }
    let kill = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(kill.success());
    let sent = Instant::now();
    while child.try_wait().expect("try_wait").is_none() && sent.elapsed() < Duration::from_secs(10)
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).expect("rest");
    lines.extend(rest.lines().filter_map(|l| serde_json::from_str(l).ok()));
    assert_eq!(
        lines
            .iter()
            .find(|l| l.get("upgrade_failed").is_some())
            .cloned(),
        Some(
            json!({"upgrade_failed": {"path": "/v1/responses", "status": 403,
            "reason": "the upstream refused the upgrade with HTTP 403"}})
        )
    );
    let last = lines.last().expect("a last line");
    assert_eq!(
        (&last["stopped"], &last["upgrade_failures"]),
        (&json!(true), &json!(1))
    );
    let outcome = lines
        .iter()
        .find_map(|l| l.get("outcome"))
        .expect("an outcome line");
    assert_eq!(
        (&outcome["status"], &outcome["error"]),
        (&json!(429), &json!("retry_limit"))
    );

    // `sessions show`: the class and the Retry-After, in JSON and in text.
    let db_arg = db.to_string_lossy().into_owned();
    let session = outcome["id"].as_i64().expect("id");
    let listed = run(&["sessions", "list", "--json", "--db", &db_arg], None);
    let sessions: Value = serde_json::from_slice(&listed.stdout).expect("list json");
    let session_id = sessions[0]["id"].as_i64().expect("session id");
    let shown = run(
        &[
            "sessions",
            "show",
            &session_id.to_string(),
            "--json",
            "--db",
            &db_arg,
        ],
        None,
    );
    let shown: Value = serde_json::from_slice(&shown.stdout).expect("show json");
    let row = &shown["requests"][0];
    assert_eq!(
        (
            &row["id"],
            &row["outcome"],
            &row["error_class"],
            &row["retry_after"]
        ),
        (
            &json!(session),
            &json!("HTTP 429"),
            &json!("retry_limit"),
            &json!("2")
        )
    );
    let text = run(
        &["sessions", "show", &session_id.to_string(), "--db", &db_arg],
        None,
    );
    let text = String::from_utf8_lossy(&text.stdout).into_owned();
    assert!(
        text.contains("\n        retry_limit, Retry-After 2"),
        "{text}"
    );
}
