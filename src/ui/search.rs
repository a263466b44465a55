//! Find in the compiled views: the search bar (n of m, previous/next, Escape closes) and the
//! matching rows per column, recomputed only when the query or the views change.

use egui::Ui;

use crate::app::AppState;

/// Search in the compiled views.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SearchState {
    /// The search bar is shown.
    pub open: bool,
    /// Text searched for (case-insensitive).
    pub query: String,
    /// Index of the current match (over all columns, left to right).
    pub current: usize,
    /// Request focus for the search field on the next frame.
    pub focus: bool,
    /// Scroll the columns to the current match on the next frame.
    pub scroll_pending: bool,
    /// Matching line numbers per column.
    pub matches: Vec<Vec<usize>>,
    /// What `matches` was computed for (views revision, query, column count).
    pub matches_for: Option<(u64, String, usize)>,
}

/// The search bar (shown while searching).
pub fn search_bar(ui: &mut Ui, search: &mut SearchState) {
    ui.horizontal(|ui| {
        let label = ui.label("Find");
        let edit = ui
            .add(
                egui::TextEdit::singleline(&mut search.query)
                    .hint_text("text in the compiled views")
                    .desired_width(180.0),
            )
            .labelled_by(label.id)
            .on_hover_text(
                "Case-insensitive search in every column (Ctrl+F; Enter: next, Shift+Enter: previous, Escape: close)",
            );
        if search.focus {
            edit.request_focus();
            search.focus = false;
        }
        let total: usize = search.matches.iter().map(Vec::len).sum();
        let (enter, shift) = ui.input(|i| (i.key_pressed(egui::Key::Enter), i.modifiers.shift));
        let entered = edit.lost_focus() && enter;
        let previous = ui
            .button("Previous")
            .on_hover_text("Scroll to the previous match (Shift+Enter)")
            .clicked()
            || (entered && shift);
        let next = ui
            .button("Next")
            .on_hover_text("Scroll to the next match (Enter)")
            .clicked()
            || (entered && !shift);
        if total > 0 && (previous || next) {
            search.current = if next {
                (search.current + 1) % total
            } else {
                (search.current + total - 1) % total
            };
            search.scroll_pending = true;
        }
        if entered {
            edit.request_focus();
        }
        ui.label(match (search.query.is_empty(), total) {
            (true, _) => String::new(),
            (false, 0) => "no match".to_string(),
            (false, n) => format!("{} of {n}", search.current.min(n - 1) + 1),
        });
        if ui
            .button("Close")
            .on_hover_text("Hide the search bar (Escape)")
            .clicked()
        {
            search.open = false;
            search.query.clear();
        }
    });
}

/// Recomputes the matching lines when the query or the views changed.
pub fn update_matches(state: &AppState, search: &mut SearchState) {
    let key = (
        state.views_revision,
        search.query.clone(),
        state.views.len(),
    );
    if search.matches_for.as_ref() == Some(&key) {
        return;
    }
    let needle = search.query.to_lowercase();
    search.matches = state
        .views
        .iter()
        .map(|view| {
            if needle.is_empty() {
                return Vec::new();
            }
            (0..view.line_count())
                .filter(|&i| view.line(i).to_lowercase().contains(&needle))
                .collect()
        })
        .collect();
    search.current = 0;
    search.matches_for = Some(key);
}

/// The line of the current match if it is in column `k`.
pub fn current_match_line(search: &SearchState, k: usize) -> Option<usize> {
    let mut index = search.current;
    for (col, lines) in search.matches.iter().enumerate() {
        if index < lines.len() {
            return (col == k).then(|| lines[index]);
        }
        index -= lines.len();
    }
    None
}
