//! The one sender every live send goes through — the workbench's Send, the Sessions view's
//! Re-send and the CLI's `send`: a [`Sender`] (HTTP SSE or WebSocket, chosen from the [`Wire`]
//! of the compiled column) started on a tokio runtime returns a [`LiveSend`]: its
//! [`CancelToken`] and a bounded receiver of owned [`LiveEvent`]s (entries shared as
//! `Arc<TimelineEntry>`) that ends with [`LiveEvent::Done`] and the send's [`SendResult`].
//! Consumers never see a borrowed callback (the transports' `on_event` stays inside transport).
//!
//! Back-pressure ([`LIVE_QUEUE`] events): when the queue is full, what one read decoded waits in
//! a small backlog and the send reads nothing more (its task awaits, so the async workers — and
//! the recording proxy on them — run on) until its consumer has taken it. The consumer must
//! therefore be a thread that only hands events on without waiting on anything slow: the app's
//! drain queues to the database's writer and to a separate UI-reporting thread, never to the UI
//! directly; the CLI's prints and queues (and waits briefly while the writer holds more than
//! [`crate::store::send_recording::HELD_EVENT_BYTES`]).
//!
//! The shared types ([`SendOptions`], [`SendError`], [`SendResult`], [`CancelToken`],
//! [`resolve_headers`]…) are in `types`, re-exported here.

mod types;

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::HeaderMap;
use tokio::runtime::Handle;
use tokio::sync::mpsc::error::TrySendError;

pub(crate) use types::now_http_date;
pub use types::{
    Attempt, CancelToken, DEFAULT_DEADLINE, PrepareError, SendError, SendEvent, SendOptions,
    SendResult, resolve_headers,
};

use super::http::HttpSender;
use super::read_loop::Sink;
use super::ws::WsSender;
use crate::core::compile::CompiledRequest;
use crate::core::stream::{MappedEvent, TimelineEntry};

/// Live events a send may queue before it waits for its consumer.
pub const LIVE_QUEUE: usize = 256;

/// How a compiled column goes out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// The body, POSTed over HTTP and answered as SSE.
    Http,
    /// The `response.create` frame, over a WebSocket.
    WebSocket,
}

/// The sender of one wire.
#[derive(Debug, Clone)]
pub enum Sender {
    /// HTTP SSE.
    Http(HttpSender),
    /// WebSocket.
    Ws(WsSender),
}

/// Progress of a live send, owned (it crosses threads).
#[derive(Debug, Clone)]
pub enum LiveEvent {
    /// Attempt `attempt` (from 1) is being sent.
    AttemptStarted {
        /// Attempt number, from 1.
        attempt: u32,
    },
    /// The response headers (or the WebSocket upgrade) arrived.
    Response {
        /// HTTP status.
        status: u16,
        /// Response headers (name, value).
        headers: Vec<(String, String)>,
        /// Time since the attempt was sent.
        at: Duration,
    },
    /// Events derived from the response headers, before any body event.
    HeaderEvents(Vec<MappedEvent>),
    /// One raw event and its mapping, as soon as it was decoded.
    Entry(Arc<TimelineEntry>),
    /// The attempt failed with a retryable error; the next starts after `delay`.
    Retrying {
        /// The failed attempt's number.
        attempt: u32,
        /// Why it failed.
        error: SendError,
        /// How long the send waits.
        delay: Duration,
    },
    /// The send is over; always the last event.
    Done(Box<SendResult>),
}

impl LiveEvent {
    /// The owned copy of a transport progress event.
    pub fn of(event: &SendEvent<'_>) -> Self {
        match event {
            SendEvent::AttemptStarted { attempt } => Self::AttemptStarted { attempt: *attempt },
            SendEvent::Response {
                status,
                headers,
                at,
            } => Self::Response {
                status: *status,
                headers: headers.to_vec(),
                at: *at,
            },
            SendEvent::HeaderEvents(events) => Self::HeaderEvents(events.to_vec()),
            SendEvent::Entry(entry) => Self::Entry(Arc::new((*entry).clone())),
            SendEvent::Retrying {
                attempt,
                error,
                delay,
            } => Self::Retrying {
                attempt: *attempt,
                error: (*error).clone(),
                delay: *delay,
            },
        }
    }

    /// The progress event this is, borrowed (None for [`LiveEvent::Done`]).
    pub fn progress(&self) -> Option<SendEvent<'_>> {
        Some(match self {
            Self::AttemptStarted { attempt } => SendEvent::AttemptStarted { attempt: *attempt },
            Self::Response {
                status,
                headers,
                at,
            } => SendEvent::Response {
                status: *status,
                headers,
                at: *at,
            },
            Self::HeaderEvents(events) => SendEvent::HeaderEvents(events),
            Self::Entry(entry) => SendEvent::Entry(entry),
            Self::Retrying {
                attempt,
                error,
                delay,
            } => SendEvent::Retrying {
                attempt: *attempt,
                error,
                delay: *delay,
            },
            Self::Done(_) => return None,
        })
    }
}

