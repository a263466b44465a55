//! The open session's header (totals, miss cost, actions on the selected request) and its
//! request table: one virtualized row per request (`TableBody::rows`) with position, time, the
//! prefix badge (third, so it shows without scrolling sideways even in a narrow pane), status
//! with the stream's outcome class (flagged when not completed, even under HTTP 200), model,
//! input / cached / uncached / output tokens, duration, time to first event, bytes and dialect.
//! Click selects, double-click opens in the form. "Compare: left / right" show the Compare tab
//! (`SessionsUi::tab`), on the whole window when the room under the table is short.

use egui::{Label, RichText, Sense, Ui};
use egui_extras::{Column, TableBuilder};

use super::{SessionsTab, SessionsUi, grouped, millis, send};
use crate::app::panes::{PaneCommand, PaneId};
use crate::app::session_view::filter::SortColumn;
use crate::app::session_view::{CompareSide, PrefixBadge, SessionCommand};
use crate::app::{AppState, CommandSender};
use crate::store::summary::{OutcomeClass, RequestRow};
use crate::ui::widgets::count;

/// The status cell: HTTP status and outcome class, `!` when the stream did not complete, and
/// "recording incomplete" when the recording lost events (the database was busy or full).
pub fn status_text(row: &RequestRow) -> String {
    let flag = if row.outcome.is_problem() || row.recording_gap.is_some() {
        "! "
    } else {
        ""
    };
    let status = match (&row.outcome, row.status) {
        (OutcomeClass::Http(code), _) => format!("{flag}HTTP {code}"),
        (outcome, Some(101)) => format!("{flag}WS · {}", outcome.label()),
        (outcome, Some(status)) => format!("{flag}{status} · {}", outcome.label()),
        (outcome, None) => format!("{flag}{}", outcome.label()),
    };
    match row.recording_gap {
        Some(_) => format!("{status} · recording incomplete"),
        None => status,
    }
}

fn tokens(n: Option<u64>) -> String {
    n.map_or_else(String::new, grouped)
}

fn time_of(us: Option<i64>) -> String {
    us.and_then(chrono::DateTime::from_timestamp_micros)
        .map_or_else(String::new, |t| t.format("%H:%M:%S").to_string())
}

/// The table's columns, in order: title, what it sorts by, first width, least width.
const COLUMNS: [(&str, Option<SortColumn>, f32, f32); 13] = [
    ("#", Some(SortColumn::Position), 34.0, 24.0),
    ("time", Some(SortColumn::Time), 64.0, 40.0),
    ("prefix", None, 120.0, 60.0),
    ("status", Some(SortColumn::Status), 140.0, 60.0),
    ("model", Some(SortColumn::Model), 96.0, 40.0),
    ("input", Some(SortColumn::Input), 62.0, 40.0),
    ("cached", Some(SortColumn::Cached), 62.0, 40.0),
    ("uncached", Some(SortColumn::Uncached), 62.0, 40.0),
    ("output", Some(SortColumn::Output), 62.0, 40.0),
    ("duration", Some(SortColumn::Duration), 64.0, 40.0),
    ("1st event", Some(SortColumn::FirstEvent), 64.0, 40.0),
    ("bytes", Some(SortColumn::Bytes), 64.0, 40.0),
    ("dialect", Some(SortColumn::Dialect), 64.0, 40.0),
];

/// Least height of the Analysis area for Compare to show a useful part of two bodies; less,
/// and "Compare: left / right" show it on the whole window.
const COMPARE_MIN_HEIGHT: f32 = 200.0;

