//! The writer's thread: gathers queued operations into batches, commits each batch in one
//! transaction (every operation in a savepoint of its own, so one the database refuses for good
//! is dropped alone), retries a busy, full or failing database with backoff while it keeps
//! draining the queue, reopens the connection after an I/O error, and publishes the new ids and
//! the reports once a batch is committed.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use rusqlite::Connection;

use super::super::Store;
use super::super::codec::Level;
use super::super::error::{StoreError, StoreResult};
use super::super::types::OutcomeRecord;
use super::super::write::{
    insert_events, insert_request, insert_session, update_response, upsert_outcome,
};
use super::journal::Taken;
use super::{Counters, Notify, Op, Report, RequestKey, SessionKey, SessionRef, WriterOptions};

/// Bytes of operations after which a batch is committed without waiting for more.
const MAX_BATCH_BYTES: usize = 1024 * 1024;

/// What the thread knows of a request it was asked to store.
struct Known {
    id: Option<i64>,
    notify: Option<Notify>,
    /// Events it could not store (its row was refused).
    lost: u64,
    /// The HTTP status stored with its response.
    status: Option<u16>,
}

/// The writer thread's state.
pub(super) struct Thread {
    store: Option<Store>,
    path: PathBuf,
    counters: Arc<Counters>,
    options: WriterOptions,
    sessions: HashMap<SessionKey, i64>,
    requests: HashMap<RequestKey, Known>,
    pending: VecDeque<Op>,
    /// Flushes and jobs that came while the journal held operations queued before them: they
    /// wait until it is read empty.
    deferred: VecDeque<Op>,
}

/// How a failed write is handled.
enum Failure {
    /// Try the whole batch again later (busy, full, I/O).
    Transient(String),
}

fn transient(err: &StoreError) -> bool {
    match err {
        StoreError::Sqlite(e) => matches!(
            e.sqlite_error_code(),
            Some(
                rusqlite::ErrorCode::DatabaseBusy
                    | rusqlite::ErrorCode::DatabaseLocked
                    | rusqlite::ErrorCode::DiskFull
                    | rusqlite::ErrorCode::SystemIoFailure
                    | rusqlite::ErrorCode::CannotOpen
                    | rusqlite::ErrorCode::OutOfMemory
                    | rusqlite::ErrorCode::ReadOnly
            )
        ),
        StoreError::CannotOpen { .. } | StoreError::Io { .. } => true,
        _ => false,
    }
}

/// True for errors after which the connection is reopened.
fn needs_reopen(err: &StoreError) -> bool {
    match err {
        StoreError::Sqlite(e) => matches!(
            e.sqlite_error_code(),
            Some(rusqlite::ErrorCode::SystemIoFailure | rusqlite::ErrorCode::CannotOpen)
        ),
        StoreError::CannotOpen { .. } | StoreError::Io { .. } => true,
        _ => false,
    }
}

/// The outcome of applying one operation inside the batch's transaction.
enum Applied {
    Done,
    /// Refused for good: drop it with this reason.
    Refused(String),
}

impl Thread {
    pub(super) fn new(store: Store, counters: Arc<Counters>, options: WriterOptions) -> Self {
        Self {
            path: store.path().to_path_buf(),
            store: Some(store),
            counters,
            options,
            sessions: HashMap::new(),
            requests: HashMap::new(),
            pending: VecDeque::new(),
            deferred: VecDeque::new(),
        }
    }

    /// Takes `op` from the queue: a flush or a job waits behind the journal when it holds
    /// something (what was handed over before it is there).
    fn receive(&mut self, op: Op) {
        if matches!(op, Op::Flush(_) | Op::Job(_))
            && self
                .counters
                .spilling
                .load(std::sync::atomic::Ordering::Acquire)
        {
            self.deferred.push_back(op);
        } else {
            self.pending.push_back(op);
        }
    }

