//! Dialogs: paste a captured body to import it, and the file dialog for open/save/export — the
//! native dialog (rfd, on a helper thread so the window never blocks) with a path field that works
//! when no dialog service is available.

use std::path::PathBuf;

use egui::Context;

use super::widgets::{error_line, labelled_multiline};
use crate::app::state::ExportKind;
use crate::app::{AppCommand, AppState};

/// Draws whichever dialogs are open.
pub fn dialogs_ui(ctx: &Context, state: &mut AppState, commands: &mut Vec<AppCommand>) {
    import_dialog(ctx, state, commands);
    file_dialog(ctx, state, commands);
}

fn import_dialog(ctx: &Context, state: &mut AppState, commands: &mut Vec<AppCommand>) {
    let Some(dialog) = state.import_dialog.as_mut() else {
        return;
    };
    let mut open = true;
    egui::Window::new("Import a captured body")
        .open(&mut open)
        .default_width(520.0)
        .show(ctx, |ui| {
            labelled_multiline(
                ui,
                "Request body (JSON)",
                &mut dialog.text,
                12,
                true,
                "Paste a body captured from Codex or any Responses client",
            );
            if let Some(e) = &dialog.error {
                error_line(ui, e);
            }
            if ui
                .button("Import")
                .on_hover_text("Replace the form with the prompt that compiles to this body")
                .clicked()
            {
                commands.push(AppCommand::ImportBody(dialog.text.clone()));
            }
        });
    if !open {
        state.import_dialog = None;
    }
}

fn file_dialog(ctx: &Context, state: &mut AppState, commands: &mut Vec<AppCommand>) {
    let Some(dialog) = state.file_dialog.as_mut() else {
        return;
    };
    let title = match dialog.kind {
        None => "Open a Prompt file",
        Some(ExportKind::Prompt) => "Save the Prompt file",
        Some(ExportKind::Json) => "Export the compiled body",
        Some(ExportKind::Har) => "Export the request as HAR",
    };
    let mut open = true;
    let mut browse = false;
    egui::Window::new(title)
        .open(&mut open)
        .default_width(460.0)
        .show(ctx, |ui| {
            ui.horizontal(|ui| {
                let label = ui.label("Path");
                ui.add(
                    egui::TextEdit::singleline(&mut dialog.path)
                        .hint_text("/path/to/file.json")
                        .desired_width(380.0),
                )
                .labelled_by(label.id)
                .on_hover_text("Type a path, or Browse… for the system dialog");
            });
            ui.horizontal(|ui| {
                browse = ui
                    .button("Browse…")
                    .on_hover_text("Use the system file dialog (if one is available)")
                    .clicked();
                let action = if dialog.kind.is_some() {
                    "Write file"
                } else {
                    "Open file"
                };
                if ui
                    .button(action)
                    .on_hover_text("Do it with the path above")
                    .clicked()
                    && !dialog.path.trim().is_empty()
                {
                    let path = PathBuf::from(dialog.path.trim());
                    commands.push(match dialog.kind {
                        Some(kind) => AppCommand::WriteFile(kind, dialog.column, path),
                        None => AppCommand::Open(path),
                    });
                }
            });
        });
    if browse && state.pending_dialog.is_none() {
        let (tx, rx) = std::sync::mpsc::channel();
        let saving = dialog.kind.is_some();
        let name = dialog.path.clone();
        let spawned = std::thread::Builder::new()
            .name("promptwire-file-dialog".to_string())
            .spawn(move || {
                let picker = rfd::FileDialog::new().add_filter("JSON / HAR", &["json", "har"]);
                let choice = if saving {
                    picker.set_file_name(&name).save_file()
                } else {
                    picker.pick_file()
                };
                let _ = tx.send(choice);
            });
        match spawned {
            Ok(_) => state.pending_dialog = Some(rx),
            Err(e) => state.set_status(format!("No file dialog: {e}; type the path instead"), true),
        }
    }
    if !open {
        state.file_dialog = None;
    }
}
