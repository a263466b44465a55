//! The listening side shared by the recording proxy and the replay endpoint: bind (loopback
//! unless told otherwise, with a warning then), accept connections and serve each with hyper's
//! HTTP/1.1 server (upgrades allowed, for WebSocket), until stopped. On stop, connections get a
//! short grace period to finish their responses, then are dropped.
//!
//! Connections are bounded ([`ConnectionLimits`]): a client has a while to send a request's
//! head (on a new connection and between keep-alive requests), then to send each piece of its
//! body and the whole request (`read_body_within` reads the body with [`body_timeouts`]), after
//! which the request is answered 408 and the connection closed. Slots are shared fairly: a
//! peer holds at most [`ConnectionLimits::max_per_peer`], the last
//! [`ConnectionLimits::reserved_for_new_peers`] slots go only to a peer holding none, and when
//! every slot is taken a new connection takes the slot of the connection that has waited longest
//! without a request being served on it (idle, or still sending its head or body) — so idle
//! or dripping sockets cannot lock new clients out. A connection being answered is never taken.

use std::collections::HashMap;
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
    /// Longest wait for the next piece of a request body.
    pub body_timeout: Duration,
    /// Time a client has to send a whole request (head and body) once its head began.
    pub request_deadline: Duration,
    /// Open connections at most.
    pub max_connections: usize,
    /// Open connections one peer address may hold at most.
    pub max_per_peer: usize,
    /// Slots (of `max_connections`) only a peer holding no connection may take.
    pub reserved_for_new_peers: usize,
}

impl Default for ConnectionLimits {
    /// 10 s to send a head, 10 s between pieces of a body, 60 s for a whole request; 512
    /// connections, 448 per peer, 16 kept for new peers.
    fn default() -> Self {
        Self {
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(10),
            request_deadline: Duration::from_secs(60),
            max_connections: 512,
            max_per_peer: 448,
            reserved_for_new_peers: 16,
        }
    }
}

/// The time limits a request body is read within: the longest wait for each piece, and when the
/// whole request must be in.
#[derive(Debug, Clone, Copy)]
pub struct BodyTimeouts {
    /// Longest wait for the next piece.
    pub gap: Duration,
    /// When the whole request must be in.
    pub deadline: tokio::time::Instant,
}

impl BodyTimeouts {
    /// Limits that never fire (a body read outside a served connection).
    pub fn none() -> Self {
        Self {
            gap: Duration::from_secs(24 * 3600),
            deadline: tokio::time::Instant::now() + Duration::from_secs(24 * 3600),
        }
    }
}

tokio::task_local! {
    /// The connection a service runs for (set by [`serve`] around each connection).
    static SLOT: Arc<Slot>;
}

/// The body time limits of the request being served on this task's connection, and the mark
/// that the connection is now being answered (no longer taken for a new connection). Outside a
/// connection served by [`serve`]: limits that never fire.
pub fn body_timeouts() -> BodyTimeouts {
    SLOT.try_with(|slot| slot.timeouts())
        .unwrap_or_else(|_| BodyTimeouts::none())
}

/// Marks this task's connection as being answered (its request read whole).
pub fn mark_answering() {
    let _ = SLOT.try_with(|slot| slot.set_answering(true));
}

/// One open connection as the fair-share bookkeeping sees it.
struct Slot {
    number: u64,
    peer: std::net::IpAddr,
    /// True while a request on it is being answered.
    answering: std::sync::atomic::AtomicBool,
    /// When it last began waiting for a request (accepted, or a response ended), and when its
    /// current request's head arrived.
    since: std::sync::Mutex<(tokio::time::Instant, tokio::time::Instant)>,
    limits: ConnectionLimits,
    /// Fires when the slot is taken for a new connection.
    evict: tokio::sync::Notify,
}

impl Slot {
    fn set_answering(&self, answering: bool) {
        self.answering.store(answering, Ordering::Release);
        if !answering {
            self.since
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .0 = tokio::time::Instant::now();
        }
    }

    fn head_arrived(&self) {
        self.since
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .1 = tokio::time::Instant::now();
    }

    fn timeouts(&self) -> BodyTimeouts {
        let head = self
            .since
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .1;
        BodyTimeouts {
            gap: self.limits.body_timeout,
            deadline: head + self.limits.request_deadline,
        }
    }

    fn waiting_since(&self) -> Option<tokio::time::Instant> {
        (!self.answering.load(Ordering::Acquire)).then(|| {
            self.since
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .0
        })
    }
}

/// Every open connection, for the fair share of slots.
#[derive(Default)]
struct Slots {
    open: std::sync::Mutex<HashMap<u64, Arc<Slot>>>,
}

