//! The live writer: raw events (and outcomes) handed over as they arrive are committed by one
//! store thread in batches, at most [`RecorderOptions::max_delay`] after the first uncommitted
//! one arrived. A crash loses at most the batch not yet committed.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::Store;
use super::codec::Level;
use super::error::{StoreError, StoreResult};
use super::types::OutcomeRecord;
use super::write::{insert_events, upsert_outcome};
use crate::core::stream::RawEvent;

/// Batching of the live writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecorderOptions {
    /// Longest time an event waits before its batch is committed.
    pub max_delay: Duration,
    /// A batch is committed at once when it holds this many events.
    pub max_batch: usize,
    /// Capacity of the hand-over channel (a full channel makes `event` wait).
    pub channel_capacity: usize,
}

impl Default for RecorderOptions {
    fn default() -> Self {
        Self {
            max_delay: Duration::from_millis(100),
            max_batch: 4096,
            channel_capacity: 16 * 1024,
        }
    }
}

enum Command {
    Event(i64, RawEvent),
    Outcome(i64, OutcomeRecord),
    Flush(SyncSender<()>),
}

/// Records streams into a database from a thread of its own.
#[derive(Debug)]
pub struct Recorder {
    tx: Option<SyncSender<Command>>,
    thread: Option<JoinHandle<StoreResult<()>>>,
    committed: Arc<AtomicU64>,
}

impl Recorder {
    /// Starts a recorder writing into the database at `path` (opened, and created if needed,
    /// by the recorder's thread on a connection of its own).
    pub fn start(path: impl AsRef<Path>, options: RecorderOptions) -> StoreResult<Self> {
        let store = Store::open(path)?;
        if store.is_read_only() {
            return Err(StoreError::ReadOnly {
                path: store.path().to_path_buf(),
            });
        }
        let (tx, rx) = sync_channel(options.channel_capacity.max(1));
        let committed = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&committed);
        #[allow(clippy::disallowed_methods, reason = "the store's one writer thread")]
        let thread = std::thread::Builder::new()
            .name("promptwire-recorder".to_string())
            .spawn(move || run(store, rx, options, &counter))
            .map_err(|e| StoreError::RecorderStopped(e.to_string()))?;
        Ok(Self {
            tx: Some(tx),
            thread: Some(thread),
            committed,
        })
    }

    fn send(&self, command: Command) -> StoreResult<()> {
        let tx = self
            .tx
            .as_ref()
            .ok_or_else(|| StoreError::RecorderStopped("already finished".to_string()))?;
        tx.send(command)
            .map_err(|_| StoreError::RecorderStopped("its thread ended".to_string()))
    }

    /// Hands over one raw event of request `request_id`.
    pub fn event(&self, request_id: i64, event: RawEvent) -> StoreResult<()> {
        self.send(Command::Event(request_id, event))
    }

    /// Hands over the outcome of request `request_id` (committed with the next batch).
    pub fn outcome(&self, request_id: i64, outcome: OutcomeRecord) -> StoreResult<()> {
        self.send(Command::Outcome(request_id, outcome))
    }

    /// Commits everything handed over so far and waits for it.
    pub fn flush(&self) -> StoreResult<()> {
        let (done_tx, done_rx) = sync_channel(1);
        self.send(Command::Flush(done_tx))?;
        done_rx
            .recv()
            .map_err(|_| StoreError::RecorderStopped("its thread ended".to_string()))
    }

    /// Events committed so far.
    pub fn committed_events(&self) -> u64 {
        self.committed.load(Ordering::Acquire)
    }

    /// Commits what is left and stops the thread, returning its first error.
    pub fn finish(mut self) -> StoreResult<()> {
        self.stop()
    }

    fn stop(&mut self) -> StoreResult<()> {
        drop(self.tx.take());
        match self.thread.take() {
            Some(thread) => thread
                .join()
                .map_err(|_| StoreError::RecorderStopped("its thread panicked".to_string()))?,
            None => Ok(()),
        }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

#[derive(Default)]
struct Batch {
    events: Vec<(i64, RawEvent)>,
    outcomes: Vec<(i64, OutcomeRecord)>,
    since: Option<Instant>,
}

fn commit(store: &mut Store, batch: &mut Batch, committed: &AtomicU64) -> StoreResult<()> {
    if batch.events.is_empty() && batch.outcomes.is_empty() {
        return Ok(());
    }
    let conn = store.writable()?;
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let mut start = 0;
    while start < batch.events.len() {
        let request = batch.events[start].0;
        let end = batch.events[start..]
            .iter()
            .position(|(r, _)| *r != request)
            .map_or(batch.events.len(), |n| start + n);
        insert_events(
            &tx,
            request,
            batch.events[start..end].iter().map(|(_, e)| e),
            Level::Live,
        )?;
        start = end;
    }
    for (request, outcome) in &batch.outcomes {
        upsert_outcome(&tx, *request, outcome)?;
    }
    tx.commit()?;
    committed.fetch_add(batch.events.len() as u64, Ordering::AcqRel);
    batch.events.clear();
    batch.outcomes.clear();
    batch.since = None;
    Ok(())
}

fn run(
    mut store: Store,
    rx: Receiver<Command>,
    options: RecorderOptions,
    committed: &AtomicU64,
) -> StoreResult<()> {
    let mut batch = Batch::default();
    loop {
        let received = match batch.since {
            None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
            Some(since) => {
                let deadline = since + options.max_delay;
                let now = Instant::now();
                if now >= deadline {
                    Err(RecvTimeoutError::Timeout)
                } else {
                    rx.recv_timeout(deadline - now)
                }
            }
        };
        match received {
            Ok(Command::Event(request, event)) => {
                batch.since.get_or_insert_with(Instant::now);
                batch.events.push((request, event));
                if batch.events.len() >= options.max_batch {
                    commit(&mut store, &mut batch, committed)?;
                }
            }
            Ok(Command::Outcome(request, outcome)) => {
                batch.since.get_or_insert_with(Instant::now);
                batch.outcomes.push((request, outcome));
            }
            Ok(Command::Flush(done)) => {
                commit(&mut store, &mut batch, committed)?;
                let _ = done.send(());
            }
            Err(RecvTimeoutError::Timeout) => commit(&mut store, &mut batch, committed)?,
            Err(RecvTimeoutError::Disconnected) => {
                return commit(&mut store, &mut batch, committed);
            }
        }
    }
}
