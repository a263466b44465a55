//! `ResponseItem` and `ContentItem`: every input/output item variant of the Responses API as Codex
//! serialises it (WIRE_SPEC §5), with its exact null-vs-omitted rules.
//!
//! Each known variant is a struct whose fields are declared in wire order; serde writes the
//! `"type"` tag first. Fields a variant does not model are captured in `extra` (kept, never
//! dropped here; the compile rules decide where they go on the wire). Unknown `type`s are kept
//! verbatim as [`ResponseItem::Other`] / [`ContentItem::Other`].

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use super::json::{JsonMap, from_value_with_path, split_tag, with_tag_first};
use super::tools::ToolSpec;

/// Prompt-file wrapper (`{"$verbatim": {…}}`) for an item or tool kept exactly as captured even
/// though its `type` is a known one (its typed form would not reproduce it).
pub const VERBATIM_KEY: &str = "$verbatim";

/// The inner object of a `{"$verbatim": {…}}` wrapper.
pub fn unwrap_verbatim(map: &JsonMap) -> Option<JsonMap> {
    match (map.len(), map.get(VERBATIM_KEY)) {
        (1, Some(Value::Object(inner))) => Some(inner.clone()),
        _ => None,
    }
}

/// How a value with a verbatim fallback variant is written in a Prompt file: as on the wire,
/// except that a verbatim object which would parse back as something else is wrapped in
/// `{"$verbatim": …}` (shared by items and tools).
pub fn file_value<T: Serialize + PartialEq>(
    value: &T,
    parse: impl Fn(Value) -> Option<T>,
    verbatim: impl Fn(&T) -> Option<&JsonMap>,
) -> Value {
    match verbatim(value) {
        Some(map) if parse(Value::Object(map.clone())).as_ref() != Some(value) => {
            let mut wrapper = JsonMap::new();
            wrapper.insert(VERBATIM_KEY.to_string(), Value::Object(map.clone()));
            Value::Object(wrapper)
        }
        _ => serde_json::to_value(value).unwrap_or(Value::Null),
    }
}

/// Key of the passthrough metadata object that ends most items (§5.1).
pub const PASSTHROUGH_KEY: &str = "internal_chat_message_metadata_passthrough";

/// One item of a request's `input` (or a response's `output`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ResponseItem {
    /// Lite-only prefix item carrying the tool list (§6).
    AdditionalTools(AdditionalToolsItem),
    /// A chat message (user, assistant, developer, system).
    Message(MessageItem),
    /// A message between agents.
    AgentMessage(AgentMessageItem),
    /// Model reasoning, replayed with its encrypted content.
    Reasoning(ReasoningItem),
    /// A legacy local shell call.
    LocalShellCall(LocalShellCallItem),
    /// A function tool call made by the model.
    FunctionCall(FunctionCallItem),
    /// A tool-search call.
    ToolSearchCall(ToolSearchCallItem),
    /// The client's answer to a function call.
    FunctionCallOutput(FunctionCallOutputItem),
    /// A freeform (custom) tool call.
    CustomToolCall(CustomToolCallItem),
    /// The client's answer to a custom tool call.
    CustomToolCallOutput(CustomToolCallOutputItem),
    /// Result of a tool search.
    ToolSearchOutput(ToolSearchOutputItem),
    /// A hosted web search call.
    WebSearchCall(WebSearchCallItem),
    /// A hosted image generation call.
    ImageGenerationCall(ImageGenerationCallItem),
    /// Opaque compacted history (input alias `compaction_summary`).
    Compaction(CompactionItem),
    /// A reasoning configuration change (C only).
    ConfigurationUpdate(ConfigurationUpdateItem),
    /// Request control asking the server to compact: exactly `{"type":"compaction_trigger"}`.
    CompactionTrigger,
    /// Context compaction marker with optional encrypted content.
    ContextCompaction(ContextCompactionItem),
    /// Any item whose type promptwire does not model (or that it keeps verbatim), as given.
    #[serde(untagged)]
    Other(JsonMap),
}

