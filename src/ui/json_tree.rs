//! The JSON tree view of a compiled column: lazily expanded objects and arrays, long values
//! cut with the rest in a tooltip.

use egui::{RichText, Ui};
use serde_json::Value;

use super::widgets::note_line;

/// Children shown per JSON array/object before a "… more" line.
const MAX_TREE_CHILDREN: usize = 200;

/// The members of `map` as tree rows.
pub fn json_object_tree(ui: &mut Ui, map: &crate::core::json::JsonMap, id: &str) {
    for (i, (k, v)) in map.iter().enumerate() {
        if i == MAX_TREE_CHILDREN {
            note_line(ui, &format!("… {} more keys", map.len() - i));
            break;
        }
        json_tree(ui, k, v, &format!("{id}/{k}"));
    }
}

/// One value as a tree row (objects and arrays collapsible).
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
            egui::CollapsingHeader::new(format!(
                "{prefix}[…] {}",
                crate::core::format::count(items.len() as u64, "item")
            ))
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
