//! One memory budget for all the request bodies the proxy is reading: with a 1 MiB budget, a
//! client that has sent 700 KB of a body and stalls holds it; a second 700 KB body finds no room
//! and is answered 503 with a message (never reaching the upstream); once the first is done the
//! budget is back and the second goes through.

use crate::support;

use std::time::Duration;

use pretty_assertions::assert_eq;
use promptwire::transport::proxy::{ProxyOptions, start_proxy};
use serde_json::{Value, json};
use support::scratch;
use support::upstream::{Reply, Upstream};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_big_bodies_share_one_budget() {
    let upstream = Upstream::start(|_| Reply::json(200, r#"{"object":"list","data":[]}"#));
    let db = scratch("harden_budget").join("rec.sqlite");
    let mut options = ProxyOptions::new("127.0.0.1:0", &upstream.base_url(), Some(db));
    options.body_budget_bytes = 1024 * 1024;
    let (proxy, _events) = start_proxy(options).await.expect("proxy");
    let big = 900_000usize;
    let first_part = 700_000usize;

    // The first client sends 700 KB of a 900 KB body, then stalls.
    let mut stalled = TcpStream::connect(proxy.local_addr())
        .await
        .expect("connect");
    let head = format!(
        "POST /v1/files HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: {big}\r\n\r\n"
    );
    stalled.write_all(head.as_bytes()).await.expect("head");
    stalled
        .write_all(&vec![b'a'; first_part])
        .await
        .expect("first part");
    tokio::time::sleep(Duration::from_millis(500)).await;

    let client = reqwest::Client::new();
    let post = |len: usize| {
        client
            .post(format!("{}/v1/files", proxy.base_url()))
            .header("content-type", "application/octet-stream")
            .body(vec![b'b'; len])
            .send()
    };
    let refused = post(first_part).await.expect("answer");
    let status = refused.status().as_u16();
    let retry = refused
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let body: Value = serde_json::from_slice(&refused.bytes().await.expect("body")).expect("json");
    assert_eq!(
        (status, retry, body),
        (
            503,
            Some("1".to_string()),
            json!({"error": {
                "message": "the proxy's memory for request bodies (1.0 MiB, shared by all requests at once) is in use by other requests; try again in a moment",
                "type": "promptwire_proxy",
                "code": "body_budget_exhausted",
            }})
        )
    );
    assert_eq!(upstream.received().len(), 0);

    // The first body ends: it is forwarded, and its budget comes back.
    stalled
        .write_all(&vec![b'a'; big - first_part])
        .await
        .expect("rest");
    let mut answer = vec![0u8; 64];
    let n = tokio::time::timeout(Duration::from_secs(5), stalled.read(&mut answer))
        .await
        .expect("answered in time")
        .expect("read");
    assert_eq!(
        String::from_utf8_lossy(&answer[..n]).lines().next(),
        Some("HTTP/1.1 200 OK")
    );
    assert_eq!(
        post(first_part).await.expect("answer").status().as_u16(),
        200
    );
    let sizes: Vec<usize> = upstream.received().iter().map(|r| r.body.len()).collect();
    assert_eq!(sizes, vec![big, first_part]);
    proxy.stop();
    proxy.stopped().await;
}
