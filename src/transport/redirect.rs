//! The redirect policy of live sends: a redirect within the same origin (scheme, host and port)
//! is followed, at most [`MAX_REDIRECTS`] times, with every header; a redirect to another origin
//! is refused before anything is sent there, and the send ends as `redirect_refused` (not
//! retried), naming where it was sent (credentials in that URL redacted).
//!
//! Why refuse rather than follow without the secrets: every header a send carries came from the
//! provider's configuration — the API key variable, Codex `http_headers` and `env_http_headers`,
//! `query_params` — or from the Prompt, and reqwest strips only Authorization, Cookie and
//! Proxy-Authorization on a cross-host redirect, so `x-api-key`, `api-key` or any custom token
//! would reach the other host. Following with those headers dropped would only earn a confusing
//! 401 from a host the user never chose; a user who trusts the new location points the base URL
//! at it. (The recording proxy follows no redirect at all: it hands the 3xx to its client; a
//! WebSocket send fails on a 3xx handshake answer and follows nothing either.)

use reqwest::Url;
use reqwest::redirect::{Attempt, Policy};

use crate::core::redact::redact_url;

/// Most redirects followed within one origin.
pub const MAX_REDIRECTS: usize = 10;

/// Why a redirect was not followed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RedirectRefused {
    /// The target is on another origin.
    #[error(
        "the server redirected to another origin; promptwire does not send the provider's headers \
         (API key, configured headers, query parameters) to another host — point the base URL \
         there if you trust it: {to}"
    )]
    CrossOrigin {
        /// The target, credentials redacted.
        to: String,
    },
    /// Too many redirects.
    #[error("more than {MAX_REDIRECTS} redirects; the last to {to}")]
    TooMany {
        /// The last target, credentials redacted.
        to: String,
    },
}

fn same_origin(a: &Url, b: &Url) -> bool {
    a.scheme() == b.scheme()
        && a.host_str() == b.host_str()
        && a.port_or_known_default() == b.port_or_known_default()
}

/// The policy for [`super::HttpSender`]'s client.
pub fn policy() -> Policy {
    Policy::custom(|attempt: Attempt<'_>| {
        let to = attempt.url().clone();
        let Some(first) = attempt.previous().first() else {
            return attempt.follow();
        };
        if !same_origin(first, &to) {
            let to = redact_url(to.as_str());
            return attempt.error(RedirectRefused::CrossOrigin { to });
        }
        if attempt.previous().len() > MAX_REDIRECTS {
            let to = redact_url(to.as_str());
            return attempt.error(RedirectRefused::TooMany { to });
        }
        attempt.follow()
    })
}

/// The refusal inside a reqwest error, if that is what stopped it.
pub fn refusal(err: &reqwest::Error) -> Option<RedirectRefused> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(inner) = source {
        if let Some(refused) = inner.downcast_ref::<RedirectRefused>() {
            return Some(refused.clone());
        }
        source = inner.source();
    }
    None
}
