//! Imports the app runs as jobs: a folder of Codex session logs ("Import Codex sessions…", the
//! store's [`Store::import_rollout_dir`](crate::store::Store::import_rollout_dir) with its
//! progress callback and cancel flag, then the Sessions view shows what arrived) and a model
//! catalog file (`codex debug models` output or Codex's `models_cache.json`, merged into the
//! workbench's catalog with [`ModelCatalog::merge`], saying which models it added or changed).
//!
//! Wiring: [`AppCommand::Import`](super::AppCommand::Import) goes to [`handle`],
//! [`AppEvent::Import`](super::AppEvent::Import) to [`apply`], a finished job to
//! [`job_finished`]; the panel is `crate::ui::imports_panel`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::event::AppEvent;
use super::jobs::{JobContext, JobId};
use super::session_view::{MainView, SessionCommand};
use super::state::AppState;
use crate::core::models::{CatalogMerge, ModelCatalog};
use crate::core::rollout::{Limits, default_sessions_dir};
use crate::store::Writer;
use crate::store::seed::open_seeded;
use crate::store::{DEFAULT_MAX_ROLLOUT_BYTES, FolderImport, FolderProgress};

/// The folder "Import Codex sessions…" starts from: `$CODEX_HOME/sessions`, else
/// `~/.codex/sessions`.
#[allow(
    clippy::disallowed_methods,
    reason = "the app's edge: where Codex keeps its sessions is only in the environment"
)]
pub fn default_codex_sessions() -> Option<PathBuf> {
    let codex_home = std::env::var("CODEX_HOME").ok();
    let home = std::env::var("HOME").ok();
    default_sessions_dir(codex_home.as_deref(), home.as_deref())
}

/// The Codex session import as the app shows it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RolloutImportState {
    /// Its job while it runs.
    pub job: Option<JobId>,
    /// How far it got.
    pub progress: Option<FolderProgress>,
    /// What the last import did, or why it failed.
    pub result: Option<Result<FolderImport, String>>,
}

/// The last catalog import.
#[derive(Debug, Clone, PartialEq)]
pub struct CatalogImport {
    /// The file.
    pub path: PathBuf,
    /// The models it added and changed, or why the file could not be used (with the JSON path).
    pub result: Result<CatalogMerge, String>,
}

/// Both imports.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ImportsState {
    /// Codex session logs.
    pub rollouts: RolloutImportState,
    /// The last catalog import.
    pub catalog: Option<CatalogImport>,
    /// A catalog file is being read.
    pub catalog_busy: bool,
}

/// What the import panels ask for.
#[derive(Debug, Clone, PartialEq)]
pub enum ImportCommand {
    /// Import every Codex rollout under a folder.
    CodexSessions(PathBuf),
    /// Stop the running session import (what was imported stays).
    Cancel,
    /// Merge a catalog file into the workbench's catalog.
    Catalog(PathBuf),
}

/// What the import jobs report.
#[derive(Debug)]
pub enum ImportEvent {
    /// Progress of the session import.
    Progress(FolderProgress),
    /// The session import ended.
    Imported(Result<FolderImport, String>),
    /// A catalog file was read and merged into a copy of the catalog.
    Catalog {
        /// The file.
        path: PathBuf,
        /// The merged catalog and the report, or why not.
        result: Result<(Arc<ModelCatalog>, CatalogMerge), String>,
    },
}

/// Applies an import command (called from `AppState::handle`).
pub fn handle(state: &mut AppState, command: ImportCommand) {
    match command {
        ImportCommand::CodexSessions(dir) => {
            if state.imports.rollouts.job.is_some() {
                return;
            }
            let Some(db) = state.sessions.db_path.clone() else {
                state.imports.rollouts.result = Some(Err("no session database".to_string()));
                return;
            };
            let spawned = state.workers.spawn("import-rollouts", move |ctx| {
                let result = import_sessions(ctx, &db, &dir);
                ctx.report(AppEvent::Import(ImportEvent::Imported(result)));
            });
            let rollouts = &mut state.imports.rollouts;
            match spawned {
                Ok(job) => {
                    *rollouts = RolloutImportState {
                        job: Some(job),
                        ..RolloutImportState::default()
                    }
                }
                Err(e) => rollouts.result = Some(Err(e)),
            }
        }
        ImportCommand::Cancel => {
            if let Some(job) = state.imports.rollouts.job {
                state.workers.cancel(job);
            }
        }
        ImportCommand::Catalog(path) => {
            let catalog = Arc::clone(&state.catalog);
            let spawned = state.workers.spawn("import-catalog", move |ctx| {
                let result = merge_catalog(&catalog, &path);
                ctx.report(AppEvent::Import(ImportEvent::Catalog { path, result }));
            });
            match spawned {
                Ok(_) => state.imports.catalog_busy = true,
                Err(e) => state.set_status(e, true),
            }
        }
    }
}

