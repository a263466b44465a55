//! The compile worker: a background thread that compiles the prompt into the chosen columns,
//! renders each view's text once (lines, adjacent-column diff marks, sizes) and then counts
//! tokens, so the UI thread never serializes or lays out megabytes. Jobs are "latest wins": an
//! edit made while compiling replaces the waiting job.

use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

use super::event::AppEvent;
use super::jobs::EventSender;
use super::settings::ViewKind;
use crate::core::compile::{CompiledRequest, compile_views};
use crate::core::json::JsonMap;
use crate::core::json_diff::{Aligned, ColumnRows, align_objects};
use crate::core::models::ModelInfo;
use crate::core::prefix::Tokenizer;
use crate::core::prompt::{Dialect, Prompt};
use crate::core::provider::Provider;
use crate::core::rules::CompileRules;

/// A column with everything needed to compile it.
#[derive(Debug, Clone)]
pub struct ResolvedColumn {
    /// Header text.
    pub label: String,
    /// Provider to compile for.
    pub provider: Provider,
    /// Standard or Lite.
    pub dialect: Dialect,
    /// What to show.
    pub view: ViewKind,
}

/// One compile request.
#[derive(Debug, Clone)]
pub struct CompileJob {
    /// Prompt revision.
    pub revision: u64,
    /// Settings generation.
    pub settings_generation: u64,
    /// The prompt (shared, not copied).
    pub prompt: Arc<Prompt>,
    /// Its model's capabilities.
    pub model: ModelInfo,
    /// Rules in force.
    pub rules: CompileRules,
    /// Columns to produce.
    pub columns: Vec<ResolvedColumn>,
}

/// One compiled column, rendered for display.
#[derive(Debug, Clone)]
pub struct ViewResult {
    /// Header text.
    pub label: String,
    /// What it shows.
    pub view: ViewKind,
    /// The compiled request (for export and notes).
    pub compiled: Arc<CompiledRequest>,
    /// The shown JSON object (body — shared with `compiled`, not copied — frame, or headers).
    pub value: Arc<JsonMap>,
    /// The rows shown: this column's part of the grid shared with the columns of the same kind
    /// (structural diff against the column to its left).
    pub aligned: Arc<Aligned>,
    /// Which column of `aligned` this view is.
    pub aligned_column: usize,
    /// Size of what goes on the wire for this view, in bytes.
    pub bytes: usize,
    /// o200k_base tokens of the compact JSON, once counted.
    pub tokens: Option<usize>,
}

impl ViewResult {
    /// The exact bytes this view stands for, as text: the body's wire JSON, or the compact
    /// WebSocket frame or headers object (what `promptwire compile --ws/--headers` prints).
    /// Exports and copies use these, unchanged.
    pub fn export_text(&self) -> std::borrow::Cow<'_, str> {
        match self.view {
            // A credential the Prompt carries (a secret body field) is never copied or
            // exported in clear; real bodies pass unchanged.
            ViewKind::Body => match String::from_utf8_lossy(&self.compiled.body_json) {
                std::borrow::Cow::Borrowed(text) => crate::core::redact::redacted(text),
                std::borrow::Cow::Owned(text) => {
                    crate::core::redact::redacted(&text).into_owned().into()
                }
            },
            ViewKind::WsFrame | ViewKind::Headers => serde_json::to_string(&*self.value)
                .unwrap_or_default()
                .into(),
        }
    }

    /// Number of rows shown (placeholders included).
    pub fn line_count(&self) -> usize {
        self.aligned.row_count()
    }

    /// This column's rows.
    pub fn rows(&self) -> &ColumnRows {
        &self.aligned.columns[self.aligned_column]
    }

    /// Row `i`'s text ("" for a placeholder).
    pub fn line(&self, i: usize) -> &str {
        self.rows()
            .text
            .get(i)
            .and_then(|t| t.as_deref())
            .unwrap_or("")
    }
}

#[derive(Default)]
struct Slot {
    job: Option<CompileJob>,
    shutdown: bool,
}

/// Handle to the background compiler.
pub struct CompileWorker {
    slot: Arc<(Mutex<Slot>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for CompileWorker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CompileWorker")
    }
}

impl CompileWorker {
    /// Starts the worker thread; it reports through `events`.
    pub fn start(events: EventSender) -> Self {
        let slot: Arc<(Mutex<Slot>, Condvar)> = Arc::default();
        let thread = {
            let slot = Arc::clone(&slot);
            #[allow(
                clippy::disallowed_methods,
                reason = "the worker bridge: the compile worker's one thread"
            )]
            std::thread::Builder::new()
                .name("promptwire-compile".to_string())
                .spawn(move || run(&slot, &events))
                .map_err(|e| eprintln!("promptwire: cannot start the compile worker: {e}"))
                .ok()
        };
        Self { slot, thread }
    }

    /// Queues `job`, replacing any job still waiting.
    pub fn submit(&self, job: CompileJob) {
        let (lock, cvar) = &*self.slot;
        if let Ok(mut slot) = lock.lock() {
            slot.job = Some(job);
            cvar.notify_one();
        }
    }
}

