//! A stand-in upstream for the proxy and replay tests (and the proxy benchmark): a real HTTP/1.1
//! server on 127.0.0.1 (hyper) that answers each request with a scripted reply — status,
//! headers, body chunks with pauses between them, optionally waiting for a signal before a chunk —
//! and logs what it received and when each chunk left.
#![allow(
    clippy::disallowed_methods,
    reason = "a test upstream runs on threads of its own"
)]
#![allow(dead_code)]

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
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
}

/// A scripted reply.
#[derive(Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub steps: Vec<Step>,
}

impl Reply {
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
        Self::start_with(Arc::new(script), false)
    }

    /// Like [`Upstream::start`], but every connection closes with a reset (SO_LINGER 0), so a
    /// cut body reaches the proxy as a connection reset.
    pub fn start_resetting(script: impl Fn(&Received) -> Reply + Send + Sync + 'static) -> Self {
        Self::start_with(Arc::new(script), true)
    }

    fn start_with(script: Arc<Script>, reset: bool) -> Self {
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
                    loop {
                        let Ok((stream, _)) = listener.accept().await else {
                            continue;
                        };
                        let _ = stream.set_nodelay(true);
                        if reset {
                            #[allow(deprecated)]
                            let _ = stream.set_linger(Some(Duration::ZERO));
                        }
                        let (script, log, sent, timeouts) = (
                            Arc::clone(&script),
                            Arc::clone(&log),
                            Arc::clone(&sent),
                            Arc::clone(&timeouts),
                        );
                        tokio::spawn(async move {
                            let svc = hyper::service::service_fn(move |req| {
                                let (script, log, sent, timeouts) = (
                                    Arc::clone(&script),
                                    Arc::clone(&log),
                                    Arc::clone(&sent),
                                    Arc::clone(&timeouts),
                                );
                                async move {
                                    Ok::<_, Infallible>(
                                        answer(req, &*script, log, sent, timeouts).await,
                                    )
                                }
                            });
                            let _ = hyper::server::conn::http1::Builder::new()
                                .serve_connection(TokioIo::new(stream), svc)
                                .await;
                        });
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

async fn answer(
    req: hyper::Request<hyper::body::Incoming>,
    script: &Script,
    log: Arc<Mutex<Vec<Received>>>,
    sent: Arc<Mutex<Vec<(usize, Instant)>>>,
    timeouts: Arc<Mutex<u32>>,
) -> hyper::Response<Body> {
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
