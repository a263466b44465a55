//! [`AppState::poll`]: once per frame (in `logic()`, before the UI), drain what the workers
//! reported — within a time budget, asking for another frame when more is waiting — and hand
//! the compile worker the current prompt when it changed.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::event::{AppEvent, OpenedFile, PromptSource};
use super::settings::{ExportKind, ProviderPreset};
use super::state::{AppState, Dialog};
use super::worker::CompileJob;
use crate::core::codex_config::ImportedProvider;

/// Time the UI thread spends applying worker events per frame.
pub const EVENT_BUDGET: Duration = Duration::from_millis(10);

impl AppState {
    /// Applies queued worker events and submits a compile when the prompt or settings changed;
    /// returns true when events are still waiting (the caller asks for a repaint).
    pub fn poll(&mut self) -> bool {
        let started = Instant::now();
        let mut more = false;
        while let Some(event) = self.workers.try_next() {
            self.apply_event(event);
            if started.elapsed() >= EVENT_BUDGET {
                more = true;
                break;
            }
        }
        if !self.requested_revision_is_current() {
            self.submit_compile();
        }
        super::send::turn::check_prefix(self);
        // The Traffic view's analyses wait for a burst to settle: started once it has.
        super::traffic::poll(self);
        more
    }

    fn submit_compile(&mut self) {
        self.requested_revision = Some(self.revision);
        self.requested_settings = Some(self.settings_generation);
        let (rules, columns) = match self.resolved_columns() {
            Ok(resolved) => resolved,
            Err(e) => {
                self.compile_error = Some(e);
                return;
            }
        };
        let model = self.catalog.lookup(&self.prompt.model);
        self.compiler.submit(CompileJob {
            revision: self.revision,
            settings_generation: self.settings_generation,
            prompt: Arc::clone(&self.prompt),
            model,
            rules,
            columns,
        });
        self.requested_revision = Some(self.revision);
        self.requested_settings = Some(self.settings_generation);
    }

    /// Applies one worker event.
    pub fn apply_event(&mut self, event: AppEvent) {
        match event {
            AppEvent::Compiled {
                revision,
                settings_generation,
                result,
                millis,
            } => {
                if revision < self.views_revision {
                    return;
                }
                self.compile_millis = millis;
                match result {
                    Ok(views) => {
                        self.views = views;
                        self.views_revision = revision;
                        self.views_settings = settings_generation;
                        self.compile_error = None;
                    }
                    // Keep the last good compile on screen.
                    Err(e) => self.compile_error = Some(e),
                }
            }
            AppEvent::Tokens {
                revision, tokens, ..
            } => {
                if revision == self.views_revision && tokens.len() == self.views.len() {
                    for (view, n) in self.views.iter_mut().zip(tokens) {
                        view.tokens = Some(n);
                    }
                }
            }
            AppEvent::PromptLoaded { source, result } => self.prompt_loaded(source, result),
            AppEvent::Opened { path, result } => super::open::opened(self, path, result),
            AppEvent::HarImported { path, result } => {
                super::open::har_imported(self, &path, result);
            }
            AppEvent::FileWritten {
                path,
                kind,
                prompt,
                result,
            } => {
                let shown = path.display().to_string();
                match result {
                    Ok(n) => {
                        if kind == ExportKind::Prompt {
                            self.saved = prompt;
                            self.prompt_path = Some(path.clone());
                            self.source = Some(PromptSource::File(path.clone()));
                            self.remember(path);
                        }
                        if matches!(self.dialog, Some(Dialog::File { .. })) {
                            self.dialog = None;
                        }
                        self.set_status(format!("Wrote {n} bytes to {shown}"), false);
                        self.continue_after_save(kind, true);
                    }
                    Err(super::files::WriteError::Exists) => {
                        // Asked in the dialog; what "Save first" was to do waits for it.
                        let text = format!("{shown} exists: replace it?");
                        if let Some(Dialog::File { replace, note, .. }) = self.dialog.as_mut() {
                            *replace = Some(path);
                            *note = None;
                        }
                        self.set_status(text, false);
                        self.continue_after_save(kind, false);
                    }
                    Err(super::files::WriteError::Failed(e)) => {
                        if let Some(Dialog::File { note, .. }) = self.dialog.as_mut() {
                            *note = Some(format!("Cannot write: {e}"));
                        }
                        self.set_status(format!("Cannot write {shown}: {e}"), true);
                        self.continue_after_save(kind, false);
                    }
                }
            }
            AppEvent::SessionsModel(event) => super::sessions::apply(self, event),
            AppEvent::StoreChanged(change) => super::sessions::store_changed(self, change),
            AppEvent::ProvidersImported { path, result } => self.providers_imported(&path, result),
            AppEvent::PathCompleted(completed) => {
                if let Some(Dialog::File { completion, .. }) = self.dialog.as_mut() {
                    let count = completion.as_ref().map_or(1, |(n, _)| n + 1);
                    *completion = Some((count, completed));
                }
            }
            AppEvent::PathChosen { path, unavailable } => {
                if let Some(Dialog::File {
                    path: suggested,
                    note,
                    ..
                }) = self.dialog.as_mut()
                {
                    match path {
                        Some(p) => {
                            *suggested = p;
                            *note = None;
                            self.dialog_generation += 1;
                        }
                        None if unavailable => {
                            *note = Some(
                                "No system file dialog is available here: type the path instead."
                                    .to_string(),
                            );
                        }
                        None => {}
                    }
                }
            }
            AppEvent::Progress { .. } => {}
            AppEvent::JobFinished { job } => {
                super::proxy::job_finished(self, job);
                super::imports::job_finished(self, job);
                super::open::job_finished(self, job);
                super::otel::job_finished(self, job);
            }
            AppEvent::Failed { what, error } => self.set_status(format!("{what}: {error}"), true),
            AppEvent::Sessions(event) => super::session_view::apply(self, event),
            AppEvent::Record(event) => super::proxy::apply(self, event),
            AppEvent::Import(event) => super::imports::apply(self, event),
            AppEvent::Send(report) => super::send::apply(self, report),
            AppEvent::Traffic(event) => super::traffic::apply(self, event),
            AppEvent::Otel(event) => super::otel::apply(self, event),
        }
    }

