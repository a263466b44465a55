//! The sessions browser of the sidebar: recorded sessions and their requests read from the SQLite
//! store on a background thread (never on the UI thread), and a stored request's exact body
//! loaded back into the form through body import.

use std::path::PathBuf;
use std::sync::mpsc::{Receiver, Sender, channel};

use serde_json::Value;

use crate::store::seed::open_seeded;
use crate::store::{Page, RequestSummary, SessionSummary};

/// Sessions shown per page.
const PAGE: u64 = 200;

/// What a background read produced.
#[derive(Debug)]
enum Loaded {
    Sessions(Result<Vec<SessionSummary>, String>),
    Requests(i64, Result<Vec<RequestSummary>, String>),
    Body(i64, Result<Value, String>),
}

/// State of the sessions browser.
#[derive(Debug)]
pub struct SessionsBrowser {
    /// The database file (None: no store for this workbench).
    pub db_path: Option<PathBuf>,
    /// Sessions, newest first.
    pub sessions: Vec<SessionSummary>,
    /// The expanded session.
    pub open_session: Option<i64>,
    /// Requests of the expanded session.
    pub requests: Vec<RequestSummary>,
    /// The last read error.
    pub error: Option<String>,
    /// A read is under way.
    pub loading: bool,
    /// Sessions were listed at least once.
    pub listed: bool,
    tx: Sender<Loaded>,
    rx: Receiver<Loaded>,
}

/// A stored body ready to import: (request id, body).
pub type LoadedBody = (i64, Result<Value, String>);

impl SessionsBrowser {
    /// A browser over the database at `db_path` (created and seeded on first use).
    pub fn new(db_path: Option<PathBuf>) -> Self {
        let (tx, rx) = channel();
        Self {
            db_path,
            sessions: Vec::new(),
            open_session: None,
            requests: Vec::new(),
            error: None,
            loading: false,
            listed: false,
            tx,
            rx,
        }
    }

    fn spawn(
        &mut self,
        ctx: &egui::Context,
        job: impl FnOnce(&PathBuf) -> Loaded + Send + 'static,
    ) {
        let Some(path) = self.db_path.clone() else {
            return;
        };
        let tx = self.tx.clone();
        let ctx = ctx.clone();
        self.loading = true;
        let spawned = std::thread::Builder::new()
            .name("promptwire-store-read".to_string())
            .spawn(move || {
                let _ = tx.send(job(&path));
                ctx.request_repaint();
            });
        if let Err(e) = spawned {
            self.loading = false;
            self.error = Some(format!("cannot start a reader thread: {e}"));
        }
    }

    /// Lists the sessions (newest first).
    pub fn refresh(&mut self, ctx: &egui::Context) {
        self.listed = true;
        self.spawn(ctx, |path| {
            Loaded::Sessions(
                open_seeded(path)
                    .and_then(|store| store.list_sessions(Page::first(PAGE)))
                    .map_err(|e| e.to_string()),
            )
        });
    }

    /// Expands a session and loads its requests.
    pub fn open(&mut self, ctx: &egui::Context, session: i64) {
        self.open_session = Some(session);
        self.requests.clear();
        self.spawn(ctx, move |path| {
            Loaded::Requests(
                session,
                open_seeded(path)
                    .and_then(|store| store.requests(session, Page::first(10_000)))
                    .map_err(|e| e.to_string()),
            )
        });
    }

    /// Loads a stored request's body.
    pub fn load_body(&mut self, ctx: &egui::Context, request: i64) {
        self.spawn(ctx, move |path| {
            Loaded::Body(
                request,
                open_seeded(path)
                    .and_then(|store| store.body(request))
                    .map_err(|e| e.to_string())
                    .and_then(|body| {
                        body.value
                            .ok_or_else(|| "the stored body is not JSON".to_string())
                    }),
            )
        });
    }

    /// Applies finished reads; returns a loaded body for the form, if one arrived.
    pub fn poll(&mut self) -> Option<LoadedBody> {
        let mut body = None;
        while let Ok(loaded) = self.rx.try_recv() {
            self.loading = false;
            match loaded {
                Loaded::Sessions(Ok(sessions)) => {
                    self.sessions = sessions;
                    self.error = None;
                }
                Loaded::Requests(id, Ok(requests)) if self.open_session == Some(id) => {
                    self.requests = requests;
                    self.error = None;
                }
                Loaded::Requests(_, Ok(_)) => {}
                Loaded::Body(id, result) => body = Some((id, result)),
                Loaded::Sessions(Err(e)) | Loaded::Requests(_, Err(e)) => self.error = Some(e),
            }
        }
        body
    }
}
