//! Body import ("decompile"): a captured request body (standard or Lite) becomes a `Prompt` that
//! records the dialect, rules preset and provider kind it matched, such that compiling it back
//! gives the same JSON value. The Lite prefix is lifted back into tools and base instructions.
//!
//! Detection is by trial: each (rules preset × provider kind) is tried, most likely first, and
//! the one whose compile reproduces the body with the fewest top-level overrides wins. Whatever
//! no preset reproduces is kept in `body_overrides` / `body_omit`, so nothing is lost.

pub mod curl;
mod detect;
mod duplicates;
mod headers;

pub use duplicates::{DuplicateKey, duplicate_keys};
pub use headers::{CAPTURED_KEY_ENV, CapturedHeaders, TRANSPORT_HEADERS};

use serde_json::Value;

use super::compile::compaction::{CompactionKind, checkpoint_message, is_compaction_request};
use super::compile::compile;
use super::compile::items::{ItemContext, item_to_wire};
use super::compile::lite::unfold_tools;
use super::error::PromptError;
use super::items::{PASSTHROUGH_KEY, ResponseItem};
use super::json::{JsonMap, kind_of};
use super::models::{ModelCatalog, ModelInfo};
use super::prompt::{
    Dialect, PinnedIds, Prompt, PromptCacheOptions, PromptMode, ReasoningSettings, Setting,
};
use super::provider::{Provider, ProviderKind};
use super::rules::{CompileRules, InstructionsPlacement, StorePolicy};
use super::tools::ToolSpec;

/// The result of importing a body.
#[derive(Debug, Clone)]
pub struct ImportOutcome {
    /// The prompt that compiles back to the body.
    pub prompt: Prompt,
    /// Top-level fields no preset reproduced (kept as overrides).
    pub overridden: Vec<String>,
}

/// Imports a captured body.
pub fn import_body(body: &Value, catalog: &ModelCatalog) -> Result<ImportOutcome, PromptError> {
    import_request(body, None, catalog)
}

/// Imports a captured body and, when given, the headers captured with it: the client version
/// in their `user-agent` picks the Codex preset, and the Prompt records what makes its compiled
/// headers equal the captured ones (see [`CapturedHeaders`]).
pub fn import_request(
    body: &Value,
    headers: Option<&CapturedHeaders>,
    catalog: &ModelCatalog,
) -> Result<ImportOutcome, PromptError> {
    let mut outcome = import_body_with(body, headers.and_then(|h| h.get("user-agent")), catalog)?;
    if let Some(captured) = headers {
        let prompt = &mut outcome.prompt;
        let rules = CompileRules::preset(&prompt.compile.rules)
            .ok_or_else(|| PromptError::invalid("compile.rules", "unknown rules preset"))?;
        let model = catalog.lookup(&prompt.model);
        headers::apply_captured(prompt, captured, &model, &rules)?;
    }
    Ok(outcome)
}

fn import_body_with(
    body: &Value,
    user_agent: Option<&str>,
    catalog: &ModelCatalog,
) -> Result<ImportOutcome, PromptError> {
    let compaction = is_compaction_request(body);
    let Value::Object(body) = body else {
        return Err(PromptError::invalid(
            "$",
            format!(
                "a request body must be a JSON object, got {}",
                kind_of(body)
            ),
        ));
    };
    let model_name = match body.get("model") {
        Some(Value::String(m)) if !m.trim().is_empty() => m.clone(),
        Some(Value::String(_)) => return Err(PromptError::invalid("model", "model is empty")),
        Some(other) => {
            return Err(PromptError::invalid(
                "model",
                format!("model must be a string, got {}", kind_of(other)),
            ));
        }
        None => return Err(PromptError::invalid("model", "the body has no `model`")),
    };
    // A string `input` (allowed by the API) has no items to model; it is kept as an override.
    let input = match body.get("input") {
        Some(Value::Array(items)) => items.as_slice(),
        _ => &[],
    };
    // A compaction request is imported as its history with the Prompt in that mode (the
    // checkpoint message is the mode's, not the history's); as a turn too, should the mode not
    // reproduce the body (a bare SDK body can look like a `/responses/compact` one).
    let mut tries = match (compaction, input.split_last()) {
        (Some(CompactionKind::InBand), Some((last, history))) if *last == checkpoint_message() => {
            vec![(history, PromptMode::Compaction)]
        }
        (Some(CompactionKind::Endpoint), _) => vec![(input, PromptMode::CompactEndpoint)],
        _ => Vec::new(),
    };
    tries.push((input, PromptMode::Turn));
    let model = catalog.lookup(&model_name);
    let lite = matches!(input.first(), Some(Value::Object(first))
        if first.get("type").and_then(Value::as_str) == Some("additional_tools"));

    let mut best: Option<ImportOutcome> = None;
    'modes: for (input, mode) in tries {
        for (rules, kind) in candidates(body, input, user_agent) {
            let provider = Provider::preset(kind);
            let mut prompt =
                build_prompt(body, input, lite, &model_name, &model, &rules, &provider)?;
            prompt.mode = mode;
            if mode == PromptMode::Compaction {
                // `false` is the mode's; the turn it precedes follows the model again.
                prompt.parallel_tool_calls = None;
            }
            let outcome = reconcile(prompt, body, &model, &provider, &rules)?;
            let better = match &best {
                None => true,
                Some(b) => outcome.overridden.len() < b.overridden.len(),
            };
            if better {
                let done = outcome.overridden.is_empty();
                best = Some(outcome);
                if done {
                    break 'modes;
                }
            }
        }
    }
    best.ok_or_else(|| PromptError::invalid("$", "no compile rules to try"))
}

