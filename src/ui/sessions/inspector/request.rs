//! The inspector's Request tab: method and URL, size and tokens, the stored headers (each value
//! shown through the redaction policy — credential headers were never stored, and the tab says
//! so), and the body as a JSON tree, pretty-printed text or raw bytes. Text and raw views lay out
//! only the lines in view (`ScrollArea::show_rows` over lines computed once on the worker).
//!
//! The tab scrolls as a whole (Codex's dozen headers left the body a sliver at 1024×700, its
//! view selector cut off): the body view gets the rest of the pane, at least
//! [`BODY_MIN_HEIGHT`] (or most of a shorter pane), and scrolls inside that height.

use egui::{Label, RichText, Ui};

use super::BodyView;
use crate::app::session_view::inspect::Inspected;
use crate::core::format::grouped;
use crate::core::redact::redact_header;
use crate::ui::widgets::note_line;

/// Bytes per line of the raw view.
const RAW_WIDTH: usize = 16;

/// The least height the body view gets: when the headers leave it less, the tab scrolls.
pub const BODY_MIN_HEIGHT: f32 = 220.0;

/// Share of the tab's height the body view gets at least when the tab is shorter than
/// [`BODY_MIN_HEIGHT`] allows for (the selector row stays in view above it).
const BODY_MIN_SHARE: f32 = 0.8;

/// Widest the names column of [`headers_grid`] gets, as a share of the pane (a longer name is
/// cut, in full on hover).
const NAMES_SHARE: f32 = 0.4;

/// A header table (name, value as the redaction policy shows it): the names column as wide as
/// its widest name (at most [`NAMES_SHARE`] of the pane), each value on one line in the rest of
/// the pane's width, cut at its edge with the whole value on hover. (An `egui::Grid` with
/// wrapping values gave the values a column a few characters wide: one header took a dozen
/// lines.)
pub fn headers_grid(ui: &mut Ui, id: &str, headers: &[(String, String)]) {
    if headers.is_empty() {
        ui.weak("(none stored)");
        return;
    }
    let font = egui::TextStyle::Monospace.resolve(ui.style());
    let color = ui.visuals().text_color();
    let widest = headers
        .iter()
        .map(|(name, _)| {
            ui.ctx()
                .fonts_mut(|f| f.layout_no_wrap(name.clone(), font.clone(), color))
                .size()
                .x
        })
        .fold(0.0_f32, f32::max);
    let names_width = widest.min(ui.available_width() * NAMES_SHARE).ceil();
    let row_height = ui.text_style_height(&egui::TextStyle::Monospace);
    ui.push_id(id, |ui| {
        for (i, (name, value)) in headers.iter().enumerate() {
            // The stripe goes under the row, painted once its height is known.
            let stripe = ui.painter().add(egui::Shape::Noop);
            let row = ui.horizontal(|ui| {
                let names = egui::vec2(names_width, row_height);
                ui.allocate_ui_with_layout(
                    names,
                    egui::Layout::left_to_right(egui::Align::Center),
                    |ui| {
                        ui.set_min_width(names_width);
                        ui.add(Label::new(RichText::new(name).monospace().strong()).truncate());
                    },
                );
                let value = redact_header(name, value);
                // Cut at the pane's edge; egui shows the whole value on hover.
                ui.add(Label::new(RichText::new(value).monospace()).truncate());
            });
            if i % 2 == 1 {
                let rect = egui::Rect::from_x_y_ranges(
                    ui.max_rect().x_range(),
                    row.response.rect.y_range(),
                );
                ui.painter().set(
                    stripe,
                    egui::Shape::rect_filled(rect, 0.0, ui.visuals().faint_bg_color),
                );
            }
        }
    });
}

/// A part the text view shows (the Anatomy tab's reveal).
#[derive(Debug, Default)]
pub struct Shown {
    /// The line revealed (highlighted), or why the part cannot be shown.
    pub revealed: Option<Result<usize, String>>,
    /// Scroll the text view to this line now.
    pub scroll_to: Option<usize>,
}

/// Draws the tab.
pub fn request_ui(
    ui: &mut Ui,
    found: &Inspected,
    tokens: Option<u64>,
    view: &mut BodyView,
    shown: Shown,
) {
    let tab_height = ui.available_height();
    egui::ScrollArea::vertical()
        .id_salt("inspector_request")
        .auto_shrink(false)
        .show(ui, |ui| {
            summary_ui(ui, found, tokens);
            ui.horizontal(|ui| {
                ui.label("Body:");
                ui.selectable_value(view, BodyView::Tree, "Tree");
                ui.selectable_value(view, BodyView::Text, "Text");
                ui.selectable_value(view, BodyView::Raw, "Raw bytes");
            });
            // The rest of the tab (measured in the scroll area's view, so it does not change
            // as the tab scrolls), at least the minimum.
            let least = BODY_MIN_HEIGHT.min(tab_height * BODY_MIN_SHARE);
            if let Some(Err(why)) = &shown.revealed {
                note_line(ui, why);
            }
            let height = ui.available_height().max(least).max(1.0);
            body_ui(ui, found, *view, height, &shown);
        });
}

