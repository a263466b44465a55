//! [`TimelineModel`]'s behaviour: ingesting updates (incremental filter and gap statistics),
//! filtering, selection, follow-tail, and the accessors the panel reads.

use std::time::Duration;

use super::{
    AttemptInfo, FailureInfo, GapStats, MAX_ROW_BYTES, MAX_ROWS, MappedEvent, TimelineCommand,
    TimelineEntry, TimelineModel, TimelineRow, TimelineUpdate, TurnOutcome, TurnState,
};

impl TimelineModel {
    /// An empty timeline, following the tail.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty timeline that keeps at most `max_rows` events as rows.
    pub fn with_max_rows(max_rows: usize) -> Self {
        Self {
            max_rows: Some(max_rows),
            ..Self::default()
        }
    }

    /// Forgets everything but the filter and the row limit (a new send starts).
    pub fn clear(&mut self) {
        let filter_text = std::mem::take(&mut self.filter_text);
        let hidden = std::mem::take(&mut self.hidden_types);
        *self = Self {
            max_rows: self.max_rows,
            filter_lower: filter_text.to_lowercase(),
            filter_text,
            hidden_types: hidden,
            ..Self::default()
        };
    }

    /// A timeline holding a recorded stream's entries (attempt 1) and its outcome.
    pub fn from_entries(entries: Vec<TimelineEntry>, outcome: TurnOutcome) -> Self {
        let mut model = Self::new();
        model.apply(TimelineUpdate::AttemptStarted { attempt: 1 });
        for entry in entries {
            model.push(entry);
        }
        let failure = model.failure_of(&outcome);
        model.apply(TimelineUpdate::Finished {
            outcome: Box::new(outcome),
            failure,
        });
        model
    }

    fn failure_of(&self, outcome: &TurnOutcome) -> Option<FailureInfo> {
        match &outcome.state {
            TurnState::Failed(e) => Some(FailureInfo {
                class: e.class(),
                message: e.to_string(),
                retry_after: e.retry_after(),
                retried_after: None,
                retryable: e.is_retryable(),
            }),
            _ => None,
        }
    }

    /// Applies one update from the send worker.
    pub fn apply(&mut self, update: TimelineUpdate) {
        match update {
            TimelineUpdate::AttemptStarted { attempt } => {
                self.live = TurnOutcome::default();
                self.attempts.push(AttemptInfo {
                    number: attempt,
                    ..AttemptInfo::default()
                });
            }
            TimelineUpdate::Response { status, at } => {
                if let Some(last) = self.attempts.last_mut() {
                    last.status = Some(status);
                    last.response_at = Some(at);
                }
            }
            TimelineUpdate::Entry(entry) => self.push(*entry),
            TimelineUpdate::Retrying { failure } => {
                if let Some(last) = self.attempts.last_mut() {
                    last.failure = Some(failure);
                }
            }
            TimelineUpdate::Finished { outcome, failure } => {
                if let Some(last) = self.attempts.last_mut()
                    && last.failure.is_none()
                {
                    last.failure = failure.clone();
                }
                self.failure = failure;
                self.outcome = Some(*outcome);
            }
        }
    }

    /// Adds one event of the current attempt: O(1) plus one filter test of this event. Past
    /// [`MAX_ROWS`] events or [`MAX_ROW_BYTES`] of their data the event only counts (outcome,
    /// attempt, [`Self::dropped`]).
    pub fn push(&mut self, entry: TimelineEntry) {
        if self.rows.len() >= self.max_rows.unwrap_or(MAX_ROWS) || self.kept_bytes >= MAX_ROW_BYTES
        {
            self.live.apply(&entry);
            self.dropped += 1;
            if let Some(last) = self.attempts.last_mut() {
                last.events += 1;
            }
            return;
        }
        let attempt = self.attempts.last().map_or(1, |a| a.number);
        let at = entry.raw.received_at;
        let index = self.rows.len();
        if let Some(last) = self.rows.last()
            && last.attempt == attempt
        {
            let gap = at.saturating_sub(last.entry.raw.received_at);
            if self.gaps.longest_gap.is_none_or(|(_, g)| gap > g) {
                self.gaps.longest_gap = Some((index - 1, gap));
            }
        }
        self.gaps.first_event.get_or_insert(at);
        self.gaps.last_event = Some(at);
        if self.gaps.first_text.is_none()
            && entry
                .mapped
                .iter()
                .any(|m| matches!(m, MappedEvent::OutputTextDelta(_)))
        {
            self.gaps.first_text = Some(at);
        }
        if let Some(last) = self.attempts.last_mut() {
            last.events += 1;
        }
        self.live.apply(&entry);
        self.kept_bytes += entry.raw.data.len();
        let row = TimelineRow::new(attempt, entry);
        *self.type_counts.entry(row.type_key.clone()).or_insert(0) += 1;
        if self.passes(&row) {
            self.visible.push(index);
        }
        self.rows.push(row);
    }

