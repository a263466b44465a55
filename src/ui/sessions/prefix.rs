//! The cache-prefix view of the open session: its totals and miss cost, a strip of its turns
//! with a marker on every break and every warning (hover: cause; click: that pair), the list of
//! breaks and warnings (where, causes, tokens missed; the selected one's explanation and fix), the charts, and the
//! selected pair's item-aligned diff. The strip draws only the cells in view.

use egui::{Rect, Sense, Ui, vec2};

use super::{SessionsUi, charts, grouped, pair, send};
use crate::app::session_view::whatif::{self, KINDS};
use crate::app::session_view::{Analysis, Concern, PrefixBadge, SessionCommand};
use crate::app::{AppState, CommandSender};
use crate::ui::widgets;

/// Narrowest and widest a turn gets in the strip.
const CELL_RANGE: (f32, f32) = (12.0, 48.0);
/// Below this height the view scrolls as a whole.
const ROOMY_HEIGHT: f32 = 420.0;
/// The pair diff's height when the view scrolls.
const SMALL_PAIR_HEIGHT: f32 = 240.0;
/// Height of the strip.
const STRIP_HEIGHT: f32 = 22.0;

/// The totals line.
pub fn summary_text(analysis: &Analysis) -> String {
    let s = &analysis.report.summary;
    let cost = &analysis.report.cost;
    let server = s
        .reported_cached_tokens
        .map_or_else(|| "not reported".to_string(), grouped);
    let mut text = format!(
        "{} · {} · local estimate: {} of {} input tokens reusable · server cached_tokens: {server} · missed {} cacheable tokens (${:.4})",
        widgets::count(s.requests as u64, "request"),
        widgets::count(s.breaks as u64, "break"),
        grouped(s.reusable_tokens),
        grouped(s.input_tokens),
        grouped(cost.missed_tokens),
        cost.miss_cost_usd
    );
    // Kept pairs the server did not serve from cache: not in the miss cost (the prompt kept its
    // prefix), but never hidden behind it.
    let missed: Vec<(u64, u64)> = analysis
        .badges
        .iter()
        .flat_map(|b| b.concerns())
        .filter_map(|c| match c {
            Concern::ServerMissed {
                reported,
                cacheable,
            } => Some((*reported, *cacheable)),
            Concern::Warning(_) => None,
        })
        .collect();
    if !missed.is_empty() {
        let tokens: u64 = missed.iter().map(|(r, c)| c.saturating_sub(*r)).sum();
        let pairs = missed.len();
        text.push_str(&format!(
            " · the server missed the cache after {pairs} kept turn{} ({} cacheable tokens)",
            if pairs == 1 { "" } else { "s" },
            grouped(tokens)
        ));
    }
    if !cost.unpriced_models.is_empty() {
        text.push_str(&format!("; unpriced: {}", cost.unpriced_models.join(", ")));
    }
    text
}

/// The cache-cost line: what the session's input paid, would have paid with every reusable
/// token read, and lost — under each request's own cache model — or "price unknown".
pub fn cost_text(analysis: &Analysis) -> String {
    let totals = &analysis.cache.totals;
    let mut text = match &totals.cost_usd {
        Some(d) => format!(
            "paid ${:.4} · ideal ${:.4} · lost ${:.4}",
            d.paid, d.ideal, d.lost
        ),
        None => format!("price unknown ({})", totals.unpriced_models.join(", ")),
    };
    text.push_str(&format!(
        " · predicted: read {}, wrote {}, uncached {} tokens",
        grouped(totals.read_tokens),
        grouped(totals.write_tokens),
        grouped(totals.uncached_tokens)
    ));
    if !analysis.cache.hazards.is_empty() {
        let codes: Vec<&str> = analysis.cache.hazards.iter().map(|h| h.code).collect();
        text.push_str(&format!(" · hazards: {}", codes.join(", ")));
    }
    text
}

