//! "Ask the server why" (WIRE_SPEC §19): a body sent with
//! `prompt_cache_options.comparison_response_id` set to an earlier response, so the response
//! carries `prompt_cache_diagnostics`. Used by the workbench's Send and the Sessions' Re-send on
//! an already compiled (or recorded) body: the option is set in place — kept with the body's
//! other cache options — or `prompt_cache_options` is added where the rules' field order puts
//! it (after `prompt_cache_key`), and the body's bytes are made again.

use serde_json::Value;

use super::{BodyValue, CompileNote, CompiledRequest};
use crate::core::error::PromptError;
use crate::core::json::JsonMap;
use crate::core::rules::{BodyField, CompileRules};

/// The key set in `prompt_cache_options`.
pub const COMPARISON_KEY: &str = "comparison_response_id";

/// Sets `prompt_cache_options.comparison_response_id` in `body`. An existing options object
/// keeps its other fields and their order; a missing one is inserted before the first key that
/// `field_order` places after `prompt_cache_options` (keys it does not know count as after).
/// A non-object `prompt_cache_options` is replaced.
pub fn set_comparison_response(body: &mut JsonMap, field_order: &[BodyField], response_id: &str) {
    let id = Value::String(response_id.to_string());
    if let Some(Value::Object(options)) = body.get_mut(BodyField::PromptCacheOptions.key()) {
        options.insert(COMPARISON_KEY.to_string(), id);
        return;
    }
    let mut options = JsonMap::new();
    options.insert(COMPARISON_KEY.to_string(), id);
    let rank = |key: &str| {
        field_order
            .iter()
            .position(|f| f.key() == key)
            .unwrap_or(usize::MAX)
    };
    let own = rank(BodyField::PromptCacheOptions.key());
    body.shift_remove(BodyField::PromptCacheOptions.key());
    let at = body
        .keys()
        .position(|key| rank(key) > own)
        .unwrap_or(body.len());
    body.shift_insert(
        at,
        BodyField::PromptCacheOptions.key().to_string(),
        Value::Object(options),
    );
}

/// `compiled` with `prompt_cache_options.comparison_response_id` set (body, bytes and — when
/// the request is zstd-compressed — its compressed bytes made again), and a note saying so.
pub fn with_comparison_response(
    compiled: &CompiledRequest,
    response_id: &str,
) -> Result<CompiledRequest, PromptError> {
    let order = CompileRules::preset(&compiled.rules)
        .map_or_else(|| BodyField::ALL.to_vec(), |rules| rules.field_order);
    let mut body = JsonMap::clone(&compiled.body);
    set_comparison_response(&mut body, &order, response_id);
    let body_json = serde_json::to_vec(&body)
        .map_err(|e| PromptError::invalid("body", format!("serialization failed: {e}")))?;
    let compressed_body =
        match compiled.compressed_body {
            Some(_) => Some(zstd::encode_all(body_json.as_slice(), 3).map_err(|e| {
                PromptError::invalid("body", format!("zstd compression failed: {e}"))
            })?),
            None => None,
        };
    let mut out = compiled.clone();
    out.body = BodyValue::from_map(body);
    out.body_json = body_json;
    out.compressed_body = compressed_body;
    out.notes.push(CompileNote::new(
        format!("prompt_cache_options.{COMPARISON_KEY}"),
        format!(
            "set to {response_id} (ask the server why): the response carries prompt_cache_diagnostics against it"
        ),
    ));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn keys(body: &JsonMap) -> Vec<&str> {
        body.keys().map(String::as_str).collect()
    }

    #[test]
    fn the_option_goes_after_the_cache_key_or_joins_the_existing_options() {
        let order = CompileRules::codex_0_169().field_order;
        let Value::Object(mut plain) = json!({"model": "m", "stream": true, "input": [],
            "include": [], "prompt_cache_key": "k", "text": {}, "client_metadata": {}})
        else {
            unreachable!()
        };
        set_comparison_response(&mut plain, &order, "resp_1");
        assert_eq!(
            keys(&plain),
            vec![
                "model",
                "stream",
                "input",
                "include",
                "prompt_cache_key",
                "prompt_cache_options",
                "text",
                "client_metadata"
            ]
        );
        assert_eq!(
            plain["prompt_cache_options"],
            json!({"comparison_response_id": "resp_1"})
        );

        let Value::Object(mut with_options) = json!({"model": "m",
            "prompt_cache_options": {"mode": "explicit", "ttl": "12h", "comparison_response_id": "old"},
            "prompt_cache_retention": "24h"})
        else {
            unreachable!()
        };
        set_comparison_response(&mut with_options, &order, "resp_2");
        assert_eq!(
            Value::Object(with_options),
            json!({"model": "m",
                "prompt_cache_options": {"mode": "explicit", "ttl": "12h", "comparison_response_id": "resp_2"},
                "prompt_cache_retention": "24h"})
        );

        // No key the order places after it: appended; an unknown key counts as after.
        let Value::Object(mut short) = json!({"model": "m", "input": [], "metadata": {}}) else {
            unreachable!()
        };
        set_comparison_response(&mut short, &order, "resp_3");
        assert_eq!(
            keys(&short),
            vec!["model", "input", "prompt_cache_options", "metadata"]
        );
    }
}
