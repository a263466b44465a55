//! Classification of a non-2xx HTTP answer to a Responses request (WIRE_SPEC §14.4), and the
//! server's retry delay in its headers or body. Pure: status, headers and body are passed in.

use std::borrow::Cow;
use std::time::Duration;

use serde_json::Value;

use super::error_class::ErrorClass;
use super::errors::{ApiErrorBody, retry_after_hint};

/// Text in a 400 body that marks a bad image.
const INVALID_IMAGE_TEXT: &str = "The image data you provided does not represent a valid image";

/// A non-2xx answer, classified.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HttpError {
    /// 503 with `error.code` `server_is_overloaded` or `slow_down`. Not retried.
    #[error("HTTP 503: server overloaded: {message}")]
    ServerOverloaded {
        /// The server's message (may be empty).
        message: String,
    },
    /// 400 with `error.code == "cyber_policy"`.
    #[error("HTTP 400: {message}")]
    CyberPolicy {
        /// The server's message, or the blank-message fallback.
        message: String,
    },
    /// 400 whose body says the image is not valid.
    #[error("HTTP 400: invalid image: {body}")]
    InvalidImageRequest {
        /// The response body.
        body: String,
    },
    /// Any other 400.
    #[error("HTTP 400: invalid request: {body}")]
    InvalidRequest {
        /// The response body.
        body: String,
    },
    /// 500. Retryable.
    #[error("HTTP 500: internal server error: {body}")]
    InternalServerError {
        /// The response body.
        body: String,
    },
    /// 429 with `error.type == "usage_limit_reached"`.
    #[error("HTTP 429: usage limit reached{}{}", plan_suffix(.plan_type), resets_suffix(.resets_at))]
    UsageLimitReached {
        /// `error.plan_type`.
        plan_type: Option<String>,
        /// `error.resets_at`, unix seconds.
        resets_at: Option<i64>,
        /// `error.message`.
        message: Option<String>,
    },
    /// 429 with `error.type == "usage_not_included"`.
    #[error("HTTP 429: usage not included in the plan")]
    UsageNotIncluded,
    /// Any other 429: a rate limit. promptwire retries it after the server's delay (Codex's
    /// HTTP layer retries it and reports this class when its retries run out).
    #[error("HTTP {status}: rate limited{}", request_suffix(.request_id))]
    RetryLimit {
        /// Always 429.
        status: u16,
        /// `x-request-id` / `x-oai-request-id`.
        request_id: Option<String>,
        /// The delay the server asked for.
        retry_after: Option<Duration>,
        /// The response body.
        body: String,
    },
    /// Any other status.
    #[error("HTTP {status}: {}{}", unexpected_text(.message, .body), request_suffix(.request_id))]
    UnexpectedStatus {
        /// The status code.
        status: u16,
        /// The response body.
        body: String,
        /// A user-facing explanation when one is known (a Cloudflare block).
        message: Option<String>,
        /// `cf-ray`.
        cf_ray: Option<String>,
        /// `x-request-id` / `x-oai-request-id`.
        request_id: Option<String>,
        /// `x-openai-authorization-error`.
        auth_error: Option<String>,
        /// `error.code` from the base64 JSON header `x-error-json`.
        error_code: Option<String>,
        /// The delay the server asked for (`retry-after` headers).
        retry_after: Option<Duration>,
        /// The request URL.
        url: String,
    },
}

fn plan_suffix(plan: &Option<String>) -> String {
    plan.as_ref()
        .map(|p| format!(" (plan {p})"))
        .unwrap_or_default()
}

fn resets_suffix(resets_at: &Option<i64>) -> String {
    resets_at
        .map(|t| format!(", resets at unix time {t}"))
        .unwrap_or_default()
}

fn request_suffix(id: &Option<String>) -> String {
    id.as_ref()
        .map(|id| format!(" (request id {id})"))
        .unwrap_or_default()
}

fn unexpected_text<'a>(message: &'a Option<String>, body: &'a str) -> &'a str {
    match message {
        Some(m) => m,
        None if body.is_empty() => "unexpected status",
        None => body,
    }
}

