//! Live HTTP send of a [`CompiledRequest`]: reqwest (rustls) `POST`, the body streamed into the
//! core [`StreamReader`] chunk by chunk as it arrives, each raw event reported as soon as it is
//! decoded.
//!
//! - Retries follow the error class: a retryable failure waits the server's delay, or
//!   200 ms × 2ⁿ with ±10% jitter, at most [`SendOptions::max_retries`] times; a server delay
//!   longer than [`SendOptions::max_retry_delay`] is not waited for. Non-retryable failures are
//!   never retried.
//! - Timeouts: connect ([`SendOptions::connect_timeout`]) and idle — no response headers, or no
//!   body bytes, within [`SendOptions::idle_timeout`] — and an overall [`SendOptions::deadline`]
//!   over every attempt and wait, so a server trickling keep-alives cannot hold a send forever.
//! - Size limits ([`SendOptions::limits`]): an event or a response past its limit ends the turn
//!   as `limit_exceeded` (not retried), keeping what arrived.
//! - [`CancelToken`] stops the send; what was received so far stays in the result.
//! - API keys are read from the environment variable a secret header names, at send time, and
//!   are never logged or returned.
//! - Redirects ([`super::redirect`]): followed within the same origin; a redirect to another
//!   origin ends the send as `redirect_refused`, so no header from the provider's configuration
//!   reaches another host.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::StreamExt as _;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use tokio::sync::Notify;

use super::proxy::wire::header_pairs;
use super::read_loop::{Incoming, ReadBounds, new_attempt, read_turn};
use super::redirect::{self, RedirectRefused};
use crate::core::compile::{CompiledRequest, REDACTED};
use crate::core::stream::events::header_events;
use crate::core::stream::http_error::{classify_http_error, with_date};
use crate::core::stream::limits::deadline_passed;
use crate::core::stream::{
    ErrorClass, HttpError, MappedEvent, StreamError, StreamLimits, StreamReader, TimelineEntry,
    TurnOutcome,
};

/// How a send behaves.
#[derive(Debug, Clone, PartialEq)]
pub struct SendOptions {
    /// Limit on establishing the connection.
    pub connect_timeout: Duration,
    /// Limit on waiting for the response headers and, after them, for each chunk of the body
    /// (Codex's `stream_idle_timeout`, 300 s by default).
    pub idle_timeout: Duration,
    /// Retries after the first attempt (Codex's `stream_max_retries`, 5 by default).
    pub max_retries: u32,
    /// First backoff delay when the server gives none; doubles per retry.
    pub retry_base_delay: Duration,
    /// Longest delay waited before a retry; a longer server delay ends the send instead.
    pub max_retry_delay: Duration,
    /// Largest error body kept from a non-2xx answer.
    pub max_error_body_bytes: usize,
    /// Size limits on each event and on the whole response.
    pub limits: StreamLimits,
    /// Limit on the whole send, every attempt and retry delay included.
    pub deadline: Duration,
    /// Keep every timeline entry in [`Attempt::entries`] (true by default). A caller that takes
    /// the entries as they are reported ([`SendEvent::Entry`]) turns it off, so a long stream is
    /// not held in memory a second time: memory then stays near the outcome's size.
    pub keep_entries: bool,
}

/// Default overall deadline of a send: far above a real turn, low enough that no send runs on
/// for hours.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(30 * 60);

impl SendOptions {
    /// When a send started now must be over.
    pub(crate) fn deadline_from_now(&self) -> tokio::time::Instant {
        // Clamped so that the addition cannot overflow (a century is "never").
        let deadline = self
            .deadline
            .min(Duration::from_secs(100 * 365 * 24 * 3600));
        tokio::time::Instant::now() + deadline
    }
}

