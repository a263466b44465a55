//! The Sessions view: the paged, searchable session list on the left; the open session's
//! request table (virtualized) on top; below it the cache-prefix view (strip with break markers,
//! break list, charts, the selected pair's diff) or the compare view; the replay timeline in a
//! resizable bottom panel; the request inspector at the right. Panels read `&AppState` and
//! their [`SessionsUi`], and send [`SessionCommand`]s. Keyboard: Ctrl+1 / Ctrl+2 switch views; j/k and arrows move between
//! requests, Enter opens the selected one in the form, `r` replays it instantly, Shift+J /
//! Shift+K open the next / previous session, `/` focuses the search.

mod anatomy;
pub mod anatomy_chart;
mod charts;
mod compare;
mod filters;
pub mod inspector;
mod list;
mod outcomes;
mod pair;
mod prefix;
mod provenance;
mod replay_bar;
mod session_edit;
mod table;

pub use anatomy::Reveal;
pub use compare::compare_summary;
pub use outcomes::OutcomeSide;
pub use replay_bar::{recorded_text, resent_text};
pub use session_edit::shown_name;
pub use table::{badge_cell, status_text};

use egui::{Key, Ui};

use crate::app::panes::{PaneId, PaneLayout};
use crate::app::session_view::{MainView, ReplaySpeed, SessionCommand};
use crate::app::{AppCommand, AppState, CommandSender};
use crate::core::format::grouped;
use crate::ui::panes::{self, PaneSpec, PanesUi, Side};
use crate::ui::timeline::{TimelinePanelState, timeline_ui};

/// Which tab is shown under the request table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SessionsTab {
    /// The cache-prefix view.
    #[default]
    Prefix,
    /// Two requests side by side.
    Compare,
    /// What fills the context, request by request.
    Anatomy,
}

/// The Sessions view's own widget state.
#[derive(Debug, Default)]
pub struct SessionsUi {
    /// The search text being typed.
    pub search: String,
    /// Focus the search field next frame.
    pub focus_search: bool,
    /// The tab under the table.
    pub tab: SessionsTab,
    /// The replay timeline panel's state.
    pub timeline: TimelinePanelState,
    /// Scroll the table to the selected row next frame.
    pub scroll_to_selected: bool,
    /// The pair view last scrolled to its first difference (by pair).
    pub pair_scrolled: Option<(usize, usize)>,
    /// The compare view's difference navigation.
    pub compare: compare::CompareUi,
    /// The request inspector's widget state.
    pub inspector: inspector::InspectorUi,
    /// The filter bars' buffers.
    pub filters: filters::FiltersUi,
    /// The app's reveal count last followed (`SessionBrowser::reveal`): a new one scrolls the
    /// table to the selected row.
    pub revealed: u64,
    /// The Anatomy tab's state.
    pub anatomy: anatomy::AnatomyUi,
    /// The Analysis area's height last frame ("Compare" shows it on the whole window when it
    /// is short).
    pub analysis_height: Option<f32>,
}

/// Sends a Sessions command.
fn send(tx: &CommandSender, command: SessionCommand) {
    tx.send(AppCommand::Sessions(command));
}

/// The Workbench | Sessions | Traffic switch (also Ctrl+1 / Ctrl+2 / Ctrl+3).
pub fn view_tabs_ui(ui: &mut Ui, state: &AppState, tx: &CommandSender) {
    for (key, view) in [
        (Key::Num1, MainView::Workbench),
        (Key::Num2, MainView::Sessions),
        (Key::Num3, MainView::Traffic),
    ] {
        let shortcut = egui::KeyboardShortcut::new(egui::Modifiers::COMMAND, key);
        if ui.input_mut(|i| i.consume_shortcut(&shortcut)) && state.browser.view != view {
            send(tx, SessionCommand::ShowView(view));
        }
    }
    ui.horizontal(|ui| {
        for (view, label, tip) in [
            (
                MainView::Workbench,
                "Workbench",
                "Edit, compile and send a prompt (Ctrl+1)",
            ),
            (
                MainView::Sessions,
                "Sessions",
                "Recorded sessions, their requests and cache analysis (Ctrl+2)",
            ),
            (
                MainView::Traffic,
                "Traffic",
                "Every request proxied, sent or re-sent in this run, live (Ctrl+3)",
            ),
        ] {
            let text = match view {
                MainView::Traffic if !state.traffic.is_empty() => {
                    format!("{label} ({})", grouped(state.traffic.len() as u64))
                }
                _ => label.to_string(),
            };
            let response = ui
                .selectable_label(state.browser.view == view, text)
                .on_hover_text(tip);
            response.widget_info(|| {
                egui::WidgetInfo::labeled(egui::accesskit::Role::Button, true, label)
            });
            if response.clicked() && state.browser.view != view {
                send(tx, SessionCommand::ShowView(view));
            }
        }
    });
}

