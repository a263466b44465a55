//! Which Codex CLI release a captured body came from. The 0.169 and 0.171 bodies have the same
//! shape (key order, prefix, Lite prefix), so the evidence is what changed between them: the
//! client version in a captured `user-agent`, a tool description that was reworded, and models
//! that only the newer catalog has. Without evidence the older preset is kept (its body rules
//! are the same, and bodies imported before 0.171 existed keep importing as they did).

use serde_json::Value;

use crate::core::json::JsonMap;
use crate::core::rules::CompileRules;

/// `exec_command`'s `login` parameter description in each release (a reworded description is
/// a reliable marker: tool specs are compiled into the client).
const LOGIN_DESCRIPTIONS: [(&str, &str); 2] = [
    (
        "codex-0.169",
        "True runs the shell with -l/-i semantics; false disables them. Defaults to true.",
    ),
    (
        "codex-0.171",
        "Request login-shell startup. Omit to inherit.",
    ),
];

/// Model slugs first offered by Codex CLI 0.171 (its `codex debug models`).
const MODELS_NEW_IN_0_171: [&str; 2] = ["gpt-6.2-sol", "gpt-6.2-astra"];

/// The Codex presets in the order import should try them, most likely first. `user_agent` is a
/// captured `User-Agent` value (`codex_exec/0.171.0 (…)`), when headers were given.
pub fn codex_presets(body: &JsonMap, user_agent: Option<&str>) -> [CompileRules; 2] {
    let newer = match user_agent.and_then(client_version) {
        Some(version) => version.starts_with("0.171."),
        None => match login_marker(body) {
            Some(preset) => preset == "codex-0.171",
            None => body
                .get("model")
                .and_then(Value::as_str)
                .is_some_and(|m| MODELS_NEW_IN_0_171.iter().any(|s| m.starts_with(s))),
        },
    };
    if newer {
        [CompileRules::codex_0_171(), CompileRules::codex_0_169()]
    } else {
        [CompileRules::codex_0_169(), CompileRules::codex_0_171()]
    }
}

/// The version in `<originator>/<version> …`.
pub fn client_version(user_agent: &str) -> Option<&str> {
    let (_, rest) = user_agent.split_once('/')?;
    rest.split(' ').next().filter(|v| !v.is_empty())
}

/// The preset whose `exec_command.login` description the body's tools carry (top-level tools
/// or the Lite `additional_tools`, namespaces included).
fn login_marker(body: &JsonMap) -> Option<&'static str> {
    let mut stack: Vec<&Value> = Vec::new();
    if let Some(Value::Array(tools)) = body.get("tools") {
        stack.extend(tools);
    }
    if let Some(Value::Array(input)) = body.get("input")
        && let Some(Value::Object(first)) = input.first()
        && first.get("type").and_then(Value::as_str) == Some("additional_tools")
        && let Some(Value::Array(tools)) = first.get("tools")
    {
        stack.extend(tools);
    }
    while let Some(tool) = stack.pop() {
        if let Some(Value::Array(members)) = tool.get("tools") {
            stack.extend(members);
        }
        if tool.get("name").and_then(Value::as_str) != Some("exec_command") {
            continue;
        }
        let description = tool
            .pointer("/parameters/properties/login/description")
            .and_then(Value::as_str)?;
        return LOGIN_DESCRIPTIONS
            .iter()
            .find(|(_, text)| *text == description)
            .map(|(preset, _)| *preset);
    }
    None
}
