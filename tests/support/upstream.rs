//! The one scripted stand-in upstream of the tests (and of the proxy benchmark): a real HTTP/1.1
//! server on 127.0.0.1 (hyper) that answers each request with a scripted reply — status,
//! headers, body chunks with pauses between them, optionally waiting for a signal before a chunk,
//! then a clean end, a cut or a TCP reset — and logs what it received and when each chunk left.
//! Replies come from a script (a function of the request: [`Upstream::start`]) or from a list, one
//! per connection in order ([`Upstream::in_order`], for the live-send tests).

#![allow(
    clippy::disallowed_methods,
    reason = "a test upstream runs on threads of its own"
)]
// benches/proxy.rs includes this file on its own and uses only part of it.
#![allow(dead_code)]

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::BodyExt as _;
use hyper::body::Frame;
use hyper_util::rt::TokioIo;
use tokio::sync::Semaphore;

/// One step of a reply body.
#[derive(Clone)]
pub enum Step {
    /// Send these bytes as one chunk.
    Send(Bytes),
    /// Pause.
    Sleep(Duration),
    /// Wait for a permit (the client's "I got it"), at most this long; a timeout is logged.
    Wait(Arc<Semaphore>, Duration),
    /// End the body with an error: the connection is cut mid-stream.
    Cut,
    /// Like `Cut`, with the connection closed by a TCP reset (SO_LINGER 0).
    Reset,
}

/// How a reply of [`Reply::answer`] ends after its body chunks.
#[derive(Debug, Clone, Copy)]
pub enum End {
    /// The terminating zero-length chunk.
    Complete,
    /// A TCP reset in the middle of the body.
    Reset,
    /// Nothing more for this long, then the connection closes without ending the body.
    Hang(Duration),
}

/// A scripted reply.
#[derive(Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub steps: Vec<Step>,
}

impl Reply {
    /// This reply with a `Content-Length` for the bytes it sends.
    #[must_use]
    pub fn with_length(mut self) -> Self {
        let len: usize = self
            .steps
            .iter()
            .map(|s| match s {
                Step::Send(b) => b.len(),
                _ => 0,
            })
            .sum();
        self.headers
            .push(("content-length".to_string(), len.to_string()));
        self
    }

    /// `200 text/event-stream` with `steps`.
    pub fn sse(steps: Vec<Step>) -> Self {
        Self {
            status: 200,
            headers: vec![
                ("content-type".to_string(), "text/event-stream".to_string()),
                ("x-request-id".to_string(), "req_up_1".to_string()),
                (
                    "set-cookie".to_string(),
                    "upstream-session=cookie-secret-42".to_string(),
                ),
            ],
            steps,
        }
    }

    /// A JSON answer with `status`.
    pub fn json(status: u16, body: &str) -> Self {
        Self {
            status,
            headers: vec![("content-type".to_string(), "application/json".to_string())],
            steps: vec![Step::Send(Bytes::from(body.to_string()))],
        }
    }

    /// `200 text/event-stream` as the model's server answers a live send (`openai-model`,
    /// `x-request-id: req_test_1`): `chunks`, each sent after its delay, then `end`.
    pub fn answer(chunks: Vec<(Duration, Vec<u8>)>, end: End) -> Self {
        let mut steps = Vec::new();
        for (delay, chunk) in chunks {
            if !delay.is_zero() {
                steps.push(Step::Sleep(delay));
            }
            steps.push(Step::Send(Bytes::from(chunk)));
        }
        match end {
            End::Complete => {}
            End::Reset => steps.push(Step::Reset),
            End::Hang(duration) => steps.extend([Step::Sleep(duration), Step::Cut]),
        }
        Self {
            status: 200,
            headers: vec![
                ("content-type".to_string(), "text/event-stream".to_string()),
                ("openai-model".to_string(), "gpt-5.5-2026-10-01".to_string()),
                ("x-request-id".to_string(), "req_test_1".to_string()),
            ],
            steps,
        }
    }

    /// `status` with `headers` and the JSON `body`.
    pub fn status(status: u16, headers: &[(&str, &str)], body: &serde_json::Value) -> Self {
        Self {
            status,
            headers: headers
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .chain([("content-type".to_string(), "application/json".to_string())])
                .collect(),
            steps: vec![Step::Send(Bytes::from(body.to_string()))],
        }
    }
}

