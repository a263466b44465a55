//! Outbound item hygiene: turns a Prompt item into its wire JSON under the compile rules —
//! unknown-field placement, id policy (§5.4), non-OpenAI cleanup (§1 step 2) and Lite image-detail
//! stripping (§6.1).

use serde_json::Value;

use super::CompileNote;
use crate::core::items::{PASSTHROUGH_KEY, ResponseItem};
use crate::core::json::{JsonMap, with_tag_first};
use crate::core::rules::{CompileRules, IdPolicy, UnknownItemFields};

/// The facts about a request that item hygiene depends on.
#[derive(Debug, Clone, Copy)]
pub struct ItemContext<'a> {
    /// The rules in force.
    pub rules: &'a CompileRules,
    /// `store` is true (ids survive under A rules).
    pub stored: bool,
    /// The provider is the OpenAI provider (passthrough metadata kept).
    pub is_openai: bool,
    /// Lite: strip image `detail`.
    pub lite: bool,
}

/// True iff `id` splits at its first `_` into a non-empty prefix and suffix (C's `is_prefixed`).
pub fn is_prefixed_id(id: &str) -> bool {
    match id.split_once('_') {
        Some((prefix, suffix)) => !prefix.is_empty() && !suffix.is_empty(),
        None => false,
    }
}

/// Serializes one item for the wire. `path` names it in notes (`input[3]`).
pub fn item_to_wire(
    item: &ResponseItem,
    ctx: ItemContext<'_>,
    path: &str,
    notes: &mut Vec<CompileNote>,
) -> Value {
    let Ok(Value::Object(mut map)) = serde_json::to_value(item) else {
        // Items are plain data with string keys; serialization cannot fail.
        return Value::Null;
    };
    if let Some(extra) = item.extra()
        && !extra.is_empty()
    {
        map = place_unknown_fields(map, extra, ctx.rules, path, notes);
    }
    if !ctx.is_openai && map.shift_remove(PASSTHROUGH_KEY).is_some() {
        notes.push(CompileNote::new(
            format!("{path}.{PASSTHROUGH_KEY}"),
            "dropped: passthrough metadata is only sent to the OpenAI provider",
        ));
    }
    if let ResponseItem::FunctionCall(call) = item
        && call.encrypted_function_args.is_some()
        && !(ctx.is_openai && ctx.rules.encrypted_function_args_for_openai)
    {
        map.shift_remove("encrypted_function_args");
        notes.push(CompileNote::new(
            format!("{path}.encrypted_function_args"),
            if ctx.rules.encrypted_function_args_for_openai {
                "dropped: encrypted function arguments are only sent to the OpenAI provider"
            } else {
                "dropped: these rules do not know encrypted function arguments"
            },
        ));
    }
    apply_id_policy(&mut map, ctx, path, notes);
    if ctx.lite {
        strip_image_detail(&mut map);
    }
    Value::Object(map)
}

/// Applies the id policy to an item object in place.
pub fn apply_id_policy(
    map: &mut JsonMap,
    ctx: ItemContext<'_>,
    path: &str,
    notes: &mut Vec<CompileNote>,
) {
    let Some(Value::String(id)) = map.get("id") else {
        return;
    };
    let keep = match ctx.rules.ids {
        IdPolicy::StripUnlessStored => ctx.stored,
        IdPolicy::KeepPrefixed => is_prefixed_id(id),
    };
    if !keep {
        let why = match ctx.rules.ids {
            IdPolicy::StripUnlessStored => "dropped: ids are only sent when `store` is true",
            IdPolicy::KeepPrefixed => "dropped: not a prefixed id (`<prefix>_<suffix>`)",
        };
        map.shift_remove("id");
        notes.push(CompileNote::new(format!("{path}.id"), why));
    }
}

fn place_unknown_fields(
    map: JsonMap,
    extra: &JsonMap,
    rules: &CompileRules,
    path: &str,
    notes: &mut Vec<CompileNote>,
) -> JsonMap {
    match rules.unknown_item_fields {
        UnknownItemFields::Drop => {
            let mut map = map;
            for key in extra.keys() {
                map.shift_remove(key);
                notes.push(CompileNote::new(
                    format!("{path}.{key}"),
                    "dropped: these rules drop fields the item type does not model",
                ));
            }
            map
        }
        UnknownItemFields::AfterType => {
            let mut rest = map;
            let tag = match rest.shift_remove("type") {
                Some(Value::String(tag)) => tag,
                _ => String::new(),
            };
            let mut head = JsonMap::with_capacity(extra.len());
            for key in extra.keys() {
                if let Some(v) = rest.shift_remove(key) {
                    head.insert(key.clone(), v);
                }
            }
            let mut out = with_tag_first(&tag, head);
            out.extend(rest);
            out
        }
    }
}

/// Removes `detail` from `input_image` parts of message content and of tool-output arrays.
fn strip_image_detail(map: &mut JsonMap) {
    let key = match map.get("type").and_then(Value::as_str) {
        Some("message") => "content",
        Some("function_call_output" | "custom_tool_call_output") => "output",
        _ => return,
    };
    if let Some(Value::Array(parts)) = map.get_mut(key) {
        for part in parts {
            if let Value::Object(part) = part
                && part.get("type").and_then(Value::as_str) == Some("input_image")
            {
                part.shift_remove("detail");
            }
        }
    }
}
