//! The app layer's errors, typed up to the UI's edge: the jobs return [`AppError`] and the
//! events carry it; it becomes text once, where the app stores it for a panel to show (a status
//! line, an error line), through its one `Display` per kind — so Send and Re-send, or the
//! sessions list and the inspector, word the same error the same way.

use std::path::PathBuf;

use crate::store::StoreError;
use crate::transport::PrepareError;

/// What went wrong in the app layer.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// The API key's environment variable is unset or empty: nothing was sent.
    #[error(
        "the API key variable {env} is not set — set {env} in the environment the app runs in (nothing was sent)"
    )]
    MissingApiKey {
        /// The variable's name.
        env: String,
    },
    /// A request could not be prepared (a header, the URL, the HTTP client).
    #[error(transparent)]
    Prepare(PrepareError),
    /// The session database could not be opened, read or written.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// No session database is open.
    #[error("no session database is open")]
    NoDatabase,
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A worker thread or the network runtime could not be started, or a worker failed.
    #[error("{0}")]
    Worker(String),
    /// A stored request body is not what the action needs (not JSON, not an object).
    #[error("request {request}: {what}")]
    StoredBody {
        /// The request.
        request: i64,
        /// What it is not.
        what: &'static str,
    },
    /// A recording proxy or replay endpoint could not start.
    #[error(transparent)]
    Server(#[from] crate::transport::proxy::ServerError),
    /// The upstream CA file cannot be used.
    #[error("upstream CA file: {0}")]
    UpstreamCa(#[from] crate::transport::tls::CaError),
    /// JSON could not be written.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// "Ask the server why" needs the previous request's response, and there is none.
    #[error(
        "Ask the server why: the request before this one has no recorded response id (nothing was sent)"
    )]
    NoPreviousResponse,
    /// What another layer reported as text (the analysis, the compiler, body import, the
    /// recording): shown as it says.
    #[error("{0}")]
    Reported(String),
}

impl From<PrepareError> for AppError {
    fn from(e: PrepareError) -> Self {
        match e {
            PrepareError::MissingApiKey { env } => Self::MissingApiKey { env },
            other => Self::Prepare(other),
        }
    }
}

/// The app layer's results.
pub type AppResult<T> = Result<T, AppError>;

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn a_missing_key_reads_the_same_whoever_asks() {
        let from_prepare = AppError::from(PrepareError::MissingApiKey {
            env: "OPENAI_API_KEY".to_string(),
        });
        assert_eq!(
            from_prepare.to_string(),
            "the API key variable OPENAI_API_KEY is not set — set OPENAI_API_KEY in the environment the app runs in (nothing was sent)"
        );
        assert!(matches!(from_prepare, AppError::MissingApiKey { .. }));
    }
}
