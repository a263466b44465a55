//! `CompileRules`: the version-dependent choices of the Codex client as data (DESIGN.md), with
//! three presets — `seed` (the seed chapters' text, chapter 5.6 where it speaks, else WIRE_SPEC
//! §1–§17), `codex-0.169` (what Codex CLI 0.169 was observed to send, §18) and `codex-0.171`
//! (Codex CLI 0.171: the 0.169 body, plus `accept-encoding` in the headers).

use serde::{Deserialize, Serialize};

/// A top-level field of the HTTP body, for ordering.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BodyField {
    /// `model`
    Model,
    /// `instructions`
    Instructions,
    /// `input`
    Input,
    /// `tools`
    Tools,
    /// `tool_choice`
    ToolChoice,
    /// `parallel_tool_calls`
    ParallelToolCalls,
    /// `reasoning`
    Reasoning,
    /// `store`
    Store,
    /// `stream`
    Stream,
    /// `stream_options`
    StreamOptions,
    /// `include`
    Include,
    /// `service_tier`
    ServiceTier,
    /// `prompt_cache_key`
    PromptCacheKey,
    /// `prompt_cache_options` (not sent by Codex; placed after `prompt_cache_key`)
    PromptCacheOptions,
    /// `prompt_cache_retention` (not sent by Codex; placed after `prompt_cache_options`)
    PromptCacheRetention,
    /// `text`
    Text,
    /// `client_metadata`
    ClientMetadata,
}

impl BodyField {
    /// The JSON key.
    pub fn key(self) -> &'static str {
        match self {
            Self::Model => "model",
            Self::Instructions => "instructions",
            Self::Input => "input",
            Self::Tools => "tools",
            Self::ToolChoice => "tool_choice",
            Self::ParallelToolCalls => "parallel_tool_calls",
            Self::Reasoning => "reasoning",
            Self::Store => "store",
            Self::Stream => "stream",
            Self::StreamOptions => "stream_options",
            Self::Include => "include",
            Self::ServiceTier => "service_tier",
            Self::PromptCacheKey => "prompt_cache_key",
            Self::PromptCacheOptions => "prompt_cache_options",
            Self::PromptCacheRetention => "prompt_cache_retention",
            Self::Text => "text",
            Self::ClientMetadata => "client_metadata",
        }
    }

    /// Every field, in seed order.
    pub const ALL: [BodyField; 17] = [
        Self::Model,
        Self::Instructions,
        Self::Input,
        Self::Tools,
        Self::ToolChoice,
        Self::ParallelToolCalls,
        Self::Reasoning,
        Self::Store,
        Self::Stream,
        Self::StreamOptions,
        Self::Include,
        Self::ServiceTier,
        Self::PromptCacheKey,
        Self::PromptCacheOptions,
        Self::PromptCacheRetention,
        Self::Text,
        Self::ClientMetadata,
    ];

    /// The field whose JSON key is `key`.
    pub fn from_key(key: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.key() == key)
    }
}

/// Where base instructions travel in a standard (non-Lite) request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InstructionsPlacement {
    /// Top-level `instructions` (§1, §2).
    TopLevel,
    /// A developer message at `input[0]` (observed in 0.169, §18).
    DeveloperMessage,
}

/// When a `reasoning` object is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasoningGate {
    /// Only for models with `supports_reasoning_summaries`; otherwise `null` (A). No preset uses
    /// it any more; kept so a rules file can still describe snapshot A.
    SummariesFlag,
    /// Always (seed chapter 5.6: effort is the explicit value or the model's default); only
    /// `summary` is gated, by `supports_reasoning_summaries`.
    SummaryByFlag,
    /// Always (B, 07-10 onward); `summary` gated by `supports_reasoning_summary_parameter`.
    Always,
}

/// What `include` holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IncludePolicy {
    /// `["reasoning.encrypted_content"]` when reasoning is sent, else `[]` (A).
    WhenReasoning,
    /// Always `["reasoning.encrypted_content"]` (B onward).
    Always,
}

