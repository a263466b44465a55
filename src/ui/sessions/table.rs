//! The open session's header (totals, miss cost, actions on the selected request) and its
//! request table: one virtualized row per request (`TableBody::rows`) with position, time,
//! model, dialect, status with the stream's outcome class (flagged when not completed, even
//! under HTTP 200), input / cached / uncached / output tokens, duration, time to first event,
//! bytes and the prefix badge. Click selects, double-click opens in the form.

use egui::{Label, RichText, Sense, Ui};
use egui_extras::{Column, TableBuilder};

use super::{SessionsUi, grouped, millis, send};
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

fn header_ui(ui: &mut Ui, state: &AppState, tx: &CommandSender) {
    let browser = &state.browser;
    let Some(session) = state.sessions.open else {
        ui.weak("Open a session on the left.");
        return;
    };
    ui.horizontal_wrapped(|ui| {
        // The listed page's name, else the one read with the rows (a search may hide it).
        let name = state
            .sessions
            .sessions
            .iter()
            .find(|s| s.id == session)
            .map(|s| s.name.clone())
            .or_else(|| state.sessions.open_name.clone())
            .unwrap_or_default();
        ui.strong(format!("#{session} {name}"));
        ui.label(count(state.sessions.rows.len() as u64, "request"));
        if browser.analyzing {
            ui.spinner();
            ui.weak("analysing the prefix…");
        }
        for error in [&state.sessions.error, &browser.error]
            .into_iter()
            .flatten()
        {
            ui.colored_label(ui.visuals().error_fg_color, error);
        }
    });
    let Some(index) = browser.selected else {
        return;
    };
    let Some(row) = state.sessions.rows.get(index) else {
        return;
    };
    ui.horizontal_wrapped(|ui| {
        let turn = ui.label(format!("Turn {}:", row.position));
        if let Some(message) = &row.error_message {
            turn.on_hover_text(message);
        }
        if ui
            .button("Open in form")
            .on_hover_text("Open this request in the workbench's form (Enter)")
            .clicked()
        {
            send(tx, SessionCommand::OpenInForm(index));
        }
        let side = CompareSide::Stored {
            session,
            request: row.id,
            position: row.position,
        };
        if ui.button("Compare: left").clicked() {
            send(tx, SessionCommand::SetCompare(0, side.clone()));
        }
        if ui.button("Compare: right").clicked() {
            send(tx, SessionCommand::SetCompare(1, side));
        }
        // The same buttons on every row (the first has no previous: disabled), short enough
        // for one row at 1024×700, and the error only in the row's rest (whole on the turn's
        // hover): moving between rows never re-flows the bar (the table under it jumped a line
        // when turn 0 was left).
        let diff = ui
            .add_enabled(index > 0, egui::Button::new("Diff previous"))
            .on_hover_text("This request's prefix diff against the one before it");
        if diff.clicked() {
            send(
                tx,
                SessionCommand::SelectPair(index.saturating_sub(1), index),
            );
        }
        if let Some(message) = &row.error_message
            && ui.available_size_before_wrap().x >= ERROR_MIN_WIDTH
        {
            let color = ui.visuals().error_fg_color;
            crate::ui::widgets::cut_texts_ui(ui, vec![RichText::new(message).color(color)]);
        }
    });
}

/// Least room for the selected row's error beside its buttons (less: on the turn's hover only).
const ERROR_MIN_WIDTH: f32 = 120.0;

/// Draws the header and the table.
pub fn table_ui(ui: &mut Ui, state: &AppState, sui: &mut SessionsUi, tx: &CommandSender) {
    header_ui(ui, state, tx);
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
    let scroll_to = sui.scroll_to_selected.then_some(browser.selected).flatten();
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
        .max_scroll_height(body_height)
        .column(Column::initial(34.0).at_least(24.0))
        .column(Column::initial(64.0).at_least(40.0))
        .column(Column::initial(96.0).at_least(40.0).clip(true))
        .column(Column::initial(64.0).at_least(40.0).clip(true))
        .column(Column::initial(150.0).at_least(60.0).clip(true))
        .columns(Column::initial(62.0).at_least(40.0), 4)
        .columns(Column::initial(64.0).at_least(40.0), 2)
        .column(Column::initial(64.0).at_least(40.0))
        .column(Column::initial(110.0).at_least(80.0).clip(true));
    if let Some(selected) = scroll_to {
        // The table shows the filtered rows in their order: scroll to where the row is.
        let row = browser.visible.iter().position(|&i| i == selected);
        table = table.scroll_to_row(row.unwrap_or(selected), None);
    }
    table
        .header(row_height.max(ui_interact_height), |mut header| {
            for (column, title) in [
                "#",
                "time",
                "model",
                "dialect",
                "status",
                "input",
                "cached",
                "uncached",
                "output",
                "duration",
                "1st event",
                "bytes",
                "prefix",
            ]
            .into_iter()
            .enumerate()
            {
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
    let mut text = |text: RichText| {
        table_row.col(|ui| {
            ui.add(Label::new(text).selectable(false).truncate());
        });
    };
    text(RichText::new(row.position.to_string()).monospace());
    text(RichText::new(time_of(row.started_us)).monospace());
    text(RichText::new(row.model.as_deref().unwrap_or("")));
    text(RichText::new(row.dialect.as_deref().unwrap_or("")));
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
    let mut text = |text: String| {
        table_row.col(|ui| {
            ui.add(
                Label::new(RichText::new(text).monospace())
                    .selectable(false)
                    .truncate(),
            );
        });
    };
    text(tokens(row.input_tokens));
    text(tokens(row.cached_tokens));
    text(tokens(row.uncached_tokens()));
    text(tokens(row.output_tokens));
    text(millis(row.total_us));
    text(millis(row.first_event_us));
    text(grouped(row.body_bytes));
    table_row.col(|ui| {
        let Some(badge) = badge else {
            ui.weak("…");
            return;
        };
        let color = match badge {
            PrefixBadge::Broken(..) => ui.visuals().error_fg_color,
            _ if badge.is_warned_kept() => ui.visuals().warn_fg_color,
            _ => ui.visuals().weak_text_color(),
        };
        ui.add(
            Label::new(RichText::new(badge.label()).color(color))
                .selectable(false)
                .truncate(),
        );
    });
}
