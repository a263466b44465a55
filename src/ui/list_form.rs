//! Widget state of a list editor (input items or tools): the selected entry's raw JSON buffer,
//! which entry value it shows (compared by value, so the UI never guesses revisions), its parse
//! error, a pending "leave an invalid edit?" question, and keeping the app told about such an
//! edit (it is unsaved work: loading or closing asks first).

use crate::app::{AppCommand, CommandSender};

/// Raw JSON editing state of one list.
#[derive(Debug, Clone, PartialEq)]
pub struct ListForm<T> {
    /// Raw JSON buffer of the selected entry.
    pub raw: String,
    /// The entry index and value the buffer shows (or last applied).
    pub raw_of: Option<(usize, T)>,
    /// Parse error of the buffer.
    pub raw_error: Option<String>,
    /// The user clicked another entry while the buffer held invalid JSON: where they wanted to go.
    pub leave_to: Option<Option<usize>>,
    /// Why the last typed edit was not applied (e.g. an empty tool name).
    pub notice: Option<String>,
    /// The entry whose unapplied invalid edit the app was last told about.
    pub reported: Option<usize>,
}

impl<T> Default for ListForm<T> {
    fn default() -> Self {
        Self {
            raw: String::new(),
            raw_of: None,
            raw_error: None,
            leave_to: None,
            notice: None,
            reported: None,
        }
    }
}

impl<T: PartialEq + Clone> ListForm<T> {
    /// Refills the buffer from `entry` (rendered by `to_text`) when another entry is selected,
    /// or when the entry changed elsewhere (undo, typed form) and the buffer has no error the
    /// user is still fixing.
    pub fn refill(&mut self, index: usize, entry: &T, to_text: impl FnOnce(&T) -> String) {
        let shown = self.raw_of.as_ref();
        if shown.is_some_and(|(i, v)| *i == index && v == entry) {
            return;
        }
        let other_entry = shown.map(|(i, _)| *i) != Some(index);
        if other_entry || self.raw_error.is_none() {
            self.raw = to_text(entry);
            self.raw_of = Some((index, entry.clone()));
            self.raw_error = None;
            self.leave_to = None;
        }
    }

    /// Records that the buffer now parses to `entry` (sent as an edit).
    pub fn applied(&mut self, index: usize, entry: T) {
        self.raw_of = Some((index, entry));
        self.raw_error = None;
    }

    /// Whether moving the selection must first ask (the buffer holds an unapplied invalid edit).
    pub fn must_ask_before_leaving(&self) -> bool {
        self.raw_error.is_some()
    }

    /// Once per frame, after the editor: drops an invalid edit whose entry is no longer
    /// selected (it was removed, or the prompt was replaced after the user agreed), and tells
    /// the app when the pending invalid edit of this `list` appears or goes.
    pub fn sync(&mut self, list: &'static str, selected: Option<usize>, tx: &CommandSender) {
        let edited = self.raw_of.as_ref().map(|(i, _)| *i);
        if self.raw_error.is_some() && edited != selected {
            self.discard();
        }
        let pending = if self.raw_error.is_some() {
            self.raw_of.as_ref().map(|(i, _)| *i)
        } else {
            None
        };
        if pending != self.reported {
            self.reported = pending;
            tx.send(AppCommand::UnappliedEdit {
                list,
                index: pending,
            });
        }
    }

    /// Drops the invalid edit (the buffer refills on the next frame).
    pub fn discard(&mut self) {
        self.raw_error = None;
        self.raw_of = None;
        self.leave_to = None;
    }
}
