//! Per-item wire forms shared between the views of one compile batch: an item's wire JSON (value
//! and bytes) depends only on the few request facts it is sensitive to, so the six views of a
//! prompt serialize each item once or twice instead of six times.

use std::sync::Arc;

use serde_json::Value;

use super::CompileNote;
use super::items::{ItemContext, item_to_wire};
use crate::core::items::{ContentItem, ResponseItem, ToolOutput};
use crate::core::rules::IdPolicy;

/// One item as it goes on the wire for one request context.
#[derive(Debug)]
pub struct ItemWire {
    /// The item's JSON (for the body's object form, built when read).
    pub value: Value,
    /// Its exact compact bytes.
    pub bytes: Vec<u8>,
    /// Notes with paths relative to the item (`.id`).
    pub notes: Vec<CompileNote>,
}

/// The request facts an item's wire form may depend on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Key {
    lite: bool,
    openai: bool,
    stored: bool,
}

/// Wire forms of a prompt's items, computed on demand and kept per sensitive context.
#[derive(Debug)]
pub struct ItemCache {
    slots: Vec<Vec<(Key, Arc<ItemWire>)>>,
}

impl ItemCache {
    /// An empty cache for `len` items.
    pub fn new(len: usize) -> Self {
        Self {
            slots: vec![Vec::new(); len],
        }
    }

    /// The wire form of `items[index]` under `ctx`.
    pub fn get(
        &mut self,
        index: usize,
        item: &ResponseItem,
        ctx: ItemContext<'_>,
    ) -> Arc<ItemWire> {
        let key = sensitive_key(item, ctx);
        if let Some(slot) = self.slots.get(index)
            && let Some((_, wire)) = slot.iter().find(|(k, _)| *k == key)
        {
            return Arc::clone(wire);
        }
        let mut notes = Vec::new();
        let value = item_to_wire(item, ctx, "", &mut notes);
        let bytes = serde_json::to_vec(&value).unwrap_or_default();
        let wire = Arc::new(ItemWire {
            value,
            bytes,
            notes,
        });
        if let Some(slot) = self.slots.get_mut(index) {
            slot.push((key, Arc::clone(&wire)));
        }
        wire
    }
}

/// The context with every fact the item cannot be affected by set to a fixed value.
fn sensitive_key(item: &ResponseItem, ctx: ItemContext<'_>) -> Key {
    Key {
        lite: ctx.lite && has_image(item),
        openai: ctx.is_openai && openai_sensitive(item),
        stored: ctx.stored && ctx.rules.ids == IdPolicy::StripUnlessStored && item.id().is_some(),
    }
}

fn has_image(item: &ResponseItem) -> bool {
    let image = |parts: &[ContentItem]| {
        parts
            .iter()
            .any(|p| matches!(p, ContentItem::InputImage { .. }))
    };
    match item {
        ResponseItem::Message(m) => image(&m.content),
        ResponseItem::FunctionCallOutput(o) => {
            matches!(&o.output, ToolOutput::Items(p) if image(p))
        }
        ResponseItem::CustomToolCallOutput(o) => {
            matches!(&o.output, ToolOutput::Items(p) if image(p))
        }
        // Verbatim items are matched on their `type` string by the hygiene: assume the worst.
        ResponseItem::Other(_) => true,
        _ => false,
    }
}

fn openai_sensitive(item: &ResponseItem) -> bool {
    item.passthrough().is_some()
        || matches!(item, ResponseItem::FunctionCall(call) if call.encrypted_function_args.is_some())
}