/// A running send: its cancel token and its events.
#[derive(Debug)]
pub struct LiveSend {
    /// Stops the send; what arrived still ends in [`LiveEvent::Done`].
    pub cancel: CancelToken,
    /// The events, ending with [`LiveEvent::Done`] (bounded: [`LIVE_QUEUE`]).
    pub events: tokio::sync::mpsc::Receiver<LiveEvent>,
}

impl LiveSend {
    /// The next event, waiting for it; None once the send is over (after `Done`). Call it on a
    /// thread, not on an async worker.
    pub fn next_blocking(&mut self) -> Option<LiveEvent> {
        self.events.blocking_recv()
    }
}

impl Sender {
    /// A sender of `wire` for the Responses endpoint `url`.
    pub fn new(wire: Wire, url: &str, options: SendOptions) -> Result<Self, PrepareError> {
        Ok(match wire {
            Wire::Http => Self::Http(HttpSender::new(url, options)?),
            Wire::WebSocket => Self::Ws(WsSender::new(url, options)?),
        })
    }

    /// The wire it sends over.
    pub fn wire(&self) -> Wire {
        match self {
            Self::Http(_) => Wire::Http,
            Self::Ws(_) => Wire::WebSocket,
        }
    }

    /// Sends `request` and reports progress to `on_event` (the transports' own interface; the
    /// consumers outside transport use [`Sender::start`]).
    pub async fn send<F>(
        &self,
        request: &CompiledRequest,
        headers: &HeaderMap,
        cancel: &CancelToken,
        on_event: F,
    ) -> SendResult
    where
        F: FnMut(SendEvent<'_>) + Send,
    {
        match self {
            Self::Http(s) => s.send(request, headers, cancel, on_event).await,
            Self::Ws(s) => s.send(request, headers, cancel, on_event).await,
        }
    }

    /// Starts sending `request` with `headers` (from [`resolve_headers`]) on `runtime`; `cancel`
    /// stops it. See the module header for what a slow consumer does to the send.
    pub fn start(
        &self,
        runtime: &Handle,
        request: Arc<CompiledRequest>,
        headers: HeaderMap,
        cancel: CancelToken,
    ) -> LiveSend {
        let (tx, events) = tokio::sync::mpsc::channel(LIVE_QUEUE);
        let mut queue = Queue {
            tx,
            backlog: VecDeque::new(),
            cancel: cancel.clone(),
        };
        let sender = self.clone();
        let token = cancel.clone();
        runtime.spawn(async move {
            let result = match &sender {
                Self::Http(s) => s.send_to(&request, &headers, &token, &mut queue).await,
                Self::Ws(s) => s.send_to(&request, &headers, &token, &mut queue).await,
            };
            queue.finish(result).await;
        });
        LiveSend { cancel, events }
    }
}

/// The producer's end of a live send's queue: events wait in a small backlog until the read
/// loop asks whether it may read on ([`Sink::ready`]), which waits until the consumer has
/// taken them.
struct Queue {
    tx: tokio::sync::mpsc::Sender<LiveEvent>,
    /// Events reported since the last [`Sink::ready`] that did not fit (one chunk's worth).
    backlog: VecDeque<LiveEvent>,
    cancel: CancelToken,
}

impl Sink for Queue {
    fn event(&mut self, event: SendEvent<'_>) {
        self.push(LiveEvent::of(&event));
    }

    fn entry(&mut self, entry: TimelineEntry) {
        self.push(LiveEvent::Entry(Arc::new(entry)));
    }

    async fn ready(&mut self) {
        while let Some(event) = self.backlog.pop_front() {
            if self.tx.send(event).await.is_err() {
                return self.gone();
            }
        }
    }
}

impl Queue {
    /// Queues `event` behind what waits already (never waits itself).
    fn push(&mut self, event: LiveEvent) {
        if !self.backlog.is_empty() {
            return self.backlog.push_back(event);
        }
        match self.tx.try_send(event) {
            Ok(()) => {}
            Err(TrySendError::Full(event)) => self.backlog.push_back(event),
            Err(TrySendError::Closed(_)) => self.gone(),
        }
    }

    /// Flushes the backlog, then the result.
    async fn finish(mut self, result: SendResult) {
        self.ready().await;
        let _ = self.tx.send(LiveEvent::Done(Box::new(result))).await;
    }

    /// The consumer is gone: stop the send.
    fn gone(&mut self) {
        self.backlog.clear();
        self.cancel.cancel();
    }
}
