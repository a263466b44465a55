//! The selected event: its place (seq, attempt, time, types, mapping), its raw data as received,
//! and the data parsed as JSON (tree or pretty text). Parsing and pretty-printing happen once per
//! selection, not per frame; at most [`MAX_SHOWN_BYTES`] of raw or pretty text are laid out.

use egui::{RichText, Ui};
use serde_json::Value;

use super::json_tree::json_tree_ui;
use super::{TimelinePanelState, clip, secs};
use crate::app::timeline::{TimelineCommand, TimelineModel};
use crate::core::redact::redacted;

/// Most bytes of raw data (and of pretty JSON) shown.
pub const MAX_SHOWN_BYTES: usize = 64 * 1024;

/// What is shown for the selected event, computed when the selection changes.
#[derive(Debug)]
pub(super) struct DetailCache {
    index: usize,
    raw: String,
    parsed: Result<Value, String>,
    pretty: String,
}

/// Draws the selected event.
pub fn detail_ui(
    ui: &mut Ui,
    model: &TimelineModel,
    state: &mut TimelinePanelState,
    commands: &mut Vec<TimelineCommand>,
) {
    let (Some(index), Some(row)) = (model.selected(), model.selected_row()) else {
        ui.weak("Select an event to see its data.");
        return;
    };
    if state.detail.as_ref().is_none_or(|d| d.index != index) {
        // Shown, parsed and copied as the redaction policy shows it (a server echoing a key).
        let raw = redacted(&row.entry.raw.data).into_owned();
        let parsed = serde_json::from_str::<Value>(&raw).map_err(|e| e.to_string());
        let pretty = match &parsed {
            Ok(value) => serde_json::to_string_pretty(value).unwrap_or_default(),
            Err(_) => String::new(),
        };
        state.detail = Some(DetailCache {
            index,
            raw,
            parsed,
            pretty,
        });
    }
    let Some(cache) = &state.detail else {
        return;
    };
    let raw = &row.entry.raw;
    ui.heading(format!("Event #{}", raw.seq));
    ui.label(format!(
        "attempt {} · received +{} · event {} · type {} · mapped {}",
        row.attempt,
        secs(raw.received_at),
        raw.event.as_deref().unwrap_or("(none)"),
        row.entry.data_type.as_deref().unwrap_or("(none)"),
        row.entry.mapped_kind().unwrap_or("(ignored)"),
    ));
    if let Some(error) = &row.entry.error {
        let error = error.to_string();
        ui.colored_label(
            ui.visuals().error_fg_color,
            format!("error: {}", redacted(&error)),
        );
    }
    if let Some(why) = &row.entry.unparsed {
        ui.colored_label(ui.visuals().warn_fg_color, format!("unparsed: {why}"));
    }
    if let Some(note) = &row.entry.note {
        ui.weak(note);
    }
    ui.horizontal(|ui| {
        ui.strong("Raw data");
        if ui.small_button("Copy").clicked() {
            commands.push(TimelineCommand::CopyText(cache.raw.clone()));
        }
    });
    ui.label(RichText::new(clip(&cache.raw, MAX_SHOWN_BYTES)).monospace());
    match &cache.parsed {
        Err(e) => {
            ui.colored_label(ui.visuals().warn_fg_color, format!("not JSON: {e}"));
        }
        Ok(value) => {
            ui.horizontal(|ui| {
                ui.strong("Parsed");
                ui.selectable_value(&mut state.json_as_text, false, "Tree");
                ui.selectable_value(&mut state.json_as_text, true, "Text");
            });
            if state.json_as_text {
                ui.label(RichText::new(clip(&cache.pretty, MAX_SHOWN_BYTES)).monospace());
            } else {
                json_tree_ui(ui, ("timeline_event", index), value);
            }
        }
    }
}
