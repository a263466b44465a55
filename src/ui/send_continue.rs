//! The Continue strip of the send panel (the agent turn loop): after a completed response, one
//! output field per pending tool call (prefilled with the placeholder the user edits), a field
//! for a new user message, and Continue, which loads the next request into the form
//! (`app/send/turn.rs`); then the prefix verdict of that request against the one sent.

use std::collections::BTreeMap;

use egui::Ui;

use crate::app::send::SendCommand;
use crate::app::send::turn::verdict_text;
use crate::app::{AppCommand, AppState, CommandSender};
use crate::core::stream::TurnState;
use crate::core::turn_loop::{PLACEHOLDER_OUTPUT, pending_calls};

/// The Continue strip's text buffers, refilled for each new response.
#[derive(Debug, Default)]
pub struct ContinueUi {
    /// The send generation the buffers belong to.
    generation: u64,
    /// Output text per call id.
    outputs: BTreeMap<String, String>,
    /// A new user message.
    user: String,
    /// The Continue last applied (its prompt revision): the message field is cleared once per
    /// Continue.
    continued: Option<u64>,
}

/// Draws the strip in a room of fixed height (two or three rows, by the pane's height), there
/// from the first send on (scrolling when many calls need answers): the timeline under it never
/// moves when Continue appears.
pub fn continue_ui(ui: &mut Ui, state: &AppState, cui: &mut ContinueUi, tx: &CommandSender) {
    let row = ui.spacing().interact_size.y + ui.spacing().item_spacing.y;
    // Three rows in a roomy pane; two in a short one (1024×700), where the answer's events
    // need the height more: the room follows the pane, never the state, so nothing jumps.
    let rows = if ui.available_height() < 320.0 {
        2.0
    } else {
        3.0
    };
    egui::ScrollArea::vertical()
        .id_salt("continue_strip")
        .auto_shrink([false, false])
        .max_height(row * rows)
        .show(ui, |ui| {
            if !strip_ui(ui, state, cui, tx) {
                ui.weak(
                    "Next turn: once a response completes, its tool calls are answered here \
                     and Continue loads the next request.",
                );
            }
        });
}

/// The strip itself; false when there is nothing to continue (no completed response).
fn strip_ui(ui: &mut Ui, state: &AppState, cui: &mut ContinueUi, tx: &CommandSender) -> bool {
    let send = &state.send;
    if let Some(continued) = &send.continued
        && state.revision == continued.revision
    {
        let (text, error) = match &continued.prefix {
            None => ("prefix check: waiting for the compile…".to_string(), false),
            Some(Ok(report)) => (verdict_text(report), !report.prefix_kept),
            Some(Err(e)) => (format!("prefix check failed: {e}"), true),
        };
        if error {
            super::widgets::error_line(ui, &text);
        } else {
            ui.label(text);
        }
    }
    let Some(outcome) = send.timeline.outcome() else {
        return false;
    };
    if send.job.is_some() || !matches!(outcome.state, TurnState::Completed { .. }) {
        return false;
    }
    if cui.generation != send.generation.current() {
        *cui = ContinueUi {
            generation: send.generation.current(),
            continued: cui.continued,
            ..ContinueUi::default()
        };
    }
    // Continue went through (the next request is in the form): its message was used.
    let continued = send.continued.as_ref().map(|c| c.revision);
    if continued.is_some() && continued != cui.continued {
        cui.continued = continued;
        cui.user.clear();
    }
    let calls = pending_calls(outcome);
    for call in &calls {
        cui.outputs
            .entry(call.call_id.clone())
            .or_insert_with(|| PLACEHOLDER_OUTPUT.to_string());
    }
    // Continue is on the strip's first line: always in view in its small room.
    ui.horizontal_wrapped(|ui| {
        ui.strong("Next turn");
        ui.weak(format!(
            "{} to answer",
            super::widgets::count(calls.len() as u64, "tool call")
        ));
        let button = ui.button("Continue").on_hover_text(
            "Load the next request (previous input, the response's items, the outputs) into the \
             form",
        );
        if button.clicked() {
            let outputs = calls
                .iter()
                .map(|call| {
                    let text = cui.outputs.get(&call.call_id).cloned().unwrap_or_default();
                    (call.call_id.clone(), text)
                })
                .collect();
            let user = Some(cui.user.clone()).filter(|u| !u.trim().is_empty());
            tx.send(AppCommand::SendBar(SendCommand::Continue { outputs, user }));
        }
    });
    for call in &calls {
        let text = cui
            .outputs
            .entry(call.call_id.clone())
            .or_insert_with(|| PLACEHOLDER_OUTPUT.to_string());
        super::widgets::labelled_line(
            ui,
            &format!("output of {} {}", call.name, call.call_id),
            text,
            PLACEHOLDER_OUTPUT,
            &format!(
                "What the tool returned for {}({})",
                call.name, call.arguments
            ),
        );
    }
    super::widgets::labelled_line(
        ui,
        "new user message",
        &mut cui.user,
        "(optional)",
        "A user message appended after the tool outputs (a new turn)",
    );
    true
}
