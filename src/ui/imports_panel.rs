//! The sidebar's import sections: "Import Codex sessions…" (a folder of rollouts, defaulting to
//! `$CODEX_HOME/sessions`, imported on a worker with a progress bar and Cancel; the Sessions view
//! then shows what arrived) and the model catalog import (`codex debug models` output or Codex's
//! `models_cache.json`, saying which models it added or changed, or where the file is wrong).
//! Reads `&AppState`, sends [`ImportCommand`]s.

use egui::Ui;

use super::widgets::{labelled_line, note_line};
use crate::app::imports::{ImportCommand, default_codex_sessions, merge_text};
use crate::app::{AppCommand, AppState, CommandSender};

/// The import sections' text buffers.
#[derive(Debug, Default)]
pub struct ImportsUi {
    /// The rollout folder (filled with the default on first draw).
    pub sessions_dir: Option<String>,
    /// The catalog file.
    pub catalog_path: String,
}

/// The Codex sessions import: folder, button, progress and Cancel, result.
pub fn codex_sessions_ui(
    ui: &mut Ui,
    state: &AppState,
    imports: &mut ImportsUi,
    tx: &CommandSender,
) {
    let import = &state.imports.rollouts;
    let dir = imports.sessions_dir.get_or_insert_with(|| {
        default_codex_sessions().map_or_else(String::new, |p| p.display().to_string())
    });
    labelled_line(
        ui,
        "Codex sessions",
        dir,
        "~/.codex/sessions",
        "A folder of Codex rollout files (rollout-*.jsonl); threads imported before are skipped",
    );
    if import.job.is_some() {
        ui.horizontal(|ui| {
            let (done, total) = import
                .progress
                .as_ref()
                .map_or((0, 0), |p| (p.done, p.total));
            let fraction = if total == 0 {
                0.0
            } else {
                done as f32 / total as f32
            };
            ui.add(
                egui::ProgressBar::new(fraction)
                    .text(format!("{done} of {total} files"))
                    .desired_width(140.0),
            );
            if ui.button("Cancel").clicked() {
                tx.send(AppCommand::Import(ImportCommand::Cancel));
            }
        });
    } else if ui
        .button("Import Codex sessions…")
        .on_hover_text("Import every Codex rollout under that folder as sessions (read only)")
        .clicked()
        && !dir.trim().is_empty()
    {
        let path = super::sidebar::expand_home(dir.trim());
        tx.send(AppCommand::Import(ImportCommand::CodexSessions(path)));
    }
    match &import.result {
        Some(Ok(report)) => {
            let imported = report.rollouts.iter().filter(|r| !r.skipped).count();
            let skipped = report.rollouts.len() - imported;
            let cancelled = if report.cancelled { " (cancelled)" } else { "" };
            note_line(
                ui,
                &format!("{imported} imported, {skipped} skipped{cancelled}"),
            );
            for (path, error) in &report.failed {
                ui.colored_label(
                    ui.visuals().error_fg_color,
                    format!("{}: {error}", path.display()),
                );
            }
        }
        Some(Err(e)) => {
            ui.colored_label(ui.visuals().error_fg_color, e);
        }
        None => {}
    }
}

/// The catalog import: file, button, what it added or changed (or the JSON-path error).
pub fn catalog_ui(ui: &mut Ui, state: &AppState, imports: &mut ImportsUi, tx: &CommandSender) {
    let path = &mut imports.catalog_path;
    labelled_line(
        ui,
        "Catalog file",
        path,
        "~/.codex/models_cache.json",
        "`codex debug models` output or Codex's models_cache.json: merged into the model picker",
    );
    let busy = state.imports.catalog_busy;
    if ui
        .add_enabled(!busy, egui::Button::new("Import catalog"))
        .on_hover_text("Add the file's models to the catalog (same slug: replaced)")
        .clicked()
        && !path.trim().is_empty()
    {
        let path = super::sidebar::expand_home(path.trim());
        tx.send(AppCommand::Import(ImportCommand::Catalog(path)));
    }
    match state.imports.catalog.as_ref().map(|c| &c.result) {
        Some(Ok(merge)) => note_line(ui, &format!("Catalog: {}", merge_text(merge))),
        Some(Err(e)) => {
            ui.colored_label(ui.visuals().error_fg_color, e);
        }
        None => {}
    }
}
