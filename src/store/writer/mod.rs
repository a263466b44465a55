//! The one writer of a database: every live write — the app's sends and Re-sends, the CLI's
//! `send`, the recording proxy's and the replay endpoint's exchanges — goes through one store
//! thread per database file and process ([`Writer::open`] hands out the same writer for the same
//! file). Producers never wait on SQLite: [`RequestWriter::event`] and the other calls only put
//! an operation on a bounded queue, or drop it (and count it) when the queue or its memory
//! budget is full.
//!
//! The thread commits operations in batches (one transaction, at most
//! [`WriterOptions::max_delay`] after the first one arrived). When a commit fails because the
//! database is busy, the disk is full or an I/O error occurred, it rolls back, keeps the batch,
//! waits with backoff (draining the queue meanwhile, within the budgets), reopens the database
//! after an I/O error, and tries again — so recording resumes by itself when the lock is released
//! or the disk has room again. What had to be dropped is recorded as such: the outcome of a
//! request that lost events carries [`OutcomeRecord::lost_events`] and the reason, and is never
//! shown as complete. An operation the database refuses for good (its session was deleted) is
//! dropped alone and reported.
//!
//! Stored ids reach the producer through its [`Notify`] callback ([`Report`]), called on the
//! writer thread; a callback must not block.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::Store;
use super::error::{StoreError, StoreResult};
use super::types::{NewRequest, NewSession, OutcomeRecord, ResponseMeta};
use crate::core::anatomy::AgentTag;
use crate::core::stream::RawEvent;

mod journal;
mod thread;

use journal::Journal;
use thread::Thread;

/// Bytes of queued events after which the writer is woken early (a batch's worth) (see [`Shared::enqueue`]).
const WAKE_BYTES: usize = 1024 * 1024;

/// The spill journal's default disk budget (4 GiB).
pub const DEFAULT_JOURNAL_BUDGET_BYTES: u64 = 4 << 30;

/// Bounds and pacing of a writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriterOptions {
    /// Longest time an operation waits before its batch is committed.
    pub max_delay: Duration,
    /// A batch is committed at once when it holds this many operations.
    pub max_batch: usize,
    /// Operations the queue holds at most (past it, new ones are dropped and counted).
    pub queue_capacity: usize,
    /// Bytes of raw events held at most while they wait to be written (queued, or kept while
    /// the database cannot be written); past it, new events are dropped and counted.
    pub event_budget_bytes: usize,
    /// Bytes of sessions, requests, responses and outcomes held at most likewise.
    pub row_budget_bytes: usize,
    /// How long one write waits for another connection's lock before the batch is retried.
    pub busy_timeout: Duration,
    /// Longest wait between two tries of a failing batch.
    pub max_backoff: Duration,
    /// How long the writer keeps trying to commit what it holds once every producer has let
    /// go, and how long it goes on emptying its journal then (past it, it gives up and reports
    /// what it could not store).
    pub shutdown_grace: Duration,
    /// Bytes the spill journal beside the database may hold (`journal.rs`): what the queue or
    /// the memory budgets cannot take goes there instead of being dropped.
    pub journal_budget_bytes: u64,
}

impl Default for WriterOptions {
    fn default() -> Self {
        Self {
            max_delay: Duration::from_millis(100),
            max_batch: 4096,
            queue_capacity: 16 * 1024,
            event_budget_bytes: 64 * 1024 * 1024,
            row_budget_bytes: 256 * 1024 * 1024,
            busy_timeout: Duration::from_millis(200),
            max_backoff: Duration::from_secs(2),
            shutdown_grace: Duration::from_secs(10),
            journal_budget_bytes: DEFAULT_JOURNAL_BUDGET_BYTES,
        }
    }
}

/// A session the writer was asked to create (its id comes later, in [`Report::SessionStored`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SessionKey(u64);

/// A request the writer was asked to store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RequestKey(u64);

