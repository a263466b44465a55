//! File actions of the workbench: open a Prompt file (or import a captured body dropped or
//! opened by mistake), save, export (JSON, HAR) owner-readable only, import a pasted body, and
//! import providers from a Codex `config.toml`.

use std::path::{Path, PathBuf};

use super::state::{AppState, ExportKind, ProviderPreset};
use crate::core::codex_config::{ImportedProvider, providers_from_config};
use crate::core::error::PromptError;
use crate::core::export::{HarEntry, har_log};
use crate::core::import::import_body;
use crate::core::prompt::Prompt;

/// Largest file the workbench opens.
pub const MAX_OPEN_BYTES: u64 = 64 * 1024 * 1024;

/// Opens a Prompt file; a file that is a captured request body instead is imported.
pub fn open(state: &mut AppState, path: PathBuf) {
    let shown = path.display().to_string();
    let text = match read_limited(&path) {
        Ok(text) => text,
        Err(e) => return state.set_status(format!("{shown}: {e}"), true),
    };
    match Prompt::from_json_str(&text) {
        Ok(prompt) => {
            state.replace_prompt(prompt, Some(path.clone()));
            remember(state, path);
            state.set_status(format!("Opened {shown}"), false);
        }
        Err(prompt_err) => {
            // Not a Prompt: maybe a captured body.
            if let Ok(value) = serde_json::from_str::<serde_json::Value>(&text)
                && value.get("input").is_some()
                && let Ok(outcome) = import_body(&value, &state.catalog)
            {
                state.replace_prompt(outcome.prompt, None);
                state.dirty = true;
                state.set_status(format!("Imported the captured body {shown}"), false);
                return;
            }
            state.set_status(format!("{shown}: {prompt_err}"), true);
        }
    }
}

fn read_limited(path: &Path) -> Result<String, String> {
    let size = std::fs::metadata(path).map_err(|e| e.to_string())?.len();
    if size > MAX_OPEN_BYTES {
        return Err(format!(
            "{size} bytes is larger than the {} MiB the workbench opens",
            MAX_OPEN_BYTES / (1024 * 1024)
        ));
    }
    std::fs::read_to_string(path).map_err(|e| e.to_string())
}

fn remember(state: &mut AppState, path: PathBuf) {
    state.settings.recent.retain(|p| p != &path);
    state.settings.recent.insert(0, path);
    state.settings.recent.truncate(8);
}

/// Imports a pasted captured body into the form; errors stay in the dialog.
pub fn import_body_text(state: &mut AppState, text: &str) {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(value) => import_body_value(state, &value, "body"),
        Err(e) => import_failed(state, &PromptError::from_serde("", &e).to_string()),
    }
}

fn import_failed(state: &mut AppState, message: &str) {
    if let Some(dialog) = state.import_dialog.as_mut() {
        dialog.error = Some(message.to_string());
    }
    state.set_status(format!("Import failed: {message}"), true);
}

/// Imports a captured body (a JSON value) into the form; `what` names it in the status line.
pub fn import_body_value(state: &mut AppState, value: &serde_json::Value, what: &str) {
    match import_body(value, &state.catalog) {
        Ok(outcome) => {
            let note = if outcome.overridden.is_empty() {
                String::new()
            } else {
                format!(
                    "; kept verbatim as overrides: {}",
                    outcome.overridden.join(", ")
                )
            };
            let target = &outcome.prompt.compile;
            let summary = format!(
                "Imported a {} {what} ({} rules, {} provider){note}",
                target.dialect.id(),
                target.rules,
                target.provider.id()
            );
            state.replace_prompt(outcome.prompt, None);
            state.dirty = true;
            state.import_dialog = None;
            state.set_status(summary, false);
        }
        Err(e) => import_failed(state, &e.to_string()),
    }
}

/// Writes the prompt or an export of column `column` to `path`.
pub fn write(state: &mut AppState, kind: ExportKind, column: usize, path: &Path) {
    let shown = path.display().to_string();
    let bytes = match kind {
        ExportKind::Prompt => state.prompt.to_json_pretty().into_bytes(),
        ExportKind::Json | ExportKind::Har => {
            let Some(view) = state.views.get(column) else {
                return state.set_status("Nothing compiled to export yet", true);
            };
            if kind == ExportKind::Json {
                let mut body = view.compiled.body_json.clone();
                body.push(b'\n');
                body
            } else {
                let started =
                    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
                let log = har_log(&[HarEntry::from_compiled(&view.compiled, &started)], true);
                serde_json::to_vec_pretty(&log).unwrap_or_default()
            }
        }
    };
    match crate::store::har::write_private(path, &bytes) {
        Ok(()) => {
            if kind == ExportKind::Prompt {
                state.prompt_path = Some(path.to_path_buf());
                state.dirty = false;
                remember(state, path.to_path_buf());
            }
            state.file_dialog = None;
            state.set_status(format!("Wrote {} bytes to {shown}", bytes.len()), false);
        }
        Err(e) => state.set_status(format!("Cannot write {shown}: {e}"), true),
    }
}

/// Adds the Responses providers of a Codex `config.toml` to the provider presets.
pub fn import_codex_config(state: &mut AppState, path: &Path) {
    let shown = path.display().to_string();
    let text = match read_limited(path) {
        Ok(t) => t,
        Err(e) => return state.set_status(format!("{shown}: {e}"), true),
    };
    match providers_from_config(&text) {
        Ok(found) => {
            let mut added = Vec::new();
            let mut skipped = Vec::new();
            for entry in found {
                match entry {
                    ImportedProvider::Provider { id, provider } => {
                        state.settings.providers.retain(|p| p.label != id);
                        state.settings.providers.push(ProviderPreset {
                            label: id.clone(),
                            provider,
                        });
                        added.push(id);
                    }
                    ImportedProvider::Skipped { id, reason } => {
                        skipped.push(format!("{id} ({reason})"))
                    }
                }
            }
            state.settings_generation += 1;
            let mut text = format!("Imported providers: {}", added.join(", "));
            if !skipped.is_empty() {
                text.push_str(&format!("; skipped {}", skipped.join(", ")));
            }
            state.set_status(text, false);
        }
        Err(e) => state.set_status(format!("{shown}: {e}"), true),
    }
}
