//! The analysis pane's charts (egui_plot), from series the ledger's rows gave once: the
//! waterfall — per request, tokens read, written and uncached stacked (the server's figures
//! where reported), breaks and compactions marked, hover for the row, click to select it — then
//! payload growth (bytes sent vs. bytes of the whole history) and the input dollars per request
//! (paid, and lost).

use egui::{Color32, Ui};
use egui_plot::{Bar, BarChart, Line, Plot, PlotPoints, PlotUi, Points, VLine};

use super::send;
use crate::app::session_view::{Analysis, SessionCommand};
use crate::app::{AppState, CommandSender};
use crate::ui::widgets::count;

/// The highest y of `series`.
fn max_y(series: &[&[[f64; 2]]]) -> f64 {
    series
        .iter()
        .flat_map(|points| points.iter().map(|p| p[1]))
        .fold(0.0, f64::max)
}

/// The colours of a chart's series, in order (its legend uses the same).
const COLOURS: [Color32; 3] = [
    Color32::from_rgb(0x4c, 0x9a, 0xff),
    Color32::from_rgb(0xf0, 0x8c, 0x2e),
    Color32::from_rgb(0x3c, 0xb3, 0x71),
];

/// The legend of a chart, a row above its plot (outside it, so it never covers the data):
/// each series' colour and name.
fn legend(ui: &mut Ui, names: &[&str]) {
    ui.horizontal_wrapped(|ui| {
        for (name, colour) in names.iter().zip(COLOURS) {
            let (rect, _) = ui.allocate_exact_size(egui::vec2(14.0, 10.0), egui::Sense::hover());
            ui.painter().hline(
                rect.x_range(),
                rect.center().y,
                egui::Stroke::new(2.5, colour),
            );
            ui.small(*name);
        }
    });
}

/// A chart over `requests` requests: x from the first to the last, half a step of margin, a
/// little headroom above the highest value `top`; its legend is drawn above it ([`legend`]).
fn plot(
    id: &'static str,
    y: &'static str,
    height: f32,
    requests: usize,
    top: f64,
) -> Plot<'static> {
    Plot::new(id)
        // A plain id (not the parent's): its memory (the transform) is found by the UI tests.
        .id(egui::Id::unique(id))
        .height(height)
        .include_y(top * 1.1)
        .x_axis_label("request")
        .y_axis_label(y)
        .include_y(0.0)
        .include_x(-0.5)
        .include_x(requests.max(1) as f64 - 0.5)
        .allow_scroll(false)
}

/// A series as a line, or as a point when it has only one (a line of one point draws nothing).
fn series(plot_ui: &mut PlotUi<'_>, name: &str, points: &[[f64; 2]], colour: Color32) {
    if points.len() == 1 {
        plot_ui.points(
            Points::new(name, PlotPoints::from(points.to_vec()))
                .radius(3.0)
                .color(colour),
        );
    } else {
        plot_ui.line(Line::new(name, PlotPoints::from(points.to_vec())).color(colour));
    }
}

/// What a chart drew, as its accessibility label: its title, then each series with its number
/// of points (`Payload growth: sent 3 points, whole history 3 points`; `sent 1 point`).
pub fn chart_label(title: &str, series: &[(&str, &[[f64; 2]])]) -> String {
    let parts: Vec<String> = series
        .iter()
        .filter(|(_, points)| !points.is_empty())
        .map(|(name, points)| format!("{name} {}", count(points.len() as u64, "point")))
        .collect();
    format!("{title}: {}", parts.join(", "))
}

/// Names the plot's response for accessibility (and the UI tests) with what it drew.
fn label_plot(response: &egui::Response, label: String) {
    response.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Figure, true, &label));
}

/// The waterfall's colours: read, written, uncached; break and compaction marks.
const READ: Color32 = Color32::from_rgb(0x3c, 0xb3, 0x71);
const WRITTEN: Color32 = Color32::from_rgb(0xf0, 0x8c, 0x2e);
const UNCACHED: Color32 = Color32::from_rgb(0x4c, 0x9a, 0xff);
const BREAK: Color32 = Color32::from_rgb(0xe0, 0x40, 0x40);
const COMPACTION: Color32 = Color32::from_rgb(0xa0, 0x60, 0xd0);

/// The waterfall's height: what a small pane leaves under the sentence (the sentence and the
/// waterfall are the first thing the pane shows), never more than a comfortable chart.
fn waterfall_height(ui: &Ui) -> f32 {
    (ui.available_height() - 4.0).clamp(84.0, 200.0)
}

