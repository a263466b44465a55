//! Matching incoming requests to a recording, by content: the replay endpoint's one matcher,
//! over HTTP and WebSocket alike.
//!
//! Two sessions hold the recorded requests first (index = position in the recording), then each
//! incoming request as it arrives: `exact`, the bodies as sent, and `content`, the bodies
//! without what a client derives per thread or per run — the `id` of every input item (Codex
//! mints them from the thread, session and turn ids). Requests are compared on the rendered
//! prompt (`core::ledger::compare_pair`), where ids, `client_metadata` and key order never
//! count. Each analysis reads a request
//! that continues a response (`previous_response_id`, Codex over WebSocket) as its whole
//! prompt: the recorded requests with their recorded responses, an incoming one with the
//! recorded response it was served.
//!
//! An incoming request is matched to the recorded request that fits it best by content: the
//! one it shares the longest prompt prefix with, and among those the one closest in length
//! (a request equal to recorded #0 is #0, not #2 which extends it), the expected position
//! (after the last one matched) winning a tie. It must keep at least the minimum share
//! of the recorded prompt's tokens. A recorded request is never used up: the same recording
//! serves a second, a tenth identical client run with the same answers. The verdict names the
//! first differing *content* with the ledger's cause names (the server's vocabulary), or says
//! "same as recorded" — and when only item ids differ, that they are not rendered; an unmatched
//! request is told the closest recorded request and how it differs.

use serde_json::Value;

use crate::core::ledger::{Cause, Counting, PairVerdict, compare_pair};
use crate::core::prefix::{ElementId, RequestMeta, Session};
use crate::core::stream::output_items::output_items;
use crate::transport::replay::Recording;

/// A body with the `id` of every input item removed (a fresh run of the same client mints new
/// ones).
pub fn without_item_ids(body: &Value) -> Value {
    let mut body = body.clone();
    if let Some(items) = body.get_mut("input").and_then(Value::as_array_mut) {
        for item in items {
            if let Some(item) = item.as_object_mut() {
                item.shift_remove("id");
            }
        }
    }
    body
}

/// Which recorded request an incoming one was matched to, and how it differs.
#[derive(Debug, Clone)]
pub struct Matched {
    /// Index of the recorded request in the recording.
    pub recorded: usize,
    /// Share of the recorded prompt's tokens the incoming one keeps, by content.
    pub similarity: f64,
    /// The comparison of the bodies as sent.
    pub exact: PairVerdict,
    /// The comparison by content.
    pub content: PairVerdict,
    /// The verdict in words ([`verdict`]).
    pub verdict: String,
}

/// A recorded response: its id and its output items in each analysis's pool.
struct RecordedResponse {
    id: String,
    exact: Vec<ElementId>,
    content: Vec<ElementId>,
}

/// The matcher's state.
pub struct Matcher {
    exact: Session,
    content: Session,
    responses: Vec<Option<RecordedResponse>>,
    kinds: Vec<bool>,
    next: usize,
    recorded: usize,
    session: i64,
}

impl Matcher {
    /// The matcher of `recording` (every request pushed; an error names the one that cannot
    /// be read).
    pub fn new(recording: &Recording) -> Result<Self, String> {
        let mut exact = Session::default();
        let mut content = Session::default();
        let mut responses = Vec::with_capacity(recording.requests.len());
        for request in &recording.requests {
            let body = request.body.clone().unwrap_or(Value::Null);
            let response = request
                .outcome
                .as_ref()
                .and_then(|o| o.response_id.clone())
                .map(|id| {
                    let items = output_items(&request.events);
                    RecordedResponse {
                        id,
                        exact: items.iter().map(|i| exact.intern_item(i)).collect(),
                        content: items.iter().map(|i| content.intern_item(i)).collect(),
                    }
                });
            let meta = |output: &[ElementId]| RequestMeta {
                response_id: response.as_ref().map(|r| r.id.clone()),
                output: output.to_vec(),
                ..RequestMeta::default()
            };
            let none: &[ElementId] = &[];
            let pushed = exact
                .push_body(&body, meta(response.as_ref().map_or(none, |r| &r.exact)))
                .and_then(|_| {
                    content.push_body(
                        &without_item_ids(&body),
                        meta(response.as_ref().map_or(none, |r| &r.content)),
                    )
                });
            pushed.map_err(|e| {
                format!(
                    "session {}, request {}: {e}",
                    recording.session_id, request.position
                )
            })?;
            responses.push(response);
        }
        Ok(Self {
            exact,
            content,
            kinds: recording
                .requests
                .iter()
                .map(|r| r.url.ends_with("/compact"))
                .collect(),
            recorded: responses.len(),
            responses,
            next: 0,
            session: recording.session_id,
        })
    }

