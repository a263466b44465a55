//! The workbench UI. Panels read `&AppState`, keep their own small widget state in [`UiState`],
//! and ask for changes through a [`CommandSender`]; they never mutate the app state, start a
//! thread or touch a file. Layout: top bar (pickers, files, Send), left sidebar (sessions,
//! examples, providers), the Prompt form beside it (resizable), the compiled columns in the
//! rest (scrolling sideways when they do not fit), bottom status bar. [`PromptwireApp`]
//! (`window.rs`) is the eframe application that ties the app layer to a window.

pub mod dialogs;
pub mod form_panel;
pub mod imports_panel;
pub mod items_panel;
pub mod json_tree;
pub mod json_views;
pub mod limits_window;
pub mod list_form;
pub mod otel_export;
pub mod other_fields;
pub mod panes;
pub mod provider_headers;
pub mod proxy_panel;
pub mod search;
pub mod send_bar;
pub mod send_continue;
pub mod sessions;
pub mod sidebar;
pub mod status_bar;
pub mod timeline;
pub mod tools_panel;
pub mod top_bar;
pub mod traffic;
pub mod widgets;
pub mod window;

pub use window::PromptwireApp;

use egui::{Key, KeyboardShortcut, Modifiers, Ui};

use crate::app::settings::ExportKind;
use crate::app::{AppCommand, AppState, CommandSender};

/// Narrowest the Prompt form gets (its fields stay usable).
pub const FORM_MIN_WIDTH: f32 = 330.0;
/// Narrowest the sidebar gets.
pub const SIDEBAR_MIN_WIDTH: f32 = 150.0;

/// The widget state of every panel (text buffers, search, selection confirmations).
#[derive(Debug, Default)]
pub struct UiState {
    /// Input items editor.
    pub items: list_form::ListForm<crate::core::items::ResponseItem>,
    /// Tools editor.
    pub tools: list_form::ListForm<crate::core::tools::ToolSpec>,
    /// Free-text settings buffers.
    pub form: form_panel::FormBuffers,
    /// The "Other body fields" buffers.
    pub other_fields: other_fields::OtherFieldsUi,
    /// Dialog text buffers.
    pub dialogs: dialogs::DialogBuffers,
    /// Search in the compiled views.
    pub search: search::SearchState,
    /// Columns view state (scroll sync, difference navigation).
    pub columns: json_views::ColumnsState,
    /// Custom model name being typed in the top bar.
    pub model_text: String,
    /// Path of a Codex config.toml typed in the sidebar.
    pub config_path: String,
    /// The Sessions view's widget state.
    pub sessions: sessions::SessionsUi,
    /// The Record panel's widget state.
    pub record: proxy_panel::RecordUi,
    /// The import sections' buffers.
    pub imports: imports_panel::ImportsUi,
    /// The send timeline's widget state.
    pub send: send_bar::SendUi,
    /// The Traffic view's widget state.
    pub traffic: traffic::TrafficUi,
    /// The Limits window is open.
    pub limits_open: bool,
    /// Where each pane was drawn last frame.
    pub panes: panes::PanesUi,
}