impl Default for SendOptions {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(300),
            max_retries: 5,
            retry_base_delay: Duration::from_millis(200),
            max_retry_delay: Duration::from_secs(60),
            max_error_body_bytes: 1024 * 1024,
            limits: StreamLimits::default(),
            deadline: DEFAULT_DEADLINE,
            keep_entries: true,
        }
    }
}

/// A problem found before anything is sent (a usage error).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PrepareError {
    /// The environment variable holding the API key is unset or empty.
    #[error("the API key is not set: export {env}")]
    MissingApiKey {
        /// The variable's name.
        env: String,
    },
    /// A header name or value cannot be sent.
    #[error("header `{name}` cannot be sent: {reason}")]
    BadHeader {
        /// Header name.
        name: String,
        /// Why.
        reason: String,
    },
    /// The URL cannot be used.
    #[error("invalid URL ({reason}): {url}")]
    BadUrl {
        /// The URL.
        url: String,
        /// Why.
        reason: String,
    },
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
}

/// Why one attempt did not complete.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SendError {
    /// A non-2xx answer (§14.4).
    #[error(transparent)]
    Http(HttpError),
    /// The stream failed: a `response.failed`/`response.incomplete` error, end of stream before
    /// completion, idle timeout, or a transport error while reading (§13, §14.1).
    #[error(transparent)]
    Stream(StreamError),
    /// The connection could not be made or the request not sent (Codex: a stream error).
    #[error("could not send the request: {message}")]
    Connect {
        /// What failed.
        message: String,
    },
    /// No connection or no response headers in time.
    #[error("request timed out: {message}")]
    Timeout {
        /// What timed out.
        message: String,
    },
    /// Stopped by the user.
    #[error("cancelled")]
    Cancelled,
    /// A redirect was not followed (to another origin, or too many); see
    /// [`super::redirect`].
    #[error(transparent)]
    Redirect(RedirectRefused),
}

impl SendError {
    /// The class recorded and printed in machine-readable output.
    pub fn class(&self) -> ErrorClass {
        match self {
            Self::Http(e) => e.class(),
            Self::Stream(e) => e.class(),
            Self::Connect { .. } => ErrorClass::Stream,
            Self::Timeout { .. } => ErrorClass::RequestTimeout,
            Self::Cancelled => ErrorClass::Cancelled,
            Self::Redirect(_) => ErrorClass::RedirectRefused,
        }
    }

    /// Whether a retry can help.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Http(e) => e.is_retryable(),
            Self::Stream(e) => e.is_retryable(),
            Self::Connect { .. } | Self::Timeout { .. } => true,
            Self::Cancelled | Self::Redirect(_) => false,
        }
    }

    /// The delay the server asked for before a retry.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::Http(e) => e.retry_after(),
            Self::Stream(e) => e.retry_after(),
            _ => None,
        }
    }
}

