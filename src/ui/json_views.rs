//! The compiled views (right): one column per chosen dialect × provider × view, each with its
//! size in bytes and tokens, the notes that explain every changed or omitted field, export
//! buttons, and the content as virtualized text (only visible lines are laid out; lines that
//! differ from the column to the left are marked) or as a lazily expanded JSON tree.

use egui::{RichText, Ui};
use serde_json::Value;

use super::UiState;
use super::widgets::{diff_background, match_background, note_line};
use crate::app::settings::{Column, ColumnDialect, ExportKind, ViewKind, default_columns};
use crate::app::worker::ViewResult;
use crate::app::{AppCommand, AppState, CommandSender};
use crate::core::export::curl_command;
use crate::core::provider::ProviderKind;

/// Longest part of a line drawn in the text view (the rest is reachable in the tree view).
const MAX_LINE_CHARS: usize = 400;
/// Children shown per JSON array/object in the tree before a "… more" line.
const MAX_TREE_CHILDREN: usize = 200;

/// Narrowest a compiled column gets; more columns than fit scroll sideways.
pub const COLUMN_MIN_WIDTH: f32 = 300.0;

/// Search in the compiled views.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SearchState {
    /// The search bar is shown.
    pub open: bool,
    /// Text searched for (case-insensitive).
    pub query: String,
    /// Index of the current match (over all columns, left to right).
    pub current: usize,
    /// Request focus for the search field on the next frame.
    pub focus: bool,
    /// Scroll the columns to the current match on the next frame.
    pub scroll_pending: bool,
    /// Matching line numbers per column.
    pub matches: Vec<Vec<usize>>,
    /// What `matches` was computed for (views revision, query, column count).
    pub matches_for: Option<(u64, String, usize)>,
}

/// View state of the columns.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ColumnsState {}

/// Draws the column chooser and the columns.
pub fn views_ui(ui: &mut Ui, state: &AppState, ui_state: &mut UiState, tx: &CommandSender) {
    // Fill the panel even before the first compile, so it keeps its width.
    ui.set_min_width(ui.available_width());
    columns_toolbar(ui, state, tx);
    let search = &mut ui_state.search;
    if search.open {
        search_bar(ui, search);
    }
    if let Some(e) = &state.compile_error {
        super::widgets::error_line(
            ui,
            &format!("Compile error: {e} (showing the last good compile)"),
        );
    }
    if state.views.is_empty() {
        ui.label("Compiling…");
        return;
    }
    update_matches(state, search);
    let n = state.views.len();
    let tree = state.settings.tree_view;
    let spacing = ui.spacing().item_spacing.x;
    let available = ui.available_size();
    let width = ((available.x - spacing * (n as f32 - 1.0)) / n as f32).max(COLUMN_MIN_WIDTH);
    egui::ScrollArea::horizontal()
        .id_salt("columns_scroll")
        .auto_shrink([false, false])
        .show(ui, |ui| {
            ui.horizontal_top(|ui| {
                for k in 0..n {
                    ui.allocate_ui(egui::vec2(width, available.y), |ui| {
                        ui.set_width(width);
                        ui.push_id(("column", k), |ui| {
                            column_ui(ui, state, search, k, tree, tx)
                        });
                    });
                }
            });
        });
    search.scroll_pending = false;
}

fn columns_toolbar(ui: &mut Ui, state: &AppState, tx: &CommandSender) {
    ui.horizontal_wrapped(|ui| {
        ui.menu_button("Columns", |ui| {
            ui.label("Add a column:");
            let dialects = [
                (ColumnDialect::Primary, "request dialect"),
                (ColumnDialect::Alternate, "other dialect"),
                (ColumnDialect::Standard, "standard"),
                (ColumnDialect::Lite, "Lite"),
            ];
            let providers = [
                (None, "the prompt's provider"),
                (Some(ProviderKind::Openai), "OpenAI"),
                (Some(ProviderKind::Azure), "Azure"),
                (Some(ProviderKind::Compatible), "compatible"),
            ];
            for (dialect, dtext) in dialects {
                ui.menu_button(dtext, |ui| {
                    for (provider, ptext) in providers {
                        ui.menu_button(ptext, |ui| {
                            for view in ViewKind::ALL {
                                if ui.button(view.label()).clicked() {
                                    let mut columns = state.settings.columns.clone();
                                    columns.push(Column {
                                        dialect,
                                        provider,
                                        view,
                                    });
                                    tx.send(AppCommand::SetColumns(columns));
                                }
                            }
                        });
                    }
                });
            }
            ui.separator();
            if ui
                .button("Reset to the request beside the other dialect")
                .clicked()
            {
                tx.send(AppCommand::SetColumns(default_columns()));
            }
        })
        .response
        .on_hover_text("Choose which compiled views are shown side by side");
        let mut tree = state.settings.tree_view;
        if ui
            .toggle_value(&mut tree, "JSON tree")
            .on_hover_text("Show the compiled JSON as a tree instead of text")
            .changed()
        {
            tx.send(AppCommand::SetTreeView(tree));
        }
        note_line(ui, &format!("compiled in {:.1} ms", state.compile_millis));
    });
}

