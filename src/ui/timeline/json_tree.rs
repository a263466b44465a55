//! A read-only JSON tree for the selected event: objects and arrays as collapsible headers
//! (opened lazily: collapsed children are not laid out), scalars on one line, at most
//! [`MAX_CHILDREN`] children per node and [`MAX_SCALAR_CHARS`] characters per value.

use crate::core::format::count;
use egui::{CollapsingHeader, RichText, Ui};
use serde_json::Value;

/// Children shown per object or array.
pub const MAX_CHILDREN: usize = 200;
/// Characters shown of a string value.
pub const MAX_SCALAR_CHARS: usize = 2000;

/// Draws `value` as a tree; `id` keeps the open state per event.
pub fn json_tree_ui(ui: &mut Ui, id: impl std::hash::Hash + std::fmt::Debug, value: &Value) {
    ui.push_id(id, |ui| node_ui(ui, None, value, 0));
}

fn node_ui(ui: &mut Ui, key: Option<&str>, value: &Value, depth: usize) {
    let prefix = key.map(|k| format!("{k}: ")).unwrap_or_default();
    let children: Vec<(String, &Value)> = match value {
        Value::Object(map) => map.iter().map(|(k, v)| (k.clone(), v)).collect(),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, v)| (i.to_string(), v))
            .collect(),
        scalar => {
            ui.label(RichText::new(format!("{prefix}{}", scalar_text(scalar))).monospace());
            return;
        }
    };
    let summary = match value {
        Value::Object(_) => format!("{prefix}{{…}} {}", count(children.len() as u64, "key")),
        _ => format!("{prefix}[…] {}", count(children.len() as u64, "item")),
    };
    CollapsingHeader::new(RichText::new(summary).monospace())
        .id_salt((key, depth))
        .default_open(depth < 2)
        .show(ui, |ui| {
            for (k, v) in children.iter().take(MAX_CHILDREN) {
                node_ui(ui, Some(k), v, depth + 1);
            }
            if children.len() > MAX_CHILDREN {
                ui.weak(format!("… {} more", children.len() - MAX_CHILDREN));
            }
        });
}

fn scalar_text(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(MAX_SCALAR_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}
