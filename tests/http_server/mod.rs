//! The loopback HTTP/1.1 test server shared by the live-send tests: serves scripted replies (status,
//! headers, body chunks each after a delay, chunked transfer encoding, then a clean end, a reset or
//! a hang), one per connection in order, and logs every request it received.
#![allow(
    clippy::disallowed_methods,
    reason = "a test server runs on threads of its own"
)]
#![allow(dead_code)]

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// How a reply ends after its body chunks.
#[derive(Debug, Clone, Copy)]
pub enum End {
    /// The terminating zero-length chunk, then close.
    Complete,
    /// A TCP reset (SO_LINGER 0) in the middle of the body.
    Reset,
    /// Nothing more for this long, then close.
    Hang(Duration),
}

/// One scripted reply: status, headers, body chunks each sent after a delay.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub chunks: Vec<(Duration, Vec<u8>)>,
    pub end: End,
}

impl Reply {
    pub fn sse(chunks: Vec<(Duration, Vec<u8>)>, end: End) -> Self {
        Self {
            status: 200,
            headers: vec![
                ("content-type".to_string(), "text/event-stream".to_string()),
                ("openai-model".to_string(), "gpt-5.5-2026-10-01".to_string()),
                ("x-request-id".to_string(), "req_test_1".to_string()),
            ],
            chunks,
            end,
        }
    }

    pub fn status(status: u16, headers: &[(&str, &str)], body: &Value) -> Self {
        Self {
            status,
            headers: headers
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .chain([("content-type".to_string(), "application/json".to_string())])
                .collect(),
            chunks: vec![(Duration::ZERO, body.to_string().into_bytes())],
            end: End::Complete,
        }
    }
}

/// A request the server received.
#[derive(Debug, Clone)]
pub struct Received {
    pub request_line: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

pub struct Server {
    pub base_url: String,
    pub received: Arc<Mutex<Vec<Received>>>,
}

impl Server {
    /// Serves `replies`, one per connection in order, on a thread of its own.
    pub fn start(replies: Vec<Reply>) -> Self {
        let received = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&received);
        let addr = spawn_loopback(move |listener| async move {
            let mut handlers = Vec::new();
            for reply in replies {
                let Ok((socket, _)) = listener.accept().await else {
                    break;
                };
                let log = Arc::clone(&log);
                handlers.push(tokio::spawn(serve(socket, reply, log)));
            }
            for handler in handlers {
                let _ = handler.await;
            }
        });
        Self {
            base_url: format!("http://{addr}/v1"),
            received,
        }
    }

    pub fn received(&self) -> Vec<Received> {
        self.received.lock().expect("log").clone()
    }
}

pub async fn serve(
    mut socket: tokio::net::TcpStream,
    reply: Reply,
    log: Arc<Mutex<Vec<Received>>>,
) {
    let Some(request) = read_request(&mut socket).await else {
        return;
    };
    log.lock().expect("log").push(request);
    let mut head = format!("HTTP/1.1 {} Test\r\n", reply.status);
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("transfer-encoding: chunked\r\nconnection: close\r\n\r\n");
    if socket.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    for (delay, chunk) in &reply.chunks {
        tokio::time::sleep(*delay).await;
        let framed = [
            format!("{:x}\r\n", chunk.len()).into_bytes(),
            chunk.clone(),
            b"\r\n".to_vec(),
        ]
        .concat();
        if socket.write_all(&framed).await.is_err() {
            return;
        }
        let _ = socket.flush().await;
    }
    match reply.end {
        End::Complete => {
            let _ = socket.write_all(b"0\r\n\r\n").await;
            let _ = socket.shutdown().await;
        }
        End::Reset => {
            // SO_LINGER 0 makes the close a reset; it does not block with a zero timeout.
            #[allow(deprecated)]
            let _ = socket.set_linger(Some(Duration::ZERO));
            drop(socket);
        }
        End::Hang(duration) => tokio::time::sleep(duration).await,
    }
}

pub async fn read_request(socket: &mut tokio::net::TcpStream) -> Option<Received> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let request_line = lines.next()?.to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < length {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some(Received {
        request_line,
        headers,
        body,
    })
}

/// The bytes of `tests/data/sse/{name}`.
pub fn sse_file(name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/sse")
            .join(name),
    )
    .expect("fixture")
}

/// `bytes` cut into `parts` roughly equal chunks, each sent `delay` after the previous one.
pub fn paced(bytes: &[u8], parts: usize, delay: Duration) -> Vec<(Duration, Vec<u8>)> {
    let size = bytes.len().div_ceil(parts.max(1));
    bytes
        .chunks(size.max(1))
        .map(|c| (delay, c.to_vec()))
        .collect()
}

/// Binds 127.0.0.1 on a free port and runs `serve(listener)` on a thread of its own with a
/// current-thread tokio runtime; returns the address (shared by the HTTP and WebSocket servers).
pub fn spawn_loopback<F, Fut>(serve: F) -> std::net::SocketAddr
where
    F: FnOnce(tokio::net::TcpListener) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()>,
{
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("nonblocking");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
            serve(listener).await;
        });
    });
    addr
}
