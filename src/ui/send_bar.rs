//! Send in the workbench: the top bar's Send / Stop buttons, and the bottom panel that shows the
//! send's timeline — a bar (target column, what is running, where it was recorded, why a send
//! could not start), the Continue strip (`send_continue.rs`), then the shared timeline panel
//! ([`crate::ui::timeline`]). Keys: Ctrl+Enter sends, Esc stops (both in `ui/mod.rs`).

use egui::Ui;

use crate::app::send::SendCommand;
use crate::app::settings::ViewKind;
use crate::app::timeline::TimelineCommand;
use crate::app::{AppCommand, AppState, CommandSender};
use crate::core::redact::redact_url;
use crate::ui::timeline::{TimelinePanelState, timeline_ui};

/// The send panel's widget state.
#[derive(Debug, Default)]
pub struct SendUi {
    /// The timeline panel's state.
    pub timeline: TimelinePanelState,
    /// The Continue strip's buffers.
    pub next: super::send_continue::ContinueUi,
    /// The sidebar's extra-headers field.
    pub headers: super::provider_headers::HeadersBuffer,
}

/// The Send and Stop buttons (top bar).
pub fn send_buttons(ui: &mut Ui, state: &AppState, tx: &CommandSender) {
    let running = state.send.job.is_some();
    let send = ui
        .add_enabled(!running, egui::Button::new("Send"))
        .on_hover_text("Send the target column and watch the stream (Ctrl+Enter)");
    if send.clicked() {
        tx.send(AppCommand::Send);
    }
    let stop = ui
        .add_enabled(running, egui::Button::new("Stop"))
        .on_hover_text("Stop the send; the partial response is kept (Esc)");
    if stop.clicked() {
        tx.send(AppCommand::SendBar(SendCommand::Stop));
    }
}

/// The target picker: which compiled column Send sends.
fn target_picker(ui: &mut Ui, state: &AppState, tx: &CommandSender) {
    let label = |i: usize| {
        state
            .views
            .get(i)
            .map_or_else(|| format!("column {}", i + 1), |v| v.label.clone())
    };
    egui::ComboBox::from_id_salt("send_target")
        .selected_text(label(state.send.target))
        .show_ui(ui, |ui| {
            for (i, view) in state.views.iter().enumerate() {
                let how = match view.view {
                    ViewKind::Body => "HTTP SSE",
                    ViewKind::WsFrame => "WebSocket",
                    ViewKind::Headers => continue,
                };
                let text = format!("{} — {how}", view.label);
                if ui.selectable_label(state.send.target == i, text).clicked() {
                    tx.send(AppCommand::SendBar(SendCommand::Target(i)));
                }
            }
        })
        .response
        .on_hover_text(
            "The compiled column Send sends: a body over HTTP SSE, a frame over a WebSocket",
        );
}

/// The line above the timeline.
fn bar_ui(ui: &mut Ui, state: &AppState, tx: &CommandSender) {
    let send = &state.send;
    ui.horizontal_wrapped(|ui| {
        ui.strong("Last send");
        ui.label("target:");
        target_picker(ui, state, tx);
        if let Some(compiled) = &send.sent {
            ui.label(format!("to {}", redact_url(&compiled.url)));
        }
        if send.job.is_some() {
            ui.spinner();
            ui.label("streaming…");
        }
        if let Some((session, request)) = send.recorded {
            ui.label(format!("recorded: session #{session}, request {request}"));
        }
    });
    if let Some(error) = &send.error {
        // A bad URL is quoted whole: its credentials are not.
        super::widgets::error_line(ui, &crate::core::redact::redacted(error));
    }
}

/// The bottom panel of the workbench: the bar and, once something was sent, the timeline.
pub fn send_panel_ui(ui: &mut Ui, state: &AppState, sui: &mut SendUi, tx: &CommandSender) {
    let height = ui.available_height();
    if !state.send.shown {
        if state.send.error.is_some() {
            egui::Panel::bottom("send_bar").show(ui, |ui| bar_ui(ui, state, tx));
        }
        return;
    }
    egui::Panel::bottom("send_timeline")
        .resizable(true)
        .default_size((height * 0.35).clamp(140.0, 380.0))
        .size_range(90.0..=(height * 0.75).max(100.0))
        .show(ui, |ui| {
            bar_ui(ui, state, tx);
            super::send_continue::continue_ui(ui, state, &mut sui.next, tx);
            let commands = timeline_ui(ui, &state.send.timeline, &mut sui.timeline);
            for command in commands {
                if let TimelineCommand::CopyText(text) = &command {
                    ui.ctx().copy_text(text.clone());
                }
                tx.send(AppCommand::SendBar(SendCommand::Timeline(command)));
            }
        });
}
