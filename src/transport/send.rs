//! The one sender every live send goes through — the workbench's Send, the Sessions view's
//! Re-send and the CLI's `send`: a [`Sender`] (HTTP SSE or WebSocket, chosen from the [`Wire`]
//! of the compiled column) started on a tokio runtime returns a [`LiveSend`]: its
//! [`CancelToken`] and a bounded receiver of owned [`LiveEvent`]s (entries shared as
//! `Arc<TimelineEntry>`) that ends with [`LiveEvent::Done`] and the send's [`SendResult`].
//! Consumers never see a borrowed callback (the transports' `on_event` stays inside transport).
//!
//! Back-pressure ([`LIVE_QUEUE`] events): when the queue is full, the send waits for its
//! consumer (on a multi-thread runtime the network task moves off the async workers while it
//! waits, so other tasks — the recording proxy — keep running). The consumer must therefore be a
//! thread that only hands events on without waiting on anything slow: the app's drain queues to
//! the database's writer and to a separate UI-reporting thread, never to the UI directly; the
//! CLI's prints and queues. On a current-thread runtime, where a task cannot wait, a full queue
//! spills into a backlog instead (bounded by the send's size limits) and is flushed at the end.
//!
//! The shared types ([`SendOptions`], [`SendError`], [`SendResult`], [`CancelToken`],
//! [`resolve_headers`]…) are in `types`, re-exported here.

mod types;

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::HeaderMap;
use tokio::runtime::{Handle, RuntimeFlavor};
use tokio::sync::mpsc::error::TrySendError;

pub(crate) use types::now_http_date;
pub use types::{
    Attempt, CancelToken, DEFAULT_DEADLINE, PrepareError, SendError, SendEvent, SendOptions,
    SendResult, resolve_headers,
};

use super::http::HttpSender;
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
            can_wait: runtime.runtime_flavor() == RuntimeFlavor::MultiThread,
            cancel: cancel.clone(),
        };
        let sender = self.clone();
        let token = cancel.clone();
        runtime.spawn(async move {
            let result = sender
                .send(&request, &headers, &token, |event| {
                    queue.push(LiveEvent::of(&event));
                })
                .await;
            queue.finish(result).await;
        });
        LiveSend { cancel, events }
    }
}

/// The producer's end of a live send's queue.
struct Queue {
    tx: tokio::sync::mpsc::Sender<LiveEvent>,
    /// Events that did not fit while the task could not wait (current-thread runtime only).
    backlog: VecDeque<LiveEvent>,
    can_wait: bool,
    cancel: CancelToken,
}

impl Queue {
    /// Queues `event` in order, waiting for the consumer when the queue is full (see the
    /// module header). A consumer that is gone stops the send.
    fn push(&mut self, event: LiveEvent) {
        self.backlog.push_back(event);
        while let Some(event) = self.backlog.pop_front() {
            match self.tx.try_send(event) {
                Ok(()) => {}
                Err(TrySendError::Full(event)) if self.can_wait => {
                    let tx = &self.tx;
                    if !tokio::task::block_in_place(|| tx.blocking_send(event).is_ok()) {
                        return self.gone();
                    }
                }
                Err(TrySendError::Full(event)) => {
                    self.backlog.push_front(event);
                    return;
                }
                Err(TrySendError::Closed(_)) => return self.gone(),
            }
        }
    }

    /// Flushes the backlog, then the result.
    async fn finish(mut self, result: SendResult) {
        while let Some(event) = self.backlog.pop_front() {
            if self.tx.send(event).await.is_err() {
                return;
            }
        }
        let _ = self.tx.send(LiveEvent::Done(Box::new(result))).await;
    }

    fn gone(&mut self) {
        self.backlog.clear();
        self.cancel.cancel();
    }
}
