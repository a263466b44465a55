//! The inspector's Prefix tab: the selected request against the previous one — its prefix badge,
//! the break (where the cached prefix stopped and why) — and the pair diff, drawn by the
//! Sessions view's pair widget (`super::super::pair`). The tab scrolls as a whole: a long
//! break text leaves the diff at least [`super::request::BODY_MIN_HEIGHT`] (or most of a short
//! pane), as the Request tab does for the body.

use egui::Ui;

use super::super::{SessionsUi, pair, send};
use crate::app::session_view::{SessionCommand, break_text, row_text};
use crate::app::{AppState, CommandSender};

/// Draws the tab for request `index`.
pub fn prefix_ui(
    ui: &mut Ui,
    state: &AppState,
    sui: &mut SessionsUi,
    index: usize,
    tx: &CommandSender,
) {
    let tab_height = ui.available_height();
    egui::ScrollArea::vertical()
        .id_salt("inspector_prefix")
        .auto_shrink(false)
        .show(ui, |ui| tab_ui(ui, state, sui, index, tx, tab_height));
}

fn tab_ui(
    ui: &mut Ui,
    state: &AppState,
    sui: &mut SessionsUi,
    index: usize,
    tx: &CommandSender,
    tab_height: f32,
) {
    let browser = &state.browser;
    let Some(analysis) = &browser.analysis else {
        if browser.analyzing {
            ui.spinner();
        }
        ui.weak("The prefix analysis is not ready.");
        return;
    };
    let Some(row) = analysis.row(index) else {
        ui.weak("This request is not in the session's ledger.");
        return;
    };
    let Some(previous) = row.previous else {
        ui.weak("The first request of its conversation: there is no earlier turn to compare with.");
        ui.add(egui::Label::new(row_text(row)).wrap());
        return;
    };
    if let Some(badge) = analysis.badges.get(index) {
        ui.label(format!("Against request {previous}: {}", badge.label()));
    }
    ui.add(egui::Label::new(break_text(row)).wrap());
    ui.add(egui::Label::new(row_text(row)).wrap());
    let pair = (previous, index);
    if browser.pair != Some(pair) {
        if ui
            .button("Show the diff with the previous request")
            .clicked()
        {
            send(tx, SessionCommand::SelectPair(pair.0, pair.1));
        }
        return;
    }
    ui.push_id("inspector_pair", |ui| {
        let least = super::request::BODY_MIN_HEIGHT.min(tab_height * 0.8);
        // Less the pair's title row above its diff.
        let title = ui.spacing().interact_size.y;
        let height = (ui.available_height() - title).max(least).max(1.0);
        pair::pair_ui(ui, state, sui, Some(height));
    });
}
