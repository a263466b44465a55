//! The worker bridge: every job that takes time (file reads and writes, store queries, body
//! imports, native file dialogs — and later sending, replaying and proxying) runs off the UI
//! thread and reports [`AppEvent`]s through ONE bounded channel, which the app drains in
//! `logic()` under a time budget. CPU and disk jobs run on plain threads ([`Workers::spawn`]);
//! network jobs run on the app's one tokio runtime ([`Workers::spawn_network`]). Each job gets
//! a [`JobContext`]: it reports events, checks for cancellation, and says how far it got.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, TrySendError, sync_channel};
use std::time::Duration;

use super::event::AppEvent;

/// Events that may wait in the channel; a worker that finds it full waits for the UI to drain.
pub const EVENT_QUEUE: usize = 256;

/// Identifies a running job.
pub type JobId = u64;

/// The one way stale worker results are dropped: a counter per kind of request (a list read, an
/// analysis, a send…). Starting a request takes [`Generation::bump`] and hands the number to its
/// job; the job's result carries it back and is applied only while [`Generation::is_current`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Generation(u64);

impl Generation {
    /// Starts a new request: the number its result must carry.
    pub fn bump(&mut self) -> u64 {
        self.0 += 1;
        self.0
    }

    /// The latest request's number.
    pub fn current(self) -> u64 {
        self.0
    }

    /// True when a result carrying `generation` belongs to the latest request.
    pub fn is_current(self, generation: u64) -> bool {
        self.0 == generation
    }
}

/// Sends [`AppEvent`]s to the UI thread and asks for a repaint after each one.
#[derive(Clone)]
pub struct EventSender {
    tx: SyncSender<AppEvent>,
    ctx: Option<egui::Context>,
}

impl EventSender {
    /// Sends `event`, waiting while the channel is full; false when the app has gone away (the
    /// worker should then stop) or `cancel` was set while waiting.
    pub fn send(&self, event: AppEvent, cancel: Option<&AtomicBool>) -> bool {
        let mut event = event;
        loop {
            match self.tx.try_send(event) {
                Ok(()) => break,
                Err(TrySendError::Full(back)) => {
                    if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                        return false;
                    }
                    event = back;
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(TrySendError::Disconnected(_)) => return false,
            }
        }
        if let Some(ctx) = &self.ctx {
            // Coalesce bursts (a stream's events) into one repaint every 10 ms.
            ctx.request_repaint_after(Duration::from_millis(10));
        }
        true
    }
}

/// What a job gets: its id, a way to report, and its cancel flag (a clone reports for the same
/// job, e.g. from a blocking helper thread of a network job).
#[derive(Clone)]
pub struct JobContext {
    /// This job.
    pub id: JobId,
    events: EventSender,
    cancel: Arc<AtomicBool>,
}

impl JobContext {
    /// Reports `event`; false when the job should stop (cancelled, or the app closed).
    pub fn report(&self, event: AppEvent) -> bool {
        !self.is_cancelled() && self.events.send(event, Some(&self.cancel))
    }

    /// Reports progress (`done` of `total` steps; `total` 0 when unknown).
    pub fn progress(&self, text: impl Into<String>, done: u64, total: u64) -> bool {
        self.report(AppEvent::Progress {
            job: self.id,
            text: text.into(),
            done,
            total,
        })
    }

    /// The user (or the app) asked this job to stop.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }
}

/// A job still running, as the app sees it.
#[derive(Debug, Clone)]
pub struct RunningJob {
    /// Its id.
    pub id: JobId,
    /// What it does, for the status bar.
    pub name: String,
    /// Latest progress text.
    pub progress: Option<String>,
    cancel: Arc<AtomicBool>,
}

/// The app layer's workers: the event channel, running jobs, and the tokio runtime.
pub struct Workers {
    events: EventSender,
    rx: Receiver<AppEvent>,
    /// Jobs started and not yet finished.
    pub running: Vec<RunningJob>,
    next_id: JobId,
    runtime: Option<tokio::runtime::Runtime>,
}

impl std::fmt::Debug for Workers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workers")
            .field("running", &self.running)
            .finish_non_exhaustive()
    }
}

