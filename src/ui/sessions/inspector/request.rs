//! The inspector's Request tab: method and URL, size and tokens, the stored headers (each value
//! shown through the redaction policy — credential headers were never stored, and the tab says
//! so), and the body as a JSON tree, pretty-printed text or raw bytes. Text and raw views lay out
//! only the lines in view (`ScrollArea::show_rows` over lines computed once on the worker).

use egui::{Label, RichText, Ui};

use super::BodyView;
use crate::app::session_view::inspect::Inspected;
use crate::core::format::grouped;
use crate::core::redact::redact_header;
use crate::ui::widgets::note_line;

/// Bytes per line of the raw view.
const RAW_WIDTH: usize = 16;

/// A header grid (name, value as the redaction policy shows it).
pub fn headers_grid(ui: &mut Ui, id: &str, headers: &[(String, String)]) {
    if headers.is_empty() {
        ui.weak("(none stored)");
        return;
    }
    egui::Grid::new(id)
        .num_columns(2)
        .striped(true)
        .show(ui, |ui| {
            for (name, value) in headers {
                ui.label(RichText::new(name).monospace().strong());
                ui.add(Label::new(RichText::new(redact_header(name, value)).monospace()).wrap());
                ui.end_row();
            }
        });
}

/// Draws the tab.
pub fn request_ui(ui: &mut Ui, found: &Inspected, tokens: Option<u64>, view: &mut BodyView) {
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
    ui.horizontal(|ui| {
        ui.label("Body:");
        ui.selectable_value(view, BodyView::Tree, "Tree");
        ui.selectable_value(view, BodyView::Text, "Text");
        ui.selectable_value(view, BodyView::Raw, "Raw bytes");
    });
    match view {
        BodyView::Tree => match found.value.as_ref().and_then(|v| v.as_object()) {
            Some(map) => {
                egui::ScrollArea::both()
                    .id_salt("inspector_body_tree")
                    .auto_shrink(false)
                    .show(ui, |ui| {
                        crate::ui::json_tree::json_object_tree(ui, map, "inspector_body");
                    });
            }
            None => {
                ui.weak("The body is not a JSON object: see Text or Raw bytes.");
            }
        },
        BodyView::Text => text_ui(ui, found),
        BodyView::Raw => raw_ui(ui, &found.bytes),
    }
}

fn text_ui(ui: &mut Ui, found: &Inspected) {
    let row_height = ui.text_style_height(&egui::TextStyle::Monospace);
    egui::ScrollArea::both()
        .id_salt("inspector_body_text")
        .auto_shrink(false)
        .show_rows(ui, row_height, found.lines.len(), |ui, range| {
            for i in range {
                let (line, cut) = found.shown_line(i);
                if cut == 0 {
                    ui.add(Label::new(RichText::new(line).monospace()).extend());
                } else {
                    ui.horizontal(|ui| {
                        ui.add(Label::new(RichText::new(line).monospace()).extend());
                        ui.weak(format!("… {} more bytes", grouped(cut as u64)));
                    });
                }
            }
        });
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

fn raw_ui(ui: &mut Ui, bytes: &[u8]) {
    let row_height = ui.text_style_height(&egui::TextStyle::Monospace);
    let lines = bytes.len().div_ceil(RAW_WIDTH);
    egui::ScrollArea::both()
        .id_salt("inspector_body_raw")
        .auto_shrink(false)
        .show_rows(ui, row_height, lines, |ui, range| {
            for line in range {
                ui.add(Label::new(RichText::new(raw_line(bytes, line)).monospace()).extend());
            }
        });
}
