//! "Other body fields" in the Prompt form: the top-level body fields the form has no control for
//! (`temperature`, `top_p`, `max_output_tokens` from an SDK app's body, kept by import in the
//! Prompt's `body_overrides`), each shown with its JSON value, editable (a value that does not
//! parse says why, under it, and is not applied), removable; a field can be added by name. The
//! fields the body leaves out (`body_omit`) are listed beside them. Without this, an imported
//! `temperature` was a hidden override nobody could see or change.

use std::collections::BTreeMap;

use egui::{RichText, TextEdit, Ui};

use super::widgets::{error_line, note_line, parse_json};
use crate::app::{AppState, CommandSender, PromptEdit};
use crate::core::json::JsonMap;

/// The section's text buffers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OtherFieldsUi {
    /// Each field's value as typed.
    texts: BTreeMap<String, String>,
    /// Why a typed value does not parse, by field.
    errors: BTreeMap<String, String>,
    /// The overrides the texts show (compared by value to notice changes made elsewhere).
    shown: Option<JsonMap>,
    /// The name of a field being added.
    new_name: String,
    /// Its value being typed.
    new_value: String,
    /// Why the field being added cannot be.
    new_error: Option<String>,
    /// The prompt had such fields last frame.
    had_fields: bool,
}

/// True on the frame the prompt gains other fields (an import brought `temperature`): the
/// section opens then, so they are never hidden.
pub fn opens(state: &AppState, fui: &mut OtherFieldsUi) -> bool {
    let prompt = &state.prompt;
    let any = !prompt.body_overrides.is_empty() || !prompt.body_omit.is_empty();
    let opens = any && !fui.had_fields;
    fui.had_fields = any;
    opens
}

/// The section's title (`Other body fields (2)`).
pub fn title(state: &AppState) -> String {
    format!(
        "Other body fields ({})",
        state.prompt.body_overrides.len() + state.prompt.body_omit.len()
    )
}

/// Draws the section.
pub fn other_fields_ui(ui: &mut Ui, state: &AppState, fui: &mut OtherFieldsUi, tx: &CommandSender) {
    let overrides = &state.prompt.body_overrides;
    if fui.shown.as_ref() != Some(overrides) && fui.errors.is_empty() {
        fui.texts = overrides
            .iter()
            .map(|(k, v)| (k.clone(), v.to_string()))
            .collect();
        fui.shown = Some(overrides.clone());
    }
    note_line(
        ui,
        "Top-level fields sent as written, over what the rules compile (an SDK app's temperature…)",
    );
    let mut changed: Option<JsonMap> = None;
    egui::Grid::new("other_fields_grid")
        .num_columns(3)
        .show(ui, |ui| {
            for (name, value) in overrides {
                let label = ui.label(RichText::new(name).monospace());
                let text = fui
                    .texts
                    .entry(name.clone())
                    .or_insert_with(|| value.to_string());
                let edit = ui
                    .add(
                        TextEdit::singleline(text)
                            .code_editor()
                            .desired_width(160.0),
                    )
                    .labelled_by(label.id);
                if edit.changed() {
                    match parse_json(text) {
                        Ok(parsed) => {
                            fui.errors.remove(name);
                            let mut map = overrides.clone();
                            map.insert(name.clone(), parsed);
                            changed = Some(map);
                        }
                        Err(e) => {
                            fui.errors.insert(name.clone(), e);
                        }
                    }
                }
                if ui
                    .small_button("×")
                    .on_hover_text(format!(
                        "Stop sending {name} (the rules' value, if any, is sent)"
                    ))
                    .clicked()
                {
                    let mut map = overrides.clone();
                    map.shift_remove(name);
                    fui.errors.remove(name);
                    changed = Some(map);
                }
                ui.end_row();
                if let Some(e) = fui.errors.get(name) {
                    ui.label("");
                    error_line(ui, e);
                    ui.end_row();
                }
            }
        });
    ui.horizontal_wrapped(|ui| {
        let label = ui.label("add field");
        ui.add(
            TextEdit::singleline(&mut fui.new_name)
                .hint_text("temperature")
                .desired_width(100.0)
                .char_limit(100),
        )
        .labelled_by(label.id);
        let label = ui.label("field value");
        ui.add(
            TextEdit::singleline(&mut fui.new_value)
                .hint_text("0.2")
                .code_editor()
                .desired_width(80.0),
        )
        .labelled_by(label.id);
        if ui.button("Add this field").clicked() {
            let name = fui.new_name.trim().to_string();
            match (name.is_empty(), parse_json(&fui.new_value)) {
                (true, _) => fui.new_error = Some("name the field".to_string()),
                (false, Err(e)) => fui.new_error = Some(e),
                (false, Ok(value)) => {
                    let mut map = overrides.clone();
                    map.insert(name, value);
                    changed = Some(map);
                    fui.new_name.clear();
                    fui.new_value.clear();
                    fui.new_error = None;
                }
            }
        }
    });
    if let Some(e) = &fui.new_error {
        error_line(ui, e);
    }
    if !state.prompt.body_omit.is_empty() {
        note_line(
            ui,
            &format!(
                "Left out of the body: {}",
                state.prompt.body_omit.join(", ")
            ),
        );
    }
    if let Some(map) = changed {
        tx.edit(PromptEdit::BodyOverrides(map));
    }
}
