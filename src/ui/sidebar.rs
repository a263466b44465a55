//! The left panel: bundled example prompts, recently opened files, provider import from a Codex
//! `config.toml`, and the recorded sessions (the one sessions model, `app::sessions`, which the
//! Sessions tab reads too), with the session Send records into (`SendState::into`: changed
//! only by "Send into…", "New session" or a send; browsing the list never changes it).

use egui::Ui;

use super::UiState;
use crate::app::command::EXAMPLES;
use crate::app::send::SendCommand;
use crate::app::{AppCommand, AppState, CommandSender, PromptEdit};
use crate::ui::widgets::count;

/// Draws the sidebar.
pub fn sidebar_ui(ui: &mut Ui, state: &AppState, ui_state: &mut UiState, tx: &CommandSender) {
    egui::ScrollArea::vertical()
        .id_salt("sidebar_scroll")
        .show(ui, |ui| {
            ui.heading("Sessions");
            sessions_ui(ui, state, tx);
            super::imports_panel::codex_sessions_ui(ui, state, &mut ui_state.imports, tx);
            ui.separator();
            ui.heading("Examples");
            for (name, _) in EXAMPLES {
                if ui
                    .selectable_label(false, name)
                    .on_hover_text("Load this example prompt into the form")
                    .clicked()
                {
                    tx.send(AppCommand::LoadExample(name));
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
                        tx.send(AppCommand::Open(path.clone()));
                    }
                }
            }
            ui.separator();
            ui.heading("Providers");
            let mut url = state.effective_base_url();
            if super::widgets::labelled_line(
                ui,
                "Base URL",
                &mut url,
                "https://…/v1",
                "Base URL of the prompt's provider (saved in the Prompt file); requests go to {base}/responses",
            ) {
                let default_url =
                    crate::core::provider::Provider::preset(state.prompt.compile.provider).base_url;
                let url = url.trim().to_string();
                tx.edit(PromptEdit::BaseUrl(
                    (!url.is_empty() && url != default_url).then_some(url),
                ));
            }
            let env_key = state
                .matching_preset()
                .and_then(|i| state.settings.providers[i].provider.env_key.clone())
                .or_else(|| {
                    crate::core::provider::Provider::preset(state.prompt.compile.provider).env_key
                });
            api_key_variable(ui, state, env_key, tx);
            super::provider_headers::headers_ui(ui, state, &mut ui_state.send.headers, tx);
            super::limits_window::limits_button(ui, state, &mut ui_state.limits_open);
            let path = &mut ui_state.config_path;
            super::widgets::labelled_line(
                ui,
                "config.toml",
                path,
                "~/.codex/config.toml",
                "Import [model_providers.*] from a Codex config file",
            );
            if ui
                .button("Import providers")
                .on_hover_text("Add the Responses providers of that config.toml to the picker")
                .clicked()
                && !path.trim().is_empty()
            {
                tx.send(AppCommand::ImportCodexConfig(expand_home(path.trim())));
            }
            ui.separator();
            ui.heading("Model catalog");
            super::imports_panel::catalog_ui(ui, state, &mut ui_state.imports, tx);
        });
}

/// The environment variable Send reads the API key from (saved in the Prompt file as the
/// target's `api_key_env` when it differs from the provider's; the key itself is never stored).
fn api_key_variable(ui: &mut Ui, state: &AppState, preset: Option<String>, tx: &CommandSender) {
    let record = &state.prompt.compile;
    let mut name = record
        .api_key_env
        .clone()
        .or(preset.clone())
        .unwrap_or_default();
    if super::widgets::labelled_line(
        ui,
        "API key variable",
        &mut name,
        "OPENAI_API_KEY",
        "Send reads the API key from this environment variable (never stored)",
    ) {
        let name = name.trim().to_string();
        let mut target = record.clone();
        target.api_key_env = (!name.is_empty() && Some(&name) != preset.as_ref()).then_some(name);
        tx.edit(PromptEdit::Target(target));
    }
}

