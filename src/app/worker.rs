//! The compile worker: a background thread that compiles the prompt into the chosen columns,
//! renders each view's text once (lines, adjacent-column diff marks, sizes) and then counts
//! tokens, so the UI thread never serializes or lays out megabytes. Jobs are "latest wins": an
//! edit made while compiling replaces the waiting job.

use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::event::AppEvent;
use super::jobs::EventSender;
use super::settings::ViewKind;
use crate::core::compile::{CompiledRequest, compile_views};
use crate::core::json::JsonMap;
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
    /// The shown text (pretty JSON, or `name: value` lines).
    pub text: Arc<str>,
    /// Byte offset of each line start in `text`.
    pub line_starts: Arc<[usize]>,
    /// Per line: differs from the column to the left.
    pub changed: Arc<[bool]>,
    /// Size of what goes on the wire for this view, in bytes.
    pub bytes: usize,
    /// o200k_base tokens of the compact JSON, once counted.
    pub tokens: Option<usize>,
}

impl ViewResult {
    /// The exact bytes this view stands for, as text: the body's wire JSON, the compact
    /// WebSocket frame, or the header lines as shown. Exports and copies use these, unchanged.
    pub fn export_text(&self) -> std::borrow::Cow<'_, str> {
        match self.view {
            ViewKind::Body => String::from_utf8_lossy(&self.compiled.body_json),
            ViewKind::WsFrame => serde_json::to_string(&*self.value)
                .unwrap_or_default()
                .into(),
            ViewKind::Headers => std::borrow::Cow::Borrowed(&*self.text),
        }
    }

    /// Number of lines.
    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// Line `i` without its newline.
    pub fn line(&self, i: usize) -> &str {
        let start = self.line_starts.get(i).copied().unwrap_or(self.text.len());
        let end = self
            .line_starts
            .get(i + 1)
            .map_or(self.text.len(), |next| next.saturating_sub(1));
        self.text.get(start..end.max(start)).unwrap_or("")
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
        let views_for_tokens = result.as_ref().ok().cloned();
        if !events.send(
            AppEvent::Compiled {
                revision: job.revision,
                settings_generation: job.settings_generation,
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
            let same = (0..k).find(|&j| kinds[j] == *kind && views[j].text == view.text);
            let count = match same.and_then(|j| tokens.get(j)) {
                Some(&n) => n,
                None => count_tokens(view, *kind),
            };
            tokens.push(count);
        }
        if tokens.len() == views.len()
            && !events.send(
                AppEvent::Tokens {
                    revision: job.revision,
                    settings_generation: job.settings_generation,
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
    let mut views: Vec<ViewResult> = Vec::with_capacity(compiled.len());
    for (column, compiled) in job.columns.iter().zip(compiled) {
        let (value, text, bytes) = match column.view {
            ViewKind::Body => (
                Arc::clone(&compiled.body),
                serde_json::to_string_pretty(&compiled.body).unwrap_or_default(),
                compiled.wire_body().len(),
            ),
            ViewKind::WsFrame => {
                let frame = compiled.ws_frame();
                let bytes = serde_json::to_vec(&frame).map(|b| b.len()).unwrap_or(0);
                let text = serde_json::to_string_pretty(&frame).unwrap_or_default();
                (Arc::new(frame), text, bytes)
            }
            ViewKind::Headers => {
                let text: String = compiled
                    .headers
                    .iter()
                    .map(|h| format!("{}: {}\n", h.name, h.value))
                    .collect();
                let text = format!("POST {}\n{text}", compiled.url);
                let bytes = text.len();
                (Arc::new(compiled.headers_json()), text, bytes)
            }
        };
        let line_starts: Vec<usize> = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .filter(|&i| i < text.len() || i == 0)
            .collect();
        let changed = match views.last() {
            Some(prev) if prev.view == column.view => {
                changed_lines(&prev.text, &text, line_starts.len())
            }
            _ => vec![false; line_starts.len()],
        };
        views.push(ViewResult {
            label: column.label.clone(),
            view: column.view,
            compiled: Arc::new(compiled),
            value,
            text: Arc::from(text),
            line_starts: Arc::from(line_starts),
            changed: Arc::from(changed),
            bytes,
            tokens: None,
        });
    }
    Ok(views)
}

/// Marks the lines of `new` that are not equal lines of `old` (Myers diff, bounded in time).
fn changed_lines(old: &str, new: &str, new_lines: usize) -> Vec<bool> {
    let mut changed = vec![false; new_lines];
    let diff = similar::TextDiff::configure()
        .timeout(Duration::from_millis(300))
        .diff_lines(old, new);
    for op in diff.ops() {
        let (tag, _old, new_range) = op.as_tag_tuple();
        if tag != similar::DiffTag::Equal {
            for line in new_range {
                if let Some(flag) = changed.get_mut(line) {
                    *flag = true;
                }
            }
        }
    }
    changed
}

/// o200k_base token count of what the view sends (compact JSON, or the header lines).
pub fn count_tokens(view: &ViewResult, kind: ViewKind) -> usize {
    let text: std::borrow::Cow<'_, str> = match kind {
        ViewKind::Body => String::from_utf8_lossy(&view.compiled.body_json),
        ViewKind::WsFrame => view.export_text(),
        ViewKind::Headers => std::borrow::Cow::Borrowed(&*view.text),
    };
    usize::try_from(Tokenizer::o200k().count(&text)).unwrap_or(usize::MAX)
}