/// The session a request goes into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionRef {
    /// One created through this writer.
    Key(SessionKey),
    /// One already in the database.
    Id(i64),
}

/// What the writer tells a producer, from its thread.
#[derive(Debug, Clone, PartialEq)]
pub enum Report {
    /// The session is stored.
    SessionStored {
        /// The producer's key.
        key: SessionKey,
        /// Its id in the database.
        session_id: i64,
    },
    /// The request row is stored.
    RequestStored {
        /// The producer's key.
        key: RequestKey,
        /// The session it is in.
        session_id: i64,
        /// Its id in the database.
        request_id: i64,
    },
    /// The outcome is stored, as stored (with what was lost on the way).
    OutcomeStored {
        /// The producer's key.
        key: RequestKey,
        /// The request.
        request_id: i64,
        /// The stored outcome.
        outcome: Box<OutcomeRecord>,
        /// Raw events stored for the request.
        stored_events: u64,
        /// The HTTP status stored with its response (`None`: none was stored).
        status: Option<u16>,
    },
    /// The request could not be stored at all.
    RequestLost {
        /// The producer's key.
        key: RequestKey,
        /// Why.
        reason: String,
    },
}

/// A producer's callback for [`Report`]s; it runs on the writer thread and must not block.
pub type Notify = Arc<dyn Fn(Report) + Send + Sync>;

/// What the writer is doing, for a status line.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WriterStatus {
    /// The problem the writer is retrying after, if it is failing now.
    pub problem: Option<String>,
    /// How many times a problem began (so a watcher that looks now and then learns of one that
    /// came and went between two looks).
    pub troubles: u64,
    /// The last problem the writer retried after (kept once it is over).
    pub last_problem: Option<String>,
    /// Operations waiting to be written.
    pub pending: usize,
    /// Raw events dropped so far (each is counted in its request's outcome too).
    pub lost_events: u64,
    /// Requests that could not be stored at all.
    pub lost_requests: u64,
    /// Batches committed.
    pub commits: u64,
    /// Raw events committed.
    pub committed_events: u64,
    /// Raw events waiting in the spill journal now.
    pub journaled_events: u64,
    /// Bytes waiting in the spill journal now.
    pub journal_bytes: u64,
    /// Raw events that went through the journal so far.
    pub spilled_events: u64,
    /// Raw events still unwritten when the writer had to stop (its shutdown grace ran out).
    pub unwritten_events: u64,
}

/// A request as the writer keeps it (owned: it crosses to the writer thread).
#[derive(Debug, Clone, PartialEq)]
pub struct OwnedRequest {
    /// `standard` / `lite`.
    pub dialect: Option<String>,
    /// Rules preset name.
    pub rules: Option<String>,
    /// Provider kind or name.
    pub provider: Option<String>,
    /// HTTP method.
    pub method: String,
    /// URL.
    pub url: String,
    /// The exact body bytes.
    pub body: Vec<u8>,
    /// Request headers (secret ones are dropped when written).
    pub headers: Vec<(String, String)>,
    /// Extra fields (a JSON object).
    pub extra: Option<Value>,
    /// Start time, Unix microseconds.
    pub started_us: Option<i64>,
}

impl OwnedRequest {
    /// An owned copy of `request`.
    pub fn from_new(request: &NewRequest<'_>) -> Self {
        Self {
            dialect: request.dialect.clone(),
            rules: request.rules.clone(),
            provider: request.provider.clone(),
            method: request.method.clone(),
            url: request.url.clone(),
            body: request.body.to_vec(),
            headers: request.headers.to_vec(),
            extra: request.extra.clone(),
            started_us: request.started_us,
        }
    }