/// `additional_tools`: `id?`, `role`, `tools`. No passthrough metadata.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdditionalToolsItem {
    /// Item id, omitted when None.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Always `developer` in practice.
    pub role: String,
    /// The tool list.
    pub tools: Vec<ToolSpec>,
    /// Fields this variant does not model.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `message`: `id?`, `role`, `content`, `phase?`, metadata?.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageItem {
    /// Item id, omitted when None.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// `user`, `assistant`, `developer` or `system`.
    pub role: String,
    /// Content parts.
    pub content: Vec<ContentItem>,
    /// `commentary` or `final_answer`, omitted when None.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// Passthrough metadata, omitted when None.
    #[serde(
        default,
        rename = "internal_chat_message_metadata_passthrough",
        skip_serializing_if = "Option::is_none"
    )]
    pub metadata: Option<Value>,
    /// Fields this variant does not model.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `agent_message`: `id?`, `author`, `recipient`, `content`, metadata?.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentMessageItem {
    /// Item id, omitted when None.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Sending agent.
    pub author: String,
    /// Receiving agent.
    pub recipient: String,
    /// `input_text` or `encrypted_content` parts.
    pub content: Vec<ContentItem>,
    /// Passthrough metadata, omitted when None.
    #[serde(
        default,
        rename = "internal_chat_message_metadata_passthrough",
        skip_serializing_if = "Option::is_none"
    )]
    pub metadata: Option<Value>,
    /// Fields this variant does not model.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// One `{"type":"summary_text","text":…}` entry of a reasoning summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SummaryText {
    /// Always `summary_text`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The summary text.
    pub text: String,
}

/// One entry of `reasoning.content`: `reasoning_text` or `text`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReasoningContent {
    /// `reasoning_text` or `text`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The text.
    pub text: String,
}

/// `content` is skipped when it is a list without any `reasoning_text` entry (§5.2); None is null.
fn reasoning_content_skipped(content: &Option<Vec<ReasoningContent>>) -> bool {
    match content {
        Some(parts) => !parts.iter().any(|p| p.kind == "reasoning_text"),
        None => false,
    }
}

/// `reasoning`: `id?`, `summary`, `content` (special), `encrypted_content` (null), metadata?.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReasoningItem {
    /// Item id, omitted when None.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Summary parts, always emitted.
    #[serde(default)]
    pub summary: Vec<SummaryText>,
    /// Raw reasoning content: null when None, omitted when it has no `reasoning_text`.
    #[serde(default, skip_serializing_if = "reasoning_content_skipped")]
    pub content: Option<Vec<ReasoningContent>>,
    /// Encrypted reasoning, null when None.
    #[serde(default)]
    pub encrypted_content: Option<String>,
    /// Passthrough metadata, omitted when None.
    #[serde(
        default,
        rename = "internal_chat_message_metadata_passthrough",
        skip_serializing_if = "Option::is_none"
    )]
    pub metadata: Option<Value>,
    /// Fields this variant does not model.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// The `exec` action of a local shell call; every optional field is emitted as null.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LocalShellAction {
    /// Always `exec`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The argv.
    pub command: Vec<String>,
    /// Timeout, null when None.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// Working directory, null when None.
    #[serde(default)]
    pub working_directory: Option<String>,
    /// Environment, null when None.
    #[serde(default)]
    pub env: Option<JsonMap>,
    /// User, null when None.
    #[serde(default)]
    pub user: Option<String>,
}

