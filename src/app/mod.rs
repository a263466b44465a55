//! The app layer: [`AppState`] (all data the workbench shows), [`AppCommand`] (the single place
//! that mutates it), the compile worker bridge and file actions; and [`PromptwireApp`], the
//! eframe application that ties them to a window.

pub mod command;
pub mod files;
pub mod sessions;
pub mod state;
pub mod timeline;
pub mod worker;

pub use command::{AppCommand, PromptEdit};
pub use state::AppState;

use state::{Settings, ThemeChoice};

/// Storage key of the persisted settings.
const SETTINGS_KEY: &str = "promptwire.settings";

/// The desktop application.
pub struct PromptwireApp {
    state: AppState,
}

impl PromptwireApp {
    /// Creates the app, restoring settings saved by an earlier run.
    pub fn new(cc: &eframe::CreationContext<'_>) -> Self {
        let settings: Settings = cc
            .storage
            .and_then(|s| eframe::get_value(s, SETTINGS_KEY))
            .unwrap_or_default();
        let db = crate::store::seed::default_path();
        Self {
            state: AppState::with_store(settings, Some(db)),
        }
    }

    /// The state (for tests and benchmarks).
    pub fn state(&self) -> &AppState {
        &self.state
    }
}

/// Applies the theme choice to the context.
pub fn apply_theme(ctx: &egui::Context, theme: ThemeChoice) {
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
        self.state.poll_worker(ctx);
        apply_theme(ctx, self.state.settings.theme);
    }

    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        crate::ui::workbench_ui(ui, &mut self.state);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        eframe::set_value(storage, SETTINGS_KEY, &self.state.settings);
    }
}
