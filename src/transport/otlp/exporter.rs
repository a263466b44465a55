//! The OTLP/HTTP exporter: a bounded queue of spans, a thread of its own (with its own small
//! runtime) that batches them and posts each batch with retry and backoff, and counters of what
//! was exported, failed and dropped. Submitting never waits ([`OtlpExporter::submit`]: a full
//! queue drops the spans and counts them), so the relay that feeds it is never slowed; a
//! collector that is down, slow or refusing is counted and shown, never fatal.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::encode::{Protocol, encode, rejected};
use crate::core::otel::Span;

/// How to reach a collector and how hard to try.
#[derive(Debug, Clone)]
pub struct OtlpConfig {
    /// The traces endpoint (`…/v1/traces`; see [`traces_url`]).
    pub url: String,
    /// Body encoding.
    pub protocol: Protocol,
    /// Extra request headers (authentication), already resolved: never stored.
    pub headers: Vec<(String, String)>,
    /// `service.name` of the resource.
    pub service_name: String,
    /// Spans the queue holds at most; past it, [`OtlpExporter::submit`] drops.
    pub queue_spans: usize,
    /// Spans per export request at most.
    pub batch_spans: usize,
    /// How long a batch waits for more spans after its first.
    pub batch_delay: Duration,
    /// Tries per batch (first try included).
    pub max_attempts: u32,
    /// Wait before the first retry; doubled each time, up to `max_backoff`.
    pub initial_backoff: Duration,
    /// Longest wait between tries.
    pub max_backoff: Duration,
    /// Timeout of one export request.
    pub request_timeout: Duration,
}

impl OtlpConfig {
    /// Defaults for `url` (OTLP/HTTP protobuf, 8,192 queued spans, batches of 512 after 200 ms,
    /// 5 tries from 200 ms to 5 s apart, 10 s per request).
    pub fn new(url: &str) -> Self {
        Self {
            url: traces_url(url),
            protocol: Protocol::Protobuf,
            headers: Vec::new(),
            service_name: "promptwire".to_string(),
            queue_spans: 8192,
            batch_spans: 512,
            batch_delay: Duration::from_millis(200),
            max_attempts: 5,
            initial_backoff: Duration::from_millis(200),
            max_backoff: Duration::from_secs(5),
            request_timeout: Duration::from_secs(10),
        }
    }
}

/// The traces endpoint of `url`: as given when it ends in `/v1/traces`, else with `/v1/traces`
/// appended (a collector's base URL, as `OTEL_EXPORTER_OTLP_ENDPOINT` names it).
pub fn traces_url(url: &str) -> String {
    let trimmed = url.trim().trim_end_matches('/');
    if trimmed.ends_with("/v1/traces") {
        trimmed.to_string()
    } else {
        format!("{trimmed}/v1/traces")
    }
}

/// Why an exporter could not start.
#[derive(Debug, thiserror::Error)]
pub enum OtlpError {
    /// The endpoint is not an http(s) URL.
    #[error("OTLP endpoint must be an http:// or https:// URL: {0}")]
    BadUrl(String),
    /// A header cannot be used.
    #[error("OTLP header {0}")]
    BadHeader(String),
    /// The HTTP client or the exporter thread cannot start.
    #[error("cannot start the OTLP exporter: {0}")]
    Start(String),
}

/// What an exporter has done so far.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct OtlpStats {
    /// Spans the collector accepted.
    pub exported_spans: u64,
    /// Spans given up on (retries exhausted, refused, or rejected by the collector).
    pub failed_spans: u64,
    /// Spans dropped because the queue was full.
    pub dropped_spans: u64,
    /// Export requests that succeeded.
    pub requests: u64,
    /// Tries that were retried.
    pub retries: u64,
    /// Spans waiting in the queue or being sent.
    pub pending_spans: u64,
    /// The last failure, in words.
    pub last_error: Option<String>,
}

impl OtlpStats {
    /// One line: `exported 12 spans` plus failures and drops when there are any.
    pub fn line(&self) -> String {
        let mut line = format!(
            "exported {}",
            crate::core::format::count(self.exported_spans, "span")
        );
        if self.failed_spans > 0 {
            line.push_str(&format!(", {} failed", self.failed_spans));
        }
        if self.dropped_spans > 0 {
            line.push_str(&format!(", {} dropped (queue full)", self.dropped_spans));
        }
        if let Some(e) = &self.last_error
            && self.failed_spans > 0
        {
            line.push_str(&format!(" (last error: {e})"));
        }
        line
    }
}

#[derive(Debug, Default)]
struct Counters {
    exported: AtomicU64,
    failed: AtomicU64,
    dropped: AtomicU64,
    requests: AtomicU64,
    retries: AtomicU64,
    last_error: Mutex<Option<String>>,
    /// Spans queued or in flight, with a condition variable for [`OtlpExporter::submit_wait`]
    /// and flushes.
    pending: Mutex<usize>,
    changed: Condvar,
}

