//! The event table: one row per event that passes the filter, virtualized (`TableBody::rows`
//! lays out only the rows in view), sticking to the bottom while following. Columns: relative
//! receive time (with the attempt when there were several), seq, SSE event name, Responses type,
//! mapped kind, badge, preview. Clicking a row selects it; a row moved to with the keys is
//! scrolled into view.

use egui::{Label, RichText, Sense, Ui};
use egui_extras::{Column, TableBuilder};

use crate::app::timeline::{Badge, TimelineCommand, TimelineModel, TimelineRow};

/// Draws the table.
pub fn table_ui(
    ui: &mut Ui,
    model: &TimelineModel,
    scroll_to: Option<usize>,
    commands: &mut Vec<TimelineCommand>,
) {
    let row_height = ui.text_style_height(&egui::TextStyle::Monospace) + 2.0;
    let several_attempts = model.attempts().len() > 1;
    let selected = model.selected();
    // Its rows scroll inside the room the pane leaves (the table's default 200 px minimum
    // would push a small pane open).
    let body_height = (ui.available_height() - row_height - 8.0).max(row_height);
    let mut table = TableBuilder::new(ui)
        .min_scrolled_height(0.0)
        .max_scroll_height(body_height);
    if let Some(row) = scroll_to {
        table = table.scroll_to_row(row, None);
    }
    table
        .id_salt("timeline_table")
        .striped(true)
        .resizable(true)
        .sense(Sense::click())
        .stick_to_bottom(model.follows_tail())
        .auto_shrink(false)
        .column(Column::initial(86.0).at_least(60.0))
        .column(Column::initial(44.0).at_least(30.0))
        .column(Column::initial(150.0).at_least(40.0).clip(true))
        .column(Column::initial(190.0).at_least(40.0).clip(true))
        .column(Column::initial(150.0).at_least(40.0).clip(true))
        .column(Column::initial(64.0).at_least(40.0))
        .column(Column::remainder().at_least(80.0).clip(true))
        .header(row_height + 4.0, |mut header| {
            for title in ["time", "seq", "event", "type", "mapped", "", "preview"] {
                header.col(|ui| {
                    ui.strong(title);
                });
            }
        })
        .body(|body| {
            body.rows(row_height, model.visible_len(), |mut row| {
                let Some((index, event)) = model.visible_row(row.index()) else {
                    return;
                };
                row.set_selected(selected == Some(index));
                cells(&mut row, event, several_attempts);
                if row.response().clicked() {
                    commands.push(TimelineCommand::Select(Some(index)));
                }
            });
        });
}

fn text_cell(row: &mut egui_extras::TableRow<'_, '_>, text: RichText) {
    row.col(|ui| {
        ui.add(Label::new(text).selectable(false).truncate());
    });
}

fn cells(row: &mut egui_extras::TableRow<'_, '_>, event: &TimelineRow, several_attempts: bool) {
    let raw = &event.entry.raw;
    let time = format!("+{:.3}", raw.received_at.as_secs_f64());
    let time = match several_attempts {
        true => format!("#{} {time}", event.attempt),
        false => time,
    };
    text_cell(row, RichText::new(time).monospace());
    text_cell(row, RichText::new(raw.seq.to_string()).monospace());
    text_cell(row, RichText::new(raw.event.as_deref().unwrap_or("")));
    text_cell(
        row,
        RichText::new(event.entry.data_type.as_deref().unwrap_or("")),
    );
    text_cell(row, RichText::new(event.entry.mapped_kind().unwrap_or("")));
    row.col(|ui| {
        if let Some(badge) = event.badge {
            let color = match badge {
                Badge::Error => ui.visuals().error_fg_color,
                Badge::Unparsed => ui.visuals().warn_fg_color,
                Badge::Ignored => ui.visuals().weak_text_color(),
            };
            ui.add(Label::new(RichText::new(badge.label()).small().color(color)).selectable(false));
        }
    });
    text_cell(row, RichText::new(&event.preview).monospace());
}
