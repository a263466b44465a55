//! The request compiler: `compile(prompt, model, provider, dialect, rules)` → the exact request
//! Codex would send — URL, headers (§4), HTTP body (§2), WebSocket `response.create` frame (§3) —
//! plus a note for every field the rules changed or left out, so a viewer can explain it. A
//! Prompt in a compaction mode compiles to a compaction request ([`compaction`]).

pub mod ask_why;
mod body;
mod body_value;
mod cache;
pub mod client;
pub mod compaction;
mod controls;
mod headers;
pub mod items;
pub mod lite;

use serde::Serialize;
use serde_json::Value;

use super::error::PromptError;
use super::json::JsonMap;
use super::models::ModelInfo;
use super::prompt::{Dialect, Prompt, PromptMode};
use super::provider::{Provider, ProviderKind};
use super::rules::CompileRules;

pub use body_value::BodyValue;
pub use headers::{Header, REDACTED};

/// Why a field was changed or left out ("verbosity omitted: model does not support it").
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CompileNote {
    /// JSON path in the Prompt or body (`text.verbosity`, `input[3].id`).
    pub path: String,
    /// What happened and why.
    pub message: String,
}

/// How a note about a header starts its path (`headers.x-openai-internal-codex-responses-lite`),
/// so views of the body and of the headers each show their own notes.
pub const HEADER_NOTE_PREFIX: &str = "headers.";

/// The header a Lite request adds over HTTP (on WebSocket it becomes [`LITE_WS_METADATA_KEY`]).
pub const LITE_HEADER: &str = "x-openai-internal-codex-responses-lite";

impl CompileNote {
    /// A note about `path`.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            message: message.into(),
        }
    }

    /// A note about the header `name`.
    pub fn header(name: &str, message: impl Into<String>) -> Self {
        Self::new(format!("{HEADER_NOTE_PREFIX}{name}"), message)
    }

    /// The header this note is about, when it is about one.
    pub fn header_name(&self) -> Option<&str> {
        self.path.strip_prefix(HEADER_NOTE_PREFIX)
    }
}

/// Standard or Lite after `auto` was resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ResolvedDialect {
    /// Top-level instructions and tools.
    Standard,
    /// Responses Lite.
    Lite,
}

/// One compiled request.
#[derive(Debug, Clone, PartialEq)]
pub struct CompiledRequest {
    /// Standard or Lite.
    pub dialect: ResolvedDialect,
    /// Provider behaviour class.
    pub provider_kind: ProviderKind,
    /// Rules preset name.
    pub rules: String,
    /// `POST` target.
    pub url: String,
    /// Headers in the order they are added, with their values as sent — except a secret from
    /// an environment variable, which stays `<redacted>` until send time. Show them through
    /// [`CompiledRequest::headers_json`] or [`Header::shown_value`], which apply the redaction
    /// policy.
    pub headers: Vec<Header>,
    /// The body as a JSON object, keys in wire order: materialized on first use and shared
    /// between identical views.
    pub body: BodyValue,
    /// The body's exact JSON bytes (what `Content-Length` counts before compression).
    pub body_json: Vec<u8>,
    /// The zstd-compressed body, when `Content-Encoding: zstd` applies.
    pub compressed_body: Option<Vec<u8>>,
    /// Explanations of changed or omitted fields.
    pub notes: Vec<CompileNote>,
    /// `previous_response_id` for the WebSocket frame.
    previous_response_id: Option<String>,
}

impl CompiledRequest {
    /// The bytes that go on the wire (compressed when zstd applies).
    pub fn wire_body(&self) -> &[u8] {
        self.compressed_body.as_deref().unwrap_or(&self.body_json)
    }

    /// The WebSocket `response.create` frame: `type` first, `previous_response_id` before
    /// `input`, and for Lite the `ws_request_header_…` key in `client_metadata` (§3, §6).
    pub fn ws_frame(&self) -> JsonMap {
        let mut frame = JsonMap::with_capacity(self.body.len() + 2);
        frame.insert(
            "type".to_string(),
            Value::String("response.create".to_string()),
        );
        let lite = self.dialect == ResolvedDialect::Lite;
        let mut saw_metadata = false;
        for (key, value) in self.body.iter() {
            if key == "input"
                && let Some(prev) = &self.previous_response_id
            {
                frame.insert(
                    "previous_response_id".to_string(),
                    Value::String(prev.clone()),
                );
            }
            if key == "client_metadata" && lite {
                saw_metadata = true;
                let mut meta = value.as_object().cloned().unwrap_or_default();
                meta.insert(LITE_WS_METADATA_KEY.to_string(), Value::from("true"));
                frame.insert(key.clone(), Value::Object(meta));
                continue;
            }
            frame.insert(key.clone(), value.clone());
        }
        if lite && !saw_metadata {
            let mut meta = JsonMap::new();
            meta.insert(LITE_WS_METADATA_KEY.to_string(), Value::from("true"));
            frame.insert("client_metadata".to_string(), Value::Object(meta));
        }
        frame
    }

    /// The headers as a JSON object (name → value as shown: every credential redacted by the
    /// policy of [`crate::core::redact`], whether it comes from the API key variable, the
    /// provider's static headers or the Prompt's).
    pub fn headers_json(&self) -> JsonMap {
        self.headers
            .iter()
            .map(|h| (h.name.clone(), Value::String(h.shown_value())))
            .collect()
    }

    /// Names of the headers that identify an organization, project or account (shown as they
    /// are, marked with [`crate::core::redact::IDENTIFYING_NOTE`] where they are rendered).
    pub fn identifying_headers(&self) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|h| crate::core::redact::is_identifying_header(&h.name))
            .map(|h| h.name.as_str())
            .collect()
    }
}

