//! Compare any two requests — of one session, of two sessions, or a request against the
//! current form — with the structural diff the compiled columns use (`core::json_diff`): two
//! columns on one row grid, differences tinted, only the rows in view drawn.

use egui::{Label, RichText, Ui};

use super::send;
use crate::app::session_view::{CompareSide, SessionCommand};
use crate::app::{AppState, CommandSender};
use crate::core::json_diff::Mark;
use crate::ui::widgets;

/// Draws the compare view.
pub fn compare_ui(ui: &mut Ui, state: &AppState, tx: &CommandSender) {
    let compare = &state.browser.compare;
    ui.horizontal_wrapped(|ui| {
        for (slot, name) in ["Left", "Right"].into_iter().enumerate() {
            let shown = compare.slots[slot].as_ref().map_or_else(
                || "(choose a request above)".to_string(),
                CompareSide::label,
            );
            ui.label(format!("{name}: {shown}"));
        }
        if ui.button("Right: the form").clicked() {
            send(tx, SessionCommand::SetCompare(1, CompareSide::Form));
        }
        if ui.button("Clear").clicked() {
            send(tx, SessionCommand::ClearCompare);
        }
    });
    if let Some(error) = &compare.error {
        widgets::error_line(ui, error);
    }
    let Some(result) = &compare.result else {
        if compare.slots.iter().all(Option::is_some) {
            ui.spinner();
        } else {
            ui.weak("Pick two requests: select one in the table and press Compare: left / right.");
        }
        return;
    };
    let aligned = &result.aligned;
    ui.label(format!(
        "{} rows, {} differing runs",
        aligned.row_count(),
        aligned.differences.len()
    ));
    let row_height = ui.text_style_height(&egui::TextStyle::Monospace) + 2.0;
    egui::ScrollArea::both()
        .id_salt("compare_scroll")
        .auto_shrink(false)
        .show_rows(ui, row_height, aligned.row_count(), |ui, range| {
            let width = (ui.available_width() / 2.0 - 8.0).max(200.0);
            for row in range {
                ui.horizontal(|ui| {
                    for column in &aligned.columns {
                        let text = column
                            .text
                            .get(row)
                            .and_then(|t| t.as_deref())
                            .unwrap_or("");
                        let mut rich = RichText::new(text).monospace();
                        match column.marks.get(row) {
                            Some(Mark::Added) => {
                                rich = rich.background_color(widgets::added_background(ui))
                            }
                            Some(Mark::Removed) => {
                                rich = rich.background_color(widgets::removed_background(ui))
                            }
                            Some(Mark::Changed) => {
                                rich = rich.background_color(widgets::diff_background(ui))
                            }
                            _ => {}
                        }
                        ui.add_sized([width, row_height], Label::new(rich).truncate());
                    }
                });
            }
        });
}
