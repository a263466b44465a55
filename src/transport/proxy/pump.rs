//! The relay's client-facing response body. A reader task pulls the upstream body to its end —
//! decoding each chunk into the exchange's recording as it arrives — and hands the chunks over a
//! bounded read-ahead ([`READ_AHEAD_BYTES`]) to the body hyper writes to the client. The body
//! takes every chunk that is already waiting in one frame (nothing is held back to wait for
//! more), so a stream of one small HTTP chunk per event costs one socket write per batch, not
//! one per event, while the upstream is still read only as fast as the client takes it.
//!
//! Because the reader, not the client's connection, sees the upstream end, an answer is
//! recorded as the client got it: a body with a `Content-Length` that hyper stops polling once
//! the length is written is complete, not cut. It is cancelled only when the client really
//! went away before the end (and the message says so), or when the proxy stopped.

use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures_util::{FutureExt as _, StreamExt as _};
use hyper::body::Frame;
use tokio::sync::{Semaphore, mpsc};

use super::exchange::Exchange;
use super::listen::Body;
use crate::core::stream::ErrorClass;

/// Bytes read from the upstream ahead of what the client has taken.
pub(crate) const READ_AHEAD_BYTES: usize = 1024 * 1024;

/// Largest frame the body hands to hyper at once (chunks waiting beyond it go in the next one).
const MAX_FRAME_BYTES: usize = 256 * 1024;

/// Chunks at least this large are handed over as they are, not joined with what waits.
const JOIN_BELOW_BYTES: usize = 16 * 1024;

/// Chunks in flight at most (each also counts against [`READ_AHEAD_BYTES`]).
const MAX_CHUNKS_AHEAD: usize = 4096;

/// Pieces joined into one [`Bytes`]: the first is kept as it is, and copied only when a second
/// one comes.
pub(super) struct Joined {
    first: Bytes,
    more: Option<BytesMut>,
    capacity: usize,
}

impl Joined {
    /// Starts with `first`; a joined buffer is sized for `capacity` bytes.
    pub(super) fn new(first: Bytes, capacity: usize) -> Self {
        Self {
            first,
            more: None,
            capacity,
        }
    }

    /// Bytes joined so far.
    pub(super) fn len(&self) -> usize {
        self.more.as_ref().map_or(self.first.len(), BytesMut::len)
    }

    /// Appends `bytes`.
    pub(super) fn push(&mut self, bytes: &[u8]) {
        let size = self.len() + bytes.len();
        self.more
            .get_or_insert_with(|| {
                let mut buf = BytesMut::with_capacity(self.capacity.max(size));
                buf.extend_from_slice(&self.first);
                buf
            })
            .extend_from_slice(bytes);
    }

    /// The joined bytes.
    pub(super) fn into_bytes(self) -> Bytes {
        self.more.map_or(self.first, BytesMut::freeze)
    }
}

/// What the reader hands over.
type Chunk = Result<Bytes, String>;

/// The client-facing body for `upstream`, recorded into `exchange` (when recorded), ending with
/// an error when the upstream stream fails or is idle for `idle`.
pub(crate) fn relay_body<S>(upstream: S, exchange: Option<Exchange>, idle: Duration) -> Body
where
    S: futures_util::Stream<Item = Result<Bytes, String>> + Send + Unpin + 'static,
{
    let (tx, rx) = mpsc::channel(MAX_CHUNKS_AHEAD);
    let budget = Arc::new(Semaphore::new(READ_AHEAD_BYTES));
    tokio::spawn(read_upstream(
        upstream,
        exchange,
        idle,
        tx,
        Arc::clone(&budget),
    ));
    let taker = Taker {
        rx,
        budget,
        held: None,
    };
    let stream = futures_util::stream::unfold(Some(taker), |taker| async move {
        let mut taker = taker?;
        match taker.next_frame().await? {
            Ok(bytes) => Some((Ok(Frame::data(bytes)), Some(taker))),
            Err(message) => Some((Err(std::io::Error::other(message)), None)),
        }
    });
    http_body_util::BodyExt::boxed_unsync(http_body_util::StreamBody::new(stream))
}

/// The client side of the read-ahead.
struct Taker {
    rx: mpsc::Receiver<Chunk>,
    budget: Arc<Semaphore>,
    /// A failure that came after chunks already taken into a frame: handed over next.
    held: Option<String>,
}

impl Taker {
    /// The next frame: the first chunk waited for, then every chunk already waiting (up to
    /// [`MAX_FRAME_BYTES`]) joined to it. `None` at the end of the body.
    async fn next_frame(&mut self) -> Option<Chunk> {
        if let Some(message) = self.held.take() {
            return Some(Err(message));
        }
        let first = match self.rx.recv().await? {
            Ok(bytes) => bytes,
            Err(message) => return Some(Err(message)),
        };
        self.release(first.len());
        if first.len() >= JOIN_BELOW_BYTES {
            // Large already (the upstream side joins what arrived together): not copied again.
            return Some(Ok(first));
        }
        let mut joined = Joined::new(first, MAX_FRAME_BYTES);
        while joined.len() < MAX_FRAME_BYTES {
            match self.rx.try_recv() {
                Ok(Ok(bytes)) => {
                    self.release(bytes.len());
                    joined.push(&bytes);
                }
                Ok(Err(message)) => {
                    self.held = Some(message);
                    break;
                }
                Err(_) => break,
            }
        }
        Some(Ok(joined.into_bytes()))
    }