impl Drop for CompileWorker {
    fn drop(&mut self) {
        let (lock, cvar) = &*self.slot;
        if let Ok(mut slot) = lock.lock() {
            slot.shutdown = true;
            cvar.notify_one();
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn next_job(slot: &(Mutex<Slot>, Condvar)) -> Option<CompileJob> {
    let (lock, cvar) = slot;
    let mut guard = lock.lock().ok()?;
    loop {
        if guard.shutdown {
            return None;
        }
        if let Some(job) = guard.job.take() {
            return Some(job);
        }
        guard = cvar.wait(guard).ok()?;
    }
}

fn has_waiting_job(slot: &(Mutex<Slot>, Condvar)) -> bool {
    slot.0
        .lock()
        .map(|s| s.job.is_some() || s.shutdown)
        .unwrap_or(true)
}

fn run(slot: &(Mutex<Slot>, Condvar), events: &EventSender) {
    while let Some(job) = next_job(slot) {
        let started = Instant::now();
        let result = compile_job(&job);
        let millis = started.elapsed().as_secs_f64() * 1000.0;
        let kinds: Vec<ViewKind> = job.columns.iter().map(|c| c.view).collect();
        let (revision, settings_generation) = (job.revision, job.settings_generation);
        // Let go of the prompt before counting tokens: while the worker shares it, each edit
        // on the UI thread copies the whole prompt (`app/edit.rs`).
        drop(job);
        let views_for_tokens = result.as_ref().ok().cloned();
        if !events.send(
            AppEvent::Compiled {
                revision,
                settings_generation,
                result,
                millis,
            },
            None,
        ) {
            return;
        }
        let Some(views) = views_for_tokens else {
            continue;
        };
        let mut tokens: Vec<usize> = Vec::with_capacity(views.len());
        for (k, (view, kind)) in views.iter().zip(&kinds).enumerate() {
            if has_waiting_job(slot) {
                break;
            }
            // Columns that show the same bytes (e.g. OpenAI vs compatible bodies) share a count.
            let same = (0..k).find(|&j| kinds[j] == *kind && views[j].value == view.value);
            let count = match same.and_then(|j| tokens.get(j)) {
                Some(&n) => n,
                None => count_tokens(view, *kind),
            };
            tokens.push(count);
        }
        if tokens.len() == views.len()
            && !events.send(
                AppEvent::Tokens {
                    revision,
                    settings_generation,
                    tokens,
                },
                None,
            )
        {
            return;
        }
    }
}

/// Compiles and renders every column of `job`.
pub fn compile_job(job: &CompileJob) -> Result<Vec<ViewResult>, String> {
    let targets: Vec<(&Provider, Dialect)> = job
        .columns
        .iter()
        .map(|c| (&c.provider, c.dialect))
        .collect();
    let compiled =
        compile_views(&job.prompt, &job.model, &job.rules, &targets).map_err(|e| e.to_string())?;
    let shown: Vec<(Arc<JsonMap>, usize)> = job
        .columns
        .iter()
        .zip(&compiled)
        .map(|(column, compiled)| match column.view {
            ViewKind::Body => (compiled.body.shared(), compiled.wire_body().len()),
            ViewKind::WsFrame => {
                let frame = compiled.ws_frame();
                let bytes = serde_json::to_vec(&frame).map(|b| b.len()).unwrap_or(0);
                (Arc::new(frame), bytes)
            }
            ViewKind::Headers => {
                let headers = compiled.headers_json();
                let bytes = serde_json::to_vec(&headers).map(|b| b.len()).unwrap_or(0);
                (Arc::new(headers), bytes)
            }
        })
        .collect();
    // One grid per kind of view: bodies line up with bodies, headers with headers.
    let mut grids: Vec<(ViewKind, Arc<Aligned>, Vec<usize>)> = Vec::new();
    for kind in ViewKind::ALL {
        let members: Vec<usize> = (0..job.columns.len())
            .filter(|&k| job.columns[k].view == kind)
            .collect();
        if members.is_empty() {
            continue;
        }
        let maps: Vec<Option<&JsonMap>> = members.iter().map(|&k| Some(&*shown[k].0)).collect();
        grids.push((kind, Arc::new(align_objects(&maps)), members));
    }
    let views = job
        .columns
        .iter()
        .zip(compiled)
        .zip(shown)
        .enumerate()
        .map(|(k, ((column, compiled), (value, bytes)))| {
            let (aligned, aligned_column) = grids
                .iter()
                .find_map(|(kind, grid, members)| {
                    (*kind == column.view)
                        .then(|| members.iter().position(|&m| m == k))
                        .flatten()
                        .map(|i| (Arc::clone(grid), i))
                })
                .unwrap_or_default();
            ViewResult {
                label: column.label.clone(),
                view: column.view,
                compiled: Arc::new(compiled),
                value,
                aligned,
                aligned_column,
                bytes,
                tokens: None,
            }
        })
        .collect();
    Ok(views)
}

/// o200k_base token count of what the view sends (compact JSON, or the header lines).
pub fn count_tokens(view: &ViewResult, kind: ViewKind) -> usize {
    debug_assert_eq!(kind, view.view);
    let text = view.export_text();
    usize::try_from(Tokenizer::o200k().count(&text)).unwrap_or(usize::MAX)
}
