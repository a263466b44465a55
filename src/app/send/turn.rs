//! Continue (the agent turn loop in the app): after a completed response, the next request is
//! built with [`crate::core::turn_loop::next_prompt`] from the Prompt that was sent and the
//! response — the previous input, the response's output items as they arrived, one output per
//! tool call (the text the user typed, prefilled with
//! [`PLACEHOLDER_OUTPUT`](crate::core::turn_loop::PLACEHOLDER_OUTPUT)) and optionally a new user
//! message — and loaded into the form. Once the form has compiled it, a worker thread checks that
//! the new body begins with the sent one ([`prefix_check`]); the verdict (kept, or where and why
//! it broke) shows in the send bar. Sending it appends to the same session, which is the one
//! open in the sidebar since the first send was recorded. Item ids of the outputs and message
//! are left out (Codex 0.169 makes them from the clock; the app does not invent them).

use std::sync::Arc;

use super::{SendReport, SendUpdate};
use crate::app::event::AppEvent;
use crate::app::state::AppState;
use crate::core::compile::CompiledRequest;
use crate::core::prefix::{PairReport, Tokenizer};
use crate::core::turn_loop::{CallOutput, Continuation, UserMessage, next_prompt, prefix_check};

/// The request loaded by Continue and its prefix verdict.
#[derive(Debug, Clone)]
pub struct Continued {
    /// The request it continues (the one sent last).
    pub from: Arc<CompiledRequest>,
    /// The prompt revision Continue loaded.
    pub revision: u64,
    /// Items added after the previous input.
    pub added: usize,
    /// The prefix check was started.
    pub checking: bool,
    /// The verdict: the pair report, or why it could not be computed.
    pub prefix: Option<Result<PairReport, String>>,
}

/// Builds the next request from the last send's outcome and loads it into the form.
/// `outputs`: (call id, output text) per pending call; `user`: a new user message.
pub fn continue_turn(state: &mut AppState, outputs: Vec<(String, String)>, user: Option<String>) {
    let send = &state.send;
    let (Some(prompt), Some(from), Some(outcome)) = (
        send.sent_prompt.clone(),
        send.sent.clone(),
        send.timeline.outcome(),
    ) else {
        state.set_status("Continue: send a request first", true);
        return;
    };
    let continuation = Continuation {
        outputs: outputs
            .into_iter()
            .map(|(call_id, output)| CallOutput {
                call_id,
                output,
                id: None,
            })
            .collect(),
        user_message: user
            .filter(|text| !text.trim().is_empty())
            .map(|text| UserMessage { text, id: None }),
        client_metadata: None,
    };
    match next_prompt(&prompt, outcome, &continuation) {
        Ok(next) => {
            let added = next.input.len().saturating_sub(prompt.input.len());
            let source = state.source.clone();
            state.replace_prompt(next, source);
            state.send.continued = Some(Continued {
                from,
                revision: state.revision,
                added,
                checking: false,
                prefix: None,
            });
            state.send.error = None;
            state.set_status(
                format!("Continue: the next request ({added} items added) is in the form; Send it"),
                false,
            );
        }
        Err(e) => {
            state.send.error = Some(format!("Continue: {e}"));
            state.set_status(format!("Continue: {e}"), true);
        }
    }
}

/// Once the form has compiled the continued prompt, checks its prefix on a worker thread.
/// Called after every poll; cheap when there is nothing to do.
pub fn check_prefix(state: &mut AppState) {
    let Some(continued) = &state.send.continued else {
        return;
    };
    if continued.checking || state.revision != continued.revision || !state.views_are_current() {
        return;
    }
    let Some(view) = state.views.get(state.send.target) else {
        return;
    };
    let (from, next) = (Arc::clone(&continued.from), Arc::clone(&view.compiled));
    let generation = state.send.generation;
    let revision = continued.revision;
    if let Some(continued) = state.send.continued.as_mut() {
        continued.checking = true;
    }
    let spawned = state.workers.spawn("prefix-check", move |ctx| {
        let result =
            prefix_check(&from.body, &next.body, Tokenizer::o200k()).map_err(|e| e.to_string());
        ctx.report(AppEvent::Send(SendReport {
            generation,
            update: SendUpdate::Prefix { revision, result },
        }));
    });
    if let Err(e) = spawned {
        state.set_status(format!("prefix check: {e}"), true);
    }
}

/// Stores a prefix verdict (when it is for the prompt still loaded).
pub fn apply_prefix(state: &mut AppState, revision: u64, result: Result<PairReport, String>) {
    if let Some(continued) = state.send.continued.as_mut()
        && continued.revision == revision
    {
        continued.prefix = Some(result);
    }
}

/// The verdict in one line: kept (with the reusable tokens), or where it broke and why.
pub fn verdict_text(report: &PairReport) -> String {
    if report.prefix_kept {
        return format!(
            "prefix kept: the new request begins with the sent one ({} of {} tokens reusable)",
            report.reusable_tokens, report.to_tokens
        );
    }
    let name = |v: serde_json::Result<serde_json::Value>| {
        v.ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
    };
    let at = report.break_at.as_ref().map_or_else(String::new, |b| {
        b.path
            .clone()
            .unwrap_or_else(|| name(serde_json::to_value(b.at)))
    });
    let causes: Vec<String> = report
        .causes
        .iter()
        .map(|c| name(serde_json::to_value(c)))
        .collect();
    format!("prefix broken at {at}: {}", causes.join(", "))
}
