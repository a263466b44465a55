//! The request inspector: the right-hand pane of the Sessions view (drawn through
//! `ui/panes.rs` like every pane: resizable, collapsible, maximisable, its width remembered)
//! showing the selected request (read on a worker, `app::session_view::inspect`) in four tabs —
//! Request (headers with credentials redacted, body as tree / text / raw bytes, size and
//! tokens), Response (status, headers, outcome, usage with cached and cache-write tokens, cost
//! in dollars), Events (the recorded timeline, with Replay) and Prefix (this request against the
//! previous one: the break and the pair diff). Also the row actions ([`row_menu`], the
//! right-click menu of a table row, and [`row_keys`] on the selected row) and the hand-over of
//! copied text to the clipboard.

mod events;
mod prefix;
mod request;
mod response;

pub use events::event_line;
pub use request::{Shown, raw_line, request_ui};
pub use response::response_ui;

use egui::{Key, Ui};

use super::{SessionsUi, send};
use crate::app::panes::{PaneId, PaneLayout};
use crate::app::session_view::inspect::CopyKind;
use crate::app::session_view::{CompareSide, ReplaySpeed, SessionCommand};
use crate::app::settings::ExportKind;
use crate::app::{AppState, CommandSender};
use crate::ui::panes::{self, PaneSpec, PanesUi, Side};

/// The inspector's tabs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InspectorTab {
    /// Headers and body.
    #[default]
    Request,
    /// Status, headers, outcome, usage.
    Response,
    /// The recorded events.
    Events,
    /// Against the previous request.
    Prefix,
}

/// How the body is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BodyView {
    /// Collapsible JSON tree.
    Tree,
    /// Pretty-printed text (only the lines in view are laid out).
    #[default]
    Text,
    /// Hex and ASCII of the exact bytes.
    Raw,
}

/// The inspector's widget state.
#[derive(Debug, Default)]
pub struct InspectorUi {
    /// The tab shown.
    pub tab: InspectorTab,
    /// The body view.
    pub body: BodyView,
    /// The clipboard generation last handed to egui.
    pub copied: Option<u64>,
    /// Where the inspector panel was drawn last frame (read by the layout tests).
    pub rect: Option<egui::Rect>,
    /// The request whose read the inspector drew last frame (the bench's "drawn").
    pub drawn: Option<i64>,
    /// A part to show in the body (the Anatomy tab's click): once the request is read, the
    /// Request tab's text view scrolls to its line.
    pub reveal: Option<super::Reveal>,
    /// The body line shown for a reveal: (request id, line), highlighted; or why it cannot be.
    pub revealed: Option<(i64, Result<usize, String>)>,
    /// Scroll the text view to this line next frame.
    pub scroll_to_line: Option<usize>,
}

/// Hands text a row action copied to the clipboard (once per copy).
fn clipboard(ui: &Ui, state: &AppState, iui: &mut InspectorUi) {
    if let Some((generation, text)) = &state.browser.inspect.clipboard
        && iui.copied != Some(*generation)
    {
        iui.copied = Some(*generation);
        ui.ctx().copy_text(text.clone());
    }
}

/// Narrowest the inspector pane gets: room for its four tabs in a row (at 260 "Prefix" was
/// cut off at 1024×700).
pub const INSPECTOR_MIN_WIDTH: f32 = 290.0;

/// What the inspector does every frame, drawn or not (collapsed, another pane maximised): hands
/// a finished copy to the clipboard and runs the selected row's keys.
pub fn inspector_actions(ui: &Ui, state: &AppState, sui: &mut SessionsUi, tx: &CommandSender) {
    sui.inspector.drawn = None;
    clipboard(ui, state, &mut sui.inspector);
    row_keys(ui.ctx(), state, tx);
}

