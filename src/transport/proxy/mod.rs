//! The recording proxy (issue 11): a local endpoint a real client (Codex CLI, an SDK) is pointed
//! at, forwarding every request to the real upstream byte for byte and streaming the answer back
//! event by event as it arrives, while recording `…/responses` and `…/responses/compact`
//! requests, their raw events with receive times and their outcomes into the store, live.
//!
//! - [`listen`]: binding and hyper's HTTP/1.1 server, shared with the replay endpoint.
//! - [`wire`]: hop-by-hop headers, upstream URLs, request-body decoding, session grouping.
//! - [`exchange`]: the store side — sessions by key, one exchange per request, through the
//!   database's one writer.
//! - [`budget`]: one memory budget shared by the request bodies being read.
//! - `forward`: the HTTP relay; `pump`: its response body (read-ahead, batched writes);
//!   `upstream`: how it reaches the upstream; `ws`: the WebSocket relay.
//!
//! The app drives it through [`start_proxy`]: a [`ServerHandle`] (address, state, stop) and a
//! bounded channel of [`ProxyEvent`]s that never makes the proxy wait (a full channel drops
//! events; the store keeps everything).

pub mod budget;
pub(crate) mod exchange;
pub(crate) mod forward;
mod h1;
pub mod listen;
mod pump;
mod upstream;
pub mod wire;
pub(crate) mod ws;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::core::stream::{StreamLimits, TimelineEntry, TurnOutcome};
use crate::store::{OutcomeRecord, Source, StoreError, WriterOptions};
use crate::transport::CancelToken;

/// Largest request body accepted from a client (bigger ones get 413 and are not forwarded).
pub const DEFAULT_MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

/// Capacity of the event channel handed to the app.
pub const DEFAULT_EVENT_CAPACITY: usize = 4096;

/// What the proxy or the replay endpoint reports as it works. The wire side (`RequestStarted`,
/// `Event`, `Outcome`) comes as the bytes pass; the store side (`Stored`, `Recorded`,
/// `NotRecorded`) when the database's writer has written it — later when the database is busy or
/// full, never holding up the client.
#[derive(Debug, Clone, PartialEq)]
pub enum ProxyEvent {
    /// A request to record arrived.
    RequestStarted {
        /// Number of the exchange within this server, from 1.
        exchange: u64,
        /// HTTP method (`POST`, or `WS` for a WebSocket `response.create`).
        method: String,
        /// Upstream URL (credential query parameters redacted).
        url: String,
        /// `standard` / `lite`.
        dialect: Option<String>,
    },
    /// A request that is relayed but not recorded (any endpoint but `POST …/responses` and
    /// `…/responses/compact`: models, chat completions, retrieving a response).
    Passthrough {
        /// HTTP method.
        method: String,
        /// Path, without the query.
        path: String,
    },
    /// One event passed to the client, decoded and mapped (the app shows it as it is).
    Event {
        /// The exchange it belongs to.
        exchange: u64,
        /// The raw event (receive time since the request arrived) and its mapping.
        entry: Box<TimelineEntry>,
    },
    /// The exchange ended on the wire.
    Outcome {
        /// The exchange.
        exchange: u64,
        /// HTTP status (`None` when no answer came).
        status: Option<u16>,
        /// How it ended, as handed to the store.
        outcome: Box<OutcomeRecord>,
        /// The turn as the reader put it together (a streamed answer's), for the timeline.
        turn: Option<Box<TurnOutcome>>,
    },
    /// The request row is in the database.
    Stored {
        /// The exchange.
        exchange: u64,
        /// The stored session it was grouped into.
        session_id: i64,
        /// The stored request.
        request_id: i64,
    },
    /// The outcome is in the database: what a later read will show.
    Recorded {
        /// The exchange.
        exchange: u64,
        /// The stored request.
        request_id: i64,
        /// The outcome as stored (with what the recording lost, if anything).
        outcome: Box<OutcomeRecord>,
        /// Raw events stored for the request.
        stored_events: u64,
        /// The HTTP status stored with it (`None`: no answer was stored).
        status: Option<u16>,
    },
    /// The request could not be recorded at all (the client was served all the same).
    NotRecorded {
        /// The exchange.
        exchange: u64,
        /// Why.
        reason: String,
    },
    /// The database's writer cannot write now (`Some(why)`: it keeps what it can and retries),
    /// or writes again (`None`).
    StoreProblem(Option<String>),
    /// A line for the user: a warning, a replay difference, a recording problem.
    Note(String),
    /// A client's WebSocket upgrade failed (refused by the upstream, unreachable, or a bad
    /// handshake): the client got the refusal, nothing was recorded.
    UpgradeFailed {
        /// The path the client asked to upgrade.
        path: String,
        /// The upstream's HTTP status, when it answered one.
        status: Option<u16>,
        /// What happened, in one line.
        reason: String,
    },
}

