//! The one adapter from a stored session to the cache-prefix analysis's input: the session's
//! content-addressed parts ([`Store::session_parts`]) pushed onto a [`Session`] — each distinct
//! item parsed and interned once, each request pushed as its fields plus item ids (or its
//! verbatim body when the parts would not rebuild it), with its recorded usage (the server's
//! `cached_tokens`) and timing, its response id, and — for a response a later request continues
//! with `previous_response_id` — its output items, so the analysis sees the whole prompt the
//! server sees (Codex over WebSocket). The Sessions view and `promptwire diff --session` both
//! read a stored session through it, so they analyse the same input.

use std::collections::HashMap;

use serde_json::Value;

use super::summary::{SessionParts, usage_tokens};
use super::{Store, StoreError};
use crate::core::json::JsonMap;
use crate::core::prefix::{RequestMeta, Session};
use crate::core::stream::{PromptCacheDiagnostics, UsageCounts};

/// Why a stored session could not become the analysis's input.
#[derive(Debug, thiserror::Error)]
pub enum PrefixInputError {
    /// The store could not be read.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The session has no requests.
    #[error("session {0} has no requests")]
    Empty(i64),
    /// A stored part does not parse, is missing, or is not a request the analysis accepts.
    #[error("session {session}, {what}: {message}")]
    Part {
        /// Session id.
        session: i64,
        /// Which part (`request 3`, `item 17`, `fields 2`).
        what: String,
        /// What is wrong.
        message: String,
    },
}

/// Reads stored session `id` and pushes its requests onto `session` (see [`push_parts`]).
pub fn push_stored_session(
    session: &mut Session,
    store: &Store,
    id: i64,
) -> Result<(), PrefixInputError> {
    let parts = store.session_parts(id)?;
    push_parts(session, id, parts)
}

/// Pushes the requests of stored session `id`, given as its parts, onto `session`: each with
/// its recorded `cached_tokens` and its sent and finished times.
pub fn push_parts(
    session: &mut Session,
    id: i64,
    parts: SessionParts,
) -> Result<(), PrefixInputError> {
    if parts.requests.is_empty() {
        return Err(PrefixInputError::Empty(id));
    }
    let part_error = |what: String, message: String| PrefixInputError::Part {
        session: id,
        what,
        message,
    };
    let parse = |json: &str, what: String| {
        serde_json::from_str::<Value>(json)
            .map_err(|e| part_error(what, format!("stored JSON does not parse: {e}")))
    };
    let mut ids = HashMap::with_capacity(parts.items.len());
    for (item, json) in parts.items {
        let value = parse(&json, format!("item {item}"))?;
        ids.insert(item, session.intern_item_owned(value));
    }
    let mut heads: HashMap<i64, JsonMap> = HashMap::new();
    for (fields, json) in parts.fields {
        match parse(&json, format!("fields {fields}"))? {
            Value::Object(map) => {
                heads.insert(fields, map);
            }
            _ => {
                return Err(part_error(
                    format!("fields {fields}"),
                    "not a JSON object".to_string(),
                ));
            }
        }
    }
    let mut outputs = parts.outputs;
    for (position, request) in parts.requests.iter().enumerate() {
        let fail = |message: String| part_error(format!("request {position}"), message);
        let mut meta = request_meta(request.usage.as_ref(), request.started_us, request.total_us);
        meta.response_id.clone_from(&request.response_id);
        meta.not_recorded.clone_from(&request.not_recorded);
        for json in outputs.remove(&request.id).unwrap_or_default() {
            let item = parse(&json, format!("output of request {position}"))?;
            meta.output.push(session.intern_item_owned(item));
        }
        let pushed = match (&request.verbatim, request.fields_id) {
            (Some(bytes), _) => {
                let body: Value = serde_json::from_slice(bytes)
                    .map_err(|e| fail(format!("the stored body is not JSON: {e}")))?;
                session.push_body_owned(body, meta)
            }
            (None, Some(fields)) => {
                let head = heads
                    .get(&fields)
                    .ok_or_else(|| fail(format!("missing fields {fields}")))?;
                let input = request
                    .items
                    .iter()
                    .map(|item| {
                        ids.get(item)
                            .copied()
                            .ok_or_else(|| fail(format!("missing item {item}")))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                session.push_parts(head, &input, meta)
            }
            (None, None) => return Err(fail("the stored body is not JSON".to_string())),
        };
        pushed.map_err(|e| fail(e.to_string()))?;
    }
    Ok(())
}

/// A stored request's analysis metadata: the server's `cached_tokens`, `cache_write_tokens` and
/// `input_tokens` from its recorded usage (any wire shape), when it was sent, and when its response finished.
fn request_meta(
    usage: Option<&Value>,
    started_us: Option<i64>,
    total_us: Option<i64>,
) -> RequestMeta {
    let sent_at_ms = started_us.map(|us| us / 1000);
    let counts = usage.and_then(UsageCounts::from_value);
    let count = |n: Option<i64>| n.and_then(|n| u64::try_from(n).ok());
    RequestMeta {
        reported_cached_tokens: usage.and_then(|usage| usage_tokens(usage).1),
        reported_cache_write_tokens: counts.and_then(|c| count(c.cache_write_input_tokens)),
        reported_input_tokens: counts.and_then(|c| count(c.input_tokens)),
        sent_at_ms,
        finished_at_ms: sent_at_ms
            .zip(total_us)
            .map(|(ms, total)| ms + total / 1000),
        diagnostics: usage
            .and_then(|u| u.get("prompt_cache_diagnostics"))
            .and_then(PromptCacheDiagnostics::from_value),
        ..RequestMeta::default()
    }
}
