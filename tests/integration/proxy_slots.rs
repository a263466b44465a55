//! Connection slots cannot be held by anyone, on 127.0.0.1 with the default limits: 520
//! connections that send a `Content-Length` body one byte a second (more than the 512 slots)
//! do not lock a new client out of the recording proxy or of the replay endpoint — it is
//! served within 5 s; a body that stalls is answered 408 after the body timeout, and one that
//! drips past the whole-request deadline is answered 408 at the deadline.

use crate::support;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use promptwire::transport::proxy::listen::ConnectionLimits;
use promptwire::transport::proxy::{ProxyOptions, start_proxy};
use promptwire::transport::replay_server::{ReplayOptions, start_replay};
use support::scratch;
use support::upstream::{Reply, Upstream};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

const DRIPPERS: usize = 520;

/// Opens `n` connections to `addr` that each send a request head announcing a 1,000-byte body,
/// then one byte of it a second until `stop`.
async fn drip(addr: SocketAddr, n: usize, stop: Arc<AtomicBool>) {
    for _ in 0..n {
        let stop = Arc::clone(&stop);
        tokio::spawn(async move {
            let Ok(mut stream) = TcpStream::connect(addr).await else {
                return;
            };
            let head = "POST /v1/responses HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n";
            if stream.write_all(head.as_bytes()).await.is_err() {
                return;
            }
            while !stop.load(Ordering::Relaxed) {
                if stream.write_all(b" ").await.is_err() {
                    return;
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        });
    }
    // Every dripper connected and sent its head.
    tokio::time::sleep(Duration::from_millis(1500)).await;
}

/// The status of a `GET /v1/models` on a new connection, and how long it took.
async fn served(addr: SocketAddr) -> (u16, Duration) {
    let started = Instant::now();
    let status = tokio::time::timeout(
        Duration::from_secs(10),
        reqwest::Client::new()
            .get(format!("http://{addr}/v1/models"))
            .send(),
    )
    .await
    .ok()
    .and_then(Result::ok)
    .map_or(0, |r| r.status().as_u16());
    (status, started.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dripping_bodies_do_not_lock_new_clients_out_of_the_proxy() {
    let upstream = Upstream::start(|_| Reply::json(200, r#"{"object":"list","data":[]}"#));
    let options = ProxyOptions::new("127.0.0.1:0", &upstream.base_url(), None);
    let (proxy, _events) = start_proxy(options).await.expect("proxy");
    let stop = Arc::new(AtomicBool::new(false));
    drip(proxy.local_addr(), DRIPPERS, Arc::clone(&stop)).await;
    let (status, took) = served(proxy.local_addr()).await;
    stop.store(true, Ordering::Relaxed);
    assert_eq!(status, 200);
    assert!(took < Duration::from_secs(5), "served after {took:?}");
    proxy.stop();
    proxy.stopped().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dripping_bodies_do_not_lock_new_clients_out_of_the_replay_endpoint() {
    let db = scratch("proxy_slots").join("replay.sqlite");
    let store = promptwire::store::seed::open_seeded(&db).expect("seeded");
    let session = store
        .list_sessions(promptwire::store::Page::ALL)
        .expect("sessions")[0]
        .id;
    drop(store);
    let (replay, _events) = start_replay(ReplayOptions::new("127.0.0.1:0", db, session))
        .await
        .expect("replay");
    let stop = Arc::new(AtomicBool::new(false));
    drip(replay.local_addr(), DRIPPERS, Arc::clone(&stop)).await;
    // The endpoint serves only POST …/responses: a GET is answered 404 at once.
    let (status, took) = served(replay.local_addr()).await;
    stop.store(true, Ordering::Relaxed);
    assert_eq!(status, 404);
    assert!(took < Duration::from_secs(5), "served after {took:?}");
    replay.stop();
    replay.stopped().await;
}

/// Sends `head` and then `body` a byte every `every` on a new connection; returns the status
/// line of the answer and when it came.
async fn slow_body(addr: SocketAddr, body: &[u8], every: Duration) -> (String, Duration) {
    let started = Instant::now();
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    let head = format!(
        "POST /v1/responses HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len() + 100
    );
    stream.write_all(head.as_bytes()).await.expect("head");
    let (mut reader, mut writer) = stream.into_split();
    let body = body.to_vec();
    let dripping = tokio::spawn(async move {
        for byte in body {
            if writer.write_all(&[byte]).await.is_err() {
                return;
            }
            tokio::time::sleep(every).await;
        }
        // Then nothing more: the rest of the announced body never comes.
        tokio::time::sleep(Duration::from_secs(30)).await;
    });
    let mut answer = Vec::new();
    let mut buf = [0u8; 1024];
    while !answer.windows(2).any(|w| w == b"\r\n") {
        match tokio::time::timeout(Duration::from_secs(10), reader.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => answer.extend_from_slice(&buf[..n]),
            _ => break,
        }
    }
    dripping.abort();
    let line = String::from_utf8_lossy(&answer)
        .lines()
        .next()
        .unwrap_or("")
        .to_string();
    (line, started.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_body_and_a_body_past_the_deadline_are_answered_408() {
    let upstream = Upstream::start(|_| Reply::json(200, "{}"));
    let mut options = ProxyOptions::new("127.0.0.1:0", &upstream.base_url(), None);
    options.connections = ConnectionLimits {
        body_timeout: Duration::from_millis(300),
        request_deadline: Duration::from_millis(1200),
        ..ConnectionLimits::default()
    };
    let (proxy, _events) = start_proxy(options).await.expect("proxy");
    // Ten bytes, then silence: answered once the body timeout passes.
    let (line, took) = slow_body(proxy.local_addr(), b"{\"model\":1", Duration::ZERO).await;
    assert_eq!(line, "HTTP/1.1 408 Request Timeout");
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_secs(3),
        "{took:?}"
    );
    // A byte every 100 ms never stalls, but the whole request takes too long.
    let (line, took) =
        slow_body(proxy.local_addr(), &[b' '; 100], Duration::from_millis(100)).await;
    assert_eq!(line, "HTTP/1.1 408 Request Timeout");
    assert!(
        took >= Duration::from_millis(1200) && took < Duration::from_secs(4),
        "{took:?}"
    );
    assert!(upstream.received().is_empty(), "nothing went upstream");
    proxy.stop();
    proxy.stopped().await;
}
