//! A request in prompt order: its body split into the elements the analysis compares (see the
//! module docs of [`super`]), as element ids into the session's pool, plus the fields that only
//! route (`prompt_cache_key`, `client_metadata`, cache retention) and whether it is a
//! compaction request.

use serde::Serialize;
use serde_json::Value;

use super::PrefixError;
use super::canon::{Digest, digest_unordered, escape_pointer_segment};
use super::pool::{ElementId, ElementPool};
use crate::core::compile::compaction::compaction_kind;
use crate::core::json::{JsonMap, kind_of};

/// Top-level fields that never take part in the verdict (they route, sample or report, but are
/// not rendered into the prompt).
pub const OUTSIDE_RENDERING: &[&str] = &[
    "client_metadata",
    "stream",
    "store",
    "include",
    "prompt_cache_key",
    "prompt_cache_retention",
    "prompt_cache_options",
    "service_tier",
    "metadata",
    "user",
    "safety_identifier",
    "stream_options",
    "background",
    "max_output_tokens",
    "temperature",
    "top_p",
    "top_logprobs",
];

/// A position of the prompt order (the element a header part is).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BreakAt {
    /// The model slug.
    Model,
    /// `reasoning`.
    Reasoning,
    /// `text` and the other rendered top-level settings.
    Text,
    /// The tool list (`tools` or Lite `additional_tools`), `parallel_tool_calls`, `tool_choice`.
    Tools,
    /// Base instructions (`instructions` or the Lite developer message).
    Instructions,
    /// An input item.
    Input,
}

impl BreakAt {
    /// The snake_case name used on the wire of the report.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Model => "model",
            Self::Reasoning => "reasoning",
            Self::Text => "text",
            Self::Tools => "tools",
            Self::Instructions => "instructions",
            Self::Input => "input",
        }
    }
}

/// Request shape: standard (tools and instructions as top-level fields) or Responses Lite (tools
/// and instructions as the first input items, WIRE_SPEC §6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Dialect {
    /// Top-level `tools` / `instructions`.
    Standard,
    /// `input[0]` is `additional_tools`.
    Lite,
}

impl Dialect {
    /// The shape of a request body: Lite when `input[0]` is `additional_tools`, standard for
    /// any other Responses body (an object with `input` or `model`); None for anything else.
    pub fn of_body(body: &serde_json::Value) -> Option<Self> {
        let body = body.as_object()?;
        if !body.contains_key("input") && !body.contains_key("model") {
            return None;
        }
        let first_type = body
            .get("input")
            .and_then(serde_json::Value::as_array)
            .and_then(|items| items.first())
            .and_then(|item| item.get("type"))
            .and_then(serde_json::Value::as_str);
        Some(if first_type == Some("additional_tools") {
            Self::Lite
        } else {
            Self::Standard
        })
    }

    /// The name stored in a request's `dialect` column: `standard` / `lite`.
    pub fn id(self) -> &'static str {
        match self {
            Self::Standard => "standard",
            Self::Lite => "lite",
        }
    }
}

/// One element of the part of the prompt that precedes the input items.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderPart {
    /// Which position of the prompt order it belongs to.
    pub at: BreakAt,
    /// JSON pointer of the element in the body (`/reasoning`, `/tools`, `/input/0`).
    pub pointer: Box<str>,
    /// The element.
    pub id: ElementId,
}

/// A request in prompt order.
#[derive(Debug, Clone)]
pub struct RequestShape {
    /// The model slug.
    pub model: String,
    /// Standard or Lite.
    pub dialect: Dialect,
    /// Elements before the input items, in prompt order.
    pub header: Vec<HeaderPart>,
    /// The input items after the Lite prefix, in order.
    pub input: Vec<ElementId>,
    /// How many body input items the header took (Lite: 1 or 2; standard: 1 when the base
    /// instructions travel as the first input message, else 0), so that
    /// `input[k]` here is `input[k + input_offset]` in the body.
    pub input_offset: usize,
    /// `prompt_cache_key`, when sent.
    pub prompt_cache_key: Option<String>,
    /// Digest of `client_metadata` as a map (key order ignored), when sent.
    pub client_metadata: Option<Digest>,
    /// Whether this is a compaction request (in-band or `/responses/compact`).
    pub is_compaction: bool,
    /// Cache retention the request asked for (`prompt_cache_retention`, or
    /// `prompt_cache_options.ttl`), in seconds.
    pub cache_ttl_secs: Option<u64>,
    /// `prompt_cache_options.mode: "explicit"`: no implicit breakpoint (breakpoint models).
    pub cache_mode_explicit: bool,
    /// `service_tier`, when sent (`flex`, `priority`, …): what the request is billed at.
    pub service_tier: Option<String>,
    /// Compact JSON bytes of the whole body.
    pub body_bytes: u64,
    /// Compact JSON bytes of the body without the items of its `input` array (so that the body
    /// with another item list `L` has `head_bytes + array_bytes(L)` bytes).
    pub head_bytes: u64,
}

