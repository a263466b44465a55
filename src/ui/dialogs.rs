//! Dialogs, drawn as modals over the workbench: import a captured body (a fixed-height scrolling
//! editor with the buttons always visible, or from a file), open/save/export a file (a path field
//! with Browse… for the system dialog, run by an app worker), and "unsaved changes" before the
//! prompt is replaced or the window closes. Their shortcuts (Ctrl+Enter, Escape) are theirs:
//! the global ones are off while a dialog is open.

use std::path::PathBuf;

use egui::{Context, Key, KeyboardShortcut, Modifiers, Ui};

use super::widgets::{error_line, note_line};
use crate::app::settings::ExportKind;
use crate::app::state::{Dialog, PendingAction};
use crate::app::{AppCommand, AppState, CommandSender};

/// Height of the import dialog's editor (it scrolls inside).
const IMPORT_EDITOR_HEIGHT: f32 = 260.0;

/// Text buffers of the dialogs.
#[derive(Debug, Clone, Default)]
pub struct DialogBuffers {
    /// Pasted body text.
    pub import_text: String,
    /// Path typed in the file dialog.
    pub path: String,
    /// Dialog generation the buffers were filled for.
    pub generation: u64,
}

/// Draws the open dialog, if any.
pub fn dialogs_ui(
    ctx: &Context,
    state: &AppState,
    buffers: &mut DialogBuffers,
    tx: &CommandSender,
) {
    let Some(dialog) = &state.dialog else {
        return;
    };
    if buffers.generation != state.dialog_generation {
        buffers.generation = state.dialog_generation;
        if let Dialog::File { path, .. } = dialog {
            buffers.path = path.display().to_string();
        }
    }
    let escape = ctx.input_mut(|i| i.consume_key(Modifiers::NONE, Key::Escape));
    let submit = ctx
        .input_mut(|i| i.consume_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND, Key::Enter)));
    if escape {
        tx.send(AppCommand::CloseDialog);
        return;
    }
    let width = (ctx.content_rect().width() - 60.0).clamp(320.0, 640.0);
    egui::Modal::new(egui::Id::unique("promptwire_dialog")).show(ctx, |ui| {
        ui.set_width(width);
        match dialog {
            Dialog::Import { error, busy } => {
                import_ui(ui, buffers, error.as_deref(), *busy, submit, tx)
            }
            Dialog::File {
                kind, column, note, ..
            } => file_ui(ui, buffers, *kind, *column, note.as_deref(), submit, tx),
            Dialog::Unsaved { then } => unsaved_ui(ui, state, then, tx),
        }
    });
}

fn import_ui(
    ui: &mut Ui,
    buffers: &mut DialogBuffers,
    error: Option<&str>,
    busy: bool,
    submit: bool,
    tx: &CommandSender,
) {
    ui.heading("Import a captured body");
    let label = ui.label("Request body (JSON)");
    egui::ScrollArea::vertical()
        .id_salt("import_text_scroll")
        .max_height(IMPORT_EDITOR_HEIGHT)
        .min_scrolled_height(IMPORT_EDITOR_HEIGHT)
        .show(ui, |ui| {
            ui.add(
                egui::TextEdit::multiline(&mut buffers.import_text)
                    .code_editor()
                    .lock_focus(false)
                    .desired_rows(14)
                    .desired_width(f32::INFINITY)
                    .hint_text("Paste a body captured from Codex or any Responses client"),
            )
            .labelled_by(label.id);
        });
    note_line(ui, &format!("{} bytes", buffers.import_text.len()));
    if let Some(e) = error {
        error_line(ui, e);
    }
    ui.separator();
    ui.horizontal(|ui| {
        let import = ui
            .add_enabled(!busy, egui::Button::new("Import"))
            .on_hover_text(
                "Replace the form with the prompt that compiles to this body (Ctrl+Enter)",
            );
        if (import.clicked() || submit) && !busy {
            tx.send(AppCommand::ImportBody(buffers.import_text.clone()));
        }
        if ui
            .button("From file…")
            .on_hover_text("Import a body saved in a file instead")
            .clicked()
        {
            tx.send(AppCommand::ShowFileDialog(None, 0));
        }
        if ui
            .button("Cancel")
            .on_hover_text("Close (Escape)")
            .clicked()
        {
            tx.send(AppCommand::CloseDialog);
        }
        if busy {
            ui.spinner();
        }
    });
}

