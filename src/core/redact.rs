//! Secret redaction for everything promptwire writes out (exports, stored headers): secret header
//! values, and `sk-…` keys and `Bearer …` tokens anywhere in text.

use std::sync::LazyLock;

use regex::Regex;

use super::prompt::SECRET_HEADERS;

/// What a redacted value shows.
pub const REDACTED: &str = "<redacted>";

static SECRETS: LazyLock<Option<Regex>> = LazyLock::new(|| {
    // OpenAI-style keys (sk-…, sk-proj-…), bearer tokens, and Azure `api-key` values written as
    // `api-key: …`, `"api-key":"…"` or `api_key=…`.
    Regex::new(r#"(?P<sk>\bsk-[A-Za-z0-9_\-]{8,})|(?P<bearer>\b[Bb]earer\s+)(?P<token>[A-Za-z0-9._~+/=\-]{8,})|(?P<akey>(?i:\bapi[-_]?key)["']?\s*[:=]\s*["']?)(?P<akval>[A-Za-z0-9._~+/=\-]{8,})"#).ok()
});

/// True for header names whose values are secrets (case-insensitive).
pub fn is_secret_header(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    SECRET_HEADERS.contains(&lower.as_str())
        || lower.ends_with("-api-key")
        || lower == "cookie"
        || lower == "set-cookie"
}

/// Query parameters whose values are credentials (compared case-insensitively).
const SECRET_QUERY_PARAMS: [&str; 8] = [
    "api-key",
    "api_key",
    "apikey",
    "key",
    "access_token",
    "token",
    "sig",
    "code",
];

/// A URL (or a path with a query) with the values of credential query parameters (`api-key`,
/// `key`, `access_token`, …) replaced by [`REDACTED`], and any embedded key or token redacted.
pub fn redact_url(url: &str) -> String {
    let (base, fragment) = match url.split_once('#') {
        Some((b, f)) => (b, Some(f)),
        None => (url, None),
    };
    let mut out = match base.split_once('?') {
        None => base.to_string(),
        Some((path, query)) => {
            let params: Vec<String> = query
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some((name, _))
                        if SECRET_QUERY_PARAMS
                            .iter()
                            .any(|s| s.eq_ignore_ascii_case(name)) =>
                    {
                        format!("{name}={REDACTED}")
                    }
                    _ => pair.to_string(),
                })
                .collect();
            format!("{path}?{}", params.join("&"))
        }
    };
    if let Some(fragment) = fragment {
        out.push('#');
        out.push_str(fragment);
    }
    redact_text(&out)
}

/// The value to write for a header: redacted entirely if the header is secret, else with any
/// embedded key or token redacted.
pub fn redact_header(name: &str, value: &str) -> String {
    if is_secret_header(name) {
        if value.to_ascii_lowercase().starts_with("bearer ") {
            return format!("Bearer {REDACTED}");
        }
        return REDACTED.to_string();
    }
    redact_text(value)
}

/// Replaces `sk-…` keys and `Bearer …` tokens in free text.
pub fn redact_text(text: &str) -> String {
    let Some(re) = SECRETS.as_ref() else {
        return text.to_string();
    };
    if !re.is_match(text) {
        return text.to_string();
    }
    re.replace_all(text, |caps: &regex::Captures<'_>| {
        if caps.name("sk").is_some() {
            format!("sk-{REDACTED}")
        } else if let Some(key) = caps.name("akey") {
            format!("{}{REDACTED}", key.as_str())
        } else {
            let prefix = caps.name("bearer").map_or("Bearer ", |m| m.as_str());
            format!("{prefix}{REDACTED}")
        }
    })
    .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_keys_tokens_and_secret_headers() {
        assert_eq!(
            redact_text(r#"{"key":"sk-proj-abcdEFGH1234_xyz","auth":"Bearer eyJhbGciOi.J9"}"#),
            r#"{"key":"sk-<redacted>","auth":"Bearer <redacted>"}"#
        );
        assert_eq!(redact_text("no secrets, sk-short"), "no secrets, sk-short");
        assert_eq!(
            redact_text(r#"{"api-key":"0123456789abcdef"} api_key=AZ0123456789"#),
            r#"{"api-key":"<redacted>"} api_key=<redacted>"#
        );
        assert_eq!(
            redact_header("Authorization", "Bearer abc"),
            "Bearer <redacted>"
        );
        assert_eq!(redact_header("api-key", "0123456789"), "<redacted>");
        assert_eq!(redact_header("x-trace", "t-1"), "t-1");
        assert_eq!(redact_header("Set-Cookie", "s=1"), "<redacted>");
        assert_eq!(
            redact_url("http://h/v1/responses?api-version=2025&api-key=abc&key=k2#f"),
            "http://h/v1/responses?api-version=2025&api-key=<redacted>&key=<redacted>#f"
        );
        assert_eq!(redact_url("/v1/responses"), "/v1/responses");
    }
}
