//! The types every live send shares, whatever the transport: [`SendOptions`], the errors
//! ([`PrepareError`] before sending, [`SendError`] per attempt), the progress [`SendEvent`]s the
//! transports report, the [`SendResult`] with its [`Attempt`]s, the [`CancelToken`], and
//! [`resolve_headers`] (secret headers filled in through an injectable key lookup).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use tokio::sync::Notify;

use crate::core::compile::{CompiledRequest, REDACTED};
use crate::core::stream::{
    ErrorClass, HttpError, MappedEvent, StreamError, StreamLimits, TimelineEntry, TurnOutcome,
};
use crate::transport::redirect::RedirectRefused;

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
    /// Root certificates trusted besides the web's (a private CA), over HTTP and WebSocket.
    pub ca: Option<crate::transport::tls::ExtraRoots>,
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
            ca: None,
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
    /// [`crate::transport::redirect`].
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
    /// The HTTP version the answer came over when it was not HTTP/1.1 (`HTTP/2.0` when the
    /// server offered it by ALPN), as the proxy records it.
    pub http_version: Option<String>,
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

/// This machine's clock as an HTTP date, for a response without `Date` (see [`crate::core::stream::http_error::with_date`]).
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
