//! The stored responses that later requests of a session continue: a request naming an earlier
//! response in `previous_response_id` (Codex over WebSocket, SDK continuations) stands for that
//! response's whole prompt and output, so [`Store::session_parts`] also gives the output items
//! of every response so named — read from its recorded events
//! ([`crate::core::stream::output_items::output_items`]), only for those responses, so a
//! session of whole-body requests reads no events at all.

use std::collections::HashSet;

use serde::Deserialize;

use super::summary::SessionParts;
use super::{Store, StoreResult, event_chunks};
use crate::core::stream::output_items::output_items;

/// The one field read from a head to find continuations (serde skips the rest).
#[derive(Deserialize)]
struct Named {
    previous_response_id: Option<String>,
}

impl Store {
    /// Fills `parts.outputs` for the responses later requests of `parts` continue.
    pub(super) fn load_continued_outputs(&self, parts: &mut SessionParts) -> StoreResult<()> {
        let mut named: HashSet<String> = HashSet::new();
        let mut heads_seen: HashSet<i64> = HashSet::new();
        for request in &parts.requests {
            let found = match (&request.verbatim, request.fields_id) {
                (Some(bytes), _) => serde_json::from_slice::<Named>(bytes).ok(),
                (None, Some(fields)) if heads_seen.insert(fields) => parts
                    .fields
                    .get(&fields)
                    .and_then(|json| serde_json::from_str::<Named>(json).ok()),
                _ => None,
            };
            if let Some(id) = found.and_then(|n| n.previous_response_id) {
                named.insert(id);
            }
        }
        if named.is_empty() {
            return Ok(());
        }
        for request in &parts.requests {
            let Some(id) = &request.response_id else {
                continue;
            };
            if !named.contains(id) {
                continue;
            }
            let events = event_chunks::page(&self.conn, request.id, 0, u64::MAX)?;
            let items = output_items(&events)
                .into_iter()
                .map(|item| item.to_string())
                .collect();
            parts.outputs.insert(request.id, items);
        }
        Ok(())
    }
}
