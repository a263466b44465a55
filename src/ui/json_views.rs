//! The compiled views (right): one column per chosen dialect × provider × view, each with its
//! size in bytes and tokens, the notes that explain every changed or omitted field, export
//! buttons, and the content as virtualized text (only visible lines are laid out; lines that
//! differ from the column to the left are marked) or as a lazily expanded JSON tree.

use egui::{RichText, Ui};

use super::UiState;
use super::search::{SearchState, current_match_line, search_bar, update_matches};
use super::widgets::{
    added_background, diff_background, match_background, note_line, removed_background,
};
use crate::app::settings::{Column, ColumnDialect, ExportKind, ViewKind, default_columns};
use crate::app::worker::ViewResult;
use crate::app::{AppCommand, AppState, CommandSender};
use crate::core::export::curl_command;
use crate::core::json_diff::{ColumnRows, Mark};
use crate::core::provider::ProviderKind;
use crate::core::redact::{IDENTIFYING_NOTE, redact_url};

/// Longest part of a line drawn in the text view (the rest is reachable in the tree view).
const MAX_LINE_CHARS: usize = 240;

/// Narrowest a compiled column gets; more columns than fit scroll sideways.
pub const COLUMN_MIN_WIDTH: f32 = 300.0;

/// View state of the columns: they scroll together (one shared offset) and step through the
/// differences.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ColumnsState {
    /// The shared vertical offset of the text columns.
    pub offset_y: f32,
    /// An offset every column takes on the next frame (set by scrolling one column, a note or
    /// a difference).
    pub scroll_to: Option<f32>,
    /// The difference last stepped to (index into the first column's grid differences).
    pub difference: Option<usize>,
    /// A column just added: the columns scroll sideways to it once it is compiled and drawn
    /// (the flag: drawn once, so the scroll area knows its new width).
    pub reveal: Option<(usize, bool)>,
}

/// Draws the column chooser and the columns.
pub fn views_ui(ui: &mut Ui, state: &AppState, ui_state: &mut UiState, tx: &CommandSender) {
    // Fill the panel even before the first compile, so it keeps its width.
    ui.set_min_width(ui.available_width());
    if let Some(added) = columns_toolbar(ui, state, tx) {
        ui_state.columns.reveal = Some((added, false));
    }
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
    let columns = &mut ui_state.columns;
    differences_bar(ui, state, columns);
    let n = state.views.len();
    let tree = state.settings.tree_view;
    let spacing = ui.spacing().item_spacing.x;
    let available = ui.available_size();
    let width = ((available.x - spacing * (n as f32 - 1.0)) / n as f32).max(COLUMN_MIN_WIDTH);
    let apply = columns.scroll_to.take();
    let mut offsets = Vec::with_capacity(n);
    // The sideways bar is always there when the columns do not fit (not drawn over them).
    let mut sideways = egui::ScrollArea::horizontal()
        .id_salt("columns_scroll")
        .auto_shrink([false, false])
        .scroll_bar_visibility(egui::scroll_area::ScrollBarVisibility::VisibleWhenNeeded);
    // A column just added comes into view (its right edge at the area's), once compiled.
    match columns.reveal {
        Some((k, true)) if k < n => {
            columns.reveal = None;
            let right = (k + 1) as f32 * (width + spacing) - spacing;
            sideways = sideways.horizontal_scroll_offset((right - available.x).max(0.0));
        }
        Some((k, false)) if k < n => {
            // Drawn first, so the area's content is wide enough to scroll there next frame.
            columns.reveal = Some((k, true));
            ui.ctx().request_repaint();
        }
        _ => {}
    }
    sideways.show(ui, |ui| {
        let height = ui.available_height();
        ui.horizontal_top(|ui| {
            for k in 0..n {
                let size = egui::vec2(width, height);
                let layout = egui::Layout::top_down(egui::Align::Min);
                ui.allocate_ui_with_layout(size, layout, |ui| {
                    ui.set_width(width);
                    ui.push_id(("column", k), |ui| {
                        let shown = ColumnShown {
                            k,
                            tree,
                            apply,
                            search,
                        };
                        if let Some(offset) = column_ui(ui, state, &shown, columns, tx) {
                            offsets.push(offset);
                        }
                    });
                });
            }
        });
    });
    search.scroll_pending = false;
    // Scroll together: a column the user scrolled moves the others on the next frame.
    match apply {
        Some(y) => columns.offset_y = y,
        None => {
            if let Some(&y) = offsets
                .iter()
                .find(|y| (**y - columns.offset_y).abs() > 0.5)
            {
                columns.offset_y = y;
                columns.scroll_to = Some(y);
                ui.ctx().request_repaint();
            }
        }
    }
}