/// A request the upstream received.
#[derive(Debug, Clone)]
pub struct Received {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

type Script = dyn Fn(&Received) -> Reply + Send + Sync;

/// Where the replies come from.
enum Plan {
    /// A function of each request.
    Script(Arc<Script>),
    /// One per connection in order (each connection closes after its one reply); once they are
    /// used up the upstream stops listening, so a further connection is refused.
    InOrder(Vec<Reply>),
}

/// The running upstream.
pub struct Upstream {
    pub addr: std::net::SocketAddr,
    received: Arc<Mutex<Vec<Received>>>,
    sent_at: Arc<Mutex<Vec<(usize, Instant)>>>,
    gate_timeouts: Arc<Mutex<u32>>,
    /// Dropping it stops the server.
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl Upstream {
    /// Starts serving `script` on a runtime of its own.
    pub fn start(script: impl Fn(&Received) -> Reply + Send + Sync + 'static) -> Self {
        Self::start_with(Plan::Script(Arc::new(script)), false)
    }

    /// Serves `replies`, one per connection in order, then refuses connections.
    pub fn in_order(replies: Vec<Reply>) -> Self {
        Self::start_with(Plan::InOrder(replies), false)
    }

    /// Like [`Upstream::start`], but every connection closes with a reset (SO_LINGER 0), so a
    /// cut body reaches the proxy as a connection reset.
    pub fn start_resetting(script: impl Fn(&Received) -> Reply + Send + Sync + 'static) -> Self {
        Self::start_with(Plan::Script(Arc::new(script)), true)
    }

    fn start_with(plan: Plan, reset: bool) -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind upstream");
        listener.set_nonblocking(true).expect("nonblocking");
        let addr = listener.local_addr().expect("addr");
        let received = Arc::new(Mutex::new(Vec::new()));
        let sent_at = Arc::new(Mutex::new(Vec::new()));
        let gate_timeouts = Arc::new(Mutex::new(0));
        let (log, sent, timeouts) = (
            Arc::clone(&received),
            Arc::clone(&sent_at),
            Arc::clone(&gate_timeouts),
        );
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        // A runtime on a thread of its own, so tests on any runtime (or none) can use it.
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("upstream runtime");
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                let accept = async move {
                    let serve = |stream: tokio::net::TcpStream,
                                 script: Arc<Script>,
                                 close: bool| {
                        let _ = stream.set_nodelay(true);
                        let conn = Conn {
                            stream,
                            reset: Arc::new(AtomicBool::new(reset)),
                        };
                        let (log, sent, timeouts) =
                            (Arc::clone(&log), Arc::clone(&sent), Arc::clone(&timeouts));
                        let reset = Arc::clone(&conn.reset);
                        tokio::spawn(async move {
                            let svc = hyper::service::service_fn(move |req| {
                                let logs = Logs {
                                    log: Arc::clone(&log),
                                    sent: Arc::clone(&sent),
                                    timeouts: Arc::clone(&timeouts),
                                    reset: Arc::clone(&reset),
                                };
                                let script = Arc::clone(&script);
                                async move {
                                    Ok::<_, Infallible>(answer(req, &*script, logs, close).await)
                                }
                            });
                            let _ = hyper::server::conn::http1::Builder::new()
                                .serve_connection(TokioIo::new(conn), svc)
                                .await;
                        });
                    };
                    match plan {
                        Plan::Script(script) => loop {
                            if let Ok((stream, _)) = listener.accept().await {
                                serve(stream, Arc::clone(&script), false);
                            }
                        },
                        Plan::InOrder(replies) => {
                            for reply in replies {
                                let Ok((stream, _)) = listener.accept().await else {
                                    break;
                                };
                                serve(stream, Arc::new(move |_: &Received| reply.clone()), true);
                            }
                            drop(listener);
                            std::future::pending::<()>().await;
                        }
                    }
                };
                tokio::select! {
                    () = accept => {}
                    _ = stopped => {}
                }
            });
        });
        Self {
            addr,
            received,
            sent_at,
            gate_timeouts,
            _stop: stop,
        }
    }

    /// `http://ADDR/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Requests received so far, in order.
    pub fn received(&self) -> Vec<Received> {
        self.received.lock().expect("log").clone()
    }

    /// (chunk index, when it was handed to the socket) of every `Send` step, in order.
    pub fn sent_at(&self) -> Vec<(usize, Instant)> {
        self.sent_at.lock().expect("log").clone()
    }

    /// `Wait` steps that timed out.
    pub fn gate_timeouts(&self) -> u32 {
        *self.gate_timeouts.lock().expect("log")
    }
}

