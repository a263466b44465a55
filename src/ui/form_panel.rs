//! The Prompt form (centre): base instructions, reasoning/verbosity/output settings, tools,
//! input items and (collapsed, last) the prompt-cache options. Text buffers live in the form
//! state so invalid JSON can be shown with its line and column while the last good prompt keeps
//! compiling.

use egui::Ui;

use super::UiState;
use super::widgets::{error_line, labelled_line, labelled_multiline, parse_json, setting_picker};
use super::{items_panel, tools_panel};
use crate::app::{AppState, CommandSender, PromptEdit};
use crate::core::prompt::CacheMode;

/// Text buffers of the free-text settings (so invalid JSON can be shown without being applied).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FormBuffers {
    /// Output schema JSON text.
    pub schema: String,
    /// The schema value the buffer shows (compared by value to notice changes made elsewhere).
    pub schema_of: Option<Option<serde_json::Value>>,
    /// Parse error of the schema text.
    pub schema_error: Option<String>,
    /// Long base instructions are shown whole (in a box of bounded height), not as a preview.
    pub instructions_expanded: bool,
}

/// Base instructions longer than this many lines (or [`LONG_INSTRUCTION_CHARS`]) show as a
/// preview with their size and Expand, so the tools and items stay in reach.
pub const LONG_INSTRUCTION_LINES: usize = 8;
/// See [`LONG_INSTRUCTION_LINES`].
pub const LONG_INSTRUCTION_CHARS: usize = 1_200;
/// Lines of the preview of long base instructions.
const PREVIEW_LINES: usize = 3;
/// Height of the expanded base instructions' box (it scrolls inside).
const EXPANDED_HEIGHT: f32 = 260.0;

/// Draws the whole form.
pub fn form_ui(ui: &mut Ui, state: &AppState, ui_state: &mut UiState, tx: &CommandSender) {
    refill_buffers(state, &mut ui_state.form);
    egui::ScrollArea::vertical()
        .id_salt("form_scroll")
        .auto_shrink([false, false])
        .show(ui, |ui| {
            egui::CollapsingHeader::new("Instructions and settings")
                .id_salt("settings_section")
                .default_open(true)
                .show(ui, |ui| settings_ui(ui, state, &mut ui_state.form, tx));
            egui::CollapsingHeader::new(format!("Tools ({})", state.prompt.tools.len()))
                .id_salt("tools_section")
                .default_open(true)
                .show(ui, |ui| {
                    tools_panel::tools_ui(ui, state, &mut ui_state.tools, tx)
                });
            egui::CollapsingHeader::new(format!("Input items ({})", state.prompt.input.len()))
                .id_salt("items_section")
                .default_open(true)
                .show(ui, |ui| {
                    items_panel::items_ui(ui, state, &mut ui_state.items, tx)
                });
            // Open when the body has such fields (an SDK app's `temperature`): never hidden.
            let opens = super::other_fields::opens(state, &mut ui_state.other_fields);
            egui::CollapsingHeader::new(super::other_fields::title(state))
                .id_salt("other_fields_section")
                .default_open(opens)
                .open(opens.then_some(true))
                .show(ui, |ui| {
                    super::other_fields::other_fields_ui(ui, state, &mut ui_state.other_fields, tx)
                });
            // Last, collapsed: opening it moves nothing the other sections show.
            egui::CollapsingHeader::new("Prompt cache")
                .id_salt("prompt_cache_section")
                .default_open(false)
                .show(ui, |ui| prompt_cache_ui(ui, state, tx));
        });
}

/// Fills the schema buffer from the prompt when the schema changed elsewhere (load, undo) and
/// the buffer holds no error the user is still fixing.
fn refill_buffers(state: &AppState, form: &mut FormBuffers) {
    let current = &state.prompt.output_schema;
    if form.schema_of.as_ref() != Some(current) && form.schema_error.is_none() {
        form.schema = current
            .as_ref()
            .and_then(|s| serde_json::to_string_pretty(s).ok())
            .unwrap_or_default();
        form.schema_of = Some(current.clone());
    }
}

/// True when `text` is long enough to be shown collapsed.
pub fn is_long_instruction(text: &str) -> bool {
    text.len() > LONG_INSTRUCTION_CHARS || text.lines().count() > LONG_INSTRUCTION_LINES
}