    /// True while the journal may hold operations.
    fn spilling(&self) -> bool {
        self.counters
            .spilling
            .load(std::sync::atomic::Ordering::Acquire)
    }

    /// Moves the journal's next piece (up to `max_bytes` of events, or one held operation)
    /// into `pending`; once it is empty, stops the spilling and lets the deferred flushes and
    /// jobs in. Returns the bytes taken and whether an urgent operation came.
    fn take_from_journal(&mut self, max_bytes: usize) -> Option<(usize, bool)> {
        let mut journal = self.counters.journal();
        match journal.take(max_bytes) {
            Taken::Events(events) => {
                drop(journal);
                let mut bytes = 0;
                for (key, event) in events {
                    let op = Op::Event { key, event };
                    self.counters.hold(&op);
                    bytes += op.size().0;
                    self.pending.push_back(op);
                }
                Some((bytes, false))
            }
            Taken::Op(op) => {
                drop(journal);
                self.counters.hold(&op);
                let urgent = op.is_urgent();
                let bytes = op.size().0;
                self.pending.push_back(op);
                Some((bytes, urgent))
            }
            Taken::Empty => {
                self.counters
                    .spilling
                    .store(false, std::sync::atomic::Ordering::Release);
                drop(journal);
                if self.deferred.is_empty() {
                    return None;
                }
                self.pending.extend(self.deferred.drain(..));
                Some((0, true))
            }
        }
    }

    /// The shutdown grace ran out with the journal not empty: the events left are counted as
    /// lost in their requests' outcomes (held there), which are written with what was lost.
    fn abandon_journal(&mut self) {
        let mut left: HashMap<RequestKey, u64> = HashMap::new();
        let mut ops = Vec::new();
        let mut total = 0u64;
        {
            let mut journal = self.counters.journal();
            loop {
                match journal.take(MAX_BATCH_BYTES) {
                    Taken::Events(events) => {
                        for (key, _) in events {
                            *left.entry(key).or_default() += 1;
                            total += 1;
                        }
                    }
                    Taken::Op(op) => ops.push(op),
                    Taken::Empty => break,
                }
            }
            let (held, events) = journal.abandon();
            ops.extend(held);
            total += events;
            self.counters
                .spilling
                .store(false, std::sync::atomic::Ordering::Release);
        }
        self.counters.status().unwritten_events += total;
        for mut op in ops {
            if let Op::Outcome { key, outcome } = &mut op
                && let Some(n) = left.get(key)
            {
                outcome.lost_events += n;
                outcome.lost_reason.get_or_insert_with(|| {
                    format!(
                        "the recording stopped before {n} events could be written (its time to write them ran out)"
                    )
                });
            }
            self.counters.hold(&op);
            self.pending.push_back(op);
        }
        self.pending.extend(self.deferred.drain(..));
    }

    /// A batch is committed once it holds [`WriterOptions::max_batch`] operations or
    /// [`MAX_BATCH_BYTES`]: one transaction never holds much of a fast stream in memory.
    fn batch_full(&self, bytes: usize) -> bool {
        self.pending.len() >= self.options.max_batch || bytes >= MAX_BATCH_BYTES
    }

