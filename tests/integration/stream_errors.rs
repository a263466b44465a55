//! HTTP status errors (WIRE_SPEC §14.4) as whole values: every class, the headers they keep,
//! retryability, and the server's retry delay from `retry-after`, `retry-after-ms` or the body.

use std::time::Duration;

use pretty_assertions::assert_eq;
use promptwire::core::stream::HttpError;
use promptwire::core::stream::http_error::{classify_http_error, header_retry_after, with_date};
use serde_json::json;

const URL: &str = "https://api.example.test/v1/responses";

fn headers(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect()
}

fn classify(status: u16, pairs: &[(&str, &str)], body: &str) -> HttpError {
    classify_http_error(status, &headers(pairs), body, URL)
}

#[test]
fn overloaded_503_by_code_only() {
    for code in ["server_is_overloaded", "slow_down"] {
        let body = json!({"error": {"code": code, "message": "Please retry later."}}).to_string();
        assert_eq!(
            classify(503, &[], &body),
            HttpError::ServerOverloaded {
                message: "Please retry later.".to_string()
            }
        );
    }
    // A 503 with another code is an unexpected status (retryable as a 5xx).
    let body = json!({"error": {"code": "upstream_timeout"}}).to_string();
    let error = classify(503, &[("retry-after", "2")], &body);
    assert_eq!(
        error,
        HttpError::UnexpectedStatus {
            status: 503,
            body: body.clone(),
            message: None,
            cf_ray: None,
            request_id: None,
            auth_error: None,
            error_code: None,
            retry_after: Some(Duration::from_secs(2)),
            url: URL.to_string(),
        }
    );
    assert_eq!(
        (error.class().as_str(), error.is_retryable()),
        ("unexpected_status", true)
    );
}

#[test]
fn bad_request_400_variants() {
    let cyber = json!({"error": {"type": "invalid_request_error", "code": "cyber_policy",
        "message": "Flagged for cyber policy."}})
    .to_string();
    assert_eq!(
        classify(400, &[], &cyber),
        HttpError::CyberPolicy {
            message: "Flagged for cyber policy.".to_string()
        }
    );
    let blank = json!({"error": {"code": "cyber_policy", "message": " \n"}}).to_string();
    assert_eq!(
        classify(400, &[], &blank),
        HttpError::CyberPolicy {
            message: "This request has been flagged for possible cybersecurity risk.".to_string()
        }
    );
    let image = json!({"error": {"message": "The image data you provided does not represent a \
        valid image. Please check your input."}})
    .to_string();
    assert_eq!(
        classify(400, &[], &image),
        HttpError::InvalidImageRequest {
            body: image.clone()
        }
    );
    let other = "not even JSON";
    assert_eq!(
        classify(400, &[], other),
        HttpError::InvalidRequest {
            body: other.to_string()
        }
    );
    for error in [
        classify(400, &[], &cyber),
        classify(400, &[], &image),
        classify(400, &[], other),
    ] {
        assert!(!error.is_retryable(), "{error:?}");
    }
}

#[test]
fn internal_server_error_500() {
    let error = classify(500, &[], "{}");
    assert_eq!(
        error,
        HttpError::InternalServerError {
            body: "{}".to_string()
        }
    );
    assert_eq!(
        (
            error.class().as_str(),
            error.is_retryable(),
            error.retry_after()
        ),
        ("internal_server_error", true, None)
    );
}

#[test]
fn too_many_requests_429_variants() {
    let usage = json!({"error": {"type": "usage_limit_reached", "plan_type": "plus",
        "resets_at": 1796000000, "message": "You've hit your usage limit."}})
    .to_string();
    let error = classify(429, &[("retry-after", "30")], &usage);
    assert_eq!(
        error,
        HttpError::UsageLimitReached {
            plan_type: Some("plus".to_string()),
            resets_at: Some(1796000000),
            message: Some("You've hit your usage limit.".to_string()),
        }
    );
    assert_eq!(
        (error.class().as_str(), error.is_retryable()),
        ("usage_limit_reached", false)
    );
    assert_eq!(
        error.to_string(),
        "HTTP 429: usage limit reached (plan plus), resets at unix time 1796000000"
    );
    let not_included = json!({"error": {"type": "usage_not_included"}}).to_string();
    assert_eq!(
        classify(429, &[], &not_included),
        HttpError::UsageNotIncluded
    );
    // Any other 429: a rate limit, with the server's delay (header first, then the body).
    let limited = json!({"error": {"type": "requests", "code": "rate_limit_exceeded",
        "message": "Rate limit reached. Please try again in 750ms."}})
    .to_string();
    assert_eq!(
        classify(429, &[("X-Request-Id", "req_123")], &limited),
        HttpError::RetryLimit {
            status: 429,
            request_id: Some("req_123".to_string()),
            retry_after: Some(Duration::from_millis(750)),
            body: limited.clone(),
        }
    );
    let error = classify(
        429,
        &[("retry-after-ms", "1500"), ("x-oai-request-id", "req_9")],
        &limited,
    );
    assert_eq!(
        error,
        HttpError::RetryLimit {
            status: 429,
            request_id: Some("req_9".to_string()),
            retry_after: Some(Duration::from_millis(1500)),
            body: limited.clone(),
        }
    );
    assert_eq!(
        (error.class().as_str(), error.is_retryable()),
        ("retry_limit", true)
    );
    // The body hint needs `rate_limit_exceeded`.
    let other_code = json!({"error": {"code": "tokens", "message": "try again in 3s"}}).to_string();
    assert_eq!(classify(429, &[], &other_code).retry_after(), None);
}

