//! The Traffic view (Ctrl+3), as Proxyman's flow list: every request the app handles — the
//! recording proxy's, the replay endpoint's, the workbench's sends and re-sends — newest at the
//! top as they happen, one virtualized row each (`TableBody::rows`: only the rows in view are
//! laid out) with time, method, client, model, status and outcome class, the prefix badge,
//! tokens, cache read, duration and its session (a click opens it). Its own filters (client,
//! status class, model, text). While the list is at its top it follows the newest request;
//! scrolled down, or paused, it holds still (rows arriving above push the offset, not the rows
//! in view) and says how many arrived. Selecting a row shows it in the inspector under the list
//! (`traffic/inspector.rs`). Keys (no text field focused): j/k or arrows move, Enter opens the
//! selected row's session. Reads `&AppState`, sends [`TrafficCommand`]s.

mod inspector;

use egui::{Label, RichText, Sense, TextEdit, Ui};
use egui_extras::{Column, TableBuilder};

use crate::app::panes::{PaneId, PaneLayout};
use crate::app::session_view::filter::StatusClass;
use crate::app::traffic::{TrafficCommand, TrafficFilter, TrafficRow};
use crate::app::{AppCommand, AppState, CommandSender};
use crate::core::format::grouped;
use crate::ui::panes::{self, PaneSpec, PanesUi, Side};
use crate::ui::widgets::count;

pub use inspector::TrafficInspectorUi;

/// The Traffic view's widget state.
#[derive(Debug, Default)]
pub struct TrafficUi {
    /// Following the newest request is paused by the user.
    pub paused: bool,
    /// The list's vertical offset last frame (0: at its top, following).
    pub offset: f32,
    /// The newest shown row last frame (rows newer than it arrived since).
    pub newest_seen: Option<u64>,
    /// Rows that arrived above while the list held still.
    pub arrived_above: usize,
    /// Go to the top next frame (Resume).
    pub to_top: bool,
    /// Scroll the selected row into view next frame.
    pub scroll_to_selected: bool,
    /// The model filter being typed.
    pub model: String,
    /// The text filter being typed.
    pub text: String,
    /// Rows drawn last frame (the bench's and the tests' check that rows are virtualized).
    pub rows_drawn: usize,
    /// The inspector's widget state.
    pub inspector: TrafficInspectorUi,
}

impl TrafficUi {
    /// True while the list does not follow the newest request.
    pub fn holds_still(&self) -> bool {
        self.paused || self.offset > 0.5
    }
}

fn send(tx: &CommandSender, command: TrafficCommand) {
    tx.send(AppCommand::Traffic(command));
}

/// Draws the Traffic view (under the view tabs, above the status bar; the Record panel, when
/// open, was drawn at the right before).
pub fn traffic_ui(
    ui: &mut Ui,
    state: &AppState,
    layout: &PaneLayout,
    tui: &mut TrafficUi,
    rects: &mut PanesUi,
    tx: &CommandSender,
) {
    keyboard(ui.ctx(), state, tui, tx);
    let height = ui.available_height();
    let inspector = PaneSpec {
        id: PaneId::TrafficInspector,
        side: Side::Bottom,
        // The list keeps most of the room; the inspector has its tabs and a few lines.
        default: (height * 0.38).clamp(180.0, 380.0),
        min: 90.0,
        max: (height * 0.75).max(100.0),
    };
    panes::pane(ui, layout, inspector, &PaneId::TRAFFIC, rects, tx, |ui| {
        inspector::inspector_ui(ui, state, &mut tui.inspector, tx);
    });
    let central = egui::CentralPanel::default().show(ui, |ui| {
        panes::header(ui, layout, PaneId::Traffic, &PaneId::TRAFFIC, tx);
        list_ui(ui, state, tui, tx);
    });
    rects.rects.insert(PaneId::Traffic, central.response.rect);
}

/// Draws pane `id` of the Traffic view maximised (the caller drew its header).
pub fn maximised_ui(
    ui: &mut Ui,
    state: &AppState,
    id: PaneId,
    tui: &mut TrafficUi,
    tx: &CommandSender,
) {
    keyboard(ui.ctx(), state, tui, tx);
    match id {
        PaneId::TrafficInspector => inspector::inspector_ui(ui, state, &mut tui.inspector, tx),
        _ => list_ui(ui, state, tui, tx),
    }
}

