//! The anatomy chart: per request, its tokens stacked by source (the header's sources at the
//! bottom, the conversation above), the part the cache read drawn solid and the rest faded;
//! compactions (orange) and costly breaks (red) as vertical marks; the model's context window
//! and Codex's auto-compaction threshold as horizontal lines when the session comes near them.
//! Hover names the request, the source under the pointer, its tokens, its share and whether the
//! cache read it; a click selects the request.
//!
//! Drawn with the painter, not a plot: one column per request (per pixel when there are more
//! requests than pixels: the largest request of each pixel's bucket), all of them one mesh
//! built once per session, size and scale and kept ([`ChartCache`]); a frame only re-adds that
//! mesh, the marks and the hover.

use std::sync::Arc;

use egui::{Color32, Mesh, Rect, Sense, Shape, Stroke, Ui, pos2, vec2};

use crate::core::anatomy::{Anatomy, RequestAnatomy};
use crate::core::format::grouped;
use crate::core::ledger::Source;

/// The colour of each source, in [`Source::ALL`] order (readable on dark and light themes).
pub const SOURCE_COLOURS: [Color32; 12] = [
    Color32::from_rgb(0x6b, 0x7f, 0xd7), // tools
    Color32::from_rgb(0x9b, 0x6b, 0xd7), // instructions
    Color32::from_rgb(0xc3, 0x6b, 0xc7), // developer
    Color32::from_rgb(0xd7, 0x6b, 0x9b), // user instructions
    Color32::from_rgb(0x8a, 0x8a, 0x8a), // environment
    Color32::from_rgb(0x3c, 0xb3, 0x71), // user
    Color32::from_rgb(0x4c, 0x9a, 0xff), // assistant
    Color32::from_rgb(0x5f, 0xc8, 0xc8), // reasoning
    Color32::from_rgb(0xe0, 0xb0, 0x30), // tool calls
    Color32::from_rgb(0xf0, 0x8c, 0x2e), // tool outputs
    Color32::from_rgb(0xd0, 0x50, 0x50), // compaction
    Color32::from_rgb(0xa0, 0xa0, 0x70), // other
];

/// The colour of `source`.
pub fn colour(source: Source) -> Color32 {
    SOURCE_COLOURS[crate::core::anatomy::source_index(source)]
}

/// The colour of the part the cache did not read.
fn faded(c: Color32) -> Color32 {
    c.gamma_multiply(0.38)
}

/// Room for the y labels at the left.
const LEFT: f32 = 46.0;
/// Room for the x labels under the chart.
const BOTTOM: f32 = 14.0;

/// The chart's kept mesh.
#[derive(Default)]
pub struct ChartCache {
    key: Option<(usize, u32, u32, bool)>,
    mesh: Option<Arc<Mesh>>,
    /// Request shown in each column.
    columns: Vec<usize>,
    top: f64,
}

impl std::fmt::Debug for ChartCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChartCache")
            .field("key", &self.key)
            .field("columns", &self.columns.len())
            .finish()
    }
}

/// What the chart reports.
#[derive(Debug, Default)]
pub struct ChartResponse {
    /// A request was clicked.
    pub clicked: Option<usize>,
    /// The request under the pointer.
    pub hovered: Option<usize>,
}

/// Whether the window lines are drawn: when the largest request reaches a third of the
/// auto-compaction threshold (below that they would flatten the chart to a line).
pub fn shows_limits(anatomy: &Anatomy) -> bool {
    let top = anatomy.requests.iter().map(|r| r.tokens).max().unwrap_or(0);
    anatomy.auto_compact_tokens.is_some_and(|a| top * 3 >= a)
}

