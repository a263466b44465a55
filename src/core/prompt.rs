//! `Prompt`: what the form edits and the JSON file format users save (documented in the README,
//! examples in `assets/prompts/`), with parsing that names the JSON path of any problem.

mod cache;
mod client;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

pub use cache::{
    BREAKPOINT_KEY, CacheMode, PromptCacheOptions, breakpoint_value, has_breakpoint, set_breakpoint,
};
pub use client::ClientIdentity;

use super::error::PromptError;
use super::items::ResponseItem;
use super::json::{JsonMap, kind_of};
use super::provider::ProviderKind;
use super::tools::ToolSpec;

/// A setting that can follow the model's default, be left off the wire, or hold a value.
///
/// In a Prompt file: key absent → `Default`; `null` → `Omit`; a value → `Value`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Setting<T> {
    /// Use the model's (or client's) default.
    #[default]
    Default,
    /// Send nothing for this setting.
    Omit,
    /// Send this value.
    Value(T),
}

impl<T> Setting<T> {
    /// True for [`Setting::Default`] (used to skip the key when saving).
    pub fn is_default(&self) -> bool {
        matches!(self, Self::Default)
    }

    /// The explicit value, if any.
    pub fn value(&self) -> Option<&T> {
        match self {
            Self::Value(v) => Some(v),
            _ => None,
        }
    }
}

impl<T: Serialize> Serialize for Setting<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Value(v) => v.serialize(serializer),
            Self::Default | Self::Omit => serializer.serialize_none(),
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Setting<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match Option::<T>::deserialize(deserializer)? {
            Some(v) => Self::Value(v),
            None => Self::Omit,
        })
    }
}

/// Reasoning controls.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ReasoningSettings {
    /// `none|minimal|low|medium|high|xhigh|max|ultra` or a model-defined string.
    #[serde(default, skip_serializing_if = "Setting::is_default")]
    pub effort: Setting<String>,
    /// `auto|concise|detailed`; `none` (or null) leaves it off.
    #[serde(default, skip_serializing_if = "Setting::is_default")]
    pub summary: Setting<String>,
}

impl ReasoningSettings {
    fn is_default(&self) -> bool {
        self.effort.is_default() && self.summary.is_default()
    }
}

/// Standard or Lite request shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dialect {
    /// Follow the model's `use_responses_lite`.
    #[default]
    Auto,
    /// Top-level instructions and tools.
    Standard,
    /// Responses Lite (§6).
    Lite,
}

impl Dialect {
    /// Parses `auto`, `standard` or `lite`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "auto" => Some(Self::Auto),
            "standard" => Some(Self::Standard),
            "lite" => Some(Self::Lite),
            _ => None,
        }
    }

    /// The id used on the command line and in files.
    pub fn id(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Standard => "standard",
            Self::Lite => "lite",
        }
    }
}

/// What request the Prompt compiles to: a turn, or one of the compaction requests
/// (`core::compile::compaction`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PromptMode {
    /// An ordinary streamed turn request.
    #[default]
    Turn,
    /// The in-band compaction request Codex sends on a model switch: the history, `tools: []`,
    /// `parallel_tool_calls: false`, the checkpoint user message, `request_kind: compaction`.
    Compaction,
    /// The unary `POST {base}/responses/compact` request (v1).
    CompactEndpoint,
}

impl PromptMode {
    fn is_turn(&self) -> bool {
        *self == Self::Turn
    }
}

/// How Codex authenticates; only ChatGPT-style auth makes a request eligible for zstd (§4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AuthMode {
    /// An API key from the provider's environment variable.
    #[default]
    ApiKey,
    /// ChatGPT sign-in (Codex backend).
    Chatgpt,
}

/// What the Prompt file records about how to compile it (the defaults of `promptwire compile`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompileTarget {
    /// Standard, Lite, or follow the model.
    #[serde(default)]
    pub dialect: Dialect,
    /// Rules preset name (`seed` or `codex-0.169`).
    #[serde(default = "default_rules")]
    pub rules: String,
    /// Provider behaviour.
    #[serde(default = "default_provider")]
    pub provider: ProviderKind,
    /// Base URL override for the provider preset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Authentication mode.
    #[serde(default, skip_serializing_if = "is_api_key")]
    pub auth: AuthMode,
    /// Environment variable whose value is sent as `Authorization: Bearer …` (read at send
    /// time, never stored), replacing the provider preset's. Import sets it when a captured
    /// request carried an Authorization header the preset would not send.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// Extra static headers sent with every request (name, value), after the provider preset's
    /// (edited in the app's provider section). Never for secrets: use `api_key_env`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<(String, String)>,
}

