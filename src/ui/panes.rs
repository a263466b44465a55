//! Panes that give way: every side and bottom panel of the window is drawn through [`pane`] —
//! resizable with a minimum, collapsible to its header (a click on the header, or Alt+N), and
//! maximisable to the window (the header's Maximise, or Alt+Shift+N) and back. Sizes, collapsed
//! panes and the maximised one live in the settings ([`PaneLayout`], persisted); this file only
//! draws them and sends [`PaneCommand`]s. It also remembers where each pane was drawn last
//! frame ([`PanesUi::rects`], read by the layout tests).

use std::collections::BTreeMap;

use egui::{Rect, RichText, Ui};

use crate::app::panes::{PaneCommand, PaneId, PaneLayout};
use crate::app::{AppCommand, CommandSender};

/// Width of a collapsed side pane (its "show" button).
const COLLAPSED_WIDTH: f32 = 28.0;

/// Which edge a pane is attached to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Left edge.
    Left,
    /// Right edge.
    Right,
    /// Top edge.
    Top,
    /// Bottom edge.
    Bottom,
}

impl Side {
    fn horizontal(self) -> bool {
        matches!(self, Self::Left | Self::Right)
    }
}

/// How a pane is shown: its edge, first size and the range the user can resize it in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PaneSpec {
    /// Which pane.
    pub id: PaneId,
    /// Its edge.
    pub side: Side,
    /// Its size before the user resized it.
    pub default: f32,
    /// Smallest size.
    pub min: f32,
    /// Largest size.
    pub max: f32,
}

/// The panes' widget state: where each was drawn last frame.
#[derive(Debug, Default)]
pub struct PanesUi {
    /// The outer rectangle of each pane drawn last frame (collapsed ones: their header).
    pub rects: BTreeMap<PaneId, Rect>,
}

fn panel(side: Side, salt: impl egui::AsIdSalt) -> egui::Panel {
    let id = ("pane", salt);
    match side {
        Side::Left => egui::Panel::left(id),
        Side::Right => egui::Panel::right(id),
        Side::Top => egui::Panel::top(id),
        Side::Bottom => egui::Panel::bottom(id),
    }
}

fn send(tx: &CommandSender, command: PaneCommand) {
    tx.send(AppCommand::Pane(command));
}

/// The key number of `id` in `order` (Alt+N), for hover texts.
fn key_hint(id: PaneId, order: &[PaneId]) -> String {
    order
        .iter()
        .position(|p| *p == id)
        .map_or_else(String::new, |i| format!(" (Alt+{})", i + 1))
}

/// A pane's header: its title (a click collapses or restores it) and Maximise / Restore.
pub fn header(ui: &mut Ui, layout: &PaneLayout, id: PaneId, order: &[PaneId], tx: &CommandSender) {
    header_with(ui, layout, id, order, tx, |_| {});
}

/// [`header`] with `extra` drawn after the title, on the same row (a pane's tabs).
pub fn header_with(
    ui: &mut Ui,
    layout: &PaneLayout,
    id: PaneId,
    order: &[PaneId],
    tx: &CommandSender,
    extra: impl FnOnce(&mut Ui),
) {
    let keys = key_hint(id, order);
    ui.horizontal(|ui| {
        if id.is_central() {
            ui.strong(id.title());
        } else {
            let collapsed = layout.is_collapsed(id);
            let (mark, verb) = if collapsed {
                ("+", "Show")
            } else {
                ("−", "Collapse")
            };
            let text = RichText::new(format!("{mark} {}", id.title())).strong();
            if ui
                .add(egui::Button::new(text).frame(false))
                .on_hover_text(format!("{verb} this pane{keys}"))
                .clicked()
            {
                send(tx, PaneCommand::ToggleCollapsed(id));
            }
        }
        extra(ui);
        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
            let maximised = layout.maximised == Some(id);
            let (text, tip) = if maximised {
                ("Restore", "Give the other panes their room back")
            } else {
                ("Maximise", "Fill the window with this pane")
            };
            let response = ui.small_button(text);
            let label = format!("{text} {}", id.title());
            response.widget_info(|| {
                egui::WidgetInfo::labeled(egui::accesskit::Role::Button, true, label.clone())
            });
            let shift_keys = keys.replace("Alt+", "Alt+Shift+");
            if response
                .on_hover_text(format!("{tip}{shift_keys}"))
                .clicked()
            {
                send(tx, PaneCommand::ToggleMaximised(id));
            }
        });
    });
}

