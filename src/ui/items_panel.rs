//! Input items: a virtualized one-line-per-item list (add, remove, duplicate, reorder) and an
//! editor for the selected item — a small typed form for the common types and a raw JSON editor
//! for any item, whose syntax errors show their line and column.

use egui::{RichText, Ui};
use serde_json::Value;

use super::list_form::ListForm;
use super::widgets::{
    RowAction, error_line, labelled_line, labelled_multiline, note_line, parse_json, row_actions_ui,
};
use crate::app::{AppCommand, AppState, CommandSender, PromptEdit};
use crate::core::items::{ContentItem, ResponseItem, ToolOutput};
use crate::core::json::JsonMap;
use crate::core::prompt::{BREAKPOINT_KEY, breakpoint_value};

/// Draws the item list and the selected item's editor.
pub fn items_ui(
    ui: &mut Ui,
    state: &AppState,
    form: &mut ListForm<ResponseItem>,
    tx: &CommandSender,
) {
    add_buttons(ui, tx);
    let count = state.prompt.input.len();
    let selected = state.selected_item.filter(|&i| i < count);
    let rows = count.clamp(1, 14) as f32;
    let row_height =
        ui.text_style_height(&egui::TextStyle::Monospace) + 2.0 * ui.spacing().button_padding.y;
    egui::ScrollArea::vertical()
        .id_salt("items_list")
        .max_height(rows * (row_height + ui.spacing().item_spacing.y))
        .auto_shrink([false, true])
        .show_rows(ui, row_height, count, |ui, range| {
            // One line per item: rows must keep their height for the list to stay virtual.
            ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Truncate);
            for i in range {
                let Some(item) = state.prompt.input.get(i) else {
                    continue;
                };
                let text = format!("{i:>3}  {}", summary(item));
                if ui
                    .selectable_label(selected == Some(i), RichText::new(text).monospace())
                    .on_hover_text("Select to edit this item")
                    .clicked()
                    && selected != Some(i)
                {
                    select(form, Some(i), tx);
                }
            }
        });
    leave_question_ui(ui, form, "item", AppCommand::SelectItem, tx);
    if let Some(i) = selected {
        ui.separator();
        let edit = match row_actions_ui(ui, &format!("Item {i}"), "item") {
            Some(RowAction::Up) => Some(PromptEdit::MoveItem(i, -1)),
            Some(RowAction::Down) => Some(PromptEdit::MoveItem(i, 1)),
            Some(RowAction::Duplicate) => Some(PromptEdit::DuplicateItem(i)),
            Some(RowAction::Remove) => Some(PromptEdit::RemoveItem(i)),
            None => None,
        };
        if let Some(edit) = edit {
            tx.edit(edit);
        }
        item_editor(ui, state, form, i, tx);
    }
    form.sync("item", selected, tx);
}

/// Selects entry `to`, unless the raw buffer holds an invalid edit: then asks first.
fn select(form: &mut ListForm<ResponseItem>, to: Option<usize>, tx: &CommandSender) {
    if form.must_ask_before_leaving() {
        form.leave_to = Some(to);
    } else {
        tx.send(AppCommand::SelectItem(to));
    }
}

/// The "your JSON edit is invalid" question shown when the user tries to leave such an edit.
pub fn leave_question_ui<T: PartialEq + Clone>(
    ui: &mut Ui,
    form: &mut ListForm<T>,
    noun: &str,
    select: impl Fn(Option<usize>) -> AppCommand,
    tx: &CommandSender,
) {
    let Some(to) = form.leave_to else {
        return;
    };
    ui.group(|ui| {
        error_line(
            ui,
            &format!("This {noun}'s JSON has an error and was not applied. Leave it anyway?"),
        );
        ui.horizontal(|ui| {
            if ui
                .button("Keep editing")
                .on_hover_text("Stay here and fix the JSON")
                .clicked()
            {
                form.leave_to = None;
            }
            if ui
                .button("Discard the edit")
                .on_hover_text("Drop the invalid text and go to the other entry")
                .clicked()
            {
                form.discard();
                tx.send(select(to));
            }
        });
    });
}

fn add_buttons(ui: &mut Ui, tx: &CommandSender) {
    ui.horizontal_wrapped(|ui| {
        ui.label("Add:");
        let templates: [(&str, &str, Value); 6] = [
            ("message", "A user message", serde_json::json!({"type":"message","role":"user","content":[{"type":"input_text","text":""}]})),
            ("function_call", "A function call the model made", serde_json::json!({"type":"function_call","name":"shell","arguments":"{}","call_id":"call_1"})),
            ("function_call_output", "The output of a function call", serde_json::json!({"type":"function_call_output","call_id":"call_1","output":""})),
            ("reasoning", "A reasoning item", serde_json::json!({"type":"reasoning","summary":[],"content":null,"encrypted_content":null})),
            ("custom_tool_call", "A freeform tool call", serde_json::json!({"type":"custom_tool_call","call_id":"call_1","name":"apply_patch","input":""})),
            ("compaction", "Compacted history", serde_json::json!({"type":"compaction","encrypted_content":""})),
        ];
        for (name, tip, template) in templates {
            if ui.button(name).on_hover_text(tip).clicked()
                && let Ok(item) = ResponseItem::from_value(template)
            {
                tx.edit(PromptEdit::AddItem(item));
            }
        }
    });
}

