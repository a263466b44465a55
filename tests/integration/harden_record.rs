//! `record` stops on SIGTERM even when nobody reads its standard output: the pipe fills up
//! (passthrough lines with 4 KB paths), and printing must not hold up the shutdown. It exits
//! within 5 s of the signal.

use crate::support;

use std::io::BufRead as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use support::scratch;
use support::upstream::{Reply, Upstream};

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn record_stops_on_sigterm_while_its_stdout_is_not_read() {
    let upstream = Upstream::start(|_| Reply::json(200, r#"{"object":"list","data":[]}"#));
    let db = scratch("harden_record").join("rec.sqlite");
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
    // The first line is read (the address); after it, standard output is never read again but
    // stays open.
    let mut stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    let mut first = String::new();
    stdout.read_line(&mut first).expect("first line");
    let first: serde_json::Value = serde_json::from_str(&first).expect("json line");
    let addr = first["listening"].as_str().expect("address").to_string();
    let client = reqwest::Client::new();
    let long = "a".repeat(4000);
    // 200 lines of 4 KB: far more than a pipe holds.
    for n in 0..200 {
        let status = client
            .get(format!("http://{addr}/v1/models/{n}{long}"))
            .send()
            .await
            .expect("passthrough")
            .status()
            .as_u16();
        assert_eq!(status, 200);
    }
    let kill = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(kill.success());
    let sent = Instant::now();
    let exited = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break Some(status);
        }
        if sent.elapsed() > Duration::from_secs(5) {
            break None;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    if exited.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    drop(stdout);
    assert_eq!(
        exited.map(|status| status.code()),
        Some(Some(0)),
        "record did not exit within 5 s of SIGTERM"
    );
}
