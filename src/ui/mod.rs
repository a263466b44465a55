//! The workbench UI: panels read the [`AppState`] and push [`AppCommand`]s, which are applied
//! once at the end of the frame. Layout: top bar (pickers, files, Send), left sidebar (sessions,
//! examples, providers), centre Prompt form, right compiled views, bottom status bar.

pub mod dialogs;
pub mod form_panel;
pub mod items_panel;
pub mod json_views;
pub mod sidebar;
pub mod status_bar;
pub mod timeline;
pub mod tools_panel;
pub mod top_bar;
pub mod widgets;

use egui::{Key, KeyboardShortcut, Modifiers, Ui};

use crate::app::state::ExportKind;
use crate::app::{AppCommand, AppState};
use crate::core::export::curl_command;

/// Draws the whole workbench for one frame and applies what the user did.
pub fn workbench_ui(ui: &mut Ui, state: &mut AppState) {
    state.poll_worker(ui.ctx());
    let mut commands = Vec::new();
    shortcuts(ui.ctx(), state, &mut commands);
    dropped_files(ui.ctx(), &mut commands);

    egui::Panel::top("top_bar").show(ui, |ui| top_bar::top_bar_ui(ui, state, &mut commands));
    egui::Panel::bottom("status_bar").show(ui, |ui| status_bar::status_bar_ui(ui, state));
    egui::Panel::left("sidebar")
        .resizable(true)
        .default_size(190.0)
        .show(ui, |ui| sidebar::sidebar_ui(ui, state, &mut commands));
    egui::Panel::right("compiled_views")
        .resizable(true)
        // A fixed first width: the first frame's size is not yet the window's.
        .default_size(680.0)
        .show(ui, |ui| json_views::views_ui(ui, state, &mut commands));
    egui::CentralPanel::default().show(ui, |ui| form_panel::form_ui(ui, state, &mut commands));
    dialogs::dialogs_ui(ui.ctx(), state, &mut commands);

    for command in commands {
        if let AppCommand::CopyCurl(k) = command {
            copy_curl(ui.ctx(), state, k);
        } else {
            state.handle(command);
        }
    }
}

fn copy_curl(ctx: &egui::Context, state: &mut AppState, column: usize) {
    match state.views.get(column) {
        Some(view) => {
            ctx.copy_text(curl_command(&view.compiled));
            state.set_status(
                format!(
                    "Copied a curl command for “{}” (the key stays in its environment variable)",
                    view.label
                ),
                false,
            );
        }
        None => state.set_status("Nothing compiled to copy yet", true),
    }
}

fn shortcuts(ctx: &egui::Context, state: &mut AppState, commands: &mut Vec<AppCommand>) {
    let pressed = |key: Key| {
        ctx.input_mut(|i| i.consume_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND, key)))
    };
    if pressed(Key::S) {
        commands.push(AppCommand::Save);
    }
    if pressed(Key::O) {
        commands.push(AppCommand::ShowFileDialog(None, 0));
    }
    if pressed(Key::E) {
        commands.push(AppCommand::ShowFileDialog(Some(ExportKind::Json), 0));
    }
    if pressed(Key::F) {
        state.search.open = true;
        state.search.focus = true;
    }
    if pressed(Key::Enter) {
        commands.push(AppCommand::Send);
    }
}

fn dropped_files(ctx: &egui::Context, commands: &mut Vec<AppCommand>) {
    let dropped = ctx.input(|i| i.raw.dropped_files.clone());
    for file in dropped {
        commands.push(AppCommand::Open(file.path().to_path_buf()));
    }
}