/// How `store` is decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StorePolicy {
    /// True only for Azure Responses endpoints (A, B).
    AzureOnly,
    /// Always false (C, 0.169).
    AlwaysFalse,
}

/// Which input item ids survive on the way out (§5.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IdPolicy {
    /// Every id is cleared unless `store` is true (A, `item_ids` feature off).
    StripUnlessStored,
    /// An id survives iff it splits at its first `_` into two non-empty parts (C).
    KeepPrefixed,
}

/// What happens to fields of a known item type that the type does not model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnknownItemFields {
    /// Dropped, as serde drops unknown fields (A).
    Drop,
    /// Kept right after `type`, in the order given (observed in 0.169, e.g. `status`).
    AfterType,
}

/// The version-dependent compile choices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompileRules {
    /// Preset id (`seed`, `codex-0.169`).
    pub name: String,
    /// Top-level body field order.
    pub field_order: Vec<BodyField>,
    /// Where base instructions go in standard mode.
    pub instructions: InstructionsPlacement,
    /// When `reasoning` is sent.
    pub reasoning_gate: ReasoningGate,
    /// What `include` holds.
    pub include: IncludePolicy,
    /// How `store` is decided.
    pub store: StorePolicy,
    /// Which item ids survive.
    pub ids: IdPolicy,
    /// Give synthesized items (Lite prefix, instruction message) `at_`/`msg_` uuid-v5 ids.
    pub synthesized_ids: bool,
    /// Fold plain function/custom tools into one namespace of this name under Lite.
    pub lite_function_namespace: Option<String>,
    /// Unknown fields on known item types.
    pub unknown_item_fields: UnknownItemFields,
    /// Send effort `ultra` as `max` (A).
    pub ultra_as_max: bool,
    /// C: send `encrypted_function_args` to the OpenAI provider only. False (A): the field is
    /// unknown to the client and never sent.
    pub encrypted_function_args_for_openai: bool,
    /// C: `configuration_update` items reach the OpenAI provider only. False (A): never sent.
    pub configuration_updates_for_openai: bool,
    /// `supports_parallel_tool_calls` of the unknown-slug fallback.
    pub fallback_parallel_tool_calls: bool,
    /// Feature `enable_request_compression` (zstd eligibility, §4).
    pub request_compression: bool,
    /// Feature for concurrent reasoning summaries (`stream_options`, §7).
    pub stream_options: bool,
    /// Client version shown in `User-Agent`.
    pub client_version: String,
    /// How the headers look (names, order, value shapes): `seed` (WIRE_SPEC §4 as written) or
    /// the observed Codex CLI (`codex`).
    #[serde(default)]
    pub header_style: HeaderStyle,
    /// `originator` (and the `User-Agent` prefix) when the Prompt sets none.
    #[serde(default = "default_originator")]
    pub default_originator: String,
    /// `x-codex-beta-features` when the Prompt sets none (None: not sent).
    #[serde(default)]
    pub beta_features: Option<String>,
    /// `accept-encoding` the client asks for (0.171: `zstd,gzip`); None: not sent.
    #[serde(default)]
    pub accept_encoding: Option<String>,
}

/// The shape of the request headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HeaderStyle {
    /// WIRE_SPEC §4 as written: ids, accept, content type, auth, `originator`, `<originator>/<version>`.
    #[default]
    Seed,
    /// Codex CLI 0.169/0.171 as captured: beta features, window id, turn metadata, Lite, ids,
    /// accept, content type, auth, originator, the full user agent (platform, terminal, suffix).
    Codex,
}

fn default_originator() -> String {
    "codex_cli_rs".to_string()
}

