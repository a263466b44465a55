//! Dialogs, drawn as modals over the workbench: import a captured body (a fixed-height scrolling
//! editor with the buttons always visible, or from a file), open/save/export a file (a path field
//! that has the keyboard when the dialog opens and completes with Tab, Browse… for the system
//! dialog, run by an app worker; its heading names the column an export writes; a file already
//! at the path is replaced only when the user says so), and "unsaved changes" before the
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
    /// Give the path field the keyboard next frame (the dialog just opened).
    pub focus_path: bool,
    /// The completion count last applied to the path.
    pub completion_seen: u64,
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
            buffers.focus_path = true;
            buffers.completion_seen = 0;
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
                kind,
                column,
                note,
                replace,
                completion,
                ..
            } => {
                let heading = file_heading(state, *kind, *column);
                let shown = FileShown {
                    heading: &heading,
                    kind: *kind,
                    column: *column,
                    note: note.as_deref(),
                    replace: replace.as_deref(),
                    completion: completion.as_ref(),
                };
                file_ui(ui, buffers, &shown, submit, tx);
            }
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

/// The file dialog's heading: what it opens, saves or exports — for an export, which column
/// (its title, `Lite · OpenAI · HTTP body`) or which stored request.
pub fn file_heading(state: &AppState, kind: Option<ExportKind>, column: usize) -> String {
    let column_name = || {
        state
            .views
            .get(column)
            .map_or_else(|| format!("column {}", column + 1), |v| v.label.clone())
    };
    let stored = || {
        let turn = state.sessions.rows.get(column).map(|r| r.position);
        match (state.sessions.open, turn) {
            (Some(session), Some(turn)) => format!("turn {turn} of session #{session}"),
            _ => "the stored request".to_string(),
        }
    };
    match kind {
        None => "Open a Prompt, body, HAR, rollout, cURL command or database".to_string(),
        Some(ExportKind::Prompt) => "Save the Prompt file".to_string(),
        Some(ExportKind::Json) => format!("Export the compiled bytes of “{}”", column_name()),
        Some(ExportKind::Har) => format!("Export “{}” as HAR", column_name()),
        Some(ExportKind::StoredBody) => format!("Export the body of {}", stored()),
        Some(ExportKind::StoredHar) => format!("Export {} as HAR", stored()),
    }
}

/// What the file dialog shows.
struct FileShown<'a> {
    heading: &'a str,
    kind: Option<ExportKind>,
    column: usize,
    note: Option<&'a str>,
    replace: Option<&'a std::path::Path>,
    completion: Option<&'a (u64, crate::app::files::PathCompletion)>,
}

fn file_ui(
    ui: &mut Ui,
    buffers: &mut DialogBuffers,
    shown: &FileShown<'_>,
    submit: bool,
    tx: &CommandSender,
) {
    let (kind, column) = (shown.kind, shown.column);
    ui.heading(shown.heading);
    let label = ui.label("Path");
    let id = egui::Id::unique("file_dialog_path");
    // A completion of what is still typed: the field takes it, the cursor at its end.
    let mut completed = None;
    if let Some((count, completion)) = shown.completion
        && *count != buffers.completion_seen
    {
        buffers.completion_seen = *count;
        if completion.typed == buffers.path {
            buffers.path.clone_from(&completion.text);
            completed = Some(completion.candidates.clone());
        }
    }
    let field = ui
        .add(
            egui::TextEdit::singleline(&mut buffers.path)
                .id(id)
                .hint_text("/path/to/file.json")
                .desired_width(f32::INFINITY)
                // Tab completes the path (it does not move the keyboard to the next button).
                .lock_focus(true),
        )
        .labelled_by(label.id)
        .on_hover_text("Type a path (Tab completes it), or Browse… for the system dialog");
    let focus = std::mem::take(&mut buffers.focus_path);
    if focus && !field.has_focus() {
        // (Not when it has it: asking again lifts its Tab lock for a frame, and Tab then
        // moved the keyboard to the next button.)
        field.request_focus();
    }
    if focus || completed.is_some() {
        let end = egui::text::CCursor::new(buffers.path.chars().count());
        if let Some(mut edit) = egui::text_edit::TextEditState::load(ui.ctx(), id) {
            edit.cursor
                .set_char_range(Some(egui::text::CCursorRange::one(end)));
            edit.store(ui.ctx(), id);
        }
    }
    if field.has_focus() && ui.input(|i| i.key_pressed(Key::Tab) && i.modifiers.is_none()) {
        tx.send(AppCommand::CompletePath(buffers.path.clone()));
    }
    if let Some((_, completion)) = shown.completion
        && completion.text == buffers.path
        && !completion.candidates.is_empty()
    {
        note_line(ui, &completion.candidates.join("   "));
    }
    let entered = field.lost_focus() && ui.input(|i| i.key_pressed(Key::Enter));
    if let Ok(cwd) = std::env::current_dir() {
        note_line(
            ui,
            &format!("A relative path is relative to {}", cwd.display()),
        );
    }
    if let Some(note) = shown.note {
        error_line(ui, note);
    }
    let asking = shown
        .replace
        .filter(|path| *path == std::path::Path::new(buffers.path.trim()));
    if let Some(path) = asking {
        error_line(ui, &format!("{} exists. Replace it?", path.display()));
    }
    ui.separator();
    ui.horizontal(|ui| {
        if asking.is_some()
            && ui
                .button("Replace")
                .on_hover_text("Write over the existing file")
                .clicked()
        {
            tx.send(AppCommand::ReplaceFile);
        }
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