/// Draws the Sessions view (inside the window, under the view tabs and above the status bar):
/// its panes through `ui/panes.rs` (`layout` has no pane of this view maximised).
pub fn sessions_ui(
    ui: &mut Ui,
    state: &AppState,
    layout: &PaneLayout,
    sui: &mut SessionsUi,
    rects: &mut PanesUi,
    tx: &CommandSender,
) {
    keyboard(ui.ctx(), state, sui, tx);
    let order = &PaneId::SESSIONS;
    // First-show sizes follow the window (then the user's resizing is kept).
    let height = ui.available_height();
    let list = PaneSpec {
        id: PaneId::SessionList,
        side: Side::Left,
        // A fifth of a narrow window (the table keeps its room beside the Record panel).
        default: (ui.available_width() * 0.22).clamp(170.0, 230.0),
        min: 160.0,
        max: 420.0,
    };
    panes::pane(ui, layout, list, order, rects, tx, |ui| {
        list::list_ui(ui, state, sui, tx);
    });
    // The replay timeline keeps its room before the first replay (nothing jumps when one
    // starts); at least room for its bars, the table's header and five event rows (at
    // 1024×700 a third of the height left it one).
    let replay = PaneSpec {
        id: PaneId::ReplayTimeline,
        side: Side::Bottom,
        default: (height * 0.3).clamp(215.0, 320.0),
        min: 90.0,
        max: (height * 0.75).max(100.0),
    };
    panes::pane(ui, layout, replay, order, rects, tx, |ui| {
        replay_ui(ui, state, sui, tx);
    });
    inspector::inspector_panel(ui, state, layout, sui, rects, tx);
    let central = egui::CentralPanel::default().show(ui, |ui| {
        let table = PaneSpec {
            id: PaneId::RequestTable,
            side: Side::Top,
            // Room for the header, the filter bar and five rows at 1024×700.
            default: (height * 0.4).clamp(150.0, 340.0),
            min: 80.0,
            max: (height * 0.6).max(90.0),
        };
        panes::pane(ui, layout, table, order, rects, tx, |ui| {
            table::table_ui(ui, state, sui, tx);
        });
        let analysis = egui::CentralPanel::default().show(ui, |ui| {
            // The tabs on the header's row: the room under it goes to the analysis.
            panes::header_with(ui, layout, PaneId::Analysis, order, tx, |ui| {
                ui.add_space(12.0);
                tabs_ui(ui, sui);
            });
            analysis_body(ui, state, sui, tx);
        });
        analysis.response.rect
    });
    sui.analysis_height = Some(central.inner.height());
    rects.rects.insert(PaneId::Analysis, central.inner);
}

/// Draws pane `id` of the Sessions view maximised (the caller drew its header).
pub fn maximised_ui(
    ui: &mut Ui,
    state: &AppState,
    id: PaneId,
    sui: &mut SessionsUi,
    tx: &CommandSender,
) {
    keyboard(ui.ctx(), state, sui, tx);
    inspector::inspector_actions(ui, state, sui, tx);
    match id {
        PaneId::SessionList => list::list_ui(ui, state, sui, tx),
        PaneId::Inspector => inspector::inspector_ui(ui, state, sui, tx),
        PaneId::RequestTable => table::table_ui(ui, state, sui, tx),
        PaneId::ReplayTimeline => replay_ui(ui, state, sui, tx),
        _ => analysis_ui(ui, state, sui, tx),
    }
}

/// The replay pane: its bar, the outcomes and the timeline (before a replay, what shows here).
fn replay_ui(ui: &mut Ui, state: &AppState, sui: &mut SessionsUi, tx: &CommandSender) {
    replay_bar::replay_bar_ui(ui, state, tx);
    if state.browser.replay.request.is_none() && state.browser.replay.proxied.is_none() {
        ui.weak("Replay or re-send the selected request: its events show here.");
        return;
    }
    outcomes::outcomes_ui(ui, state);
    let commands = timeline_ui(ui, &state.browser.timeline, &mut sui.timeline);
    for command in commands {
        if let crate::app::timeline::TimelineCommand::CopyText(text) = &command {
            ui.ctx().copy_text(text.clone());
        }
        send(tx, SessionCommand::Timeline(command));
    }
}

