//! A session as the ledger and the structural diff read it: requests pushed one at a time (whole
//! bodies, or a head plus ids of items interned once, as a content-addressed store holds them),
//! each with what is known besides its body (the server's usage, times, response id).
//!
//! A request that continues an earlier response (`previous_response_id`) is read as the whole
//! prompt the server sees ([`super::conversation`]); a `generate: false` warm-up is kept and shown
//! but is not a turn: the next turn is compared with the turn before it.
//!
//! Memory grows with the session's distinct elements plus two ids per item per request (its
//! prompt order and its whole input), never with copies of its bodies.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::Serialize;
use serde_json::Value;

use super::PrefixError;
use super::conversation::{Continuation, split_head};
use super::growth::{GrowthPoint, growth};
use super::pair_diff::{PairDiff, pair_diff};
use super::pool::{ElementId, ElementPool};
use super::shape::{RequestShape, body_sizes};
use super::tokens::Tokenizer;
use crate::core::json::{JsonMap, kind_of};
use crate::core::stream::PromptCacheDiagnostics;

/// What is known about a request besides its body.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RequestMeta {
    /// `usage.input_tokens_details.cached_tokens` of its response.
    pub reported_cached_tokens: Option<u64>,
    /// `usage.input_tokens_details.cache_write_tokens` of its response (rollouts:
    /// `cache_write_input_tokens`), when reported.
    pub reported_cache_write_tokens: Option<u64>,
    /// `usage.input_tokens` of its response (cached and written tokens are part of it).
    pub reported_input_tokens: Option<u64>,
    /// When it was sent, Unix milliseconds.
    pub sent_at_ms: Option<i64>,
    /// When its response finished, Unix milliseconds (the cache idles from here).
    pub finished_at_ms: Option<i64>,
    /// The id of its response, when recorded: what a later `previous_response_id` names.
    pub response_id: Option<String>,
    /// The output items of its response ([`Session::intern_item`]), when a later request may
    /// continue it.
    #[serde(skip)]
    pub output: Vec<ElementId>,
    /// The server's `prompt_cache_diagnostics` for it, when reported.
    #[serde(skip)]
    pub diagnostics: Option<PromptCacheDiagnostics>,
    /// Parts of the request the recording does not have (`tools`, `client_metadata`: a Codex
    /// rollout records neither).
    pub not_recorded: Vec<String>,
}

/// One request of the session.
#[derive(Debug, Clone)]
pub struct SessionRequest {
    /// Its prompt order.
    pub shape: RequestShape,
    /// What is known besides the body.
    pub meta: RequestMeta,
    /// Compact JSON bytes of its whole prompt (the body with every item of the conversation).
    pub bytes: u64,
    /// Compact JSON bytes of the body as sent (less than the whole prompt's for a continuation).
    pub sent_bytes: u64,
    /// How its whole prompt was found.
    pub continuation: Continuation,
    /// `generate: false`: a warm-up that fills the cache and makes no turn.
    pub warmup: bool,
    /// Its whole input, every item in order (what a continuation of its response starts with).
    whole_input: Vec<ElementId>,
}

/// Requests of one session, in order, over a shared element pool.
#[derive(Debug, Clone, Default)]
pub struct Session {
    pool: ElementPool,
    requests: Vec<SessionRequest>,
    /// Response id → the request it answered.
    responses: HashMap<String, usize>,
}

impl Session {
    /// An empty session counting tokens with `tokenizer`.
    pub fn new(tokenizer: Tokenizer) -> Self {
        Self {
            pool: ElementPool::new(tokenizer),
            requests: Vec::new(),
            responses: HashMap::new(),
        }
    }

    /// Adds a whole request body; returns its index. Each input item is hashed once here; only
    /// items not seen before are serialized.
    pub fn push_body(&mut self, body: &Value, meta: RequestMeta) -> Result<usize, PrefixError> {
        let Value::Object(head) = body else {
            return Err(PrefixError::InvalidBody {
                path: "$".to_string(),
                message: format!(
                    "a request body must be a JSON object, got {}",
                    kind_of(body)
                ),
            });
        };
        let input: Vec<ElementId> = match head.get("input") {
            Some(Value::Array(items)) => self.pool.intern_all(items),
            // A string input is one user message: one element.
            Some(text @ Value::String(_)) => vec![self.pool.intern(text)],
            Some(Value::Null) | None => Vec::new(),
            Some(other) => {
                return Err(PrefixError::InvalidBody {
                    path: "input".to_string(),
                    message: format!("input must be an array or a string, got {}", kind_of(other)),
                });
            }
        };
        self.push_parts(head, &input, meta)
    }

    /// [`Session::push_body`] taking the body: its input items move into the pool instead of
    /// being copied, so a large body is held once, not twice, while it is added.
    pub fn push_body_owned(
        &mut self,
        mut body: Value,
        meta: RequestMeta,
    ) -> Result<usize, PrefixError> {
        let items = match body.get_mut("input") {
            // The field stays in place (empty) so the body's key order and sizes are unchanged.
            Some(input @ Value::Array(_)) => std::mem::replace(input, Value::Array(Vec::new())),
            _ => return self.push_body(&body, meta),
        };
        let Value::Object(head) = &body else {
            return self.push_body(&body, meta);
        };
        let Value::Array(items) = items else {
            return self.push_body(&body, meta);
        };
        let input = self.pool.intern_all_owned(items);
        self.push_parts(head, &input, meta)
    }