    fn as_new(&self) -> NewRequest<'_> {
        NewRequest {
            dialect: self.dialect.clone(),
            rules: self.rules.clone(),
            provider: self.provider.clone(),
            method: self.method.clone(),
            url: self.url.clone(),
            body: &self.body,
            headers: &self.headers,
            extra: self.extra.clone(),
            started_us: self.started_us,
        }
    }

    fn bytes(&self) -> usize {
        self.body.len()
            + self.url.len()
            + self
                .headers
                .iter()
                .map(|(n, v)| n.len() + v.len() + 16)
                .sum::<usize>()
            + 256
    }
}

enum Op {
    Session {
        key: SessionKey,
        session: NewSession,
        replay_of: Option<i64>,
        agent: Option<AgentTag>,
        notify: Option<Notify>,
    },
    Request {
        key: RequestKey,
        session: SessionRef,
        request: Box<OwnedRequest>,
        notify: Option<Notify>,
    },
    Event {
        key: RequestKey,
        event: RawEvent,
    },
    Response {
        key: RequestKey,
        meta: Box<ResponseMeta>,
    },
    Outcome {
        key: RequestKey,
        outcome: Box<OutcomeRecord>,
    },
    Flush(SyncSender<()>),
    /// Work that writes on its own (an import, in one transaction of its own), run on the
    /// writer's thread once everything queued before it is committed.
    Job(Job),
}

/// Work run on the writer's thread with its connection.
pub(super) type Job = Box<dyn FnOnce(&mut Store) + Send>;

impl Op {
    /// True for what is committed without waiting for more: rows and flushes (events wait for
    /// their batch).
    fn is_urgent(&self) -> bool {
        !matches!(self, Self::Event { .. } | Self::Response { .. })
    }

    /// The bytes this operation holds, and whether they count against the event budget.
    pub(super) fn size(&self) -> (usize, bool) {
        match self {
            Self::Event { event, .. } => (event_bytes(event), true),
            Self::Session { session, .. } => (session.name.len() + 128, false),
            Self::Request { request, .. } => (request.bytes(), false),
            Self::Response { meta, .. } => (
                meta.body.as_ref().map_or(0, Vec::len)
                    + meta
                        .headers
                        .iter()
                        .map(|(n, v)| n.len() + v.len() + 16)
                        .sum::<usize>()
                    + 64,
                false,
            ),
            Self::Outcome { outcome, .. } => (
                outcome.text.len() + outcome.error_message.as_ref().map_or(0, String::len) + 256,
                false,
            ),
            Self::Flush(_) | Self::Job(_) => (0, false),
        }
    }
}

fn event_bytes(event: &RawEvent) -> usize {
    event.data.len()
        + event.bytes.as_ref().map_or(0, Vec::len)
        + event.event.as_ref().map_or(0, String::len)
        + 48
}

/// What the writer thread and its producers both count: budgets, queue length, status. The
/// thread holds this and not [`Shared`], so the last producer's drop — which joins the thread —
/// never happens on the thread itself.
struct Counters {
    options: WriterOptions,
    event_bytes: AtomicUsize,
    row_bytes: AtomicUsize,
    queued_ops: AtomicUsize,
    status: Mutex<WriterStatus>,
    /// True while operations go to the journal (set by a producer that found no room, cleared
    /// by the writer thread once it has read the journal empty, both under its lock).
    spilling: AtomicBool,
    journal: Mutex<Journal>,
}

impl Counters {
    fn budget(&self, events: bool) -> (&AtomicUsize, usize) {
        if events {
            (&self.event_bytes, self.options.event_budget_bytes)
        } else {
            (&self.row_bytes, self.options.row_budget_bytes)
        }
    }

    fn release(&self, op: &Op) {
        let (size, events) = op.size();
        self.budget(events).0.fetch_sub(size, Ordering::AcqRel);
        if !matches!(op, Op::Flush(_) | Op::Job(_)) {
            self.queued_ops.fetch_sub(1, Ordering::AcqRel);
        }
    }