/// What request `index` reads and costs under its model's cache rules: the simulator's reason
/// and the dollars lost to the break before it (or "price unknown").
pub fn request_cost_text(analysis: &Analysis, index: usize) -> Option<String> {
    let request = analysis.cache.requests.get(index)?;
    let p = &request.prediction;
    let money = match &request.cost_usd {
        Some(d) => format!(
            "lost ${:.4} (paid ${:.4}, ideal ${:.4})",
            d.lost, d.paid, d.ideal
        ),
        None => "price unknown".to_string(),
    };
    Some(format!(
        "request {index} under the {} cache: {} · {money}",
        p.cache_model.as_str(),
        p.reason
    ))
}

/// Draws the prefix view.
pub fn prefix_ui(ui: &mut Ui, state: &AppState, sui: &mut SessionsUi, tx: &CommandSender) {
    let browser = &state.browser;
    let Some(analysis) = &browser.analysis else {
        if browser.analyzing {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("Analysing the cache prefix on a worker…");
            });
        } else if state.sessions.open.is_some() {
            ui.weak("No prefix analysis.");
        }
        return;
    };
    let mut body = |ui: &mut Ui, pair_height: Option<f32>| {
        ui.label(summary_text(analysis));
        ui.label(cost_text(analysis));
        match &analysis.cache_models_note {
            Some(note @ crate::app::session_view::CacheModelsNote::Refused(_)) => {
                ui.colored_label(ui.visuals().error_fg_color, note.text());
            }
            Some(note) => {
                ui.label(egui::RichText::new(note.text()).small());
            }
            None => {}
        }
        whatif_ui(ui, state, analysis, tx);
        strip_ui(ui, state, analysis, tx);
        hazards_ui(ui, state, analysis, tx);
        breaks_ui(ui, state, analysis, tx);
        charts::charts_ui(ui, analysis);
        ui.separator();
        pair::pair_ui(ui, state, sui, pair_height);
    };
    if ui.available_height() >= ROOMY_HEIGHT {
        body(ui, None);
    } else {
        // A small window (or a tall timeline): everything scrolls, the pair diff keeps a height.
        egui::ScrollArea::vertical()
            .id_salt("prefix_view_scroll")
            .auto_shrink(false)
            .show(ui, |ui| body(ui, Some(SMALL_PAIR_HEIGHT)));
    }
}

fn strip_ui(ui: &mut Ui, state: &AppState, analysis: &Analysis, tx: &CommandSender) {
    let n = analysis.badges.len();
    let selected = state.browser.selected;
    let cell_width = (ui.available_width() / n.max(1) as f32).clamp(CELL_RANGE.0, CELL_RANGE.1);
    egui::ScrollArea::horizontal()
        .id_salt("prefix_strip")
        .show_viewport(ui, |ui, viewport| {
            let (rect, response) =
                ui.allocate_exact_size(vec2(cell_width * n as f32, STRIP_HEIGHT), Sense::click());
            let first = (viewport.min.x / cell_width).floor().max(0.0) as usize;
            let last = ((viewport.max.x / cell_width).ceil() as usize + 1).min(n);
            let visuals = ui.visuals().clone();
            let painter = ui.painter_at(rect);
            for (i, badge) in analysis.badges.iter().enumerate().take(last).skip(first) {
                let x = rect.min.x + i as f32 * cell_width;
                let cell = Rect::from_min_size(
                    egui::pos2(x + 1.0, rect.min.y + 4.0),
                    vec2(cell_width - 2.0, STRIP_HEIGHT - 8.0),
                );
                let fill = match badge {
                    PrefixBadge::First | PrefixBadge::Warmup | PrefixBadge::Undetermined => {
                        visuals.widgets.inactive.bg_fill
                    }
                    // Kept with a warning is never drawn as kept.
                    PrefixBadge::Kept(concerns) if !concerns.is_empty() => visuals.warn_fg_color,
                    PrefixBadge::Kept(_) => widgets::added_background(ui),
                    PrefixBadge::Broken(..) => visuals.error_fg_color,
                };
                painter.rect_filled(cell, 2.0, fill);
                let marker = match badge {
                    // The break marker: a full-height bar at the turn's left edge.
                    PrefixBadge::Broken(..) => Some(visuals.error_fg_color),
                    _ if !badge.concerns().is_empty() => Some(visuals.warn_fg_color),
                    _ => None,
                };
                if let Some(color) = marker {
                    let bar =
                        Rect::from_min_size(egui::pos2(x, rect.min.y), vec2(2.0, STRIP_HEIGHT));
                    painter.rect_filled(bar, 0.0, color);
                }
                if badge.is_warned_kept() && cell.width() >= 10.0 {
                    painter.text(
                        cell.center(),
                        egui::Align2::CENTER_CENTER,
                        "!",
                        egui::FontId::proportional(10.0),
                        visuals.extreme_bg_color,
                    );
                }
                if selected == Some(i) {
                    painter.rect_stroke(
                        cell.expand(1.0),
                        2.0,
                        visuals.selection.stroke,
                        egui::StrokeKind::Outside,
                    );
                }
            }
            let index_at = |x: f32| ((x - rect.min.x) / cell_width).floor().max(0.0) as usize;
            if let Some(pos) = response.hover_pos() {
                let i = index_at(pos.x).min(n.saturating_sub(1));
                if let Some(badge) = analysis.badges.get(i) {
                    response
                        .clone()
                        .on_hover_text(format!("turn {i}: {}", badge.label()));
                }
            }
            if response.clicked()
                && let Some(pos) = response.interact_pointer_pos()
            {
                let i = index_at(pos.x).min(n.saturating_sub(1));
                send(tx, SessionCommand::Select(i));
                if i > 0 {
                    send(tx, SessionCommand::SelectPair(i - 1, i));
                }
            }
        });
}

