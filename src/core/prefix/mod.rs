//! Cache-prefix analysis across the requests of a session (DESIGN.md "Prompt order used for
//! prefix analysis", WIRE_SPEC §19): for each pair of requests, whether the later one's prompt
//! starts with the earlier one's, where it broke, why, and what that cost. Pure: no I/O, no clock
//! (timestamps come in with the requests).
//!
//! # Prompt order
//!
//! A request is read as a sequence of *elements* in the order the server renders it:
//!
//! 1. `model` — the model slug;
//! 2. `reasoning`;
//! 3. `text` — `text` (verbosity, output format) and any other top-level field the analysis does
//!    not know to stay outside the rendering (e.g. `truncation`, `previous_response_id`), each its
//!    own element, by key name;
//! 4. `tools` — the tool list (standard: top-level `tools`; Lite: the `additional_tools` item at
//!    `input[0]`), then `parallel_tool_calls` and `tool_choice`;
//! 5. `instructions` — standard: top-level `instructions`, or (Codex 0.169+, no top-level
//!    `instructions`) the developer message at `input[0]`; Lite: the developer message at
//!    `input[1]` that carries the base instructions;
//! 6. `input[k]` — every other input item, one element each.
//!
//! Fields outside the rendering never take part in the verdict: `client_metadata`, `stream`,
//! `store`, `include`, `prompt_cache_key` (a warning: it changes routing), `prompt_cache_retention`,
//! `prompt_cache_options`, `service_tier`, `metadata`, `user`, `safety_identifier`,
//! `stream_options`, `background`, `max_output_tokens`, `temperature`, `top_p`, `top_logprobs`.
//!
//! Elements are compared as they are sent — key order inside an element counts, because the
//! server renders what it receives in the order it receives it (a tool schema whose keys were
//! reordered is another prompt) — through a 128-bit hash computed once per element
//! ([`canon::digest`]). Only `client_metadata`, which is not part of the prompt, is compared as a
//! map. A session interns every distinct element once in an [`ElementPool`]; a request is then a
//! short list of element ids, so comparing two requests compares integers and never
//! re-serializes anything.
//!
//! The break points at the first differing field that carries content (the instruction text,
//! not the `id` derived from it) and lists the derived fields that changed with it. A compaction
//! request is recognized and named as the `compaction_request` cause.
//!
//! # What is counted
//!
//! The *rendering* whose bytes and tokens are counted is the compact JSON of each element as sent
//! (no whitespace; the model slug and the instructions as JSON strings), tokenized with
//! o200k_base ([`Tokenizer`]) one element at a time and summed. It is an
//! estimate of the server's own rendering (which wraps items in role markers and counts the
//! system message its own way), good for comparing requests with each other; reported
//! `cached_tokens` are shown beside it, never mixed into it.
//!
//! The reusable prefix of a pair is the sum over the elements, in prompt order, before the first
//! difference: a break inside an item counts that whole item as lost (the server may still reuse
//! the tokens of the item before the changed point, in 128-token steps).
//!
//! # Vocabulary
//!
//! Causes ([`Cause`]) and warnings ([`Warning`]) use a fixed vocabulary, serialized in
//! `snake_case`: see their variants. Each has an `explanation()` and, where Codex has one, a
//! `fix()`.

pub mod canon;
pub mod compare;
pub mod concern;
pub mod conversation;
pub mod cost;
mod explain;
pub mod growth;
pub mod pair_diff;
pub mod pool;
pub mod session;
pub mod shape;
pub mod tokens;

pub use canon::ChangeKind;
pub use compare::{Break, BreakAt, Cause, PairReport, Warning};
pub use concern::{Concern, missed_cacheable_tokens, server_missed};
pub use conversation::Continuation;
pub use cost::{CacheCost, ModelPrice, PriceTable};
pub use growth::GrowthPoint;
pub use pair_diff::{DiffRow, LineChange, PairDiff, RowKind};
pub use pool::{Element, ElementId, ElementPool};
pub use session::{RequestMeta, Session, SessionReport, SessionSummary};
pub use shape::{Dialect, RequestShape};
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