/// Draws the inspector pane (the Sessions view's right pane, through `ui/panes.rs`) while a
/// session is open.
pub fn inspector_panel(
    ui: &mut Ui,
    state: &AppState,
    layout: &PaneLayout,
    sui: &mut SessionsUi,
    rects: &mut PanesUi,
    tx: &CommandSender,
) {
    inspector_actions(ui, state, sui, tx);
    if state.sessions.open.is_none() {
        return;
    }
    let width = ui.available_width();
    let spec = PaneSpec {
        id: PaneId::Inspector,
        side: Side::Right,
        default: (width * 0.32).clamp(INSPECTOR_MIN_WIDTH, 520.0),
        min: INSPECTOR_MIN_WIDTH,
        max: (width * 0.7).max(INSPECTOR_MIN_WIDTH + 20.0),
    };
    panes::pane(ui, layout, spec, &PaneId::SESSIONS, rects, tx, |ui| {
        inspector_ui(ui, state, sui, tx);
    });
    sui.inspector.rect = rects.rects.get(&PaneId::Inspector).copied();
}

/// The inspector's contents (under its pane header): the selected turn, the tabs, the tab.
pub fn inspector_ui(ui: &mut Ui, state: &AppState, sui: &mut SessionsUi, tx: &CommandSender) {
    let inspect = &state.browser.inspect;
    ui.horizontal(|ui| {
        if let Some(index) = state.browser.selected
            && let Some(row) = state.sessions.rows.get(index)
        {
            ui.label(format!("turn {}", row.position));
        }
        if inspect.loading {
            ui.spinner();
        }
        // What the last row action did, in the rest of this row (whole on hover): a line of
        // its own pushed the tab's contents down when a copy finished.
        if let Some(note) = &inspect.note {
            let note = egui::RichText::new(note)
                .color(ui.visuals().weak_text_color())
                .small();
            crate::ui::widgets::cut_texts_ui(ui, vec![note]);
        }
    });
    ui.horizontal(|ui| {
        for (tab, label) in [
            (InspectorTab::Request, "Request"),
            (InspectorTab::Response, "Response"),
            (InspectorTab::Events, "Events"),
            (InspectorTab::Prefix, "Prefix"),
        ] {
            ui.selectable_value(&mut sui.inspector.tab, tab, label);
        }
    });
    if let Some(error) = &inspect.error {
        crate::ui::widgets::error_line(ui, error);
    }
    ui.separator();
    let Some(index) = state.browser.selected else {
        ui.weak("Select a request in the table.");
        return;
    };
    let Some(found) = inspect
        .result
        .as_ref()
        .filter(|i| Some(i.request) == inspect.request)
    else {
        if !inspect.loading {
            ui.weak("Select a request in the table.");
        }
        return;
    };
    sui.inspector.drawn = Some(found.request);
    if let Some(reveal) = sui.inspector.reveal.take_if(|r| r.request == index) {
        let line = reveal_line(state, found, &reveal);
        sui.inspector.tab = InspectorTab::Request;
        sui.inspector.body = BodyView::Text;
        sui.inspector.scroll_to_line = line.as_ref().ok().copied();
        sui.inspector.revealed = Some((found.request, line));
    }
    match sui.inspector.tab {
        InspectorTab::Request => {
            let revealed = sui
                .inspector
                .revealed
                .as_ref()
                .filter(|(r, _)| *r == found.request)
                .map(|(_, line)| line.clone());
            request::request_ui(
                ui,
                found,
                inspect.tokens,
                &mut sui.inspector.body,
                request::Shown {
                    revealed,
                    scroll_to: sui.inspector.scroll_to_line.take(),
                },
            );
        }
        InspectorTab::Response => {
            response::response_ui(ui, found, response::cost_lines(state, found));
        }
        InspectorTab::Events => events::events_ui(ui, found, index, tx),
        InspectorTab::Prefix => prefix::prefix_ui(ui, state, sui, index, tx),
    }
}