    pub(super) fn run(mut self, rx: &Receiver<Op>) {
        let mut open = true;
        let mut closed_at: Option<Instant> = None;
        loop {
            if !open {
                let since = *closed_at.get_or_insert_with(Instant::now);
                if self.spilling() && since.elapsed() >= self.options.shutdown_grace {
                    self.abandon_journal();
                }
            }
            if self.pending.is_empty() && !self.spilling() {
                if !self.deferred.is_empty() {
                    self.pending.extend(self.deferred.drain(..));
                } else if !open {
                    break;
                } else {
                    match rx.recv() {
                        Ok(op) => self.receive(op),
                        Err(_) => break,
                    }
                }
            }
            // Gather a batch: the events that arrive within `max_delay` of the first operation.
            // The thread sleeps meanwhile instead of waiting on the queue, so a producer's send
            // wakes no one; a producer that fills a batch (or a flush) wakes it early. Rows —
            // a session, a request, an outcome — are committed at once: a request is in the
            // database before its answer has streamed far, and a process killed mid-stream
            // leaves it listed as "without an answer".
            let deadline = Instant::now() + self.options.max_delay;
            let mut bytes: usize = self.pending.iter().map(|op| op.size().0).sum();
            loop {
                let mut flushing = self.pending.iter().any(Op::is_urgent);
                while !flushing && !self.batch_full(bytes) {
                    let received = if open {
                        rx.try_recv()
                    } else {
                        Err(std::sync::mpsc::TryRecvError::Disconnected)
                    };
                    match received {
                        Ok(op) => {
                            flushing = op.is_urgent();
                            bytes += op.size().0;
                            self.receive(op);
                        }
                        Err(empty) => {
                            if matches!(empty, std::sync::mpsc::TryRecvError::Disconnected) {
                                open = false;
                            }
                            // The queue is empty: what was spilled comes next, in order.
                            if !self.spilling() {
                                break;
                            }
                            match self.take_from_journal(MAX_BATCH_BYTES.saturating_sub(bytes)) {
                                Some((taken, urgent)) => {
                                    bytes += taken;
                                    flushing = urgent;
                                }
                                None => break,
                            }
                        }
                    }
                }
                let now = Instant::now();
                if flushing || !open || self.batch_full(bytes) || now >= deadline {
                    break;
                }
                std::thread::park_timeout(deadline - now);
            }
            // A job runs alone, after what was queued before it is committed.
            let job_at = self.pending.iter().position(|op| matches!(op, Op::Job(_)));
            let mut after = job_at.map(|at| self.pending.split_off(at));
            if !self.pending.is_empty() && !self.commit_with_retries(rx, &mut open) {
                if let Some(after) = after.take() {
                    self.pending.extend(after);
                }
                break;
            }
            if let Some(mut after) = after {
                if let Some(Op::Job(job)) = after.pop_front() {
                    self.run_job(job);
                }
                self.pending = after;
            }
        }
        if self.spilling() {
            self.abandon_journal();
        }
        self.give_up("the writer stopped before the database could be written");
        self.counters.journal().remove();
    }

    /// Runs `job` with the connection (reopened first if it was lost; a job that cannot get one
    /// is dropped, and its caller's receiver closes without a result).
    fn run_job(&mut self, job: super::Job) {
        if self.store.is_none() {
            self.store = Store::open(&self.path)
                .and_then(|s| s.set_busy_timeout(self.options.busy_timeout).map(|()| s))
                .ok();
        }
        if let Some(store) = self.store.as_mut() {
            // A job waits for other connections as long as an import always did.
            let _ = store.set_busy_timeout(Duration::from_secs(5));
            job(store);
            let _ = store.set_busy_timeout(self.options.busy_timeout);
        }
    }

    /// Commits `pending`, retrying with backoff while the failure is transient (draining the
    /// queue into `pending` meanwhile). False when it gave up (shutting down past the grace).
    fn commit_with_retries(&mut self, rx: &Receiver<Op>, open: &mut bool) -> bool {
        let mut backoff = Duration::from_millis(50);
        let mut closed_at: Option<Instant> = (!*open).then(Instant::now);
        loop {
            match self.commit() {
                Ok(()) => return true,
                Err(Failure::Transient(problem)) => {
                    let mut status = self.counters.status();
                    if status.problem.is_none() {
                        status.troubles += 1;
                    }
                    status.problem = Some(problem.clone());
                    status.last_problem = Some(problem.clone());
                    drop(status);
                    if !*open {
                        let since = *closed_at.get_or_insert_with(Instant::now);
                        if since.elapsed() >= self.options.shutdown_grace {
                            return false;
                        }
                    }
                    // Wait, taking in what arrives (the budgets bound it).
                    let until = Instant::now() + backoff;
                    while *open {
                        let now = Instant::now();
                        if now >= until {
                            break;
                        }
                        match rx.recv_timeout(until - now) {
                            Ok(op) => self.receive(op),
                            Err(RecvTimeoutError::Timeout) => break,
                            Err(RecvTimeoutError::Disconnected) => {
                                *open = false;
                                closed_at = Some(Instant::now());
                            }
                        }
                    }
                    if !*open {
                        std::thread::sleep(until.saturating_duration_since(Instant::now()));
                    }
                    backoff = (backoff * 2).min(self.options.max_backoff);
                }
            }
        }
    }

