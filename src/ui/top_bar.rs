//! The top bar: model, provider, dialect and rules pickers, file actions, and Send.

use egui::Ui;

use crate::app::state::{ExportKind, ThemeChoice};
use crate::app::{AppCommand, AppState, PromptEdit};
use crate::core::prompt::Dialect;
use crate::core::rules::CompileRules;

/// Draws the top bar, pushing what the user asked for to `commands`.
pub fn top_bar_ui(ui: &mut Ui, state: &mut AppState, commands: &mut Vec<AppCommand>) {
    ui.horizontal_wrapped(|ui| {
        ui.strong("promptwire");
        ui.separator();
        model_picker(ui, state, commands);
        provider_picker(ui, state, commands);
        dialect_picker(ui, state, commands);
        rules_picker(ui, state, commands);
        ui.separator();
        if ui
            .button("Open…")
            .on_hover_text("Open a Prompt file or a captured body (Ctrl+O)")
            .clicked()
        {
            commands.push(AppCommand::ShowFileDialog(None, 0));
        }
        if ui
            .button("Save")
            .on_hover_text("Save the Prompt file (Ctrl+S)")
            .clicked()
        {
            commands.push(AppCommand::Save);
        }
        if ui
            .button("Save as…")
            .on_hover_text("Save the Prompt file under a new name")
            .clicked()
        {
            commands.push(AppCommand::ShowFileDialog(Some(ExportKind::Prompt), 0));
        }
        if ui
            .button("Import body…")
            .on_hover_text("Paste a captured request body and turn it into an editable prompt")
            .clicked()
        {
            commands.push(AppCommand::ShowImportDialog);
        }
        if ui
            .button("Export…")
            .on_hover_text("Save the first column's compiled body as JSON (Ctrl+E)")
            .clicked()
        {
            commands.push(AppCommand::ShowFileDialog(Some(ExportKind::Json), 0));
        }
        ui.separator();
        let send = ui
            .add_enabled(false, egui::Button::new("Send"))
            .on_disabled_hover_text(
                "Send the request and watch the stream (Ctrl+Enter) — arrives with the streaming timeline",
            );
        if send.clicked() {
            commands.push(AppCommand::Send);
        }
        ui.separator();
        theme_picker(ui, state, commands);
    });
}

fn model_picker(ui: &mut Ui, state: &mut AppState, commands: &mut Vec<AppCommand>) {
    let label = ui.label("Model");
    let current = state.prompt.model.clone();
    egui::ComboBox::from_id_salt("model_picker")
        .selected_text(&current)
        .width(150.0)
        .show_ui(ui, |ui| {
            for model in &state.catalog.models {
                let text = model
                    .display_name
                    .as_deref()
                    .map_or(model.slug.clone(), |d| format!("{} ({d})", model.slug));
                if ui.selectable_label(current == model.slug, text).clicked() {
                    commands.push(AppCommand::Edit(Box::new(PromptEdit::Model(
                        model.slug.clone(),
                    ))));
                }
            }
        })
        .response
        .labelled_by(label.id)
        .on_hover_text(
            "Model from the catalog (assets/models.json); type another name on the right",
        );
    let form = &mut state.settings_form;
    let edit = ui
        .add(
            egui::TextEdit::singleline(&mut form.model)
                .hint_text("other model…")
                .desired_width(120.0),
        )
        .on_hover_text(
            "Any model name; unknown names use Codex's fallback capabilities (Enter to apply)",
        );
    if edit.lost_focus()
        && ui.input(|i| i.key_pressed(egui::Key::Enter))
        && !form.model.trim().is_empty()
    {
        commands.push(AppCommand::Edit(Box::new(PromptEdit::Model(
            form.model.trim().to_string(),
        ))));
        form.model.clear();
    }
}

fn provider_picker(ui: &mut Ui, state: &AppState, commands: &mut Vec<AppCommand>) {
    let label = ui.label("Provider");
    let chosen = state.settings.chosen_provider();
    egui::ComboBox::from_id_salt("provider_picker")
        .selected_text(&chosen.label)
        .show_ui(ui, |ui| {
            for (i, preset) in state.settings.providers.iter().enumerate() {
                let text = format!("{} — {}", preset.label, preset.provider.base_url);
                if ui
                    .selectable_label(i == state.settings.provider, text)
                    .clicked()
                {
                    commands.push(AppCommand::SetProvider(i));
                }
            }
        })
        .response
        .labelled_by(label.id)
        .on_hover_text("Where the request goes: OpenAI, Azure, or a compatible endpoint (Ollama, LM Studio, vLLM, custom)");
}

fn dialect_picker(ui: &mut Ui, state: &AppState, commands: &mut Vec<AppCommand>) {
    let label = ui.label("Dialect");
    let current = state.settings.dialect;
    let auto_text = if state.primary_is_lite() {
        "auto (Lite)"
    } else {
        "auto (standard)"
    };
    egui::ComboBox::from_id_salt("dialect_picker")
        .selected_text(match current {
            Dialect::Auto => auto_text,
            Dialect::Standard => "standard",
            Dialect::Lite => "Lite",
        })
        .show_ui(ui, |ui| {
            for (d, text) in [
                (Dialect::Auto, auto_text),
                (Dialect::Standard, "standard"),
                (Dialect::Lite, "Lite"),
            ] {
                if ui.selectable_label(current == d, text).clicked() {
                    commands.push(AppCommand::SetDialect(d));
                }
            }
        })
        .response
        .labelled_by(label.id)
        .on_hover_text("The request's dialect; auto follows the model's use_responses_lite");
}

fn rules_picker(ui: &mut Ui, state: &AppState, commands: &mut Vec<AppCommand>) {
    let label = ui.label("Rules");
    egui::ComboBox::from_id_salt("rules_picker")
        .selected_text(&state.settings.rules)
        .show_ui(ui, |ui| {
            for name in CompileRules::PRESETS {
                if ui
                    .selectable_label(state.settings.rules == name, name)
                    .clicked()
                {
                    commands.push(AppCommand::SetRules(name.to_string()));
                }
            }
        })
        .response
        .labelled_by(label.id)
        .on_hover_text(
            "codex-0.169: what Codex CLI 0.169 sends; seed: the documented earlier behaviour",
        );
}

fn theme_picker(ui: &mut Ui, state: &AppState, commands: &mut Vec<AppCommand>) {
    let current = state.settings.theme;
    let label = ui.label("Theme");
    egui::ComboBox::from_id_salt("theme_picker")
        .selected_text(format!("{current:?}"))
        .show_ui(ui, |ui| {
            for t in [ThemeChoice::System, ThemeChoice::Light, ThemeChoice::Dark] {
                if ui
                    .selectable_label(current == t, format!("{t:?}"))
                    .clicked()
                {
                    commands.push(AppCommand::SetTheme(t));
                }
            }
        })
        .response
        .labelled_by(label.id)
        .on_hover_text("Follow the system theme, or force light or dark");
}