/// `local_shell_call`: `id?`, `call_id` (null), `status`, `action`, metadata?.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LocalShellCallItem {
    /// Item id, omitted when None.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Call id, null when None.
    #[serde(default)]
    pub call_id: Option<String>,
    /// `completed`, `in_progress` or `incomplete`.
    pub status: String,
    /// The exec action.
    pub action: LocalShellAction,
    /// Passthrough metadata, omitted when None.
    #[serde(
        default,
        rename = "internal_chat_message_metadata_passthrough",
        skip_serializing_if = "Option::is_none"
    )]
    pub metadata: Option<Value>,
    /// Fields this variant does not model.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `function_call`: `id?`, `name`, `namespace?`, `arguments`, `encrypted_function_args?`, `call_id`, metadata?.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionCallItem {
    /// Item id, omitted when None.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Function name.
    pub name: String,
    /// Tool namespace, omitted when None.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Arguments: a string holding JSON.
    pub arguments: String,
    /// Names of encrypted parameters (C); an empty list is an explicit "plaintext" marker.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encrypted_function_args: Option<Vec<String>>,
    /// Call id.
    pub call_id: String,
    /// Passthrough metadata, omitted when None.
    #[serde(
        default,
        rename = "internal_chat_message_metadata_passthrough",
        skip_serializing_if = "Option::is_none"
    )]
    pub metadata: Option<Value>,
    /// Fields this variant does not model.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `tool_search_call`: `id?`, `call_id` (null), `status?`, `execution`, `arguments`, metadata?.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSearchCallItem {
    /// Item id, omitted when None.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Call id, null when None.
    #[serde(default)]
    pub call_id: Option<String>,
    /// Status, omitted when None.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// `client` or `server`.
    pub execution: String,
    /// Any JSON value.
    pub arguments: Value,
    /// Passthrough metadata, omitted when None.
    #[serde(
        default,
        rename = "internal_chat_message_metadata_passthrough",
        skip_serializing_if = "Option::is_none"
    )]
    pub metadata: Option<Value>,
    /// Fields this variant does not model.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// A tool output: a plain string or an array of content items (never an object).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ToolOutput {
    /// The text body.
    Text(String),
    /// Content items (`input_text`, `input_image`, `encrypted_content`).
    Items(Vec<ContentItem>),
}

/// `function_call_output`: `id?`, `call_id?`, `name?`, `namespace?`, `output`, metadata?.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionCallOutputItem {
    /// Item id, omitted when None.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Call id (optional since C).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// Tool name (C), omitted when None.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Tool namespace (C), omitted when None.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// The output.
    pub output: ToolOutput,
    /// Passthrough metadata, omitted when None.
    #[serde(
        default,
        rename = "internal_chat_message_metadata_passthrough",
        skip_serializing_if = "Option::is_none"
    )]
    pub metadata: Option<Value>,
    /// Fields this variant does not model.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `custom_tool_call`: `id?`, `status?`, `call_id`, `name`, `namespace?`, `input`, metadata?.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CustomToolCallItem {
    /// Item id, omitted when None.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Status, omitted when None.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// Call id.
    pub call_id: String,
    /// Tool name.
    pub name: String,
    /// Tool namespace, omitted when None.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Freeform input.
    pub input: String,
    /// Passthrough metadata, omitted when None.
    #[serde(
        default,
        rename = "internal_chat_message_metadata_passthrough",
        skip_serializing_if = "Option::is_none"
    )]
    pub metadata: Option<Value>,
    /// Fields this variant does not model.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `custom_tool_call_output`: `id?`, `call_id`, `name?`, `output`, metadata?.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CustomToolCallOutputItem {
    /// Item id, omitted when None.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Call id.
    pub call_id: String,
    /// Tool name, omitted when None.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The output.
    pub output: ToolOutput,
    /// Passthrough metadata, omitted when None.
    #[serde(
        default,
        rename = "internal_chat_message_metadata_passthrough",
        skip_serializing_if = "Option::is_none"
    )]
    pub metadata: Option<Value>,
    /// Fields this variant does not model.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `tool_search_output`: `id?`, `call_id` (null), `status`, `execution`, `tools`, metadata?.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSearchOutputItem {
    /// Item id, omitted when None.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Call id, null when None.
    #[serde(default)]
    pub call_id: Option<String>,
    /// Status.
    pub status: String,
    /// `client` or `server`.
    pub execution: String,
    /// Tools found.
    pub tools: Vec<Value>,
    /// Passthrough metadata, omitted when None.
    #[serde(
        default,
        rename = "internal_chat_message_metadata_passthrough",
        skip_serializing_if = "Option::is_none"
    )]
    pub metadata: Option<Value>,
    /// Fields this variant does not model.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `web_search_call`: `id?`, `status?`, `action?`, metadata?.