    /// One transaction over everything pending.
    fn commit(&mut self) -> Result<(), Failure> {
        if self.store.is_none() {
            let store = Store::open(&self.path)
                .and_then(|s| s.set_busy_timeout(self.options.busy_timeout).map(|()| s))
                .map_err(|e| Failure::Transient(format!("cannot reopen the database: {e}")))?;
            self.store = Some(store);
        }
        let Some(store) = self.store.as_mut() else {
            return Err(Failure::Transient("no database".to_string()));
        };
        let mut staged = Staged::default();
        let result = (|| -> StoreResult<()> {
            let conn = store.writable()?;
            let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let mut i = 0;
            while i < self.pending.len() {
                // Consecutive events of one request go in together.
                let end = match &self.pending[i] {
                    Op::Event { key, .. } => {
                        let key = *key;
                        let n = self
                            .pending
                            .range(i..)
                            .take_while(|op| matches!(op, Op::Event { key: k, .. } if *k == key));
                        i + n.count()
                    }
                    _ => i + 1,
                };
                // Each operation in a savepoint of its own: one the database refuses for good is
                // rolled back alone, the rest of the batch goes on.
                tx.execute_batch("SAVEPOINT pw_op")?;
                let applied = match apply(
                    &tx,
                    &self.pending,
                    i..end,
                    &self.sessions,
                    &self.requests,
                    &mut staged,
                ) {
                    Ok(Applied::Done) => {
                        tx.execute_batch("RELEASE pw_op")?;
                        Applied::Done
                    }
                    Ok(Applied::Refused(why)) => {
                        tx.execute_batch("ROLLBACK TO pw_op; RELEASE pw_op")?;
                        Applied::Refused(why)
                    }
                    Err(e) if transient(&e) => return Err(e),
                    Err(e) => {
                        tx.execute_batch("ROLLBACK TO pw_op; RELEASE pw_op")?;
                        Applied::Refused(e.to_string())
                    }
                };
                if let Applied::Refused(why) = applied {
                    if let Op::Event { key, .. } = &self.pending[i] {
                        *staged.lost.entry(*key).or_default() += (end - i) as u64;
                    }
                    staged.refused.push((i..end, why));
                }
                i = end;
            }
            tx.commit()?;
            Ok(())
        })();
        match result {
            Ok(()) => {
                self.committed();
                self.publish(staged);
                Ok(())
            }
            Err(e) => {
                if needs_reopen(&e) {
                    self.store = None;
                }
                if transient(&e) {
                    Err(Failure::Transient(e.to_string()))
                } else {
                    // Not the database's state but the batch: should not happen (each operation
                    // is applied alone), so drop the batch rather than retry it forever.
                    let why = e.to_string();
                    let len = self.pending.len();
                    staged = Staged::default();
                    staged.refused.push((0..len, why));
                    self.committed();
                    self.publish(staged);
                    Ok(())
                }
            }
        }
    }

    /// A batch is done with: the problem is over. Before [`Self::publish`], so that whoever
    /// learns of the commit (a flush, a report) sees the writer's status without it.
    fn committed(&self) {
        let mut status = self.counters.status();
        status.problem = None;
        status.commits += 1;
    }