/// The body line of a revealed part: its whole-prompt pointer moved to the body as sent (a
/// continuation sends only the newest items), then found in the pretty text.
fn reveal_line(
    state: &AppState,
    found: &crate::app::session_view::inspect::Inspected,
    reveal: &super::Reveal,
) -> Result<usize, String> {
    let mut pointer = reveal.pointer.clone();
    if let Some(rest) = pointer.strip_prefix("/input/")
        && let Some(analysis) = &state.browser.analysis
        && let Some(layout) = analysis.ledger.rendered.layouts.get(reveal.request)
    {
        let (index, tail) = rest.split_once('/').map_or((rest, ""), |(i, t)| (i, t));
        let whole = layout.first_item() + layout.items();
        let sent = found
            .value
            .as_ref()
            .and_then(|v| v.get("input"))
            .and_then(serde_json::Value::as_array)
            .map_or(whole, Vec::len);
        let index: usize = index
            .parse()
            .map_err(|_| format!("bad pointer {pointer}"))?;
        let moved = index
            .checked_sub(whole.saturating_sub(sent))
            .ok_or_else(|| {
                format!(
                    "input item {index} is not in this body: the request continues an earlier response that carried it"
                )
            })?;
        pointer = if tail.is_empty() {
            format!("/input/{moved}")
        } else {
            format!("/input/{moved}/{tail}")
        };
    }
    crate::core::pretty::line_of_pointer(&found.text, &found.lines, &pointer)
        .ok_or_else(|| format!("{pointer} is not in the body as shown"))
}

/// The actions on request `index` (the table row's right-click menu).
pub fn row_menu(ui: &mut Ui, state: &AppState, index: usize, tx: &CommandSender) {
    let Some(session) = state.sessions.open else {
        return;
    };
    let Some(row) = state.sessions.rows.get(index) else {
        return;
    };
    if state.browser.selected != Some(index) {
        send(tx, SessionCommand::Select(index));
    }
    if ui.button("Copy as cURL (c)").clicked() {
        send(tx, SessionCommand::Copy(index, CopyKind::Curl));
    }
    if ui.button("Copy body (b)").clicked() {
        send(tx, SessionCommand::Copy(index, CopyKind::Body));
    }
    if ui.button("Export body… (e)").clicked() {
        send(tx, SessionCommand::Export(index, ExportKind::StoredBody));
    }
    if ui.button("Export HAR… (h)").clicked() {
        send(tx, SessionCommand::Export(index, ExportKind::StoredHar));
    }
    ui.separator();
    if ui.button("Open in form (Enter)").clicked() {
        send(tx, SessionCommand::OpenInForm(index));
    }
    let side = CompareSide::Stored {
        session,
        request: row.id,
        position: row.position,
    };
    ui.menu_button("Compare with…", |ui| {
        if ui.button("as left").clicked() {
            send(tx, SessionCommand::SetCompare(0, side.clone()));
        }
        if ui.button("as right").clicked() {
            send(tx, SessionCommand::SetCompare(1, side.clone()));
        }
        if ui.button("the form").clicked() {
            send(tx, SessionCommand::SetCompare(0, side.clone()));
            send(tx, SessionCommand::SetCompare(1, CompareSide::Form));
        }
    });
    if ui.button("Replay (r)").clicked() {
        send(tx, SessionCommand::Replay(index, ReplaySpeed::Instant));
    }
    if ui.button("Re-send (Shift+R)").clicked() {
        send(tx, SessionCommand::Resend(index));
    }
}

/// Keys on the selected row, while no text field has the keyboard: `c` copies it as cURL, `b`
/// copies its body, `e` / `h` export its body / HAR, Shift+R re-sends it (`r`, Enter and the
/// moves are the table's, `super::keyboard`).
pub fn row_keys(ctx: &egui::Context, state: &AppState, tx: &CommandSender) {
    if ctx.text_edit_focused() || state.dialog.is_some() {
        return;
    }
    let Some(index) = state.browser.selected else {
        return;
    };
    let (curl, body, export, har, resend) = ctx.input(|i| {
        let plain = |key| i.modifiers.is_none() && i.key_pressed(key);
        (
            plain(Key::C),
            plain(Key::B),
            plain(Key::E),
            plain(Key::H),
            i.modifiers.shift_only() && i.key_pressed(Key::R),
        )
    });
    if curl {
        send(tx, SessionCommand::Copy(index, CopyKind::Curl));
    }
    if body {
        send(tx, SessionCommand::Copy(index, CopyKind::Body));
    }
    if export {
        send(tx, SessionCommand::Export(index, ExportKind::StoredBody));
    }
    if har {
        send(tx, SessionCommand::Export(index, ExportKind::StoredHar));
    }
    if resend {
        send(tx, SessionCommand::Resend(index));
    }
}