/// The base instructions: a text box; long ones (a real Codex body's 20 KB) as a preview of
/// their first lines with their size and Expand, expanded into a box of bounded height that
/// scrolls inside, so what follows stays a scroll away, not pages below.
fn instructions_ui(ui: &mut Ui, state: &AppState, form: &mut FormBuffers, tx: &CommandSender) {
    const TIP: &str = "The system prompt: top-level `instructions`, a developer message, or the Lite prefix, depending on rules and dialect";
    let text = &state.prompt.base_instructions;
    if !is_long_instruction(text) {
        let mut instructions = text.clone();
        if labelled_multiline(ui, "Base instructions", &mut instructions, 4, false, TIP) {
            tx.edit(PromptEdit::BaseInstructions(instructions));
        }
        return;
    }
    let size = format!(
        "{} characters · {} lines",
        crate::core::format::grouped(text.chars().count() as u64),
        crate::core::format::grouped(text.lines().count() as u64)
    );
    let label = ui.horizontal(|ui| {
        let label = ui.label("Base instructions");
        ui.weak(&size);
        let (button, tip) = if form.instructions_expanded {
            ("Collapse", "Show the first lines only")
        } else {
            (
                "Expand",
                "Show and edit the whole text (it scrolls inside its box)",
            )
        };
        if ui.small_button(button).on_hover_text(tip).clicked() {
            form.instructions_expanded = !form.instructions_expanded;
        }
        label
    });
    let label = label.inner;
    if form.instructions_expanded {
        egui::ScrollArea::vertical()
            .id_salt("instructions_scroll")
            .max_height(EXPANDED_HEIGHT)
            .auto_shrink([false, true])
            .show(ui, |ui| {
                let mut instructions = text.clone();
                let edited = ui
                    .add(
                        egui::TextEdit::multiline(&mut instructions)
                            .desired_rows(12)
                            .desired_width(f32::INFINITY),
                    )
                    .labelled_by(label.id)
                    .on_hover_text(TIP);
                if edited.changed() {
                    tx.edit(PromptEdit::BaseInstructions(instructions));
                }
            });
    } else {
        let preview: Vec<String> = text
            .lines()
            .take(PREVIEW_LINES)
            .map(|line| line.chars().take(200).collect())
            .collect();
        let response = egui::Frame::group(ui.style())
            .show(ui, |ui| {
                ui.set_width(ui.available_width());
                for line in preview {
                    ui.add(
                        egui::Label::new(egui::RichText::new(line).weak())
                            .truncate()
                            .selectable(false),
                    );
                }
                ui.weak("…");
            })
            .response
            .interact(egui::Sense::click())
            .on_hover_text("Click (or Expand) to show and edit the whole text");
        if response.clicked() {
            form.instructions_expanded = true;
        }
    }
}

fn settings_ui(ui: &mut Ui, state: &AppState, form: &mut FormBuffers, tx: &CommandSender) {
    instructions_ui(ui, state, form, tx);
    let model = state.catalog.lookup(&state.prompt.model);
    // One setting per row: a grid stays readable at any width (wrapped rows cut pickers off).
    egui::Grid::new("settings_grid")
        .num_columns(2)
        .show(ui, |ui| {
            let mut efforts: Vec<&str> = vec![
                "none", "minimal", "low", "medium", "high", "xhigh", "max", "ultra",
            ];
            if !model.supported_reasoning_efforts.is_empty() {
                efforts.retain(|e| {
                    *e == "none"
                        || *e == "minimal"
                        || model.supported_reasoning_efforts.iter().any(|m| m == e)
                });
            }
            if let Some(s) = setting_picker(
                ui,
                "Effort",
                "effort_picker",
                &state.prompt.reasoning.effort,
                &efforts,
                "reasoning.effort; model default uses the catalog's default_reasoning_level",
            ) {
                tx.edit(PromptEdit::Effort(s));
            }
            ui.end_row();
            if let Some(s) = setting_picker(
                ui,
                "Summary",
                "summary_picker",
                &state.prompt.reasoning.summary,
                &["auto", "concise", "detailed", "none"],
                "reasoning.summary; `none` is not sent",
            ) {
                tx.edit(PromptEdit::Summary(s));
            }
            ui.end_row();
            if let Some(s) = setting_picker(
                ui,
                "Verbosity",
                "verbosity_picker",
                &state.prompt.verbosity,
                &["low", "medium", "high"],
                "text.verbosity; only sent when the model supports verbosity",
            ) {
                tx.edit(PromptEdit::Verbosity(s));
            }
            ui.end_row();
            let label = ui.label("Parallel tool calls");
            let current = state.prompt.parallel_tool_calls;
            egui::ComboBox::from_id_salt("parallel_picker")
                .selected_text(match current {
                    None => "model default",
                    Some(true) => "on",
                    Some(false) => "off",
                })
                .show_ui(ui, |ui| {
                    for (v, text) in [
                        (None, "model default"),
                        (Some(true), "on"),
                        (Some(false), "off"),
                    ] {
                        if ui.selectable_label(current == v, text).clicked() && current != v {
                            tx.edit(PromptEdit::Parallel(v));
                        }
                    }
                })
                .response
                .labelled_by(label.id)
                .on_hover_text("parallel_tool_calls; always false under Lite");
            ui.end_row();
            let label = ui.label("Service tier");
            let tier = state.prompt.service_tier.clone();
            egui::ComboBox::from_id_salt("tier_picker")
                .selected_text(tier.as_deref().unwrap_or("none"))
                .show_ui(ui, |ui| {
                    for v in [None, Some("priority"), Some("flex")] {
                        let v = v.map(String::from);
                        if ui
                            .selectable_label(tier == v, v.as_deref().unwrap_or("none"))
                            .clicked()
                            && tier != v
                        {
                            tx.edit(PromptEdit::ServiceTier(v.clone()));
                        }
                    }
                })
                .response
                .labelled_by(label.id)
                .on_hover_text("service_tier; sent only if the model offers the tier");
            ui.end_row();
        });
    let mut key = state.prompt.prompt_cache_key.clone().unwrap_or_default();
    if labelled_line(
        ui,
        "Prompt cache key",
        &mut key,
        "defaults to the thread id",
        "prompt_cache_key: routes requests to the same cache",
    ) {
        let key = (!key.trim().is_empty()).then_some(key);
        tx.edit(PromptEdit::CacheKey(key));
    }
    if labelled_multiline(
        ui,
        "Output schema (JSON Schema object; empty for none)",
        &mut form.schema,
        3,
        true,
        "text.format with name codex_output_schema",
    ) {
        if form.schema.trim().is_empty() {
            form.schema_error = None;
            form.schema_of = Some(None);
            tx.edit(PromptEdit::OutputSchema(None));
        } else {
            match parse_json(&form.schema) {
                Ok(v) if v.is_object() => {
                    form.schema_error = None;
                    // Keep the user's text as typed (no refill from the edit it causes).
                    form.schema_of = Some(Some(v.clone()));
                    tx.edit(PromptEdit::OutputSchema(Some(v)));
                }
                Ok(_) => {
                    form.schema_error = Some("the output schema must be a JSON object".to_string())
                }
                Err(e) => form.schema_error = Some(e),
            }
        }
    }
    if let Some(e) = &form.schema_error {
        error_line(
            ui,
            &format!("Output schema: {e} (the last valid schema is still compiled)"),
        );
    }
    let mut strict = state.prompt.output_schema_strict;
    if ui
        .checkbox(&mut strict, "Strict schema")
        .on_hover_text("text.format.strict")
        .changed()
    {
        tx.edit(PromptEdit::Strict(strict));
    }
}

