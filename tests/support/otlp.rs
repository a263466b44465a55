//! OpenTelemetry test helpers: a loopback OTLP/HTTP receiver that keeps every export request it
//! gets (answering with the statuses a test scripts), the decoding of a protobuf export body, a
//! blocking POST through a proxy, and a real Arize Phoenix (`phoenix serve`) started and stopped
//! by a test.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message as _;
use tokio::io::AsyncWriteExt as _;

use super::loopback;
use super::upstream::Received;

/// A loopback OTLP receiver.
pub struct Receiver {
    /// Its address.
    pub addr: std::net::SocketAddr,
    received: Arc<Mutex<Vec<Received>>>,
}

impl Receiver {
    /// Starts a receiver answering export request `n` (from 0) with `status(n)`.
    pub fn start(status: impl Fn(usize) -> u16 + Send + Sync + 'static) -> Self {
        let received = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&received);
        let status = Arc::new(status);
        let addr = loopback::spawn(move |listener| async move {
            loop {
                let Ok((mut socket, _)) = listener.accept().await else {
                    return;
                };
                let kept = Arc::clone(&kept);
                let status = Arc::clone(&status);
                tokio::spawn(async move {
                    while let Some(request) = loopback::read_request(&mut socket).await {
                        let n = {
                            let mut all = kept.lock().expect("lock");
                            all.push(request);
                            all.len() - 1
                        };
                        let code = status(n);
                        let head = format!(
                            "HTTP/1.1 {code} X\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n"
                        );
                        if socket.write_all(head.as_bytes()).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        Self { addr, received }
    }

    /// Its base URL (`http://ADDR`).
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The export requests received so far.
    pub fn received(&self) -> Vec<Received> {
        self.received.lock().expect("lock").clone()
    }

    /// Every span of the protobuf export requests received so far (answered or not).
    pub fn spans(&self) -> Vec<Span> {
        self.received()
            .iter()
            .flat_map(|r| decode(&r.body))
            .collect()
    }

    /// Waits until `done(spans)` holds, up to `timeout`; the spans then.
    pub fn wait_for(&self, timeout: Duration, done: impl Fn(&[Span]) -> bool) -> Vec<Span> {
        let deadline = Instant::now() + timeout;
        loop {
            let spans = self.spans();
            if done(&spans) || Instant::now() > deadline {
                return spans;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The spans of a protobuf `ExportTraceServiceRequest` body.
///
/// # Panics
/// When the body does not decode.
pub fn decode(body: &[u8]) -> Vec<Span> {
    ExportTraceServiceRequest::decode(body)
        .expect("an ExportTraceServiceRequest")
        .resource_spans
        .into_iter()
        .flat_map(|r| r.scope_spans)
        .flat_map(|s| s.spans)
        .collect()
}

/// The string (or integer, as text) value of attribute `key` of `span`.
pub fn attr(span: &Span, key: &str) -> Option<String> {
    use opentelemetry_proto::tonic::common::v1::any_value::Value;
    span.attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref()?.value.as_ref())
        .map(|v| match v {
            Value::StringValue(s) => s.clone(),
            Value::IntValue(i) => i.to_string(),
            Value::DoubleValue(f) => f.to_string(),
            Value::BoolValue(b) => b.to_string(),
            other => format!("{other:?}"),
        })
}

/// POSTs `body` (JSON) to `url` with `headers`; the status and the answer's bytes.
pub fn post(url: &str, body: &[u8], headers: &[(&str, &str)]) -> (u16, Vec<u8>) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let mut request = ::reqwest::Client::new()
            .post(url)
            .header("content-type", "application/json")
            .body(body.to_vec());
        for (k, v) in headers {
            request = request.header(*k, *v);
        }
        let response = request.send().await.expect("response");
        let status = response.status().as_u16();
        (status, response.bytes().await.expect("body").to_vec())
    })
}

/// GETs `url`: the status and the body as text (`None` when it cannot connect).
pub fn get(url: &str) -> Option<(u16, String)> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let response = ::reqwest::Client::new()
            .get(url)
            .timeout(Duration::from_secs(10))
            .send()
            .await
            .ok()?;
        let status = response.status().as_u16();
        Some((status, response.text().await.ok()?))
    })
}

/// A free loopback port.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

/// Where `.ci/run` installs Phoenix, below `$HOME`.
const DEFAULT_PHOENIX: &str = ".cache/promptwire/venv-phoenix/bin/phoenix";

/// The `phoenix` executable: `PROMPTWIRE_PHOENIX_BIN`, else where `.ci/run` installs it; `None`
/// (after the shared rule: fails under CI) when it is missing.
pub fn phoenix_bin() -> Option<PathBuf> {
    let path = std::env::var_os("PROMPTWIRE_PHOENIX_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let home = std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .unwrap_or_else(|| "/root".into());
            PathBuf::from(home).join(DEFAULT_PHOENIX)
        });
    if path.is_file() {
        Some(path)
    } else {
        super::shared::skip(&format!(
            "Arize Phoenix is not installed at {} (.ci/run installs it)",
            path.display()
        ));
        None
    }
}

/// A running `phoenix serve`, stopped when dropped.
pub struct Phoenix {
    child: Child,
    /// Its base URL (`http://127.0.0.1:PORT`): UI, REST API and OTLP/HTTP traces.
    pub url: String,
}

impl Phoenix {
    /// Starts `phoenix serve` on free loopback ports with `dir` as its working directory (its
    /// SQLite database), and waits up to three minutes for it to answer `/healthz`.
    ///
    /// # Panics
    /// When it does not come up.
    pub fn start(bin: &Path, dir: &Path) -> Self {
        let port = free_port();
        let grpc = free_port();
        let log = std::fs::File::create(dir.join("phoenix.log")).expect("log file");
        let child = Command::new(bin)
            .arg("serve")
            .current_dir(dir)
            .env("PHOENIX_WORKING_DIR", dir)
            .env("PHOENIX_HOST", "127.0.0.1")
            .env("PHOENIX_PORT", port.to_string())
            .env("PHOENIX_GRPC_PORT", grpc.to_string())
            .env("PHOENIX_TELEMETRY_ENABLED", "false")
            .env("DO_NOT_TRACK", "1")
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .expect("spawn phoenix");
        let phoenix = Self {
            child,
            url: format!("http://127.0.0.1:{port}"),
        };
        let deadline = Instant::now() + Duration::from_secs(180);
        loop {
            if let Some((200, _)) = get(&format!("{}/healthz", phoenix.url)) {
                return phoenix;
            }
            assert!(
                Instant::now() < deadline,
                "phoenix did not come up; its log: {}",
                std::fs::read_to_string(dir.join("phoenix.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// Every span of project `project`, as Phoenix's REST API returns them
    /// (`/v1/projects/{project}/spans`, all pages).
    pub fn spans(&self, project: &str) -> Vec<serde_json::Value> {
        let mut out = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let mut url = format!("{}/v1/projects/{project}/spans?limit=1000", self.url);
            if let Some(c) = &cursor {
                url.push_str(&format!("&cursor={c}"));
            }
            let Some((200, text)) = get(&url) else {
                return out;
            };
            let page: serde_json::Value = serde_json::from_str(&text).expect("spans JSON");
            out.extend(page["data"].as_array().cloned().unwrap_or_default());
            match page["next_cursor"].as_str() {
                Some(c) => cursor = Some(c.to_string()),
                None => return out,
            }
        }
    }
}

impl Drop for Phoenix {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