    fn status(&self) -> std::sync::MutexGuard<'_, WriterStatus> {
        self.status.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn journal(&self) -> std::sync::MutexGuard<'_, Journal> {
        self.journal.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts `op`, taken from the journal, as held in memory (it is released like a queued
    /// one once committed).
    fn hold(&self, op: &Op) {
        let (size, events) = op.size();
        self.budget(events).0.fetch_add(size, Ordering::AcqRel);
        self.queued_ops.fetch_add(1, Ordering::AcqRel);
    }
}

struct Shared {
    path: PathBuf,
    tx: Mutex<Option<SyncSender<Op>>>,
    counters: Arc<Counters>,
    next_key: AtomicU64,
    thread: Mutex<Option<JoinHandle<()>>>,
    /// The writer thread, to wake it when a batch is full or a flush waits.
    waker: OnceLock<std::thread::Thread>,
}

/// Queue slots only an outcome may take (see [`Shared::enqueue`]).
fn outcome_reserve(capacity: usize) -> usize {
    if capacity < 2 {
        0
    } else {
        (capacity / 16).clamp(1, 1024)
    }
}

impl Shared {
    /// Queues `op`; when the queue or its budget is full (or the journal holds operations
    /// already, which must stay in order), appends it to the spill journal instead. Never waits
    /// on the database. Returns why it was dropped (the journal's disk budget was full too, or
    /// the writer had stopped).
    fn enqueue(&self, op: Op) -> Result<(), &'static str> {
        let op = if self.counters.spilling.load(Ordering::Acquire) {
            let mut journal = self.counters.journal();
            if self.counters.spilling.load(Ordering::Acquire) {
                return self.spill(&mut journal, op);
            }
            op
        } else {
            op
        };
        match self.try_queue(op) {
            Ok(()) => Ok(()),
            Err((_, Some(op))) => {
                let mut journal = self.counters.journal();
                self.counters.spilling.store(true, Ordering::Release);
                self.spill(&mut journal, *op)
            }
            Err((why, None)) => Err(why),
        }
    }

    /// Appends `op` to the journal (its lock held), waking the writer now and then.
    fn spill(&self, journal: &mut Journal, op: Op) -> Result<(), &'static str> {
        let event = matches!(op, Op::Event { .. });
        let before = journal.bytes();
        match journal.push(op) {
            Ok(()) => {
                if !event || before / WAKE_BYTES as u64 != journal.bytes() / WAKE_BYTES as u64 {
                    self.wake();
                }
                Ok(())
            }
            Err(why) => Err(why.reason()),
        }
    }

    /// Queues `op` unless the queue or its budget is full; never waits. Gives the operation
    /// back when there was no room, with why.
    fn try_queue(&self, op: Op) -> Result<(), (&'static str, Option<Box<Op>>)> {
        let (size, events) = op.size();
        let (used, budget) = self.counters.budget(events);
        let bounded = !matches!(op, Op::Outcome { .. });
        let before = used.fetch_add(size, Ordering::AcqRel);
        if before + size > budget && bounded {
            used.fetch_sub(size, Ordering::AcqRel);
            return Err((
                if events {
                    "the writer's memory budget for events was full (the database could not keep up or could not be written)"
                } else {
                    "the writer's memory budget was full (the database could not be written)"
                },
                Some(Box::new(op)),
            ));
        }
        // Counted before it is sent: the writer may take and release it at once.
        let queued = self
            .counters
            .queued_ops
            .fetch_add(1, Ordering::AcqRel)
            .wrapping_add(1);
        // The last slots of the queue are kept for outcomes: an outcome says what was lost, so
        // a stream that filled the queue must still be able to end (a 200,000-event stream
        // through the proxy lost its outcome, and its row stayed "without an answer").
        let capacity = self.counters.options.queue_capacity.max(1);
        if bounded && queued > capacity - outcome_reserve(capacity) {
            self.counters.queued_ops.fetch_sub(1, Ordering::AcqRel);
            used.fetch_sub(size, Ordering::AcqRel);
            return Err(("the writer's queue was full", Some(Box::new(op))));
        }
        let tx = self.tx.lock().unwrap_or_else(PoisonError::into_inner);
        let result = match tx.as_ref() {
            Some(tx) => match tx.try_send(op) {
                Ok(()) => Ok(()),
                Err(TrySendError::Full(op)) => {
                    Err(("the writer's queue was full", Some(Box::new(op))))
                }
                Err(TrySendError::Disconnected(_)) => Err(("the writer had stopped", None)),
            },
            None => Err(("the writer had stopped", None)),
        };
        drop(tx);
        match result {
            Ok(()) => {
                // A full batch, or every few MiB of events, wakes the writer before its delay
                // is up: a fast stream is held in memory for a moment, not for 100 ms.
                if queued.is_multiple_of(self.counters.options.max_batch.max(1))
                    || before / WAKE_BYTES != (before + size) / WAKE_BYTES
                {
                    self.wake();
                }
            }
            Err(_) => {
                self.counters.queued_ops.fetch_sub(1, Ordering::AcqRel);
                used.fetch_sub(size, Ordering::AcqRel);
            }
        }
        result
    }

    fn wake(&self) {
        if let Some(thread) = self.waker.get() {
            thread.unpark();
        }
    }

    fn status(&self) -> std::sync::MutexGuard<'_, WriterStatus> {
        self.counters.status()
    }

    fn key(&self) -> u64 {
        self.next_key.fetch_add(1, Ordering::Relaxed)
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        drop(
            self.tx
                .get_mut()
                .unwrap_or_else(PoisonError::into_inner)
                .take(),
        );
        if let Some(thread) = self
            .thread
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            // The last clone can be let go on the writer thread itself (a producer's callback
            // or a job holding a writer): that thread ends on its own once the queue is closed,
            // and joining it from itself would be a deadlock (std panics on EDEADLK).
            if thread.thread().id() != std::thread::current().id() {
                let _ = thread.join();
            }
        }
    }
}