/// Where a server is in its life.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerState {
    /// Accepting connections.
    Running,
    /// Stop requested; in-flight responses get a short grace period.
    Stopping,
    /// Stopped; everything recorded is committed.
    Stopped,
}

/// Why a server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The listen address cannot be bound.
    #[error("cannot listen on {listen}: {reason}")]
    BadListen {
        /// The address given.
        listen: String,
        /// Why.
        reason: String,
    },
    /// The upstream URL cannot be used.
    #[error("invalid upstream URL {url}: {reason}")]
    BadUpstream {
        /// The URL given.
        url: String,
        /// Why.
        reason: String,
    },
    /// The store cannot be opened or read.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A recording cannot be served.
    #[error("{0}")]
    Replay(String),
}

/// A running proxy or replay endpoint.
#[derive(Debug)]
pub struct ServerHandle {
    addr: SocketAddr,
    warning: Option<String>,
    state: Arc<Mutex<ServerState>>,
    cancel: CancelToken,
    task: Option<JoinHandle<()>>,
}

impl ServerHandle {
    pub(crate) fn spawn<F>(
        addr: SocketAddr,
        warning: Option<String>,
        cancel: CancelToken,
        work: F,
    ) -> Self
    where
        F: std::future::Future<Output = ()> + Send + 'static,
    {
        let state = Arc::new(Mutex::new(ServerState::Running));
        let done = Arc::clone(&state);
        let task = tokio::spawn(async move {
            work.await;
            *done.lock().unwrap_or_else(PoisonError::into_inner) = ServerState::Stopped;
        });
        Self {
            addr,
            warning,
            state,
            cancel,
            task: Some(task),
        }
    }

    /// The address it listens on (with the port the system chose for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The base URL a client is pointed at (`http://ADDR`).
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The warning given at start (a non-loopback address), if any.
    pub fn warning(&self) -> Option<&str> {
        self.warning.as_deref()
    }

    /// Where it is in its life.
    pub fn state(&self) -> ServerState {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Asks it to stop (returns at once; see [`ServerHandle::stopped`]).
    pub fn stop(&self) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if *state == ServerState::Running {
            *state = ServerState::Stopping;
        }
        self.cancel.cancel();
    }