///
/// `action` (`search`, `open_page`, `find_in_page`, or anything else) is kept as given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WebSearchCallItem {
    /// Item id, omitted when None.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Status, omitted when None.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// The search action, omitted when None.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<Value>,
    /// Passthrough metadata, omitted when None.
    #[serde(
        default,
        rename = "internal_chat_message_metadata_passthrough",
        skip_serializing_if = "Option::is_none"
    )]
    pub metadata: Option<Value>,
    /// Fields this variant does not model.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `image_generation_call`: `id?`, `status`, `revised_prompt?`, `result`, metadata?.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImageGenerationCallItem {
    /// Item id, omitted when None.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Status.
    pub status: String,
    /// Revised prompt, omitted when None.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revised_prompt: Option<String>,
    /// Result payload.
    pub result: String,
    /// Passthrough metadata, omitted when None.
    #[serde(
        default,
        rename = "internal_chat_message_metadata_passthrough",
        skip_serializing_if = "Option::is_none"
    )]
    pub metadata: Option<Value>,
    /// Fields this variant does not model.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `compaction`: `id?`, `encrypted_content`, metadata?.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompactionItem {
    /// Item id, omitted when None.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Opaque compacted history.
    pub encrypted_content: String,
    /// Passthrough metadata, omitted when None.
    #[serde(
        default,
        rename = "internal_chat_message_metadata_passthrough",
        skip_serializing_if = "Option::is_none"
    )]
    pub metadata: Option<Value>,
    /// Fields this variant does not model.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `configuration_update` (C): `reasoning: {"effort": …}`. No id, no metadata.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigurationUpdateItem {
    /// The reasoning override.
    pub reasoning: Value,
    /// Fields this variant does not model.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `context_compaction`: `id?`, `encrypted_content?`, metadata?.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextCompactionItem {
    /// Item id, omitted when None.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Encrypted content, omitted when None.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encrypted_content: Option<String>,
    /// Passthrough metadata, omitted when None.
    #[serde(
        default,
        rename = "internal_chat_message_metadata_passthrough",
        skip_serializing_if = "Option::is_none"
    )]
    pub metadata: Option<Value>,
    /// Fields this variant does not model.
    #[serde(flatten)]
    pub extra: JsonMap,
}

impl ResponseItem {
    /// Parses one item from a JSON value. Unknown `type`s become [`ResponseItem::Other`];
    /// a known type with bad fields is an error naming the field.
    pub fn from_value(value: Value) -> Result<Self, String> {
        let Value::Object(map) = value else {
            return Err(format!(
                "an item must be an object, got {}",
                super::json::kind_of(&value)
            ));
        };
        if let Some(inner) = unwrap_verbatim(&map) {
            return Ok(Self::Other(inner));
        }
        let (tag, fields) = split_tag(map);
        let Some(tag) = tag else {
            // The API's "easy input" message (`{"role","content"}`) has no type: keep it as given.
            if fields.contains_key("role") && !fields.contains_key("type") {
                return Ok(Self::Other(fields));
            }
            return Err("item has no string `type`".to_string());
        };
        let parsed = match tag.as_str() {
            "additional_tools" => Self::AdditionalTools(from_value_with_path(fields.into())?),
            "message" => Self::Message(from_value_with_path(fields.into())?),
            "agent_message" => Self::AgentMessage(from_value_with_path(fields.into())?),
            "reasoning" => Self::Reasoning(from_value_with_path(fields.into())?),
            "local_shell_call" => Self::LocalShellCall(from_value_with_path(fields.into())?),
            "function_call" => Self::FunctionCall(from_value_with_path(fields.into())?),
            "tool_search_call" => Self::ToolSearchCall(from_value_with_path(fields.into())?),
            "function_call_output" => {
                Self::FunctionCallOutput(from_value_with_path(fields.into())?)
            }
            "custom_tool_call" => Self::CustomToolCall(from_value_with_path(fields.into())?),
            "custom_tool_call_output" => {
                Self::CustomToolCallOutput(from_value_with_path(fields.into())?)
            }
            "tool_search_output" => Self::ToolSearchOutput(from_value_with_path(fields.into())?),
            "web_search_call" => Self::WebSearchCall(from_value_with_path(fields.into())?),
            "image_generation_call" => {
                Self::ImageGenerationCall(from_value_with_path(fields.into())?)
            }
            "compaction" | "compaction_summary" => {
                Self::Compaction(from_value_with_path(fields.into())?)
            }
            "configuration_update" => {
                Self::ConfigurationUpdate(from_value_with_path(fields.into())?)
            }
            "compaction_trigger" if fields.is_empty() => Self::CompactionTrigger,
            "context_compaction" => Self::ContextCompaction(from_value_with_path(fields.into())?),
            _ => Self::Other(with_tag_first(&tag, fields)),
        };
        Ok(parsed)
    }

