//! The HTTP body: each top-level field decided by the rules and the model's capabilities (§1, §2,
//! §6, §7; the gated controls in `controls`), emitted in the rules' field order, the compaction
//! modes applied, then the Prompt's body overrides.

use serde_json::{Value, json};

use super::CompileNote;
use std::sync::Arc;

use super::cache::{ItemCache, ItemWire};
use super::compaction::{checkpoint_message, compact_endpoint_body};
use super::controls::{reasoning_value, service_tier, text_value};
use super::items::{ItemContext, apply_id_policy};
use super::lite::{additional_tools_id, instructions_message_id, lite_tools};
use crate::core::error::PromptError;
use crate::core::items::ResponseItem;
use crate::core::json::JsonMap;
use crate::core::models::ModelInfo;
use crate::core::prompt::{Prompt, PromptMode};
use crate::core::provider::Provider;
use crate::core::rules::{
    BodyField, CompileRules, IncludePolicy, InstructionsPlacement, StorePolicy,
};
use crate::core::tools::ToolSpec;

/// A built body and the cached wire forms of its prompt items (for assembling its bytes).
pub struct BuiltBody {
    /// The body object in wire order; prompt items in `input` are `null` placeholders (see
    /// [`BuiltBody::materialize`]) unless `input` was overridden.
    pub body: JsonMap,
    /// Number of synthesized items before the prompt's items in `input`.
    pub prefix_len: usize,
    /// Wire forms of the prompt items that follow the prefix, in order.
    pub items: Vec<Arc<ItemWire>>,
}

impl BuiltBody {
    /// The body with the prompt items' values in place of their placeholders.
    pub fn materialize(&self, input_overridden: bool) -> JsonMap {
        let mut body = self.body.clone();
        if !input_overridden && let Some(Value::Array(items)) = body.get_mut("input") {
            for (slot, wire) in items.iter_mut().skip(self.prefix_len).zip(&self.items) {
                *slot = wire.value.clone();
            }
        }
        body
    }

    /// True when `other` is the same body (same fields, same cached items).
    pub fn same_as(&self, other: &BuiltBody) -> bool {
        self.prefix_len == other.prefix_len
            && self.items.len() == other.items.len()
            && self
                .items
                .iter()
                .zip(&other.items)
                .all(|(a, b)| Arc::ptr_eq(a, b))
            && self.body == other.body
    }
}