/// The filter bar and the list.
pub fn list_ui(ui: &mut Ui, state: &AppState, tui: &mut TrafficUi, tx: &CommandSender) {
    filter_bar_ui(ui, state, tui, tx);
    let log = &state.traffic;
    if log.is_empty() {
        tui.rows_drawn = 0;
        ui.add_space(8.0);
        ui.label(
            "No requests yet. Start the proxy in the Record panel (the Record toggle above) and \
             point a client at it, or Send from the workbench: every request shows here as it \
             happens.",
        );
        return;
    }
    table_ui(ui, state, tui, tx);
}

fn filter_bar_ui(ui: &mut Ui, state: &AppState, tui: &mut TrafficUi, tx: &CommandSender) {
    let log = &state.traffic;
    let current = log.filter();
    let mut filter = current.clone();
    ui.horizontal_wrapped(|ui| {
        // Each filter's name before it, as the rest of the bar reads.
        let label = ui.label("client");
        let client = filter.client.clone().unwrap_or_else(|| "any".to_string());
        egui::ComboBox::from_id_salt("traffic_client")
            .selected_text(client)
            .width(100.0)
            .truncate()
            .show_ui(ui, |ui| {
                ui.selectable_value(&mut filter.client, None, "any");
                for client in &log.clients {
                    ui.selectable_value(&mut filter.client, Some(client.clone()), client);
                }
            })
            .response
            .labelled_by(label.id);
        let label = ui.label("status");
        egui::ComboBox::from_id_salt("traffic_status")
            .selected_text(filter.status.label())
            .width(80.0)
            .show_ui(ui, |ui| {
                for class in StatusClass::ALL {
                    ui.selectable_value(&mut filter.status, class, class.label());
                }
            })
            .response
            .labelled_by(label.id);
        let label = ui.label("model");
        if ui
            .add(
                TextEdit::singleline(&mut tui.model)
                    .desired_width(80.0)
                    .char_limit(100),
            )
            .labelled_by(label.id)
            .changed()
        {
            filter.model = tui.model.clone();
        }
        let label = ui.label("text");
        if ui
            .add(
                TextEdit::singleline(&mut tui.text)
                    .hint_text("URL, badge, #session…")
                    .desired_width(130.0)
                    .char_limit(200),
            )
            .labelled_by(label.id)
            .changed()
        {
            filter.text = tui.text.clone();
        }
        if !filter.is_empty() && ui.small_button("Clear filters").clicked() {
            filter = TrafficFilter::default();
            tui.model.clear();
            tui.text.clear();
        }
    });
    ui.horizontal_wrapped(|ui| {
        let shown = log.visible().len();
        let total = log.len();
        let counted = if shown == total {
            count(total as u64, "request")
        } else {
            format!(
                "{} of {}",
                grouped(shown as u64),
                count(total as u64, "request")
            )
        };
        ui.label(counted);
        if tui.holds_still() {
            let text = if tui.arrived_above > 0 {
                format!("Resume ({} new above)", grouped(tui.arrived_above as u64))
            } else {
                "Resume".to_string()
            };
            if ui
                .button(text)
                .on_hover_text("Follow the newest request again (back to the top)")
                .clicked()
            {
                tui.paused = false;
                tui.to_top = true;
            }
        } else if ui
            .button("Pause")
            .on_hover_text(
                "Hold the list still: new requests arrive above without moving the rows in view \
                 (scrolling down does the same)",
            )
            .clicked()
        {
            tui.paused = true;
        }
        if ui
            .small_button("Clear list")
            .on_hover_text("Forget the rows shown here (the recordings stay in their sessions)")
            .clicked()
        {
            send(tx, TrafficCommand::Clear);
        }
        if log.dropped > 0 {
            ui.weak(format!("({} older not kept)", grouped(log.dropped)));
        }
    });
    if &filter != current {
        send(tx, TrafficCommand::Filter(filter));
    }
}

/// The columns, in order: (title, width, at least).
/// The prefix badge is sixth: beside the Record panel at 1024×700 (about 780 points) it is in
/// view; the last columns scroll sideways there.
const COLUMNS: [(&str, f32, f32); 10] = [
    ("time", 68.0, 50.0),
    ("method", 50.0, 36.0),
    ("client", 84.0, 50.0),
    ("model", 84.0, 50.0),
    ("status", 106.0, 60.0),
    ("prefix", 120.0, 60.0),
    ("tokens in / out", 96.0, 60.0),
    ("cache read", 66.0, 44.0),
    ("duration", 62.0, 44.0),
    ("session", 64.0, 44.0),
];