fn is_api_key(mode: &AuthMode) -> bool {
    *mode == AuthMode::ApiKey
}

fn default_rules() -> String {
    "codex-0.169".to_string()
}

fn default_provider() -> ProviderKind {
    ProviderKind::Openai
}

impl Default for CompileTarget {
    fn default() -> Self {
        Self {
            dialect: Dialect::Auto,
            rules: default_rules(),
            provider: default_provider(),
            base_url: None,
            auth: AuthMode::ApiKey,
            api_key_env: None,
            headers: Vec::new(),
        }
    }
}

/// Ids pinned for items the compiler synthesizes (set by body import so a round trip is exact).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PinnedIds {
    /// Id of the Lite `additional_tools` item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_tools: Option<String>,
    /// Id of the developer message carrying the base instructions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
}

impl PinnedIds {
    fn is_empty(&self) -> bool {
        self.additional_tools.is_none() && self.instructions.is_none()
    }
}

fn yes() -> bool {
    true
}

fn items_to_file<S: Serializer>(items: &[ResponseItem], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(items.iter().map(ResponseItem::to_file_value))
}

fn tools_to_file<S: Serializer>(tools: &[ToolSpec], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(tools.iter().map(ToolSpec::to_file_value))
}

fn is_true(value: &bool) -> bool {
    *value
}

/// The editable prompt: everything that decides a compiled request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Prompt {
    /// Requested model name (sent as is).
    pub model: String,
    /// The system prompt.
    #[serde(default)]
    pub base_instructions: String,
    /// Conversation items, in order.
    #[serde(default, serialize_with = "items_to_file")]
    pub input: Vec<ResponseItem>,
    /// Tools offered.
    #[serde(default, serialize_with = "tools_to_file")]
    pub tools: Vec<ToolSpec>,
    /// Parallel tool calls; absent follows the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel_tool_calls: Option<bool>,
    /// Reasoning effort and summary.
    #[serde(default, skip_serializing_if = "ReasoningSettings::is_default")]
    pub reasoning: ReasoningSettings,
    /// `low|medium|high`; absent follows the model, null leaves it off.
    #[serde(default, skip_serializing_if = "Setting::is_default")]
    pub verbosity: Setting<String>,
    /// JSON Schema for structured output (`text.format`); must be an object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// `text.format.strict`.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub output_schema_strict: bool,
    /// `priority` / `flex` (`fast` means `priority`); sent only if the model lists it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_tier: Option<String>,
    /// `prompt_cache_key`; absent uses `thread_id` (Codex always sends one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_cache_key: Option<String>,
    /// `prompt_cache_options` (mode, ttl, comparison response id); sent right after
    /// `prompt_cache_key`, omitted when no field is set. Kept under Lite.
    #[serde(default, skip_serializing_if = "PromptCacheOptions::is_empty")]
    pub prompt_cache_options: PromptCacheOptions,
    /// `prompt_cache_retention` (`in_memory` or `24h`); sent after `prompt_cache_options`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_cache_retention: Option<String>,
    /// `client_metadata` (string values; key order is kept but never significant).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_metadata: Option<JsonMap>,
    /// Thread id: `thread-id`/`session-id` headers and the namespace of synthesized ids.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<String>,
    /// WebSocket continuation (`previous_response_id` of the `response.create` frame).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_response_id: Option<String>,
    /// Ids for synthesized items.
    #[serde(default, skip_serializing_if = "PinnedIds::is_empty")]
    pub pinned_ids: PinnedIds,
    /// Extra HTTP headers (for example `x-openai-subagent`), or replacements of compiled ones;
    /// secrets are refused.
    #[serde(default, skip_serializing_if = "JsonMap::is_empty")]
    pub headers: JsonMap,
    /// `turn` (absent), `compaction` or `compact_endpoint`.
    #[serde(default, skip_serializing_if = "PromptMode::is_turn")]
    pub mode: PromptMode,
    /// How the client names itself in headers (originator, user agent, beta features).
    #[serde(default, skip_serializing_if = "ClientIdentity::is_default")]
    pub client: ClientIdentity,
    /// How to compile when the command line does not say.
    #[serde(default)]
    pub compile: CompileTarget,
    /// Top-level body fields that replace the compiled value (or are appended when unknown).
    #[serde(default, skip_serializing_if = "JsonMap::is_empty")]
    pub body_overrides: JsonMap,
    /// Top-level body fields to leave out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub body_omit: Vec<String>,
}

