//! The class of a failed turn as one type: every class a stream error ([`super::StreamError`]),
//! an HTTP error ([`super::HttpError`]) or a send ends with, and the interruptions (`cancelled`,
//! `interrupted`). Text only at the edges: [`ErrorClass::as_str`] is the name stored in the
//! database and printed in machine-readable output, [`str::parse`] reads it back, and a name
//! this build does not know (an older or newer database's) is kept as [`ErrorClass::Unknown`].

use std::convert::Infallible;
use std::fmt;
use std::str::FromStr;

/// Why a turn failed, by class (the name is [`ErrorClass::as_str`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ErrorClass {
    /// `context_window_exceeded`.
    ContextWindowExceeded,
    /// `quota_exceeded`.
    QuotaExceeded,
    /// `usage_not_included`.
    UsageNotIncluded,
    /// `cyber_policy`.
    CyberPolicy,
    /// `invalid_request`.
    InvalidRequest,
    /// `server_overloaded`.
    ServerOverloaded,
    /// `retryable`.
    Retryable,
    /// `stream`: the stream ended without completing, or the connection failed.
    Stream,
    /// `limit_exceeded`: a limit the reader sets.
    LimitExceeded,
    /// `invalid_image_request`.
    InvalidImageRequest,
    /// `internal_server_error`.
    InternalServerError,
    /// `usage_limit_reached`.
    UsageLimitReached,
    /// `retry_limit`.
    RetryLimit,
    /// `unexpected_status`.
    UnexpectedStatus,
    /// `request_timeout`.
    RequestTimeout,
    /// `redirect_refused`.
    RedirectRefused,
    /// `content_encoding`: the answer's `Content-Encoding` could not be decoded for the
    /// recording (an encoding not supported, or bytes that do not decode).
    ContentEncoding,
    /// `cancelled`: the send's cancel token, or the proxy's client went away.
    Cancelled,
    /// `interrupted`: a signal.
    Interrupted,
    /// A stored name this build does not know, kept as it was.
    Unknown(String),
}

impl ErrorClass {
    /// Every known class (not [`ErrorClass::Unknown`]), in declaration order.
    pub const KNOWN: [Self; 19] = [
        Self::ContextWindowExceeded,
        Self::QuotaExceeded,
        Self::UsageNotIncluded,
        Self::CyberPolicy,
        Self::InvalidRequest,
        Self::ServerOverloaded,
        Self::Retryable,
        Self::Stream,
        Self::LimitExceeded,
        Self::InvalidImageRequest,
        Self::InternalServerError,
        Self::UsageLimitReached,
        Self::RetryLimit,
        Self::UnexpectedStatus,
        Self::RequestTimeout,
        Self::RedirectRefused,
        Self::ContentEncoding,
        Self::Cancelled,
        Self::Interrupted,
    ];

    /// The name stored and printed (`context_window_exceeded`, `retryable`, …).
    pub fn as_str(&self) -> &str {
        match self {
            Self::ContextWindowExceeded => "context_window_exceeded",
            Self::QuotaExceeded => "quota_exceeded",
            Self::UsageNotIncluded => "usage_not_included",
            Self::CyberPolicy => "cyber_policy",
            Self::InvalidRequest => "invalid_request",
            Self::ServerOverloaded => "server_overloaded",
            Self::Retryable => "retryable",
            Self::Stream => "stream",
            Self::LimitExceeded => "limit_exceeded",
            Self::InvalidImageRequest => "invalid_image_request",
            Self::InternalServerError => "internal_server_error",
            Self::UsageLimitReached => "usage_limit_reached",
            Self::RetryLimit => "retry_limit",
            Self::UnexpectedStatus => "unexpected_status",
            Self::RequestTimeout => "request_timeout",
            Self::RedirectRefused => "redirect_refused",
            Self::ContentEncoding => "content_encoding",
            Self::Cancelled => "cancelled",
            Self::Interrupted => "interrupted",
            Self::Unknown(name) => name,
        }
    }

    /// True for a request stopped on purpose ([`ErrorClass::Cancelled`],
    /// [`ErrorClass::Interrupted`]), which is not a stream failure.
    pub fn is_interruption(&self) -> bool {
        matches!(self, Self::Cancelled | Self::Interrupted)
    }
}

impl FromStr for ErrorClass {
    type Err = Infallible;

    /// The class named `name`; [`ErrorClass::Unknown`] for a name this build does not know.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Ok(Self::KNOWN
            .iter()
            .find(|class| class.as_str() == name)
            .cloned()
            .unwrap_or_else(|| Self::Unknown(name.to_string())))
    }
}

impl fmt::Display for ErrorClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for ErrorClass {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for ErrorClass {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        let Ok(class) = name.parse();
        Ok(class)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn every_known_class_round_trips_through_its_name() {
        for class in ErrorClass::KNOWN {
            let Ok(parsed) = class.as_str().parse::<ErrorClass>();
            assert_eq!(parsed, class);
        }
    }

    #[test]
    fn an_unknown_name_is_kept_as_unknown() {
        let Ok(parsed) = "http".parse::<ErrorClass>();
        assert_eq!(parsed, ErrorClass::Unknown("http".to_string()));
        assert_eq!(parsed.as_str(), "http");
    }
}
