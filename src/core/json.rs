//! Small JSON helpers shared by the core: the ordered map type, tagged-object dispatch with a
//! verbatim fallback, and JSON-path error formatting.

use serde::de::DeserializeOwned;
use serde_json::Value;

/// An insertion-ordered JSON object (serde_json is built with `preserve_order`).
pub type JsonMap = serde_json::Map<String, Value>;

/// Deserializes `value` into `T`, returning an error message that names the JSON path inside the
/// value where it failed (for example ``call_id: missing field `call_id` ``).
pub fn from_value_with_path<T: DeserializeOwned>(value: Value) -> Result<T, String> {
    serde_path_to_error::deserialize(value).map_err(|err| {
        let path = err.path().to_string();
        let inner = err.into_inner().to_string();
        if path.is_empty() || path == "." {
            inner
        } else {
            format!("{path}: {inner}")
        }
    })
}

/// Joins a parent JSON path and a child segment (`input` + `3` → `input[3]`, `a` + `b` → `a.b`).
pub fn join_path(parent: &str, child: &str) -> String {
    if parent.is_empty() {
        child.to_string()
    } else if child.starts_with('[') {
        format!("{parent}{child}")
    } else {
        format!("{parent}.{child}")
    }
}

/// Takes the string `type` tag out of an object, leaving the remaining fields.
///
/// Returns `None` for the tag when the object has no `type` or it is not a string.
pub fn split_tag(mut map: JsonMap) -> (Option<String>, JsonMap) {
    if matches!(map.get("type"), Some(Value::String(_)))
        && let Some(Value::String(tag)) = map.shift_remove("type")
    {
        return (Some(tag), map);
    }
    (None, map)
}

/// Builds an object whose first key is `"type": tag`, followed by `fields` in order.
pub fn with_tag_first(tag: &str, fields: JsonMap) -> JsonMap {
    let mut out = JsonMap::with_capacity(fields.len() + 1);
    out.insert("type".to_string(), Value::String(tag.to_string()));
    out.extend(fields);
    out
}

/// A short description of a JSON value's kind, for error messages.
pub fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
