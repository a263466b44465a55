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

use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::StreamExt as _;
use reqwest::header::HeaderMap;

use super::inflate::Inflater;
use super::proxy::wire::header_pairs;
use super::read_loop::{Callback, Incoming, ReadBounds, Reading, Sink, new_attempt, read_turn};
use super::redirect;
use crate::core::compile::CompiledRequest;
use crate::core::stream::StreamReader;
use crate::core::stream::events::header_events;
use crate::core::stream::http_error::{classify_http_error, header, with_date};
use crate::core::stream::limits::deadline_passed;

pub(crate) use super::send::now_http_date;
// The shared send types, where they were before `transport::send` owned them.
pub use super::send::{
    Attempt, CancelToken, DEFAULT_DEADLINE, PrepareError, SendError, SendEvent, SendOptions,
    SendResult, resolve_headers,
};

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
        if parsed.host_str().is_some_and(is_loopback_host) {
            builder = builder.no_proxy();
        }
        if let Some(ca) = &options.ca {
            builder = ca.add_to_reqwest(builder).map_err(PrepareError::Client)?;
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
        on_event: F,
    ) -> SendResult
    where
        F: FnMut(SendEvent<'_>) + Send,
    {
        self.send_to(request, headers, cancel, &mut Callback(on_event))
            .await
    }

    /// [`HttpSender::send`], reporting to `sink`.
    pub(crate) async fn send_to<K: Sink>(
        &self,
        request: &CompiledRequest,
        headers: &HeaderMap,
        cancel: &CancelToken,
        sink: &mut K,
    ) -> SendResult {
        let body = Bytes::copy_from_slice(request.wire_body());
        let deadline = self.options.deadline_from_now();
        let mut attempts = Vec::new();
        let mut retries = 0;
        loop {
            let number = retries + 1;
            sink.event(SendEvent::AttemptStarted { attempt: number });
            let attempt = self
                .attempt(
                    number,
                    &request.url,
                    headers,
                    body.clone(),
                    Stop { cancel, deadline },
                    sink,
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
            sink.event(SendEvent::Retrying {
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

    async fn attempt<K: Sink>(
        &self,
        number: u32,
        url: &str,
        headers: &HeaderMap,
        body: Bytes,
        stop: Stop<'_>,
        sink: &mut K,
    ) -> Attempt {
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
        attempt.http_version = stored_http_version(response.version());
        sink.event(SendEvent::Response {
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
            sink.event(SendEvent::HeaderEvents(&attempt.header_events));
        }
        // A compressed answer (the request may ask for one: `accept-encoding`) is decoded
        // before the reader; one this build cannot decode ends the turn as `content_encoding`.
        let encoding = header(&attempt.response_headers, "content-encoding");
        let inflater =
            match Inflater::for_encoding(encoding, self.options.limits.max_response_bytes) {
                Ok(inflater) => inflater,
                Err(e) => {
                    reader.fail(e.stream_error(), start.elapsed());
                    None
                }
            };
        let mut body = response.bytes_stream();
        read_turn(
            &mut body,
            Reading { reader, inflater },
            ReadBounds::of(&self.options, deadline),
            cancel,
            start,
            &mut attempt,
            sink,
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
        let encoding = response
            .headers()
            .get(reqwest::header::CONTENT_ENCODING)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
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
        Ok(String::from_utf8_lossy(&decoded_error_body(
            &bytes,
            encoding.as_deref(),
            self.options.max_error_body_bytes,
        ))
        .into_owned())
    }
}

/// An error body as it reads: decoded from `encoding` (at most `limit` bytes; what decoded before
/// a cut or bad byte is kept), nothing when the encoding is one this build does not decode.
fn decoded_error_body(raw: &[u8], encoding: Option<&str>, limit: usize) -> Vec<u8> {
    let Ok(inflater) = Inflater::for_encoding(encoding, limit as u64) else {
        return Vec::new();
    };
    let Some(mut inflater) = inflater else {
        return raw.to_vec();
    };
    let mut plain = Vec::new();
    let mut keep = |piece: &[u8]| plain.extend_from_slice(piece);
    if inflater.push(raw, &mut keep).is_ok() {
        let _ = inflater.finish(&mut keep);
    }
    plain
}

/// `base × 2^retry × jitter(0.9–1.1)`.
fn backoff(base: Duration, retry: u32) -> Duration {
    let factor = 2f64.powi(retry.min(20) as i32) * rand::random_range(0.9..=1.1);
    Duration::try_from_secs_f64(base.as_secs_f64() * factor).unwrap_or(Duration::MAX)
}

fn secs(d: Duration) -> String {
    format!("{:.3} s", d.as_secs_f64())
}

/// The HTTP version an answer came over as stored with it (the HAR's `httpVersion`), for the
/// proxy and a live send alike: `None` for HTTP/1.1, which a stored request without one went
/// over; `HTTP/2.0` and the like otherwise.
pub(crate) fn stored_http_version(version: reqwest::Version) -> Option<String> {
    (version != reqwest::Version::HTTP_11).then(|| format!("{version:?}"))
}

/// True for a host that is this machine (`localhost`, `::1`, any 127.x.x.x): never reached
/// through a system proxy.
pub(crate) fn is_loopback_host(host: &str) -> bool {
    matches!(host, "localhost" | "127.0.0.1" | "[::1]" | "::1")
        || host
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// A response body chunk, or the error that cut the body short.
impl From<reqwest::Result<Bytes>> for Incoming {
    fn from(read: reqwest::Result<Bytes>) -> Self {
        match read {
            Ok(chunk) => Incoming::Data(chunk),
            Err(e) => Incoming::Failed(error_chain(&e)),
        }
    }
}

/// An error and its sources, `outer: inner: innermost`.
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
