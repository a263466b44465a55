//! [`PromptwireApp`], the eframe application: it owns the [`AppState`] (app layer), the panels'
//! [`UiState`] and the command channel. `logic()` applies worker events; `ui()` draws the panels
//! and then applies the commands they sent; closing with unsaved edits asks first.

use std::path::PathBuf;

use super::{UiState, workbench_ui};
use crate::app::settings::ThemeChoice;
use crate::app::{AppCommand, AppOptions, AppState, CommandReceiver, CommandSender, Settings};

/// Storage key of the persisted settings.
const SETTINGS_KEY: &str = "promptwire.settings";

/// The desktop application.
pub struct PromptwireApp {
    state: AppState,
    ui_state: UiState,
    tx: CommandSender,
    rx: CommandReceiver,
    title: String,
}

impl PromptwireApp {
    /// Creates the app on the default session database, restoring saved settings.
    pub fn new(cc: &eframe::CreationContext<'_>) -> Self {
        Self::with_db(cc, Some(crate::store::seed::default_path()))
    }

    /// Creates the app browsing the session database at `db` (None: no sessions browser).
    pub fn with_db(cc: &eframe::CreationContext<'_>, db: Option<PathBuf>) -> Self {
        let settings: Settings = cc
            .storage
            .and_then(|s| eframe::get_value(s, SETTINGS_KEY))
            .unwrap_or_default();
        let ctx = cc.egui_ctx.clone();
        let state = AppState::new(
            settings,
            AppOptions {
                db,
                ctx: Some(ctx.clone()),
            },
        );
        let (tx, rx) = crate::app::command_channel(Some(ctx));
        Self {
            state,
            ui_state: UiState::default(),
            tx,
            rx,
            title: String::new(),
        }
    }

    /// Creates the app on the session database `db` given with `promptwire --db PATH` (shown
    /// in the window title and the Sessions footer).
    pub fn on_db(cc: &eframe::CreationContext<'_>, db: PathBuf) -> Self {
        let mut app = Self::with_db(cc, Some(db));
        app.state.sessions.db_shown = true;
        app
    }

    /// Reads API keys through `lookup` instead of the process environment (tests inject one).
    pub fn with_key_lookup(mut self, lookup: crate::app::send::KeyLookup) -> Self {
        self.state.key_lookup = lookup;
        self
    }

    /// The app state (for tests and benchmarks).
    pub fn state(&self) -> &AppState {
        &self.state
    }

    /// The panels' widget state (for tests).
    pub fn ui_state(&self) -> &UiState {
        &self.ui_state
    }

    /// The command sender (for tests: what a panel would send).
    pub fn sender(&self) -> &CommandSender {
        &self.tx
    }
}

/// The database `promptwire --db PATH` (or `--db=PATH`) names, when those are the only
/// arguments (anything else is the command line's).
pub fn db_argument(args: &[std::ffi::OsString]) -> Option<PathBuf> {
    match args {
        [_, flag, path] if flag == "--db" => Some(PathBuf::from(path)),
        [_, flag] => flag
            .to_str()
            .and_then(|f| f.strip_prefix("--db="))
            .filter(|p| !p.is_empty())
            .map(PathBuf::from),
        _ => None,
    }
}

/// Applies the theme choice to the context.
fn apply_theme(ctx: &egui::Context, theme: ThemeChoice) {
    let preference = match theme {
        ThemeChoice::System => egui::ThemePreference::System,
        ThemeChoice::Light => egui::ThemePreference::Light,
        ThemeChoice::Dark => egui::ThemePreference::Dark,
    };
    if ctx.options(|o| o.theme_preference) != preference {
        ctx.set_theme(preference);
    }
}

impl eframe::App for PromptwireApp {
    fn logic(&mut self, ctx: &egui::Context, _frame: &mut eframe::Frame) {
        if self.state.poll() {
            ctx.request_repaint();
        }
        apply_theme(ctx, self.state.settings.theme);
        if ctx.input(|i| i.viewport().close_requested()) && !self.state.close_confirmed {
            ctx.send_viewport_cmd(egui::ViewportCommand::CancelClose);
            self.state.handle(AppCommand::RequestClose);
        }
        if self.state.close_confirmed {
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
        }
        let title = self.state.window_title();
        if title != self.title {
            ctx.send_viewport_cmd(egui::ViewportCommand::Title(title.clone()));
            self.title = title;
        }
    }

    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        workbench_ui(ui, &self.state, &mut self.ui_state, &self.tx);
        self.state.handle_all(&self.rx);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        eframe::set_value(storage, SETTINGS_KEY, &self.state.settings);
    }

    fn on_exit(&mut self, _gl: Option<&eframe::glow::Context>) {
        // A deleted session is undoable until the app closes: now it is deleted for real.
        crate::app::session_admin::commit_pending_delete(
            &mut self.state,
            std::time::Duration::from_secs(10),
        );
    }
}