impl RequestShape {
    /// Builds the shape of a body whose `input` items were interned as `input` (the body's own
    /// `input` field, if any, is not read: the ids stand for it).
    pub fn new(
        head: &JsonMap,
        input: &[ElementId],
        pool: &mut ElementPool,
    ) -> Result<Self, PrefixError> {
        let model = match head.get("model") {
            Some(Value::String(m)) => m.clone(),
            Some(other) => {
                return Err(invalid(
                    "model",
                    format!("model must be a string, got {}", kind_of(other)),
                ));
            }
            None => return Err(invalid("model", "the body has no `model`")),
        };
        for (index, id) in input.iter().enumerate() {
            if !pool.contains(*id) {
                return Err(PrefixError::UnknownElement { index, id: id.0 });
            }
        }
        let is_type = |id: Option<&ElementId>, ty: &str, role: Option<&str>| {
            id.map(|id| pool.value(*id)).is_some_and(|v| {
                v.get("type").and_then(Value::as_str) == Some(ty)
                    && role.is_none_or(|r| v.get("role").and_then(Value::as_str) == Some(r))
            })
        };
        let lite = is_type(input.first(), "additional_tools", None);
        let lite_instructions = lite && is_type(input.get(1), "message", Some("developer"));
        // Codex 0.169+ (standard): no top-level `instructions`; the base instructions are the
        // first input item, a developer message.
        let first_instructions = !lite
            && !head.contains_key("instructions")
            && is_type(input.first(), "message", Some("developer"));
        let input_offset =
            usize::from(lite) + usize::from(lite_instructions) + usize::from(first_instructions);
        let last = input.last().map(|id| pool.value(*id));
        let is_compaction = compaction_kind(head, Some(last)).is_some();

        let mut header = Vec::new();
        add_field(&mut header, head, pool, "model", BreakAt::Model);
        add_field(&mut header, head, pool, "reasoning", BreakAt::Reasoning);
        add_field(&mut header, head, pool, "text", BreakAt::Text);
        let mut others: Vec<&String> = head
            .keys()
            .filter(|k| !is_known(k) && !OUTSIDE_RENDERING.contains(&k.as_str()))
            .collect();
        others.sort();
        for key in others {
            add_field(&mut header, head, pool, key, BreakAt::Text);
        }
        add_field(&mut header, head, pool, "tools", BreakAt::Tools);
        if lite {
            header.push(HeaderPart {
                at: BreakAt::Tools,
                pointer: "/input/0".into(),
                id: input[0],
            });
        }
        add_field(
            &mut header,
            head,
            pool,
            "parallel_tool_calls",
            BreakAt::Tools,
        );
        add_field(&mut header, head, pool, "tool_choice", BreakAt::Tools);
        add_field(
            &mut header,
            head,
            pool,
            "instructions",
            BreakAt::Instructions,
        );
        if lite_instructions {
            header.push(HeaderPart {
                at: BreakAt::Instructions,
                pointer: "/input/1".into(),
                id: input[1],
            });
        }
        if first_instructions {
            header.push(HeaderPart {
                at: BreakAt::Instructions,
                pointer: "/input/0".into(),
                id: input[0],
            });
        }

        let (body_bytes, head_bytes) = body_sizes(head, &header, input, pool);
        Ok(Self {
            model,
            dialect: if lite {
                Dialect::Lite
            } else {
                Dialect::Standard
            },
            header,
            input: input[input_offset..].to_vec(),
            input_offset,
            prompt_cache_key: head
                .get("prompt_cache_key")
                .and_then(Value::as_str)
                .map(String::from),
            client_metadata: head.get("client_metadata").map(digest_unordered),
            is_compaction,
            cache_ttl_secs: cache_ttl_secs(head),
            cache_mode_explicit: head
                .get("prompt_cache_options")
                .and_then(|o| o.get("mode"))
                .and_then(Value::as_str)
                == Some("explicit"),
            service_tier: head
                .get("service_tier")
                .and_then(Value::as_str)
                .map(String::from),
            body_bytes,
            head_bytes,
        })
    }

