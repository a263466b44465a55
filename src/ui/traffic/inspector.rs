//! The Traffic view's inspector (the pane under the list): the selected request — where it came
//! from, its session and turn with "Open session" (the Sessions view, that request selected) —
//! and, once it is stored, its Request (headers, body as tree / text / raw bytes), Response
//! (status, headers, outcome, usage) and Events, drawn by the Sessions inspector's own tabs
//! (`ui::sessions::inspector`) from the same read (`app::session_view::inspect`).

use egui::{Label, RichText, Ui};

use super::send;
use crate::app::traffic::TrafficCommand;
use crate::app::{AppState, CommandSender};
use crate::core::format::grouped;
use crate::ui::sessions::inspector::{BodyView, Shown, event_line, request_ui, response_ui};

/// The inspector's tabs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Tab {
    /// Headers and body.
    #[default]
    Request,
    /// Status, headers, outcome, usage.
    Response,
    /// The recorded events.
    Events,
}

/// The inspector's widget state.
#[derive(Debug, Default)]
pub struct TrafficInspectorUi {
    /// The tab shown.
    pub tab: Tab,
    /// The body view.
    pub body: BodyView,
}

/// Draws the inspector.
pub fn inspector_ui(
    ui: &mut Ui,
    state: &AppState,
    iui: &mut TrafficInspectorUi,
    tx: &CommandSender,
) {
    let log = &state.traffic;
    let Some(row) = log.selected_row() else {
        ui.weak("Select a request in the list above.");
        return;
    };
    ui.horizontal_wrapped(|ui| {
        ui.strong(format!("{} {}", row.method, row.path()));
        ui.weak(format!("({})", row.origin.label()));
        match (row.session, row.position) {
            (Some(session), position) => {
                let turn = position.map_or_else(String::new, |p| format!(" turn {p}"));
                if ui
                    .button(format!("Open session #{session}{turn}"))
                    .on_hover_text("Show this request in its session (Sessions view; Enter)")
                    .clicked()
                {
                    send(tx, TrafficCommand::OpenSession(row.id));
                }
            }
            (None, _) => {
                ui.weak("not stored yet");
            }
        }
        if log.inspect.loading {
            ui.spinner();
        }
    });
    if let Some(error) = row.error.as_ref().or(log.inspect.error.as_ref()) {
        crate::ui::widgets::error_line(ui, error);
    }
    ui.horizontal(|ui| {
        for (tab, label) in [
            (Tab::Request, "Request"),
            (Tab::Response, "Response"),
            (Tab::Events, "Events"),
        ] {
            ui.selectable_value(&mut iui.tab, tab, label);
        }
    });
    ui.separator();
    let Some(found) = log.inspected() else {
        if row.request.is_none() {
            ui.weak("Its headers and body show once the proxy has stored it.");
        }
        return;
    };
    match iui.tab {
        Tab::Request => request_ui(
            ui,
            found,
            log.inspect.tokens,
            &mut iui.body,
            Shown::default(),
        ),
        Tab::Response => {
            // The cost needs the session's cache analysis: the Sessions view shows it.
            let cost = (
                "see the session's analysis (Open session)".to_string(),
                None,
            );
            response_ui(ui, found, cost);
        }
        Tab::Events => {
            let mut text = format!("{} events", grouped(found.event_count));
            if found.event_count > found.events.len() as u64 {
                text.push_str(&format!(
                    " (first {} shown)",
                    grouped(found.events.len() as u64)
                ));
            }
            ui.label(text);
            let row_height = ui.text_style_height(&egui::TextStyle::Monospace) + 2.0;
            egui::ScrollArea::both()
                .id_salt("traffic_events")
                .auto_shrink(false)
                .show_rows(ui, row_height, found.events.len(), |ui, range| {
                    for event in &found.events[range] {
                        ui.add(
                            Label::new(RichText::new(event_line(event)).monospace())
                                .extend()
                                .selectable(false),
                        );
                    }
                });
        }
    }
}