/// Draws the whole workbench for one frame; what the user asked for goes to `tx`.
pub fn workbench_ui(ui: &mut Ui, state: &AppState, ui_state: &mut UiState, tx: &CommandSender) {
    use crate::app::panes::PaneId;
    use crate::app::session_view::MainView;
    use panes::{PaneSpec, Side};
    let view = state.browser.view;
    let workbench = view == MainView::Workbench;
    let order: &[PaneId] = match view {
        MainView::Workbench => &PaneId::WORKBENCH,
        MainView::Sessions => &PaneId::SESSIONS,
        MainView::Traffic => &PaneId::TRAFFIC,
    };
    ui_state.panes.rects.clear();
    // Dialog shortcuts win: while a dialog is open the global ones are off.
    if state.dialog.is_none() {
        shortcuts(ui.ctx(), state, ui_state, tx);
        panes::keys(ui.ctx(), order, tx);
        dropped_files(ui.ctx(), tx);
    }
    egui::Panel::top("view_tabs").show(ui, |ui| {
        ui.horizontal(|ui| {
            sessions::view_tabs_ui(ui, state, tx);
            proxy_panel::record_toggle(ui, state, &mut ui_state.record);
        });
    });
    let layout = &state.settings.panes;
    // A maximised pane of another view, the Record panel while it is closed, or the inspector
    // while no session is open, is not shown.
    let maximised = layout.maximised.filter(|id| {
        order.contains(id)
            && (*id != PaneId::Record || ui_state.record.open)
            && (*id != PaneId::Inspector || state.sessions.open.is_some())
    });
    // The top bar and the status bar span the window; the Record panel sits between them.
    if workbench && maximised.is_none() {
        egui::Panel::top("top_bar").show(ui, |ui| top_bar::top_bar_ui(ui, state, ui_state, tx));
    }
    egui::Panel::bottom("status_bar").show(ui, |ui| status_bar::status_bar_ui(ui, state, tx));
    if let Some(id) = maximised {
        maximised_ui(ui, state, ui_state, id, order, tx);
        limits_window::limits_window(ui.ctx(), state, &mut ui_state.limits_open, tx);
        dialogs::dialogs_ui(ui.ctx(), state, &mut ui_state.dialogs, tx);
        return;
    }
    // Here no pane of this view is maximised (one of the other view may be: it is not here).
    let layout = crate::app::panes::PaneLayout {
        maximised: None,
        ..layout.clone()
    };
    let height = ui.available_height();
    if ui_state.record.open {
        let width = ui.available_width();
        let spec = PaneSpec {
            id: PaneId::Record,
            side: Side::Right,
            // A quarter of a narrow window (the views beside it keep their tables usable at
            // 1024×700), up to 340 points in a wide one.
            default: (width * 0.24).clamp(240.0, 340.0),
            min: 240.0,
            max: (width * 0.6).max(260.0),
        };
        let UiState {
            record,
            limits_open,
            panes: pane_rects,
            ..
        } = ui_state;
        panes::pane(ui, &layout, spec, order, pane_rects, tx, |ui| {
            proxy_panel::record_panel_ui(ui, state, record, limits_open, tx);
        });
    }
    if view == MainView::Traffic {
        traffic::traffic_ui(
            ui,
            state,
            &layout,
            &mut ui_state.traffic,
            &mut ui_state.panes,
            tx,
        );
        limits_window::limits_window(ui.ctx(), state, &mut ui_state.limits_open, tx);
        dialogs::dialogs_ui(ui.ctx(), state, &mut ui_state.dialogs, tx);
        return;
    }
    if !workbench {
        sessions::sessions_ui(
            ui,
            state,
            &layout,
            &mut ui_state.sessions,
            &mut ui_state.panes,
            tx,
        );
        otel_export::export_window(ui.ctx(), state, tx);
        limits_window::limits_window(ui.ctx(), state, &mut ui_state.limits_open, tx);
        dialogs::dialogs_ui(ui.ctx(), state, &mut ui_state.dialogs, tx);
        return;
    }
    let timeline = PaneSpec {
        id: PaneId::SendTimeline,
        side: Side::Bottom,
        // At 1024×700 at least three of the answer's events under the bar and Continue strip.
        default: (height * 0.4).clamp(265.0, 400.0),
        min: 90.0,
        max: (height * 0.75).max(100.0),
    };
    // The send pane appears with the first send (until then a bar, when a send was refused).
    if state.send.shown {
        let UiState {
            send, panes: rects, ..
        } = ui_state;
        panes::pane(ui, &layout, timeline, order, rects, tx, |ui| {
            send_bar::send_panel_ui(ui, state, send, tx);
        });
    } else if state.send.error.is_some() {
        egui::Panel::bottom("send_bar").show(ui, |ui| {
            send_bar::send_panel_ui(ui, state, &mut ui_state.send, tx);
        });
    }
    let sidebar = PaneSpec {
        id: PaneId::Sidebar,
        side: Side::Left,
        // Wider in a wide window: its paths and URLs were cut at 180 points at 1600×1000.
        default: (ui.available_width() * 0.15).clamp(180.0, 240.0),
        min: SIDEBAR_MIN_WIDTH,
        max: 420.0,
    };
    let mut rects = std::mem::take(&mut ui_state.panes);
    panes::pane(ui, &layout, sidebar, order, &mut rects, tx, |ui| {
        sidebar::sidebar_ui(ui, state, ui_state, tx);
    });
    let form = PaneSpec {
        id: PaneId::Form,
        side: Side::Left,
        default: (ui.available_width() * 0.45).clamp(FORM_MIN_WIDTH, 520.0),
        min: FORM_MIN_WIDTH,
        max: (ui.available_width() - 300.0).max(FORM_MIN_WIDTH),
    };
    panes::pane(ui, &layout, form, order, &mut rects, tx, |ui| {
        form_panel::form_ui(ui, state, ui_state, tx);
    });
    let columns = egui::CentralPanel::default().show(ui, |ui| {
        panes::header(ui, &layout, PaneId::Columns, order, tx);
        json_views::views_ui(ui, state, ui_state, tx);
    });
    rects.rects.insert(PaneId::Columns, columns.response.rect);
    ui_state.panes = rects;
    limits_window::limits_window(ui.ctx(), state, &mut ui_state.limits_open, tx);
    dialogs::dialogs_ui(ui.ctx(), state, &mut ui_state.dialogs, tx);
}