    /// Header parts at one position of the prompt order.
    pub fn parts_at(&self, at: BreakAt) -> impl Iterator<Item = &HeaderPart> {
        self.header.iter().filter(move |p| p.at == at)
    }

    /// Every element of the rendering, in prompt order: header parts, then input items.
    pub fn elements(&self) -> impl Iterator<Item = ElementId> + '_ {
        self.header
            .iter()
            .map(|p| p.id)
            .chain(self.input.iter().copied())
    }
}

/// Adds the top-level field `key`, when present, as a header part.
fn add_field(
    header: &mut Vec<HeaderPart>,
    head: &JsonMap,
    pool: &mut ElementPool,
    key: &str,
    at: BreakAt,
) {
    if let Some(value) = head.get(key) {
        header.push(HeaderPart {
            at,
            pointer: format!("/{}", escape_pointer_segment(key)).into_boxed_str(),
            id: pool.intern(value),
        });
    }
}

fn is_known(key: &str) -> bool {
    matches!(
        key,
        "model"
            | "reasoning"
            | "text"
            | "tools"
            | "parallel_tool_calls"
            | "tool_choice"
            | "instructions"
            | "input"
    )
}

fn invalid(path: &str, message: impl Into<String>) -> PrefixError {
    PrefixError::InvalidBody {
        path: path.to_string(),
        message: message.into(),
    }
}

/// Compact bytes of a JSON array holding elements of these sizes.
pub fn array_bytes(sizes: impl Iterator<Item = u64>) -> u64 {
    let (count, sum) = sizes.fold((0u64, 0u64), |(n, s), b| (n + 1, s + b));
    2 + sum + count.saturating_sub(1)
}

/// (whole body, body without its input items) in compact JSON bytes. Fields already interned
/// as header parts take their size from the pool; only the small routing fields are serialized.
pub(super) fn body_sizes(
    head: &JsonMap,
    header: &[HeaderPart],
    input: &[ElementId],
    pool: &ElementPool,
) -> (u64, u64) {
    let items = array_bytes(input.iter().map(|id| pool.bytes(*id)));
    let mut total = 2 + head.len().saturating_sub(1) as u64;
    let mut has_input = false;
    for (key, value) in head {
        total += serde_json::to_string(key).map_or(0, |k| k.len() as u64) + 1;
        if key == "input" {
            has_input = true;
            total += items;
            continue;
        }
        let pointer = format!("/{}", escape_pointer_segment(key));
        total += match header.iter().find(|p| *p.pointer == *pointer) {
            Some(part) => pool.bytes(part.id),
            None => serde_json::to_string(value).map_or(0, |v| v.len() as u64),
        };
    }
    if !has_input && !input.is_empty() {
        // Ids given without an `input` field in the head: count the field as if present.
        total += "\"input\":".len() as u64 + items + u64::from(!head.is_empty());
        has_input = true;
    }
    let head_bytes = if has_input { total - items } else { total };
    (total, head_bytes)
}

/// Retention asked for by the request, in seconds.
fn cache_ttl_secs(head: &JsonMap) -> Option<u64> {
    let options_ttl = head
        .get("prompt_cache_options")
        .and_then(|o| o.get("ttl"))
        .and_then(Value::as_str)
        .and_then(parse_duration_secs);
    let retention = head
        .get("prompt_cache_retention")
        .and_then(Value::as_str)
        .and_then(parse_duration_secs);
    options_ttl.or(retention)
}

/// `"30m"`, `"24h"`, `"300s"`, `"1d"` → seconds; anything else (`"in_memory"`) → `None`.
pub fn parse_duration_secs(text: &str) -> Option<u64> {
    let text = text.trim();
    let unit = text.chars().last()?;
    let factor = match unit {
        's' => 1,
        'm' => 60,
        'h' => 3600,
        'd' => 86_400,
        _ => return None,
    };
    let number: u64 = text[..text.len() - 1].parse().ok()?;
    number.checked_mul(factor)
}