    /// After a commit: the new ids become known, reports go out, the budgets are released.
    fn publish(&mut self, staged: Staged) {
        let mut refused = vec![None; self.pending.len()];
        for (range, why) in staged.refused {
            for i in range {
                if let Some(slot) = refused.get_mut(i) {
                    *slot = Some(why.clone());
                }
            }
        }
        let counters = Arc::clone(&self.counters);
        let (mut committed_events, mut lost_events) = (0, 0);
        for (i, op) in std::mem::take(&mut self.pending).into_iter().enumerate() {
            counters.release(&op);
            let why = refused.get(i).cloned().flatten();
            match op {
                Op::Session { key, notify, .. } => {
                    if let Some(id) = staged.sessions.get(&key) {
                        self.sessions.insert(key, *id);
                        if let Some(notify) = notify {
                            notify(Report::SessionStored {
                                key,
                                session_id: *id,
                            });
                        }
                    }
                }
                Op::Request { key, notify, .. } => match staged.requests.get(&key) {
                    Some((session_id, id)) if why.is_none() => {
                        if let Some(notify) = &notify {
                            notify(Report::RequestStored {
                                key,
                                session_id: *session_id,
                                request_id: *id,
                            });
                        }
                        self.requests.insert(
                            key,
                            Known {
                                id: Some(*id),
                                notify,
                                lost: 0,
                                status: None,
                            },
                        );
                    }
                    _ => {
                        counters.status().lost_requests += 1;
                        let reason = why.unwrap_or_else(|| "not stored".to_string());
                        if let Some(notify) = &notify {
                            notify(Report::RequestLost { key, reason });
                        }
                        self.requests.insert(
                            key,
                            Known {
                                id: None,
                                notify,
                                lost: 0,
                                status: None,
                            },
                        );
                    }
                },
                Op::Event { key, .. } => {
                    if why.is_none() {
                        committed_events += 1;
                    } else {
                        lost_events += 1;
                        if let Some(known) = self.requests.get_mut(&key) {
                            known.lost += 1;
                        }
                    }
                }
                Op::Response { key, meta } => {
                    if why.is_none()
                        && let Some(known) = self.requests.get_mut(&key)
                    {
                        known.status = meta.status;
                    }
                }
                Op::Outcome { key, outcome } => {
                    if let Some(known) = self.requests.remove(&key)
                        && let (Some(request_id), Some((refused, stored_events))) =
                            (known.id, staged.outcomes.get(&key))
                        && why.is_none()
                        && let Some(notify) = &known.notify
                    {
                        let outcome = match *refused {
                            0 => outcome,
                            n => Box::new(with_refused(&outcome, n)),
                        };
                        notify(Report::OutcomeStored {
                            key,
                            request_id,
                            outcome,
                            stored_events: *stored_events,
                            status: known.status,
                        });
                    }
                }
                Op::Flush(done) => {
                    let _ = done.send(());
                }
                // Never in a committed batch: jobs are split off before it.
                Op::Job(_) => {}
            }
        }
        let mut status = counters.status();
        status.committed_events += committed_events;
        status.lost_events += lost_events;
    }

    /// Reports everything still pending as lost (shutting down with the database unwritable).
    fn give_up(&mut self, reason: &str) {
        let counters = Arc::clone(&self.counters);
        let deferred: Vec<Op> = self.deferred.drain(..).collect();
        for op in std::mem::take(&mut self.pending)
            .into_iter()
            .chain(deferred)
        {
            counters.release(&op);
            match op {
                Op::Request {
                    key,
                    notify: Some(notify),
                    ..
                } => {
                    notify(Report::RequestLost {
                        key,
                        reason: reason.to_string(),
                    });
                }
                Op::Flush(done) => {
                    let _ = done.send(());
                }
                _ => {}
            }
        }
    }
}

