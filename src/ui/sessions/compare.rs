//! Compare any two requests — of one session, of two sessions, or a request against the
//! current form — with the structural diff the compiled columns use (`core::json_diff`): two
//! left-aligned, indented columns on one row grid with the compiled columns' marks (tints and
//! "− not in this column" placeholders), a one-line summary of what differs, and
//! previous / next difference (buttons, and `p` / `n` while no text field has focus); only the
//! rows in view are drawn.

use crate::core::format::count;
use egui::{Label, Ui};

use super::send;
use crate::app::session_view::{CompareSide, SessionCommand};
use crate::app::{AppState, CommandSender};
use crate::core::json_diff::{Aligned, Mark};
use crate::ui::json_views::{self, aligned_row_text_from};
use crate::ui::widgets;

/// The compare view's own state: the difference last stepped to.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CompareUi {
    /// Index into the differences, and the comparison (its row count) it belongs to.
    difference: Option<(usize, usize)>,
    /// A row to scroll to next frame.
    scroll_to: Option<usize>,
}

/// The one-line summary: how many places differ and how many rows are changed, only on the
/// left, only on the right (zero counts left out), and the top-level fields they are under:
/// `3 places differ: 2 rows changed, 51 rows only on the right · in input`.
pub fn compare_summary(aligned: &Aligned) -> String {
    let Some(right) = aligned.columns.get(1) else {
        return "Nothing to compare".to_string();
    };
    let marked = |mark: Mark| right.marks.iter().filter(|m| **m == mark).count();
    let (changed, added, removed) = (
        marked(Mark::Changed),
        marked(Mark::Added),
        marked(Mark::Removed),
    );
    let places = aligned.differences.len();
    if places == 0 {
        return "Identical".to_string();
    }
    let mut fields: Vec<String> = Vec::new();
    for (row, mark) in right.marks.iter().enumerate() {
        if *mark == Mark::Same {
            continue;
        }
        let path = right
            .paths
            .get(row)
            .and_then(|p| p.as_deref())
            .or_else(|| aligned.columns[0].paths.get(row).and_then(|p| p.as_deref()))
            .unwrap_or("");
        let top = path
            .split(['.', '['])
            .next()
            .filter(|t| !t.is_empty())
            .unwrap_or("(root)")
            .to_string();
        if !fields.contains(&top) {
            fields.push(top);
        }
    }
    // Rows, named as such (a place is one run of differing rows), zero counts left out.
    let rows: Vec<String> = [
        (changed, "changed"),
        (removed, "only on the left"),
        (added, "only on the right"),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{} {what}", count(n as u64, "row")))
    .collect();
    format!(
        "{} differ: {} · in {}",
        count(places as u64, "place"),
        rows.join(", "),
        fields.join(", ")
    )
}

/// Draws the compare view.
pub fn compare_ui(ui: &mut Ui, state: &AppState, cui: &mut CompareUi, tx: &CommandSender) {
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
    let rows = aligned.row_count();
    if cui.difference.is_some_and(|(_, r)| r != rows) {
        cui.difference = None;
    }
    ui.label(compare_summary(aligned));
    navigation_ui(ui, aligned, cui);
    let row_height = ui.text_style_height(&egui::TextStyle::Monospace) + 2.0;
    let mut area = egui::ScrollArea::both()
        .id_salt("compare_scroll")
        .auto_shrink(false);
    if let Some(row) = cui.scroll_to.take() {
        area = area.vertical_scroll_offset((row as f32 * row_height - 40.0).max(0.0));
    }
    area.show_rows(ui, row_height, rows, |ui, range| {
        let width = (ui.available_width() / 2.0 - 8.0).max(200.0);
        let fits = chars_that_fit(ui, width);
        let view = range.clone();
        for row in range {
            // A changed line too long for its half starts near where the two sides first
            // differ, so the change is in view (the whole line on hover).
            let skip = changed_skip(aligned, row, fits);
            ui.horizontal(|ui| {
                for column in &aligned.columns {
                    let text = aligned_row_text_from(ui, column, row, &view, skip);
                    let layout = egui::Layout::left_to_right(egui::Align::Center);
                    ui.allocate_ui_with_layout(egui::vec2(width, row_height), layout, |ui| {
                        ui.set_width(width);
                        ui.add(Label::new(text).truncate());
                    });
                }
            });
        }
    });
}

/// Monospace characters that fit in `width`.
fn chars_that_fit(ui: &Ui, width: f32) -> usize {
    let font = egui::TextStyle::Monospace.resolve(ui.style());
    let glyph = ui.fonts_mut(|f| f.glyph_width(&font, 'x')).max(1.0);
    (width / glyph) as usize
}

/// Characters to leave out at the start of changed row `row` (after its indentation) so that
/// the first difference of its two sides shows with some context, when the lines are longer
/// than `fits`; 0 otherwise.
fn changed_skip(aligned: &Aligned, row: usize, fits: usize) -> usize {
    const CONTEXT: usize = 24;
    let line = |c: usize| {
        aligned
            .columns
            .get(c)
            .and_then(|col| col.text.get(row))
            .and_then(|t| t.as_deref())
    };
    let (Some(left), Some(right)) = (line(0), line(1)) else {
        return 0;
    };
    let indent = left.len() - left.trim_start_matches(' ').len();
    match json_views::first_difference(left, right) {
        Some(at) if indent + at + 8 > fits => at.saturating_sub(CONTEXT),
        _ => 0,
    }
}

/// "Difference i of n" with previous / next (also `p` / `n`).
fn navigation_ui(ui: &mut Ui, aligned: &Aligned, cui: &mut CompareUi) {
    let n = aligned.differences.len();
    let keys = !ui.ctx().text_edit_focused();
    let (key_next, key_previous) = ui.input(|i| {
        let plain = |key| keys && i.modifiers.is_none() && i.key_pressed(key);
        (plain(egui::Key::N), plain(egui::Key::P))
    });
    ui.horizontal(|ui| {
        let label = match cui.difference {
            Some((i, _)) if n > 0 => format!("Difference {} of {n}", i + 1),
            _ if n == 1 => "1 differing place".to_string(),
            _ => format!("{n} differing places"),
        };
        // The buttons first: the count beside them changes as it steps (a button after it moved
        // from under the pointer).
        let previous = ui
            .add_enabled(n > 0, egui::Button::new("Previous difference"))
            .on_hover_text("Scroll to the previous place where they differ (p)")
            .clicked();
        let next = ui
            .add_enabled(n > 0, egui::Button::new("Next difference"))
            .on_hover_text("Scroll to the next place where they differ (n)")
            .clicked();
        ui.label(label);
        let (previous, next) = (previous || key_previous, next || key_next);
        if n > 0 && (previous || next) {
            let i = match (cui.difference.map(|(i, _)| i), next) {
                (Some(i), true) => (i + 1) % n,
                (Some(i), false) => (i + n - 1) % n,
                (None, true) => 0,
                (None, false) => n - 1,
            };
            cui.difference = Some((i, aligned.row_count()));
            cui.scroll_to = aligned.differences.get(i).copied();
            ui.ctx().request_repaint();
        }
    });
}
