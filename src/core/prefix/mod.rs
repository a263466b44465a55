//! Requests as the ledger and the structural diff read them (the cache figures themselves are
//! `core::ledger`'s). Pure: no I/O, no clock (timestamps come in with the requests).
//!
//! - [`Session`] — a session's requests pushed one at a time (whole bodies, or a head plus ids
//!   of items interned once in an [`ElementPool`], as the content-addressed store holds them),
//!   each with its recorded usage, times and response id. A request that continues an earlier
//!   response (`previous_response_id`, Codex over WebSocket) is read as the whole prompt the
//!   server sees ([`conversation`]); a `generate: false` warm-up is marked.
//! - [`RequestShape`] — a body split into the parts the prompt order names (model, reasoning,
//!   text settings, tools, instructions — standard or Lite — then the input items), plus the
//!   fields that route (`prompt_cache_key`, `service_tier`) and whether it is a compaction
//!   request.
//! - [`pair_diff`] — two requests aligned element by element for the Compare view (as sent:
//!   key order shows), and [`growth`] — bytes sent per request.
//! - [`Tokenizer`] — o200k_base counting, used by the ledger's rendered view.

pub mod canon;
pub mod conversation;
pub mod growth;
pub mod pair_diff;
pub mod pool;
pub mod session;
pub mod shape;
pub mod tokens;

pub use canon::ChangeKind;
pub use conversation::Continuation;
pub use growth::GrowthPoint;
pub use pair_diff::{DiffRow, LineChange, PairDiff, RowKind};
pub use pool::{Element, ElementId, ElementPool};
pub use session::{RequestMeta, Session};
pub use shape::{BreakAt, Dialect, RequestShape};
pub use tokens::Tokenizer;

/// A request or price table the analysis cannot use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PrefixError {
    /// The request body is not usable (path names the field: `model`, `input`, …).
    #[error("{path}: {message}")]
    InvalidBody {
        /// JSON path of the problem inside the body.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// An element id that does not belong to this session's pool.
    #[error("input[{index}]: element id {id} is not in this session")]
    UnknownElement {
        /// Position in the input list.
        index: usize,
        /// The unknown id.
        id: u32,
    },
    /// A request index outside the session.
    #[error("request {index} does not exist (the session has {len} requests)")]
    NoSuchRequest {
        /// The index asked for.
        index: usize,
        /// Number of requests in the session.
        len: usize,
    },
    /// A price table that cannot be parsed.
    #[error("price table: {0}")]
    Prices(String),
}
