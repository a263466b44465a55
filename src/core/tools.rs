//! `ToolSpec`: the tools a request offers (WIRE_SPEC §12), serialised tag-first in Codex's field
//! order. Unknown tool types are kept verbatim as [`ToolSpec::Other`].

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use super::items::{file_value, unwrap_verbatim};
use super::json::{JsonMap, from_value_with_path, kind_of, split_tag, with_tag_first};

/// One tool offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToolSpec {
    /// A JSON-schema function tool.
    Function(FunctionTool),
    /// A group of tools under one name.
    Namespace(NamespaceTool),
    /// The tool-search tool.
    ToolSearch(ToolSearchTool),
    /// The hosted image generation tool.
    ImageGeneration(ImageGenerationTool),
    /// The hosted web search tool.
    WebSearch(WebSearchTool),
    /// A freeform tool with a grammar.
    Custom(CustomTool),
    /// The legacy local shell tool (no fields).
    LocalShell,
    /// Any other tool, kept verbatim.
    #[serde(untagged)]
    Other(JsonMap),
}

fn is_not_true(value: &Option<bool>) -> bool {
    *value != Some(true)
}

/// `function`: `name`, `description`, `strict`, `defer_loading?` (only `true`), `parameters`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionTool {
    /// Tool name (required, non-empty).
    pub name: String,
    /// Description shown to the model.
    #[serde(default)]
    pub description: String,
    /// Strict schema adherence.
    #[serde(default)]
    pub strict: bool,
    /// Deferred loading; only ever emitted as `true`.
    #[serde(default, skip_serializing_if = "is_not_true")]
    pub defer_loading: Option<bool>,
    /// JSON Schema of the arguments.
    pub parameters: Value,
    /// Fields this tool type does not model.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `namespace`: `name`, `description`, `tools`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NamespaceTool {
    /// Namespace name.
    pub name: String,
    /// Description (Codex default: `Tools in the <name> namespace.`).
    #[serde(default)]
    pub description: String,
    /// Member tools (`function`, or `custom` in C).
    pub tools: Vec<ToolSpec>,
    /// Fields this tool type does not model.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `tool_search`: `execution`, `description`, `parameters`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSearchTool {
    /// `sync`, `client`, …
    pub execution: String,
    /// Description.
    #[serde(default)]
    pub description: String,
    /// JSON Schema of the search arguments.
    pub parameters: Value,
    /// Fields this tool type does not model.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `image_generation`: `output_format`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImageGenerationTool {
    /// Output format, omitted when None.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_format: Option<String>,
    /// Fields this tool type does not model.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `web_search`: every field optional and omitted when None.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WebSearchTool {
    /// Live web access.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_web_access: Option<bool>,
    /// Index-gated access.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_gated_web_access: Option<bool>,
    /// `{allowed_domains?}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filters: Option<Value>,
    /// `{type, country?, region?, city?, timezone?}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_location: Option<Value>,
    /// `low`, `medium` or `high`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_context_size: Option<String>,
    /// For example `["text","image"]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_content_types: Option<Vec<String>>,
    /// Fields this tool type does not model.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `custom` (freeform): `name`, `description`, `format{type, syntax, definition}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CustomTool {
    /// Tool name (required, non-empty).
    pub name: String,
    /// Description.
    #[serde(default)]
    pub description: String,
    /// Input format, e.g. `{"type":"grammar","syntax":"lark","definition":…}`.
    pub format: Value,
    /// Fields this tool type does not model.
    #[serde(flatten)]
    pub extra: JsonMap,
}

impl ToolSpec {
    /// Parses one tool. Unknown `type`s are kept verbatim; `function`, `custom` and `namespace`
    /// tools need a non-empty `name`.
    pub fn from_value(value: Value) -> Result<Self, String> {
        let Value::Object(map) = value else {
            return Err(format!("a tool must be an object, got {}", kind_of(&value)));
        };
        if let Some(inner) = unwrap_verbatim(&map) {
            return Ok(Self::Other(inner));
        }
        let (tag, fields) = split_tag(map);
        let Some(tag) = tag else {
            return Err("tool has no string `type`".to_string());
        };
        if matches!(tag.as_str(), "function" | "custom" | "namespace") {
            match fields.get("name") {
                None => return Err(format!("name: {tag} tool has no `name`")),
                Some(Value::String(name)) if name.trim().is_empty() => {
                    return Err(format!("name: {tag} tool has an empty `name`"));
                }
                _ => {}
            }
        }
        Ok(match tag.as_str() {
            "function" => Self::Function(from_value_with_path(fields.into())?),
            "namespace" => Self::Namespace(from_value_with_path(fields.into())?),
            "tool_search" => Self::ToolSearch(from_value_with_path(fields.into())?),
            "image_generation" => Self::ImageGeneration(from_value_with_path(fields.into())?),
            "web_search" => Self::WebSearch(from_value_with_path(fields.into())?),
            "custom" => Self::Custom(from_value_with_path(fields.into())?),
            "local_shell" if fields.is_empty() => Self::LocalShell,
            _ => Self::Other(with_tag_first(&tag, fields)),
        })
    }

    /// How this tool is written in a Prompt file (see [`crate::core::items::VERBATIM_KEY`]).
    pub fn to_file_value(&self) -> Value {
        file_value(
            self,
            |v| Self::from_value(v).ok(),
            |tool| match tool {
                Self::Other(map) => Some(map),
                _ => None,
            },
        )
    }

    /// The wire `type` of this tool.
    pub fn type_name(&self) -> &str {
        match self {
            Self::Function(_) => "function",
            Self::Namespace(_) => "namespace",
            Self::ToolSearch(_) => "tool_search",
            Self::ImageGeneration(_) => "image_generation",
            Self::WebSearch(_) => "web_search",
            Self::Custom(_) => "custom",
            Self::LocalShell => "local_shell",
            Self::Other(map) => map.get("type").and_then(Value::as_str).unwrap_or(""),
        }
    }

    /// The tool's name, for tools that have one.
    pub fn name(&self) -> Option<&str> {
        match self {
            Self::Function(t) => Some(&t.name),
            Self::Namespace(t) => Some(&t.name),
            Self::Custom(t) => Some(&t.name),
            Self::Other(map) => map.get("name").and_then(Value::as_str),
            _ => None,
        }
    }

    /// Hosted tools run by the server; Codex does not offer them to Lite models (§6.7).
    pub fn is_hosted(&self) -> bool {
        matches!(self, Self::WebSearch(_) | Self::ImageGeneration(_))
    }
}

impl<'de> Deserialize<'de> for ToolSpec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Self::from_value(value).map_err(serde::de::Error::custom)
    }
}