/// The writer of one database file (cheap to clone; the thread stops, after committing what it
/// holds, when the last clone is dropped).
#[derive(Clone)]
pub struct Writer {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer")
            .field("path", &self.shared.path)
            .finish_non_exhaustive()
    }
}

fn registry() -> &'static Mutex<HashMap<PathBuf, Weak<Shared>>> {
    static WRITERS: OnceLock<Mutex<HashMap<PathBuf, Weak<Shared>>>> = OnceLock::new();
    WRITERS.get_or_init(|| Mutex::new(HashMap::new()))
}

fn registry_key(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

impl Writer {
    /// The writer of the database at `path` (created with the schema if missing): the running
    /// one of this process, or a new one with the default options. Fails when the file cannot
    /// be opened for writing (not ours, damaged, newer, read-only) — checked before it returns.
    /// Opens the database: call it off the UI thread and off async workers.
    pub fn open(path: impl AsRef<Path>) -> StoreResult<Self> {
        Self::open_with(path, WriterOptions::default())
    }

    /// Like [`Writer::open`], with `options` for a new writer (a running one keeps its own).
    pub fn open_with(path: impl AsRef<Path>, options: WriterOptions) -> StoreResult<Self> {
        let path = path.as_ref();
        let mut writers = registry().lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(shared) = writers.get(&registry_key(path)).and_then(Weak::upgrade) {
            return Ok(Self { shared });
        }
        let store = Store::open(path)?;
        store.ensure_writable()?;
        store.set_busy_timeout(options.busy_timeout)?;
        let (tx, rx) = sync_channel(options.queue_capacity.max(1));
        let thread_counters = Arc::new(Counters {
            options,
            event_bytes: AtomicUsize::new(0),
            row_bytes: AtomicUsize::new(0),
            queued_ops: AtomicUsize::new(0),
            status: Mutex::new(WriterStatus::default()),
            spilling: AtomicBool::new(false),
            journal: Mutex::new(Journal::new(store.path(), options.journal_budget_bytes)),
        });
        let shared = Arc::new(Shared {
            path: path.to_path_buf(),
            tx: Mutex::new(Some(tx)),
            counters: Arc::clone(&thread_counters),
            next_key: AtomicU64::new(1),
            thread: Mutex::new(None),
            waker: OnceLock::new(),
        });
        #[allow(clippy::disallowed_methods)]
        // The store thread: the one place a database is written.
        let thread = std::thread::Builder::new()
            .name("promptwire-store-writer".to_string())
            .spawn(move || Thread::new(store, thread_counters, options).run(&rx))
            .map_err(|e| StoreError::RecorderStopped(e.to_string()))?;
        let _ = shared.waker.set(thread.thread().clone());
        *shared.thread.lock().unwrap_or_else(PoisonError::into_inner) = Some(thread);
        writers.retain(|_, w| w.strong_count() > 0);
        writers.insert(registry_key(path), Arc::downgrade(&shared));
        Ok(Self { shared })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.shared.path
    }

    /// True when both handles are the same writer (the same thread).
    pub fn is_same(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    /// What the writer is doing now.
    pub fn status(&self) -> WriterStatus {
        let (journaled, journal_bytes, spilled) = {
            let journal = self.shared.counters.journal();
            (journal.entries(), journal.bytes(), journal.spilled())
        };
        let mut status = self.shared.status().clone();
        status.pending = self.shared.counters.queued_ops.load(Ordering::Acquire);
        status.journaled_events = journaled;
        status.journal_bytes = journal_bytes;
        status.spilled_events = spilled;
        status
    }

    /// Asks for a new session (never waits; `None` when it had to be dropped): `replay_of` the
    /// recording a replay is served from, `agent` the agent the session is (its thread, parent
    /// and kind).
    pub fn create_session(
        &self,
        session: NewSession,
        replay_of: Option<i64>,
        agent: Option<AgentTag>,
        notify: Option<Notify>,
    ) -> Option<SessionKey> {
        let key = SessionKey(self.shared.key());
        self.shared
            .enqueue(Op::Session {
                key,
                session,
                replay_of,
                agent,
                notify,
            })
            .ok()
            .map(|()| key)
    }

    /// Asks for a request in `session` and returns its handle (never waits). When it cannot be
    /// queued, the handle records nothing and `notify` hears [`Report::RequestLost`] at once.
    pub fn begin_request(
        &self,
        session: SessionRef,
        request: OwnedRequest,
        notify: Option<Notify>,
    ) -> RequestWriter {
        let key = RequestKey(self.shared.key());
        let queued = self.shared.enqueue(Op::Request {
            key,
            session,
            request: Box::new(request),
            notify: notify.clone(),
        });
        if let Err(reason) = queued {
            self.shared.status().lost_requests += 1;
            if let Some(notify) = notify {
                notify(Report::RequestLost {
                    key,
                    reason: reason.to_string(),
                });
            }
        }
        RequestWriter {
            writer: self.clone(),
            key,
            queued: queued.is_ok(),
            lost: 0,
            lost_reason: None,
        }
    }

    /// Waits up to `timeout` until everything queued before this call is committed; false when
    /// the time ran out (the database is still busy or full) or the writer stopped.
    pub fn flush(&self, timeout: Duration) -> bool {
        let (done_tx, done_rx) = sync_channel(1);
        let deadline = Instant::now() + timeout;
        if !self.send_control(Op::Flush(done_tx), deadline) {
            return false;
        }
        done_rx
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .is_ok()
    }

    /// Runs `job` on the writer's thread with its connection, once everything queued before it
    /// is committed (an import: it writes in a transaction of its own while live writes wait
    /// in the queue, so there is still one writer of the file). Returns at once; the result
    /// comes on the receiver (which is closed without one if the writer stopped first). Waiting
    /// on it is for a worker thread, never the UI or an async worker.
    pub fn run<T: Send + 'static>(
        &self,
        job: impl FnOnce(&mut Store) -> T + Send + 'static,
    ) -> std::sync::mpsc::Receiver<T> {
        let (done_tx, done_rx) = sync_channel(1);
        let job: Job = Box::new(move |store| {
            let _ = done_tx.send(job(store));
        });
        // Control work must get through: queued past the budgets (waiting for a slot if the
        // queue is full, up to a minute).
        self.send_control(Op::Job(job), Instant::now() + Duration::from_secs(60));
        done_rx
    }

    /// Queues a control operation past the budgets, waiting for a free slot until `deadline`.
    fn send_control(&self, mut op: Op, deadline: Instant) -> bool {
        let tx = self
            .shared
            .tx
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let Some(tx) = tx else {
            return false;
        };
        loop {
            match tx.try_send(op) {
                Ok(()) => {
                    self.shared.wake();
                    return true;
                }
                Err(TrySendError::Full(back)) if Instant::now() < deadline => {
                    op = back;
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(_) => return false,
            }
        }
    }
}

/// One request on its way into the database: its events, response and outcome. Every call
/// returns at once.
#[derive(Debug)]
pub struct RequestWriter {
    writer: Writer,
    key: RequestKey,
    queued: bool,
    lost: u64,
    lost_reason: Option<String>,
}

impl RequestWriter {
    /// The key its reports carry.
    pub fn key(&self) -> RequestKey {
        self.key
    }

    /// True when the request row was queued (else nothing of it is recorded).
    pub fn is_recorded(&self) -> bool {
        self.queued
    }

    /// Events this handle had to drop so far.
    pub fn lost_events(&self) -> u64 {
        self.lost
    }

    /// Hands over one raw event (dropped and counted when the writer has no room).
    pub fn event(&mut self, event: RawEvent) {
        if !self.queued {
            return;
        }
        if let Err(reason) = self.writer.shared.enqueue(Op::Event {
            key: self.key,
            event,
        }) {
            self.lost += 1;
            self.writer.shared.status().lost_events += 1;
            if self.lost_reason.is_none() {
                self.lost_reason = Some(reason.to_string());
            }
        }
    }

    /// Like [`RequestWriter::event`], for a producer that may wait: first waits (up to
    /// `max_wait`) while the writer holds more than `held` bytes of events not yet committed —
    /// so a fast stream is held in memory about `held` deep, not as deep as the budget. Only
    /// for a caller that may wait (the CLI's `send`), never the proxy or an async worker.
    pub fn event_within(&mut self, event: RawEvent, held: usize, max_wait: Duration) {
        let deadline = Instant::now() + max_wait;
        while self
            .writer
            .shared
            .counters
            .event_bytes
            .load(Ordering::Acquire)
            > held
            && Instant::now() < deadline
        {
            self.writer.shared.wake();
            std::thread::sleep(Duration::from_millis(1));
        }
        self.event(event);
    }

    /// Hands over the response half.
    pub fn response(&mut self, meta: ResponseMeta) {
        if self.queued
            && let Err(reason) = self.writer.shared.enqueue(Op::Response {
                key: self.key,
                meta: Box::new(meta),
            })
            && self.lost_reason.is_none()
        {
            self.lost_reason = Some(format!("the response headers were lost: {reason}"));
        }
    }

    /// Hands over the outcome (with what this handle dropped) and ends the request.
    pub fn outcome(self, mut outcome: OutcomeRecord) {
        if !self.queued {
            return;
        }
        outcome.lost_events += self.lost;
        if outcome.lost_reason.is_none() {
            outcome.lost_reason = self.lost_reason.clone();
        }
        // An outcome is small and says what was lost: it is queued past the budgets. Should
        // even the queue be full, the row stays without an outcome ("without an answer"),
        // never complete.
        let _ = self.writer.shared.enqueue(Op::Outcome {
            key: self.key,
            outcome: Box::new(outcome),
        });
    }
}