/// Ids made inside the current transaction, published once it commits.
#[derive(Default)]
struct Staged {
    sessions: HashMap<SessionKey, i64>,
    requests: HashMap<RequestKey, (i64, i64)>,
    /// Per stored outcome: events the database refused, and events stored.
    outcomes: HashMap<RequestKey, (u64, u64)>,
    lost: HashMap<RequestKey, u64>,
    refused: Vec<(std::ops::Range<usize>, String)>,
}

fn request_id(
    key: RequestKey,
    requests: &HashMap<RequestKey, Known>,
    staged: &Staged,
) -> Option<i64> {
    staged
        .requests
        .get(&key)
        .map(|(_, id)| *id)
        .or_else(|| requests.get(&key).and_then(|k| k.id))
}

/// `outcome` as stored when the database refused `refused` of its events.
fn with_refused(outcome: &OutcomeRecord, refused: u64) -> OutcomeRecord {
    let mut outcome = outcome.clone();
    outcome.lost_events += refused;
    outcome
        .lost_reason
        .get_or_insert_with(|| "the database refused some events".to_string());
    outcome
}

/// Applies `pending[range]` (one operation, or a run of one request's events).
fn apply(
    conn: &Connection,
    pending: &VecDeque<Op>,
    range: std::ops::Range<usize>,
    sessions: &HashMap<SessionKey, i64>,
    requests: &HashMap<RequestKey, Known>,
    staged: &mut Staged,
) -> StoreResult<Applied> {
    match &pending[range.start] {
        Op::Session {
            key,
            session,
            replay_of,
            agent,
            ..
        } => {
            let id = insert_session(conn, session)?;
            if let Some(recording) = replay_of {
                super::super::links::set_replay_of(conn, id, *recording)?;
            }
            if let Some(agent) = agent {
                super::super::links::set_agent(conn, id, agent)?;
            }
            staged.sessions.insert(*key, id);
        }
        Op::Request {
            key,
            session,
            request,
            ..
        } => {
            let session_id = match session {
                SessionRef::Id(id) => Some(*id),
                SessionRef::Key(k) => staged.sessions.get(k).or_else(|| sessions.get(k)).copied(),
            };
            let Some(session_id) = session_id else {
                return Ok(Applied::Refused(
                    "its session could not be stored".to_string(),
                ));
            };
            if !super::super::write::session_exists(conn, session_id)? {
                return Ok(Applied::Refused(format!(
                    "session {session_id} is no longer in the database"
                )));
            }
            let id = insert_request(conn, session_id, &request.as_new())?;
            staged.requests.insert(*key, (session_id, id));
        }
        Op::Event { key, .. } => {
            let Some(id) = request_id(*key, requests, staged) else {
                return Ok(Applied::Refused("its request is not stored".to_string()));
            };
            let events = pending.range(range.clone()).filter_map(|op| match op {
                Op::Event { event, .. } => Some(event),
                _ => None,
            });
            insert_events(conn, id, events, Level::Live)?;
        }
        Op::Response { key, meta } => {
            let Some(id) = request_id(*key, requests, staged) else {
                return Ok(Applied::Refused("its request is not stored".to_string()));
            };
            update_response(conn, id, meta)?;
        }
        Op::Outcome { key, outcome } => {
            let Some(id) = request_id(*key, requests, staged) else {
                return Ok(Applied::Refused("its request is not stored".to_string()));
            };
            let refused_here = staged.lost.get(key).copied().unwrap_or(0)
                + requests.get(key).map_or(0, |k| k.lost);
            // An outcome holds the whole answer's text: copied only in the rare case that the
            // database refused some of its events.
            if refused_here > 0 {
                upsert_outcome(conn, id, &with_refused(outcome, refused_here))?;
            } else {
                upsert_outcome(conn, id, outcome)?;
            }
            let stored_events = super::super::event_chunks::count(conn, id)?;
            staged.outcomes.insert(*key, (refused_here, stored_events));
        }
        Op::Flush(_) | Op::Job(_) => {}
    }
    Ok(Applied::Done)
}
