//! The one redaction policy for everything promptwire shows, writes, stores or exports (never
//! for what it sends: the wire always carries the real key).
//!
//! - Headers ([`headers`]): credential headers by name (Authorization, api-key, `*-api-key`,
//!   `x-auth-token`, `*-token`, cookies both ways, …) and by value shape in any header
//!   (`Bearer …`, `Basic …`, `sk-…`, JWTs); organization/project/account ids are kept but marked
//!   as identifying ([`headers::is_identifying_header`]).
//! - Free text and JSON ([`text`]): `sk-…` keys, `Bearer …` tokens, JWTs, `api-key=…`-style
//!   assignments, URL user info and credential query parameters inside any text, and the values of
//!   credential-like JSON fields (`password`, `secret`, `token`, `access_token`, `api_key`, …) at
//!   any depth, matched by key name, never the Responses API's own fields
//!   (`max_output_tokens`, `prompt_cache_key`, usage `*_tokens`, logprob `token`s).
//! - URLs ([`redact_url`]): the password of `user:PASS@` (a lone user name, which HTTP clients
//!   send as Basic credentials, too) and credential query parameters (`key`, `api-key`, `token`,
//!   `sig`, `code`, `secret`, `password`, …).
//!
//! Bytes that are not UTF-8 are redacted through their [`escaped_view`] (`\xNN` for each
//! stray byte); raw bytes are never stored.
//!
//! [`redacted_paths`] names what a redacted rendering of a JSON document replaced.
//!
//! What is shown uses [`redact_text`] and its kin, which hide a whole text they cannot redact;
//! what is written or exported uses [`checked`] ([`try_redacted`], [`try_redacted_json`],
//! [`try_redact_value`], [`try_redact_header`]), which fails closed: a pattern that failed to
//! build, or JSON that would not parse back once redacted, is a [`RedactError`] and nothing is
//! written.
//!
//! What a redacted value shows is [`REDACTED`]; the scheme of an authorization value, the name
//! of a cookie and the user name of a URL stay visible.

mod bytes;
pub mod checked;
pub mod headers;
mod paths;
mod text;

pub use bytes::{ESCAPED_NOTE, escaped_view};
pub use checked::{
    RedactError, try_redact_header, try_redact_value, try_redacted, try_redacted_json,
};

pub use headers::{
    IDENTIFYING_NOTE, is_identifying_header, is_secret_header, redact_header, redact_headers,
};
pub use paths::redacted_paths;
pub use text::{redact_text, redacted};

/// What a redacted value shows.
pub const REDACTED: &str = "<redacted>";

/// A URL (or a path with a query) as shown: user info and credential query parameter values
/// replaced by [`REDACTED`], and any key or token embedded elsewhere redacted.
pub fn redact_url(url: &str) -> String {
    redact_text(url)
}

#[cfg(test)]
mod tests;
