//! The inspector's Events tab: the recorded events in order (sequence, arrival time, name, data
//! cut to one line), only the rows in view laid out, with Replay (the recorded stream into the
//! timeline, through the existing replay command) and Re-send.

use egui::{Label, RichText, Ui};

use super::send;
use crate::app::CommandSender;
use crate::app::session_view::inspect::Inspected;
use crate::app::session_view::{ReplaySpeed, SessionCommand};
use crate::core::format::grouped;
use crate::core::stream::RawEvent;

/// Characters of an event's data shown on its line.
const DATA_CHARS: usize = 160;

/// One event's line: `#3 +412 ms response.output_text.delta {"delta":…}`.
pub fn event_line(event: &RawEvent) -> String {
    let data: String = event
        .data
        .chars()
        .take(DATA_CHARS)
        .map(|c| if c == '\n' { ' ' } else { c })
        .collect();
    let more = if event.data.chars().count() > DATA_CHARS {
        "…"
    } else {
        ""
    };
    format!(
        "#{} +{} ms {} {data}{more}",
        event.seq,
        event.received_at.as_millis(),
        event.event.as_deref().unwrap_or("message")
    )
}

/// Draws the tab.
pub fn events_ui(ui: &mut Ui, found: &Inspected, index: usize, tx: &CommandSender) {
    ui.horizontal(|ui| {
        let mut text = format!("{} events", grouped(found.event_count));
        if found.event_count > found.events.len() as u64 {
            text.push_str(&format!(
                " (first {} shown)",
                grouped(found.events.len() as u64)
            ));
        }
        ui.label(text);
        if ui
            .add_enabled(found.event_count > 0, egui::Button::new("Replay"))
            .on_hover_text("Replay the recorded stream into the timeline (r)")
            .clicked()
        {
            send(tx, SessionCommand::Replay(index, ReplaySpeed::Instant));
        }
        if ui.button("Re-send").clicked() {
            send(tx, SessionCommand::Resend(index));
        }
    });
    if found.events.is_empty() {
        ui.weak("No events recorded.");
        return;
    }
    let row_height = ui.text_style_height(&egui::TextStyle::Monospace) + 2.0;
    egui::ScrollArea::both()
        .id_salt("inspector_events")
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