fn header_ui(ui: &mut Ui, state: &AppState, sui: &mut SessionsUi, tx: &CommandSender) {
    let browser = &state.browser;
    let Some(session) = state.sessions.open else {
        ui.weak("Open a session on the left.");
        return;
    };
    // In a narrow pane (beside the Record panel at 1024×700) each bar is one row, so the
    // table keeps its rows: the name is cut (whole on hover), the actions are a menu.
    let compact = ui.available_width() < COMPACT_WIDTH;
    // The listed page's name, else the one read with the rows (a search may hide it).
    let name = state
        .sessions
        .sessions
        .iter()
        .find(|s| s.id == session)
        .map(|s| s.name.clone())
        .or_else(|| state.sessions.open_name.clone())
        .unwrap_or_default();
    let title = |ui: &mut Ui| {
        ui.label(count(state.sessions.rows.len() as u64, "request"));
        if browser.analyzing {
            ui.spinner();
        }
        for error in [&state.sessions.error, &browser.error]
            .into_iter()
            .flatten()
        {
            ui.colored_label(ui.visuals().error_fg_color, error);
        }
    };
    if compact {
        ui.horizontal(|ui| {
            title(ui);
            crate::ui::widgets::cut_texts_ui(
                ui,
                vec![RichText::new(format!("#{session} {name}")).strong()],
            );
        });
    } else {
        ui.horizontal_wrapped(|ui| {
            ui.strong(format!("#{session} {name}"));
            title(ui);
            if browser.analyzing {
                ui.weak("analysing the prefix…");
            }
        });
    }
    let Some(index) = browser.selected else {
        return;
    };
    let Some(row) = state.sessions.rows.get(index) else {
        return;
    };
    let side = CompareSide::Stored {
        session,
        request: row.id,
        position: row.position,
    };
    let actions = |ui: &mut Ui, sui: &mut SessionsUi| {
        if ui
            .button("Open in form")
            .on_hover_text("Open this request in the workbench's form (Enter)")
            .clicked()
        {
            send(tx, SessionCommand::OpenInForm(index));
        }
        let left = ui
            .button("Compare: left")
            .on_hover_text("Put this request on the left of Compare");
        if left.clicked() {
            send(tx, SessionCommand::SetCompare(0, side.clone()));
            sui.tab = SessionsTab::Compare;
        }
        let right = ui
            .button("Compare: right")
            .on_hover_text("Put this request on the right of Compare and show Compare");
        if right.clicked() {
            send(tx, SessionCommand::SetCompare(1, side.clone()));
            show_compare(ui, state, sui, tx);
        }
        // The first row has no previous: disabled, not gone (moving between rows never
        // re-flows the bar).
        let diff = ui
            .add_enabled(index > 0, egui::Button::new("Diff previous"))
            .on_hover_text("This request's prefix diff against the one before it");
        if diff.clicked() {
            send(
                tx,
                SessionCommand::SelectPair(index.saturating_sub(1), index),
            );
        }
    };
    let turn_row = |ui: &mut Ui, sui: &mut SessionsUi| {
        let turn = ui.label(format!("Turn {}:", row.position));
        if let Some(message) = &row.error_message {
            turn.on_hover_text(message);
        }
        if compact {
            ui.menu_button("Actions", |ui| actions(ui, sui))
                .response
                .on_hover_text("Open in form, Compare: left / right, Diff previous");
        } else {
            actions(ui, sui);
        }
        // The error only in the row's rest (whole on the turn's hover).
        if let Some(message) = &row.error_message
            && ui.available_size_before_wrap().x >= ERROR_MIN_WIDTH
        {
            let color = ui.visuals().error_fg_color;
            crate::ui::widgets::cut_texts_ui(ui, vec![RichText::new(message).color(color)]);
        }
    };
    if compact {
        ui.horizontal(|ui| turn_row(ui, sui));
    } else {
        ui.horizontal_wrapped(|ui| turn_row(ui, sui));
    }
}

/// Narrower than this, the table's bars are one row each (name cut, actions in a menu).
pub const COMPACT_WIDTH: f32 = 440.0;

/// Least room for the selected row's error beside its buttons (less: on the turn's hover only).
const ERROR_MIN_WIDTH: f32 = 120.0;

/// Shows the Compare tab, on the whole window when the Analysis area under the table is too
/// short for two bodies (Restore gives the table its room back).
fn show_compare(ui: &Ui, state: &AppState, sui: &mut SessionsUi, tx: &CommandSender) {
    sui.tab = SessionsTab::Compare;
    let layout = &state.settings.panes;
    let short = sui
        .analysis_height
        .is_some_and(|height| height < COMPARE_MIN_HEIGHT);
    if short && layout.maximised.is_none() {
        tx.send(crate::app::AppCommand::Pane(PaneCommand::ToggleMaximised(
            PaneId::Analysis,
        )));
    }
    ui.ctx().request_repaint();
}

/// Draws the header and the table.
pub fn table_ui(ui: &mut Ui, state: &AppState, sui: &mut SessionsUi, tx: &CommandSender) {
    header_ui(ui, state, sui, tx);
    super::filters::row_filter_ui(ui, state, sui, tx);
    let browser = &state.browser;
    if state.sessions.rows.is_empty() {
        return;
    }
    let row_height = ui.text_style_height(&egui::TextStyle::Body) + 4.0;
    let badges = browser.analysis.as_ref().map(|a| &a.badges);
    // Wider than a narrow pane: the whole table scrolls sideways (every column reachable),
    // and its rows scroll inside the room the pane has left under the header (so a row
    // scrolled to is really in view, not under the pane's edge).
    let scroll_bar = ui.spacing().scroll.bar_width + ui.spacing().item_spacing.y;
    // The header's sort buttons are as tall as an interactive widget, maybe taller than a row.
    let header_height = row_height.max(ui.spacing().interact_size.y);
    let body_height = (ui.available_height() - header_height - scroll_bar).max(row_height);
    // Scrolled to by the keys, or when the app revealed a row (the Traffic view's "Open
    // session").
    let revealed = sui.revealed != browser.reveal;
    sui.revealed = browser.reveal;
    let scroll_to = (sui.scroll_to_selected || revealed)
        .then_some(browser.selected)
        .flatten();
    sui.scroll_to_selected = false;
    egui::ScrollArea::horizontal()
        .id_salt("session_requests_sideways")
        .auto_shrink([false, true])
        .show(ui, |ui| {
            requests_table(ui, state, (row_height, body_height), scroll_to, badges, tx);
        });
}

