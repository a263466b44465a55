//! The status bar: the last message or error (no silent failure; errors can be dismissed), the
//! jobs still running, the file and its unsaved state, and sizes. The right-hand part is laid
//! out first; the message gets the room left of it and is cut there (the whole text on hover),
//! so it is never drawn under the job chips.

use egui::{Label, RichText, Ui};

use crate::app::{AppCommand, AppState, CommandSender};
use crate::ui::widgets::count;

/// Draws the status bar.
pub fn status_bar_ui(ui: &mut Ui, state: &AppState, tx: &CommandSender) {
    ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
        let file = state
            .prompt_path
            .as_ref()
            .map_or("not saved to a file".to_string(), |p| {
                p.display().to_string()
            });
        let dirty = if state.has_unsaved_work() {
            " · unsaved changes"
        } else {
            ""
        };
        ui.label(format!(
            "{file}{dirty} · {} · {}",
            count(state.prompt.input.len() as u64, "item"),
            count(state.prompt.tools.len() as u64, "tool")
        ));
        for job in &state.workers.running {
            if ui
                .small_button("×")
                .on_hover_text("Stop this job")
                .clicked()
            {
                tx.send(AppCommand::CancelJob(job.id));
            }
            let text = job.progress.as_deref().unwrap_or(&job.name);
            ui.label(RichText::new(text).small());
            ui.spinner();
        }
        ui.with_layout(egui::Layout::left_to_right(egui::Align::Center), |ui| {
            let text = RichText::new(&state.status.text);
            if state.status.is_error {
                if ui
                    .small_button("×")
                    .on_hover_text("Dismiss this error")
                    .clicked()
                {
                    tx.send(AppCommand::Notify(String::new()));
                }
                ui.add(Label::new(text.color(ui.visuals().error_fg_color)).truncate());
            } else {
                ui.add(Label::new(text).truncate());
            }
        });
    });
}
