//! `record --otlp` and the Record panel's "also export to OpenTelemetry": each request the
//! proxy records becomes a span as soon as its outcome is in the database.
//!
//! [`LiveExport::observe`] reads the proxy's events on the caller's side and only hands request
//! ids to a bounded queue (`try_send`: a full queue counts and drops, the relay never waits). A
//! thread of its own reads each recorded request back from the database (its own connection),
//! computes its session's ledger — once per burst of requests of a session, not once per
//! request — maps the new requests to spans and submits them to the [`OtlpExporter`]. When the
//! export stops ([`LiveExport::finish`]) each session it touched gets its root span, covering
//! the requests recorded so far, and the queue is flushed.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use super::exporter::{OtlpConfig, OtlpError, OtlpExporter, OtlpStats};
use super::session::SessionForExport;
use crate::core::otel::SpanOptions;
use crate::store::Store;
use crate::transport::proxy::ProxyEvent;

/// Recorded requests the queue to the span builder holds.
const QUEUE: usize = 4096;

enum Msg {
    Recorded { session: i64, request: i64 },
    Stop,
}

/// A running live export.
#[derive(Debug)]
pub struct LiveExport {
    tx: SyncSender<Msg>,
    sessions: HashMap<u64, i64>,
    exporter: Arc<OtlpExporter>,
    dropped: Arc<AtomicU64>,
    problem: Arc<Mutex<Option<String>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl LiveExport {
    /// Starts exporting what the proxy records into `db` to the collector of `config`.
    pub fn start(db: PathBuf, config: OtlpConfig, options: SpanOptions) -> Result<Self, OtlpError> {
        let exporter = Arc::new(OtlpExporter::start(config)?);
        let (tx, rx) = sync_channel(QUEUE);
        let dropped = Arc::new(AtomicU64::new(0));
        let problem = Arc::new(Mutex::new(None));
        let builder = Builder {
            db,
            options,
            exporter: Arc::clone(&exporter),
            problem: Arc::clone(&problem),
            touched: BTreeSet::new(),
        };
        #[allow(
            clippy::disallowed_methods,
            reason = "the live export's span builder reads the database and computes ledgers off the relay's and the UI's threads"
        )]
        let thread = std::thread::Builder::new()
            .name("otlp-live".to_string())
            .spawn(move || builder.run(rx))
            .map_err(|e| OtlpError::Start(e.to_string()))?;
        Ok(Self {
            tx,
            sessions: HashMap::new(),
            exporter,
            dropped,
            problem,
            thread: Some(thread),
        })
    }

    /// Reads one proxy event; never waits.
    pub fn observe(&mut self, event: &ProxyEvent) {
        match event {
            ProxyEvent::Stored {
                exchange,
                session_id,
                ..
            } => {
                self.sessions.insert(*exchange, *session_id);
            }
            ProxyEvent::Recorded {
                exchange,
                request_id,
                ..
            } => {
                let Some(session) = self.sessions.remove(exchange) else {
                    return;
                };
                let msg = Msg::Recorded {
                    session,
                    request: *request_id,
                };
                if let Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) =
                    self.tx.try_send(msg)
                {
                    self.dropped.fetch_add(1, Ordering::Relaxed);
                }
            }
            ProxyEvent::NotRecorded { exchange, .. } => {
                self.sessions.remove(exchange);
            }
            _ => {}
        }
    }

    /// What the exporter has done so far (requests dropped before becoming spans count as
    /// dropped spans; a problem reading the database is the last error).
    pub fn stats(&self) -> OtlpStats {
        let mut stats = self.exporter.stats();
        stats.dropped_spans += self.dropped.load(Ordering::Relaxed);
        if let Some(p) = self
            .problem
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
        {
            stats.last_error = Some(p);
            stats.failed_spans = stats.failed_spans.max(1);
        }
        stats
    }

    /// Sends each touched session's root span, flushes (up to `timeout`) and stops; blocking.
    pub fn finish(mut self, timeout: Duration) -> OtlpStats {
        let _ = self.tx.send(Msg::Stop);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        self.exporter.flush(timeout);
        self.stats()
    }
}

struct Builder {
    db: PathBuf,
    options: SpanOptions,
    exporter: Arc<OtlpExporter>,
    problem: Arc<Mutex<Option<String>>>,
    touched: BTreeSet<i64>,
}

impl Builder {
    fn run(mut self, rx: Receiver<Msg>) {
        let mut store: Option<Store> = None;
        while let Ok(first) = rx.recv() {
            let mut stop = matches!(first, Msg::Stop);
            let mut by_session: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
            let mut add = |msg: Msg, stop: &mut bool| match msg {
                Msg::Recorded { session, request } => {
                    by_session.entry(session).or_default().push(request);
                }
                Msg::Stop => *stop = true,
            };
            add(first, &mut stop);
            // A burst of requests: one ledger per session for all of them.
            while let Ok(msg) = rx.try_recv() {
                add(msg, &mut stop);
            }
            let store = match self.store(&mut store) {
                Some(s) => s,
                None => {
                    if stop {
                        break;
                    }
                    continue;
                }
            };
            for (session, requests) in by_session {
                self.touched.insert(session);
                match SessionForExport::read(store, session, self.options) {
                    Ok(read) => match read.request_spans(self.options, Some(&requests)) {
                        Ok(spans) => {
                            self.exporter.submit(spans);
                        }
                        Err(e) => self.problem(e.to_string()),
                    },
                    Err(e) => self.problem(format!("session {session}: {e}")),
                }
            }
            if stop {
                let touched = std::mem::take(&mut self.touched);
                for session in touched {
                    match SessionForExport::read(store, session, SpanOptions::default()) {
                        Ok(read) => {
                            self.exporter.submit_wait(vec![read.root_span()]);
                        }
                        Err(e) => self.problem(format!("session {session}: {e}")),
                    }
                }
                break;
            }
        }
    }

    fn store<'a>(&self, store: &'a mut Option<Store>) -> Option<&'a Store> {
        if store.is_none() {
            match Store::open(&self.db) {
                Ok(s) => *store = Some(s),
                Err(e) => {
                    self.problem(format!("cannot read the database: {e}"));
                    return None;
                }
            }
        }
        store.as_ref()
    }

    fn problem(&self, text: String) {
        *self.problem.lock().unwrap_or_else(PoisonError::into_inner) = Some(text);
    }
}