/// Draws the maximised pane `id` in the whole window (under the view tabs, above the status
/// bar).
fn maximised_ui(
    ui: &mut Ui,
    state: &AppState,
    ui_state: &mut UiState,
    id: crate::app::panes::PaneId,
    order: &[crate::app::panes::PaneId],
    tx: &CommandSender,
) {
    use crate::app::panes::PaneId;
    let layout = &state.settings.panes;
    let mut rects = std::mem::take(&mut ui_state.panes);
    panes::maximised(ui, layout, id, order, &mut rects, tx, |ui| match id {
        PaneId::Sidebar => sidebar::sidebar_ui(ui, state, ui_state, tx),
        PaneId::Form => form_panel::form_ui(ui, state, ui_state, tx),
        PaneId::Columns => json_views::views_ui(ui, state, ui_state, tx),
        PaneId::SendTimeline => send_bar::send_panel_ui(ui, state, &mut ui_state.send, tx),
        PaneId::Record => proxy_panel::record_panel_ui(
            ui,
            state,
            &mut ui_state.record,
            &mut ui_state.limits_open,
            tx,
        ),
        PaneId::SessionList
        | PaneId::RequestTable
        | PaneId::Analysis
        | PaneId::ReplayTimeline
        | PaneId::Inspector => {
            sessions::maximised_ui(ui, state, id, &mut ui_state.sessions, tx);
        }
        PaneId::Traffic | PaneId::TrafficInspector => {
            traffic::maximised_ui(ui, state, id, &mut ui_state.traffic, tx);
        }
    });
    ui_state.panes = rects;
}

fn shortcuts(ctx: &egui::Context, state: &AppState, ui_state: &mut UiState, tx: &CommandSender) {
    let pressed = |modifiers: Modifiers, key: Key| {
        ctx.input_mut(|i| i.consume_shortcut(&KeyboardShortcut::new(modifiers, key)))
    };
    // Redo first: Ctrl+Shift+Z also matches Ctrl+Z's shortcut.
    if pressed(Modifiers::COMMAND | Modifiers::SHIFT, Key::Z) || pressed(Modifiers::COMMAND, Key::Y)
    {
        tx.send(AppCommand::Redo);
    }
    if pressed(Modifiers::COMMAND, Key::Z) {
        tx.send(AppCommand::Undo);
    }
    if pressed(Modifiers::COMMAND, Key::S) {
        tx.send(AppCommand::Save);
    }
    if pressed(Modifiers::COMMAND, Key::O) {
        tx.send(AppCommand::ShowFileDialog(None, 0));
    }
    if pressed(Modifiers::COMMAND, Key::E) {
        tx.send(AppCommand::ShowFileDialog(Some(ExportKind::Json), 0));
    }
    if pressed(Modifiers::COMMAND, Key::F) {
        ui_state.search.open = true;
        ui_state.search.focus = true;
    }
    if pressed(Modifiers::COMMAND, Key::Enter) {
        tx.send(AppCommand::Send);
    }
    if ui_state.search.open && pressed(Modifiers::NONE, Key::Escape) {
        ui_state.search.open = false;
    }
    if state.send.job.is_some() && pressed(Modifiers::NONE, Key::Escape) {
        tx.send(AppCommand::SendBar(crate::app::send::SendCommand::Stop));
    }
}

fn dropped_files(ctx: &egui::Context, tx: &CommandSender) {
    let dropped = ctx.input(|i| i.raw.dropped_files.clone());
    for file in dropped {
        tx.send(AppCommand::Open(file.path().to_path_buf()));
    }
}
