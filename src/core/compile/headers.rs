//! HTTP request headers (§4) in the order Codex adds them, with secret values always redacted, and
//! the zstd eligibility rule.

use serde::Serialize;

use crate::core::error::PromptError;
use crate::core::prompt::{AuthMode, Prompt};
use crate::core::provider::Provider;
use crate::core::rules::CompileRules;

/// What a secret header shows instead of its value.
pub const REDACTED: &str = "<redacted>";

/// One request header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Header {
    /// Lower-case name.
    pub name: String,
    /// Value as shown (secrets redacted).
    pub value: String,
    /// For a secret header: the environment variable whose value replaces [`REDACTED`] in
    /// `value` at send time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_env: Option<String>,
}

impl Header {
    fn plain(name: &str, value: impl Into<String>) -> Self {
        Self {
            name: name.to_string(),
            value: value.into(),
            secret_env: None,
        }
    }
}

/// zstd applies iff the feature is on, auth is ChatGPT-style, and the provider is OpenAI (§4).
pub fn uses_zstd(prompt: &Prompt, provider: &Provider, rules: &CompileRules) -> bool {
    rules.request_compression && prompt.compile.auth == AuthMode::Chatgpt && provider.is_openai()
}

/// Builds the header list.
pub fn build_headers(
    prompt: &Prompt,
    provider: &Provider,
    lite: bool,
    rules: &CompileRules,
    compress: bool,
) -> Result<Vec<Header>, PromptError> {
    let mut headers: Vec<Header> = Vec::new();
    let mut set = |name: &str, value: String| {
        let name = name.to_ascii_lowercase();
        match headers.iter_mut().find(|h| h.name == name) {
            Some(existing) => existing.value = value,
            None => headers.push(Header::plain(&name, value)),
        }
    };
    if provider.is_openai() {
        // The built-in provider's static header carries the client version (§4).
        set("version", rules.client_version.clone());
    }
    for (name, value) in &provider.headers {
        set(name, value.clone());
    }
    for (name, value) in &prompt.headers {
        set(name, value.as_str().unwrap_or_default().to_string());
    }
    if lite {
        set("x-openai-internal-codex-responses-lite", "true".to_string());
    }
    if let Some(thread) = &prompt.thread_id {
        set("x-client-request-id", thread.clone());
        set("session-id", thread.clone());
        set("thread-id", thread.clone());
    }
    set("accept", "text/event-stream".to_string());
    if !headers.iter().any(|h| h.name == "content-type") {
        headers.push(Header::plain("content-type", "application/json"));
    }
    if compress {
        if headers.iter().any(|h| h.name == "content-encoding") {
            return Err(PromptError::invalid(
                "headers.content-encoding",
                "a Content-Encoding is already set, but the request must be zstd-compressed",
            ));
        }
        headers.push(Header::plain("content-encoding", "zstd"));
    }
    for (name, env) in &provider.env_headers {
        let name = name.to_ascii_lowercase();
        headers.retain(|h| h.name != name);
        headers.push(Header {
            name,
            value: REDACTED.to_string(),
            secret_env: Some(env.clone()),
        });
    }
    if let Some(env) = &provider.env_key {
        headers.push(Header {
            name: "authorization".to_string(),
            value: format!("Bearer {REDACTED}"),
            secret_env: Some(env.clone()),
        });
    }
    let originator = "codex_cli_rs";
    if !headers.iter().any(|h| h.name == "originator") {
        headers.push(Header::plain("originator", originator));
    }
    if !headers.iter().any(|h| h.name == "user-agent") {
        headers.push(Header::plain(
            "user-agent",
            format!("{originator}/{}", rules.client_version),
        ));
    }
    Ok(headers)
}