impl CompileRules {
    /// Names of the presets.
    pub const PRESETS: [&'static str; 3] = ["seed", "codex-0.169", "codex-0.171"];

    /// The seed chapters (chapter 5.6, "机制怎样工作" and its pseudocode) where they speak, else
    /// WIRE_SPEC §1–§17: top-level instructions; `include` always
    /// `["reasoning.encrypted_content"]`; reasoning always sent with only the summary gated on
    /// the model's support; ids dropped only when they lack a server prefix; encrypted function
    /// arguments and internal metadata dropped only for non-OpenAI providers; Azure stores.
    pub fn seed() -> Self {
        Self {
            name: "seed".to_string(),
            field_order: BodyField::ALL.to_vec(),
            instructions: InstructionsPlacement::TopLevel,
            reasoning_gate: ReasoningGate::SummaryByFlag,
            include: IncludePolicy::Always,
            store: StorePolicy::AzureOnly,
            ids: IdPolicy::KeepPrefixed,
            synthesized_ids: false,
            lite_function_namespace: None,
            unknown_item_fields: UnknownItemFields::Drop,
            ultra_as_max: true,
            encrypted_function_args_for_openai: true,
            configuration_updates_for_openai: false,
            fallback_parallel_tool_calls: false,
            request_compression: true,
            stream_options: false,
            client_version: "0.0.0".to_string(),
            header_style: HeaderStyle::Seed,
            default_originator: default_originator(),
            beta_features: None,
            accept_encoding: None,
        }
    }

    /// Codex CLI 0.169 as observed (§18): `stream` second, instructions as a developer message,
    /// reasoning always, `store:false`, prefixed ids kept, Lite tools folded into `functions`.
    pub fn codex_0_169() -> Self {
        Self {
            name: "codex-0.169".to_string(),
            field_order: vec![
                BodyField::Model,
                BodyField::Stream,
                BodyField::Instructions,
                BodyField::Input,
                BodyField::Tools,
                BodyField::ToolChoice,
                BodyField::ParallelToolCalls,
                BodyField::Reasoning,
                BodyField::Store,
                BodyField::StreamOptions,
                BodyField::Include,
                BodyField::ServiceTier,
                BodyField::PromptCacheKey,
                BodyField::PromptCacheOptions,
                BodyField::PromptCacheRetention,
                BodyField::Text,
                BodyField::ClientMetadata,
            ],
            instructions: InstructionsPlacement::DeveloperMessage,
            reasoning_gate: ReasoningGate::Always,
            include: IncludePolicy::Always,
            store: StorePolicy::AlwaysFalse,
            ids: IdPolicy::KeepPrefixed,
            synthesized_ids: true,
            lite_function_namespace: Some("functions".to_string()),
            unknown_item_fields: UnknownItemFields::AfterType,
            ultra_as_max: false,
            encrypted_function_args_for_openai: true,
            configuration_updates_for_openai: true,
            fallback_parallel_tool_calls: true,
            request_compression: true,
            stream_options: false,
            client_version: "0.169.0".to_string(),
            header_style: HeaderStyle::Codex,
            default_originator: "codex_exec".to_string(),
            beta_features: Some("remote_compaction_v2".to_string()),
            accept_encoding: None,
        }
    }

    /// Codex CLI 0.171 as observed: the 0.169 body rules (key order, `client_metadata`, input
    /// prefix, Lite prefix and compaction request are unchanged), and `accept-encoding:
    /// zstd,gzip` after `user-agent`.
    pub fn codex_0_171() -> Self {
        Self {
            name: "codex-0.171".to_string(),
            client_version: "0.171.0".to_string(),
            accept_encoding: Some("zstd,gzip".to_string()),
            ..Self::codex_0_169()
        }
    }

    /// The preset called `name`.
    pub fn preset(name: &str) -> Option<Self> {
        match name {
            "seed" => Some(Self::seed()),
            "codex-0.169" | "codex_0_169" | "0.169" => Some(Self::codex_0_169()),
            "codex-0.171" | "codex_0_171" | "0.171" => Some(Self::codex_0_171()),
            _ => None,
        }
    }
}