/// (rules, provider) pairs to try, most likely first.
fn candidates(
    body: &JsonMap,
    input: &[Value],
    user_agent: Option<&str>,
) -> Vec<(CompileRules, ProviderKind)> {
    let stream_second = body.keys().nth(1).map(String::as_str) == Some("stream");
    let [codex, other_codex] = detect::codex_presets(body, user_agent);
    let rules_order = if stream_second || !body.contains_key("instructions") {
        [codex, other_codex, CompileRules::seed()]
    } else {
        [CompileRules::seed(), codex, other_codex]
    };
    let has_passthrough = input.iter().any(|item| {
        item.as_object().is_some_and(|m| {
            m.contains_key(PASSTHROUGH_KEY) || m.contains_key("encrypted_function_args")
        })
    });
    let kinds = if body.get("store") == Some(&Value::Bool(true)) {
        [
            ProviderKind::Azure,
            ProviderKind::Openai,
            ProviderKind::Compatible,
        ]
    } else if has_passthrough {
        [
            ProviderKind::Openai,
            ProviderKind::Compatible,
            ProviderKind::Azure,
        ]
    } else {
        [
            ProviderKind::Compatible,
            ProviderKind::Openai,
            ProviderKind::Azure,
        ]
    };
    rules_order
        .into_iter()
        .flat_map(|r| kinds.into_iter().map(move |k| (r.clone(), k)))
        .collect()
}

/// Parses a tool, keeping it verbatim when the typed form would not reproduce it.
fn tool_from_body(value: &Value, path: &str) -> Result<ToolSpec, PromptError> {
    let tool = ToolSpec::from_value(value.clone()).map_err(|e| located(path, &e))?;
    if serde_json::to_value(&tool).ok().as_ref() == Some(value) {
        return Ok(tool);
    }
    Ok(match value {
        Value::Object(map) => ToolSpec::Other(map.clone()),
        _ => tool,
    })
}

/// Parses an input item, keeping it verbatim when its typed wire form differs from the body.
fn item_from_body(
    value: &Value,
    ctx: ItemContext<'_>,
    path: &str,
) -> Result<ResponseItem, PromptError> {
    let item = ResponseItem::from_value(value.clone()).map_err(|e| located(path, &e))?;
    let mut scratch = Vec::new();
    if &item_to_wire(&item, ctx, "", &mut scratch) == value {
        return Ok(item);
    }
    Ok(match value {
        Value::Object(map) => ResponseItem::Other(map.clone()),
        _ => item,
    })
}

/// An error from a nested parser (`field: message`) placed under `path`.
fn located(path: &str, message: &str) -> PromptError {
    let err = <serde_json::Error as serde::de::Error>::custom(message);
    PromptError::from_serde(path, &err)
}

