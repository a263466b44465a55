//! Header rules: which headers carry credentials (by name, and by the shape of any value), how a
//! credential header is shown, and which headers identify an organization, project or account.
//!
//! Credential headers by name (case-insensitive): `authorization`, `proxy-authorization`,
//! `cookie`, `set-cookie`, `api-key`, `x-api-key`, `openai-api-key`, `x-auth-token`,
//! `x-access-token`, `x-goog-api-key`, and every name ending in `-api-key`, `_api_key`,
//! `-token`, `-secret`, `-password`, `-signature`, `-credential(s)` or `-key` (except
//! `idempotency-key` and `sec-websocket-key`, which are not secrets), and every name that
//! contains `authorization`, `api-key`, `api_key`, `apikey`, `secret` or `password` anywhere
//! (`authorization-extra`). Rate-limit headers (`x-ratelimit-remaining-tokens`) are not secrets.
//!
//! Shown as: `Bearer <redacted>` / `Basic <redacted>` (the scheme kept), a cookie's names kept
//! (`a=<redacted>; b=<redacted>`; a `set-cookie` also keeps its attributes), otherwise
//! `<redacted>`. Any other header whose whole value is an authorization (`Bearer …`, `Basic …`,
//! `Token …`), or that holds a key, token or URL credential anywhere, gets the same treatment.
//!
//! Identifying headers (`openai-organization`, `openai-project`, `chatgpt-account-id`) are not
//! credentials: they are shown as they are and marked with [`IDENTIFYING_NOTE`] by whoever
//! renders them (HAR `comment`, a note in the app and on the command line).

use super::{REDACTED, redact_text};

/// Exact header names that carry credentials.
const SECRET_NAMES: [&str; 10] = [
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
    "api-key",
    "x-api-key",
    "openai-api-key",
    "x-auth-token",
    "x-access-token",
    "x-goog-api-key",
];

/// Name endings that mark credential headers.
const SECRET_SUFFIXES: [&str; 8] = [
    "-api-key",
    "_api_key",
    "-token",
    "-secret",
    "-password",
    "-signature",
    "-credential",
    "-credentials",
];

/// Words that make any header name containing them a credential header (`authorization-extra`,
/// `x-client-secret-v2`, `my_apikey`). Rate-limit headers (`x-ratelimit-remaining-tokens`)
/// contain none of them.
const SECRET_WORDS: [&str; 6] = [
    "authorization",
    "api-key",
    "api_key",
    "apikey",
    "secret",
    "password",
];

/// `-key` headers that are not secrets.
const NOT_SECRET_KEYS: [&str; 2] = ["idempotency-key", "sec-websocket-key"];

/// Headers that identify an organization, project or account.
const IDENTIFYING_NAMES: [&str; 3] = [
    "openai-organization",
    "openai-project",
    "chatgpt-account-id",
];

/// How an identifying header is marked where it is shown.
pub const IDENTIFYING_NOTE: &str =
    "identifying: names your organization, project or account (not a credential; shown as is)";

/// True for header names whose values are credentials (case-insensitive).
pub fn is_secret_header(name: &str) -> bool {
    let lower = name.trim().to_ascii_lowercase();
    SECRET_NAMES.contains(&lower.as_str())
        || SECRET_WORDS.iter().any(|w| lower.contains(w))
        || SECRET_SUFFIXES.iter().any(|s| lower.ends_with(s))
        || (lower.ends_with("-key") && !NOT_SECRET_KEYS.contains(&lower.as_str()))
}

/// True for headers that identify an organization, project or account (case-insensitive).
pub fn is_identifying_header(name: &str) -> bool {
    let lower = name.trim().to_ascii_lowercase();
    IDENTIFYING_NAMES.contains(&lower.as_str())
}

/// An authorization scheme at the start of `value` (`Bearer`, `Basic`, `Token`, …) followed by
/// a credential; returns the scheme as written.
fn auth_scheme(value: &str) -> Option<&str> {
    let (scheme, rest) = value.trim_start().split_once(char::is_whitespace)?;
    let rest = rest.trim();
    let any = ["bearer", "basic", "digest", "negotiate"];
    // `Token …`/`ApiKey …` only as one credential-like word (`token limit` is prose).
    let word = ["token", "apikey"];
    let is_auth = (any.iter().any(|k| scheme.eq_ignore_ascii_case(k)) && !rest.is_empty())
        || (word.iter().any(|k| scheme.eq_ignore_ascii_case(k))
            && rest.len() >= 8
            && !rest.contains(char::is_whitespace));
    is_auth.then_some(scheme)
}

/// `name=value` pairs of a cookie header with the values redacted; `attributes` keeps the
/// attributes of a `set-cookie` (`Path=/`, `HttpOnly`, …) after its first pair.
fn redact_cookie(value: &str, attributes: bool) -> String {
    value
        .split(';')
        .enumerate()
        .map(|(i, pair)| {
            let pair = pair.trim();
            if attributes && i > 0 {
                return redact_text(pair);
            }
            match pair.split_once('=') {
                Some((name, _)) => format!("{}={REDACTED}", name.trim()),
                None if pair.is_empty() => String::new(),
                None => REDACTED.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The value to show, store or export for header `name`: a credential header redacted (its
/// scheme or cookie names kept), any other with authorization-shaped values and embedded keys,
/// tokens and URL credentials redacted.
pub fn redact_header(name: &str, value: &str) -> String {
    let lower = name.trim().to_ascii_lowercase();
    if lower == "cookie" || lower == "set-cookie" {
        return redact_cookie(value, lower == "set-cookie");
    }
    if let Some(scheme) = auth_scheme(value) {
        return format!("{scheme} {REDACTED}");
    }
    if is_secret_header(&lower) {
        return REDACTED.to_string();
    }
    redact_text(value)
}

/// Every header of `headers` as [`redact_header`] shows it.
pub fn redact_headers(headers: &[(String, String)]) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(name, value)| (name.clone(), redact_header(name, value)))
        .collect()
}
