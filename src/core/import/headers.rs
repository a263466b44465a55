//! A captured request's headers, read from a file beside its body, and folded into the imported
//! Prompt so that compiling it gives the same header names, order and values: client identity
//! (originator, user-agent parts, beta features) into `client`, an Authorization header into
//! `compile.api_key_env`, and whatever the compiler would not produce by itself (a turn metadata
//! string not in the body, a sub-agent header, …) into `headers`. Transport headers (`host`,
//! `content-length`) are the HTTP client's, and secret values are never kept.

use serde_json::Value;

use crate::core::compile::client::{
    DEFAULT_PLATFORM, DEFAULT_TERMINAL, default_suffix, parse_user_agent,
};
use crate::core::compile::{Header, compile};
use crate::core::error::PromptError;
use crate::core::json::kind_of;
use crate::core::models::ModelInfo;
use crate::core::prompt::{AuthMode, Prompt, Setting};
use crate::core::provider::{Provider, ProviderKind};
use crate::core::rules::CompileRules;

/// Headers the HTTP client adds on its own; a compiled request does not list them.
pub const TRANSPORT_HEADERS: [&str; 4] =
    ["host", "content-length", "connection", "transfer-encoding"];

/// Environment variable import names for a captured Authorization header the provider preset
/// would not send (the captured value is redacted; the key is read at send time).
pub const CAPTURED_KEY_ENV: &str = "PROMPTWIRE_API_KEY";

/// A captured request's headers, names lower-cased, in capture order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CapturedHeaders {
    /// The request path, when the capture records it (`/v1/responses`).
    pub path: Option<String>,
    /// `(name, value)` pairs.
    pub headers: Vec<(String, String)>,
}

impl CapturedHeaders {
    /// The value of `name` (lower-case), if captured.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The headers a compiled request should reproduce: transport headers left out.
    pub fn comparable(&self) -> Vec<(String, String)> {
        self.headers
            .iter()
            .filter(|(n, _)| !TRANSPORT_HEADERS.contains(&n.as_str()))
            .cloned()
            .collect()
    }

    /// Parses a headers capture: JSON `{"path", "headers": {name: value}}`, a JSON object of
    /// name → value, a JSON array of `{"name", "value"}`, or text (an optional path line, then
    /// `name: value` lines). Errors name where the problem is.
    pub fn parse(text: &str) -> Result<Self, PromptError> {
        let trimmed = text.trim_start();
        if trimmed.starts_with('{') || trimmed.starts_with('[') {
            let value: Value =
                serde_json::from_str(text).map_err(|e| PromptError::from_serde("", &e))?;
            return Self::from_json(&value);
        }
        let mut out = Self::default();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim_end_matches('\r');
            if line.is_empty() {
                if out.headers.is_empty() && out.path.is_none() {
                    continue;
                }
                break;
            }
            match line.split_once(':') {
                Some((name, value)) if !name.contains(' ') && !name.is_empty() => out
                    .headers
                    .push((name.to_ascii_lowercase(), value.trim().to_string())),
                _ if i == 0 => out.path = Some(line.trim().to_string()),
                _ => {
                    return Err(PromptError::invalid(
                        format!("line {}", i + 1),
                        "expected `name: value`",
                    ));
                }
            }
        }
        Ok(out)
    }

    fn from_json(value: &Value) -> Result<Self, PromptError> {
        let mut out = Self::default();
        let (prefix, headers) = match value {
            Value::Object(map) => match map.get("headers") {
                Some(inner) => {
                    out.path = map.get("path").and_then(Value::as_str).map(String::from);
                    ("headers", inner)
                }
                None => ("", value),
            },
            _ => ("", value),
        };
        let at = |name: &str| {
            if prefix.is_empty() {
                name.to_string()
            } else {
                format!("{prefix}.{name}")
            }
        };
        match headers {
            Value::Object(map) => {
                for (name, v) in map {
                    let Value::String(v) = v else {
                        return Err(PromptError::invalid(
                            at(name),
                            format!("header values must be strings, got {}", kind_of(v)),
                        ));
                    };
                    out.headers.push((name.to_ascii_lowercase(), v.clone()));
                }
            }
            Value::Array(list) => {
                for (i, entry) in list.iter().enumerate() {
                    let name = entry.get("name").and_then(Value::as_str);
                    let v = entry.get("value").and_then(Value::as_str);
                    let (Some(name), Some(v)) = (name, v) else {
                        return Err(PromptError::invalid(
                            at(&format!("[{i}]")),
                            "expected {\"name\": string, \"value\": string}",
                        ));
                    };
                    out.headers.push((name.to_ascii_lowercase(), v.to_string()));
                }
            }
            other => {
                return Err(PromptError::invalid(
                    if prefix.is_empty() { "$" } else { prefix },
                    format!("expected an object of headers, got {}", kind_of(other)),
                ));
            }
        }
        Ok(out)
    }
}

fn is_secret(name: &str) -> bool {
    crate::core::redact::is_secret_header(name)
}

/// Folds `captured` into `prompt` (compiled with `rules` for `model`), so that its compiled
/// headers equal the captured ones.
pub fn apply_captured(
    prompt: &mut Prompt,
    captured: &CapturedHeaders,
    model: &ModelInfo,
    rules: &CompileRules,
) -> Result<(), PromptError> {
    if let Some(originator) = captured.get("originator")
        && originator != rules.default_originator
    {
        prompt.client.originator = Some(originator.to_string());
    }
    let originator = prompt
        .client
        .originator
        .clone()
        .unwrap_or_else(|| rules.default_originator.clone());
    if let Some(ua) = captured.get("user-agent").and_then(parse_user_agent)
        && ua.originator == originator
        && ua.version == rules.client_version
    {
        let client = &mut prompt.client;
        client.platform = (ua.platform != DEFAULT_PLATFORM).then_some(ua.platform);
        client.terminal = (ua.terminal != DEFAULT_TERMINAL).then_some(ua.terminal);
        client.user_agent_suffix = match ua.suffix {
            s if s == default_suffix(&originator, &rules.client_version) => Setting::Default,
            None => Setting::Omit,
            Some(s) => Setting::Value(s),
        };
    }
    prompt.client.beta_features = match captured.get("x-codex-beta-features") {
        Some(v) if rules.beta_features.as_deref() == Some(v) => Setting::Default,
        Some(v) => Setting::Value(v.to_string()),
        None if rules.beta_features.is_some() => Setting::Omit,
        None => Setting::Default,
    };
    if captured.get("content-encoding") == Some("zstd")
        && prompt.compile.provider == ProviderKind::Openai
    {
        // Only ChatGPT-style auth makes the OpenAI provider compress (§4).
        prompt.compile.auth = AuthMode::Chatgpt;
    }
    let mut provider = Provider::preset(prompt.compile.provider);
    if captured.get("authorization").is_some() && provider.env_key.is_none() {
        prompt.compile.api_key_env = Some(CAPTURED_KEY_ENV.to_string());
        provider.env_key = Some(CAPTURED_KEY_ENV.to_string());
    }
    // Whatever the compiler still does not produce is kept as an explicit header.
    let compiled = compile(prompt, model, &provider, prompt.compile.dialect, rules)?;
    for (name, value) in captured.comparable() {
        if is_secret(&name) {
            continue;
        }
        let same = compiled
            .headers
            .iter()
            .any(|h: &Header| h.name == name && h.value == value);
        if !same {
            prompt.headers.insert(name, Value::String(value));
        }
    }
    Ok(())
}