/// Progress of a send, reported as it happens.
#[derive(Debug)]
pub enum SendEvent<'a> {
    /// Attempt `attempt` (from 1) is being sent.
    AttemptStarted {
        /// Attempt number, from 1.
        attempt: u32,
    },
    /// The response headers arrived.
    Response {
        /// HTTP status.
        status: u16,
        /// Response headers (name, value).
        headers: &'a [(String, String)],
        /// Time since the attempt was sent.
        at: Duration,
    },
    /// Events derived from the response headers, before any body event.
    HeaderEvents(&'a [MappedEvent]),
    /// One raw event and its mapping, as soon as it was decoded.
    Entry(&'a TimelineEntry),
    /// The attempt failed with a retryable error; the next starts after `delay`.
    Retrying {
        /// The failed attempt's number.
        attempt: u32,
        /// Why it failed.
        error: &'a SendError,
        /// How long the send waits.
        delay: Duration,
    },
}

/// One attempt of a send: what came back, as far as it got.
#[derive(Debug, Clone, PartialEq)]
pub struct Attempt {
    /// Attempt number, from 1.
    pub number: u32,
    /// HTTP status, once the headers arrived.
    pub status: Option<u16>,
    /// Response headers.
    pub response_headers: Vec<(String, String)>,
    /// Events derived from the response headers.
    pub header_events: Vec<MappedEvent>,
    /// Every raw event with its mapping (empty unless [`SendOptions::keep_entries`]).
    pub entries: Vec<TimelineEntry>,
    /// The turn as far as it got (partial when cancelled or cut off).
    pub outcome: TurnOutcome,
    /// Why the attempt did not complete.
    pub error: Option<SendError>,
    /// Duration of the attempt.
    pub elapsed: Duration,
}

/// The result of a send: every attempt, and how the send ended.
#[derive(Debug, Clone, PartialEq)]
pub struct SendResult {
    /// Attempts in order (at least one).
    pub attempts: Vec<Attempt>,
    /// Why the send did not complete (the last attempt's error, or `Cancelled` when cancelled
    /// while waiting to retry); `None` when it completed.
    pub error: Option<SendError>,
}

impl SendResult {
    /// The last attempt.
    pub fn last(&self) -> Option<&Attempt> {
        self.attempts.last()
    }

    /// The outcome of the last attempt.
    pub fn outcome(&self) -> Option<&TurnOutcome> {
        self.last().map(|a| &a.outcome)
    }
}

/// This machine's clock as an HTTP date, for a response without `Date` (see [`with_date`]).
pub(crate) fn now_http_date() -> String {
    chrono::Utc::now().to_rfc2822()
}

/// Cancels a send from another task; cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct CancelToken {
    inner: Arc<CancelInner>,
}

#[derive(Debug, Default)]
struct CancelInner {
    cancelled: AtomicBool,
    notify: Notify,
}

impl CancelToken {
    /// A token that is not cancelled.
    pub fn new() -> Self {
        Self::default()
    }

    /// Cancels every send using this token.
    pub fn cancel(&self) {
        self.inner.cancelled.store(true, Ordering::SeqCst);
        self.inner.notify.notify_waiters();
    }

    /// True once cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::SeqCst)
    }

    /// Resolves once cancelled.
    pub async fn cancelled(&self) {
        let notified = self.inner.notify.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if self.is_cancelled() {
            return;
        }
        notified.await;
    }
}

/// What stops an attempt early: the user, or the send's deadline.
#[derive(Debug, Clone, Copy)]
struct Stop<'a> {
    cancel: &'a CancelToken,
    deadline: tokio::time::Instant,
}

/// Sends compiled requests.
#[derive(Debug, Clone)]
pub struct HttpSender {
    client: reqwest::Client,
    options: SendOptions,
}