    /// Interns one input item (for callers that hold items content-addressed): items that
    /// serialize identically (same keys in the same order) get the same id.
    pub fn intern_item(&mut self, item: &Value) -> ElementId {
        self.pool.intern(item)
    }

    /// Interns one input item, taking ownership.
    pub fn intern_item_owned(&mut self, item: Value) -> ElementId {
        self.pool.intern_owned(item)
    }

    /// Adds a request given as its body's top-level fields (`input` is ignored if present) and
    /// the ids of its input items; returns its index. A request naming a recorded response in
    /// `previous_response_id` gets the whole prompt the server sees ([`super::conversation`]).
    pub fn push_parts(
        &mut self,
        head: &JsonMap,
        input: &[ElementId],
        meta: RequestMeta,
    ) -> Result<usize, PrefixError> {
        let wire = split_head(head);
        let known = wire
            .previous_response_id
            .as_ref()
            .and_then(|id| self.responses.get(id).map(|&at| (id, at)));
        let (whole, continuation): (Cow<'_, [ElementId]>, _) =
            match (known, &wire.previous_response_id) {
                (Some((id, at)), _) => {
                    let earlier = &self.requests[at];
                    let mut whole = Vec::with_capacity(
                        earlier.whole_input.len() + earlier.meta.output.len() + input.len(),
                    );
                    whole.extend_from_slice(&earlier.whole_input);
                    whole.extend_from_slice(&earlier.meta.output);
                    whole.extend_from_slice(input);
                    let continuation = Continuation::Continues {
                        request: at,
                        previous_response_id: id.clone(),
                        sent_items: input.len(),
                    };
                    (Cow::Owned(whole), continuation)
                }
                (None, Some(id)) => (
                    Cow::Borrowed(input),
                    Continuation::Unrecorded {
                        previous_response_id: id.clone(),
                    },
                ),
                (None, None) => (Cow::Borrowed(input), Continuation::Whole),
            };
        for (index, id) in meta.output.iter().enumerate() {
            if !self.pool.contains(*id) {
                return Err(PrefixError::UnknownElement { index, id: id.0 });
            }
        }
        let shape = RequestShape::new(&wire.head, &whole, &mut self.pool)?;
        let bytes = shape.elements().map(|id| self.pool.bytes(id)).sum();
        let sent_bytes = match continuation {
            Continuation::Whole if matches!(wire.head, Cow::Borrowed(_)) => shape.body_bytes,
            _ => body_sizes(head, &shape.header, input, &self.pool).0,
        };
        let index = self.requests.len();
        if let Some(id) = &meta.response_id {
            self.responses.insert(id.clone(), index);
        }
        self.requests.push(SessionRequest {
            shape,
            meta,
            bytes,
            sent_bytes,
            continuation,
            warmup: wire.warmup,
            whole_input: whole.into_owned(),
        });
        Ok(index)
    }

    /// Records, after it was pushed, the response request `index` got: what a later
    /// `previous_response_id` naming `response_id` continues (`output` interned with
    /// [`Session::intern_item`]). For a replay, whose answers are known only once matched.
    pub fn set_response(&mut self, index: usize, response_id: String, output: Vec<ElementId>) {
        if let Some(request) = self.requests.get_mut(index) {
            self.responses.insert(response_id.clone(), index);
            request.meta.response_id = Some(response_id);
            request.meta.output = output;
        }
    }

    /// Number of requests.
    pub fn len(&self) -> usize {
        self.requests.len()
    }

    /// Whether the session has no request.
    pub fn is_empty(&self) -> bool {
        self.requests.is_empty()
    }

    /// The requests.
    pub fn requests(&self) -> &[SessionRequest] {
        &self.requests
    }

    /// The element pool.
    pub fn pool(&self) -> &ElementPool {
        &self.pool
    }

    fn request(&self, index: usize) -> Result<&SessionRequest, PrefixError> {
        self.requests.get(index).ok_or(PrefixError::NoSuchRequest {
            index,
            len: self.requests.len(),
        })
    }

    /// Bytes per request for the growth chart; `kept(i)` says whether request `i` kept the
    /// prefix of the request before it (the ledger's verdict).
    pub fn growth(&self, kept: impl Fn(usize) -> bool) -> Vec<GrowthPoint> {
        growth(&self.pool, &self.requests, kept)
    }

    /// Item-aligned diff of two requests, for the app.
    pub fn pair_diff(&self, from: usize, to: usize) -> Result<PairDiff, PrefixError> {
        let a = self.request(from)?;
        let b = self.request(to)?;
        Ok(pair_diff(&self.pool, from, &a.shape, to, &b.shape))
    }
}
