//! Widget state of a list editor (input items or tools): the selected entry's raw JSON buffer,
//! which entry value it shows (compared by value, so the UI never guesses revisions), its parse
//! error, and a pending "leave an invalid edit?" question.

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
}

impl<T> Default for ListForm<T> {
    fn default() -> Self {
        Self {
            raw: String::new(),
            raw_of: None,
            raw_error: None,
            leave_to: None,
            notice: None,
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

    /// Drops the invalid edit (the buffer refills on the next frame).
    pub fn discard(&mut self) {
        self.raw_error = None;
        self.raw_of = None;
        self.leave_to = None;
    }
}
