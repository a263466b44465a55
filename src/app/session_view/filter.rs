//! The request table's filter and sort: status class (ok / failed / interrupted), model, start
//! time range and text (model, dialect, status, error message), and a sort by one column. The
//! shown order is computed once per change of the rows or the filter
//! ([`refresh`] → [`SessionBrowser::visible`](super::SessionBrowser::visible)), never per frame:
//! a 1,000-request session filters in well under a millisecond.

use std::cmp::Ordering;

use crate::app::state::AppState;
use crate::store::summary::{OutcomeClass, RequestRow};

/// Which requests by how they ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StatusClass {
    /// Every request.
    #[default]
    All,
    /// Completed streams.
    Ok,
    /// Failed: a failed or incomplete stream, an HTTP error, no answer.
    Failed,
    /// Stopped on purpose, or still open when recording stopped.
    Interrupted,
}

impl StatusClass {
    /// Every class, in menu order.
    pub const ALL: [Self; 4] = [Self::All, Self::Ok, Self::Failed, Self::Interrupted];

    /// Shown name.
    pub fn label(self) -> &'static str {
        match self {
            Self::All => "all",
            Self::Ok => "ok",
            Self::Failed => "failed",
            Self::Interrupted => "interrupted",
        }
    }

    /// True when `outcome` is of this class.
    pub fn admits(self, outcome: &OutcomeClass) -> bool {
        match self {
            Self::All => true,
            Self::Ok => matches!(outcome, OutcomeClass::Completed),
            Self::Failed => matches!(
                outcome,
                OutcomeClass::Failed(_)
                    | OutcomeClass::Http(_)
                    | OutcomeClass::Incomplete
                    | OutcomeClass::None
            ),
            Self::Interrupted => matches!(outcome, OutcomeClass::Interrupted | OutcomeClass::Open),
        }
    }
}

/// A column the table sorts by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortColumn {
    /// Position in the session.
    Position,
    /// Start time.
    Time,
    /// Model slug.
    Model,
    /// Dialect.
    Dialect,
    /// Status text.
    Status,
    /// Input tokens.
    Input,
    /// Cached tokens.
    Cached,
    /// Uncached tokens.
    Uncached,
    /// Output tokens.
    Output,
    /// Duration.
    Duration,
    /// Time to the first event.
    FirstEvent,
    /// Body bytes.
    Bytes,
}

impl SortColumn {
    fn compare(self, a: &RequestRow, b: &RequestRow) -> Ordering {
        match self {
            Self::Position => a.position.cmp(&b.position),
            Self::Time => a.started_us.cmp(&b.started_us),
            Self::Model => a.model.cmp(&b.model),
            Self::Dialect => a.dialect.cmp(&b.dialect),
            Self::Status => a.outcome.label().cmp(&b.outcome.label()),
            Self::Input => a.input_tokens.cmp(&b.input_tokens),
            Self::Cached => a.cached_tokens.cmp(&b.cached_tokens),
            Self::Uncached => a.uncached_tokens().cmp(&b.uncached_tokens()),
            Self::Output => a.output_tokens.cmp(&b.output_tokens),
            Self::Duration => a.total_us.cmp(&b.total_us),
            Self::FirstEvent => a.first_event_us.cmp(&b.first_event_us),
            Self::Bytes => a.body_bytes.cmp(&b.body_bytes),
        }
    }
}

/// The request table's filter and sort.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RowFilter {
    /// Status class.
    pub status: StatusClass,
    /// Model contains this (case-insensitive; empty: any).
    pub model: String,
    /// Model, dialect, status or error message contains this (case-insensitive; empty: any).
    pub text: String,
    /// Started at or after (Unix microseconds).
    pub from_us: Option<i64>,
    /// Started before (Unix microseconds).
    pub to_us: Option<i64>,
    /// Sort by this column, descending when the flag is set (None: by position).
    pub sort: Option<(SortColumn, bool)>,
}

impl RowFilter {
    /// True when nothing is filtered (sorting aside).
    pub fn is_empty(&self) -> bool {
        self.status == StatusClass::All
            && self.model.trim().is_empty()
            && self.text.trim().is_empty()
            && self.from_us.is_none()
            && self.to_us.is_none()
    }

    /// True when `row` passes. `model` and `text` are the lower-cased needles.
    fn admits(&self, row: &RequestRow, model: &str, text: &str) -> bool {
        if !self.status.admits(&row.outcome) {
            return false;
        }
        if let Some(from) = self.from_us
            && row.started_us.is_none_or(|t| t < from)
        {
            return false;
        }
        if let Some(to) = self.to_us
            && row.started_us.is_none_or(|t| t >= to)
        {
            return false;
        }
        let contains = |hay: Option<&str>, needle: &str| {
            hay.is_some_and(|h| h.to_lowercase().contains(needle))
        };
        if !model.is_empty() && !contains(row.model.as_deref(), model) {
            return false;
        }
        if !text.is_empty()
            && !contains(row.model.as_deref(), text)
            && !contains(row.dialect.as_deref(), text)
            && !contains(Some(&row.outcome.label()), text)
            && !contains(row.error_message.as_deref(), text)
        {
            return false;
        }
        true
    }

    /// The rows shown, in order: indices into `rows`.
    pub fn apply(&self, rows: &[RequestRow]) -> Vec<usize> {
        let model = self.model.trim().to_lowercase();
        let text = self.text.trim().to_lowercase();
        let mut shown: Vec<usize> = (0..rows.len())
            .filter(|&i| self.admits(&rows[i], &model, &text))
            .collect();
        if let Some((column, descending)) = self.sort {
            shown.sort_by(|&a, &b| {
                let order = column.compare(&rows[a], &rows[b]).then(a.cmp(&b));
                if descending { order.reverse() } else { order }
            });
        }
        shown
    }
}

/// Computes the shown rows again (the rows or the filter changed).
pub fn refresh(state: &mut AppState) {
    state.browser.visible = state.browser.filter.apply(&state.sessions.rows);
}
