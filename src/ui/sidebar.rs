//! The left panel: bundled example prompts, recently opened files, provider import from a Codex
//! `config.toml`, and the recorded sessions list (filled by the session store).

use egui::Ui;

use crate::app::command::EXAMPLES;
use crate::app::{AppCommand, AppState};

/// Draws the sidebar.
pub fn sidebar_ui(ui: &mut Ui, state: &mut AppState, commands: &mut Vec<AppCommand>) {
    egui::ScrollArea::vertical()
        .id_salt("sidebar_scroll")
        .show(ui, |ui| {
            ui.heading("Sessions");
            sessions_ui(ui, state);
            ui.separator();
            ui.heading("Examples");
            for (name, _) in EXAMPLES {
                if ui
                    .selectable_label(false, name)
                    .on_hover_text("Load this example prompt into the form")
                    .clicked()
                {
                    commands.push(AppCommand::LoadExample(name));
                }
            }
            if !state.settings.recent.is_empty() {
                ui.separator();
                ui.heading("Recent");
                for path in &state.settings.recent {
                    let name = path.file_name().map_or_else(
                        || path.display().to_string(),
                        |n| n.to_string_lossy().into_owned(),
                    );
                    if ui
                        .selectable_label(state.prompt_path.as_ref() == Some(path), name)
                        .on_hover_text(path.display().to_string())
                        .clicked()
                    {
                        commands.push(AppCommand::Open(path.clone()));
                    }
                }
            }
            ui.separator();
            ui.heading("Providers");
            let i = state.settings.provider;
            if let Some(preset) = state.settings.providers.get(i) {
                let mut url = preset.provider.base_url.clone();
                if super::widgets::labelled_line(
                    ui,
                    "Base URL",
                    &mut url,
                    "https://…/v1",
                    "Base URL of the chosen provider; requests go to {base}/responses",
                ) {
                    commands.push(AppCommand::SetProviderUrl(i, url));
                }
                super::widgets::note_line(
                    ui,
                    &format!(
                        "API key from ${}",
                        preset.provider.env_key.as_deref().unwrap_or("(none)")
                    ),
                );
            }
            let mut path = std::mem::take(&mut state.settings_form.config_path);
            let changed = super::widgets::labelled_line(
                ui,
                "config.toml",
                &mut path,
                "~/.codex/config.toml",
                "Import [model_providers.*] from a Codex config file",
            );
            let _ = changed;
            if ui
                .button("Import providers")
                .on_hover_text("Add the Responses providers of that config.toml to the picker")
                .clicked()
                && !path.trim().is_empty()
            {
                commands.push(AppCommand::ImportCodexConfig(expand_home(path.trim())));
            }
            state.settings_form.config_path = path;
        });
}

/// `~/x` → `$HOME/x`.
fn expand_home(path: &str) -> std::path::PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => std::path::Path::new(&home).join(rest),
        _ => std::path::PathBuf::from(path),
    }
}

/// The recorded sessions and, for the expanded one, its requests; clicking a request loads its
/// exact body into the form.
fn sessions_ui(ui: &mut Ui, state: &mut AppState) {
    let ctx = ui.ctx().clone();
    let browser = &mut state.sessions;
    if browser.db_path.is_none() {
        super::widgets::note_line(ui, "No session database.");
        return;
    }
    if !browser.listed {
        browser.refresh(&ctx);
    }
    ui.horizontal(|ui| {
        if ui
            .small_button("Refresh")
            .on_hover_text("Read the session list again")
            .clicked()
        {
            browser.refresh(&ctx);
        }
        if browser.loading {
            ui.spinner();
        }
    });
    if let Some(e) = &browser.error {
        super::widgets::error_line(ui, e);
    }
    if browser.sessions.is_empty() && !browser.loading {
        super::widgets::note_line(ui, "No recorded sessions yet.");
    }
    let mut open = None;
    let mut load = None;
    // One line per session and turn; the full name is in the tooltip.
    ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Truncate);
    for session in &browser.sessions {
        let expanded = browser.open_session == Some(session.id);
        let text = format!("#{} {} ({})", session.id, session.name, session.requests);
        if ui
            .selectable_label(expanded, text)
            .on_hover_text(format!(
                "{} — {} · {} · {} requests",
                session.name,
                session.source,
                session.model.as_deref().unwrap_or("?"),
                session.requests
            ))
            .clicked()
        {
            open = Some(session.id);
        }
        if expanded {
            for request in &browser.requests {
                let status = request.status.map_or(String::new(), |s| format!(" · {s}"));
                let text = format!(
                    "   turn {} · {} B{status}",
                    request.position, request.body_bytes
                );
                if ui
                    .selectable_label(false, text)
                    .on_hover_text("Load this request's exact body into the form")
                    .clicked()
                {
                    load = Some(request.id);
                }
            }
        }
    }
    if let Some(id) = open {
        browser.open(&ctx, id);
    }
    if let Some(id) = load {
        browser.load_body(&ctx, id);
    }
}