/// One line describing an item (type, role/name, start of its text).
pub fn summary(item: &ResponseItem) -> String {
    let clip = |s: &str| -> String {
        let one_line: String = s
            .chars()
            .take(90)
            .map(|c| if c == '\n' { '¶' } else { c })
            .collect();
        one_line
    };
    match item {
        ResponseItem::Message(m) => {
            let text = m.content.iter().find_map(ContentItem::text).unwrap_or("");
            let images = m
                .content
                .iter()
                .filter(|c| matches!(c, ContentItem::InputImage { .. }))
                .count();
            let pics = if images > 0 {
                format!(" [{images} image]")
            } else {
                String::new()
            };
            format!("message {}{pics}: {}", m.role, clip(text))
        }
        ResponseItem::FunctionCall(c) => {
            format!("function_call {}({})", c.name, clip(&c.arguments))
        }
        ResponseItem::FunctionCallOutput(o) => match &o.output {
            ToolOutput::Text(t) => format!("function_call_output: {}", clip(t)),
            ToolOutput::Items(parts) => format!(
                "function_call_output: {}",
                crate::core::format::count(parts.len() as u64, "part")
            ),
        },
        ResponseItem::CustomToolCall(c) => {
            format!("custom_tool_call {}: {}", c.name, clip(&c.input))
        }
        ResponseItem::Reasoning(r) => {
            let s = r.summary.first().map(|s| s.text.as_str()).unwrap_or("");
            format!("reasoning: {}", clip(s))
        }
        other => other.type_name().to_string(),
    }
}

fn item_editor(
    ui: &mut Ui,
    state: &AppState,
    form: &mut ListForm<ResponseItem>,
    i: usize,
    tx: &CommandSender,
) {
    let Some(original) = state.prompt.input.get(i) else {
        return;
    };
    let mut item = original.clone();
    typed_form(ui, &mut item, i);
    if item != *original {
        tx.edit(PromptEdit::SetItem(i, item));
    }
    form.refill(i, original, |item| {
        serde_json::to_string_pretty(&item.to_file_value()).unwrap_or_default()
    });
    // An edit that does not parse keeps its editor open: its error stays in view.
    let invalid = form.raw_error.is_some();
    egui::CollapsingHeader::new("Raw JSON")
        .id_salt("item_raw")
        .default_open(matches!(original, ResponseItem::Other(_)))
        .open(invalid.then_some(true))
        .show(ui, |ui| {
            if labelled_multiline(
                ui,
                "Item JSON",
                &mut form.raw,
                8,
                true,
                "The item exactly as it is in the Prompt file; edits apply when the JSON is valid",
            ) {
                match parse_json(&form.raw).and_then(ResponseItem::from_value) {
                    Ok(parsed) => {
                        if parsed != *original {
                            tx.edit(PromptEdit::SetItem(i, parsed.clone()));
                        }
                        form.applied(i, parsed);
                    }
                    Err(e) => form.raw_error = Some(e),
                }
            }
            if let Some(e) = &form.raw_error {
                error_line(ui, &format!("{e} — the last valid item is still compiled"));
            }
        });
}

/// Edits the common fields of an item in place.
fn typed_form(ui: &mut Ui, item: &mut ResponseItem, i: usize) {
    match item {
        ResponseItem::Message(m) => {
            ui.horizontal(|ui| {
                let label = ui.label("Role");
                egui::ComboBox::from_id_salt(("role", i))
                    .selected_text(m.role.clone())
                    .show_ui(ui, |ui| {
                        for role in ["user", "assistant", "developer", "system"] {
                            ui.selectable_value(&mut m.role, role.to_string(), role);
                        }
                    })
                    .response
                    .labelled_by(label.id)
                    .on_hover_text("Who says this message");
            });
            content_parts(ui, &mut m.content, i);
        }
        ResponseItem::FunctionCall(c) => {
            labelled_line(
                ui,
                "Name",
                &mut c.name,
                "function name",
                "The called function",
            );
            labelled_line(
                ui,
                "Call id",
                &mut c.call_id,
                "call_…",
                "Matches the function_call_output",
            );
            labelled_multiline(
                ui,
                "Arguments (a JSON string)",
                &mut c.arguments,
                3,
                true,
                "Sent as a string holding JSON",
            );
            if serde_json::from_str::<Value>(&c.arguments).is_err() {
                note_line(ui, "The arguments are not valid JSON (sent as written).");
            }
        }
        ResponseItem::FunctionCallOutput(o) => {
            let mut call = o.call_id.clone().unwrap_or_default();
            if labelled_line(ui, "Call id", &mut call, "call_…", "The call this answers") {
                o.call_id = (!call.is_empty()).then_some(call);
            }
            tool_output(ui, &mut o.output, i);
        }
        ResponseItem::CustomToolCall(c) => {
            labelled_line(ui, "Name", &mut c.name, "tool name", "The freeform tool");
            labelled_line(
                ui,
                "Call id",
                &mut c.call_id,
                "call_…",
                "Matches the output",
            );
            labelled_multiline(ui, "Input", &mut c.input, 4, true, "Freeform input text");
        }
        ResponseItem::CustomToolCallOutput(o) => {
            labelled_line(
                ui,
                "Call id",
                &mut o.call_id,
                "call_…",
                "The call this answers",
            );
            tool_output(ui, &mut o.output, i);
        }
        ResponseItem::Reasoning(r) => {
            for (k, part) in r.summary.iter_mut().enumerate() {
                labelled_multiline(
                    ui,
                    &format!("Summary {k}"),
                    &mut part.text,
                    2,
                    false,
                    "A reasoning summary part",
                );
            }
            let mut enc = r.encrypted_content.clone().unwrap_or_default();
            if labelled_line(
                ui,
                "Encrypted content",
                &mut enc,
                "null",
                "Opaque; null when empty",
            ) {
                r.encrypted_content = (!enc.is_empty()).then_some(enc);
            }
        }
        ResponseItem::Compaction(c) => {
            labelled_line(
                ui,
                "Encrypted content",
                &mut c.encrypted_content,
                "",
                "Opaque compacted history",
            );
        }
        _ => note_line(ui, "Edit this item as JSON below."),
    }
}