/// Draws the chart `height` tall across the available width.
pub fn chart_ui(
    ui: &mut Ui,
    anatomy: &Arc<Anatomy>,
    marks: &Marks,
    selected: Option<usize>,
    cache: &mut ChartCache,
    height: f32,
) -> ChartResponse {
    let mut out = ChartResponse::default();
    let width = ui.available_width().max(120.0);
    let (rect, response) = ui.allocate_exact_size(vec2(width, height), Sense::click());
    let plot = Rect::from_min_max(
        pos2(rect.left() + LEFT, rect.top() + 4.0),
        pos2(rect.right() - 4.0, rect.bottom() - BOTTOM),
    );
    response.widget_info(|| {
        egui::WidgetInfo::labeled(
            egui::Role::Figure,
            true,
            format!(
                "Context by source: {} requests, {} compactions, {} breaks",
                anatomy.requests.len(),
                marks.compactions.len(),
                marks.breaks.len()
            ),
        )
    });
    let painter = ui.painter_at(rect);
    let visuals = ui.visuals();
    painter.rect_filled(plot, 2.0, visuals.extreme_bg_color);
    let requests = &anatomy.requests;
    if requests.is_empty() || plot.width() < 4.0 || plot.height() < 4.0 {
        return out;
    }
    let limits = shows_limits(anatomy);
    let key = (
        Arc::as_ptr(anatomy) as usize,
        plot.width().round() as u32,
        plot.height().round() as u32,
        limits,
    );
    if cache.key != Some(key) {
        build(cache, anatomy, plot, limits);
        cache.key = Some(key);
    }
    // The mesh was built at the plot's size: move it to where the plot is this frame.
    if let Some(mesh) = &cache.mesh {
        let mut shape = Shape::Mesh(mesh.clone());
        shape.translate(plot.min.to_vec2());
        painter.add(shape);
    }
    let top = cache.top;
    let y_of = |t: f64| plot.bottom() - (t / top) as f32 * plot.height();
    let n = cache.columns.len().max(1);
    let col_w = plot.width() / n as f32;
    let x_of_request = |i: usize| -> Option<f32> {
        let c = cache.columns.iter().position(|r| *r >= i)?;
        Some(plot.left() + (c as f32 + 0.5) * col_w)
    };
    // Y labels: 0, half, top.
    let text = visuals.weak_text_color();
    for frac in [0.0, 0.5, 1.0] {
        let t = top * frac;
        let y = y_of(t);
        painter.hline(
            plot.x_range(),
            y,
            Stroke::new(0.5, visuals.weak_text_color().gamma_multiply(0.3)),
        );
        painter.text(
            pos2(rect.left() + LEFT - 4.0, y),
            egui::Align2::RIGHT_CENTER,
            short(t as u64),
            egui::FontId::proportional(10.0),
            text,
        );
    }
    // X labels: the first and the last request.
    for (i, align) in [
        (requests[0].index, egui::Align2::LEFT_TOP),
        (requests[requests.len() - 1].index, egui::Align2::RIGHT_TOP),
    ] {
        let x = if align == egui::Align2::LEFT_TOP {
            plot.left()
        } else {
            plot.right()
        };
        painter.text(
            pos2(x, plot.bottom() + 1.0),
            align,
            format!("#{i}"),
            egui::FontId::proportional(10.0),
            text,
        );
    }
    // Compactions and breaks.
    for (indices, colour) in [
        (&marks.compactions, Color32::from_rgb(0xf0, 0x8c, 0x2e)),
        (&marks.breaks, Color32::from_rgb(0xe0, 0x40, 0x40)),
    ] {
        for i in indices {
            if let Some(x) = x_of_request(*i) {
                painter.vline(x, plot.y_range(), Stroke::new(1.5, colour));
            }
        }
    }
    if limits {
        for (tokens, label) in [
            (anatomy.auto_compact_tokens, "auto-compaction"),
            (anatomy.context_window, "context window"),
        ] {
            let Some(tokens) = tokens else { continue };
            let y = y_of(tokens as f64);
            painter.hline(
                plot.x_range(),
                y,
                Stroke::new(1.0, visuals.strong_text_color().gamma_multiply(0.7)),
            );
            painter.text(
                pos2(plot.left() + 4.0, y - 1.0),
                egui::Align2::LEFT_BOTTOM,
                format!("{label} {}", short(tokens)),
                egui::FontId::proportional(10.0),
                visuals.strong_text_color(),
            );
        }
    }
    if let Some(i) = selected
        && let Some(x) = x_of_request(i)
    {
        painter.vline(
            x,
            plot.y_range(),
            Stroke::new(2.0, visuals.selection.stroke.color),
        );
    }
    if let Some(pos) = response.hover_pos().filter(|p| plot.contains(*p)) {
        let c = (((pos.x - plot.left()) / col_w) as usize).min(n - 1);
        if let Some(r) = cache.columns.get(c).and_then(|i| requests.get(*i)) {
            out.hovered = Some(r.index);
            let tokens_at = ((plot.bottom() - pos.y) / plot.height()) as f64 * top;
            let tip = hover_text(r, tokens_at);
            response.clone().on_hover_text_at_pointer(tip);
            if response.clicked() {
                out.clicked = Some(r.index);
            }
        }
    }
    out
}

/// The marks over the chart.
#[derive(Debug, Default, Clone)]
pub struct Marks {
    /// Compaction requests.
    pub compactions: Vec<usize>,
    /// Requests whose prefix broke at a cost.
    pub breaks: Vec<usize>,
}