/// `client_metadata` key that replaces the Lite header on WebSocket.
pub const LITE_WS_METADATA_KEY: &str = "ws_request_header_x_openai_internal_codex_responses_lite";

/// Compiles `prompt` for `model` on `provider` under `rules`. `dialect` `Auto` follows the
/// model's `use_responses_lite`.
pub fn compile(
    prompt: &Prompt,
    model: &ModelInfo,
    provider: &Provider,
    dialect: Dialect,
    rules: &CompileRules,
) -> Result<CompiledRequest, PromptError> {
    let mut cache = cache::ItemCache::new(prompt.input.len());
    compile_with(
        prompt,
        model,
        provider,
        dialect,
        rules,
        &mut cache,
        &mut Vec::new(),
    )
}

/// Compiles one prompt for several (provider, dialect) views, serializing each input item once
/// per distinct context it is sensitive to. The results equal separate [`compile`] calls.
pub fn compile_views(
    prompt: &Prompt,
    model: &ModelInfo,
    rules: &CompileRules,
    views: &[(&Provider, Dialect)],
) -> Result<Vec<CompiledRequest>, PromptError> {
    let mut cache = cache::ItemCache::new(prompt.input.len());
    let mut bodies = Vec::new();
    views
        .iter()
        .map(|(provider, dialect)| {
            compile_with(
                prompt,
                model,
                provider,
                *dialect,
                rules,
                &mut cache,
                &mut bodies,
            )
        })
        .collect()
}

fn compile_with(
    prompt: &Prompt,
    model: &ModelInfo,
    provider: &Provider,
    dialect: Dialect,
    rules: &CompileRules,
    cache: &mut cache::ItemCache,
    bodies: &mut Vec<BodyValue>,
) -> Result<CompiledRequest, PromptError> {
    let lite = match dialect {
        Dialect::Auto => model.use_responses_lite,
        Dialect::Standard => false,
        Dialect::Lite => true,
    };
    let mut notes = Vec::new();
    if model.is_fallback() {
        notes.push(CompileNote::new(
            "model",
            format!(
                "`{}` is not in the catalog: fallback capabilities (no verbosity, no parallel tools, no reasoning summaries)",
                prompt.model
            ),
        ));
    }
    let built = body::build_body(prompt, model, provider, lite, rules, cache, &mut notes)?;
    let input_overridden = prompt.body_overrides.contains_key("input");
    let body_json = if input_overridden {
        serde_json::to_vec(&built.body).unwrap_or_default()
    } else {
        body_bytes(&built)
    };
    let compress = headers::uses_zstd(prompt, provider, rules);
    let compressed_body =
        if compress {
            Some(zstd::encode_all(body_json.as_slice(), 3).map_err(|e| {
                PromptError::invalid("body", format!("zstd compression failed: {e}"))
            })?)
        } else {
            None
        };
    if let Some(compressed) = &compressed_body {
        notes.push(CompileNote::new(
            "body",
            format!(
                "sent zstd-compressed (Content-Encoding: zstd): {} bytes on the wire for {} bytes of JSON",
                compressed.len(),
                body_json.len()
            ),
        ));
    }
    let headers = headers::build_headers(
        prompt,
        provider,
        rules,
        &headers::HeaderFacts {
            lite,
            compress,
            body: &built.body,
            compaction: prompt.mode != PromptMode::Turn,
            unary: prompt.mode == PromptMode::CompactEndpoint,
        },
    )?;
    if lite && headers.iter().any(|h| h.name == LITE_HEADER) {
        notes.push(CompileNote::header(
            LITE_HEADER,
            "added: tells the server this is a Responses Lite request (a standard request has no such header)",
        ));
    }
    // Views whose bodies are the same share one object form (materialized when first read).
    let body = match bodies
        .iter()
        .find(|other| other.built().is_some_and(|b| b.same_as(&built)))
    {
        Some(shared) => shared.clone(),
        None => {
            let body = BodyValue::new(built, input_overridden);
            bodies.push(body.clone());
            body
        }
    };
    Ok(CompiledRequest {
        dialect: if lite {
            ResolvedDialect::Lite
        } else {
            ResolvedDialect::Standard
        },
        provider_kind: provider.kind(),
        rules: rules.name.clone(),
        url: if prompt.mode == PromptMode::CompactEndpoint {
            provider.compact_url()
        } else {
            provider.responses_url()
        },
        headers,
        body,
        body_json,
        compressed_body,
        notes,
        previous_response_id: prompt.previous_response_id.clone(),
    })
}

/// The body's compact JSON, identical to `serde_json::to_vec(&body)`, with the prompt items'
/// bytes taken from the cache instead of serialized again.
fn body_bytes(built: &body::BuiltBody) -> Vec<u8> {
    let size: usize = built.items.iter().map(|w| w.bytes.len() + 1).sum();
    let mut out = Vec::with_capacity(size + 4096);
    out.push(b'{');
    for (i, (key, value)) in built.body.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        // Writing JSON into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut out, key);
        out.push(b':');
        match (key.as_str(), value) {
            ("input", Value::Array(items)) => {
                out.push(b'[');
                for (j, item) in items.iter().enumerate() {
                    if j > 0 {
                        out.push(b',');
                    }
                    match j
                        .checked_sub(built.prefix_len)
                        .and_then(|k| built.items.get(k))
                    {
                        Some(wire) => out.extend_from_slice(&wire.bytes),
                        None => {
                            let _ = serde_json::to_writer(&mut out, item);
                        }
                    }
                }
                out.push(b']');
            }
            _ => {
                let _ = serde_json::to_writer(&mut out, value);
            }
        }
    }
    out.push(b'}');
    out
}