impl HttpError {
    /// The class recorded and printed in machine-readable output (`internal_server_error`,
    /// `retry_limit`, …).
    pub fn class(&self) -> ErrorClass {
        match self {
            Self::ServerOverloaded { .. } => ErrorClass::ServerOverloaded,
            Self::CyberPolicy { .. } => ErrorClass::CyberPolicy,
            Self::InvalidImageRequest { .. } => ErrorClass::InvalidImageRequest,
            Self::InvalidRequest { .. } => ErrorClass::InvalidRequest,
            Self::InternalServerError { .. } => ErrorClass::InternalServerError,
            Self::UsageLimitReached { .. } => ErrorClass::UsageLimitReached,
            Self::UsageNotIncluded => ErrorClass::UsageNotIncluded,
            Self::RetryLimit { .. } => ErrorClass::RetryLimit,
            Self::UnexpectedStatus { .. } => ErrorClass::UnexpectedStatus,
        }
    }

    /// Whether a retry can help: 500, a plain 429 rate limit, and other 5xx (and 408) statuses.
    /// Overload, policy, usage and request errors are never retried.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::InternalServerError { .. } | Self::RetryLimit { .. } => true,
            Self::UnexpectedStatus { status, .. } => *status >= 500 || *status == 408,
            _ => false,
        }
    }

    /// The delay the server asked for before a retry.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::RetryLimit { retry_after, .. } | Self::UnexpectedStatus { retry_after, .. } => {
                *retry_after
            }
            _ => None,
        }
    }
}

/// The value of the first header named `name` (compared case-insensitively).
pub fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// The `error` object of a JSON error body.
fn body_error(body: &str) -> Option<ApiErrorBody> {
    let value: Value = serde_json::from_str(body).ok()?;
    ApiErrorBody::from_value(value.get("error")?)
}

/// Classifies a non-2xx answer (§14.4). `headers` are the response headers (any case).
pub fn classify_http_error(
    status: u16,
    headers: &[(String, String)],
    body: &str,
    url: &str,
) -> HttpError {
    let error = body_error(body);
    let code = error.as_ref().and_then(|e| e.code.as_deref());
    let kind = error.as_ref().and_then(|e| e.kind.as_deref());
    let message = error
        .as_ref()
        .and_then(|e| e.message.clone())
        .unwrap_or_default();
    let request_id = header(headers, "x-request-id")
        .or_else(|| header(headers, "x-oai-request-id"))
        .map(str::to_string);
    match status {
        503 if matches!(code, Some("server_is_overloaded" | "slow_down")) => {
            HttpError::ServerOverloaded { message }
        }
        400 if code == Some("cyber_policy") => HttpError::CyberPolicy {
            message: error.unwrap_or_default().cyber_policy_message(),
        },
        400 if body.contains(INVALID_IMAGE_TEXT) => HttpError::InvalidImageRequest {
            body: body.to_string(),
        },
        400 => HttpError::InvalidRequest {
            body: body.to_string(),
        },
        500 => HttpError::InternalServerError {
            body: body.to_string(),
        },
        429 if kind == Some("usage_limit_reached") => {
            let error = error.unwrap_or_default();
            HttpError::UsageLimitReached {
                plan_type: error.plan_type,
                resets_at: error.resets_at,
                message: error.message,
            }
        }
        429 if kind == Some("usage_not_included") => HttpError::UsageNotIncluded,
        429 => HttpError::RetryLimit {
            status,
            request_id,
            retry_after: header_retry_after(headers)
                .or_else(|| error.as_ref().and_then(retry_after_hint)),
            body: body.to_string(),
        },
        _ => {
            let blocked = status == 403 && body.contains("Cloudflare") && body.contains("blocked");
            HttpError::UnexpectedStatus {
                status,
                body: body.to_string(),
                message: blocked.then(|| {
                    "access blocked by Cloudflare: the API may not be available in your region"
                        .to_string()
                }),
                cf_ray: header(headers, "cf-ray").map(str::to_string),
                request_id,
                auth_error: header(headers, "x-openai-authorization-error").map(str::to_string),
                error_code: header(headers, "x-error-json").and_then(error_json_code),
                retry_after: header_retry_after(headers),
                url: url.to_string(),
            }
        }
    }
}

