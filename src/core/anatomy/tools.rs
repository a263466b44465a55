//! The tools of a session: each offered tool once (by its rendered name), how many requests
//! offer it, and whether the session ever calls it — a call in any request's input, or in the
//! recorded output of any response (the last turn's calls are in no later input).

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::Tool;
use crate::core::ledger::Rendered;
use crate::core::ledger::render::Kind;
use crate::core::prefix::Session;

/// Tools by name, in order of first appearance.
#[derive(Debug, Default)]
pub(super) struct Catalog {
    names: Vec<String>,
    ids: HashMap<String, u32>,
    offered: Vec<usize>,
    called: Vec<bool>,
}

impl Catalog {
    /// The id of tool `name`, added when new.
    pub(super) fn id(&mut self, name: &str) -> u32 {
        if let Some(id) = self.ids.get(name) {
            return *id;
        }
        let id = u32::try_from(self.names.len()).unwrap_or(u32::MAX);
        self.names.push(name.to_string());
        self.ids.insert(name.to_string(), id);
        self.offered.push(0);
        self.called.push(false);
        id
    }

    /// Counts one request offering tool `id`.
    pub(super) fn offered(&mut self, id: u32) {
        if let Some(n) = self.offered.get_mut(id as usize) {
            *n += 1;
        }
    }

    /// Marks the tools the session calls.
    pub(super) fn mark_called(&mut self, session: &Session, rendered: &Rendered) {
        let called = called_names(session, rendered);
        for (k, name) in self.names.iter().enumerate() {
            let leaf = name.rsplit('.').next().unwrap_or(name);
            self.called[k] = called.contains(leaf) || called.contains(name.as_str());
        }
        // A namespace's own line is called when one of its tools is.
        for k in 0..self.names.len() {
            if self.called[k] {
                continue;
            }
            let prefix = format!("{}.", self.names[k]);
            self.called[k] = self
                .names
                .iter()
                .zip(&self.called)
                .any(|(n, c)| *c && n.starts_with(&prefix));
        }
    }

    /// The tools.
    pub(super) fn into_tools(self) -> Vec<Tool> {
        self.names
            .into_iter()
            .zip(self.called)
            .zip(self.offered)
            .map(|((name, called), offered_in)| Tool {
                name,
                called,
                offered_in,
            })
            .collect()
    }
}

/// Names of every tool the session calls.
fn called_names(session: &Session, rendered: &Rendered) -> HashSet<String> {
    let mut out = HashSet::new();
    for segment in rendered.segments.iter() {
        if segment.kind == Kind::Call
            && let Some(name) = segment.label.as_deref()
        {
            out.insert(name.to_string());
        }
    }
    for request in session.requests() {
        for id in &request.meta.output {
            if let Some(name) = call_name(session.pool().value(*id)) {
                out.insert(name);
            }
        }
    }
    out
}

/// The tool an output item calls (`function_call` and `custom_tool_call`: its name; another
/// `*_call`: its type without `_call`).
pub(super) fn call_name(item: &Value) -> Option<String> {
    let ty = item.get("type").and_then(Value::as_str)?;
    match ty {
        "function_call" | "custom_tool_call" => {
            item.get("name").and_then(Value::as_str).map(str::to_string)
        }
        t if t.ends_with("_call") => Some(t.trim_end_matches("_call").to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn calls_name_their_tool() {
        let got: Vec<Option<String>> = [
            json!({"type": "function_call", "name": "exec_command", "arguments": "{}"}),
            json!({"type": "custom_tool_call", "name": "apply_patch", "input": ""}),
            json!({"type": "web_search_call", "action": {}}),
            json!({"type": "function_call_output", "output": "x"}),
            json!({"type": "message", "role": "assistant"}),
        ]
        .iter()
        .map(call_name)
        .collect();
        assert_eq!(
            got,
            vec![
                Some("exec_command".into()),
                Some("apply_patch".into()),
                Some("web_search".into()),
                None,
                None
            ]
        );
    }
}
