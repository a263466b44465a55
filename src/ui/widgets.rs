//! Small widgets shared by the panels: labelled text fields (so screen readers and UI tests find
//! them by name), a JSON editor that reports the line and column of a syntax error, a picker
//! for settings that can follow the model default, be left out, or hold a value, and counts with
//! their noun in the right number, and texts cut to the rest of a bar's row.

use egui::{Color32, RichText, Ui};

use crate::core::prompt::Setting;

pub use crate::core::format::count;

/// A single-line text field with a label; returns true when the text changed.
pub fn labelled_line(
    ui: &mut Ui,
    label: &str,
    text: &mut String,
    hint: &str,
    tooltip: &str,
) -> bool {
    ui.horizontal(|ui| {
        let label = ui.label(label);
        ui.add(
            egui::TextEdit::singleline(text)
                .hint_text(hint)
                .desired_width(f32::INFINITY),
        )
        .labelled_by(label.id)
        .on_hover_text(tooltip)
        .changed()
    })
    .inner
}

/// A multi-line text field with a label above it; returns true when the text changed.
pub fn labelled_multiline(
    ui: &mut Ui,
    label: &str,
    text: &mut String,
    rows: usize,
    code: bool,
    tooltip: &str,
) -> bool {
    let label = ui.label(label);
    let mut edit = egui::TextEdit::multiline(text)
        .desired_rows(rows)
        .desired_width(f32::INFINITY);
    if code {
        edit = edit.code_editor();
    }
    ui.add(edit)
        .labelled_by(label.id)
        .on_hover_text(tooltip)
        .changed()
}

/// Parses JSON text, describing a syntax error by line and column.
pub fn parse_json(text: &str) -> Result<serde_json::Value, String> {
    serde_json::from_str(text)
        .map_err(|e| crate::core::error::PromptError::from_serde("", &e).to_string())
}

/// Shows an error line in the error colour.
pub fn error_line(ui: &mut Ui, text: &str) {
    ui.label(RichText::new(text).color(ui.visuals().error_fg_color));
}

/// Shows a muted explanatory line.
pub fn note_line(ui: &mut Ui, text: &str) {
    ui.label(
        RichText::new(text)
            .color(ui.visuals().weak_text_color())
            .small(),
    );
}

/// The colour of rows whose value differs from the column to the left.
pub fn diff_background(ui: &Ui) -> Color32 {
    if ui.visuals().dark_mode {
        Color32::from_rgb(70, 60, 20)
    } else {
        Color32::from_rgb(255, 240, 170)
    }
}

/// The colour of rows present here and not in the column to the left.
pub fn added_background(ui: &Ui) -> Color32 {
    if ui.visuals().dark_mode {
        Color32::from_rgb(25, 70, 35)
    } else {
        Color32::from_rgb(205, 240, 205)
    }
}

/// The colour of placeholder rows: present in the column to the left, missing here.
pub fn removed_background(ui: &Ui) -> Color32 {
    if ui.visuals().dark_mode {
        Color32::from_rgb(85, 35, 35)
    } else {
        Color32::from_rgb(250, 210, 210)
    }
}

/// The colour used to mark search matches.
pub fn match_background(ui: &Ui) -> Color32 {
    ui.visuals().selection.bg_fill
}

/// A picker for a [`Setting`]: "model default", "not sent", or one of `values` (or the
/// current custom value), as a label and a combo box added to `ui` (a grid row, say). Returns
/// the new setting when the user picked another one.
pub fn setting_picker(
    ui: &mut Ui,
    label: &str,
    id: &str,
    current: &Setting<String>,
    values: &[&str],
    tooltip: &str,
) -> Option<Setting<String>> {
    let shown = match current {
        Setting::Default => "model default".to_string(),
        Setting::Omit => "not sent".to_string(),
        Setting::Value(v) => v.clone(),
    };
    let mut picked = None;
    {
        let label = ui.label(label);
        egui::ComboBox::from_id_salt(id)
            .selected_text(shown)
            .show_ui(ui, |ui| {
                if ui
                    .selectable_label(current.is_default(), "model default")
                    .clicked()
                {
                    picked = Some(Setting::Default);
                }
                if ui
                    .selectable_label(*current == Setting::Omit, "not sent")
                    .clicked()
                {
                    picked = Some(Setting::Omit);
                }
                for v in values {
                    let selected = current.value().is_some_and(|c| c == v);
                    if ui.selectable_label(selected, *v).clicked() {
                        picked = Some(Setting::Value((*v).to_string()));
                    }
                }
            })
            .response
            .labelled_by(label.id)
            .on_hover_text(tooltip);
    }
    picked.filter(|p| p != current)
}

