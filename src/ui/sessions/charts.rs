//! The prefix view's charts (egui_plot), from series the analysis computed once: input tokens
//! per request — locally estimated cached and uncached, with the server's reported
//! `cached_tokens` as points beside the estimate — and payload growth (bytes sent vs. bytes of
//! the whole history), and the input dollars per request under each request's cache model
//! (paid, and lost to the break before it).

use egui::{Color32, Ui};
use egui_plot::{Line, Plot, PlotPoints, PlotUi, Points};

use crate::app::session_view::Analysis;
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

/// Draws the three charts side by side.
pub fn charts_ui(ui: &mut Ui, analysis: &Analysis) {
    // A third of what is left, between a readable minimum and a comfortable maximum.
    let height = (ui.available_height() * 0.4).clamp(80.0, 170.0);
    ui.columns(3, |columns| {
        // Titles and legends first, then the plots from one height: a legend that wraps to
        // two lines does not push its plot below the others.
        columns[0].strong("Input tokens per request");
        legend(
            &mut columns[0],
            &[
                "cached (local estimate)",
                "uncached (local estimate)",
                "cached_tokens (server)",
            ],
        );
        columns[1].strong("Payload growth");
        legend(&mut columns[1], &["sent", "whole history"]);
        columns[2].strong("Input cost per request (USD)");
        legend(&mut columns[2], &["paid", "lost"]);
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
        let top = max_y(&[
            &analysis.cached_local,
            &analysis.uncached_local,
            &analysis.cached_server,
        ]);
        let tokens = plot("prefix_tokens_chart", "tokens", height, requests, top).show(
            &mut columns[0],
            |plot_ui| {
                series(
                    plot_ui,
                    "cached (local estimate)",
                    &analysis.cached_local,
                    COLOURS[0],
                );
                series(
                    plot_ui,
                    "uncached (local estimate)",
                    &analysis.uncached_local,
                    COLOURS[1],
                );
                if !analysis.cached_server.is_empty() {
                    plot_ui.points(
                        Points::new(
                            "cached_tokens (server)",
                            PlotPoints::from(analysis.cached_server.clone()),
                        )
                        .radius(3.0)
                        .color(COLOURS[2]),
                    );
                }
            },
        );
        label_plot(
            &tokens.response,
            chart_label(
                "Input tokens per request",
                &[
                    ("cached (local estimate)", &analysis.cached_local),
                    ("uncached (local estimate)", &analysis.uncached_local),
                    ("cached_tokens (server)", &analysis.cached_server),
                ],
            ),
        );
        let top = max_y(&[&analysis.sent_bytes, &analysis.full_history_bytes]);
        let growth = plot("prefix_growth_chart", "bytes", height, requests, top).show(
            &mut columns[1],
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
            &mut columns[2],
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