    /// Waits until it has stopped and everything recorded is committed.
    pub async fn stopped(mut self) {
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

/// How to run the recording proxy.
#[derive(Debug, Clone)]
pub struct ProxyOptions {
    /// `HOST:PORT` to listen on (`127.0.0.1:0` picks a free port).
    pub listen: String,
    /// The real endpoint's base URL (`https://api.openai.com/v1`).
    pub upstream: String,
    /// Database to record into; `None` records nothing (pure pass-through).
    pub db: Option<PathBuf>,
    /// Session name (the first session; later ones get ` #2`, ` #3`…); default from the key.
    pub session_name: Option<String>,
    /// Largest request body accepted.
    pub max_body_bytes: usize,
    /// Capacity of the event channel.
    pub event_capacity: usize,
    /// Limit on connecting to the upstream.
    pub connect_timeout: Duration,
    /// Limit on waiting for each chunk of the upstream's answer.
    pub idle_timeout: Duration,
    /// Size limits on each recorded answer (per event, per response): past them the client
    /// still receives every byte, but the recording ends as `limit_exceeded`.
    pub limits: StreamLimits,
    /// Bounds of the database's writer, when this proxy starts it (a writer already running
    /// for the database in this process keeps its own).
    pub writer: WriterOptions,
    /// Bounds on the client connections it holds (head timeout, how many).
    pub connections: listen::ConnectionLimits,
    /// Memory for all request bodies being read at once ([`budget`]): a body that finds none
    /// left is answered 503.
    pub body_budget_bytes: usize,
    /// Root certificates trusted for the upstream besides the web's (a private CA), for HTTP
    /// and WebSocket alike; `None`: the web's roots only.
    pub upstream_ca: Option<crate::transport::tls::ExtraRoots>,
}

impl ProxyOptions {
    /// Options with the defaults: loopback, recording into `db`.
    pub fn new(listen: &str, upstream: &str, db: Option<PathBuf>) -> Self {
        Self {
            listen: listen.to_string(),
            upstream: upstream.to_string(),
            db,
            session_name: None,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            event_capacity: DEFAULT_EVENT_CAPACITY,
            connect_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(300),
            limits: StreamLimits::default(),
            writer: WriterOptions::default(),
            connections: listen::ConnectionLimits::default(),
            body_budget_bytes: budget::DEFAULT_BODY_BUDGET_BYTES,
            upstream_ca: None,
        }
    }
}

/// Starts the recording proxy on the current tokio runtime. Returns its handle and the receiving
/// end of its event channel.
pub async fn start_proxy(
    options: ProxyOptions,
) -> Result<(ServerHandle, mpsc::Receiver<ProxyEvent>), ServerError> {
    let upstream =
        reqwest::Url::parse(&options.upstream).map_err(|e| ServerError::BadUpstream {
            url: crate::core::redact::redact_url(&options.upstream),
            reason: e.to_string(),
        })?;
    if !matches!(upstream.scheme(), "http" | "https") {
        return Err(ServerError::BadUpstream {
            url: options.upstream.clone(),
            reason: format!("unsupported scheme `{}`", upstream.scheme()),
        });
    }
    if !upstream.username().is_empty() || upstream.password().is_some() {
        return Err(ServerError::BadUpstream {
            url: crate::core::redact::redact_url(&options.upstream),
            reason: "it carries credentials (user:password@), which would not be forwarded; the \
                     client's own Authorization header goes upstream untouched"
                .to_string(),
        });
    }
    if upstream.query().is_some() || upstream.fragment().is_some() {
        return Err(ServerError::BadUpstream {
            url: crate::core::redact::redact_url(&options.upstream),
            reason: "it has a query or fragment, which would be dropped from every forwarded \
                     URL; give the base URL only (e.g. https://api.openai.com/v1)"
                .to_string(),
        });
    }
    let connections = options.connections;
    let (tx, rx) = mpsc::channel(options.event_capacity.max(1));
    let (db, name, limits, writer) = (
        options.db.clone(),
        options.session_name.clone(),
        options.limits,
        options.writer,
    );
    // Opening the database's writer reads the file: not on an async worker.
    let sink = tokio::task::spawn_blocking(move || {
        exchange::Sink::open_with(db.as_deref(), name, Source::Proxy, None, tx, writer)
    })
    .await
    .map_err(|e| ServerError::Replay(format!("opening the database: {e}")))??;
    let sink = Arc::new(sink.with_limits(limits));
    let (listener, addr, warning) = listen::bind(&options.listen).await?;
    let relay = forward::Relay::new(upstream, &options, Arc::clone(&sink)).map_err(|e| {
        ServerError::BadUpstream {
            url: options.upstream.clone(),
            reason: e,
        }
    })?;
    let relay = Arc::new(relay);
    let cancel = CancelToken::new();
    let serve_cancel = cancel.clone();
    let work = async move {
        let service = move |req, conn| {
            let relay = Arc::clone(&relay);
            async move { relay.handle(req, conn).await }
        };
        let watch = tokio::spawn(watch_writer(Arc::clone(&sink)));
        listen::serve(listener, service, serve_cancel, connections).await;
        watch.abort();
        close_sink(sink).await;
    };
    Ok((ServerHandle::spawn(addr, warning, cancel, work), rx))
}

/// Reports the writer's trouble as it starts and ends (checked every 250 ms; a problem that
/// came and went between two looks is reported too, started and over).
pub(crate) async fn watch_writer(sink: Arc<exchange::Sink>) {
    let mut shown: Option<String> = None;
    let mut troubles = 0;
    loop {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let Some(status) = sink.writer_status() else {
            return;
        };
        let missed = status.troubles > troubles && shown.is_none() && status.problem.is_none();
        troubles = status.troubles;
        if missed && let Some(problem) = &status.last_problem {
            sink.emit(ProxyEvent::StoreProblem(Some(format!(
                "{problem}; retried, and it is over"
            ))));
            sink.emit(ProxyEvent::StoreProblem(None));
            continue;
        }
        let now = status
            .problem
            .map(|problem| format!("{problem}; {} writes waiting, retrying", status.pending));
        if now.is_some() != shown.is_some() {
            sink.emit(ProxyEvent::StoreProblem(now.clone()));
        }
        shown = now;
    }
}

/// Waits (briefly) for the last exchanges to let go of the sink, then lets go of the writer off
/// the async threads (the last handle of a database's writer waits for it to commit).
pub(crate) async fn close_sink(sink: Arc<exchange::Sink>) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
    while Arc::strong_count(&sink) > 1 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // What is still to be written is written in before the writer stops (bounded by its
    // shutdown grace): said, so a stop that takes a moment is not a mystery.
    if let Some(status) = sink.writer_status() {
        let waiting = status.pending as u64 + status.journaled_events;
        if waiting > 0 {
            sink.emit(ProxyEvent::Note(format!(
                "writing {waiting} queued operations ({} MiB journaled) into the database before stopping",
                status.journal_bytes >> 20
            )));
        }
    }
    let dropped = sink.dropped_events();
    if dropped > 0 {
        sink.emit(ProxyEvent::Note(format!(
            "{dropped} events were not shown (the app fell behind); all are stored"
        )));
    }
    let _ = tokio::task::spawn_blocking(move || drop(sink)).await;
}
