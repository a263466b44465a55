//! HTTP request headers (§4) in the order the client adds them, with secret values always
//! redacted, and the zstd eligibility rule. Two styles, chosen by the rules: `seed` (WIRE_SPEC §4
//! as written) and `codex` (what Codex CLI 0.169/0.171 were captured sending: beta features,
//! window id, turn metadata, the Lite header, ids, accept, content type, auth, originator, the
//! full user agent, and 0.171's `accept-encoding`).

use serde::Serialize;
use serde_json::Value;

use super::client;
use crate::core::error::PromptError;
use crate::core::json::JsonMap;
use crate::core::prompt::{AuthMode, Prompt};
use crate::core::provider::Provider;
use crate::core::rules::{CompileRules, HeaderStyle};

/// What a secret header shows instead of its value.
pub use crate::core::redact::REDACTED;

/// One request header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Header {
    /// Lower-case name.
    pub name: String,
    /// Value as sent, except that a secret from an environment variable (`secret_env`) is
    /// `<redacted>` until send time; a static header's credential is here in clear, so show
    /// [`Header::shown_value`], never this.
    pub value: String,
    /// For a secret header: the environment variable whose value replaces [`REDACTED`] in
    /// `value` at send time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_env: Option<String>,
}

impl Header {
    /// The value as shown, stored or exported: [`Header::value`] with every credential
    /// redacted (a secret header from the API key variable is already `<redacted>`; a static
    /// `Bearer …`, cookie or `x-goog-api-key` header is redacted here). Never what is sent.
    pub fn shown_value(&self) -> String {
        crate::core::redact::redact_header(&self.name, &self.value)
    }

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

/// The facts about the compiled request that headers depend on.
pub struct HeaderFacts<'a> {
    /// Responses Lite.
    pub lite: bool,
    /// The body is zstd-compressed.
    pub compress: bool,
    /// The compiled body (turn metadata takes the effort from it).
    pub body: &'a JsonMap,
    /// The request is a compaction request (`request_kind: compaction`).
    pub compaction: bool,
    /// A unary request (`/responses/compact`), not a stream.
    pub unary: bool,
}

/// Headers in insertion order; setting an existing name replaces its value in place.
struct HeaderList(Vec<Header>);

impl HeaderList {
    fn set(&mut self, name: &str, value: impl Into<String>) {
        let name = name.to_ascii_lowercase();
        let value = value.into();
        match self.0.iter_mut().find(|h| h.name == name) {
            Some(existing) => existing.value = value,
            None => self.0.push(Header::plain(&name, value)),
        }
    }

    fn set_if_absent(&mut self, name: &str, value: impl Into<String>) {
        if !self.has(name) {
            self.0.push(Header::plain(name, value));
        }
    }

    fn has(&self, name: &str) -> bool {
        self.0.iter().any(|h| h.name == name)
    }

    fn secret(&mut self, name: &str, value: String, env: &str) {
        let name = name.to_ascii_lowercase();
        self.0.retain(|h| h.name != name);
        self.0.push(Header {
            name,
            value,
            secret_env: Some(env.to_string()),
        });
    }
}

/// A non-empty string value of the Prompt's `client_metadata`.
fn client_metadata_text<'a>(prompt: &'a Prompt, key: &str) -> Option<&'a str> {
    prompt
        .client_metadata
        .as_ref()?
        .get(key)?
        .as_str()
        .filter(|v| !v.trim().is_empty())
}

/// Builds the header list.
pub fn build_headers(
    prompt: &Prompt,
    provider: &Provider,
    rules: &CompileRules,
    facts: &HeaderFacts<'_>,
) -> Result<Vec<Header>, PromptError> {
    let codex = rules.header_style == HeaderStyle::Codex;
    let mut headers = HeaderList(Vec::new());
    if provider.is_openai() {
        // The built-in provider's static header carries the client version (§4).
        headers.set("version", rules.client_version.clone());
    }
    for (name, value) in &provider.headers {
        headers.set(name, value.clone());
    }
    let thread = prompt.thread_id.as_deref();
    if codex {
        if let Some(features) = client::beta_features(prompt, rules) {
            headers.set("x-codex-beta-features", features);
        }
        let window = client::window_id(prompt);
        if let Some(window) = &window {
            headers.set("x-codex-window-id", window.clone());
        }
        if let Some(meta) = client::turn_metadata(prompt, window.as_deref(), facts) {
            headers.set("x-codex-turn-metadata", meta);
        }
        // A subagent's thread names its parent and how it was spawned, as its
        // `client_metadata` does (Codex 0.171, captured).
        for name in ["x-codex-parent-thread-id", "x-openai-subagent"] {
            if let Some(value) = client_metadata_text(prompt, name) {
                headers.set(name, value);
            }
        }
    }
    for (name, value) in &prompt.headers {
        headers.set(name, value.as_str().unwrap_or_default());
    }
    if facts.lite {
        headers.set(super::LITE_HEADER, "true");
    }
    if let Some(thread) = thread {
        headers.set_if_absent("x-client-request-id", thread);
        // A subagent's session is its root's (`client_metadata.session_id`); a root's is its
        // own thread.
        let session = codex
            .then(|| client_metadata_text(prompt, "session_id"))
            .flatten()
            .unwrap_or(thread);
        headers.set_if_absent("session-id", session);
        headers.set_if_absent("thread-id", thread);
    }
    if !facts.unary {
        headers.set_if_absent("accept", "text/event-stream");
    }
    headers.set_if_absent("content-type", "application/json");
    if facts.compress {
        if headers.has("content-encoding") {
            return Err(PromptError::invalid(
                "headers.content-encoding",
                "a Content-Encoding is already set, but the request must be zstd-compressed",
            ));
        }
        headers.0.push(Header::plain("content-encoding", "zstd"));
    }
    for (name, env) in &provider.env_headers {
        headers.secret(name, REDACTED.to_string(), env);
    }
    if let Some(env) = &provider.env_key {
        headers.secret("authorization", format!("Bearer {REDACTED}"), env);
    }
    let originator = client::originator(prompt, rules);
    headers.set_if_absent("originator", originator);
    let user_agent = if codex {
        client::user_agent(prompt, rules)
    } else {
        format!("{originator}/{}", rules.client_version)
    };
    headers.set_if_absent("user-agent", user_agent);
    if let Some(encoding) = &rules.accept_encoding {
        headers.set_if_absent("accept-encoding", encoding.clone());
    }
    Ok(headers.0)
}

/// The effort the body sends (`reasoning.effort`), for the turn metadata.
pub fn body_effort(body: &JsonMap) -> Option<&str> {
    body.get("reasoning")
        .and_then(|r| r.get("effort"))
        .and_then(Value::as_str)
}
