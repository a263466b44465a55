//! [`TimelineModel`]: the live event timeline of a send — every raw event with its mapping,
//! receive time and attempt number; the type and text filter; follow-tail or paused; the
//! selection; gap statistics (time to first event, to first text, the longest gap); the attempts
//! with their failures and retry decisions; and the outcome. The panel that draws it is
//! [`crate::ui::timeline`].
//!
//! Cheap per frame: everything a row shows (preview, badge, type) is computed once when the event
//! arrives, the rows that pass the filter are kept as an index list updated per arriving event,
//! and the filter is re-applied over all events only when it changes — never per frame. A frame
//! costs the visible rows only.
//!
//! # Mounting it in the app shell
//!
//! 1. `AppState` owns a `TimelineModel` (one per send; [`TimelineModel::clear`] when a new send
//!    starts) and a [`crate::ui::timeline::TimelinePanelState`].
//! 2. The send worker (tokio task) converts each transport `SendEvent` with
//!    [`TimelineUpdate::from_send_event`] (owned, `Send`) and, when the send returns,
//!    [`TimelineUpdate::finished`] with the `SendResult`; it sends them on the bounded channel
//!    and asks for a repaint (`ctx.request_repaint_after(10 ms)`; `request_repaint()` after the
//!    last one).
//! 3. `logic()` drains the channel (time-boxed) into [`TimelineModel::apply`].
//! 4. `ui()` mounts the panel, e.g. in a bottom or central panel:
//!    `let cmds = crate::ui::timeline::timeline_ui(ui, &state.timeline, &mut state.timeline_ui);`
//!    and the single mutation point applies each with [`TimelineModel::handle`] (the commands
//!    only touch the timeline; `TimelineCommand::CopyText` is for the shell to put on the
//!    clipboard).
//! 5. Stop/Esc cancels the worker's `CancelToken`; the partial outcome arrives in `finished`.
//!    Continue (the turn loop) needs the finished [`TimelineModel::outcome`] and the pending
//!    calls (`core::turn_loop::pending_calls`).

use std::collections::BTreeMap;
use std::time::Duration;

use crate::core::stream::{ErrorClass, MappedEvent, TimelineEntry, TurnOutcome, TurnState};
use crate::transport::{SendEvent, SendResult};

/// Most events kept as rows; later ones still count in the outcome and in [`TimelineModel::dropped`].
pub const MAX_ROWS: usize = 1_000_000;

/// Most bytes of event data kept as rows (the stored events keep every byte): a long answer
/// does not take the app's memory with it.
pub const MAX_ROW_BYTES: usize = 256 << 20;

/// Longest preview shown in a row, in characters.
pub const PREVIEW_CHARS: usize = 96;

/// A badge on a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Badge {
    /// The event records an error (`response.failed`, `response.incomplete`, …).
    Error,
    /// The data did not parse.
    Unparsed,
    /// A client ignores the event (no mapping).
    Ignored,
}

impl Badge {
    /// Short label.
    pub fn label(self) -> &'static str {
        match self {
            Self::Error => "error",
            Self::Unparsed => "unparsed",
            Self::Ignored => "ignored",
        }
    }
}

/// One row: an event and what is shown for it (computed once).
#[derive(Debug, Clone, PartialEq)]
pub struct TimelineRow {
    /// Attempt number, from 1.
    pub attempt: u32,
    /// The event and its mapping.
    pub entry: TimelineEntry,
    /// Its type for the filter: the data `type`, or `(unparsed)` / `(no type)`.
    pub type_key: String,
    /// A short preview (delta text, item id and call name, error message).
    pub preview: String,
    /// Error / unparsed / ignored.
    pub badge: Option<Badge>,
}

/// How an attempt went.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AttemptInfo {
    /// Attempt number, from 1.
    pub number: u32,
    /// HTTP status (101 for a WebSocket).
    pub status: Option<u16>,
    /// When the response headers arrived.
    pub response_at: Option<Duration>,
    /// Events received.
    pub events: usize,
    /// Why it failed and what happened next.
    pub failure: Option<FailureInfo>,
}

/// A failure: its class, message, and the retry decision.
#[derive(Debug, Clone, PartialEq)]
pub struct FailureInfo {
    /// Error class (`retry_limit`, `stream`, `cancelled`, …).
    pub class: ErrorClass,
    /// The message.
    pub message: String,
    /// The delay the server asked for (`Retry-After` or a hint in the message).
    pub retry_after: Option<Duration>,
    /// `Some(delay)` when the send retried after this delay, `None` when it did not.
    pub retried_after: Option<Duration>,
    /// Whether the class is retryable at all.
    pub retryable: bool,
}