fn breaks_ui(ui: &mut Ui, state: &AppState, analysis: &Analysis, tx: &CommandSender) {
    if analysis.notes.is_empty() {
        ui.label("The prefix was kept across every turn, without warnings.");
        return;
    }
    ui.strong("Breaks and warnings");
    let row_height = ui.text_style_height(&egui::TextStyle::Body) + 4.0;
    egui::ScrollArea::vertical()
        .id_salt("prefix_breaks")
        .max_height(row_height * 4.0)
        .auto_shrink([false, true])
        .show_rows(ui, row_height, analysis.notes.len(), |ui, range| {
            for (pair_index, text) in &analysis.notes[range] {
                let Some(pair) = analysis.report.pairs.get(*pair_index) else {
                    continue;
                };
                let chosen = state.browser.pair == Some((pair.from, pair.to));
                let mut label = egui::RichText::new(text);
                if pair.prefix_kept {
                    label = label.color(ui.visuals().warn_fg_color);
                }
                if ui.selectable_label(chosen, label).clicked() {
                    send(tx, SessionCommand::Select(pair.to));
                    send(tx, SessionCommand::SelectPair(pair.from, pair.to));
                }
            }
        });
    let chosen = state.browser.pair.and_then(|(from, to)| {
        analysis
            .report
            .pairs
            .iter()
            .find(|p| p.from == from && p.to == to)
    });
    if let Some(pair) = chosen {
        if let Some(text) = request_cost_text(analysis, pair.to) {
            ui.label(egui::RichText::new(text).small());
        }
        for hazard in analysis
            .cache
            .hazards
            .iter()
            .filter(|h| h.request == pair.to)
        {
            ui.label(
                egui::RichText::new(format!(
                    "! {}: {} Fix: {}",
                    hazard.code, hazard.message, hazard.fix
                ))
                .small()
                .color(ui.visuals().warn_fg_color),
            );
        }
        for cause in &pair.causes {
            let mut text = format!("{}: {}", cause.as_str(), cause.explanation());
            if let Some(fix) = cause.fix() {
                text.push_str(&format!(" Fix: {fix}"));
            }
            ui.label(egui::RichText::new(text).small());
        }
        let concerns = analysis
            .badges
            .get(pair.to)
            .map_or(&[][..], PrefixBadge::concerns);
        for concern in concerns {
            let mut text = format!("! {}: {}", concern.name(), concern.explanation());
            if let Some(fix) = concern.fix() {
                text.push_str(&format!(" Fix: {fix}"));
            }
            ui.label(
                egui::RichText::new(text)
                    .small()
                    .color(ui.visuals().warn_fg_color),
            );
        }
    }
}