fn table_ui(ui: &mut Ui, state: &AppState, tui: &mut TrafficUi, tx: &CommandSender) {
    let log = &state.traffic;
    let visible = log.visible();
    let row_height = ui.text_style_height(&egui::TextStyle::Body) + 4.0;
    let pitch = row_height + ui.spacing().item_spacing.y;
    // Rows that arrived since last frame: above the list's top.
    let newest = visible.last().copied();
    let arrived = match (tui.newest_seen, newest) {
        (Some(seen), Some(_)) => visible.len() - visible.partition_point(|id| *id <= seen),
        _ => 0,
    };
    tui.newest_seen = newest;
    let mut offset = None;
    if tui.to_top {
        tui.to_top = false;
        tui.arrived_above = 0;
        offset = Some(0.0);
    } else if tui.holds_still() && arrived > 0 {
        // Held still: the rows in view stay where they are.
        tui.arrived_above += arrived;
        offset = Some(tui.offset + arrived as f32 * pitch);
    }
    if !tui.holds_still() {
        tui.arrived_above = 0;
    }
    let scroll_to = if tui.scroll_to_selected {
        tui.scroll_to_selected = false;
        log.selected
            .and_then(|id| visible.binary_search(&id).ok())
            .map(|i| visible.len() - 1 - i)
    } else {
        None
    };
    let header_height = row_height.max(ui.spacing().interact_size.y);
    let scroll_bar = ui.spacing().scroll.bar_width + ui.spacing().item_spacing.y;
    let body_height = (ui.available_height() - header_height - scroll_bar).max(row_height);
    let room = ui.available_width();
    // Wider than the pane: the table scrolls sideways (its rows scroll inside).
    egui::ScrollArea::horizontal()
        .id_salt("traffic_sideways")
        .auto_shrink([false, true])
        .show(ui, |ui| {
            let table = TableBuilder::new(ui);
            let heights = (row_height, header_height, body_height, room);
            rows_table(table, state, tui, heights, (offset, scroll_to), tx);
        });
}

fn rows_table(
    table: TableBuilder<'_>,
    state: &AppState,
    tui: &mut TrafficUi,
    (row_height, header_height, body_height, room): (f32, f32, f32, f32),
    (offset, scroll_to): (Option<f32>, Option<usize>),
    tx: &CommandSender,
) {
    let log = &state.traffic;
    let visible = log.visible();
    let mut table = table
        .id_salt("traffic_rows")
        .striped(true)
        .resizable(true)
        .sense(Sense::click())
        .auto_shrink(false)
        .min_scrolled_height(0.0)
        .max_scroll_height(body_height)
        .animate_scrolling(false);
    // The prefix badge takes the room a wide window has to spare (up to 360 points), so its
    // cause is read whole; the session column takes the rest.
    let fixed: f32 = COLUMNS.iter().map(|(_, width, _)| width).sum();
    let spare = (room - fixed - COLUMNS.len() as f32 * 8.0).max(0.0);
    for (i, (title, width, least)) in COLUMNS.iter().enumerate() {
        let column = if i == COLUMNS.len() - 1 {
            Column::remainder().at_least(*least)
        } else if *title == "prefix" {
            Column::initial((width + spare * 0.6).min(360.0))
                .at_least(*least)
                .clip(true)
        } else {
            Column::initial(*width).at_least(*least).clip(true)
        };
        table = table.column(column);
    }
    if let Some(y) = offset {
        table = table.vertical_scroll_offset(y);
    }
    if let Some(row) = scroll_to {
        table = table.scroll_to_row(row, None);
    }
    let mut drawn = 0;
    let output = table
        .header(header_height, |mut header| {
            for (title, _, _) in COLUMNS {
                header.col(|ui| {
                    ui.add(Label::new(RichText::new(title).strong()).truncate());
                });
            }
        })
        .body(|body| {
            body.rows(row_height, visible.len(), |mut table_row| {
                let Some(row) = log.shown_newest_first(table_row.index()) else {
                    return;
                };
                drawn += 1;
                table_row.set_selected(log.selected == Some(row.id));
                cells(&mut table_row, row, tx);
                let response = table_row.response();
                if response.double_clicked() && row.session.is_some() {
                    send(tx, TrafficCommand::OpenSession(row.id));
                } else if response.clicked() {
                    send(tx, TrafficCommand::Select(row.id));
                }
            });
        });
    tui.offset = output.state.clamped_offset().y;
    tui.rows_drawn = drawn;
}