/// Draws pane `spec` at its edge: its header and `add` (resizable, size remembered), or its
/// header alone when collapsed. Draws nothing when another pane is maximised (the caller shows
/// that one with [`maximised`]).
pub fn pane(
    ui: &mut Ui,
    layout: &PaneLayout,
    spec: PaneSpec,
    order: &[PaneId],
    panes: &mut PanesUi,
    tx: &CommandSender,
    add: impl FnOnce(&mut Ui),
) {
    let id = spec.id;
    if layout.maximised.is_some() {
        return;
    }
    if layout.is_collapsed(id) {
        let mut collapsed = panel(spec.side, (id, "collapsed")).resizable(false);
        if spec.side.horizontal() {
            collapsed = collapsed.exact_size(COLLAPSED_WIDTH);
        }
        let response = collapsed.show(ui, |ui| {
            if spec.side.horizontal() {
                let response = ui.button("+").on_hover_text(format!(
                    "Show {}{}",
                    id.title(),
                    key_hint(id, order)
                ));
                let label = format!("Show {}", id.title());
                response.widget_info(|| {
                    egui::WidgetInfo::labeled(egui::accesskit::Role::Button, true, label.clone())
                });
                if response.clicked() {
                    send(tx, PaneCommand::ToggleCollapsed(id));
                }
            } else {
                header(ui, layout, id, order, tx);
            }
        });
        panes.rects.insert(id, response.response.rect);
        return;
    }
    let max = spec.max.max(spec.min);
    let target = layout.size(id).unwrap_or(spec.default).clamp(spec.min, max);
    // Exactly its size (contents never push it open, and it does not shrink to them), except
    // while the user drags an edge: then within its range, and the size let go at is kept.
    // The frame the edge is let go of counts as dragging (egui ends the drag at its start): the
    // pane drawn there at its old size sent that, and every resize snapped back.
    let dragging = ui.ctx().dragged_id().is_some() || ui.ctx().drag_stopped_id().is_some();
    let mut shown = panel(spec.side, id).resizable(true);
    shown = if dragging {
        shown.default_size(target).size_range(spec.min..=max)
    } else {
        shown.exact_size(target)
    };
    let response = shown.show(ui, |ui| {
        // The contents get exactly the pane's room, clipped there: what does not fit never
        // pushes the pane past its size (egui would then misplace the panels after it).
        let room = ui.available_rect_before_wrap();
        let mut inside = ui.new_child(egui::UiBuilder::new().max_rect(room).layout(*ui.layout()));
        inside.shrink_clip_rect(room);
        // Every pane's header is a row of its own above its contents (a side pane's controls
        // drawn over its contents covered the sidebar's "Sessions" heading at 1024×700).
        header(&mut inside, layout, id, order, tx);
        add(&mut inside);
        ui.advance_cursor_after_rect(room);
    });
    let rect = response.response.rect;
    panes.rects.insert(id, rect);
    let size = if spec.side.horizontal() {
        rect.width()
    } else {
        rect.height()
    };
    // Remembered when the user lets go of this pane's edge: a drag ended and the pane is not
    // the size it was told to be. Any other click or drag leaves an unset size unset, so the
    // default keeps following the window (a release anywhere used to fix every pane's
    // window-derived default for good).
    let released = ui.input(|i| i.pointer.any_released());
    if released && dragging && (size - target).abs() > 1.0 {
        send(tx, PaneCommand::Resized(id, size));
    }
}

/// Draws the maximised pane `id` in the rest of the window: its header and `add`.
pub fn maximised(
    ui: &mut Ui,
    layout: &PaneLayout,
    id: PaneId,
    order: &[PaneId],
    panes: &mut PanesUi,
    tx: &CommandSender,
    add: impl FnOnce(&mut Ui),
) {
    let response = egui::CentralPanel::default().show(ui, |ui| {
        header(ui, layout, id, order, tx);
        add(ui);
    });
    panes.rects.insert(id, response.response.rect);
}

/// Alt+N collapses or restores pane N of `order`, Alt+Shift+N maximises it (or restores).
pub fn keys(ctx: &egui::Context, order: &[PaneId], tx: &CommandSender) {
    const DIGITS: [egui::Key; 9] = [
        egui::Key::Num1,
        egui::Key::Num2,
        egui::Key::Num3,
        egui::Key::Num4,
        egui::Key::Num5,
        egui::Key::Num6,
        egui::Key::Num7,
        egui::Key::Num8,
        egui::Key::Num9,
    ];
    for (id, key) in order.iter().zip(DIGITS) {
        let maximise =
            egui::KeyboardShortcut::new(egui::Modifiers::ALT | egui::Modifiers::SHIFT, key);
        let collapse = egui::KeyboardShortcut::new(egui::Modifiers::ALT, key);
        if ctx.input_mut(|i| i.consume_shortcut(&maximise)) {
            send(tx, PaneCommand::ToggleMaximised(*id));
        } else if ctx.input_mut(|i| i.consume_shortcut(&collapse)) {
            send(tx, PaneCommand::ToggleCollapsed(*id));
        }
    }
}
