//! Tools: the list (add function / namespace / web_search / custom, remove, duplicate, reorder)
//! and an editor for the selected tool — name, description, strictness, and its JSON (schema,
//! grammar, members) with syntax errors shown by line and column.

use egui::{RichText, Ui};
use serde_json::json;

use super::items_panel::leave_question_ui;
use super::list_form::ListForm;
use super::widgets::{
    RowAction, error_line, labelled_line, labelled_multiline, parse_json, row_actions_ui,
};
use crate::app::{AppCommand, AppState, CommandSender, PromptEdit};
use crate::core::tools::ToolSpec;

/// Draws the tools section.
pub fn tools_ui(ui: &mut Ui, state: &AppState, form: &mut ListForm<ToolSpec>, tx: &CommandSender) {
    ui.horizontal_wrapped(|ui| {
        ui.label("Add:");
        let templates = [
            ("function", "A JSON-schema function tool", json!({"type":"function","name":"new_tool","description":"","strict":false,"parameters":{"type":"object","properties":{},"additionalProperties":false}})),
            ("namespace", "A group of function tools", json!({"type":"namespace","name":"mcp__server__","description":"","tools":[]})),
            ("web_search", "The hosted web search tool", json!({"type":"web_search","external_web_access":true})),
            ("custom", "A freeform tool with a grammar", json!({"type":"custom","name":"freeform","description":"","format":{"type":"grammar","syntax":"lark","definition":"start: /.+/"}})),
        ];
        for (name, tip, template) in templates {
            if ui.button(name).on_hover_text(tip).clicked()
                && let Ok(tool) = ToolSpec::from_value(template)
            {
                tx.edit(PromptEdit::AddTool(tool));
            }
        }
    });
    let count = state.prompt.tools.len();
    let selected = state.selected_tool.filter(|&i| i < count);
    form.sync("tool", selected, tx);
    for (i, tool) in state.prompt.tools.iter().enumerate() {
        let text = format!("{i:>2}  {} {}", tool.type_name(), tool.name().unwrap_or(""));
        if ui
            .selectable_label(selected == Some(i), RichText::new(text).monospace())
            .on_hover_text("Select to edit this tool")
            .clicked()
            && selected != Some(i)
        {
            if form.must_ask_before_leaving() {
                form.leave_to = Some(Some(i));
            } else {
                tx.send(AppCommand::SelectTool(Some(i)));
            }
        }
    }
    leave_question_ui(ui, form, "tool", AppCommand::SelectTool, tx);
    let Some(i) = selected else {
        return;
    };
    ui.separator();
    let edit = match row_actions_ui(ui, &format!("Tool {i}"), "tool") {
        Some(RowAction::Up) => Some(PromptEdit::MoveTool(i, -1)),
        Some(RowAction::Down) => Some(PromptEdit::MoveTool(i, 1)),
        Some(RowAction::Duplicate) => Some(PromptEdit::DuplicateTool(i)),
        Some(RowAction::Remove) => Some(PromptEdit::RemoveTool(i)),
        None => None,
    };
    if let Some(edit) = edit {
        tx.edit(edit);
    }
    let Some(original) = state.prompt.tools.get(i) else {
        return;
    };
    let mut tool = original.clone();
    match &mut tool {
        ToolSpec::Function(f) => {
            labelled_line(
                ui,
                "Name",
                &mut f.name,
                "function name",
                "The tool's name (required)",
            );
            labelled_line(
                ui,
                "Description",
                &mut f.description,
                "",
                "Shown to the model",
            );
            ui.checkbox(&mut f.strict, "Strict")
                .on_hover_text("Strict schema adherence");
        }
        ToolSpec::Custom(c) => {
            labelled_line(
                ui,
                "Name",
                &mut c.name,
                "tool name",
                "The tool's name (required)",
            );
            labelled_line(
                ui,
                "Description",
                &mut c.description,
                "",
                "Shown to the model",
            );
        }
        ToolSpec::Namespace(n) => {
            labelled_line(ui, "Name", &mut n.name, "namespace", "The namespace's name");
            labelled_line(
                ui,
                "Description",
                &mut n.description,
                "",
                "Shown to the model",
            );
        }
        _ => {}
    }
    if tool.name().is_some_and(|n| n.trim().is_empty()) {
        form.notice = Some(
            "A tool needs a name: an empty name is not applied (the last name is still compiled)."
                .to_string(),
        );
    } else if tool != *original {
        form.notice = None;
        tx.edit(PromptEdit::SetTool(i, tool));
    }
    if let Some(notice) = &form.notice {
        error_line(ui, notice);
    }
    form.refill(i, original, |tool| {
        serde_json::to_string_pretty(&tool.to_file_value()).unwrap_or_default()
    });
    if labelled_multiline(
        ui,
        "Tool JSON (parameters schema, grammar, members)",
        &mut form.raw,
        8,
        true,
        "The whole tool; edits apply when the JSON is valid and the tool has a name",
    ) {
        match parse_json(&form.raw).and_then(ToolSpec::from_value) {
            Ok(parsed) => {
                if parsed != *original {
                    tx.edit(PromptEdit::SetTool(i, parsed.clone()));
                }
                form.applied(i, parsed);
            }
            Err(e) => form.raw_error = Some(e),
        }
    }
    if let Some(e) = &form.raw_error {
        error_line(ui, &format!("{e} — the last valid tool is still compiled"));
    }
}
