//! The prefix view's charts (egui_plot), from series the analysis computed once: input tokens
//! per request — locally estimated cached and uncached, with the server's reported
//! `cached_tokens` as points beside the estimate — and payload growth (bytes sent vs. bytes of
//! the whole history).

use egui::Ui;
use egui_plot::{Legend, Line, Plot, PlotPoints, Points};

use crate::app::session_view::Analysis;

fn plot(id: &'static str, y: &'static str, height: f32) -> Plot<'static> {
    Plot::new(id)
        .height(height)
        .legend(Legend::default())
        .x_axis_label("request")
        .y_axis_label(y)
        .include_y(0.0)
        .allow_scroll(false)
}

/// What a chart drew, as its accessibility label: its title, then each series with its number
/// of points (`Payload growth: sent 3 points, whole history 3 points`).
pub fn chart_label(title: &str, series: &[(&str, &[[f64; 2]])]) -> String {
    let parts: Vec<String> = series
        .iter()
        .filter(|(_, points)| !points.is_empty())
        .map(|(name, points)| format!("{name} {} points", points.len()))
        .collect();
    format!("{title}: {}", parts.join(", "))
}

/// Names the plot's response for accessibility (and the UI tests) with what it drew.
fn label_plot(response: &egui::Response, label: String) {
    response.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Figure, true, &label));
}

/// Draws the two charts side by side.
pub fn charts_ui(ui: &mut Ui, analysis: &Analysis) {
    // A third of what is left, between a readable minimum and a comfortable maximum.
    let height = (ui.available_height() * 0.4).clamp(80.0, 170.0);
    ui.columns(2, |columns| {
        columns[0].strong("Input tokens per request");
        let tokens =
            plot("prefix_tokens_chart", "tokens", height).show(&mut columns[0], |plot_ui| {
                plot_ui.line(Line::new(
                    "cached (local estimate)",
                    PlotPoints::from(analysis.cached_local.clone()),
                ));
                plot_ui.line(Line::new(
                    "uncached (local estimate)",
                    PlotPoints::from(analysis.uncached_local.clone()),
                ));
                if !analysis.cached_server.is_empty() {
                    plot_ui.points(
                        Points::new(
                            "cached_tokens (server)",
                            PlotPoints::from(analysis.cached_server.clone()),
                        )
                        .radius(3.0),
                    );
                }
            });
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
        columns[1].strong("Payload growth");
        let growth =
            plot("prefix_growth_chart", "bytes", height).show(&mut columns[1], |plot_ui| {
                plot_ui.line(Line::new(
                    "sent",
                    PlotPoints::from(analysis.sent_bytes.clone()),
                ));
                plot_ui.line(Line::new(
                    "whole history",
                    PlotPoints::from(analysis.full_history_bytes.clone()),
                ));
            });
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
    });
}