/// What the row of buttons above a selected list entry asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowAction {
    /// Move up one place.
    Up,
    /// Move down one place.
    Down,
    /// Insert a copy after it.
    Duplicate,
    /// Delete it.
    Remove,
}

/// The title and Up / Down / Duplicate / Remove buttons of a selected list entry (`noun` names
/// the entry in tooltips).
pub fn row_actions_ui(ui: &mut Ui, title: &str, noun: &str) -> Option<RowAction> {
    ui.horizontal(|ui| {
        ui.strong(title);
        let buttons = [
            (RowAction::Up, "Up", "Move up".to_string()),
            (RowAction::Down, "Down", "Move down".to_string()),
            (
                RowAction::Duplicate,
                "Duplicate",
                format!("Insert a copy after this {noun}"),
            ),
            (RowAction::Remove, "Remove", format!("Delete this {noun}")),
        ];
        let mut picked = None;
        for (action, text, tip) in buttons {
            if ui.button(text).on_hover_text(tip).clicked() {
                picked = Some(action);
            }
        }
        picked
    })
    .inner
}

/// Narrowest room [`cut_texts_ui`] takes on the controls' row (less: its texts start the next
/// row).
const MIN_TEXT_WIDTH: f32 = 120.0;

/// `texts` in the rest of a wrapping row (a bar of controls), each cut to its share of the
/// room (egui shows a cut one whole on hover): short ones whole, the rest sharing what is left;
/// on a row of their own when the controls left less than [`MIN_TEXT_WIDTH`]. A text wrapped
/// onto a second line took a line a short pane needs, and a bar that gains a control (step
/// mode's) keeps its height.
pub fn cut_texts_ui(ui: &mut Ui, texts: Vec<RichText>) {
    if texts.is_empty() {
        return;
    }
    let spacing = ui.spacing().item_spacing.x;
    let gaps = spacing * (texts.len() - 1) as f32;
    let mut room = ui.available_size_before_wrap().x - gaps;
    if room < MIN_TEXT_WIDTH {
        ui.end_row();
        room = ui.available_width() - gaps;
    }
    // Short texts take what they need; the rest share what is left.
    let font = egui::TextStyle::Body.resolve(ui.style());
    let mut widths: Vec<f32> = texts
        .iter()
        .map(|t| {
            ui.ctx()
                .fonts_mut(|f| {
                    f.layout_no_wrap(t.text().to_string(), font.clone(), Color32::PLACEHOLDER)
                })
                .size()
                .x
                .ceil()
        })
        .collect();
    let mut left = room.max(0.0);
    let mut open: Vec<usize> = (0..widths.len()).collect();
    loop {
        let share = left / open.len().max(1) as f32;
        let (fits, cut): (Vec<usize>, Vec<usize>) = open.iter().partition(|&&i| widths[i] <= share);
        if fits.is_empty() {
            for &i in &cut {
                widths[i] = share.floor();
            }
            break;
        }
        left -= fits.iter().map(|&i| widths[i]).sum::<f32>();
        open = cut;
        if open.is_empty() {
            break;
        }
    }
    let height = ui.spacing().interact_size.y;
    for (text, width) in texts.into_iter().zip(widths) {
        ui.allocate_ui_with_layout(
            egui::vec2(width, height),
            egui::Layout::left_to_right(egui::Align::Center),
            |ui| {
                ui.add(egui::Label::new(text).truncate());
            },
        );
    }
}
