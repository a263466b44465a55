//! The app layer: the workbench's state and the one bridge every slow thing goes through.
//!
//! - [`AppState`] (`state.rs`) holds the document — the prompt and its undo history, compiled
//!   views, open dialog, sessions data, status — and the persisted [`Settings`].
//! - Panels never change it: they get `&AppState`, their own small UI state, and a
//!   [`CommandSender`] (`sender.rs`, modelled on rerun's `CommandSender`). The app drains the
//!   commands once per frame into [`AppState::handle`] (`handle.rs`), the single mutation point.
//!   Prompt edits are [`PromptEdit`]s (`edit.rs`), each an undo step.
//! - Nothing in `handle` reads a file, queries the store or waits. Such work is a *job* on
//!   [`Workers`] (`jobs.rs`): plain threads for disk and CPU ([`Workers::spawn`]), the app's one
//!   tokio runtime for network work ([`Workers::spawn_network`]). Jobs report [`AppEvent`]s
//!   (`event.rs`) through one bounded channel, can be cancelled ([`AppCommand::CancelJob`]) and
//!   report progress; [`AppState::poll`] (`poll.rs`) applies them in `logic()` under a 10 ms
//!   budget, asking for a repaint when more wait. The compile worker (`worker.rs`) is a
//!   long-lived "latest wins" thread on the same channel.
//! - The job functions themselves live beside their concern and do not touch `AppState`:
//!   `files.rs` (read / import / export bytes), `sessions.rs` (the one sessions model: the
//!   listed page, the open session and its rows, refreshed by every store write through
//!   [`AppEvent::StoreChanged`]), `traffic.rs` (the Traffic view's live list of every request
//!   the app handles).
//!
//! Adding a job (send, replay, proxy): add the `AppEvent` variants it reports (e.g.
//! `StreamEvent { request, raw, mapped }`, `Outcome`, `StoreChanged`), a worker function
//! `fn send_job(ctx: JobContext, …) -> impl Future<Output = JobContext>` that calls
//! `ctx.report(…)` and returns when done or when `report` returns false (cancelled, or the app
//! closed), an `AppCommand` that starts it with `workers.spawn_network("send", |ctx| send_job(ctx,
//! …))` in `handle`, and its arm in `apply_event`. The UI then reads what `apply_event` stored.
//!
//! The eframe glue (`PromptwireApp`) lives in `crate::ui`, so `ui` depends on `app`, never the
//! reverse.

pub mod command;
pub mod edit;
pub mod error;
pub mod event;
pub mod files;
pub mod handle;
pub mod imports;
pub mod jobs;
pub mod limits;
pub mod open;
pub mod otel;
pub mod panes;
pub mod poll;
pub mod proxy;
pub mod send;
pub mod sender;
pub mod session_admin;
pub mod session_view;
pub mod sessions;
pub mod settings;
pub mod state;
pub mod target_view;
pub mod timeline;
pub mod traffic;
pub mod worker;

pub use command::{AppCommand, EditField, PromptEdit};
pub use event::AppEvent;
pub use handle::AppOptions;
pub use jobs::Workers;
pub use sender::{CommandReceiver, CommandSender, command_channel};
pub use settings::Settings;
pub use state::AppState;

impl AppState {
    /// Applies every command queued in `commands` (once per frame, after the UI).
    pub fn handle_all(&mut self, commands: &CommandReceiver) {
        while let Some(command) = commands.try_recv() {
            self.handle(command);
        }
    }
}