    fn release(&self, len: usize) {
        self.budget.add_permits(permits(len) as usize);
    }
}

impl Drop for Taker {
    fn drop(&mut self) {
        // The client went away (or hyper wrote all of a Content-Length): the reader stops
        // waiting for room.
        self.budget.close();
    }
}

/// Read-ahead permits for a chunk of `len` bytes (a chunk larger than the whole read-ahead
/// takes all of it).
fn permits(len: usize) -> u32 {
    u32::try_from(len.min(READ_AHEAD_BYTES)).unwrap_or(u32::MAX)
}

/// What the upstream had ready right after the chunks [`join_ready`] joined.
enum After {
    /// Nothing more yet: read on.
    More,
    /// The body ended.
    Ended,
    /// The body failed: the message.
    Failed(String),
}

/// `first` with every small chunk the upstream already has ready joined to it (up to
/// [`MAX_FRAME_BYTES`]; nothing is waited for). A stream of one small HTTP chunk per event
/// arrives many chunks to a socket read: joined, they cost one pass of the reader's loop (one
/// decode call, one read-ahead permit, one hand-over), not one per event. Their receive time is
/// the same either way: they were all there at this poll.
fn join_ready<S>(first: Bytes, upstream: &mut S) -> (Bytes, After)
where
    S: futures_util::Stream<Item = Result<Bytes, String>> + Unpin,
{
    if first.len() >= JOIN_BELOW_BYTES {
        return (first, After::More);
    }
    let mut joined = Joined::new(first, MAX_FRAME_BYTES);
    while joined.len() < MAX_FRAME_BYTES {
        match upstream.next().now_or_never() {
            Some(Some(Ok(bytes))) => joined.push(&bytes),
            Some(None) => return (joined.into_bytes(), After::Ended),
            Some(Some(Err(e))) => return (joined.into_bytes(), After::Failed(e)),
            None => break,
        }
    }
    (joined.into_bytes(), After::More)
}

/// How the upstream body ended for the reader.
enum End {
    /// It ended by itself.
    Complete,
    /// It failed (or was idle too long): the message.
    Failed(String),
    /// The client stopped taking it.
    ClientGone,
}

/// Pulls `upstream` to its end into `exchange`, handing each chunk to the client side.
async fn read_upstream<S>(
    mut upstream: S,
    mut exchange: Option<Exchange>,
    idle: Duration,
    tx: mpsc::Sender<Chunk>,
    budget: Arc<Semaphore>,
) where
    S: futures_util::Stream<Item = Result<Bytes, String>> + Unpin,
{
    let mut relayed: u64 = 0;
    // The idle timer is moved only when it fires (to the last chunk's time plus `idle`), not
    // reset per chunk: a timer reset per event was a good part of a small event's cost.
    let mut last_chunk = tokio::time::Instant::now();
    let idle_timer = tokio::time::sleep(idle);
    tokio::pin!(idle_timer);
    let end = loop {
        let next = tokio::select! {
            biased;
            next = upstream.next() => next,
            () = tx.closed() => break End::ClientGone,
            () = &mut idle_timer => {
                let deadline = last_chunk + idle;
                if tokio::time::Instant::now() >= deadline {
                    break End::Failed(crate::core::stream::errors::IDLE_TIMEOUT.to_string());
                }
                idle_timer.as_mut().reset(deadline);
                continue;
            }
        };
        let (bytes, after) = match next {
            Some(Ok(bytes)) => join_ready(bytes, &mut upstream),
            None => break End::Complete,
            Some(Err(e)) => break End::Failed(e),
        };
        if let Some(exchange) = exchange.as_mut() {
            exchange.chunk(&bytes);
        }
        // Room in the read-ahead, or the client is gone.
        match budget.acquire_many(permits(bytes.len())).await {
            Ok(permit) => permit.forget(),
            Err(_) => break End::ClientGone,
        }
        relayed += bytes.len() as u64;
        if tx.send(Ok(bytes)).await.is_err() {
            break End::ClientGone;
        }
        last_chunk = tokio::time::Instant::now();
        match after {
            After::More => {}
            After::Ended => break End::Complete,
            After::Failed(e) => break End::Failed(e),
        }
    };
    match end {
        End::Complete => {
            if let Some(exchange) = exchange {
                exchange.finish();
            }
        }
        End::Failed(message) => {
            if let Some(mut exchange) = exchange {
                exchange.fail(ErrorClass::Stream, message.clone());
                exchange.finish();
            }
            let _ = tx.send(Err(message)).await;
        }
        End::ClientGone => {
            let Some(mut exchange) = exchange else {
                return;
            };
            // A Content-Length body that was written whole is complete: hyper stops polling
            // the body once the length is reached. Otherwise the client really went away.
            if exchange.expected_length().is_some_and(|len| relayed >= len) {
                exchange.finish();
                return;
            }
            exchange.fail(
                ErrorClass::Cancelled,
                format!(
                    "the client closed the connection before the response ended ({relayed} bytes relayed)"
                ),
            );
            exchange.finish();
        }
    }
}