impl HttpSender {
    /// A sender for requests to `url` (proxies are bypassed for loopback addresses).
    pub fn new(url: &str, options: SendOptions) -> Result<Self, PrepareError> {
        let parsed = reqwest::Url::parse(url).map_err(|e| PrepareError::BadUrl {
            url: url.to_string(),
            reason: e.to_string(),
        })?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(PrepareError::BadUrl {
                url: url.to_string(),
                reason: format!("unsupported scheme `{}`", parsed.scheme()),
            });
        }
        let mut builder = reqwest::Client::builder()
            .connect_timeout(options.connect_timeout)
            .redirect(redirect::policy());
        if matches!(
            parsed.host_str(),
            Some("localhost" | "127.0.0.1" | "[::1]" | "::1")
        ) {
            builder = builder.no_proxy();
        }
        let client = builder
            .build()
            .map_err(|e| PrepareError::Client(error_chain(&e)))?;
        Ok(Self { client, options })
    }

    /// The options in use.
    pub fn options(&self) -> &SendOptions {
        &self.options
    }

    /// Sends `request` with `headers` (from [`resolve_headers`]), retrying as the error classes
    /// allow, and reports progress to `on_event`.
    pub async fn send<F>(
        &self,
        request: &CompiledRequest,
        headers: &HeaderMap,
        cancel: &CancelToken,
        mut on_event: F,
    ) -> SendResult
    where
        F: FnMut(SendEvent<'_>) + Send,
    {
        let body = Bytes::copy_from_slice(request.wire_body());
        let deadline = self.options.deadline_from_now();
        let mut attempts = Vec::new();
        let mut retries = 0;
        loop {
            let number = retries + 1;
            on_event(SendEvent::AttemptStarted { attempt: number });
            let attempt = self
                .attempt(
                    number,
                    &request.url,
                    headers,
                    body.clone(),
                    Stop { cancel, deadline },
                    &mut on_event,
                )
                .await;
            let error = attempt.error.clone();
            attempts.push(attempt);
            let Some(error) = error else {
                return SendResult {
                    attempts,
                    error: None,
                };
            };
            if !error.is_retryable() || retries >= self.options.max_retries {
                return SendResult {
                    attempts,
                    error: Some(error),
                };
            }
            let delay = error
                .retry_after()
                .unwrap_or_else(|| backoff(self.options.retry_base_delay, retries));
            if delay > self.options.max_retry_delay
                || tokio::time::Instant::now() + delay >= deadline
            {
                return SendResult {
                    attempts,
                    error: Some(error),
                };
            }
            on_event(SendEvent::Retrying {
                attempt: number,
                error: &error,
                delay,
            });
            tokio::select! {
                biased;
                () = cancel.cancelled() => {
                    return SendResult { attempts, error: Some(SendError::Cancelled) };
                }
                () = tokio::time::sleep(delay) => {}
            }
            retries += 1;
        }
    }

    async fn attempt<F>(
        &self,
        number: u32,
        url: &str,
        headers: &HeaderMap,
        body: Bytes,
        stop: Stop<'_>,
        on_event: &mut F,
    ) -> Attempt
    where
        F: FnMut(SendEvent<'_>) + Send,
    {
        let start = Instant::now();
        let mut attempt = new_attempt(number);
        let request = self
            .client
            .post(url)
            .headers(headers.clone())
            .body(body)
            .send();
        let idle = self.options.idle_timeout;
        let Stop { cancel, deadline } = stop;
        let sent = tokio::select! {
            biased;
            () = cancel.cancelled() => Err(SendError::Cancelled),
            () = tokio::time::sleep_until(deadline) => {
                Err(SendError::Stream(deadline_passed(self.options.deadline)))
            }
            sent = tokio::time::timeout(idle, request) => match sent {
                Err(_) => Err(SendError::Timeout {
                    message: format!("no response headers within {}", secs(idle)),
                }),
                Ok(Err(e)) => Err(match redirect::refusal(&e) {
                    Some(refused) => SendError::Redirect(refused),
                    None if e.is_timeout() => SendError::Timeout { message: error_chain(&e) },
                    None => SendError::Connect { message: error_chain(&e) },
                }),
                Ok(Ok(response)) => Ok(response),
            },
        };
        let response = match sent {
            Ok(response) => response,
            Err(error) => {
                attempt.error = Some(error);
                attempt.elapsed = start.elapsed();
                return attempt;
            }
        };
        let status = response.status().as_u16();
        attempt.status = Some(status);
        attempt.response_headers = header_pairs(response.headers());
        on_event(SendEvent::Response {
            status,
            headers: &attempt.response_headers,
            at: start.elapsed(),
        });

        if !response.status().is_success() {
            let body = self.read_error_body(response, stop).await;
            attempt.error = Some(match body {
                Ok(body) => SendError::Http(classify_http_error(
                    status,
                    &with_date(&attempt.response_headers, &now_http_date()),
                    &body,
                    url,
                )),
                Err(error) => error,
            });
            attempt.elapsed = start.elapsed();
            return attempt;
        }

        let mut reader = StreamReader::with_limits(self.options.limits);
        attempt.header_events = header_events(&attempt.response_headers);
        if !attempt.header_events.is_empty() {
            reader.apply_header_events(&attempt.header_events, start.elapsed());
            on_event(SendEvent::HeaderEvents(&attempt.header_events));
        }
        let mut body = response.bytes_stream();
        read_turn(
            &mut body,
            reader,
            ReadBounds::of(&self.options, deadline),
            cancel,
            start,
            &mut attempt,
            on_event,
        )
        .await;
        attempt.elapsed = start.elapsed();
        attempt
    }

    /// Reads a non-2xx body, up to the size limit, each chunk within the idle timeout and all
    /// of it before the deadline.
    async fn read_error_body(
        &self,
        response: reqwest::Response,
        stop: Stop<'_>,
    ) -> Result<String, SendError> {
        let mut body = response.bytes_stream();
        let mut bytes = Vec::new();
        loop {
            let next = tokio::select! {
                biased;
                () = stop.cancel.cancelled() => return Err(SendError::Cancelled),
                () = tokio::time::sleep_until(stop.deadline) => break,
                next = tokio::time::timeout(self.options.idle_timeout, body.next()) => next,
            };
            match next {
                Ok(Some(Ok(chunk))) => {
                    let room = self
                        .options
                        .max_error_body_bytes
                        .saturating_sub(bytes.len());
                    bytes.extend_from_slice(&chunk[..chunk.len().min(room)]);
                    if bytes.len() >= self.options.max_error_body_bytes {
                        break;
                    }
                }
                // A body cut short still classifies by status: keep what arrived.
                Ok(None) | Ok(Some(Err(_))) | Err(_) => break,
            }
        }
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
}

/// The request headers with secrets filled in from the environment variables they name, read
/// through `lookup` (normally [`std::env::var`]).
pub fn resolve_headers(
    request: &CompiledRequest,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<HeaderMap, PrepareError> {
    let mut map = HeaderMap::new();
    for header in &request.headers {
        let value = match &header.secret_env {
            Some(env) => {
                let key = lookup(env)
                    .filter(|k| !k.trim().is_empty())
                    .ok_or_else(|| PrepareError::MissingApiKey { env: env.clone() })?;
                header.value.replace(REDACTED, key.trim())
            }
            None => header.value.clone(),
        };
        let name = HeaderName::from_bytes(header.name.as_bytes()).map_err(|e| {
            PrepareError::BadHeader {
                name: header.name.clone(),
                reason: e.to_string(),
            }
        })?;
        let mut value = HeaderValue::from_str(&value).map_err(|_| PrepareError::BadHeader {
            name: header.name.clone(),
            // Never echo the value: it may hold a key.
            reason: "the value has characters a header cannot carry".to_string(),
        })?;
        value.set_sensitive(header.secret_env.is_some());
        map.append(name, value);
    }
    Ok(map)
}

/// `base × 2^retry × jitter(0.9–1.1)`.
fn backoff(base: Duration, retry: u32) -> Duration {
    let factor = 2f64.powi(retry.min(20) as i32) * rand::random_range(0.9..=1.1);
    Duration::try_from_secs_f64(base.as_secs_f64() * factor).unwrap_or(Duration::MAX)
}

fn secs(d: Duration) -> String {
    format!("{:.3} s", d.as_secs_f64())
}

/// An error and its sources, `outer: inner: innermost`.
/// A response body chunk, or the error that cut the body short.
impl From<reqwest::Result<Bytes>> for Incoming {
    fn from(read: reqwest::Result<Bytes>) -> Self {
        match read {
            Ok(chunk) => Incoming::Data(chunk),
            Err(e) => Incoming::Failed(error_chain(&e)),
        }
    }
}

pub(crate) fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(inner) = source {
        let inner_text = inner.to_string();
        if !text.contains(&inner_text) {
            text.push_str(": ");
            text.push_str(&inner_text);
        }
        source = inner.source();
    }
    text
}