/// What a column is asked to show this frame.
struct ColumnShown<'a> {
    k: usize,
    tree: bool,
    apply: Option<f32>,
    search: &'a SearchState,
}

/// Height of one text row (with spacing), for scrolling to a row.
fn row_pitch(ui: &Ui) -> f32 {
    ui.text_style_height(&egui::TextStyle::Monospace) + ui.spacing().item_spacing.y
}

/// Asks every column to scroll to `row` (a little below the top).
fn scroll_to_row(ui: &Ui, columns: &mut ColumnsState, row: usize) {
    columns.scroll_to = Some((row as f32 * row_pitch(ui) - 60.0).max(0.0));
    ui.ctx().request_repaint();
}

/// "n differences" with previous/next buttons (over the first column's grid).
fn differences_bar(ui: &mut Ui, state: &AppState, columns: &mut ColumnsState) {
    let Some(view) = state.views.first() else {
        return;
    };
    let differences = &view.aligned.differences;
    // Wrapped: a row wider than the pane would widen the whole column area past the window
    // (and its sideways scroll would think everything fits).
    ui.horizontal_wrapped(|ui| {
        let n = differences.len();
        let label = match (n, columns.difference) {
            (0, _) => "No differences between the columns".to_string(),
            (n, Some(i)) if i < n => format!("Difference {} of {n}", i + 1),
            (n, _) => format!("{n} differences between the columns"),
        };
        // The buttons first: the count beside them changes as it steps, and a button after
        // it moved from under the pointer (a second click missed).
        let previous = ui
            .add_enabled(n > 0, egui::Button::new("Previous difference"))
            .on_hover_text("Scroll every column to the previous place where they differ");
        let next = ui
            .add_enabled(n > 0, egui::Button::new("Next difference"))
            .on_hover_text("Scroll every column to the next place where they differ");
        ui.label(label);
        if n > 0 && (previous.clicked() || next.clicked()) {
            let i = match (columns.difference, next.clicked()) {
                (Some(i), true) => (i + 1) % n,
                (Some(i), false) => (i + n - 1) % n,
                (None, true) => 0,
                (None, false) => n - 1,
            };
            columns.difference = Some(i);
            scroll_to_row(ui, columns, differences[i]);
        }
        legend_ui(ui);
    });
}

/// The colour key of the marks.
fn legend_ui(ui: &mut Ui) {
    ui.separator();
    for (text, colour, tip) in [
        (
            "added",
            added_background(ui),
            "Present here, not in the column to the left",
        ),
        (
            "removed",
            removed_background(ui),
            "In the column to the left, missing here",
        ),
        (
            "changed",
            diff_background(ui),
            "A different value than in the column to the left",
        ),
    ] {
        ui.label(RichText::new(text).monospace().background_color(colour))
            .on_hover_text(tip);
    }
}

/// The Columns menu and the tree toggle; returns the index of a column the user added.
fn columns_toolbar(ui: &mut Ui, state: &AppState, tx: &CommandSender) -> Option<usize> {
    let mut added = None;
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
                                    added = Some(columns.len() - 1);
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
        .on_hover_text(format!(
            "Choose which compiled views are shown side by side (last compile: {:.1} ms)",
            state.compile_millis
        ));
        let mut tree = state.settings.tree_view;
        if ui
            .toggle_value(&mut tree, "JSON tree")
            .on_hover_text("Show the compiled JSON as a tree instead of text")
            .changed()
        {
            tx.send(AppCommand::SetTreeView(tree));
        }
    });
    added
}