fn file_ui(
    ui: &mut Ui,
    buffers: &mut DialogBuffers,
    kind: Option<ExportKind>,
    column: usize,
    note: Option<&str>,
    submit: bool,
    tx: &CommandSender,
) {
    ui.heading(match kind {
        None => "Open a Prompt, body, HAR, rollout, cURL command or database",
        Some(ExportKind::Prompt) => "Save the Prompt file",
        Some(ExportKind::Json) => "Export the compiled bytes",
        Some(ExportKind::Har) => "Export the request as HAR",
        Some(ExportKind::StoredBody) => "Export the stored request's body",
        Some(ExportKind::StoredHar) => "Export the stored request as HAR",
    });
    let label = ui.label("Path");
    let field = ui
        .add(
            egui::TextEdit::singleline(&mut buffers.path)
                .hint_text("/path/to/file.json")
                .desired_width(f32::INFINITY),
        )
        .labelled_by(label.id)
        .on_hover_text("Type a path, or Browse… for the system dialog");
    let entered = field.lost_focus() && ui.input(|i| i.key_pressed(Key::Enter));
    if let Ok(cwd) = std::env::current_dir() {
        note_line(
            ui,
            &format!("A relative path is relative to {}", cwd.display()),
        );
    }
    if let Some(note) = note {
        error_line(ui, note);
    }
    ui.separator();
    ui.horizontal(|ui| {
        let action = if kind.is_some() {
            "Write file"
        } else {
            "Open file"
        };
        let go = ui
            .button(action)
            .on_hover_text("Do it with the path above (Enter)")
            .clicked();
        if (go || entered || submit) && !buffers.path.trim().is_empty() {
            let path = PathBuf::from(buffers.path.trim());
            tx.send(match kind {
                Some(kind) => AppCommand::WriteFile(kind, column, path),
                None => AppCommand::Open(path),
            });
        }
        if ui
            .button("Browse…")
            .on_hover_text("Use the system file dialog (if one is available)")
            .clicked()
        {
            tx.send(AppCommand::Browse);
        }
        if ui
            .button("Cancel")
            .on_hover_text("Close (Escape)")
            .clicked()
        {
            tx.send(AppCommand::CloseDialog);
        }
    });
}

fn unsaved_ui(ui: &mut Ui, state: &AppState, then: &PendingAction, tx: &CommandSender) {
    ui.heading("Unsaved changes");
    let question = match then {
        PendingAction::Close => "Close anyway?",
        PendingAction::Run(_) => "Replace it anyway (the changes are lost)?",
    };
    let unapplied = state.unapplied_edit_names();
    let what = if state.is_dirty() {
        "The prompt has changes that are not saved.".to_string()
    } else {
        "The prompt has an edit that was never applied.".to_string()
    };
    ui.label(format!("{what} {question}"));
    if !unapplied.is_empty() {
        error_line(
            ui,
            &format!(
                "The raw JSON of {} has an error and was never applied; saving cannot keep it.",
                unapplied.join(", ")
            ),
        );
    }
    ui.separator();
    ui.horizontal(|ui| {
        if ui
            .button("Discard changes")
            .on_hover_text("Lose the unsaved changes and continue")
            .clicked()
        {
            tx.send(AppCommand::DiscardAndContinue);
        }
        if ui
            .button("Save first")
            .on_hover_text("Save the prompt, then continue")
            .clicked()
        {
            tx.send(AppCommand::SaveAndContinue);
        }
        if ui
            .button("Cancel")
            .on_hover_text("Keep editing (Escape)")
            .clicked()
        {
            tx.send(AppCommand::CloseDialog);
        }
    });
}