/// The folder import, on the database's writer thread (the one writer of the file: live
/// recordings queue meanwhile), waited for on a worker: progress after each thread; the job's
/// cancel stops it.
fn import_sessions(ctx: &JobContext, db: &Path, dir: &Path) -> Result<FolderImport, String> {
    drop(open_seeded(db).map_err(|e| e.to_string())?);
    let writer = Writer::open(db).map_err(|e| e.to_string())?;
    let (ctx_job, dir) = (ctx.clone(), dir.to_path_buf());
    let done = writer.run(move |store| {
        let cancel = AtomicBool::new(false);
        let mut progress = |p: &FolderProgress| {
            if !ctx_job.report(AppEvent::Import(ImportEvent::Progress(p.clone()))) {
                cancel.store(true, Ordering::Relaxed);
            }
        };
        store.import_rollout_dir(
            &dir,
            DEFAULT_MAX_ROLLOUT_BYTES,
            &Limits::default(),
            &mut progress,
            &cancel,
        )
    });
    let mut report = done
        .recv()
        .map_err(|_| "the database's writer stopped before the import ran".to_string())?
        .map_err(|e| e.to_string())?;
    report.cancelled |= ctx.is_cancelled();
    Ok(report)
}

/// Reads `path` (bounded) and merges it into a copy of `catalog`.
fn merge_catalog(
    catalog: &ModelCatalog,
    path: &Path,
) -> Result<(Arc<ModelCatalog>, CatalogMerge), String> {
    let shown = path.display();
    let text = super::files::read_limited(path).map_err(|e| format!("{shown}: {e}"))?;
    let incoming = ModelCatalog::from_json(&text).map_err(|e| format!("{shown}: {e}"))?;
    let mut merged = catalog.clone();
    let source = path
        .file_name()
        .map_or_else(|| shown.to_string(), |n| n.to_string_lossy().into_owned());
    let report = merged.merge(incoming, &source);
    Ok((Arc::new(merged), report))
}

/// "Added gpt-x, gpt-y; changed gpt-5.5" (or that nothing changed).
pub fn merge_text(merge: &CatalogMerge) -> String {
    let mut parts = Vec::new();
    if !merge.added.is_empty() {
        parts.push(format!("added {}", merge.added.join(", ")));
    }
    if !merge.changed.is_empty() {
        parts.push(format!("changed {}", merge.changed.join(", ")));
    }
    if parts.is_empty() {
        "no models added or changed".to_string()
    } else {
        parts.join("; ")
    }
}

/// Applies an import job's report (called from `AppState::apply_event`).
pub fn apply(state: &mut AppState, event: ImportEvent) {
    match event {
        ImportEvent::Progress(progress) => state.imports.rollouts.progress = Some(progress),
        ImportEvent::Imported(result) => {
            let text = match &result {
                Ok(report) => format!(
                    "Imported {} Codex sessions, {} grown ({} skipped, {} failed){}",
                    report
                        .rollouts
                        .iter()
                        .filter(|r| !r.skipped && r.appended == 0)
                        .count(),
                    report.rollouts.iter().filter(|r| r.appended > 0).count(),
                    report.rollouts.iter().filter(|r| r.skipped).count(),
                    report.failed.len(),
                    if report.cancelled { ", cancelled" } else { "" }
                ),
                Err(e) => format!("Import of Codex sessions failed: {e}"),
            };
            state.set_status(text, result.is_err());
            let show = result.is_ok();
            state.imports.rollouts.result = Some(result);
            if show {
                show_sessions(state);
            }
        }
        ImportEvent::Catalog { path, result } => {
            state.imports.catalog_busy = false;
            let result = match result {
                Ok((catalog, merge)) => {
                    state.catalog = catalog;
                    // The views depend on the catalog: compile again.
                    state.settings_generation += 1;
                    state.set_status(
                        format!("Catalog {}: {}", path.display(), merge_text(&merge)),
                        false,
                    );
                    Ok(merge)
                }
                Err(e) => {
                    state.set_status(e.clone(), true);
                    Err(e)
                }
            };
            state.imports.catalog = Some(CatalogImport { path, result });
        }
    }
}

/// Shows what arrived: the Sessions view at its first page, read again through the store's
/// one change event.
fn show_sessions(state: &mut AppState) {
    super::session_view::handle(state, SessionCommand::ShowView(MainView::Sessions));
    state.sessions.page_offset = 0;
    state.apply_event(AppEvent::StoreChanged(super::sessions::StoreChange {
        session: None,
        open: false,
    }));
}

/// A job ended: when it was the session import, it is over. A cancelled import cannot report
/// its result (a cancelled job's reports are dropped): what it imported is shown from the store.
pub fn job_finished(state: &mut AppState, job: JobId) {
    let rollouts = &mut state.imports.rollouts;
    if rollouts.job != Some(job) {
        return;
    }
    rollouts.job = None;
    if rollouts.result.is_none() {
        let done = rollouts.progress.as_ref().map_or(0, |p| p.done);
        let total = rollouts.progress.as_ref().map_or(0, |p| p.total);
        rollouts.result = Some(Ok(FolderImport {
            cancelled: true,
            ..FolderImport::default()
        }));
        state.set_status(
            format!("Import of Codex sessions cancelled after {done} of {total} files; what was imported stays"),
            false,
        );
        show_sessions(state);
    }
}
