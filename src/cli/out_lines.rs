//! Standard output for the server commands (`record`, `replay`): lines go through a bounded
//! queue to a writer on a blocking thread of the runtime, so a reader that stops reading (a
//! full pipe) never blocks the proxy or its shutdown. A line with no room is dropped and
//! counted; the last line (the summary) waits in a slot of its own; at the end the writer gets
//! a short while to drain, and a writer still stuck is left behind.

use std::io::Write as _;
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// Lines that may wait for the writer before new ones are dropped.
const QUEUE_LINES: usize = 4096;

/// How long [`OutLines::finish`] waits for the writer to print what is queued.
pub const DRAIN_WAIT: Duration = Duration::from_secs(2);

/// The queue to the standard output writer.
pub struct OutLines {
    queue: Option<SyncSender<String>>,
    last: Arc<Mutex<Option<String>>>,
    writer: Option<tokio::task::JoinHandle<Result<(), String>>>,
    dropped: u64,
}

impl OutLines {
    /// Starts the writer (on the current runtime's blocking threads).
    pub fn start() -> Self {
        let (queue, lines) = sync_channel(QUEUE_LINES);
        let last = Arc::new(Mutex::new(None));
        let slot = Arc::clone(&last);
        let writer = tokio::task::spawn_blocking(move || write_all(&lines, &slot));
        Self {
            queue: Some(queue),
            last,
            writer: Some(writer),
            dropped: 0,
        }
    }

    /// Queues `line` (without its newline); dropped and counted when the queue is full. An
    /// error when the writer has stopped (standard output is closed or failed).
    pub fn line(&mut self, line: String) -> Result<(), String> {
        let Some(queue) = &self.queue else {
            return Err("standard output is closed".to_string());
        };
        match queue.try_send(line) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(_)) => {
                self.dropped += 1;
                Ok(())
            }
            Err(TrySendError::Disconnected(_)) => Err(self.writer_error()),
        }
    }

    /// Lines dropped so far because standard output was not being read.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Prints `last` after everything queued, and waits at most [`DRAIN_WAIT`] for the writer.
    pub async fn finish(&mut self, last: String) -> Result<(), String> {
        *self.last.lock().unwrap_or_else(PoisonError::into_inner) = Some(last);
        self.queue = None;
        let Some(writer) = self.writer.take() else {
            return Ok(());
        };
        match tokio::time::timeout(DRAIN_WAIT, writer).await {
            Ok(Ok(result)) => result,
            Ok(Err(e)) => Err(format!("the output writer failed: {e}")),
            // Standard output is not being read: the writer is left behind.
            Err(_) => Ok(()),
        }
    }

    fn writer_error(&mut self) -> String {
        self.queue = None;
        "writing to standard output failed".to_string()
    }
}

/// The writer: every queued line, then the last one, each flushed.
fn write_all(lines: &Receiver<String>, last: &Mutex<Option<String>>) -> Result<(), String> {
    let write = |line: &str| {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{line}")
            .and_then(|()| out.flush())
            .map_err(|e| format!("writing to standard output: {e}"))
    };
    for line in lines {
        write(&line)?;
    }
    let last = last.lock().unwrap_or_else(PoisonError::into_inner).take();
    match last {
        Some(line) => write(&line),
        None => Ok(()),
    }
}
