//! The recording proxy tried as an attacker would: CONNECT is refused; a path with `..` (spelled
//! out or `%2e%2e`) cannot leave the upstream's base path and never reaches it; an `--upstream`
//! with credentials or a query is refused with a message that does not print the password; a
//! connection that sends no request head is closed after the head timeout, and past the cap a new
//! connection takes the slot of the idle one that waited longest — a normal client is served; `sessions export
//! --bodies` refuses a folder that is a symbolic link.

use crate::support;

use std::time::Duration;

use pretty_assertions::assert_eq;
use promptwire::store::{Page, Store};
use promptwire::transport::proxy::listen::ConnectionLimits;
use promptwire::transport::proxy::{ProxyOptions, start_proxy};
use support::scratch;
use support::upstream::{Reply, Upstream};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

/// Sends `head` raw on a new connection; returns the status line of the answer.
async fn raw(addr: std::net::SocketAddr, head: &str) -> String {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream.write_all(head.as_bytes()).await.expect("write");
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => {
                answer.extend_from_slice(&buf[..n]);
                if answer.windows(4).any(|w| w == b"\r\n\r\n") {
                    break;
                }
            }
            _ => break,
        }
    }
    String::from_utf8_lossy(&answer)
        .lines()
        .next()
        .unwrap_or("")
        .to_string()
}

/// True when the server closes `stream` (a read returns 0) within `within`.
async fn closed_within(stream: &mut TcpStream, within: Duration) -> bool {
    let mut buf = [0u8; 64];
    matches!(
        tokio::time::timeout(within, stream.read(&mut buf)).await,
        Ok(Ok(0) | Err(_))
    )
}

async fn get_models(base: &str) -> u16 {
    reqwest::Client::new()
        .get(format!("{base}/models"))
        .send()
        .await
        .expect("request")
        .status()
        .as_u16()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_dot_segments_and_bad_upstreams_are_refused() {
    let upstream = Upstream::start(|_| Reply::json(200, r#"{"object":"list","data":[]}"#));
    let db = scratch("refused").join("rec.sqlite");
    let (proxy, _events) = support::upstream::recording_proxy(&upstream.base_url(), &db).await;
    let addr = proxy.local_addr();
    assert_eq!(
        raw(
            addr,
            "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"
        )
        .await,
        "HTTP/1.1 405 Method Not Allowed"
    );
    for path in [
        "/v1/../../etc/passwd",
        "/v1/%2e%2e/%2E%2E/secret",
        "/v1/./responses",
    ] {
        assert_eq!(
            raw(addr, &format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n")).await,
            "HTTP/1.1 400 Bad Request",
            "{path}"
        );
    }
    assert_eq!(
        upstream.received().len(),
        0,
        "a refused request reached the upstream"
    );
    assert_eq!(get_models(&proxy.base_url()).await, 200);
    assert_eq!(upstream.received().len(), 1);
    proxy.stop();
    proxy.stopped().await;

    for (url, why) in [
        (
            "https://user:hunter2secret@api.example.com/v1",
            "it carries credentials (user:password@), which would not be forwarded; the client's own Authorization header goes upstream untouched",
        ),
        (
            "https://api.example.com/v1?api-version=1",
            "it has a query or fragment, which would be dropped from every forwarded URL; give the base URL only (e.g. https://api.openai.com/v1)",
        ),
    ] {
        let Err(error) = start_proxy(ProxyOptions::new("127.0.0.1:0", url, None)).await else {
            panic!("{url} was accepted");
        };
        let error = error.to_string();
        assert!(error.ends_with(why), "{error}");
        assert!(!error.contains("hunter2secret"), "{error}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_are_closed_and_give_their_slots_to_new_clients() {
    let upstream = Upstream::start(|_| Reply::json(200, r#"{"object":"list","data":[]}"#));
    let mut options = ProxyOptions::new("127.0.0.1:0", &upstream.base_url(), None);
    options.connections = ConnectionLimits {
        header_timeout: Duration::from_millis(400),
        max_connections: 8,
        ..ConnectionLimits::default()
    };
    let (proxy, _events) = start_proxy(options).await.expect("proxy");
    let addr = proxy.local_addr();
    // Eight connections that never send a head fill the cap: the ninth takes the slot of the
    // one that waited longest, which is closed, and is served.
    let mut idle = Vec::new();
    for _ in 0..8 {
        idle.push(TcpStream::connect(addr).await.expect("connect"));
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        raw(addr, "GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n").await,
        "HTTP/1.1 200 OK"
    );
    assert!(closed_within(&mut idle[0], Duration::from_millis(300)).await);
    // The idle ones are closed after the head timeout; then a normal client is served.
    for stream in &mut idle {
        assert!(closed_within(stream, Duration::from_secs(3)).await);
    }
    assert_eq!(get_models(&proxy.base_url()).await, 200);
    proxy.stop();
    proxy.stopped().await;
}

#[cfg(unix)]
#[test]
fn bodies_are_never_exported_through_a_symbolic_link() {
    let dir = scratch("symlink");
    let db = dir.join("db.sqlite");
    let store = promptwire::store::seed::open_seeded(&db).expect("seeded");
    let session = store.list_sessions(Page::ALL).expect("sessions")[0].id;
    let target = dir.join("elsewhere");
    std::fs::create_dir_all(&target).expect("target");
    let link = dir.join("bodies");
    std::os::unix::fs::symlink(&target, &link).expect("symlink");
    let error = store
        .export_bodies(session, &link, true)
        .expect_err("refused")
        .to_string();
    assert_eq!(
        error,
        format!(
            "the folder is a symbolic link; give the folder it points to, or another: {}",
            link.display()
        )
    );
    assert_eq!(std::fs::read_dir(&target).expect("target").count(), 0);
    drop(Store::open(&db).expect("still a database"));
}
