//! The listening side shared by the recording proxy and the replay endpoint: bind (loopback
//! unless told otherwise, with a warning then), accept connections and serve each with hyper's
//! HTTP/1.1 server (upgrades allowed, for WebSocket), until stopped. On stop, connections get a
//! short grace period to finish their responses, then are dropped.
//!
//! Connections are bounded ([`ConnectionLimits`]): a client has a while to send a request's
//! head (on a new connection and between keep-alive requests), after which the connection is
//! closed, and past a number of open connections a new one is closed at once — so idle sockets
//! cannot exhaust the file descriptors and hang every other client.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt as _;
use http_body_util::combinators::UnsyncBoxBody;
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use super::ServerError;
use crate::transport::CancelToken;

/// The body of every response the servers send.
pub type Body = UnsyncBoxBody<Bytes, std::io::Error>;

/// How long in-flight responses may run on after a stop.
const STOP_GRACE: Duration = Duration::from_secs(2);

/// Bounds on the connections a server holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Time a client has to send a request's head (first, and after each response).
    pub header_timeout: Duration,
    /// Open connections at most; a connection past it is closed at once.
    pub max_connections: usize,
}

impl Default for ConnectionLimits {
    /// 10 s to send a head, 512 connections.
    fn default() -> Self {
        Self {
            header_timeout: Duration::from_secs(10),
            max_connections: 512,
        }
    }
}

/// A whole body from bytes.
pub fn full(bytes: impl Into<Bytes>) -> Body {
    http_body_util::Full::new(bytes.into())
        .map_err(|never| match never {})
        .boxed_unsync()
}

/// Binds `listen` (`HOST:PORT`). Returns the listener, its address, and a warning when the
/// address is not loopback (the proxy then serves anyone who can reach it).
pub async fn bind(listen: &str) -> Result<(TcpListener, SocketAddr, Option<String>), ServerError> {
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host(listen)
        .await
        .map_err(|e| ServerError::BadListen {
            listen: listen.to_string(),
            reason: e.to_string(),
        })?
        .collect();
    let Some(first) = addrs.first() else {
        return Err(ServerError::BadListen {
            listen: listen.to_string(),
            reason: "the address resolves to nothing".to_string(),
        });
    };
    let listener = TcpListener::bind(first)
        .await
        .map_err(|e| ServerError::BadListen {
            listen: listen.to_string(),
            reason: e.to_string(),
        })?;
    let addr = listener.local_addr().map_err(|e| ServerError::BadListen {
        listen: listen.to_string(),
        reason: e.to_string(),
    })?;
    let warning = (!addr.ip().is_loopback()).then(|| {
        format!(
            "listening on {addr}, which is not a loopback address: anyone who can reach it can use \
             the upstream through it and read what it records"
        )
    });
    Ok((listener, addr, warning))
}

/// Serves connections on `listener` with `service` (called with each request and the number of
/// its connection) until `cancel` fires, within `limits`.
pub async fn serve<S, F>(
    listener: TcpListener,
    service: S,
    cancel: CancelToken,
    limits: ConnectionLimits,
) where
    S: Fn(Request<Incoming>, u64) -> F + Send + Sync + 'static,
    F: Future<Output = Response<Body>> + Send + 'static,
{
    let service = Arc::new(service);
    let connections = Arc::new(AtomicU64::new(0));
    let open = Arc::new(tokio::sync::Semaphore::new(limits.max_connections.max(1)));
    let mut tasks = tokio::task::JoinSet::new();
    loop {
        let accepted = tokio::select! {
            biased;
            () = cancel.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        let Ok((stream, _peer)) = accepted else {
            // A failed accept (out of file descriptors): wait a little and go on.
            tokio::time::sleep(Duration::from_millis(20)).await;
            continue;
        };
        // Past the cap the newest connection is closed: those already served go on.
        let Ok(permit) = Arc::clone(&open).try_acquire_owned() else {
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let number = connections.fetch_add(1, Ordering::Relaxed) + 1;
        let service = Arc::clone(&service);
        let cancel = cancel.clone();
        tasks.spawn(async move {
            let _permit = permit;
            let svc = hyper::service::service_fn(move |req| {
                let response = service(req, number);
                async move { Ok::<_, std::convert::Infallible>(response.await) }
            });
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(limits.header_timeout)
                .serve_connection(TokioIo::new(stream), svc)
                .with_upgrades();
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                () = cancel.cancelled() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(STOP_GRACE, conn.as_mut()).await;
                }
            }
        });
        // Reap finished connections so the set does not grow.
        while tasks.try_join_next().is_some() {}
    }
    drop(listener);
    let _ = tokio::time::timeout(STOP_GRACE + Duration::from_millis(500), async {
        while tasks.join_next().await.is_some() {}
    })
    .await;
    tasks.abort_all();
    while tasks.join_next().await.is_some() {}
}