/// Builds the body object in wire order.
pub fn build_body(
    prompt: &Prompt,
    model: &ModelInfo,
    provider: &Provider,
    lite: bool,
    rules: &CompileRules,
    cache: &mut ItemCache,
    notes: &mut Vec<CompileNote>,
) -> Result<BuiltBody, PromptError> {
    let mode = prompt.mode;
    // The compact endpoint prepares ids as for a `store: false` request (§11).
    let stored = match rules.store {
        StorePolicy::AzureOnly => provider.is_azure_responses_endpoint(),
        StorePolicy::AlwaysFalse => false,
    } && mode != PromptMode::CompactEndpoint;
    let ctx = ItemContext {
        rules,
        stored,
        is_openai: provider.is_openai(),
        lite,
    };

    let (mut tools, input, prefix_len, wires) = tools_and_input(prompt, ctx, cache, notes);
    let mut input = Some(input);
    let reasoning = reasoning_value(prompt, model, lite, rules, notes);
    let reasoning_sent = !reasoning.is_null();
    let summary_sent = reasoning.get("summary").is_some();
    let include: Vec<Value> = match rules.include {
        IncludePolicy::Always => vec![json!("reasoning.encrypted_content")],
        IncludePolicy::WhenReasoning if reasoning_sent => {
            vec![json!("reasoning.encrypted_content")]
        }
        IncludePolicy::WhenReasoning => Vec::new(),
    };
    let model_parallel = if model.is_fallback() {
        rules.fallback_parallel_tool_calls
    } else {
        model.supports_parallel_tool_calls
    };
    let mut parallel = prompt.parallel_tool_calls.unwrap_or(model_parallel);
    if mode == PromptMode::Compaction && parallel {
        notes.push(CompileNote::new(
            "parallel_tool_calls",
            "false: the compaction request offers no tools",
        ));
        parallel = false;
    }
    if lite && parallel {
        notes.push(CompileNote::new(
            "parallel_tool_calls",
            "false: Lite requests never ask for parallel tool calls",
        ));
    }
    let mut text = text_value(prompt, model, notes)?;
    let mut service_tier = service_tier(prompt, model, notes);
    let stream_options = rules.stream_options && provider.is_openai() && summary_sent;

    let mut body = JsonMap::with_capacity(rules.field_order.len());
    for field in &rules.field_order {
        let value = match field {
            BodyField::Model => Some(Value::String(prompt.model.clone())),
            BodyField::Instructions => {
                let top_level = !lite && rules.instructions == InstructionsPlacement::TopLevel;
                (top_level && !prompt.base_instructions.is_empty())
                    .then(|| Value::String(prompt.base_instructions.clone()))
            }
            BodyField::Input => input.take().map(Value::Array),
            BodyField::Tools => tools.take(),
            BodyField::ToolChoice => Some(json!("auto")),
            BodyField::ParallelToolCalls => Some(Value::Bool(parallel && !lite)),
            BodyField::Reasoning => Some(reasoning.clone()),
            BodyField::Store => Some(Value::Bool(stored)),
            BodyField::Stream => Some(Value::Bool(true)),
            BodyField::StreamOptions => {
                stream_options.then(|| json!({"reasoning_summary_delivery": "sequential_cutoff"}))
            }
            BodyField::Include => Some(Value::Array(include.clone())),
            BodyField::ServiceTier => service_tier.take().map(Value::String),
            BodyField::PromptCacheKey => prompt
                .prompt_cache_key
                .as_ref()
                .or(prompt.thread_id.as_ref())
                .cloned()
                .map(Value::String),
            BodyField::PromptCacheOptions => prompt.prompt_cache_options.to_wire(),
            BodyField::PromptCacheRetention => {
                prompt.prompt_cache_retention.clone().map(Value::String)
            }
            BodyField::Text => text.take(),
            BodyField::ClientMetadata => prompt.client_metadata.clone().map(Value::Object),
        };
        if let Some(value) = value {
            body.insert(field.key().to_string(), value);
        }
    }
    if mode == PromptMode::CompactEndpoint {
        body = compact_endpoint_body(body, notes);
    }
    apply_overrides(&mut body, prompt, notes);
    Ok(BuiltBody {
        body,
        prefix_len,
        items: wires,
    })
}