impl Counters {
    fn done(&self, n: usize) {
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        *pending = pending.saturating_sub(n);
        self.changed.notify_all();
    }

    fn error(&self, message: String) {
        *self
            .last_error
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(message);
    }
}

/// A running exporter. Dropping it closes the queue; the thread sends what is queued and ends
/// (use [`OtlpExporter::shutdown`] to wait for it).
#[derive(Debug)]
pub struct OtlpExporter {
    tx: Option<mpsc::UnboundedSender<Vec<Span>>>,
    counters: Arc<Counters>,
    capacity: usize,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl OtlpExporter {
    /// Starts an exporter for `config` on a thread of its own.
    pub fn start(config: OtlpConfig) -> Result<Self, OtlpError> {
        let url = reqwest::Url::parse(&config.url)
            .map_err(|e| OtlpError::BadUrl(format!("{e}: {}", config.url)))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(OtlpError::BadUrl(config.url.clone()));
        }
        let mut headers = reqwest::header::HeaderMap::new();
        for (name, value) in &config.headers {
            let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
                .map_err(|e| OtlpError::BadHeader(format!("{name}: {e}")))?;
            let mut value = reqwest::header::HeaderValue::from_str(value)
                .map_err(|e| OtlpError::BadHeader(format!("{name}: {e}")))?;
            value.set_sensitive(true);
            headers.insert(name, value);
        }
        headers.insert(
            reqwest::header::CONTENT_TYPE,
            reqwest::header::HeaderValue::from_static(config.protocol.content_type()),
        );
        let client = reqwest::Client::builder()
            .default_headers(headers)
            .timeout(config.request_timeout)
            .connect_timeout(config.request_timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| OtlpError::Start(e.to_string()))?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| OtlpError::Start(e.to_string()))?;
        // Unbounded as a channel, bounded in spans by `pending` (checked before each send).
        let (tx, rx) = mpsc::unbounded_channel();
        let counters = Arc::new(Counters::default());
        let capacity = config.queue_spans.max(1);
        let worker = Worker {
            client,
            config,
            counters: Arc::clone(&counters),
        };
        #[allow(
            clippy::disallowed_methods,
            reason = "the exporter's own thread, as the store's writer has one: the relay and the UI hand it spans and never wait on the network"
        )]
        let thread = std::thread::Builder::new()
            .name("otlp-export".to_string())
            .spawn(move || runtime.block_on(worker.run(rx)))
            .map_err(|e| OtlpError::Start(e.to_string()))?;
        Ok(Self {
            tx: Some(tx),
            counters,
            capacity,
            thread: Some(thread),
        })
    }

    /// Queues `spans` without waiting: `false` (and the spans counted as dropped) when the
    /// queue has no room for them.
    pub fn submit(&self, spans: Vec<Span>) -> bool {
        if spans.is_empty() {
            return true;
        }
        let n = spans.len();
        {
            let mut pending = self
                .counters
                .pending
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if *pending + n > self.capacity {
                drop(pending);
                self.counters.dropped.fetch_add(n as u64, Ordering::Relaxed);
                return false;
            }
            *pending += n;
        }
        self.send(spans)
    }

    /// Queues `spans`, waiting while the queue is full (for exports of stored sessions, which
    /// have nobody to slow down): `false` when the exporter has stopped.
    pub fn submit_wait(&self, spans: Vec<Span>) -> bool {
        if spans.is_empty() {
            return true;
        }
        let n = spans.len();
        {
            let mut pending = self
                .counters
                .pending
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            // A batch larger than the whole queue goes in alone.
            while *pending > 0 && *pending + n > self.capacity {
                pending = self
                    .counters
                    .changed
                    .wait(pending)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            *pending += n;
        }
        self.send(spans)
    }

    fn send(&self, spans: Vec<Span>) -> bool {
        let n = spans.len();
        match self.tx.as_ref().map(|tx| tx.send(spans)) {
            Some(Ok(())) => true,
            _ => {
                self.counters.done(n);
                self.counters.dropped.fetch_add(n as u64, Ordering::Relaxed);
                false
            }
        }
    }

    /// What it has done so far.
    pub fn stats(&self) -> OtlpStats {
        let c = &self.counters;
        OtlpStats {
            exported_spans: c.exported.load(Ordering::Relaxed),
            failed_spans: c.failed.load(Ordering::Relaxed),
            dropped_spans: c.dropped.load(Ordering::Relaxed),
            requests: c.requests.load(Ordering::Relaxed),
            retries: c.retries.load(Ordering::Relaxed),
            pending_spans: *c.pending.lock().unwrap_or_else(PoisonError::into_inner) as u64,
            last_error: c
                .last_error
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone(),
        }
    }

    /// Waits until everything queued so far has been sent or given up on, or `timeout` passed;
    /// returns the stats then.
    pub fn flush(&self, timeout: Duration) -> OtlpStats {
        let deadline = Instant::now() + timeout;
        let mut pending = self
            .counters
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        while *pending > 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            pending = self
                .counters
                .changed
                .wait_timeout(pending, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        drop(pending);
        self.stats()
    }

    /// Flushes (up to `timeout`), closes the queue and lets the thread end; the final stats.
    pub fn shutdown(mut self, timeout: Duration) -> OtlpStats {
        let stats = self.flush(timeout);
        self.tx = None;
        if stats.pending_spans == 0
            && let Some(thread) = self.thread.take()
        {
            let _ = thread.join();
        }
        stats
    }
}

struct Worker {
    client: reqwest::Client,
    config: OtlpConfig,
    counters: Arc<Counters>,
}

/// Why one try failed, and whether another may succeed.
struct TryError {
    message: String,
    retry: bool,
    retry_after: Option<Duration>,
}

impl Worker {
    async fn run(self, mut rx: mpsc::UnboundedReceiver<Vec<Span>>) {
        let max = self.config.batch_spans.max(1);
        let mut batch: Vec<Span> = Vec::new();
        while let Some(first) = rx.recv().await {
            batch.extend(first);
            let deadline = tokio::time::Instant::now() + self.config.batch_delay;
            while batch.len() < max {
                tokio::select! {
                    more = rx.recv() => match more {
                        Some(more) => batch.extend(more),
                        None => break,
                    },
                    () = tokio::time::sleep_until(deadline) => break,
                }
            }
            while !batch.is_empty() {
                let rest = if batch.len() > max {
                    batch.split_off(max)
                } else {
                    Vec::new()
                };
                let n = batch.len();
                self.export(&batch).await;
                self.counters.done(n);
                batch = rest;
            }
        }
    }

    /// Sends one batch, retrying with backoff; counts the outcome.
    async fn export(&self, spans: &[Span]) {
        let body = bytes::Bytes::from(encode(
            spans,
            &self.config.service_name,
            self.config.protocol,
        ));
        let n = spans.len() as u64;
        let mut backoff = self.config.initial_backoff;
        let mut attempt = 1;
        loop {
            match self.try_once(body.clone()).await {
                Ok(rejected) => {
                    self.counters.requests.fetch_add(1, Ordering::Relaxed);
                    let (count, message) = rejected.unwrap_or((0, String::new()));
                    let count = u64::try_from(count).unwrap_or(0).min(n);
                    if count > 0 || !message.is_empty() {
                        self.counters.error(format!(
                            "collector rejected {count} spans{}",
                            if message.is_empty() {
                                String::new()
                            } else {
                                format!(": {message}")
                            }
                        ));
                    }
                    self.counters.failed.fetch_add(count, Ordering::Relaxed);
                    self.counters
                        .exported
                        .fetch_add(n - count, Ordering::Relaxed);
                    return;
                }
                Err(e) => {
                    self.counters.error(e.message);
                    if !e.retry || attempt >= self.config.max_attempts {
                        self.counters.failed.fetch_add(n, Ordering::Relaxed);
                        return;
                    }
                    self.counters.retries.fetch_add(1, Ordering::Relaxed);
                    let wait = e
                        .retry_after
                        .unwrap_or(backoff)
                        .min(self.config.max_backoff);
                    tokio::time::sleep(wait).await;
                    backoff = (backoff * 2).min(self.config.max_backoff);
                    attempt += 1;
                }
            }
        }
    }

    async fn try_once(&self, body: bytes::Bytes) -> Result<Option<(i64, String)>, TryError> {
        let response = self
            .client
            .post(&self.config.url)
            .body(body)
            .send()
            .await
            .map_err(|e| TryError {
                message: format!("{}: {e}", self.config.url),
                retry: true,
                retry_after: None,
            })?;
        let status = response.status();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let bytes = response.bytes().await.unwrap_or_default();
        if status.is_success() {
            return Ok(rejected(&bytes, self.config.protocol));
        }
        let text = String::from_utf8_lossy(&bytes[..bytes.len().min(200)]).into_owned();
        Err(TryError {
            message: format!(
                "HTTP {} from {}{}",
                status.as_u16(),
                self.config.url,
                if text.trim().is_empty() {
                    String::new()
                } else {
                    format!(": {}", crate::core::redact::redact_text(text.trim()))
                }
            ),
            retry: matches!(status.as_u16(), 408 | 429 | 500 | 502 | 503 | 504),
            retry_after,
        })
    }
}