    /// The recorded request an incoming `body` stands for (a `compact` request only matches
    /// a recorded compaction), or why there is none.
    pub fn match_request(
        &mut self,
        body: &Value,
        compact: bool,
        min_similarity: f64,
    ) -> Result<Matched, String> {
        let incoming = self
            .exact
            .push_body(body, RequestMeta::default())
            .and_then(|_| {
                self.content
                    .push_body(&without_item_ids(body), RequestMeta::default())
            })
            .map_err(|e| format!("the request cannot be compared: {e}"))?;
        let fits = |i: usize| self.kinds[i] == compact;
        let counting = Counting::default();
        let next = self.next;
        // Best first: the longer prefix kept, then the nearer length, then the expected one.
        let rank = |i: usize, report: &PairVerdict| {
            (
                report.reusable_tokens,
                std::cmp::Reverse(report.to_tokens.abs_diff(report.from_tokens)),
                i == next,
            )
        };
        let mut best: Option<(usize, f64, PairVerdict)> = None;
        for i in (0..self.recorded).filter(|&i| fits(i)) {
            let report = compare_pair(&self.content, &counting, i, incoming);
            let better = best
                .as_ref()
                .is_none_or(|(b, _, best_report)| rank(i, &report) > rank(*b, best_report));
            if better {
                best = Some((i, similarity(&report), report));
            }
        }
        let position = incoming - self.recorded;
        match best {
            Some((i, s, content)) if s >= min_similarity => {
                self.next = i + 1;
                let exact = compare_pair(&self.exact, &counting, i, incoming);
                let ids_differ = {
                    let ids = |k: usize| -> Vec<ElementId> {
                        self.exact.requests()[k].shape.elements().collect()
                    };
                    ids(i) != ids(incoming)
                };
                if let Some(response) = &self.responses[i] {
                    self.exact
                        .set_response(incoming, response.id.clone(), response.exact.clone());
                    self.content.set_response(
                        incoming,
                        response.id.clone(),
                        response.content.clone(),
                    );
                }
                let verdict = verdict(&content, ids_differ);
                Ok(Matched {
                    recorded: i,
                    similarity: s,
                    exact,
                    content,
                    verdict,
                })
            }
            Some((i, s, content)) => Err(format!(
                "request {position} matches no recorded request of session {} (closest: recorded #{i}, {}; similarity {s:.2} < {min_similarity:.2})",
                self.session,
                verdict(&content, false)
            )),
            None => Err(format!(
                "request {position} matches no recorded request of session {}: it has no recorded {}",
                self.session,
                if compact {
                    "compaction"
                } else {
                    "request other than compactions"
                }
            )),
        }
    }
}

/// Share of the earlier prompt's tokens the later one keeps.
fn similarity(report: &PairVerdict) -> f64 {
    if report.from_tokens == 0 {
        return if report.prefix_kept { 1.0 } else { 0.0 };
    }
    report.reusable_tokens as f64 / report.from_tokens as f64
}

/// The verdict of a match in words: "same as recorded" (and, when the bodies differ only in
/// item ids, that those are not rendered), how much longer the incoming prompt is, or where its
/// content first differs and why.
pub fn verdict(content: &PairVerdict, ids_differ: bool) -> String {
    let Some(at) = &content.divergence else {
        let mut text = if content.to_tokens > content.from_tokens {
            format!(
                "extends the recorded prompt by {} tokens",
                content.to_tokens - content.from_tokens
            )
        } else {
            "same as recorded".to_string()
        };
        if ids_differ {
            text.push_str(" (new item ids: not part of the rendered prompt)");
        }
        return text;
    };
    let mut text = format!("differs from recorded at {}", at.pointer);
    // What differs in content: a new run's cache key or tier routes it, and says nothing of it.
    let causes: Vec<&str> = content
        .causes
        .iter()
        .filter(|c| !matches!(c, Cause::PromptCacheKeyChanged | Cause::ServiceTierChanged))
        .map(|c| c.as_str())
        .collect();
    if !causes.is_empty() {
        text.push_str(&format!(" ({})", causes.join(", ")));
    }
    text
}
