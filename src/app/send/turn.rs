//! Continue (the agent turn loop in the app): after a completed response, the next request is
//! built with [`crate::core::turn_loop::next_prompt`] from the Prompt that was sent and the
//! response — the previous input, the response's output items as they arrived, one output per
//! tool call (the text the user typed, prefilled with
//! [`PLACEHOLDER_OUTPUT`](crate::core::turn_loop::PLACEHOLDER_OUTPUT)) and optionally a new user
//! message — and loaded into the form. Once the form has compiled it, a worker thread checks that
//! the new body begins with the sent one ([`prefix_check`]); the verdict (kept, or where and why
//! it broke) shows in the send bar. Sending it appends to the same session, which is where Send
//! records since the first send was recorded (`SendState::into`). The outputs and the message get the
//! `fco_`/`msg_` uuid-v7 ids Codex 0.169 gives them, made here (the edge) and passed into core
//! through [`Continuation::answering`], the function the CLI uses too. The next request is an
//! untitled unsaved document, one undo step after the prompt sent; unsaved edits made since Send
//! go through the unsaved-changes dialog first.

use std::sync::Arc;

use super::{SendCommand, SendReport, SendUpdate};
use crate::app::command::AppCommand;
use crate::app::event::AppEvent;
use crate::app::state::{AppState, Dialog, PendingAction, UNDO_LIMIT};
use crate::core::compile::CompiledRequest;
use crate::core::ledger::PairVerdict;
use crate::core::prefix::Tokenizer;
use crate::core::prompt::Prompt;
use crate::core::turn_loop::{Continuation, next_prompt, prefix_check};

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
    pub prefix: Option<Result<PairVerdict, String>>,
}

/// Builds the next request from the last send's outcome and loads it into the form.
/// `outputs`: (call id, output text) per pending call; `user`: a new user message.
///
/// The next request is a new, unsaved document: it is not bound to the file the prompt came
/// from (Save asks where to save it), and loading it is one undo step (Undo brings back the
/// form as it was). Edits made since Send would be lost: when there are unsaved ones, the
/// unsaved-changes dialog asks first. The outputs and the message get Codex's `fco_`/`msg_` ids
/// ([`Continuation::answering`], as the CLI's `send --continue`).
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
    let user = user.filter(|text| !text.trim().is_empty());
    let edited_since_send = !Arc::ptr_eq(&state.prompt, &prompt);
    if edited_since_send && state.is_dirty() && !state.replace_confirmed {
        state.dialog = Some(Dialog::Unsaved {
            then: PendingAction::Run(Box::new(AppCommand::SendBar(SendCommand::Continue {
                outputs,
                user,
            }))),
        });
        state.dialog_generation += 1;
        return;
    }
    let continuation = Continuation::answering(outcome, outputs, user, uuid::Uuid::now_v7);
    match next_prompt(&prompt, outcome, &continuation) {
        Ok(next) => {
            let added = next.input.len().saturating_sub(prompt.input.len());
            load_untitled(state, next);
            state.send.continued = Some(Continued {
                from,
                revision: state.revision,
                added,
                checking: false,
                prefix: None,
            });
            state.send.error = None;
            state.set_status(
                format!(
                    "Continue: the next request ({added} items added) is in the form, unsaved; \
                     Send it (Undo brings back the previous form)"
                ),
                false,
            );
        }
        Err(e) => {
            state.send.error = Some(format!("Continue: {e}"));
            state.set_status(format!("Continue: {e}"), true);
        }
    }
}

/// Loads `next` as a new untitled, unsaved document, the current prompt one undo step back.
fn load_untitled(state: &mut AppState, next: Prompt) {
    state.history.undo.push(Arc::clone(&state.prompt));
    if state.history.undo.len() > UNDO_LIMIT {
        state.history.undo.remove(0);
    }
    state.history.redo.clear();
    state.history.last_field = None;
    state.prompt = Arc::new(next);
    state.saved = None;
    state.prompt_path = None;
    state.source = None;
    state.sessions.loaded_request = None;
    state.revision += 1;
    let items = state.prompt.input.len();
    state.selected_item = state.selected_item.filter(|&i| i < items);
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
    let generation = state.send.generation.current();
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
pub fn apply_prefix(state: &mut AppState, revision: u64, result: Result<PairVerdict, String>) {
    if let Some(continued) = state.send.continued.as_mut()
        && continued.revision == revision
    {
        continued.prefix = Some(result);
    }
}

/// The verdict in one line: kept (with the reusable tokens), or where it broke and why.
pub fn verdict_text(report: &PairVerdict) -> String {
    if report.prefix_kept {
        return format!(
            "prefix kept: the new request begins with the sent one ({} of {} tokens reusable)",
            report.reusable_tokens, report.to_tokens
        );
    }
    let at = report
        .divergence
        .as_ref()
        .map_or_else(String::new, |b| b.pointer.clone());
    if report.causes == [crate::core::ledger::Cause::ReasoningDropped] {
        return format!(
            "new turn: the server stops rendering the earlier reasoning at {at} (expected; {} of \
             {} tokens reusable)",
            report.reusable_tokens, report.to_tokens
        );
    }
    let causes: Vec<&str> = report.causes.iter().map(|c| c.as_str()).collect();
    format!("prefix broken at {at}: {}", causes.join(", "))
}