/// Method and URL, size and tokens, the headers.
fn summary_ui(ui: &mut Ui, found: &Inspected, tokens: Option<u64>) {
    let summary = &found.record.summary;
    ui.add(
        Label::new(RichText::new(format!("{} {}", summary.method, summary.url)).monospace()).wrap(),
    );
    let tokens = tokens.map_or_else(
        || "counting tokens…".to_string(),
        |t| format!("{} tokens (o200k)", grouped(t)),
    );
    ui.label(format!(
        "Body: {} bytes · {tokens}",
        grouped(found.bytes.len() as u64)
    ));
    egui::CollapsingHeader::new(format!("Headers ({})", found.record.headers.len()))
        .id_salt("inspector_request_headers")
        .default_open(true)
        .show(ui, |ui| {
            headers_grid(ui, "inspector_request_headers_grid", &found.record.headers);
            note_line(
                ui,
                "authorization: <redacted> — credentials (Authorization, API keys, cookies) are never stored",
            );
        });
}

/// The body in `view`, in a scroll area exactly `height` tall.
fn body_ui(ui: &mut Ui, found: &Inspected, view: BodyView, height: f32, shown: &Shown) {
    let area = |salt: &str| {
        egui::ScrollArea::both()
            .id_salt(salt)
            .auto_shrink(false)
            .min_scrolled_height(height)
            .max_height(height)
    };
    match view {
        BodyView::Tree => match found.value.as_ref().and_then(|v| v.as_object()) {
            Some(map) => {
                area("inspector_body_tree").show(ui, |ui| {
                    crate::ui::json_tree::json_object_tree(ui, map, "inspector_body");
                });
            }
            None => {
                ui.weak("The body is not a JSON object: see Text or Raw bytes.");
            }
        },
        BodyView::Text => {
            let row_height = ui.text_style_height(&egui::TextStyle::Monospace);
            let mut area = area("inspector_body_text");
            if let Some(line) = shown.scroll_to {
                let spacing = ui.spacing().item_spacing.y;
                area = area.vertical_scroll_offset(line as f32 * (row_height + spacing));
            }
            let highlight = shown
                .revealed
                .as_ref()
                .and_then(|r| r.as_ref().ok().copied());
            area.show_rows(ui, row_height, found.lines.len(), |ui, range| {
                text_rows(ui, found, range, highlight)
            });
        }
        BodyView::Raw => {
            let row_height = ui.text_style_height(&egui::TextStyle::Monospace);
            let bytes = &found.bytes;
            let lines = bytes.len().div_ceil(RAW_WIDTH);
            area("inspector_body_raw").show_rows(ui, row_height, lines, |ui, range| {
                for line in range {
                    ui.add(Label::new(RichText::new(raw_line(bytes, line)).monospace()).extend());
                }
            });
        }
    }
}

/// The text view's lines in `range` (only the lines in view are laid out).
fn text_rows(
    ui: &mut Ui,
    found: &Inspected,
    range: std::ops::Range<usize>,
    highlight: Option<usize>,
) {
    for i in range {
        let (line, cut) = found.shown_line(i);
        let mut text = RichText::new(line).monospace();
        if highlight == Some(i) {
            text = text.background_color(crate::ui::widgets::match_background(ui));
        }
        if cut == 0 {
            ui.add(Label::new(text).extend());
        } else {
            ui.horizontal(|ui| {
                ui.add(Label::new(text).extend());
                ui.weak(format!("… {} more bytes", grouped(cut as u64)));
            });
        }
    }
}

/// One raw line: offset, hex, ASCII.
pub fn raw_line(bytes: &[u8], line: usize) -> String {
    let start = line * RAW_WIDTH;
    let chunk = bytes
        .get(start..(start + RAW_WIDTH).min(bytes.len()))
        .unwrap_or(&[]);
    let mut out = format!("{start:08x}  ");
    for i in 0..RAW_WIDTH {
        match chunk.get(i) {
            Some(b) => out.push_str(&format!("{b:02x} ")),
            None => out.push_str("   "),
        }
    }
    out.push(' ');
    out.extend(chunk.iter().map(|&b| {
        if b.is_ascii_graphic() || b == b' ' {
            b as char
        } else {
            '.'
        }
    }));
    out
}