    pub(crate) fn prompt_loaded(
        &mut self,
        source: PromptSource,
        result: Result<OpenedFile, String>,
    ) {
        if matches!(source, PromptSource::Stored { .. }) {
            self.sessions.loading = self.sessions.loading.saturating_sub(1);
        }
        let outcome = match result {
            Ok(outcome) => outcome,
            Err(e) => {
                if let (PromptSource::Pasted, Some(Dialog::Import { error, busy })) =
                    (&source, self.dialog.as_mut())
                {
                    *error = Some(e.clone());
                    *busy = false;
                }
                return self.set_status(format!("Cannot load: {e}"), true);
            }
        };
        let what = match &source {
            PromptSource::File(path) => path.display().to_string(),
            PromptSource::Pasted => "the body".to_string(),
            PromptSource::Stored {
                session, position, ..
            } => format!("session #{session} turn {position}"),
        };
        let text = match outcome {
            OpenedFile::Prompt(prompt) => {
                self.replace_prompt(*prompt, Some(source.clone()));
                if let PromptSource::File(path) = &source {
                    self.remember(path.clone());
                }
                format!("Opened {what}")
            }
            OpenedFile::Body(outcome) => {
                let note = if outcome.overridden.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; kept verbatim as overrides: {}",
                        outcome.overridden.join(", ")
                    )
                };
                let target = &outcome.prompt.compile;
                let text = format!(
                    "Imported {what} as a {} request ({} rules, {} provider){note}",
                    target.dialect.id(),
                    target.rules,
                    target.provider.id()
                );
                // A body opened as a file is not a Prompt file: saving asks for a name.
                let source = match source {
                    PromptSource::File(_) => PromptSource::Pasted,
                    other => other,
                };
                let mut prompt = outcome.prompt;
                if matches!(source, PromptSource::Pasted) {
                    keep_base_url(&mut prompt.compile, &self.prompt.compile);
                }
                self.replace_prompt(prompt, Some(source));
                text
            }
        };
        if matches!(
            self.dialog,
            Some(Dialog::Import { .. } | Dialog::File { .. })
        ) {
            self.dialog = None;
        }
        self.set_status(text, false);
    }

    fn remember(&mut self, path: std::path::PathBuf) {
        let recent = &mut self.settings.recent;
        recent.retain(|p| p != &path);
        recent.insert(0, path);
        recent.truncate(8);
    }

    fn providers_imported(
        &mut self,
        path: &std::path::Path,
        result: Result<Vec<ImportedProvider>, String>,
    ) {
        let found = match result {
            Ok(found) => found,
            Err(e) => return self.set_status(e, true),
        };
        let mut added = Vec::new();
        let mut skipped = Vec::new();
        for entry in found {
            match entry {
                ImportedProvider::Provider { id, provider } => {
                    self.settings.providers.retain(|p| p.label != id);
                    self.settings.providers.push(ProviderPreset {
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
        self.settings_generation += 1;
        let mut text = format!(
            "Imported providers from {}: {}",
            path.display(),
            if added.is_empty() {
                "none".to_string()
            } else {
                added.join(", ")
            }
        );
        if !skipped.is_empty() {
            text.push_str(&format!("; skipped {}", skipped.join(", ")));
        }
        self.set_status(text, false);
    }
}

/// A body names no URL: the imported prompt keeps the URL the workbench sends to (not the
/// preset URL of the provider kind the body's shape matched, e.g. Ollama's port).
fn keep_base_url(
    imported: &mut crate::core::prompt::CompileTarget,
    current: &crate::core::prompt::CompileTarget,
) {
    if imported.base_url.is_some() {
        return;
    }
    let Ok(resolved) = crate::core::target::resolve_target(current, &Default::default()) else {
        return;
    };
    let preset = crate::core::provider::Provider::preset(imported.provider);
    let kept = crate::core::provider::Provider {
        base_url: resolved.provider.base_url.clone(),
        ..preset.clone()
    };
    // An Azure URL changes what the body compiles to (store): kept only when the shapes agree.
    if kept.base_url != preset.base_url
        && kept.is_azure_responses_endpoint() == preset.is_azure_responses_endpoint()
    {
        imported.base_url = Some(kept.base_url);
    }
}