/// The per-request waterfall: read, written and uncached tokens stacked, a red mark at each
/// costly break and a purple one at each compaction; hovering a request names its row, a click
/// selects it.
pub fn waterfall_ui(ui: &mut Ui, state: &AppState, analysis: &Analysis, tx: &CommandSender) {
    let w = &analysis.waterfall;
    // One line of legend (the plot's own label names what it draws): the sentence and the
    // waterfall fit a small pane.
    ui.horizontal_wrapped(|ui| {
        ui.spacing_mut().item_spacing.x = 4.0;
        for (name, colour) in [
            ("read from the cache", READ),
            ("written to it", WRITTEN),
            ("not cached", UNCACHED),
            ("break", BREAK),
            ("compaction", COMPACTION),
        ] {
            let (rect, _) = ui.allocate_exact_size(egui::vec2(9.0, 9.0), egui::Sense::hover());
            ui.painter().rect_filled(rect, 1.0, colour);
            ui.small(name);
        }
    });
    let requests = w.read.len();
    let bars = |series: &[[f64; 2]], colour: Color32| -> Vec<Bar> {
        series
            .iter()
            .map(|[x, y]| Bar::new(*x, *y).width(0.8).fill(colour))
            .collect()
    };
    let read = BarChart::new("read", bars(&w.read, READ)).color(READ);
    let written = BarChart::new("written", bars(&w.written, WRITTEN))
        .color(WRITTEN)
        .stack_on(&[&read]);
    let uncached = BarChart::new("uncached", bars(&w.uncached, UNCACHED))
        .color(UNCACHED)
        .stack_on(&[&read, &written]);
    let selected = state.browser.selected;
    let shown = plot(
        "prefix_waterfall",
        "tokens",
        waterfall_height(ui),
        requests,
        w.top,
    )
    .show_x(false)
    .show_y(false)
    .show(ui, |plot_ui| {
        plot_ui.bar_chart(read);
        plot_ui.bar_chart(written);
        plot_ui.bar_chart(uncached);
        for x in &w.breaks {
            plot_ui.vline(VLine::new("break", *x - 0.5).color(BREAK).width(1.5));
        }
        for x in &w.compactions {
            plot_ui.vline(
                VLine::new("compaction", *x - 0.5)
                    .color(COMPACTION)
                    .width(1.5),
            );
        }
        if let Some(i) = selected {
            plot_ui.vline(
                VLine::new("selected", i as f64)
                    .color(plot_ui.ctx().global_style().visuals.selection.stroke.color)
                    .width(0.5),
            );
        }
        plot_ui.pointer_coordinate()
    });
    let index = shown
        .inner
        .map(|p| p.x.round())
        .filter(|x| *x >= 0.0 && (*x as usize) < requests)
        .map(|x| x as usize);
    let response = shown.response;
    label_plot(
        &response,
        format!(
            "Input tokens per request: {}, {} breaks, {} compactions",
            count(requests as u64, "request"),
            w.breaks.len(),
            w.compactions.len()
        ),
    );
    if let Some(i) = index {
        if let Some(row) = analysis.row(i) {
            let badge = analysis
                .badges
                .get(i)
                .map(|b| b.label())
                .unwrap_or_default();
            let text = format!("{badge}\n{}", crate::app::session_view::row_text(row));
            response.clone().on_hover_ui_at_pointer(|ui| {
                ui.set_max_width(420.0);
                ui.add(egui::Label::new(text).wrap());
            });
        }
        if response.clicked() {
            send(tx, SessionCommand::Select(i));
            if let Some(from) = analysis.row(i).and_then(|r| r.previous) {
                send(tx, SessionCommand::SelectPair(from, i));
            }
        }
    }
}

/// Draws the payload and cost charts side by side.
pub fn charts_ui(ui: &mut Ui, analysis: &Analysis) {
    let height = (ui.available_height() * 0.4).clamp(80.0, 170.0);
    ui.columns(2, |columns| {
        // Titles and legends first, then the plots from one height: a legend that wraps to
        // two lines does not push its plot below the other.
        columns[0].strong("Payload growth");
        legend(&mut columns[0], &["sent", "whole history"]);
        columns[1].strong("Input cost per request (USD)");
        legend(&mut columns[1], &["paid", "lost"]);
        let top = columns
            .iter()
            .map(|c| c.cursor().top())
            .fold(f32::MIN, f32::max);
        for column in columns.iter_mut() {
            let gap = top - column.cursor().top();
            if gap > 0.0 {
                column.add_space(gap);
            }
        }
        let requests = analysis.sent_bytes.len();
        let top = max_y(&[&analysis.sent_bytes, &analysis.full_history_bytes]);
        let growth = plot("prefix_growth_chart", "bytes", height, requests, top).show(
            &mut columns[0],
            |plot_ui| {
                series(plot_ui, "sent", &analysis.sent_bytes, COLOURS[0]);
                series(
                    plot_ui,
                    "whole history",
                    &analysis.full_history_bytes,
                    COLOURS[1],
                );
            },
        );
        label_plot(
            &growth.response,
            chart_label(
                "Payload growth",
                &[
                    ("sent", &analysis.sent_bytes),
                    ("whole history", &analysis.full_history_bytes),
                ],
            ),
        );
        let top = max_y(&[&analysis.cost_paid, &analysis.cost_lost]);
        let cost = plot("prefix_cost_chart", "US dollars", height, requests, top).show(
            &mut columns[1],
            |plot_ui| {
                series(plot_ui, "paid", &analysis.cost_paid, COLOURS[0]);
                series(plot_ui, "lost", &analysis.cost_lost, COLOURS[1]);
            },
        );
        let label = if analysis.cost_paid.is_empty() {
            "Input cost per request: price unknown".to_string()
        } else {
            chart_label(
                "Input cost per request",
                &[("paid", &analysis.cost_paid), ("lost", &analysis.cost_lost)],
            )
        };
        label_plot(&cost.response, label);
    });
}