    /// How this item is written in a Prompt file: as on the wire, except that an `Other` which
    /// would parse back as a typed item is wrapped in `{"$verbatim": …}`.
    ///
    /// A reasoning `content` list the wire omits (it has no `reasoning_text`) is written too:
    /// left out, it would load back as None, which the wire sends as `null`.
    pub fn to_file_value(&self) -> Value {
        let value = file_value(
            self,
            |v| Self::from_value(v).ok(),
            |item| match item {
                Self::Other(map) => Some(map),
                _ => None,
            },
        );
        match (self, value) {
            (Self::Reasoning(item), Value::Object(map))
                if reasoning_content_skipped(&item.content) =>
            {
                let content = serde_json::to_value(&item.content).unwrap_or_default();
                let mut out = JsonMap::with_capacity(map.len() + 1);
                for (key, field) in map {
                    let after_summary = key == "summary";
                    out.insert(key, field);
                    if after_summary {
                        out.insert("content".to_string(), content.clone());
                    }
                }
                out.entry("content").or_insert(content);
                Value::Object(out)
            }
            (_, value) => value,
        }
    }

    /// The wire `type` of this item (for `Other`, its `type` field if it is a string).
    pub fn type_name(&self) -> &str {
        match self {
            Self::AdditionalTools(_) => "additional_tools",
            Self::Message(_) => "message",
            Self::AgentMessage(_) => "agent_message",
            Self::Reasoning(_) => "reasoning",
            Self::LocalShellCall(_) => "local_shell_call",
            Self::FunctionCall(_) => "function_call",
            Self::ToolSearchCall(_) => "tool_search_call",
            Self::FunctionCallOutput(_) => "function_call_output",
            Self::CustomToolCall(_) => "custom_tool_call",
            Self::CustomToolCallOutput(_) => "custom_tool_call_output",
            Self::ToolSearchOutput(_) => "tool_search_output",
            Self::WebSearchCall(_) => "web_search_call",
            Self::ImageGenerationCall(_) => "image_generation_call",
            Self::Compaction(_) => "compaction",
            Self::ConfigurationUpdate(_) => "configuration_update",
            Self::CompactionTrigger => "compaction_trigger",
            Self::ContextCompaction(_) => "context_compaction",
            Self::Other(map) => map.get("type").and_then(Value::as_str).unwrap_or(""),
        }
    }

    /// Fields of a known variant that it does not model (empty for `Other` and the trigger).
    pub fn extra(&self) -> Option<&JsonMap> {
        match self {
            Self::AdditionalTools(i) => Some(&i.extra),
            Self::Message(i) => Some(&i.extra),
            Self::AgentMessage(i) => Some(&i.extra),
            Self::Reasoning(i) => Some(&i.extra),
            Self::LocalShellCall(i) => Some(&i.extra),
            Self::FunctionCall(i) => Some(&i.extra),
            Self::ToolSearchCall(i) => Some(&i.extra),
            Self::FunctionCallOutput(i) => Some(&i.extra),
            Self::CustomToolCall(i) => Some(&i.extra),
            Self::CustomToolCallOutput(i) => Some(&i.extra),
            Self::ToolSearchOutput(i) => Some(&i.extra),
            Self::WebSearchCall(i) => Some(&i.extra),
            Self::ImageGenerationCall(i) => Some(&i.extra),
            Self::Compaction(i) => Some(&i.extra),
            Self::ConfigurationUpdate(i) => Some(&i.extra),
            Self::ContextCompaction(i) => Some(&i.extra),
            Self::CompactionTrigger | Self::Other(_) => None,
        }
    }