/// What a new connection from a peer may do.
enum Admission {
    /// Take a free slot.
    Admit,
    /// Take the slot of this connection (told to close).
    Evict(Arc<Slot>),
    /// Be closed.
    Refuse,
}

impl Slots {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Slot>>> {
        self.open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Whether a new connection from `peer` may have a slot, within `limits`.
    fn admit(&self, peer: std::net::IpAddr, limits: &ConnectionLimits) -> Admission {
        let open = self.lock();
        let total = open.len();
        let of_peer = open.values().filter(|s| s.peer == peer).count();
        let max = limits.max_connections.max(1);
        // At most an eighth of the slots are kept back, whatever was asked.
        let reserved = limits.reserved_for_new_peers.min(max / 8);
        let oldest = |only_peer: bool| {
            open.values()
                .filter(|s| !only_peer || s.peer == peer)
                .filter_map(|s| s.waiting_since().map(|at| (at, Arc::clone(s))))
                .min_by_key(|(at, s)| (*at, s.number))
                .map(|(_, s)| s)
        };
        let over_peer = of_peer >= limits.max_per_peer.max(1);
        let over_shared = of_peer > 0 && total >= max - reserved;
        if over_peer || over_shared {
            // A peer past its share makes room among its own waiting connections.
            return oldest(true).map_or(Admission::Refuse, Admission::Evict);
        }
        if total >= max {
            return oldest(false).map_or(Admission::Refuse, Admission::Evict);
        }
        Admission::Admit
    }
}

/// A response body that marks its connection waiting again when it ends (or is dropped).
struct Tracked {
    body: Body,
    slot: Arc<Slot>,
}

impl hyper::body::Body for Tracked {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, std::io::Error>>> {
        std::pin::Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.slot.set_answering(false);
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
    let slots = Arc::new(Slots::default());
    let mut tasks = tokio::task::JoinSet::new();
    loop {
        let accepted = tokio::select! {
            biased;
            () = cancel.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        let Ok((stream, peer)) = accepted else {
            // A failed accept (out of file descriptors): wait a little and go on.
            tokio::time::sleep(Duration::from_millis(20)).await;
            continue;
        };
        let evicted = match slots.admit(peer.ip(), &limits) {
            Admission::Admit => None,
            Admission::Evict(slot) => Some(slot),
            Admission::Refuse => {
                drop(stream);
                continue;
            }
        };
        let number = connections.fetch_add(1, Ordering::Relaxed) + 1;
        let slot = Arc::new(Slot {
            number,
            peer: peer.ip(),
            answering: std::sync::atomic::AtomicBool::new(false),
            since: std::sync::Mutex::new((
                tokio::time::Instant::now(),
                tokio::time::Instant::now(),
            )),
            limits,
            evict: tokio::sync::Notify::new(),
        });
        // Counted at once, so the next accept sees it (a taken slot is let go on its own task).
        if let Some(old) = &evicted {
            slots.lock().remove(&old.number);
            old.evict.notify_one();
        }
        slots.lock().insert(number, Arc::clone(&slot));
        let _ = stream.set_nodelay(true);
        let service = Arc::clone(&service);
        let cancel = cancel.clone();
        let open = Arc::clone(&open);
        let slots = Arc::clone(&slots);
        tasks.spawn(async move {
            // The semaphore is the count of sockets really open: a new connection that took
            // another's slot waits (briefly) for that one to close.
            let permit = match Arc::clone(&open).try_acquire_owned() {
                Ok(permit) => Some(permit),
                Err(_) => tokio::time::timeout(Duration::from_secs(2), open.acquire_owned())
                    .await
                    .ok()
                    .and_then(Result::ok),
            };
            let Some(_permit) = permit else {
                slots.lock().remove(&number);
                return;
            };
            let task_slot = Arc::clone(&slot);
            let svc = hyper::service::service_fn(move |req| {
                let slot = Arc::clone(&task_slot);
                slot.head_arrived();
                let response = SLOT.scope(Arc::clone(&slot), service(req, number));
                async move {
                    let response = response.await;
                    // Answered (an answer that did not read the whole body is answering too).
                    slot.set_answering(true);
                    let response = response
                        .map(|body| http_body_util::BodyExt::boxed_unsync(Tracked { body, slot }));
                    Ok::<_, std::convert::Infallible>(response)
                }
            });
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(limits.header_timeout)
                .serve_connection(TokioIo::new(stream), svc)
                .with_upgrades();
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                () = slot.evict.notified() => {}
                () = cancel.cancelled() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(STOP_GRACE, conn.as_mut()).await;
                }
            }
            slots.lock().remove(&number);
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