type Body = http_body_util::combinators::UnsyncBoxBody<Bytes, std::io::Error>;

/// A connection's socket, closed with a TCP reset (SO_LINGER 0) when `reset` is set by then.
struct Conn {
    stream: tokio::net::TcpStream,
    reset: Arc<AtomicBool>,
}

impl Drop for Conn {
    fn drop(&mut self) {
        if self.reset.load(Ordering::Acquire) {
            #[allow(deprecated)]
            let _ = self.stream.set_linger(Some(Duration::ZERO));
        }
    }
}

impl tokio::io::AsyncRead for Conn {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_read(cx, buf)
    }
}

impl tokio::io::AsyncWrite for Conn {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

/// Where a reply records: the requests, when chunks left, gate timeouts, and its connection's
/// reset flag.
struct Logs {
    log: Arc<Mutex<Vec<Received>>>,
    sent: Arc<Mutex<Vec<(usize, Instant)>>>,
    timeouts: Arc<Mutex<u32>>,
    reset: Arc<AtomicBool>,
}

/// Answers `req` with what `script` says; `close` ends the connection after it.
async fn answer(
    req: hyper::Request<hyper::body::Incoming>,
    script: &Script,
    logs: Logs,
    close: bool,
) -> hyper::Response<Body> {
    let Logs {
        log,
        sent,
        timeouts,
        reset,
    } = logs;
    let (parts, body) = req.into_parts();
    let body = body
        .collect()
        .await
        .map(|b| b.to_bytes().to_vec())
        .unwrap_or_default();
    let received = Received {
        method: parts.method.to_string(),
        path: parts
            .uri
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .to_string(),
        headers: parts
            .headers
            .iter()
            .map(|(n, v)| {
                (
                    n.to_string(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect(),
        body,
    };
    let reply = script(&received);
    log.lock().expect("log").push(received);
    let mut builder = hyper::Response::builder().status(reply.status);
    for (name, value) in &reply.headers {
        builder = builder.header(name, value);
    }
    if close {
        builder = builder.header("connection", "close");
    }
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Frame<Bytes>, std::io::Error>>(1);
    tokio::spawn(async move {
        let mut index = 0;
        for step in reply.steps {
            match step {
                Step::Send(bytes) => {
                    if tx.send(Ok(Frame::data(bytes))).await.is_err() {
                        return;
                    }
                    sent.lock().expect("log").push((index, Instant::now()));
                    index += 1;
                }
                Step::Sleep(d) => tokio::time::sleep(d).await,
                Step::Wait(gate, limit) => {
                    match tokio::time::timeout(limit, gate.acquire()).await {
                        Ok(Ok(permit)) => permit.forget(),
                        _ => *timeouts.lock().expect("log") += 1,
                    }
                }
                Step::Cut => {
                    let _ = tx.send(Err(std::io::Error::other("cut by the test"))).await;
                    return;
                }
                Step::Reset => {
                    reset.store(true, Ordering::Release);
                    let _ = tx
                        .send(Err(std::io::Error::other("reset by the test")))
                        .await;
                    return;
                }
            }
        }
    });
    let stream = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    });
    builder
        .body(http_body_util::BodyExt::boxed_unsync(
            http_body_util::StreamBody::new(stream),
        ))
        .expect("response")
}

/// An SSE event as bytes.
pub fn sse_event(kind: &str, data: &serde_json::Value) -> Bytes {
    Bytes::from(format!("event: {kind}\ndata: {data}\n\n"))
}

/// A small completed turn answering `text`, with response id `id`: the event chunks in order.
pub fn turn_events(id: &str, text: &str) -> Vec<Bytes> {
    use serde_json::json;
    let mut events = vec![
        sse_event(
            "response.created",
            &json!({"type": "response.created", "response": {"id": id, "status": "in_progress"}}),
        ),
        sse_event(
            "response.output_item.added",
            &json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "message", "id": format!("msg_{id}"), "role": "assistant", "content": []}}),
        ),
    ];
    for word in text.split_inclusive(' ') {
        events.push(sse_event("response.output_text.delta", &json!({"type": "response.output_text.delta", "item_id": format!("msg_{id}"), "output_index": 0, "content_index": 0, "delta": word})));
    }
    events.push(sse_event("response.output_item.done", &json!({"type": "response.output_item.done", "output_index": 0, "item": {"type": "message", "id": format!("msg_{id}"), "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": text, "annotations": []}]}})));
    events.push(sse_event("response.completed", &json!({"type": "response.completed", "response": {"id": id, "status": "completed", "usage": {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 105}}})));
    events
}

