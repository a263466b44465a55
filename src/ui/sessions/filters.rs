//! The session list's filter bar (source, whether a request failed or was interrupted, model,
//! date range); the request table's filter bar (status class, model, date range, text; "n of m
//! shown") and its sortable column headers (click: ascending, again: descending, a third time:
//! by position). The filtering itself is the app's (`app::session_view::filter`), computed once per
//! change.

use egui::{RichText, TextEdit, Ui};

use super::{SessionsUi, send};
use crate::app::session_view::SessionCommand;
use crate::app::session_view::filter::{RowFilter, SortColumn, StatusClass};
use crate::app::{AppState, CommandSender};
use crate::store::SessionStatus;

/// The filter bars' text buffers.
#[derive(Debug, Default)]
pub struct FiltersUi {
    /// Start date (`YYYY-MM-DD`) being typed.
    pub from: String,
    /// End date (`YYYY-MM-DD`, inclusive) being typed.
    pub to: String,
    /// The session list's start date being typed.
    pub sessions_from: String,
    /// The session list's end date being typed.
    pub sessions_to: String,
    /// The session being renamed and the name typed.
    pub renaming: Option<(i64, String)>,
    /// The session whose delete waits for a confirmation.
    pub confirm_delete: Option<i64>,
}

/// Sources the session list filters by (`None`: any).
pub const SOURCES: [(Option<&str>, &str); 7] = [
    (None, "any source"),
    (Some("proxy"), "proxy"),
    (Some("send"), "send"),
    (Some("import"), "import"),
    (Some("rollout"), "rollout"),
    (Some("form"), "form"),
    (Some("replay"), "replay"),
];

/// What the session list's request-status menu offers (`None`: any).
pub const STATUSES: [(Option<SessionStatus>, &str); 3] = [
    (None, "any requests"),
    (Some(SessionStatus::Failed), "with failed requests"),
    (
        Some(SessionStatus::Interrupted),
        "with interrupted requests",
    ),
];

/// Draws the session list's filter bar (source, request status, model, date range).
pub fn session_filter_ui(ui: &mut Ui, state: &AppState, sui: &mut SessionsUi, tx: &CommandSender) {
    let current = &state.sessions.filter;
    let mut filter = current.clone();
    ui.horizontal_wrapped(|ui| {
        let shown = SOURCES
            .iter()
            .find(|(s, _)| s.as_deref() == filter.source.as_deref())
            .map_or("any source", |(_, l)| l);
        egui::ComboBox::from_label("source")
            .selected_text(shown)
            .width(90.0)
            .show_ui(ui, |ui| {
                for (source, label) in SOURCES {
                    let value = source.map(str::to_string);
                    ui.selectable_value(&mut filter.source, value, label);
                }
            });
        let shown = STATUSES
            .iter()
            .find(|(s, _)| *s == filter.status)
            .map_or("any requests", |(_, l)| l);
        // Narrower in a narrow list (beside the Record panel at 1024×700 a 150-point box did
        // not fit its row and was drawn as a tall block).
        let width = (ui.available_width() - 60.0).clamp(80.0, 150.0);
        egui::ComboBox::from_label("status")
            .selected_text(shown)
            .width(width)
            .truncate()
            .show_ui(ui, |ui| {
                for (status, label) in STATUSES {
                    ui.selectable_value(&mut filter.status, status, label);
                }
            });
        let label = ui.label("model");
        ui.add(
            TextEdit::singleline(&mut filter.model)
                .desired_width(70.0)
                .char_limit(100),
        )
        .labelled_by(label.id);
    });
    ui.horizontal(|ui| {
        let label = ui.label("from");
        let from = ui
            .add(
                TextEdit::singleline(&mut sui.filters.sessions_from)
                    .hint_text("YYYY-MM-DD")
                    .desired_width(76.0)
                    .char_limit(10),
            )
            .labelled_by(label.id);
        let label = ui.label("to");
        let to = ui
            .add(
                TextEdit::singleline(&mut sui.filters.sessions_to)
                    .hint_text("YYYY-MM-DD")
                    .desired_width(76.0)
                    .char_limit(10),
            )
            .labelled_by(label.id);
        if from.changed() || to.changed() {
            filter.from_us = day_start_us(&sui.filters.sessions_from, 0);
            filter.to_us = day_start_us(&sui.filters.sessions_to, 1);
        }
    });
    if &filter != current {
        send(tx, SessionCommand::FilterSessions(filter));
    }
}

/// Unix microseconds of the start of `date` (`YYYY-MM-DD`, UTC), plus `days`.
pub fn day_start_us(date: &str, days: i64) -> Option<i64> {
    let day = chrono::NaiveDate::parse_from_str(date.trim(), "%Y-%m-%d").ok()?;
    let day = day.checked_add_signed(chrono::Duration::days(days))?;
    Some(day.and_hms_opt(0, 0, 0)?.and_utc().timestamp_micros())
}