/// `prompt_cache_options` (mode, ttl, comparison response id) and `prompt_cache_retention`;
/// each left off the request while unset. The per-block breakpoints are in the item editor.
fn prompt_cache_ui(ui: &mut Ui, state: &AppState, tx: &CommandSender) {
    let options = &state.prompt.prompt_cache_options;
    egui::Grid::new("prompt_cache_grid")
        .num_columns(2)
        .show(ui, |ui| {
            let label = ui.label("Cache mode");
            let mode = options.mode;
            egui::ComboBox::from_id_salt("cache_mode_picker")
                .selected_text(mode.map_or("not set", CacheMode::id))
                .show_ui(ui, |ui| {
                    for v in [None, Some(CacheMode::Implicit), Some(CacheMode::Explicit)] {
                        if ui
                            .selectable_label(mode == v, v.map_or("not set", CacheMode::id))
                            .clicked()
                            && mode != v
                        {
                            let mut next = options.clone();
                            next.mode = v;
                            tx.edit(PromptEdit::CacheOptions(next));
                        }
                    }
                })
                .response
                .labelled_by(label.id)
                .on_hover_text(
                    "prompt_cache_options.mode: explicit caches only at the content blocks marked as breakpoints",
                );
            ui.end_row();
            let label = ui.label("Retention");
            let retention = state.prompt.prompt_cache_retention.clone();
            egui::ComboBox::from_id_salt("cache_retention_picker")
                .selected_text(retention.as_deref().unwrap_or("not set"))
                .show_ui(ui, |ui| {
                    for v in [None, Some("in_memory"), Some("24h")] {
                        let v = v.map(String::from);
                        if ui
                            .selectable_label(retention == v, v.as_deref().unwrap_or("not set"))
                            .clicked()
                            && retention != v
                        {
                            tx.edit(PromptEdit::CacheRetention(v.clone()));
                        }
                    }
                })
                .response
                .labelled_by(label.id)
                .on_hover_text(
                    "prompt_cache_retention (prefix-cache models; deprecated for breakpoint models)",
                );
            ui.end_row();
        });
    let mut ttl = options.ttl.clone().unwrap_or_default();
    if labelled_line(
        ui,
        "Cache TTL",
        &mut ttl,
        "30m (server default)",
        "prompt_cache_options.ttl, e.g. 30m or 12h",
    ) {
        let mut next = options.clone();
        next.ttl = (!ttl.trim().is_empty()).then_some(ttl);
        tx.edit(PromptEdit::CacheOptions(next));
    }
    let mut comparison = options.comparison_response_id.clone().unwrap_or_default();
    if labelled_line(
        ui,
        "Compare with response",
        &mut comparison,
        "resp_… (asks the server why it missed)",
        "prompt_cache_options.comparison_response_id: the response then carries prompt_cache_diagnostics",
    ) {
        let mut next = options.clone();
        next.comparison_response_id = (!comparison.trim().is_empty()).then_some(comparison);
        tx.edit(PromptEdit::CacheOptions(next));
    }
}
