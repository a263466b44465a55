//! The capability-gated controls of a body (§7): `reasoning` (effort, summary, Lite context),
//! `text` (verbosity, output schema) and `service_tier`, each decided by the rules and the model.

use serde_json::{Value, json};

use super::CompileNote;
use crate::core::error::PromptError;
use crate::core::json::JsonMap;
use crate::core::models::ModelInfo;
use crate::core::prompt::{Prompt, Setting};
use crate::core::rules::{CompileRules, ReasoningGate};

/// Name of the output-schema format Codex sends.
pub const OUTPUT_SCHEMA_NAME: &str = "codex_output_schema";

/// `reasoning`: an object `{effort?, summary?, context?}` or `null` (§7).
pub fn reasoning_value(
    prompt: &Prompt,
    model: &ModelInfo,
    lite: bool,
    rules: &CompileRules,
    notes: &mut Vec<CompileNote>,
) -> Value {
    if rules.reasoning_gate == ReasoningGate::SummariesFlag && !model.supports_reasoning_summaries {
        if !prompt.reasoning.effort.is_default() || !prompt.reasoning.summary.is_default() {
            notes.push(CompileNote::new(
                "reasoning",
                "null: the model does not support reasoning summaries, and these rules send reasoning only to models that do",
            ));
        }
        return Value::Null;
    }
    let mut effort = match &prompt.reasoning.effort {
        Setting::Value(e) => Some(e.clone()),
        Setting::Omit => None,
        Setting::Default => model.default_reasoning_level.clone(),
    };
    if rules.ultra_as_max && effort.as_deref() == Some("ultra") {
        notes.push(CompileNote::new(
            "reasoning.effort",
            "`ultra` is sent as `max`",
        ));
        effort = Some("max".to_string());
    }
    let mut summary = match &prompt.reasoning.summary {
        Setting::Value(s) => Some(s.clone()),
        Setting::Omit => None,
        Setting::Default => Some(
            model
                .default_reasoning_summary
                .clone()
                .unwrap_or_else(|| "auto".to_string()),
        ),
    };
    if summary.as_deref() == Some("none") {
        summary = None;
    }
    let summary_gate = match rules.reasoning_gate {
        ReasoningGate::Always => (!model.supports_reasoning_summary_parameter)
            .then_some("omitted: the model does not take a summary parameter"),
        ReasoningGate::SummaryByFlag => (!model.supports_reasoning_summaries)
            .then_some("omitted: the model does not support reasoning summaries"),
        ReasoningGate::SummariesFlag => None,
    };
    if summary.is_some()
        && let Some(why) = summary_gate
    {
        notes.push(CompileNote::new("reasoning.summary", why));
        summary = None;
    }
    let mut obj = JsonMap::new();
    if let Some(effort) = effort {
        obj.insert("effort".to_string(), Value::String(effort));
    }
    if let Some(summary) = summary {
        obj.insert("summary".to_string(), Value::String(summary));
    }
    if lite {
        obj.insert("context".to_string(), json!("all_turns"));
        notes.push(CompileNote::new(
            "reasoning.context",
            "added: all_turns — Lite always asks the model to keep its reasoning across turns",
        ));
    }
    Value::Object(obj)
}

/// `text`: `{verbosity?, format?}` or None when neither applies (§2, §7).
pub fn text_value(
    prompt: &Prompt,
    model: &ModelInfo,
    notes: &mut Vec<CompileNote>,
) -> Result<Option<Value>, PromptError> {
    let verbosity = if model.support_verbosity {
        match &prompt.verbosity {
            Setting::Value(v) => Some(v.clone()),
            Setting::Omit => None,
            Setting::Default => model.default_verbosity.clone(),
        }
    } else {
        if let Setting::Value(v) = &prompt.verbosity {
            notes.push(CompileNote::new(
                "text.verbosity",
                format!("`{v}` omitted: the model does not support verbosity"),
            ));
        }
        None
    };
    let format = match &prompt.output_schema {
        Some(schema @ Value::Object(_)) => Some(json!({
            "type": "json_schema",
            "strict": prompt.output_schema_strict,
            "schema": schema,
            "name": OUTPUT_SCHEMA_NAME,
        })),
        Some(_) => {
            return Err(PromptError::invalid(
                "output_schema",
                "the output schema must be a JSON object",
            ));
        }
        None => None,
    };
    if verbosity.is_none() && format.is_none() {
        return Ok(None);
    }
    let mut text = JsonMap::new();
    if let Some(v) = verbosity {
        text.insert("verbosity".to_string(), Value::String(v));
    }
    if let Some(f) = format {
        text.insert("format".to_string(), f);
    }
    Ok(Some(Value::Object(text)))
}

/// `service_tier`: sent only if not `default` and listed by the model (`fast` = `priority`).
pub fn service_tier(
    prompt: &Prompt,
    model: &ModelInfo,
    notes: &mut Vec<CompileNote>,
) -> Option<String> {
    let tier = prompt.service_tier.as_deref()?;
    let tier = if tier == "fast" { "priority" } else { tier };
    if tier == "default" {
        return None;
    }
    if model.service_tiers.iter().any(|t| t == tier) {
        Some(tier.to_string())
    } else {
        notes.push(CompileNote::new(
            "service_tier",
            format!("`{tier}` omitted: the model does not offer this tier"),
        ));
        None
    }
}