/// The tabs under the table: the cache-prefix view or Compare (maximised: their own row).
fn analysis_ui(ui: &mut Ui, state: &AppState, sui: &mut SessionsUi, tx: &CommandSender) {
    ui.horizontal(|ui| tabs_ui(ui, sui));
    analysis_body(ui, state, sui, tx);
}

/// The Analysis pane's tabs.
fn tabs_ui(ui: &mut Ui, sui: &mut SessionsUi) {
    ui.selectable_value(&mut sui.tab, SessionsTab::Prefix, "Cache prefix");
    ui.selectable_value(&mut sui.tab, SessionsTab::Compare, "Compare");
    ui.selectable_value(&mut sui.tab, SessionsTab::Anatomy, "Anatomy")
        .on_hover_text("What fills each request's context: sources, tools, compactions, agents");
}

/// The Analysis pane under its tabs.
fn analysis_body(ui: &mut Ui, state: &AppState, sui: &mut SessionsUi, tx: &CommandSender) {
    ui.separator();
    provenance::provenance_ui(ui, state);
    match sui.tab {
        SessionsTab::Prefix => prefix::prefix_ui(ui, state, sui, tx),
        SessionsTab::Compare => compare::compare_ui(ui, state, &mut sui.compare, tx),
        SessionsTab::Anatomy => anatomy::anatomy_ui(ui, state, sui, tx),
    }
}

/// The next (`delta` 1) or previous (-1) session of the listed page, from the open one.
fn neighbour_session(state: &AppState, delta: i64) -> Option<i64> {
    let sessions = &state.sessions.sessions;
    let current = state
        .sessions
        .open
        .and_then(|id| sessions.iter().position(|s| s.id == id));
    let index = match current {
        None => 0,
        Some(i) if delta < 0 => i.checked_sub(1)?,
        Some(i) => i + 1,
    };
    sessions.get(index).map(|s| s.id)
}

/// Keyboard, only while no text field has the keyboard (a clicked button may keep focus): j/k and arrows move between requests,
/// Enter opens the selected one in the form, `r` replays it instantly, Shift+J / Shift+K open
/// the next / previous session, `/` focuses the search.
fn keyboard(ctx: &egui::Context, state: &AppState, sui: &mut SessionsUi, tx: &CommandSender) {
    if ctx.text_edit_focused() {
        return;
    }
    let browser = &state.browser;
    let count = state.sessions.rows.len();
    let (down, up, enter, slash, replay, next_session, previous_session) = ctx.input(|i| {
        let plain = |key| i.modifiers.is_none() && i.key_pressed(key);
        let shifted = |key| i.modifiers.shift_only() && i.key_pressed(key);
        (
            plain(Key::ArrowDown) || plain(Key::J),
            plain(Key::ArrowUp) || plain(Key::K),
            plain(Key::Enter),
            plain(Key::Slash),
            plain(Key::R),
            shifted(Key::J),
            shifted(Key::K),
        )
    });
    if slash {
        sui.focus_search = true;
    }
    let session = match (next_session, previous_session) {
        (true, _) => neighbour_session(state, 1),
        (_, true) => neighbour_session(state, -1),
        _ => None,
    };
    if let Some(id) = session {
        send(tx, SessionCommand::Open(id));
    }
    if count == 0 {
        return;
    }
    let current = browser.selected;
    let next = match (down, up, current) {
        (true, _, Some(i)) => Some((i + 1).min(count - 1)),
        (true, _, None) => Some(0),
        (_, true, Some(i)) => Some(i.saturating_sub(1)),
        (_, true, None) => Some(0),
        _ => None,
    };
    if let Some(next) = next.filter(|n| Some(*n) != current) {
        sui.scroll_to_selected = true;
        send(tx, SessionCommand::Select(next));
    }
    if let Some(i) = current {
        if enter {
            send(tx, SessionCommand::OpenInForm(i));
        }
        if replay {
            send(tx, SessionCommand::Replay(i, ReplaySpeed::Instant));
        }
    }
}

/// Milliseconds of a microsecond count (`412 ms`).
fn millis(us: Option<i64>) -> String {
    us.map_or_else(String::new, |us| format!("{} ms", us / 1000))
}
