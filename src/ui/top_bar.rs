//! The top bar: model, provider, dialect and rules pickers, file actions, and Send.

use egui::Ui;

use super::UiState;
use crate::app::settings::{ExportKind, ThemeChoice};
use crate::app::{AppCommand, AppState, CommandSender, PromptEdit};
use crate::core::prompt::Dialect;
use crate::core::rules::CompileRules;

/// Draws the top bar in one row (scrolling sideways when the window is narrow, never wrapping).
pub fn top_bar_ui(ui: &mut Ui, state: &AppState, ui_state: &mut UiState, tx: &CommandSender) {
    ui.horizontal(|ui| top_bar_row(ui, state, ui_state, tx));
}

fn top_bar_row(ui: &mut Ui, state: &AppState, ui_state: &mut UiState, tx: &CommandSender) {
    {
        ui.strong("promptwire");
        ui.separator();
        model_picker(ui, state, &mut ui_state.model_text, tx);
        provider_picker(ui, state, tx);
        dialect_picker(ui, state, tx);
        rules_picker(ui, state, tx);
        ui.separator();
        if ui
            .button("Open…")
            .on_hover_text("Open a Prompt file or a captured body (Ctrl+O)")
            .clicked()
        {
            tx.send(AppCommand::ShowFileDialog(None, 0));
        }
        if ui
            .button("Save")
            .on_hover_text("Save the Prompt file (Ctrl+S)")
            .clicked()
        {
            tx.send(AppCommand::Save);
        }
        if ui
            .button("Save as…")
            .on_hover_text("Save the Prompt file under a new name")
            .clicked()
        {
            tx.send(AppCommand::ShowFileDialog(Some(ExportKind::Prompt), 0));
        }
        if ui
            .button("Import body…")
            .on_hover_text("Paste a captured request body and turn it into an editable prompt")
            .clicked()
        {
            tx.send(AppCommand::ShowImportDialog);
        }
        if ui
            .button("Export…")
            .on_hover_text("Save the first column's compiled body as JSON (Ctrl+E)")
            .clicked()
        {
            tx.send(AppCommand::ShowFileDialog(Some(ExportKind::Json), 0));
        }
        ui.separator();
        let send = ui
            .add_enabled(false, egui::Button::new("Send"))
            .on_disabled_hover_text(
                "Send the request and watch the stream (Ctrl+Enter) — arrives with the streaming timeline",
            );
        if send.clicked() {
            tx.send(AppCommand::Send);
        }
        ui.separator();
        theme_picker(ui, state, tx);
    }
}

fn model_picker(ui: &mut Ui, state: &AppState, model_text: &mut String, tx: &CommandSender) {
    let label = ui.label("Model");
    let current = state.prompt.model.clone();
    egui::ComboBox::from_id_salt("model_picker")
        .selected_text(&current)
        .width(150.0)
        .show_ui(ui, |ui| {
            for model in &state.catalog.models {
                let mut text = model
                    .display_name
                    .as_deref()
                    .map_or(model.slug.clone(), |d| format!("{} ({d})", model.slug));
                if model.use_responses_lite {
                    text.push_str(" · Lite");
                }
                if ui.selectable_label(current == model.slug, text).clicked() {
                    tx.send(AppCommand::Edit(Box::new(PromptEdit::Model(
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
    let edit = ui
        .add(
            egui::TextEdit::singleline(model_text)
                .hint_text("other model…")
                .desired_width(120.0),
        )
        .on_hover_text(
            "Any model name; unknown names use Codex's fallback capabilities (Enter to apply)",
        );
    if edit.lost_focus()
        && ui.input(|i| i.key_pressed(egui::Key::Enter))
        && !model_text.trim().is_empty()
    {
        tx.edit(PromptEdit::Model(model_text.trim().to_string()));
        model_text.clear();
    }
}

fn provider_picker(ui: &mut Ui, state: &AppState, tx: &CommandSender) {
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
                    tx.send(AppCommand::SetProvider(i));
                }
            }
        })
        .response
        .labelled_by(label.id)
        .on_hover_text("Where the request goes: OpenAI, Azure, or a compatible endpoint (Ollama, LM Studio, vLLM, custom)");
}

fn dialect_picker(ui: &mut Ui, state: &AppState, tx: &CommandSender) {
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
                    tx.send(AppCommand::SetDialect(d));
                }
            }
        })
        .response
        .labelled_by(label.id)
        .on_hover_text("The request's dialect; auto follows the model's use_responses_lite");
}

fn rules_picker(ui: &mut Ui, state: &AppState, tx: &CommandSender) {
    let label = ui.label("Rules");
    egui::ComboBox::from_id_salt("rules_picker")
        .selected_text(&state.settings.rules)
        .show_ui(ui, |ui| {
            for name in CompileRules::PRESETS {
                if ui
                    .selectable_label(state.settings.rules == name, name)
                    .clicked()
                {
                    tx.send(AppCommand::SetRules(name.to_string()));
                }
            }
        })
        .response
        .labelled_by(label.id)
        .on_hover_text(
            "codex-0.169: what Codex CLI 0.169 sends; seed: the documented earlier behaviour",
        );
}

fn theme_picker(ui: &mut Ui, state: &AppState, tx: &CommandSender) {
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
                    tx.send(AppCommand::SetTheme(t));
                }
            }
        })
        .response
        .labelled_by(label.id)
        .on_hover_text("Follow the system theme, or force light or dark");
}
