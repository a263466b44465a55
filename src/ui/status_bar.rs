//! The status bar: the last message or error (no silent failure), the file, and sizes.

use egui::{RichText, Ui};

use crate::app::AppState;

/// Draws the status bar.
pub fn status_bar_ui(ui: &mut Ui, state: &AppState) {
    ui.horizontal(|ui| {
        let text = RichText::new(&state.status.text);
        ui.label(if state.status.is_error {
            text.color(ui.visuals().error_fg_color)
        } else {
            text
        });
        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
            let file = state
                .prompt_path
                .as_ref()
                .map_or("unsaved prompt".to_string(), |p| p.display().to_string());
            let dirty = if state.dirty { " •" } else { "" };
            ui.label(format!(
                "{file}{dirty} · {} items · {} tools",
                state.prompt.input.len(),
                state.prompt.tools.len()
            ));
        });
    });
}