    /// A developer message holding one `input_text` part: how base instructions travel as an item.
    pub fn developer_text(id: Option<String>, text: &str) -> Self {
        Self::Message(MessageItem {
            id,
            role: "developer".to_string(),
            content: vec![ContentItem::InputText {
                text: text.to_string(),
                extra: JsonMap::new(),
            }],
            phase: None,
            metadata: None,
            extra: JsonMap::new(),
        })
    }

    /// The text of a developer message with exactly one `input_text` part and nothing else.
    pub fn as_developer_text(&self) -> Option<&str> {
        let Self::Message(msg) = self else {
            return None;
        };
        if msg.role != "developer"
            || msg.phase.is_some()
            || msg.metadata.is_some()
            || !msg.extra.is_empty()
        {
            return None;
        }
        match msg.content.as_slice() {
            [ContentItem::InputText { text, extra }] if extra.is_empty() => Some(text),
            _ => None,
        }
    }

    /// The item's passthrough metadata (`internal_chat_message_metadata_passthrough`), if any.
    pub fn passthrough(&self) -> Option<&Value> {
        match self {
            Self::Message(i) => i.metadata.as_ref(),
            Self::AgentMessage(i) => i.metadata.as_ref(),
            Self::Reasoning(i) => i.metadata.as_ref(),
            Self::LocalShellCall(i) => i.metadata.as_ref(),
            Self::FunctionCall(i) => i.metadata.as_ref(),
            Self::ToolSearchCall(i) => i.metadata.as_ref(),
            Self::FunctionCallOutput(i) => i.metadata.as_ref(),
            Self::CustomToolCall(i) => i.metadata.as_ref(),
            Self::CustomToolCallOutput(i) => i.metadata.as_ref(),
            Self::ToolSearchOutput(i) => i.metadata.as_ref(),
            Self::WebSearchCall(i) => i.metadata.as_ref(),
            Self::ImageGenerationCall(i) => i.metadata.as_ref(),
            Self::Compaction(i) => i.metadata.as_ref(),
            Self::ContextCompaction(i) => i.metadata.as_ref(),
            Self::Other(map) => map.get(PASSTHROUGH_KEY),
            Self::AdditionalTools(_) | Self::ConfigurationUpdate(_) | Self::CompactionTrigger => {
                None
            }
        }
    }

    /// The item's `id`, when it has one.
    pub fn id(&self) -> Option<&str> {
        match self {
            Self::AdditionalTools(i) => i.id.as_deref(),
            Self::Message(i) => i.id.as_deref(),
            Self::AgentMessage(i) => i.id.as_deref(),
            Self::Reasoning(i) => i.id.as_deref(),
            Self::LocalShellCall(i) => i.id.as_deref(),
            Self::FunctionCall(i) => i.id.as_deref(),
            Self::ToolSearchCall(i) => i.id.as_deref(),
            Self::FunctionCallOutput(i) => i.id.as_deref(),
            Self::CustomToolCall(i) => i.id.as_deref(),
            Self::CustomToolCallOutput(i) => i.id.as_deref(),
            Self::ToolSearchOutput(i) => i.id.as_deref(),
            Self::WebSearchCall(i) => i.id.as_deref(),
            Self::ImageGenerationCall(i) => i.id.as_deref(),
            Self::Compaction(i) => i.id.as_deref(),
            Self::ContextCompaction(i) => i.id.as_deref(),
            Self::Other(map) => map.get("id").and_then(Value::as_str),
            Self::ConfigurationUpdate(_) | Self::CompactionTrigger => None,
        }
    }
}

