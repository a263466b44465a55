//! The timeline toolbar: text filter, type filter menu, follow/pause, counts, and the gap
//! statistics drawn as a ruler (first event, first text, the longest gap).

use egui::{Rect, RichText, Sense, Stroke, Ui, vec2};

use super::{TimelinePanelState, secs};
use crate::app::timeline::{TimelineCommand, TimelineModel};

/// Draws the toolbar.
pub fn toolbar_ui(
    ui: &mut Ui,
    model: &TimelineModel,
    state: &mut TimelinePanelState,
    commands: &mut Vec<TimelineCommand>,
) {
    // Wrapped: a narrow pane keeps the row inside it (a wider row would widen the pane's
    // contents, and the ruler under it would run past the pane's edge).
    ui.horizontal_wrapped(|ui| {
        let follow = model.follows_tail();
        if ui
            .selectable_label(follow, if follow { "Following" } else { "Paused" })
            .on_hover_text("Follow the newest event, or stay where you are")
            .clicked()
        {
            commands.push(TimelineCommand::Follow(!follow));
        }
        let label = ui.label("Filter");
        let edit = egui::TextEdit::singleline(&mut state.filter)
            .hint_text("text in the raw data")
            .desired_width(180.0);
        if ui.add(edit).labelled_by(label.id).changed() {
            commands.push(TimelineCommand::SetFilterText(state.filter.clone()));
        }
        ui.menu_button("Types", |ui| types_menu_ui(ui, model, commands));
        ui.label(format!(
            "{} of {}",
            model.visible_len(),
            crate::core::format::count(model.rows().len() as u64, "event")
        ));
        if model.dropped() > 0 {
            ui.colored_label(
                ui.visuals().warn_fg_color,
                format!("{} more not kept (limit reached)", model.dropped()),
            );
        }
        // On the controls' row while there is room: a row of its own cost the timeline an
        // event row in a short pane.
        let gaps =
            gaps_text(model).map_or_else(|| RichText::new("No events yet").weak(), RichText::new);
        crate::ui::widgets::cut_texts_ui(ui, vec![gaps]);
    });
    ruler_ui(ui, model);
}

fn types_menu_ui(ui: &mut Ui, model: &TimelineModel, commands: &mut Vec<TimelineCommand>) {
    if ui.button("Show all").clicked() {
        commands.push(TimelineCommand::ShowAllTypes);
    }
    for (kind, count) in model.type_counts() {
        let mut shown = model.type_shown(kind);
        if ui
            .checkbox(&mut shown, format!("{kind} ({count})"))
            .changed()
        {
            commands.push(TimelineCommand::SetTypeShown(kind.to_string(), shown));
        }
    }
}

/// The gap statistics as text (None before the first event).
fn gaps_text(model: &TimelineModel) -> Option<String> {
    let gaps = model.gaps();
    gaps.last_event?;
    let mut parts = Vec::new();
    if let Some(t) = gaps.first_event {
        parts.push(format!("first event {}", secs(t)));
    }
    if let Some(t) = gaps.first_text {
        parts.push(format!("first text {}", secs(t)));
    }
    if let Some((after, gap)) = gaps.longest_gap {
        let seq = model.rows().get(after).map_or(0, |r| r.entry.raw.seq);
        parts.push(format!("longest gap {} after #{seq}", secs(gap)));
    }
    Some(parts.join(" · "))
}

/// The gap statistics as a ruler over the stream's duration (nothing before the first event).
fn ruler_ui(ui: &mut Ui, model: &TimelineModel) {
    let gaps = model.gaps();
    let Some(end) = gaps.last_event else {
        return;
    };
    // Never wider than what is visible of the pane (not through a panel beside it).
    let visible = ui.clip_rect().right() - ui.cursor().left();
    let width = ui.available_width().min(visible).max(40.0);
    let (rect, _) = ui.allocate_exact_size(vec2(width, 8.0), Sense::hover());
    let painter = ui.painter_at(rect);
    let visuals = ui.visuals();
    painter.rect_filled(rect, 2.0, visuals.faint_bg_color);
    let total = end.as_secs_f64().max(1e-6);
    let x = |t: std::time::Duration| rect.left() + (t.as_secs_f64() / total) as f32 * rect.width();
    if let Some((after, gap)) = gaps.longest_gap
        && let Some(row) = model.rows().get(after)
    {
        let start = row.entry.raw.received_at;
        let span = Rect::from_x_y_ranges(
            x(start)..=x(start + gap).max(x(start) + 1.0),
            rect.y_range(),
        );
        painter.rect_filled(span, 0.0, visuals.warn_fg_color.gamma_multiply(0.5));
    }
    for (t, color) in [
        (gaps.first_event, visuals.weak_text_color()),
        (gaps.first_text, visuals.hyperlink_color),
    ] {
        if let Some(t) = t {
            painter.vline(x(t), rect.y_range(), Stroke::new(2.0, color));
        }
    }
}
