//! The selected pair's item-aligned diff: the lines [`PairView`] flattened on the worker, drawn
//! only where in view (`ScrollArea::show_rows`), scrolled to the first difference once per
//! pair, with the break banner and the element holding the break pointer highlighted.

use egui::{Label, RichText, Ui};

use super::SessionsUi;
use crate::app::AppState;
use crate::app::session_view::{LineKind, PairLine, PairView};
use crate::ui::widgets;

/// Draws the pair view; `height` fixes its height (inside a scrolling view), else it fills.
pub fn pair_ui(ui: &mut Ui, state: &AppState, sui: &mut SessionsUi, height: Option<f32>) {
    let browser = &state.browser;
    let Some((from, to)) = browser.pair else {
        ui.weak("Select a break (or a turn in the strip) to see the two requests side by side.");
        return;
    };
    ui.strong(format!("Turns {from} and {to}: item-aligned diff"));
    let Some(view) = browser.pair_diff.as_ref().filter(|v| v.pair == (from, to)) else {
        ui.spinner();
        return;
    };
    lines_ui(ui, view, sui, height);
}

fn lines_ui(ui: &mut Ui, view: &PairView, sui: &mut SessionsUi, height: Option<f32>) {
    if view.lines.is_empty() {
        ui.label("The two requests are the same.");
        return;
    }
    let row_height = ui.text_style_height(&egui::TextStyle::Monospace) + 2.0;
    let mut area = egui::ScrollArea::both()
        .id_salt("pair_diff_scroll")
        .auto_shrink(false);
    if let Some(height) = height {
        area = area.max_height(height).min_scrolled_height(height);
    }
    if sui.pair_scrolled != Some(view.pair) {
        sui.pair_scrolled = Some(view.pair);
        let first = view.first_difference.unwrap_or(0);
        area = area.vertical_scroll_offset(first as f32 * row_height);
    }
    area.show_rows(ui, row_height, view.lines.len(), |ui, range| {
        for line in &view.lines[range] {
            line_ui(ui, line);
        }
    });
}

fn line_ui(ui: &mut Ui, line: &PairLine) {
    let visuals = ui.visuals();
    let mut text = RichText::new(&line.text).monospace();
    let background = match line.kind {
        LineKind::Insert => Some(widgets::added_background(ui)),
        LineKind::Delete => Some(widgets::removed_background(ui)),
        LineKind::Break => Some(widgets::diff_background(ui)),
        LineKind::Header if line.at_break => Some(widgets::diff_background(ui)),
        _ => None,
    };
    text = match line.kind {
        LineKind::Collapsed => text.color(visuals.weak_text_color()),
        LineKind::Detail => text.color(visuals.warn_fg_color),
        LineKind::Header | LineKind::Break => text.strong(),
        _ => text,
    };
    if let Some(color) = background {
        text = text.background_color(color);
    }
    if line.at_pointer {
        // The changed line at the break's pointer.
        text = text.strong().underline();
    }
    ui.add(Label::new(text).extend());
}