fn search_bar(ui: &mut Ui, search: &mut SearchState) {
    ui.horizontal(|ui| {
        let label = ui.label("Find");
        let edit = ui
            .add(
                egui::TextEdit::singleline(&mut search.query)
                    .hint_text("text in the compiled views"),
            )
            .labelled_by(label.id)
            .on_hover_text("Case-insensitive search in every column (Ctrl+F)");
        if search.focus {
            edit.request_focus();
            search.focus = false;
        }
        let total: usize = search.matches.iter().map(Vec::len).sum();
        let enter = edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
        if (ui
            .button("Next")
            .on_hover_text("Scroll to the next match")
            .clicked()
            || enter)
            && total > 0
        {
            search.current = (search.current + 1) % total;
            search.scroll_pending = true;
        }
        ui.label(if search.query.is_empty() {
            String::new()
        } else {
            format!("{total} matching lines")
        });
        if ui
            .button("Close")
            .on_hover_text("Hide the search bar")
            .clicked()
        {
            search.open = false;
            search.query.clear();
        }
    });
}

/// Recomputes the matching lines when the query or the views changed.
fn update_matches(state: &AppState, search: &mut SearchState) {
    let key = (
        state.views_revision,
        search.query.clone(),
        state.views.len(),
    );
    if search.matches_for.as_ref() == Some(&key) {
        return;
    }
    let needle = search.query.to_lowercase();
    search.matches = state
        .views
        .iter()
        .map(|view| {
            if needle.is_empty() {
                return Vec::new();
            }
            (0..view.line_count())
                .filter(|&i| view.line(i).to_lowercase().contains(&needle))
                .collect()
        })
        .collect();
    search.current = 0;
    search.matches_for = Some(key);
}

fn column_ui(
    ui: &mut Ui,
    state: &AppState,
    search: &SearchState,
    k: usize,
    tree: bool,
    tx: &CommandSender,
) {
    let Some(view) = state.views.get(k) else {
        return;
    };
    ui.horizontal(|ui| {
        ui.strong(&view.label);
        if state.settings.columns.len() > 1
            && ui
                .small_button("×")
                .on_hover_text("Remove this column")
                .clicked()
        {
            let mut columns = state.settings.columns.clone();
            if k < columns.len() {
                columns.remove(k);
            }
            tx.send(AppCommand::SetColumns(columns));
        }
    });
    let tokens = view
        .tokens
        .map_or("counting tokens…".to_string(), |t| format!("{t} tokens"));
    let compressed = view
        .compiled
        .compressed_body
        .as_ref()
        .filter(|_| view.view == ViewKind::Body)
        .map(|c| {
            format!(
                " (zstd {} B of {} B JSON)",
                c.len(),
                view.compiled.body_json.len()
            )
        })
        .unwrap_or_default();
    note_line(
        ui,
        &format!(
            "{} B{compressed} · {tokens} · {} lines",
            view.bytes,
            view.line_count()
        ),
    );
    ui.horizontal_wrapped(|ui| {
        if ui
            .small_button("Copy")
            .on_hover_text(
                "Copy the exact bytes this column stands for (compact JSON, no added newline)",
            )
            .clicked()
        {
            ui.ctx().copy_text(view.export_text().into_owned());
            tx.send(AppCommand::Notify(format!(
                "Copied {} bytes of “{}”",
                view.export_text().len(),
                view.label
            )));
        }
        if ui
            .small_button("Copy curl")
            .on_hover_text("Copy as a curl command ($OPENAI_API_KEY, never the key)")
            .clicked()
        {
            ui.ctx().copy_text(curl_command(&view.compiled));
            tx.send(AppCommand::Notify(format!(
                "Copied a curl command for “{}” (the key stays in its environment variable)",
                view.label
            )));
        }
        if ui
            .small_button("Export…")
            .on_hover_text("Save the exact bytes of this column to a file")
            .clicked()
        {
            tx.send(AppCommand::ShowFileDialog(Some(ExportKind::Json), k));
        }
        if ui
            .small_button("Export HAR…")
            .on_hover_text("Save this request as HAR 1.2 (secrets redacted)")
            .clicked()
        {
            tx.send(AppCommand::ShowFileDialog(Some(ExportKind::Har), k));
        }
    });
    let notes = &view.compiled.notes;
    if !notes.is_empty() {
        egui::CollapsingHeader::new(format!("Why fields differ ({})", notes.len()))
            .id_salt(("notes", k))
            .show(ui, |ui| {
                egui::ScrollArea::vertical()
                    .id_salt(("notes_scroll", k))
                    .max_height(120.0)
                    .show_rows(
                        ui,
                        ui.text_style_height(&egui::TextStyle::Small),
                        notes.len(),
                        |ui, range| {
                            for note in &notes[range] {
                                note_line(ui, &format!("{}: {}", note.path, note.message));
                            }
                        },
                    );
            });
    }
    ui.separator();
    if tree {
        egui::ScrollArea::both()
            .id_salt(("tree", k))
            .auto_shrink([false, false])
            .show(ui, |ui| json_object_tree(ui, &view.value, &format!("t{k}")));
    } else {
        text_view(ui, search, view, k);
    }
}