/// `~/x` → `$HOME/x`.
// TODO(types-lints): the UI should be handed HOME by the app, not read it.
#[allow(
    clippy::disallowed_methods,
    reason = "a path typed with `~/` means the user's home; HOME is only in the environment"
)]
pub(super) fn expand_home(path: &str) -> std::path::PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => std::path::Path::new(&home).join(rest),
        _ => std::path::PathBuf::from(path),
    }
}

/// "Send into…": the explicit choice of the session the next Send records into — a new one, the
/// session open here, or one of the listed page.
fn send_into_menu(ui: &mut Ui, state: &AppState, tx: &CommandSender) {
    let into = state.send.into;
    ui.menu_button("Send into…", |ui| {
        ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Truncate);
        ui.set_max_width(320.0);
        let choose = |ui: &mut Ui, target: Option<i64>, text: String| {
            if ui.selectable_label(into == target, text).clicked() {
                tx.send(AppCommand::SendBar(SendCommand::Into(target)));
                ui.close();
            }
        };
        choose(ui, None, "a new session".to_string());
        for session in &state.sessions.sessions {
            let text = format!("#{} {}", session.id, super::sessions::shown_name(session));
            choose(ui, Some(session.id), text);
        }
    })
    .response
    .on_hover_text("Choose the session the next Send records into");
}

/// The sessions model's page of sessions and, for the open one, its requests (the Sessions
/// tab shows the same); clicking a request loads its exact body into the form (the one in the
/// form stays selected).
fn sessions_ui(ui: &mut Ui, state: &AppState, tx: &CommandSender) {
    let browser = &state.sessions;
    if browser.db_path.is_none() {
        super::widgets::note_line(ui, "No session database.");
        return;
    }
    if !browser.listed {
        tx.send(AppCommand::RefreshSessions);
    }
    ui.horizontal(|ui| {
        if ui
            .small_button("Refresh")
            .on_hover_text("Read the session list again")
            .clicked()
        {
            tx.send(AppCommand::RefreshSessions);
        }
        if ui
            .small_button("New session")
            .on_hover_text("The next Send starts a new session")
            .clicked()
        {
            tx.send(AppCommand::SendBar(SendCommand::NewSession));
        }
        if browser.loading > 0 {
            ui.spinner();
        }
    });
    // Where the next Send records: the workbench's own choice (browsing never changes it).
    ui.horizontal_wrapped(|ui| {
        super::widgets::note_line(
            ui,
            &state.send.into.map_or_else(
                || "Send starts a new session".to_string(),
                |id| format!("Send adds to session #{id}"),
            ),
        );
        send_into_menu(ui, state, tx);
    });
    if let Some(e) = &browser.error {
        super::widgets::error_line(ui, e);
    }
    if browser.sessions.is_empty() && browser.loading == 0 && browser.listed {
        super::widgets::note_line(ui, "No recorded sessions yet.");
    }
    // One line per session and turn; the full name is in the tooltip.
    ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Truncate);
    for session in &browser.sessions {
        let expanded = browser.open == Some(session.id);
        let text = format!(
            "#{} {} ({})",
            session.id,
            super::sessions::shown_name(session),
            session.requests
        );
        if ui
            .selectable_label(expanded, text)
            .on_hover_text(format!(
                "{} — {} · {} · {}",
                session.name,
                session.source,
                session.model.as_deref().unwrap_or("?"),
                count(u64::try_from(session.requests).unwrap_or(0), "request")
            ))
            .clicked()
        {
            tx.send(AppCommand::OpenSession(session.id));
        }
        if expanded {
            for request in &browser.rows {
                let status = request.status.map_or(String::new(), |s| format!(" · {s}"));
                let text = format!(
                    "   turn {} · {} B{status}",
                    request.position, request.body_bytes
                );
                let loaded = browser.loaded_request == Some(request.id);
                if ui
                    .selectable_label(loaded, text)
                    .on_hover_text("Load this request's exact body into the form")
                    .clicked()
                {
                    tx.send(AppCommand::LoadStoredRequest {
                        session: session.id,
                        request: request.id,
                        position: request.position,
                    });
                }
            }
        }
    }
}
