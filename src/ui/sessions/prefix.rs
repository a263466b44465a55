//! The cache analysis of the open session, read from its ledger: the sentence it opens with
//! (what the input cost, what was lost and to what, the compactions), the per-request waterfall
//! (read, written and uncached tokens stacked; breaks and compactions marked; hover: the row's
//! reason; click: that request), the what-if, the hazards and the breaks with their explanations
//! and fixes — body-size text that wraps, never cut — the charts, and the selected pair's diff.

use egui::{RichText, Ui};

use super::{SessionsUi, charts, pair, send};
use crate::app::session_view::whatif::{self, KINDS};
use crate::app::session_view::{Analysis, SessionCommand, row_text};
use crate::app::{AppState, CommandSender};
use crate::core::format::grouped;
use crate::core::ledger::summary::usd;
use crate::core::ledger::{Hazard, Row};

/// Below this height the view scrolls as a whole.
const ROOMY_HEIGHT: f32 = 420.0;
/// The pair diff's height when the view scrolls.
const SMALL_PAIR_HEIGHT: f32 = 240.0;
/// Up to this many rows, the breaks list lays every row out whole and wrapped.
const WRAPPED_ROWS: usize = 100;

/// The figures line under the sentence: tokens read / written / uncached, the server's figures
/// beside the estimate, the hazards.
pub fn figures_text(analysis: &Analysis) -> String {
    let s = &analysis.ledger.summary;
    let t = &s.totals;
    let mut text = format!(
        "{} requests · {} · input {} tokens: read {}, wrote {}, uncached {}",
        grouped(s.requests as u64),
        match s.breaks {
            1 => "1 break".to_string(),
            n => format!("{n} breaks"),
        },
        grouped(t.input_tokens),
        grouped(t.read_tokens),
        grouped(t.write_tokens),
        grouped(t.uncached_tokens)
    );
    match s.reported_input_tokens {
        Some(_) => text.push_str(&format!(
            " (the server's figures where reported; estimated prompt {} tokens)",
            grouped(s.estimated_tokens)
        )),
        None => text.push_str(" (estimates: no server usage recorded)"),
    }
    if let Some(d) = t.cost_usd {
        text.push_str(&format!(
            " · paid {} · ideal {} · lost {}",
            usd(d.paid),
            usd(d.ideal),
            usd(d.lost)
        ));
    }
    text
}

