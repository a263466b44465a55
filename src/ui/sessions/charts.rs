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

/// Draws the two charts side by side.
pub fn charts_ui(ui: &mut Ui, analysis: &Analysis) {
    // A third of what is left, between a readable minimum and a comfortable maximum.
    let height = (ui.available_height() * 0.4).clamp(80.0, 170.0);
    ui.columns(2, |columns| {
        columns[0].strong("Input tokens per request");
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
        columns[1].strong("Payload growth");
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
    });
}