/// Top-level `tools` (None under Lite) and the full `input` array, Lite prefix included.
fn tools_and_input(
    prompt: &Prompt,
    ctx: ItemContext<'_>,
    cache: &mut ItemCache,
    notes: &mut Vec<CompileNote>,
) -> (Option<Value>, Vec<Value>, usize, Vec<Arc<ItemWire>>) {
    let rules = ctx.rules;
    let thread = prompt
        .thread_id
        .as_deref()
        .or(prompt.prompt_cache_key.as_deref())
        .unwrap_or("");
    let mut input = Vec::with_capacity(prompt.input.len() + 3);
    // The compaction request offers no tools (§18).
    let prompt_tools: &[ToolSpec] = if prompt.mode == PromptMode::Compaction {
        if !prompt.tools.is_empty() {
            notes.push(CompileNote::new(
                "tools",
                "[]: the compaction request offers no tools",
            ));
        }
        &[]
    } else {
        &prompt.tools
    };
    let tools = if ctx.lite {
        let tools = lite_tools(
            prompt_tools,
            rules.lite_function_namespace.as_deref(),
            notes,
        );
        let tools_value = serde_json::to_value(&tools).unwrap_or(Value::Array(Vec::new()));
        let id = prompt.pinned_ids.additional_tools.clone().or_else(|| {
            rules.synthesized_ids.then(|| {
                additional_tools_id(
                    thread,
                    &serde_json::to_vec(&tools_value).unwrap_or_default(),
                )
            })
        });
        let mut item = JsonMap::new();
        item.insert("type".to_string(), json!("additional_tools"));
        if let Some(id) = id {
            item.insert("id".to_string(), Value::String(id));
        }
        item.insert("role".to_string(), json!("developer"));
        item.insert("tools".to_string(), tools_value);
        apply_id_policy(&mut item, ctx, "input[0]", notes);
        input.push(Value::Object(item));
        lite_prefix_notes(
            prompt,
            LitePrefix {
                prompt_tools,
                tools: &tools,
                namespace: rules.lite_function_namespace.as_deref(),
                standard_instructions: rules.instructions,
            },
            notes,
        );
        if !prompt.base_instructions.is_empty() {
            input.push(instructions_item(prompt, thread, ctx, notes));
        }
        None
    } else {
        if rules.instructions == InstructionsPlacement::DeveloperMessage
            && !prompt.base_instructions.is_empty()
        {
            notes.push(CompileNote::new(
                "input[0]",
                format!(
                    "added: the base instructions travel as this developer message, not as top-level `instructions` ({} rules)",
                    rules.name
                ),
            ));
            input.push(instructions_item(prompt, thread, ctx, notes));
        }
        Some(serde_json::to_value(prompt_tools).unwrap_or(Value::Array(Vec::new())))
    };
    let prefix_len = input.len();
    let mut wires: Vec<Arc<ItemWire>> = Vec::with_capacity(prompt.input.len());
    let mut groups: Vec<NoteGroup> = Vec::new();
    for (i, item) in prompt.input.iter().enumerate() {
        if matches!(item, ResponseItem::ConfigurationUpdate(_))
            && !(ctx.is_openai && rules.configuration_updates_for_openai)
        {
            notes.push(CompileNote::new(
                format!("prompt.input[{i}]"),
                "configuration_update left out: only sent to the OpenAI provider",
            ));
            continue;
        }
        let wire = cache.get(i, item, ctx);
        for note in &wire.notes {
            let at = input.len();
            match groups
                .iter_mut()
                .find(|g| g.suffix == note.path && g.message == note.message)
            {
                Some(group) => group.count += 1,
                None => groups.push(NoteGroup {
                    suffix: note.path.clone(),
                    message: note.message.clone(),
                    first: at,
                    count: 1,
                }),
            }
        }
        // A placeholder: the item's value is filled in (once per distinct body) by the caller,
        // its bytes come from the cache.
        input.push(Value::Null);
        wires.push(wire);
    }
    if prompt.mode == PromptMode::Compaction {
        // A real value (not a placeholder): it has no cached wire form.
        input.push(checkpoint_message());
        notes.push(CompileNote::new(
            format!("input[{}]", input.len() - 1),
            "the checkpoint message asking for a handoff summary (compaction request)",
        ));
    }
    // One note per kind of change, not one per item: a 500-item history would otherwise
    // explain the same dropped id 500 times.
    for g in groups {
        let (path, message) = if g.count == 1 {
            (format!("input[{}]{}", g.first, g.suffix), g.message)
        } else {
            (
                format!("input[*]{}", g.suffix),
                format!(
                    "{} ({} items, the first is input[{}])",
                    g.message, g.count, g.first
                ),
            )
        };
        notes.push(CompileNote::new(path, message));
    }
    (tools, input, prefix_len, wires)
}

/// What the Lite prefix notes need to know besides the prompt.
struct LitePrefix<'a> {
    /// The tools the prompt offers this request (none for a compaction request).
    prompt_tools: &'a [ToolSpec],
    /// The tools as they travel in `input[0]`.
    tools: &'a [ToolSpec],
    /// The namespace function and custom tools are grouped in, when the rules group them.
    namespace: Option<&'a str>,
    /// Where a standard request under the same rules puts the base instructions.
    standard_instructions: InstructionsPlacement,
}

