//! File work of the workbench, as functions the workers run (never on the UI thread): read a
//! Prompt file (or import a captured body opened by mistake), import a pasted body, read a Codex
//! `config.toml`, and the exact bytes of each export (owner-readable when written).

use std::io::Read as _;
use std::path::Path;

use super::event::OpenedFile;
use super::settings::ExportKind;
use super::state::AppState;
use crate::core::codex_config::{ImportedProvider, providers_from_config};
use crate::core::error::PromptError;
use crate::core::export::{HarEntry, har_log};
use crate::core::import::{ImportOutcome, import_body};
use crate::core::models::ModelCatalog;
use crate::core::prompt::Prompt;

/// Largest file the workbench opens.
pub const MAX_OPEN_BYTES: u64 = 64 * 1024 * 1024;

/// Reads at most [`MAX_OPEN_BYTES`] of UTF-8 text from `path` (bounded while reading).
pub fn read_limited(path: &Path) -> Result<String, String> {
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    file.take(MAX_OPEN_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_OPEN_BYTES {
        return Err(format!(
            "larger than the {} MiB the workbench opens",
            MAX_OPEN_BYTES / (1024 * 1024)
        ));
    }
    String::from_utf8(bytes).map_err(|e| format!("not UTF-8 text ({e})"))
}

/// Reads a Prompt file; a file that is a captured request body instead is imported.
pub fn read_prompt_file(path: &Path, catalog: &ModelCatalog) -> Result<OpenedFile, String> {
    let shown = path.display();
    let text = read_limited(path).map_err(|e| format!("{shown}: {e}"))?;
    match Prompt::from_json_str(&text) {
        Ok(prompt) => Ok(OpenedFile::Prompt(Box::new(prompt))),
        Err(prompt_err) => {
            // Not a Prompt: maybe a captured body.
            if let Ok(value) = serde_json::from_str::<serde_json::Value>(&text)
                && value.get("input").is_some()
                && let Ok(outcome) = import_body(&value, catalog)
            {
                return Ok(OpenedFile::Body(Box::new(outcome)));
            }
            Err(format!("{shown}: {prompt_err}"))
        }
    }
}

/// Imports a captured body given as JSON text.
pub fn import_body_text(text: &str, catalog: &ModelCatalog) -> Result<ImportOutcome, String> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| PromptError::from_serde("", &e).to_string())?;
    import_body(&value, catalog).map_err(|e| e.to_string())
}

/// Reads the providers of a Codex `config.toml`.
pub fn read_codex_config(path: &Path) -> Result<Vec<ImportedProvider>, String> {
    let shown = path.display();
    let text = read_limited(path).map_err(|e| format!("{shown}: {e}"))?;
    providers_from_config(&text).map_err(|e| format!("{shown}: {e}"))
}

/// The exact bytes an export of column `column` writes: the Prompt file, the body exactly as
/// the view's size counts it (no added newline), or a HAR 1.2 log (secrets redacted).
pub fn export_bytes(state: &AppState, kind: ExportKind, column: usize) -> Result<Vec<u8>, String> {
    if kind == ExportKind::Prompt {
        return Ok(state.prompt.to_json_pretty().into_bytes());
    }
    let Some(view) = state.views.get(column) else {
        return Err("Nothing compiled to export yet".to_string());
    };
    Ok(match kind {
        ExportKind::Json => view.export_text().into_owned().into_bytes(),
        _ => {
            let started = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
            let log = har_log(&[HarEntry::from_compiled(&view.compiled, &started)], true);
            serde_json::to_vec_pretty(&log).map_err(|e| e.to_string())?
        }
    })
}