/// The what-if picker (kind and argument, run on a worker) and its result: the headline and,
/// per request, predicted under the edit against the baseline. The picker's draft lives in egui
/// memory (it is widget state, not app state).
fn whatif_ui(ui: &mut Ui, state: &AppState, analysis: &Analysis, tx: &CommandSender) {
    let id = egui::Id::unique("prefix_whatif_draft");
    let (mut kind, mut arg) =
        ui.data_mut(|d| d.get_temp::<(usize, String)>(id).unwrap_or_default());
    let w = &state.browser.whatif;
    ui.horizontal_wrapped(|ui| {
        ui.label("What if:");
        for (i, (_, label, _)) in KINDS.iter().enumerate() {
            if ui.selectable_label(kind == i, *label).clicked() {
                kind = i;
            }
        }
        let (name, _, hint) = KINDS[kind.min(KINDS.len() - 1)];
        let label = ui.label("argument");
        ui.add(
            egui::TextEdit::singleline(&mut arg)
                .hint_text(hint)
                .char_limit(20)
                .desired_width(80.0),
        )
        .labelled_by(label.id);
        if ui.button("Run what-if").clicked() {
            send(tx, SessionCommand::WhatIf(format!("{name}:{}", arg.trim())));
        }
        if w.job.is_some() && w.result.is_none() && w.error.is_none() {
            ui.spinner();
        }
    });
    ui.data_mut(|d| d.insert_temp(id, (kind, arg)));
    if let Some(error) = &w.error {
        ui.colored_label(ui.visuals().error_fg_color, error);
    }
    let Some(result) = &w.result else {
        return;
    };
    ui.label(whatif::headline(result));
    let tokens =
        |t: &crate::core::cache::Tokens| [t.read_tokens, t.write_tokens, t.uncached_tokens];
    let row_height = ui.text_style_height(&egui::TextStyle::Small) + 2.0;
    egui::ScrollArea::vertical()
        .id_salt("prefix_whatif")
        .max_height(row_height * 4.0)
        .auto_shrink([false, true])
        .show_rows(ui, row_height, result.requests.len(), |ui, range| {
            for after in &result.requests[range] {
                let i = after.prediction.index;
                let Some(before) = analysis.cache.requests.get(i) else {
                    continue;
                };
                ui.label(
                    egui::RichText::new(whatif::request_line(
                        i,
                        tokens(&before.prediction.predicted),
                        tokens(&after.prediction.predicted),
                    ))
                    .small(),
                );
            }
        });
}

/// A hazard's row in the "Cache hazards" list: the request it names, what happens, the fix.
pub fn hazard_text(hazard: &crate::core::cache::Hazard) -> String {
    format!(
        "request {} · {}: {} Fix: {}",
        hazard.request, hazard.code, hazard.message, hazard.fix
    )
}

/// The hazards the simulator found, with their fixes; a click selects the request each names
/// (and its pair with the one before).
fn hazards_ui(ui: &mut Ui, state: &AppState, analysis: &Analysis, tx: &CommandSender) {
    let hazards = &analysis.cache.hazards;
    if hazards.is_empty() {
        return;
    }
    ui.strong(format!("Cache hazards ({})", hazards.len()));
    let row_height = ui.text_style_height(&egui::TextStyle::Body) + 4.0;
    egui::ScrollArea::vertical()
        .id_salt("prefix_hazards")
        .max_height(row_height * 8.0)
        .auto_shrink([false, true])
        .show(ui, |ui| {
            // Few rows (one per hazard found): laid out whole.
            for hazard in hazards {
                let chosen = state.browser.selected == Some(hazard.request);
                let label =
                    egui::RichText::new(hazard_text(hazard)).color(ui.visuals().warn_fg_color);
                // One line a hazard (the whole text on hover), so that the list stays short.
                let row = ui
                    .add(egui::Button::selectable(chosen, label).truncate())
                    .on_hover_text(hazard_text(hazard));
                if row.clicked() {
                    send(tx, SessionCommand::Select(hazard.request));
                    if hazard.request > 0 {
                        send(
                            tx,
                            SessionCommand::SelectPair(hazard.request - 1, hazard.request),
                        );
                    }
                }
            }
        });
}