/// Draws the analysis pane.
pub fn prefix_ui(ui: &mut Ui, state: &AppState, sui: &mut SessionsUi, tx: &CommandSender) {
    let browser = &state.browser;
    let Some(analysis) = &browser.analysis else {
        if browser.analyzing {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("Computing the session's cache ledger on a worker…");
            });
        } else if state.sessions.open.is_some() {
            ui.weak("No cache analysis.");
        }
        return;
    };
    let mut body = |ui: &mut Ui, pair_height: Option<f32>| {
        ui.add(egui::Label::new(RichText::new(&analysis.sentence).strong()).wrap());
        charts::waterfall_ui(ui, state, analysis, tx);
        ui.add(egui::Label::new(figures_text(analysis)).wrap());
        match &analysis.cache_models_note {
            Some(note @ crate::app::session_view::CacheModelsNote::Refused(_)) => {
                ui.colored_label(ui.visuals().error_fg_color, note.text());
            }
            Some(note) => {
                ui.label(note.text());
            }
            None => {}
        }
        whatif_ui(ui, state, analysis, tx);
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

/// A wrapped label in body size.
fn wrapped(ui: &mut Ui, text: impl Into<egui::WidgetText>) -> egui::Response {
    ui.add(egui::Label::new(text).wrap())
}

fn breaks_ui(ui: &mut Ui, state: &AppState, analysis: &Analysis, tx: &CommandSender) {
    if analysis.notes.is_empty() {
        ui.label("Every turn kept its prefix, without warnings.");
        return;
    }
    ui.strong("Breaks and warnings");
    let pick = |ui: &mut Ui, index: usize, text: &str, wrap: bool| {
        let Some(row) = analysis.row(index) else {
            return;
        };
        let from = row.previous.unwrap_or(index.saturating_sub(1));
        let chosen = state.browser.pair == Some((from, index));
        let mut label = RichText::new(text);
        if !row.is_break() {
            label = label.color(ui.visuals().warn_fg_color);
        }
        let button = egui::Button::selectable(chosen, label);
        let button = if wrap {
            button.wrap()
        } else {
            button.truncate()
        };
        let response = ui.add(button);
        let response = if wrap {
            response
        } else {
            response.on_hover_text(text)
        };
        if response.clicked() {
            send(tx, SessionCommand::Select(index));
            send(tx, SessionCommand::SelectPair(from, index));
        }
    };
    let row_height = ui.text_style_height(&egui::TextStyle::Body) + 4.0;
    let scroll = egui::ScrollArea::vertical()
        .id_salt("prefix_breaks")
        .max_height(row_height * 5.0)
        .auto_shrink([false, true]);
    if analysis.notes.len() <= WRAPPED_ROWS {
        // A few rows: each whole, wrapped.
        scroll.show(ui, |ui| {
            for (index, text) in &analysis.notes {
                pick(ui, *index, text, true);
            }
        });
    } else {
        // Many: one line each (the whole text on hover), only the rows in view laid out.
        scroll.show_rows(ui, row_height, analysis.notes.len(), |ui, range| {
            for (index, text) in &analysis.notes[range] {
                pick(ui, *index, text, false);
            }
        });
    }
    let chosen = state
        .browser
        .pair
        .and_then(|(from, to)| analysis.row(to).filter(|r| r.previous == Some(from)));
    if let Some(row) = chosen {
        explain_row(ui, analysis, row);
    }
}

/// The selected row's explanation: its figures, its hazards, each cause and note with its fix.
fn explain_row(ui: &mut Ui, analysis: &Analysis, row: &Row) {
    wrapped(ui, row_text(row));
    for hazard in analysis
        .ledger
        .hazards
        .iter()
        .filter(|h| h.request == row.index)
    {
        wrapped(
            ui,
            RichText::new(format!(
                "! {}: {} Fix: {}",
                hazard.code, hazard.message, hazard.fix
            ))
            .color(ui.visuals().warn_fg_color),
        );
    }
    let mut causes: Vec<_> = row
        .verdict
        .as_ref()
        .map(|v| v.causes.clone())
        .unwrap_or_default();
    for note in &row.notes {
        if !causes.contains(note) {
            causes.push(*note);
        }
    }
    for cause in causes {
        let mut text = format!("{}: {}", cause.as_str(), cause.explanation());
        if let Some(fix) = cause.fix() {
            text.push_str(&format!(" Fix: {fix}"));
        }
        wrapped(ui, text);
    }
    if let Some(finding) = &row.finding {
        wrapped(
            ui,
            RichText::new(format!("! the server disagrees: {finding}"))
                .color(ui.visuals().warn_fg_color),
        );
    }
    if !row.not_recorded.is_empty() {
        wrapped(
            ui,
            format!(
                "Not recorded (assumed unchanged, never blamed): {}",
                row.not_recorded.join(", ")
            ),
        );
    }
}

/// The what-if picker (kind and argument, run on a worker) and its result: the headline (its
/// "before" is the ledger's paid) and, per request, the ledger's figures against those under
/// the edit. The picker's draft lives in egui memory (it is widget state, not app state).
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
    wrapped(ui, whatif::headline(result));
    let row_height = ui.text_style_height(&egui::TextStyle::Body) + 2.0;
    egui::ScrollArea::vertical()
        .id_salt("prefix_whatif")
        .max_height(row_height * 4.0)
        .auto_shrink([false, true])
        .show_rows(ui, row_height, result.requests.len(), |ui, range| {
            for after in &result.requests[range] {
                let Some(before) = analysis.row(after.index) else {
                    continue;
                };
                let t = &after.tokens;
                ui.label(whatif::request_line(
                    after.index,
                    [
                        before.read_tokens(),
                        before.write_tokens(),
                        before.uncached_tokens(),
                    ],
                    [t.read_tokens, t.write_tokens, t.uncached_tokens],
                ));
            }
        });
}

/// A hazard's row in the "Cache hazards" list: the request it names, what happens, the fix.
pub fn hazard_text(hazard: &Hazard) -> String {
    format!(
        "request {} · {}: {} Fix: {}",
        hazard.request, hazard.code, hazard.message, hazard.fix
    )
}

/// The hazards, with their fixes, whole and wrapped; a click selects the request each names
/// (and its pair with the turn before).
fn hazards_ui(ui: &mut Ui, state: &AppState, analysis: &Analysis, tx: &CommandSender) {
    let hazards = &analysis.ledger.hazards;
    if hazards.is_empty() {
        return;
    }
    ui.strong(format!("Cache hazards ({})", hazards.len()));
    let row_height = ui.text_style_height(&egui::TextStyle::Body) + 4.0;
    egui::ScrollArea::vertical()
        .id_salt("prefix_hazards")
        .max_height(row_height * 6.0)
        .auto_shrink([false, true])
        .show(ui, |ui| {
            // Few rows (one per hazard found): laid out whole.
            for hazard in hazards {
                let chosen = state.browser.selected == Some(hazard.request);
                let label = RichText::new(hazard_text(hazard)).color(ui.visuals().warn_fg_color);
                let row = ui.add(egui::Button::selectable(chosen, label).wrap());
                if row.clicked() {
                    send(tx, SessionCommand::Select(hazard.request));
                    if let Some(from) = analysis.row(hazard.request).and_then(|r| r.previous) {
                        send(tx, SessionCommand::SelectPair(from, hazard.request));
                    }
                }
            }
        });
}