/// Draws the request filter bar: one wrapped row of status, model, text and dates; in a
/// narrow pane one row of status and text, the model and dates under "More filters".
pub fn row_filter_ui(ui: &mut Ui, state: &AppState, sui: &mut SessionsUi, tx: &CommandSender) {
    if state.sessions.rows.is_empty() {
        return;
    }
    let current = &state.browser.filter;
    let mut filter = current.clone();
    let compact = ui.available_width() < super::table::COMPACT_WIDTH;
    let more = |ui: &mut Ui, filter: &mut RowFilter, sui: &mut SessionsUi| {
        let label = ui.label("model");
        ui.add(
            TextEdit::singleline(&mut filter.model)
                .desired_width(80.0)
                .char_limit(100),
        )
        .labelled_by(label.id);
        dates_ui(ui, filter, sui);
    };
    let bar = |ui: &mut Ui, filter: &mut RowFilter, sui: &mut SessionsUi| {
        if compact {
            egui::ComboBox::from_label("show")
                .selected_text(filter.status.label())
                .width(64.0)
                .show_ui(ui, |ui| {
                    for class in StatusClass::ALL {
                        ui.selectable_value(&mut filter.status, class, class.label());
                    }
                });
        } else {
            ui.label("Show:");
            for class in StatusClass::ALL {
                ui.selectable_value(&mut filter.status, class, class.label());
            }
        }
        if compact {
            ui.add(
                TextEdit::singleline(&mut filter.text)
                    .hint_text("text…")
                    .desired_width(80.0)
                    .char_limit(200),
            )
            .on_hover_text("Show the requests whose model, dialect, status or error has this");
        } else {
            let label = ui.label("text");
            ui.add(
                TextEdit::singleline(&mut filter.text)
                    .desired_width(90.0)
                    .char_limit(200),
            )
            .labelled_by(label.id);
        }
        if compact {
            ui.menu_button("More…", |ui| more(ui, filter, sui))
                .response
                .on_hover_text("Filter by model and dates");
        } else {
            more(ui, filter, sui);
        }
        let total = state.sessions.rows.len();
        let shown = state.browser.visible.len();
        if !current.is_empty() {
            ui.weak(format!("{shown} of {total} shown"));
            if ui.small_button("Clear filters").clicked() {
                sui.filters.from.clear();
                sui.filters.to.clear();
                *filter = RowFilter {
                    sort: current.sort,
                    ..RowFilter::default()
                };
            }
        }
    };
    if compact {
        ui.horizontal(|ui| bar(ui, &mut filter, sui));
    } else {
        ui.horizontal_wrapped(|ui| bar(ui, &mut filter, sui));
    }
    if &filter != current {
        send(tx, SessionCommand::Filter(filter));
    }
}

/// The request filter's date range (from, to: `YYYY-MM-DD`).
fn dates_ui(ui: &mut Ui, filter: &mut RowFilter, sui: &mut SessionsUi) {
    let label = ui.label("from");
    let from = ui
        .add(
            TextEdit::singleline(&mut sui.filters.from)
                .hint_text("YYYY-MM-DD")
                .desired_width(80.0)
                .char_limit(10),
        )
        .labelled_by(label.id);
    let label = ui.label("to");
    let to = ui
        .add(
            TextEdit::singleline(&mut sui.filters.to)
                .hint_text("YYYY-MM-DD")
                .desired_width(80.0)
                .char_limit(10),
        )
        .labelled_by(label.id);
    if from.changed() || to.changed() {
        filter.from_us = day_start_us(&sui.filters.from, 0);
        filter.to_us = day_start_us(&sui.filters.to, 1);
    }
}

/// A column header: a button that sorts by `column` (None: a column that does not sort).
pub fn sort_header(
    ui: &mut Ui,
    state: &AppState,
    column: Option<SortColumn>,
    title: &str,
    tx: &CommandSender,
) {
    let Some(sort) = column else {
        ui.strong(title);
        return;
    };
    let current = &state.browser.filter;
    let arrow = match current.sort {
        Some((c, false)) if c == sort => " ^",
        Some((c, true)) if c == sort => " v",
        _ => "",
    };
    // No padding: the header row keeps the rows' height (a taller cell pushes the body down).
    ui.spacing_mut().button_padding = egui::Vec2::ZERO;
    let clicked = ui
        .add(egui::Button::new(RichText::new(format!("{title}{arrow}")).strong()).frame(false))
        .on_hover_text("Sort by this column")
        .clicked();
    if clicked {
        let next = match current.sort {
            Some((c, false)) if c == sort => Some((sort, true)),
            Some((c, true)) if c == sort => None,
            _ => Some((sort, false)),
        };
        send(
            tx,
            SessionCommand::Filter(RowFilter {
                sort: next,
                ..current.clone()
            }),
        );
    }
}
