//! The status bar: the last message or error (no silent failure; errors can be dismissed), the
//! jobs still running, the file and its unsaved state, and sizes.

use egui::{RichText, Ui};

use crate::app::{AppCommand, AppState, CommandSender};

/// Draws the status bar.
pub fn status_bar_ui(ui: &mut Ui, state: &AppState, tx: &CommandSender) {
    ui.horizontal(|ui| {
        let text = RichText::new(&state.status.text);
        if state.status.is_error {
            ui.label(text.color(ui.visuals().error_fg_color));
            if ui
                .small_button("×")
                .on_hover_text("Dismiss this error")
                .clicked()
            {
                tx.send(AppCommand::Notify(String::new()));
            }
        } else {
            ui.label(text);
        }
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
                "{file}{dirty} · {} items · {} tools",
                state.prompt.input.len(),
                state.prompt.tools.len()
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
        });
    });
}