/// Draws column `shown.k`; returns its text view's vertical offset.
fn column_ui(
    ui: &mut Ui,
    state: &AppState,
    shown: &ColumnShown<'_>,
    columns: &mut ColumnsState,
    tx: &CommandSender,
) -> Option<f32> {
    let k = shown.k;
    let view = state.views.get(k)?;
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
            "{} B{compressed} · {tokens} · POST {}",
            view.bytes,
            redact_url(&view.compiled.url)
        ),
    );
    if view.view == ViewKind::Headers {
        for name in view.compiled.identifying_headers() {
            note_line(ui, &format!("{name}: {IDENTIFYING_NOTE}"));
        }
    }
    ui.horizontal_wrapped(|ui| {
        if ui
            .small_button("Copy")
            .on_hover_text(
                "Copy the exact bytes this column stands for (compact JSON, no added newline)",
            )
            .clicked()
        {
            let text = view.export_text().into_owned();
            let bytes = text.len();
            ui.ctx().copy_text(text);
            tx.send(AppCommand::Notify(format!(
                "Copied {bytes} bytes of “{}”",
                view.label
            )));
        }
        if ui
            .small_button("Copy curl")
            .on_hover_text("Copy as a curl command ($OPENAI_API_KEY, never the key)")
            .clicked()
        {
            match curl_command(&view.compiled) {
                Ok(curl) => {
                    ui.ctx().copy_text(curl);
                    tx.send(AppCommand::Notify(format!(
                        "Copied a curl command for “{}” (the key stays in its environment variable)",
                        view.label
                    )));
                }
                Err(e) => tx.send(AppCommand::Notify(format!("Not copied: {e}"))),
            }
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
    notes_ui(ui, view, k, columns);
    ui.separator();
    if shown.tree {
        egui::ScrollArea::both()
            .id_salt(("tree", k))
            .auto_shrink([false, false])
            .show(ui, |ui| {
                super::json_tree::json_object_tree(ui, &view.value, &format!("t{k}"))
            });
        None
    } else {
        Some(text_view(ui, shown, view))
    }
}

/// "Why fields differ": one line per note the compiler gave; clicking one scrolls the columns
/// to its lines.
fn notes_ui(ui: &mut Ui, view: &ViewResult, k: usize, columns: &mut ColumnsState) {
    // A headers column explains its headers (their paths are its rows); the body and frame
    // columns explain the body.
    let notes: Vec<(&str, &crate::core::compile::CompileNote)> = view
        .compiled
        .notes
        .iter()
        .filter_map(|note| match (view.view, note.header_name()) {
            (ViewKind::Headers, Some(name)) => Some((name, note)),
            (ViewKind::Headers, None) | (_, Some(_)) => None,
            (_, None) => Some((note.path.as_str(), note)),
        })
        .collect();
    if notes.is_empty() {
        return;
    }
    egui::CollapsingHeader::new(format!("Why fields differ ({})", notes.len()))
        .id_salt(("notes", k))
        .show(ui, |ui| {
            egui::ScrollArea::vertical()
                .id_salt(("notes_scroll", k))
                .max_height(160.0)
                .show(ui, |ui| {
                    for (path, note) in notes {
                        let row =
                            view.aligned
                                .row_of_path(view.aligned_column, path)
                                .or_else(|| {
                                    (0..view.aligned.columns.len())
                                        .find_map(|c| view.aligned.row_of_path(c, path))
                                });
                        let text = RichText::new(format!("{path}: {}", note.message));
                        let response = ui.add(egui::Button::selectable(false, text).wrap());
                        let response = match row {
                            Some(_) => response.on_hover_text("Show these lines"),
                            None => response,
                        };
                        if response.clicked()
                            && let Some(row) = row
                        {
                            scroll_to_row(ui, columns, row);
                        }
                    }
                });
        });
}

/// The rows of one column, virtualized, with structural marks; returns the vertical offset.
fn text_view(ui: &mut Ui, shown: &ColumnShown<'_>, view: &ViewResult) -> f32 {
    let k = shown.k;
    let row_height = ui.text_style_height(&egui::TextStyle::Monospace);
    let match_bg = match_background(ui);
    let no_matches = Vec::new();
    let matches = shown.search.matches.get(k).unwrap_or(&no_matches);
    let mut area = egui::ScrollArea::vertical()
        .id_salt(("text", k))
        .auto_shrink([false, false]);
    if let Some(y) = shown.apply {
        area = area.vertical_scroll_offset(y);
    }
    if shown.search.scroll_pending
        && let Some(line) = current_match_line(shown.search, k)
    {
        area = area.vertical_scroll_offset((line as f32 * row_pitch(ui) - 80.0).max(0.0));
    }
    let rows = view.rows();
    let output = area.show_rows(ui, row_height, view.line_count(), |ui, range| {
        // Lines wider than the column are cut (the whole line on hover): the column scrolls
        // up and down only, so a sideways wheel or Shift+wheel reaches the columns' own
        // sideways scroll and every column can be brought into view.
        ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Truncate);
        let view = range.clone();
        for i in range {
            let mut text = aligned_row_text(ui, rows, i, &view);
            if matches.binary_search(&i).is_ok() {
                text = text.background_color(match_bg);
            }
            ui.label(text);
        }
    });
    output.state.clamped_offset().y
}

/// Row `i` of an aligned column as the compiled columns and Compare draw it: the indented JSON
/// line tinted by its structural mark, or a placeholder saying why it is empty (on the first row
/// of its run).
///
/// `view` is the rows in view: a placeholder run that starts above it is labelled on its first
/// row in view too, and one that runs past the view says how many rows it has left — a tall
/// spacer (e.g. beside Lite's `additional_tools`) never leaves a column looking empty.
pub fn aligned_row_text(
    ui: &Ui,
    rows: &ColumnRows,
    i: usize,
    view: &std::ops::Range<usize>,
) -> RichText {
    aligned_row_text_from(ui, rows, i, view, 0)
}

/// [`aligned_row_text`] with the first `skip` characters after the line's indentation left out
/// (shown as `…`): Compare starts a long changed line near where the two sides first differ.
pub fn aligned_row_text_from(
    ui: &Ui,
    rows: &ColumnRows,
    i: usize,
    view: &std::ops::Range<usize>,
    skip: usize,
) -> RichText {
    let mark = rows.marks.get(i).copied().unwrap_or(Mark::Same);
    let text = match rows.text.get(i).and_then(|t| t.as_deref()) {
        Some(line) if skip > 0 => RichText::new(clip(&skip_after_indent(line, skip))).monospace(),
        Some(line) => RichText::new(clip(line)).monospace(),
        None => {
            let run_start = i == 0
                || rows.text.get(i - 1).is_some_and(Option::is_some)
                || rows.marks.get(i - 1) != Some(&mark);
            let label = if run_start || i == view.start {
                let left = rows.text[i..]
                    .iter()
                    .zip(&rows.marks[i..])
                    .take_while(|(t, m)| t.is_none() && **m == mark)
                    .count();
                let what = match mark {
                    Mark::Removed => "− not in this column",
                    _ => "  (only in other columns",
                };
                let past_view = i + left > view.end;
                match (mark, past_view) {
                    (Mark::Removed, false) => what.to_string(),
                    (Mark::Removed, true) => format!("{what}: {left} rows, content below"),
                    (_, false) => format!("{what})"),
                    (_, true) => format!("{what}: {left} rows, content below)"),
                }
            } else {
                String::new()
            };
            RichText::new(label)
                .monospace()
                .color(ui.visuals().weak_text_color())
        }
    };
    match mark {
        Mark::Added => text.background_color(added_background(ui)),
        Mark::Removed => text.background_color(removed_background(ui)),
        Mark::Changed => text.background_color(diff_background(ui)),
        Mark::Same => text,
    }
}

/// `line` with characters `..skip` (counted after its indentation) replaced by `…`, its
/// member name kept when the cut is past it (`"text": "…t and explain briefly."`).
fn skip_after_indent(line: &str, skip: usize) -> String {
    let body = line.trim_start_matches(' ');
    let indent = &line[..line.len() - body.len()];
    let cut = body.char_indices().nth(skip).map_or(body.len(), |(b, _)| b);
    let name = body
        .starts_with('"')
        .then(|| body.find("\": ").map(|i| i + 3))
        .flatten()
        .map(|end| end + usize::from(body[end..].starts_with('"')))
        .filter(|end| *end < cut)
        .unwrap_or(0);
    format!("{indent}{}…{}", &body[..name], &body[cut..])
}

/// The first character (counted after the indentation) where two lines differ, if they do.
pub fn first_difference(left: &str, right: &str) -> Option<usize> {
    let (l, r) = (left.trim_start_matches(' '), right.trim_start_matches(' '));
    let mut chars = l.chars().zip(r.chars());
    match chars.position(|(a, b)| a != b) {
        Some(at) => Some(at),
        None => (l.chars().count() != r.chars().count())
            .then(|| l.chars().count().min(r.chars().count())),
    }
}

/// The start of a long line (the rest is reachable in the tree view and in exports).
fn clip(line: &str) -> std::borrow::Cow<'_, str> {
    if line.len() <= MAX_LINE_CHARS {
        return line.into();
    }
    let cut = line
        .char_indices()
        .nth(MAX_LINE_CHARS)
        .map_or(line.len(), |(b, _)| b);
    format!("{}… ({} more bytes)", &line[..cut], line.len() - cut).into()
}