/// The delay in `retry-after-ms` (milliseconds) or `retry-after`: seconds, or an HTTP date,
/// measured against the response's own `Date` header (the core reads no clock; the live
/// transports add a `Date` of their own clock to a response that has none, see
/// [`with_date`]). A date already past means no wait.
pub fn header_retry_after(headers: &[(String, String)]) -> Option<Duration> {
    if let Some(ms) = header(headers, "retry-after-ms").and_then(|v| v.trim().parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_millis(ms as u64));
    }
    let value = header(headers, "retry-after")?.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return Duration::try_from_secs_f64(secs).ok();
    }
    let at = http_date(value)?;
    let now = http_date(header(headers, "date")?)?;
    let ms = (at - now).num_milliseconds();
    Some(Duration::from_millis(u64::try_from(ms).unwrap_or(0)))
}

/// An HTTP date (RFC 9110 §5.6.7) in any of its three forms: IMF-fixdate
/// (`Sun, 06 Nov 1994 08:49:37 GMT`, or any RFC 2822 date), the obsolete RFC 850 form
/// (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`), all UTC.
pub fn http_date(text: &str) -> Option<chrono::DateTime<chrono::Utc>> {
    let text = text.trim();
    if let Ok(at) = chrono::DateTime::parse_from_rfc2822(text) {
        return Some(at.to_utc());
    }
    let naive = chrono::NaiveDateTime::parse_from_str(text, "%A, %d-%b-%y %H:%M:%S GMT")
        .or_else(|_| {
            let spaced = text.split_whitespace().collect::<Vec<_>>().join(" ");
            chrono::NaiveDateTime::parse_from_str(&spaced, "%a %b %d %H:%M:%S %Y")
        })
        .ok()?;
    Some(naive.and_utc())
}

/// `headers` with a `Date` of `now` added when the response carries none, so that an HTTP-date
/// `retry-after` still counts from the moment it arrived. `now` is the caller's clock reading
/// (an RFC 2822 date).
pub fn with_date<'a>(headers: &'a [(String, String)], now: &str) -> Cow<'a, [(String, String)]> {
    if header(headers, "date").is_some() {
        return Cow::Borrowed(headers);
    }
    let mut owned = headers.to_vec();
    owned.push(("date".to_string(), now.to_string()));
    Cow::Owned(owned)
}

/// `error.code` of the base64-encoded JSON in `x-error-json`.
fn error_json_code(encoded: &str) -> Option<String> {
    let decoded = decode_base64(encoded.trim())?;
    let value: Value = serde_json::from_slice(&decoded).ok()?;
    value
        .get("error")
        .and_then(|e| e.get("code"))
        .or_else(|| value.get("code"))
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// Standard or URL-safe base64, padding optional.
fn decode_base64(text: &str) -> Option<Vec<u8>> {
    fn sextet(c: u8) -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        } as u32)
    }
    let digits = text.trim_end_matches('=').as_bytes();
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for group in digits.chunks(4) {
        if group.len() == 1 {
            return None;
        }
        let mut acc = 0u32;
        for (i, &c) in group.iter().enumerate() {
            acc |= sextet(c)? << (18 - 6 * i);
        }
        let bytes = acc.to_be_bytes();
        out.extend_from_slice(&bytes[1..group.len()]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_numbers() {
        assert_eq!(decode_base64("aGk="), Some(b"hi".to_vec()));
        assert_eq!(decode_base64("aGk"), Some(b"hi".to_vec()));
        assert_eq!(decode_base64("aGVsbG8h"), Some(b"hello!".to_vec()));
        assert_eq!(decode_base64("a"), None);
        assert_eq!(decode_base64("a*=="), None);
    }
}