/// `events` each sent after `gap`.
pub fn paced(events: &[Bytes], gap: Duration) -> Vec<Step> {
    let mut steps = Vec::new();
    for event in events {
        steps.push(Step::Sleep(gap));
        steps.push(Step::Send(event.clone()));
    }
    steps
}

/// The bytes of `tests/data/sse/{name}`.
pub fn sse_file(name: &str) -> Vec<u8> {
    std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/sse")
            .join(name),
    )
    .expect("fixture")
}

/// `bytes` cut into `parts` roughly equal chunks, each sent `delay` after the previous one (for
/// [`Reply::answer`]).
pub fn pieces(bytes: &[u8], parts: usize, delay: Duration) -> Vec<(Duration, Vec<u8>)> {
    let size = bytes.len().div_ceil(parts.max(1));
    bytes
        .chunks(size.max(1))
        .map(|c| (delay, c.to_vec()))
        .collect()
}

/// The events joined into the bytes of one body.
pub fn joined(events: &[Bytes]) -> Vec<u8> {
    events.iter().flat_map(|b| b.iter().copied()).collect()
}

/// POSTs `body` as JSON to `{base}/v1/responses`; the status and the whole answer.
///
/// # Panics
/// When the request fails or the answer cannot be read.
pub async fn post_responses(base: &str, body: &serde_json::Value) -> (u16, Vec<u8>) {
    let response = reqwest::Client::new()
        .post(format!("{base}/v1/responses"))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .expect("response");
    let status = response.status().as_u16();
    (status, response.bytes().await.expect("body").to_vec())
}

/// The recording proxy on 127.0.0.1 (a free port) in front of `upstream`, recording into `db`;
/// its handle and event receiver.
///
/// # Panics
/// When the proxy cannot start.
pub async fn recording_proxy(
    upstream: &str,
    db: &std::path::Path,
) -> (
    promptwire::transport::ServerHandle,
    tokio::sync::mpsc::Receiver<promptwire::transport::ProxyEvent>,
) {
    promptwire::transport::start_proxy(promptwire::transport::ProxyOptions::new(
        "127.0.0.1:0",
        upstream,
        Some(db.to_path_buf()),
    ))
    .await
    .expect("proxy")
}

/// Appends `data` as one HTTP/1.1 chunk.
pub fn push_chunk(out: &mut Vec<u8>, data: &[u8]) {
    out.extend_from_slice(format!("{:x}\r\n", data.len()).as_bytes());
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
}

/// An upstream on 127.0.0.1 that answers every request with `200 text/event-stream` and the
/// already chunk-encoded `body`, written 1 MiB at a time; its base URL.
pub fn chunked_upstream(body: Vec<u8>) -> String {
    use std::io::{Read as _, Write as _};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let body = std::sync::Arc::new(body);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let body = std::sync::Arc::clone(&body);
            std::thread::spawn(move || {
                let mut stream = stream;
                let mut head = Vec::new();
                let mut buf = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let text = String::from_utf8_lossy(&head).to_ascii_lowercase();
                let length: usize = text
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or(0);
                let at = head.windows(4).position(|w| w == b"\r\n\r\n").unwrap_or(0) + 4;
                let mut got = head.len() - at;
                while got < length {
                    match stream.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => got += n,
                    }
                }
                let reply = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n";
                if stream.write_all(reply).is_err() {
                    return;
                }
                for piece in body.chunks(1 << 20) {
                    if stream.write_all(piece).is_err() {
                        return;
                    }
                }
            });
        }
    });
    format!("http://{addr}/v1")
}
