//! The top bar, two fixed rows so it never wraps or jumps: file actions, undo/redo, Send and
//! theme; then the compile inputs — model, provider, dialect, rules, auth — which are the
//! prompt's own target (saved in its file).

use egui::Ui;

use super::UiState;
use crate::app::settings::{ExportKind, ThemeChoice};
use crate::app::target_view::target_with_preset;
use crate::app::{AppCommand, AppState, CommandSender, PromptEdit};
use crate::core::prompt::{AuthMode, CompileTarget, Dialect};
use crate::core::rules::CompileRules;

/// Draws the top bar.
pub fn top_bar_ui(ui: &mut Ui, state: &AppState, ui_state: &mut UiState, tx: &CommandSender) {
    ui.horizontal(|ui| actions_row(ui, state, tx));
    ui.horizontal(|ui| {
        model_picker(ui, state, &mut ui_state.model_text, tx);
        provider_picker(ui, state, tx);
        dialect_picker(ui, state, tx);
        rules_picker(ui, state, tx);
        auth_picker(ui, state, tx);
    });
}

fn actions_row(ui: &mut Ui, state: &AppState, tx: &CommandSender) {
    ui.strong("promptwire");
    ui.separator();
    let buttons: [(&str, &str, AppCommand); 5] = [
        (
            "Open…",
            "Open a Prompt file or a captured body (Ctrl+O)",
            AppCommand::ShowFileDialog(None, 0),
        ),
        ("Save", "Save the Prompt file (Ctrl+S)", AppCommand::Save),
        (
            "Save as…",
            "Save the Prompt file under a new name",
            AppCommand::ShowFileDialog(Some(ExportKind::Prompt), 0),
        ),
        (
            "Import body…",
            "Paste a captured request body (or pick its file) and turn it into an editable prompt",
            AppCommand::ShowImportDialog,
        ),
        (
            "Export…",
            "Save the first column's exact bytes (Ctrl+E)",
            AppCommand::ShowFileDialog(Some(ExportKind::Json), 0),
        ),
    ];
    for (text, tip, command) in buttons {
        if ui.button(text).on_hover_text(tip).clicked() {
            tx.send(command);
        }
    }
    ui.separator();
    let undo = ui
        .add_enabled(!state.history.undo.is_empty(), egui::Button::new("Undo"))
        .on_hover_text("Undo the last edit (Ctrl+Z)");
    if undo.clicked() {
        tx.send(AppCommand::Undo);
    }
    let redo = ui
        .add_enabled(!state.history.redo.is_empty(), egui::Button::new("Redo"))
        .on_hover_text("Redo (Ctrl+Shift+Z)");
    if redo.clicked() {
        tx.send(AppCommand::Redo);
    }
    ui.separator();
    super::send_bar::send_buttons(ui, state, tx);
    ui.separator();
    theme_picker(ui, state, tx);
}

fn model_picker(ui: &mut Ui, state: &AppState, model_text: &mut String, tx: &CommandSender) {
    let label = ui.label("Model");
    let current = state.prompt.model.clone();
    egui::ComboBox::from_id_salt("model_picker")
        .selected_text(&current)
        .width(140.0)
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
                .desired_width(100.0),
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
    let record = &state.prompt.compile;
    let current = state.matching_preset();
    egui::ComboBox::from_id_salt("provider_picker")
        .selected_text(state.provider_label())
        .show_ui(ui, |ui| {
            for (i, preset) in state.settings.providers.iter().enumerate() {
                let text = format!("{} — {}", preset.label, preset.provider.base_url);
                if ui.selectable_label(current == Some(i), text).clicked() {
                    tx.edit(PromptEdit::Target(target_with_preset(record, preset)));
                }
            }
        })
        .response
        .labelled_by(label.id)
        .on_hover_text(format!(
            "Where the request goes ({}): OpenAI, Azure, or a compatible endpoint. Saved in the Prompt file; the base URL is in the sidebar",
            state.effective_base_url()
        ));
}

fn dialect_picker(ui: &mut Ui, state: &AppState, tx: &CommandSender) {
    let label = ui.label("Dialect");
    let record = &state.prompt.compile;
    let auto_text = if state.primary_is_lite() {
        "auto (Lite)"
    } else {
        "auto (standard)"
    };
    egui::ComboBox::from_id_salt("dialect_picker")
        .selected_text(match record.dialect {
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
                if ui.selectable_label(record.dialect == d, text).clicked() && record.dialect != d
                {
                    tx.edit(PromptEdit::Target(CompileTarget {
                        dialect: d,
                        ..record.clone()
                    }));
                }
            }
        })
        .response
        .labelled_by(label.id)
        .on_hover_text("The request's dialect (saved in the Prompt file); auto follows the model's use_responses_lite");
}

fn rules_picker(ui: &mut Ui, state: &AppState, tx: &CommandSender) {
    let label = ui.label("Rules");
    let record = &state.prompt.compile;
    egui::ComboBox::from_id_salt("rules_picker")
        .selected_text(&record.rules)
        .show_ui(ui, |ui| {
            for name in CompileRules::PRESETS {
                if ui.selectable_label(record.rules == name, name).clicked() && record.rules != name
                {
                    tx.edit(PromptEdit::Target(CompileTarget {
                        rules: name.to_string(),
                        ..record.clone()
                    }));
                }
            }
        })
        .response
        .labelled_by(label.id)
        .on_hover_text(
            "Which Codex behaviour to compile like (saved in the Prompt file): codex-0.169 is what Codex CLI 0.169 sends; seed is the documented earlier behaviour",
        );
}

fn auth_picker(ui: &mut Ui, state: &AppState, tx: &CommandSender) {
    let label = ui.label("Auth");
    let record = &state.prompt.compile;
    let text = |mode: AuthMode| match mode {
        AuthMode::ApiKey => "API key",
        AuthMode::Chatgpt => "ChatGPT sign-in",
    };
    egui::ComboBox::from_id_salt("auth_picker")
        .selected_text(text(record.auth))
        .show_ui(ui, |ui| {
            for mode in [AuthMode::ApiKey, AuthMode::Chatgpt] {
                if ui.selectable_label(record.auth == mode, text(mode)).clicked()
                    && record.auth != mode
                {
                    tx.edit(PromptEdit::Target(CompileTarget {
                        auth: mode,
                        ..record.clone()
                    }));
                }
            }
        })
        .response
        .labelled_by(label.id)
        .on_hover_text(
            "How the client signs in (saved in the Prompt file); ChatGPT sign-in makes OpenAI request bodies zstd-compressed",
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