/// What the Lite prefix changes against a standard request under the same rules: the tools
/// move into `input[0]` (grouped into one namespace when the rules say so, and only then
/// said to be), and the base instructions into a developer message after it.
fn lite_prefix_notes(prompt: &Prompt, lite: LitePrefix<'_>, notes: &mut Vec<CompileNote>) {
    notes.push(CompileNote::new(
        "tools",
        if lite.prompt_tools.is_empty() {
            "left out: a Lite request has no top-level `tools` (a standard request sends `tools: []`)"
        } else {
            "left out: a Lite request has no top-level `tools`; they travel in input[0]"
        },
    ));
    let grouped = lite
        .tools
        .iter()
        .find_map(|tool| match (tool, lite.namespace) {
            (ToolSpec::Namespace(ns), Some(name)) if ns.name == name => Some(name),
            _ => None,
        });
    let added = match (lite.tools.is_empty(), grouped) {
        (true, _) => {
            "added: an `additional_tools` developer item with an empty list (no tools to offer)"
                .to_string()
        }
        (false, Some(name)) => format!(
            "added: the tools, as an `additional_tools` developer item, with the function and custom tools grouped in the `{name}` namespace"
        ),
        (false, None) => "added: the tools, as an `additional_tools` developer item".to_string(),
    };
    notes.push(CompileNote::new("input[0]", added));
    if !prompt.base_instructions.is_empty() {
        match lite.standard_instructions {
            InstructionsPlacement::TopLevel => {
                notes.push(CompileNote::new(
                    "instructions",
                    "left out: a Lite request has no top-level `instructions`; they travel in input[1]",
                ));
                notes.push(CompileNote::new(
                    "input[1]",
                    "added: the base instructions, as a developer message",
                ));
            }
            InstructionsPlacement::DeveloperMessage => notes.push(CompileNote::new(
                "input[1]",
                "moved: the base instructions' developer message comes after the tools item (a standard request has it at input[0])",
            )),
        }
    }
    let shift = if prompt.base_instructions.is_empty() {
        1
    } else {
        2
    };
    if !prompt.input.is_empty() {
        notes.push(CompileNote::new(
            format!("input[{shift}]"),
            format!("moved: the prompt's items start here, after the {shift} added item(s)"),
        ));
    }
}

/// Identical per-item notes, gathered.
struct NoteGroup {
    suffix: String,
    message: String,
    first: usize,
    count: usize,
}

/// The developer message carrying the base instructions, with its pinned or derived id.
fn instructions_item(
    prompt: &Prompt,
    thread: &str,
    ctx: ItemContext<'_>,
    notes: &mut Vec<CompileNote>,
) -> Value {
    let text = &prompt.base_instructions;
    let id = prompt.pinned_ids.instructions.clone().or_else(|| {
        ctx.rules
            .synthesized_ids
            .then(|| instructions_message_id(thread, text))
    });
    let item = ResponseItem::developer_text(id, text);
    let Ok(Value::Object(mut map)) = serde_json::to_value(&item) else {
        return Value::Null;
    };
    apply_id_policy(&mut map, ctx, "base_instructions", notes);
    Value::Object(map)
}

/// Applies `body_omit` then `body_overrides` (replace in place; unknown keys appended).
fn apply_overrides(body: &mut JsonMap, prompt: &Prompt, notes: &mut Vec<CompileNote>) {
    for key in &prompt.body_omit {
        if body.shift_remove(key).is_some() {
            notes.push(CompileNote::new(
                key.clone(),
                "left out by the prompt's body_omit",
            ));
        }
    }
    for (key, value) in &prompt.body_overrides {
        if let Some(slot) = body.get_mut(key) {
            *slot = value.clone();
            notes.push(CompileNote::new(
                key.clone(),
                "set by the prompt's body_overrides",
            ));
        } else {
            body.insert(key.clone(), value.clone());
        }
    }
}