fn tool_output(ui: &mut Ui, output: &mut ToolOutput, i: usize) {
    match output {
        ToolOutput::Text(text) => {
            labelled_multiline(
                ui,
                "Output",
                text,
                4,
                true,
                "The tool's output, sent as a string",
            );
        }
        ToolOutput::Items(parts) => content_parts(ui, parts, i),
    }
}

/// The part's explicit prompt-cache breakpoint (`prompt_cache_breakpoint: {"mode":"explicit"}`,
/// among the part's own fields `extra`).
fn breakpoint_toggle(ui: &mut Ui, extra: &mut JsonMap, k: usize) {
    let mut on = extra.get(BREAKPOINT_KEY) == Some(&breakpoint_value());
    if ui
        .checkbox(&mut on, format!("Cache breakpoint after part {k}"))
        .on_hover_text(
            "prompt_cache_breakpoint {\"mode\": \"explicit\"}: the server writes (and later reads) the cache up to the end of this block",
        )
        .changed()
    {
        if on {
            extra.insert(BREAKPOINT_KEY.to_string(), breakpoint_value());
        } else {
            extra.shift_remove(BREAKPOINT_KEY);
        }
    }
}

fn content_parts(ui: &mut Ui, parts: &mut Vec<ContentItem>, i: usize) {
    let mut remove = None;
    for (k, part) in parts.iter_mut().enumerate() {
        ui.push_id(("part", i, k), |ui| match part {
            ContentItem::InputText { text, extra } | ContentItem::OutputText { text, extra } => {
                labelled_multiline(
                    ui,
                    &format!("Text part {k}"),
                    text,
                    3,
                    false,
                    "input_text / output_text",
                );
                // The breakpoint beside Remove: one row, as before it existed.
                ui.horizontal(|ui| {
                    if ui
                        .small_button("Remove part")
                        .on_hover_text("Delete this part")
                        .clicked()
                    {
                        remove = Some(k);
                    }
                    breakpoint_toggle(ui, extra, k);
                });
            }
            ContentItem::InputImage {
                image_url,
                detail,
                extra,
            } => {
                labelled_line(
                    ui,
                    &format!("Image {k} URL"),
                    image_url,
                    "https://… or data:…",
                    "input_image.image_url",
                );
                ui.horizontal(|ui| {
                    let label = ui.label("Detail");
                    egui::ComboBox::from_id_salt(("detail", i, k))
                        .selected_text(detail.clone().unwrap_or_else(|| "not set".to_string()))
                        .show_ui(ui, |ui| {
                            ui.selectable_value(detail, None, "not set");
                            for d in ["auto", "low", "high", "original"] {
                                ui.selectable_value(detail, Some(d.to_string()), d);
                            }
                        })
                        .response
                        .labelled_by(label.id)
                        .on_hover_text("Image detail; Lite strips it from the request");
                    if ui
                        .small_button("Remove part")
                        .on_hover_text("Delete this part")
                        .clicked()
                    {
                        remove = Some(k);
                    }
                    breakpoint_toggle(ui, extra, k);
                });
            }
            other => {
                let text = serde_json::to_string(&other).unwrap_or_default();
                note_line(ui, &format!("Part {k}: {text}"));
            }
        });
    }
    if let Some(k) = remove {
        parts.remove(k);
    }
    ui.horizontal(|ui| {
        if ui
            .small_button("+ text")
            .on_hover_text("Add a text part")
            .clicked()
        {
            parts.push(ContentItem::InputText {
                text: String::new(),
                extra: JsonMap::new(),
            });
        }
        if ui
            .small_button("+ image")
            .on_hover_text("Add an image part")
            .clicked()
        {
            parts.push(ContentItem::InputImage {
                image_url: String::new(),
                detail: Some("high".to_string()),
                extra: JsonMap::new(),
            });
        }
    });
}