impl Workers {
    /// The bridge; `ctx` is asked to repaint when events arrive. The tokio runtime (two worker
    /// threads: network work waits, it does not compute, but a send and the recording proxy
    /// must not take turns; blocking work goes to its blocking pool) is created here, once.
    pub fn start(ctx: Option<egui::Context>) -> Self {
        let (tx, rx) = sync_channel(EVENT_QUEUE);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("promptwire-net")
            .enable_all()
            .build()
            .map_err(|e| eprintln!("promptwire: no network runtime: {e}"))
            .ok();
        Self {
            events: EventSender { tx, ctx },
            rx,
            running: Vec::new(),
            next_id: 1,
            runtime,
        }
    }

    /// Asks for a frame in `delay` (work that is due later, with nothing else to wake the UI).
    pub fn repaint_after(&self, delay: Duration) {
        if let Some(ctx) = &self.events.ctx {
            ctx.request_repaint_after(delay);
        }
    }

    /// A sender for long-lived workers (the compile worker) that are not one-shot jobs.
    pub fn event_sender(&self) -> EventSender {
        self.events.clone()
    }

    fn register(&mut self, name: &str) -> JobContext {
        let id = self.next_id;
        self.next_id += 1;
        let cancel = Arc::new(AtomicBool::new(false));
        self.running.push(RunningJob {
            id,
            name: name.to_string(),
            progress: None,
            cancel: Arc::clone(&cancel),
        });
        JobContext {
            id,
            events: self.events.clone(),
            cancel,
        }
    }

    /// Runs `job` on a plain thread (CPU or disk work); it reports through its context and is
    /// followed by [`AppEvent::JobFinished`]. Returns the job's id (its error is text: every
    /// caller shows it as it is, and `session_view::whatif` stores it).
    pub fn spawn(
        &mut self,
        name: &str,
        job: impl FnOnce(&JobContext) + Send + 'static,
    ) -> Result<JobId, String> {
        let context = self.register(name);
        let id = context.id;
        #[allow(
            clippy::disallowed_methods,
            reason = "the worker bridge: every app job's thread starts here"
        )]
        let spawned = std::thread::Builder::new()
            .name(format!("promptwire-{name}"))
            .spawn(move || {
                job(&context);
                context
                    .events
                    .send(AppEvent::JobFinished { job: context.id }, None);
            });
        match spawned {
            Ok(_) => Ok(id),
            Err(e) => {
                self.running.retain(|j| j.id != id);
                Err(format!("cannot start a worker thread for {name}: {e}"))
            }
        }
    }

    /// Runs the future `make(context)` builds on the app's tokio runtime (network work).
    pub fn spawn_network<F>(
        &mut self,
        name: &str,
        make: impl FnOnce(JobContext) -> F,
    ) -> Result<JobId, String>
    where
        F: Future<Output = JobContext> + Send + 'static,
    {
        if self.runtime.is_none() {
            return Err(format!("{name}: the network runtime could not be started"));
        }
        let context = self.register(name);
        let id = context.id;
        let future = make(context);
        let Some(runtime) = self.runtime.as_ref() else {
            return Err(format!("{name}: the network runtime could not be started"));
        };
        runtime.spawn(async move {
            let context = future.await;
            // Sending waits while the channel is full: not on an async worker.
            let _ = tokio::task::spawn_blocking(move || {
                context
                    .events
                    .send(AppEvent::JobFinished { job: context.id }, None)
            })
            .await;
        });
        Ok(id)
    }

    /// Asks job `id` to stop (it stops at its next report or check).
    pub fn cancel(&self, id: JobId) {
        if let Some(job) = self.running.iter().find(|j| j.id == id) {
            job.cancel.store(true, Ordering::Relaxed);
        }
    }

    /// The next queued event, if any (bookkeeping of running jobs is updated first).
    pub fn try_next(&mut self) -> Option<AppEvent> {
        let event = match self.rx.try_recv() {
            Ok(event) => event,
            Err(TryRecvError::Empty | TryRecvError::Disconnected) => return None,
        };
        match &event {
            AppEvent::JobFinished { job } => self.running.retain(|j| j.id != *job),
            AppEvent::Progress { job, text, .. } => {
                if let Some(j) = self.running.iter_mut().find(|j| j.id == *job) {
                    j.progress = Some(text.clone());
                }
            }
            _ => {}
        }
        Some(event)
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        for job in &self.running {
            job.cancel.store(true, Ordering::Relaxed);
        }
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}
