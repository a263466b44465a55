//! The timeline panel: a toolbar (text and type filters, follow/pause, gap statistics with a time
//! ruler), the virtualized event table, and beside it the selected event (raw data, parsed JSON
//! as a tree or text) above the outcome (text, reasoning summaries, output items, usage, timings,
//! failure and attempts).
//!
//! Keys (when no text field has focus): `j`/`↓` and `k`/`↑` select the next/previous shown
//! event, `End` follows the tail again.
//!
//! It reads a [`TimelineModel`] and its own small [`TimelinePanelState`], and returns
//! [`TimelineCommand`]s for the caller to apply ([`TimelineModel::handle`]); it never mutates the
//! model. Mounting it in the app shell: see [`crate::app::timeline`].

mod detail;
mod json_tree;
mod outcome;
mod table;
mod toolbar;

use egui::Ui;

use crate::app::timeline::{TimelineCommand, TimelineModel};

/// The panel's own UI state.
#[derive(Debug, Default)]
pub struct TimelinePanelState {
    /// The filter text being edited.
    pub filter: String,
    /// Parsed JSON as plain text instead of a tree.
    pub json_as_text: bool,
    /// The parsed data of the selected event, computed once per selection.
    detail: Option<detail::DetailCache>,
    /// A shown row to scroll into view next frame (after a key moved the selection).
    scroll_to: Option<usize>,
}

/// Draws the timeline of `model`; returns what the user asked for.
pub fn timeline_ui(
    ui: &mut Ui,
    model: &TimelineModel,
    state: &mut TimelinePanelState,
) -> Vec<TimelineCommand> {
    let mut commands = Vec::new();
    keys(ui, model, state, &mut commands);
    egui::Panel::top("timeline_toolbar").show(ui, |ui| {
        toolbar::toolbar_ui(ui, model, state, &mut commands);
    });
    // The table keeps most of a narrow window (its preview column is what a user scans).
    let detail_width = (ui.available_width() * 0.4).clamp(240.0, 440.0);
    egui::Panel::right("timeline_detail")
        .resizable(true)
        .default_size(detail_width)
        .min_size(200.0)
        .show(ui, |ui| {
            egui::ScrollArea::vertical()
                .id_salt("timeline_detail_scroll")
                .auto_shrink(false)
                .show(ui, |ui| {
                    detail::detail_ui(ui, model, state, &mut commands);
                    ui.separator();
                    outcome::outcome_ui(ui, model);
                });
        });
    egui::CentralPanel::default().show(ui, |ui| {
        table::table_ui(ui, model, state.scroll_to.take(), &mut commands);
    });
    commands
}

/// j/k and the arrow keys move the selection among the shown rows; End follows the tail.
fn keys(
    ui: &Ui,
    model: &TimelineModel,
    state: &mut TimelinePanelState,
    commands: &mut Vec<TimelineCommand>,
) {
    if ui.ctx().memory(|m| m.focused().is_some()) || model.visible_len() == 0 {
        return;
    }
    let (down, up, end) = ui.input(|i| {
        (
            i.key_pressed(egui::Key::J) || i.key_pressed(egui::Key::ArrowDown),
            i.key_pressed(egui::Key::K) || i.key_pressed(egui::Key::ArrowUp),
            i.key_pressed(egui::Key::End),
        )
    });
    if end {
        commands.push(TimelineCommand::Follow(true));
        return;
    }
    let last = model.visible_len() - 1;
    let current = model.selected().and_then(|s| model.visible_position(s));
    let target = match (down, up, current) {
        (true, _, Some(p)) => (p + 1).min(last),
        (true, _, None) => 0,
        (false, true, Some(p)) => p.saturating_sub(1),
        (false, true, None) => last,
        _ => return,
    };
    if let Some((index, _)) = model.visible_row(target) {
        commands.push(TimelineCommand::Select(Some(index)));
        state.scroll_to = Some(target);
    }
}

/// Seconds with millisecond precision (`1.234 s`).
fn secs(d: std::time::Duration) -> String {
    format!("{:.3} s", d.as_secs_f64())
}

/// `text` cut to at most `max_bytes` (at a character boundary), saying how much was left out.
fn clip(text: &str, max_bytes: usize) -> String {
    if text.len() <= max_bytes {
        return text.to_string();
    }
    let mut cut = max_bytes;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}… ({} more bytes)", &text[..cut], text.len() - cut)
}