    fn passes(&self, row: &TimelineRow) -> bool {
        !self.hidden_types.contains(&row.type_key) && row.matches_text(&self.filter_lower)
    }

    fn refilter(&mut self) {
        let visible: Vec<usize> = (0..self.rows.len())
            .filter(|&i| self.passes(&self.rows[i]))
            .collect();
        self.visible = visible;
    }

    /// Applies a command from the panel.
    pub fn handle(&mut self, command: &TimelineCommand) {
        match command {
            TimelineCommand::Select(row) => {
                self.selected = row.filter(|&r| r < self.rows.len());
                if self.selected.is_some() {
                    self.paused = true;
                }
            }
            TimelineCommand::SetFilterText(text) => {
                if *text != self.filter_text {
                    self.filter_text = text.clone();
                    self.filter_lower = text.to_lowercase();
                    self.refilter();
                }
            }
            TimelineCommand::SetTypeShown(kind, shown) => {
                let hidden = self.hidden_types.iter().any(|t| t == kind);
                if *shown && hidden {
                    self.hidden_types.retain(|t| t != kind);
                    self.refilter();
                } else if !*shown && !hidden {
                    self.hidden_types.push(kind.clone());
                    self.refilter();
                }
            }
            TimelineCommand::ShowAllTypes => {
                if !self.hidden_types.is_empty() {
                    self.hidden_types.clear();
                    self.refilter();
                }
            }
            TimelineCommand::Follow(follow) => self.paused = !*follow,
            TimelineCommand::CopyText(_) => {}
        }
    }

    /// All rows, in arrival order.
    pub fn rows(&self) -> &[TimelineRow] {
        &self.rows
    }

    /// Number of rows that pass the filter.
    pub fn visible_len(&self) -> usize {
        self.visible.len()
    }

    /// The `i`-th row that passes the filter, with its index among all rows.
    pub fn visible_row(&self, i: usize) -> Option<(usize, &TimelineRow)> {
        let index = *self.visible.get(i)?;
        Some((index, &self.rows[index]))
    }

    /// Position of row `index` among the filtered rows (binary search).
    pub fn visible_position(&self, index: usize) -> Option<usize> {
        self.visible.binary_search(&index).ok()
    }

    /// The filter text.
    pub fn filter_text(&self) -> &str {
        &self.filter_text
    }

    /// Whether events of `kind` are shown.
    pub fn type_shown(&self, kind: &str) -> bool {
        !self.hidden_types.iter().any(|t| t == kind)
    }

    /// Every event type seen, with its count, in name order.
    pub fn type_counts(&self) -> impl Iterator<Item = (&str, usize)> {
        self.type_counts.iter().map(|(k, v)| (k.as_str(), *v))
    }

    /// True while the view follows the newest event.
    pub fn follows_tail(&self) -> bool {
        !self.paused
    }

    /// The selected row (an index into all rows).
    pub fn selected(&self) -> Option<usize> {
        self.selected
    }

    /// The selected row itself.
    pub fn selected_row(&self) -> Option<&TimelineRow> {
        self.selected.and_then(|i| self.rows.get(i))
    }

    /// Gap statistics so far.
    pub fn gaps(&self) -> GapStats {
        self.gaps
    }

    /// Attempts so far.
    pub fn attempts(&self) -> &[AttemptInfo] {
        &self.attempts
    }

    /// The outcome, once the send finished.
    pub fn outcome(&self) -> Option<&TurnOutcome> {
        self.outcome.as_ref()
    }

    /// The finished outcome, or the current attempt's outcome so far while streaming.
    pub fn current_outcome(&self) -> &TurnOutcome {
        self.outcome.as_ref().unwrap_or(&self.live)
    }

    /// Why the send did not complete, once it finished.
    pub fn failure(&self) -> Option<&FailureInfo> {
        self.failure.as_ref()
    }

    /// True between the first attempt and the end of the send.
    pub fn is_live(&self) -> bool {
        !self.attempts.is_empty() && self.outcome.is_none()
    }

    /// Events received but not kept as rows (over [`MAX_ROWS`]).
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Receive time of the newest event.
    pub fn last_event_at(&self) -> Option<Duration> {
        self.gaps.last_event
    }
}