/// An owned update for the model, sent from the send worker.
#[derive(Debug, Clone, PartialEq)]
pub enum TimelineUpdate {
    /// Attempt `attempt` is being sent.
    AttemptStarted {
        /// Attempt number, from 1.
        attempt: u32,
    },
    /// The response headers arrived.
    Response {
        /// HTTP status.
        status: u16,
        /// Time since the attempt was sent.
        at: Duration,
    },
    /// One event.
    Entry(Box<TimelineEntry>),
    /// The current attempt failed and the send retries after `delay`.
    Retrying {
        /// The failure.
        failure: FailureInfo,
    },
    /// The send ended: the last attempt's outcome and, if it did not complete, why.
    Finished {
        /// The outcome (partial when stopped or failed).
        outcome: Box<TurnOutcome>,
        /// Why the send did not complete.
        failure: Option<FailureInfo>,
    },
}

impl TimelineUpdate {
    /// The update for a transport progress event.
    pub fn from_send_event(event: &SendEvent<'_>) -> Option<Self> {
        Some(match event {
            SendEvent::AttemptStarted { attempt } => Self::AttemptStarted { attempt: *attempt },
            SendEvent::Response { status, at, .. } => Self::Response {
                status: *status,
                at: *at,
            },
            SendEvent::Entry(entry) => Self::Entry(Box::new((*entry).clone())),
            SendEvent::Retrying { error, delay, .. } => Self::Retrying {
                failure: FailureInfo {
                    class: error.class(),
                    message: error.to_string(),
                    retry_after: error.retry_after(),
                    retried_after: Some(*delay),
                    retryable: true,
                },
            },
            SendEvent::HeaderEvents(_) => return None,
        })
    }

    /// The final update for a finished send.
    pub fn finished(result: &SendResult) -> Self {
        Self::Finished {
            outcome: Box::new(result.outcome().cloned().unwrap_or_default()),
            failure: result.error.as_ref().map(|e| FailureInfo {
                class: e.class(),
                message: e.to_string(),
                retry_after: e.retry_after(),
                retried_after: None,
                retryable: e.is_retryable(),
            }),
        }
    }
}

/// A request from the timeline panel (applied by [`TimelineModel::handle`]).
#[derive(Debug, Clone, PartialEq)]
pub enum TimelineCommand {
    /// Select a row (an index into all rows), or none.
    Select(Option<usize>),
    /// Show only events whose raw data or event name contains this text (case-insensitive).
    SetFilterText(String),
    /// Show or hide events of this type.
    SetTypeShown(String, bool),
    /// Show every type again.
    ShowAllTypes,
    /// Follow the newest event (`true`) or stay where the user scrolled (`false`).
    Follow(bool),
    /// Text for the clipboard (the shell copies it).
    CopyText(String),
}

/// Gap statistics, over events as they arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GapStats {
    /// When the first event arrived (of the attempt that delivered it).
    pub first_event: Option<Duration>,
    /// When the first output text delta arrived.
    pub first_text: Option<Duration>,
    /// The longest silence between two consecutive events of an attempt, and the row after
    /// which it started.
    pub longest_gap: Option<(usize, Duration)>,
    /// When the last event arrived.
    pub last_event: Option<Duration>,
}

/// The timeline of one send.
#[derive(Debug, Clone, Default)]
pub struct TimelineModel {
    rows: Vec<TimelineRow>,
    visible: Vec<usize>,
    filter_text: String,
    filter_lower: String,
    hidden_types: Vec<String>,
    type_counts: BTreeMap<String, usize>,
    paused: bool,
    selected: Option<usize>,
    gaps: GapStats,
    attempts: Vec<AttemptInfo>,
    /// The current attempt's outcome so far, accumulated per event.
    live: TurnOutcome,
    outcome: Option<TurnOutcome>,
    /// Events not kept as rows (over the row limit).
    dropped: u64,
    /// Bytes of event data kept as rows.
    kept_bytes: usize,
    /// Row limit when not [`MAX_ROWS`].
    max_rows: Option<usize>,
    failure: Option<FailureInfo>,
}

mod model;
mod row;

pub use row::{UNPARSED_TYPE, UNTYPED};