impl<'de> Deserialize<'de> for ResponseItem {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Self::from_value(value).map_err(serde::de::Error::custom)
    }
}

/// One part of a message's content (or of a tool output given as an array).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentItem {
    /// `{"type":"input_text","text"}`.
    InputText {
        /// The text.
        text: String,
        /// Fields this part does not model.
        #[serde(flatten)]
        extra: JsonMap,
    },
    /// `{"type":"input_image","image_url","detail"?}`.
    InputImage {
        /// URL or data URL.
        image_url: String,
        /// `auto`, `low`, `high` or `original`; omitted when None.
        #[serde(skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
        /// Fields this part does not model.
        #[serde(flatten)]
        extra: JsonMap,
    },
    /// `{"type":"output_text","text"}`.
    OutputText {
        /// The text.
        text: String,
        /// Fields this part does not model (for example `annotations`).
        #[serde(flatten)]
        extra: JsonMap,
    },
    /// `{"type":"input_audio","audio_url"}` (C).
    InputAudio {
        /// URL or data URL.
        audio_url: String,
        /// Fields this part does not model.
        #[serde(flatten)]
        extra: JsonMap,
    },
    /// `{"type":"encrypted_content","encrypted_content"}` (tool outputs, agent messages).
    EncryptedContent {
        /// Opaque content.
        encrypted_content: String,
        /// Fields this part does not model.
        #[serde(flatten)]
        extra: JsonMap,
    },
    /// Any other part, kept verbatim.
    #[serde(untagged)]
    Other(JsonMap),
}

#[derive(Deserialize)]
struct TextFields {
    text: String,
    #[serde(flatten)]
    extra: JsonMap,
}

#[derive(Deserialize)]
struct ImageFields {
    image_url: String,
    #[serde(default)]
    detail: Option<String>,
    #[serde(flatten)]
    extra: JsonMap,
}

#[derive(Deserialize)]
struct AudioFields {
    audio_url: String,
    #[serde(flatten)]
    extra: JsonMap,
}

#[derive(Deserialize)]
struct EncryptedFields {
    encrypted_content: String,
    #[serde(flatten)]
    extra: JsonMap,
}

impl ContentItem {
    /// Parses one content part. Unknown `type`s are kept verbatim as [`ContentItem::Other`].
    pub fn from_value(value: Value) -> Result<Self, String> {
        let Value::Object(map) = value else {
            return Err(format!(
                "a content part must be an object, got {}",
                super::json::kind_of(&value)
            ));
        };
        let (tag, fields) = split_tag(map);
        let Some(tag) = tag else {
            return Err("content part has no string `type`".to_string());
        };
        Ok(match tag.as_str() {
            "input_text" => {
                let f: TextFields = from_value_with_path(fields.into())?;
                Self::InputText {
                    text: f.text,
                    extra: f.extra,
                }
            }
            "output_text" => {
                let f: TextFields = from_value_with_path(fields.into())?;
                Self::OutputText {
                    text: f.text,
                    extra: f.extra,
                }
            }
            "input_image" => {
                let f: ImageFields = from_value_with_path(fields.into())?;
                Self::InputImage {
                    image_url: f.image_url,
                    detail: f.detail,
                    extra: f.extra,
                }
            }
            "input_audio" => {
                let f: AudioFields = from_value_with_path(fields.into())?;
                Self::InputAudio {
                    audio_url: f.audio_url,
                    extra: f.extra,
                }
            }
            "encrypted_content" => {
                let f: EncryptedFields = from_value_with_path(fields.into())?;
                Self::EncryptedContent {
                    encrypted_content: f.encrypted_content,
                    extra: f.extra,
                }
            }
            _ => Self::Other(with_tag_first(&tag, fields)),
        })
    }

    /// Text of a text part (`input_text` / `output_text`).
    pub fn text(&self) -> Option<&str> {
        match self {
            Self::InputText { text, .. } | Self::OutputText { text, .. } => Some(text),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for ContentItem {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Self::from_value(value).map_err(serde::de::Error::custom)
    }
}