/// Builds the mesh of the columns, relative to the plot's top-left corner.
fn build(cache: &mut ChartCache, anatomy: &Anatomy, plot: Rect, limits: bool) {
    let requests = &anatomy.requests;
    let width = plot.width();
    let n = requests.len();
    let columns_n = n.min(width.floor().max(1.0) as usize);
    // The largest request of each column's bucket.
    let columns: Vec<usize> = (0..columns_n)
        .map(|c| {
            let from = c * n / columns_n;
            let to = ((c + 1) * n / columns_n).max(from + 1).min(n);
            (from..to)
                .max_by_key(|k| requests[*k].tokens)
                .unwrap_or(from)
        })
        .collect();
    let mut top = requests.iter().map(|r| r.tokens).max().unwrap_or(0) as f64;
    if limits {
        top = top.max(anatomy.context_window.unwrap_or(0) as f64);
    }
    let top = (top * 1.05).max(1.0);
    let col_w = width / columns_n as f32;
    let gap = if col_w > 4.0 { 1.0 } else { 0.0 };
    let h = plot.height();
    let y_of = |t: u64| h - (t as f64 / top) as f32 * h;
    let mut mesh = Mesh::default();
    for (c, &k) in columns.iter().enumerate() {
        let r = &requests[k];
        let x0 = c as f32 * col_w;
        let x1 = x0 + col_w - gap;
        let mut lo = 0u64;
        for (source, tokens) in r.by_source.iter() {
            if tokens == 0 {
                continue;
            }
            let hi = lo + tokens;
            let colour = colour(source);
            let cached_hi = hi.min(r.cached);
            if cached_hi > lo {
                mesh.add_colored_rect(
                    Rect::from_min_max(pos2(x0, y_of(cached_hi)), pos2(x1, y_of(lo))),
                    colour,
                );
            }
            let faded_lo = lo.max(r.cached);
            if hi > faded_lo {
                mesh.add_colored_rect(
                    Rect::from_min_max(pos2(x0, y_of(hi)), pos2(x1, y_of(faded_lo))),
                    faded(colour),
                );
            }
            lo = hi;
        }
    }
    cache.mesh = Some(Arc::new(mesh));
    cache.columns = columns;
    cache.top = top;
}

/// The hover text of request `r` at `tokens_at` tokens from the bottom.
fn hover_text(r: &RequestAnatomy, tokens_at: f64) -> String {
    let mut lo = 0u64;
    let mut under = None;
    for (source, tokens) in r.by_source.iter() {
        let hi = lo + tokens;
        if tokens > 0 && tokens_at >= lo as f64 && tokens_at < hi as f64 {
            under = Some((source, tokens, lo, hi));
        }
        lo = hi;
    }
    let mut text = format!(
        "request {} · {} tokens · {} read from the cache",
        r.index,
        grouped(r.tokens),
        grouped(r.cached)
    );
    if let Some((source, tokens, lo, hi)) = under {
        let read = if hi <= r.cached {
            "read from the cache"
        } else if lo >= r.cached {
            "not read from the cache"
        } else {
            "partly read from the cache"
        };
        text.push_str(&format!(
            "\n{}: {} tokens ({:.1} %), {read}",
            source.label(),
            grouped(tokens),
            tokens as f64 * 100.0 / r.tokens.max(1) as f64
        ));
    }
    text
}

/// `12k`, `1.2M`.
pub fn short(t: u64) -> String {
    match t {
        t if t >= 1_000_000 => format!("{:.1}M", t as f64 / 1e6),
        t if t >= 10_000 => format!("{}k", t / 1000),
        t if t >= 1_000 => format!("{:.1}k", t as f64 / 1e3),
        t => t.to_string(),
    }
}

/// Draws the legend: each source with tokens somewhere in the session, its colour.
pub fn legend_ui(ui: &mut Ui, anatomy: &Anatomy) {
    let mut present = [false; 12];
    for r in &anatomy.requests {
        for (k, t) in r.by_source.0.iter().enumerate() {
            present[k] |= *t > 0;
        }
    }
    ui.horizontal_wrapped(|ui| {
        ui.spacing_mut().item_spacing.x = 6.0;
        for (k, source) in Source::ALL.iter().enumerate() {
            if !present[k] {
                continue;
            }
            swatch(ui, colour(*source));
            ui.small(source.label());
        }
        swatch(ui, faded(Color32::GRAY));
        ui.small("faded: not read from the cache");
    });
}

/// A small colour square.
pub fn swatch(ui: &mut Ui, colour: Color32) {
    let (rect, _) = ui.allocate_exact_size(vec2(10.0, 10.0), Sense::hover());
    ui.painter().rect_filled(rect, 2.0, colour);
}