fn requests_table(
    ui: &mut Ui,
    state: &AppState,
    (row_height, body_height): (f32, f32),
    scroll_to: Option<usize>,
    badges: Option<&Vec<PrefixBadge>>,
    tx: &CommandSender,
) {
    let browser = &state.browser;
    let ui_interact_height = ui.spacing().interact_size.y;
    let mut table = TableBuilder::new(ui)
        .id_salt("session_requests")
        .striped(true)
        .resizable(true)
        .sense(Sense::click())
        .auto_shrink(false)
        .min_scrolled_height(0.0)
        .max_scroll_height(body_height);
    for (_, _, width, least) in COLUMNS {
        table = table.column(Column::initial(width).at_least(least).clip(true));
    }
    if let Some(selected) = scroll_to {
        // The table shows the filtered rows in their order: scroll to where the row is.
        let row = browser.visible.iter().position(|&i| i == selected);
        table = table.scroll_to_row(row.unwrap_or(selected), None);
    }
    table
        .header(row_height.max(ui_interact_height), |mut header| {
            for (title, column, _, _) in COLUMNS {
                header.col(|ui| super::filters::sort_header(ui, state, column, title, tx));
            }
        })
        .body(|body| {
            let shown = &browser.visible;
            body.rows(row_height, shown.len(), |mut table_row| {
                let Some(&index) = shown.get(table_row.index()) else {
                    return;
                };
                let Some(row) = state.sessions.rows.get(index) else {
                    return;
                };
                table_row.set_selected(browser.selected == Some(index));
                let badge = badges.and_then(|b| b.get(index));
                cells(&mut table_row, row, badge);
                let response = table_row.response();
                response.context_menu(|ui| super::inspector::row_menu(ui, state, index, tx));
                if response.double_clicked() {
                    send(tx, SessionCommand::OpenInForm(index));
                } else if response.clicked() {
                    send(tx, SessionCommand::Select(index));
                }
            });
        });
}

fn cells(
    table_row: &mut egui_extras::TableRow<'_, '_>,
    row: &RequestRow,
    badge: Option<&PrefixBadge>,
) {
    let mono = |table_row: &mut egui_extras::TableRow<'_, '_>, text: String| {
        table_row.col(|ui| {
            ui.add(
                Label::new(RichText::new(text).monospace())
                    .selectable(false)
                    .truncate(),
            );
        });
    };
    mono(table_row, row.position.to_string());
    mono(table_row, time_of(row.started_us));
    // The badge's text is the analysis's (`PrefixBadge::label`), whole on hover.
    table_row.col(|ui| badge_cell(ui, badge));
    table_row.col(|ui| {
        let mut status = RichText::new(status_text(row));
        if row.outcome.is_problem() {
            status = status.color(ui.visuals().error_fg_color);
        } else if row.recording_gap.is_some() {
            status = status.color(ui.visuals().warn_fg_color);
        }
        let label = ui.add(Label::new(status).selectable(false).truncate());
        if let Some(gap) = &row.recording_gap {
            label.on_hover_text(format!(
                "{gap}. The client got every byte; the stored events are not all of them."
            ));
        }
    });
    table_row.col(|ui| {
        ui.add(
            Label::new(row.model.as_deref().unwrap_or(""))
                .selectable(false)
                .truncate(),
        );
    });
    mono(table_row, tokens(row.input_tokens));
    mono(table_row, tokens(row.cached_tokens));
    mono(table_row, tokens(row.uncached_tokens()));
    mono(table_row, tokens(row.output_tokens));
    mono(table_row, millis(row.total_us));
    mono(table_row, millis(row.first_event_us));
    mono(table_row, grouped(row.body_bytes));
    table_row.col(|ui| {
        ui.add(
            Label::new(row.dialect.as_deref().unwrap_or(""))
                .selectable(false)
                .truncate(),
        );
    });
}

/// The prefix badge as the request table shows it (its text is `PrefixBadge::label`).
pub fn badge_cell(ui: &mut Ui, badge: Option<&PrefixBadge>) {
    let Some(badge) = badge else {
        ui.weak("…");
        return;
    };
    let color = match badge {
        PrefixBadge::Broken(..) => ui.visuals().error_fg_color,
        _ if badge.is_warned_kept() => ui.visuals().warn_fg_color,
        _ => ui.visuals().weak_text_color(),
    };
    let label = badge.label();
    ui.add(
        Label::new(RichText::new(&label).color(color))
            .selectable(false)
            .truncate(),
    )
    .on_hover_text(label);
}