fn text_view(ui: &mut Ui, search: &SearchState, view: &ViewResult, k: usize) {
    let row_height = ui.text_style_height(&egui::TextStyle::Monospace);
    let diff_bg = diff_background(ui);
    let match_bg = match_background(ui);
    let no_matches = Vec::new();
    let matches = search.matches.get(k).unwrap_or(&no_matches);
    let mut area = egui::ScrollArea::both()
        .id_salt(("text", k))
        .auto_shrink([false, false]);
    if search.scroll_pending
        && let Some(line) = current_match_line(search, k)
    {
        let spacing = ui.spacing().item_spacing.y;
        area = area.vertical_scroll_offset((line as f32 * (row_height + spacing) - 80.0).max(0.0));
    }
    area.show_rows(ui, row_height, view.line_count(), |ui, range| {
        ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Extend);
        for i in range {
            let line = view.line(i);
            let shown: std::borrow::Cow<'_, str> = if line.len() > MAX_LINE_CHARS {
                let cut = line
                    .char_indices()
                    .nth(MAX_LINE_CHARS)
                    .map_or(line.len(), |(b, _)| b);
                format!("{}… ({} more bytes)", &line[..cut], line.len() - cut).into()
            } else {
                line.into()
            };
            let mut text = RichText::new(shown).monospace();
            if matches.binary_search(&i).is_ok() {
                text = text.background_color(match_bg);
            } else if view.changed.get(i).copied().unwrap_or(false) {
                text = text.background_color(diff_bg);
            }
            ui.label(text);
        }
    });
}

/// The line of the current match if it is in column `k`.
fn current_match_line(search: &SearchState, k: usize) -> Option<usize> {
    let mut index = search.current;
    for (col, lines) in search.matches.iter().enumerate() {
        if index < lines.len() {
            return (col == k).then(|| lines[index]);
        }
        index -= lines.len();
    }
    None
}

fn json_object_tree(ui: &mut Ui, map: &crate::core::json::JsonMap, id: &str) {
    for (i, (k, v)) in map.iter().enumerate() {
        if i == MAX_TREE_CHILDREN {
            note_line(ui, &format!("… {} more keys", map.len() - i));
            break;
        }
        json_tree(ui, k, v, &format!("{id}/{k}"));
    }
}

fn json_tree(ui: &mut Ui, key: &str, value: &Value, id: &str) {
    let prefix = if key.is_empty() {
        String::new()
    } else {
        format!("{key}: ")
    };
    match value {
        Value::Object(map) => {
            egui::CollapsingHeader::new(format!("{prefix}{{…}} {} keys", map.len()))
                .id_salt(id)
                .default_open(key.is_empty())
                .show(ui, |ui| {
                    for (i, (k, v)) in map.iter().enumerate() {
                        if i == MAX_TREE_CHILDREN {
                            note_line(ui, &format!("… {} more keys", map.len() - i));
                            break;
                        }
                        json_tree(ui, k, v, &format!("{id}/{k}"));
                    }
                });
        }
        Value::Array(items) => {
            egui::CollapsingHeader::new(format!("{prefix}[…] {} items", items.len()))
                .id_salt(id)
                .default_open(key.is_empty())
                .show(ui, |ui| {
                    for (i, v) in items.iter().enumerate() {
                        if i == MAX_TREE_CHILDREN {
                            note_line(ui, &format!("… {} more items", items.len() - i));
                            break;
                        }
                        json_tree(ui, &i.to_string(), v, &format!("{id}/{i}"));
                    }
                });
        }
        leaf => {
            let text = leaf.to_string();
            let short: String = text.chars().take(300).collect();
            let label = ui.label(RichText::new(format!("{prefix}{short}")).monospace());
            if short.len() < text.len() {
                label.on_hover_text(text.chars().take(4_000).collect::<String>());
            }
        }
    }
}
