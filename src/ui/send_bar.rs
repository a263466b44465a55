//! Send in the workbench: the top bar's Send / Stop buttons and, beside them, the target picker
//! (always there, so the first send can already pick its column; Send's tooltip names the column
//! and URL), and the bottom panel that shows the send's timeline — a bar (where the last send
//! went, what is running, where it was recorded, why a send could not start; the "Ask why" box
//! for the next Send), the Continue strip
//! (`send_continue.rs`), then the shared timeline panel ([`crate::ui::timeline`]). Keys: Ctrl+Enter sends, Esc stops (both in `ui/mod.rs`).

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

/// What the target column is called in the picker and the Send button's tooltip: its label
/// (dialect · provider · view) and how it goes out.
pub fn target_text(state: &AppState, i: usize) -> String {
    match state.views.get(i) {
        Some(view) => {
            let how = match view.view {
                ViewKind::Body => "HTTP SSE",
                ViewKind::WsFrame => "WebSocket",
                ViewKind::Headers => "not sendable",
            };
            format!("{} — {how}", view.label)
        }
        None => format!("column {} (not compiled yet)", i + 1),
    }
}

/// The Send and Stop buttons and the target picker (top bar, always shown): Send names in its
/// tooltip the column and the URL it sends to.
pub fn send_buttons(ui: &mut Ui, state: &AppState, tx: &CommandSender) {
    let running = state.send.job.is_some();
    let target = target_text(state, state.send.target);
    let url = state
        .views
        .get(state.send.target)
        .map_or_else(String::new, |v| {
            format!(" to {}", redact_url(&v.compiled.url))
        });
    let into = state.send.into.map_or_else(
        || "a new session".to_string(),
        |id| format!("session #{id}"),
    );
    let send = ui
        .add_enabled(!running, egui::Button::new("Send"))
        .on_hover_text(format!(
            "Send {target}{url} and watch the stream (Ctrl+Enter); recorded into {into}"
        ));
    if send.clicked() {
        tx.send(AppCommand::Send);
    }
    let stop = ui
        .add_enabled(running, egui::Button::new("Stop"))
        .on_hover_text("Stop the send; the partial response is kept (Esc)");
    if stop.clicked() {
        tx.send(AppCommand::SendBar(SendCommand::Stop));
    }
    target_picker(ui, state, &target, tx);
}

/// "Ask why" for the next Send (in the bar above the timeline: there is a previous response to
/// compare with once something was sent; the top bar has no room at 1024 px).
fn ask_why_ui(ui: &mut Ui, state: &AppState, tx: &CommandSender) {
    let mut ask = state.send.ask_why;
    if ui
        .checkbox(&mut ask, "Ask why")
        .on_hover_text(
            "Ask the server why on the next Send: set prompt_cache_options.comparison_response_id \
             to the last send's response, so the answer carries prompt_cache_diagnostics (GPT-5.6 \
             and later)",
        )
        .changed()
    {
        tx.send(AppCommand::SendBar(SendCommand::AskWhy(ask)));
    }
}

/// The target in a few characters, for the top bar: `Lite · OpenAI · HTTP` / `… · WS`.
fn short_target(state: &AppState, i: usize) -> String {
    state.views.get(i).map_or_else(
        || format!("column {}", i + 1),
        |view| match view.view {
            ViewKind::Body => view.label.replace(" · HTTP body", " · HTTP"),
            ViewKind::WsFrame => view.label.replace(" · WebSocket frame", " · WS"),
            ViewKind::Headers => view.label.clone(),
        },
    )
}

/// The target picker: which compiled column (dialect × provider × body or WebSocket frame) Send
/// sends. Narrow (the top bar is one row at 1024 px): the full name is in its tooltip and list;
/// its accessible name is "Send target".
fn target_picker(ui: &mut Ui, state: &AppState, full: &str, tx: &CommandSender) {
    let short = short_target(state, state.send.target);
    // At most this wide: the text is cut, the full name is in the tooltip and the list.
    let response = ui
        .scope(|ui| {
            ui.set_max_width(130.0);
            egui::ComboBox::from_id_salt("send_target")
                .selected_text(&short)
                .width(110.0)
                .truncate()
                .show_ui(ui, |ui| {
                    // The list is wider than the button: its entries are the full names.
                    ui.set_min_width(300.0);
                    ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Extend);
                    for (i, view) in state.views.iter().enumerate() {
                        if view.view == ViewKind::Headers {
                            continue;
                        }
                        let text = target_text(state, i);
                        if ui.selectable_label(state.send.target == i, text).clicked() {
                            tx.send(AppCommand::SendBar(SendCommand::Target(i)));
                        }
                    }
                })
                .response
        })
        .inner;
    response.widget_info(|| {
        let mut info =
            egui::WidgetInfo::labeled(egui::accesskit::Role::ComboBox, true, "Send target");
        info.current_text_value = Some(short.clone());
        info
    });
    response.on_hover_text(format!(
        "Send target: {full}. The compiled column Send sends: a body over HTTP SSE, a frame over \
         a WebSocket"
    ));
}

/// The line above the timeline: what the last send did (where it went, what is running, where
/// it was recorded), or why a send could not start.
fn bar_ui(ui: &mut Ui, state: &AppState, tx: &CommandSender) {
    let send = &state.send;
    ui.horizontal_wrapped(|ui| {
        ask_why_ui(ui, state, tx);
        ui.strong("Last send");
        if let Some(compiled) = &send.sent {
            ui.label(format!("to {}", redact_url(&compiled.url)));
        }
        if send.job.is_some() {
            ui.spinner();
            ui.label("streaming…");
        }
        if let Some((session, _)) = send.recorded {
            let turn = send
                .recorded_turn
                .map_or_else(String::new, |turn| format!(", turn {turn}"));
            ui.label(format!("recorded: session #{session}{turn}"));
        }
    });
    if let Some(error) = &send.error {
        // A bad URL is quoted whole: its credentials are not.
        super::widgets::error_line(ui, &crate::core::redact::redacted(error));
    }
}

/// The send pane's contents: the bar and the Continue strip, then the timeline (before the first
/// send only the bar, which says why a send was refused).
pub fn send_panel_ui(ui: &mut Ui, state: &AppState, sui: &mut SendUi, tx: &CommandSender) {
    bar_ui(ui, state, tx);
    if !state.send.shown {
        return;
    }
    super::send_continue::continue_ui(ui, state, &mut sui.next, tx);
    let commands = timeline_ui(ui, &state.send.timeline, &mut sui.timeline);
    for command in commands {
        if let TimelineCommand::CopyText(text) = &command {
            ui.ctx().copy_text(text.clone());
        }
        tx.send(AppCommand::SendBar(SendCommand::Timeline(command)));
    }
}