#[test]
fn other_statuses_keep_their_diagnostics() {
    // base64 of {"error":{"code":"invalid_api_key"}}
    let error_json = "eyJlcnJvciI6eyJjb2RlIjoiaW52YWxpZF9hcGlfa2V5In19";
    let error = classify(
        401,
        &[
            ("cf-ray", "8f1a2b3c4d5e6f70-AMS"),
            ("x-request-id", "req_401"),
            ("x-openai-authorization-error", "invalid_api_key"),
            ("x-error-json", error_json),
        ],
        "{\"error\":{\"message\":\"Incorrect API key provided.\"}}",
    );
    assert_eq!(
        error,
        HttpError::UnexpectedStatus {
            status: 401,
            body: "{\"error\":{\"message\":\"Incorrect API key provided.\"}}".to_string(),
            message: None,
            cf_ray: Some("8f1a2b3c4d5e6f70-AMS".to_string()),
            request_id: Some("req_401".to_string()),
            auth_error: Some("invalid_api_key".to_string()),
            error_code: Some("invalid_api_key".to_string()),
            retry_after: None,
            url: URL.to_string(),
        }
    );
    assert!(!error.is_retryable());
    let blocked = classify(
        403,
        &[],
        "<html>Sorry, you have been blocked. Cloudflare Ray ID: 1</html>",
    );
    let HttpError::UnexpectedStatus { message, .. } = &blocked else {
        panic!("{blocked:?}");
    };
    assert_eq!(
        message.as_deref(),
        Some("access blocked by Cloudflare: the API may not be available in your region")
    );
    assert_eq!(
        blocked.to_string(),
        "HTTP 403: access blocked by Cloudflare: the API may not be available in your region"
    );
    assert!(classify(502, &[], "").is_retryable());
    assert!(classify(408, &[], "").is_retryable());
    assert!(!classify(404, &[], "").is_retryable());
    assert_eq!(
        classify(404, &[], "").to_string(),
        "HTTP 404: unexpected status"
    );
}

#[test]
fn retry_after_headers() {
    assert_eq!(
        header_retry_after(&headers(&[("Retry-After", "3")])),
        Some(Duration::from_secs(3))
    );
    assert_eq!(
        header_retry_after(&headers(&[("retry-after", "0.5")])),
        Some(Duration::from_millis(500))
    );
    assert_eq!(
        header_retry_after(&headers(&[("retry-after-ms", "20"), ("retry-after", "3")])),
        Some(Duration::from_millis(20))
    );
    assert_eq!(
        header_retry_after(&headers(&[(
            "retry-after",
            "Wed, 21 Oct 2026 07:28:00 GMT"
        )])),
        None
    );
    assert_eq!(header_retry_after(&headers(&[("retry-after", "-1")])), None);
    assert_eq!(header_retry_after(&[]), None);
    // An HTTP date counts from the response's own `Date`; a past one means no wait.
    assert_eq!(
        header_retry_after(&headers(&[
            ("Date", "Wed, 21 Oct 2026 07:27:30 GMT"),
            ("Retry-After", "Wed, 21 Oct 2026 07:28:00 GMT"),
        ])),
        Some(Duration::from_secs(30))
    );
    assert_eq!(
        header_retry_after(&headers(&[
            ("date", "Wed, 21 Oct 2026 07:29:00 GMT"),
            ("retry-after", "Wed, 21 Oct 2026 07:28:00 GMT"),
        ])),
        Some(Duration::ZERO)
    );
    assert_eq!(
        header_retry_after(&headers(&[
            ("date", "not a date"),
            ("retry-after", "Wed, 21 Oct 2026 07:28:00 GMT"),
        ])),
        None
    );
    // The two obsolete HTTP-date forms recipients must accept (RFC 9110 §5.6.7).
    for (date, retry_after) in [
        (
            "Wednesday, 21-Oct-26 07:27:50 GMT",
            "Wed, 21 Oct 2026 07:28:00 GMT",
        ),
        (
            "Wed Oct 21 07:27:50 2026",
            "Wednesday, 21-Oct-26 07:28:00 GMT",
        ),
        ("Wed, 21 Oct 2026 07:27:50 GMT", "Wed Oct 21 07:28:00 2026"),
        ("Thu Oct  1 07:27:50 2026", "Thu Oct  1 07:28:00 2026"),
    ] {
        assert_eq!(
            header_retry_after(&headers(&[("date", date), ("retry-after", retry_after)])),
            Some(Duration::from_secs(10)),
            "{date} → {retry_after}"
        );
    }
    // A live transport adds its own clock's `Date` when the response has none.
    let undated = headers(&[("retry-after", "Wed, 21 Oct 2026 07:28:00 GMT")]);
    let dated = with_date(&undated, "Wed, 21 Oct 2026 07:27:00 +0000");
    assert_eq!(header_retry_after(&dated), Some(Duration::from_secs(60)));
    let own = headers(&[("Date", "Wed, 21 Oct 2026 07:27:59 GMT")]);
    assert_eq!(
        with_date(&own, "Thu, 01 Jan 2026 00:00:00 +0000").to_vec(),
        own
    );
}