fn build_prompt(
    body: &JsonMap,
    input: &[Value],
    lite: bool,
    model_name: &str,
    model: &ModelInfo,
    rules: &CompileRules,
    provider: &Provider,
) -> Result<Prompt, PromptError> {
    let mut prompt = Prompt::new(model_name);
    prompt.compile.dialect = if lite {
        Dialect::Lite
    } else {
        Dialect::Standard
    };
    prompt.compile.rules = rules.name.clone();
    prompt.compile.provider = provider.kind();
    let stored = match rules.store {
        StorePolicy::AzureOnly => provider.is_azure_responses_endpoint(),
        StorePolicy::AlwaysFalse => false,
    };
    let ctx = ItemContext {
        rules,
        stored,
        is_openai: provider.is_openai(),
        lite,
    };

    let mut rest = input;
    let mut pinned = PinnedIds::default();
    if lite {
        if let Some(Value::Object(first)) = rest.first() {
            pinned.additional_tools = first.get("id").and_then(Value::as_str).map(String::from);
            let tools: Vec<ToolSpec> = match first.get("tools") {
                Some(Value::Array(tools)) => tools
                    .iter()
                    .enumerate()
                    .map(|(i, t)| tool_from_body(t, &format!("input[0].tools[{i}]")))
                    .collect::<Result<_, _>>()?,
                _ => Vec::new(),
            };
            prompt.tools = match &rules.lite_function_namespace {
                Some(name) => unfold_tools(tools, name),
                None => tools,
            };
        }
        rest = &rest[1..];
        if let Some(text) = developer_text(rest.first()) {
            prompt.base_instructions = text.0;
            pinned.instructions = text.1;
            rest = &rest[1..];
        }
    } else {
        match rules.instructions {
            InstructionsPlacement::TopLevel => match body.get("instructions") {
                Some(Value::String(text)) => prompt.base_instructions = text.clone(),
                Some(other) => {
                    return Err(PromptError::invalid(
                        "instructions",
                        format!("instructions must be a string, got {}", kind_of(other)),
                    ));
                }
                None => {}
            },
            InstructionsPlacement::DeveloperMessage => {
                if let Some(text) = developer_text(rest.first()) {
                    prompt.base_instructions = text.0;
                    pinned.instructions = text.1;
                    rest = &rest[1..];
                }
            }
        }
        if let Some(Value::Array(tools)) = body.get("tools") {
            prompt.tools = tools
                .iter()
                .enumerate()
                .map(|(i, t)| tool_from_body(t, &format!("tools[{i}]")))
                .collect::<Result<_, _>>()?;
        }
        if let Some(Value::Bool(parallel)) = body.get("parallel_tool_calls") {
            prompt.parallel_tool_calls = Some(*parallel);
        }
    }
    prompt.pinned_ids = pinned;
    let offset = input.len() - rest.len();
    prompt.input = rest
        .iter()
        .enumerate()
        .map(|(i, v)| item_from_body(v, ctx, &format!("input[{}]", i + offset)))
        .collect::<Result<_, _>>()?;
    prompt.reasoning = reasoning_settings(body.get("reasoning"), model);
    import_text(&mut prompt, body.get("text"), model);
    prompt.service_tier = body
        .get("service_tier")
        .and_then(Value::as_str)
        .map(String::from);
    prompt.prompt_cache_key = body
        .get("prompt_cache_key")
        .and_then(Value::as_str)
        .map(String::from);
    if let Some(options) = body
        .get("prompt_cache_options")
        .and_then(PromptCacheOptions::from_wire)
    {
        prompt.prompt_cache_options = options;
    }
    prompt.prompt_cache_retention = body
        .get("prompt_cache_retention")
        .and_then(Value::as_str)
        .map(String::from);
    if let Some(Value::Object(meta)) = body.get("client_metadata")
        && meta.values().all(Value::is_string)
    {
        prompt.thread_id = meta
            .get("thread_id")
            .and_then(Value::as_str)
            .map(String::from);
        prompt.client_metadata = Some(meta.clone());
    }
    Ok(prompt)
}

/// `(text, id)` of a developer message that can carry base instructions.
fn developer_text(value: Option<&Value>) -> Option<(String, Option<String>)> {
    let item = ResponseItem::from_value(value?.clone()).ok()?;
    let text = item.as_developer_text()?.to_string();
    Some((text, item.id().map(String::from)))
}

fn reasoning_settings(reasoning: Option<&Value>, model: &ModelInfo) -> ReasoningSettings {
    let Some(Value::Object(r)) = reasoning else {
        return ReasoningSettings::default();
    };
    let effort = match r.get("effort").and_then(Value::as_str) {
        Some(e) => Setting::Value(e.to_string()),
        None if model.default_reasoning_level.is_some() => Setting::Omit,
        None => Setting::Default,
    };
    let default_summary = model.default_reasoning_summary.as_deref().unwrap_or("auto");
    let summary = match r.get("summary").and_then(Value::as_str) {
        Some(s) => Setting::Value(s.to_string()),
        None if default_summary == "none" => Setting::Default,
        None => Setting::Omit,
    };
    ReasoningSettings { effort, summary }
}

fn import_text(prompt: &mut Prompt, text: Option<&Value>, model: &ModelInfo) {
    let text = match text {
        Some(Value::Object(t)) => Some(t),
        _ => None,
    };
    prompt.verbosity = match text
        .and_then(|t| t.get("verbosity"))
        .and_then(Value::as_str)
    {
        Some(v) => Setting::Value(v.to_string()),
        None if model.support_verbosity && model.default_verbosity.is_some() => Setting::Omit,
        None => Setting::Default,
    };
    if let Some(Value::Object(format)) = text.and_then(|t| t.get("format"))
        && format.get("type").and_then(Value::as_str) == Some("json_schema")
        && let Some(schema @ Value::Object(_)) = format.get("schema")
    {
        prompt.output_schema = Some(schema.clone());
        prompt.output_schema_strict = format
            .get("strict")
            .and_then(Value::as_bool)
            .unwrap_or(true);
    }
}

/// Compiles the candidate prompt and keeps every top-level difference as an override.
fn reconcile(
    mut prompt: Prompt,
    body: &JsonMap,
    model: &ModelInfo,
    provider: &Provider,
    rules: &CompileRules,
) -> Result<ImportOutcome, PromptError> {
    let compiled = compile(&prompt, model, provider, prompt.compile.dialect, rules)?;
    let mut overridden = Vec::new();
    for (key, value) in body {
        if compiled.body.get(key) != Some(value) {
            prompt.body_overrides.insert(key.clone(), value.clone());
            overridden.push(key.clone());
        }
    }
    for key in compiled.body.keys() {
        if !body.contains_key(key) {
            prompt.body_omit.push(key.clone());
            overridden.push(key.clone());
        }
    }
    Ok(ImportOutcome { prompt, overridden })
}