fn tokens(n: Option<u64>) -> String {
    n.map_or_else(String::new, grouped)
}

/// The tokens cell: `1,234 / 56`.
fn in_out(row: &TrafficRow) -> String {
    match (row.input_tokens, row.output_tokens) {
        (None, None) => String::new(),
        (input, output) => format!("{} / {}", tokens(input), tokens(output)),
    }
}

fn time_of(us: i64) -> String {
    chrono::DateTime::from_timestamp_micros(us)
        .map_or_else(String::new, |t| t.format("%H:%M:%S").to_string())
}

fn cells(table_row: &mut egui_extras::TableRow<'_, '_>, row: &TrafficRow, tx: &CommandSender) {
    let text = |table_row: &mut egui_extras::TableRow<'_, '_>, text: RichText| {
        table_row.col(|ui| {
            ui.add(Label::new(text).selectable(false).truncate());
        })
    };
    text(
        table_row,
        RichText::new(time_of(row.started_us)).monospace(),
    );
    let (_, method) = text(table_row, RichText::new(&row.method).monospace());
    method.on_hover_text(format!("{} · {}", row.origin.label(), row.url));
    text(
        table_row,
        RichText::new(row.client.as_deref().unwrap_or("")),
    );
    text(table_row, RichText::new(row.model.as_deref().unwrap_or("")));
    table_row.col(|ui| {
        let mut status = RichText::new(row.status_text());
        if row.outcome.as_ref().is_some_and(|o| o.is_problem()) {
            status = status.color(ui.visuals().error_fg_color);
        } else if row.in_flight() {
            status = status.color(ui.visuals().weak_text_color());
        }
        let label = ui.add(Label::new(status).selectable(false).truncate());
        if let Some(error) = &row.error {
            label.on_hover_text(error);
        }
    });
    table_row.col(|ui| crate::ui::sessions::badge_cell(ui, row.badge.as_ref()));
    text(table_row, RichText::new(in_out(row)).monospace());
    text(
        table_row,
        RichText::new(tokens(row.cached_tokens)).monospace(),
    );
    text(
        table_row,
        RichText::new(
            row.total_us
                .map_or_else(String::new, |us| format!("{} ms", us / 1000)),
        )
        .monospace(),
    );
    table_row.col(|ui| match (row.session, row.position) {
        (Some(session), position) => {
            let text = match position {
                Some(turn) => format!("#{session} t{turn}"),
                None => format!("#{session}"),
            };
            if ui
                .link(text)
                .on_hover_text(format!("Open session #{session} in the Sessions view"))
                .clicked()
            {
                send(tx, TrafficCommand::OpenSession(row.id));
            }
        }
        (None, _) => {
            ui.weak("—");
        }
    });
}

/// j/k and arrows move the selection (newest first, as shown), Enter opens its session; only
/// while no text field has the keyboard.
fn keyboard(ctx: &egui::Context, state: &AppState, tui: &mut TrafficUi, tx: &CommandSender) {
    if ctx.text_edit_focused() || state.dialog.is_some() {
        return;
    }
    let (down, up, enter) = ctx.input(|i| {
        let plain = |key| i.modifiers.is_none() && i.key_pressed(key);
        (
            plain(egui::Key::ArrowDown) || plain(egui::Key::J),
            plain(egui::Key::ArrowUp) || plain(egui::Key::K),
            plain(egui::Key::Enter),
        )
    });
    let log = &state.traffic;
    let visible = log.visible();
    if visible.is_empty() {
        return;
    }
    // Shown position (0: newest) of the selected row.
    let at = log
        .selected
        .and_then(|id| visible.binary_search(&id).ok())
        .map(|i| visible.len() - 1 - i);
    let next = match (down, up, at) {
        (true, _, Some(i)) => Some((i + 1).min(visible.len() - 1)),
        (_, true, Some(i)) => Some(i.saturating_sub(1)),
        (true, _, None) | (_, true, None) => Some(0),
        _ => None,
    };
    if let Some(row) = next
        .filter(|n| Some(*n) != at)
        .and_then(|n| log.shown_newest_first(n))
    {
        tui.scroll_to_selected = true;
        send(tx, TrafficCommand::Select(row.id));
    }
    if enter
        && let Some(row) = log.selected_row()
        && row.session.is_some()
    {
        send(tx, TrafficCommand::OpenSession(row.id));
    }
}