/// Header names whose values are secrets: never accepted in a Prompt file, never stored.
pub const SECRET_HEADERS: [&str; 5] = [
    "authorization",
    "api-key",
    "x-api-key",
    "openai-api-key",
    "proxy-authorization",
];

impl Prompt {
    /// A prompt with only a model set.
    pub fn new(model: &str) -> Self {
        Self {
            model: model.to_string(),
            base_instructions: String::new(),
            input: Vec::new(),
            tools: Vec::new(),
            parallel_tool_calls: None,
            reasoning: ReasoningSettings::default(),
            verbosity: Setting::Default,
            output_schema: None,
            output_schema_strict: true,
            service_tier: None,
            prompt_cache_key: None,
            prompt_cache_options: PromptCacheOptions::default(),
            prompt_cache_retention: None,
            client_metadata: None,
            thread_id: None,
            previous_response_id: None,
            pinned_ids: PinnedIds::default(),
            headers: JsonMap::new(),
            mode: PromptMode::Turn,
            client: ClientIdentity::default(),
            compile: CompileTarget::default(),
            body_overrides: JsonMap::new(),
            body_omit: Vec::new(),
        }
    }

    /// Parses and validates a Prompt file.
    pub fn from_json_str(text: &str) -> Result<Self, PromptError> {
        let mut de = serde_json::Deserializer::from_str(text);
        let prompt: Prompt = serde_path_to_error::deserialize(&mut de).map_err(|err| {
            let path = err.path().to_string();
            let inner = err.into_inner();
            PromptError::from_serde(&path, &inner)
        })?;
        de.end().map_err(|e| PromptError::from_serde("", &e))?;
        prompt.validate()?;
        Ok(prompt)
    }

    /// Checks what serde cannot: schema shape, metadata value types, secret headers.
    pub fn validate(&self) -> Result<(), PromptError> {
        if self.model.trim().is_empty() {
            return Err(PromptError::invalid("model", "model is empty"));
        }
        if let Setting::Value(effort) = &self.reasoning.effort
            && effort.trim().is_empty()
        {
            return Err(PromptError::invalid(
                "reasoning.effort",
                "an empty effort is not valid; leave the key out to use the model's default",
            ));
        }
        if let Some(schema) = &self.output_schema
            && !schema.is_object()
        {
            return Err(PromptError::invalid(
                "output_schema",
                format!(
                    "the output schema must be a JSON object, got {}",
                    kind_of(schema)
                ),
            ));
        }
        if let Some(meta) = &self.client_metadata {
            for (k, v) in meta {
                if !v.is_string() {
                    return Err(PromptError::invalid(
                        format!("client_metadata.{k}"),
                        format!("client_metadata values must be strings, got {}", kind_of(v)),
                    ));
                }
            }
        }
        for (k, v) in &self.headers {
            if SECRET_HEADERS.contains(&k.to_ascii_lowercase().as_str()) {
                return Err(PromptError::invalid(
                    format!("headers.{k}"),
                    "secret headers are not stored in Prompt files; set the provider's API-key environment variable instead",
                ));
            }
            if !v.is_string() {
                return Err(PromptError::invalid(
                    format!("headers.{k}"),
                    format!("header values must be strings, got {}", kind_of(v)),
                ));
            }
        }
        if super::rules::CompileRules::preset(&self.compile.rules).is_none() {
            return Err(PromptError::invalid(
                "compile.rules",
                format!(
                    "unknown rules preset `{}` (known: {})",
                    self.compile.rules,
                    super::rules::CompileRules::PRESETS.join(", ")
                ),
            ));
        }
        Ok(())
    }

    /// Serializes the prompt as a pretty Prompt file.
    pub fn to_json_pretty(&self) -> String {
        // Serializing plain data with string keys cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}
