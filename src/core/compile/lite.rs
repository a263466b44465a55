//! Responses Lite specifics (§6): the tool list as it travels in `additional_tools` (hosted tools
//! left out, plain tools folded into one namespace when the rules say so), its inverse for body
//! import, and the deterministic ids of synthesized items (§5.4, C).

use uuid::Uuid;

use super::CompileNote;
use crate::core::json::JsonMap;
use crate::core::tools::{NamespaceTool, ToolSpec};

/// The tools as Lite sends them: hosted tools dropped (with a note), and — when `fold_into` is
/// set — every `function`/`custom` tool gathered into one namespace at the first one's position.
pub fn lite_tools(
    tools: &[ToolSpec],
    fold_into: Option<&str>,
    notes: &mut Vec<CompileNote>,
) -> Vec<ToolSpec> {
    let mut out: Vec<ToolSpec> = Vec::with_capacity(tools.len());
    let mut folded: Option<(usize, Vec<ToolSpec>)> = None;
    for (i, tool) in tools.iter().enumerate() {
        if tool.is_hosted() {
            notes.push(CompileNote::new(
                format!("tools[{i}]"),
                format!(
                    "{} left out: hosted tools are not offered to Lite models",
                    tool.type_name()
                ),
            ));
            continue;
        }
        let foldable = matches!(tool, ToolSpec::Function(_) | ToolSpec::Custom(_));
        match (fold_into, foldable) {
            (Some(_), true) => match &mut folded {
                Some((_, members)) => members.push(tool.clone()),
                None => {
                    folded = Some((out.len(), vec![tool.clone()]));
                    // Placeholder replaced below, keeps the namespace at the first tool's place.
                    out.push(ToolSpec::LocalShell);
                }
            },
            _ => out.push(tool.clone()),
        }
    }
    if let (Some(name), Some((at, members))) = (fold_into, folded) {
        out[at] = ToolSpec::Namespace(NamespaceTool {
            name: name.to_string(),
            description: String::new(),
            tools: members,
            extra: JsonMap::new(),
        });
    }
    out
}

/// Inverse of the fold: splices the members of the namespace called `name` (with an empty
/// description) back in its place, so the prompt can be viewed as standard.
pub fn unfold_tools(tools: Vec<ToolSpec>, name: &str) -> Vec<ToolSpec> {
    let mut out = Vec::with_capacity(tools.len());
    let mut done = false;
    for tool in tools {
        match tool {
            ToolSpec::Namespace(ns)
                if !done && ns.name == name && ns.description.is_empty() && ns.extra.is_empty() =>
            {
                done = true;
                out.extend(ns.tools);
            }
            other => out.push(other),
        }
    }
    out
}

/// Namespace of synthesized ids: uuid v5 of the thread id under the OID namespace.
fn thread_namespace(thread_id: &str) -> Uuid {
    Uuid::new_v5(&Uuid::NAMESPACE_OID, thread_id.as_bytes())
}

/// `at_<uuid v5(thread namespace, tools JSON)>`.
pub fn additional_tools_id(thread_id: &str, tools_json: &[u8]) -> String {
    format!(
        "at_{}",
        Uuid::new_v5(&thread_namespace(thread_id), tools_json).hyphenated()
    )
}

/// `msg_<uuid v5(thread namespace, instructions text)>`.
pub fn instructions_message_id(thread_id: &str, text: &str) -> String {
    format!(
        "msg_{}",
        Uuid::new_v5(&thread_namespace(thread_id), text.as_bytes()).hyphenated()
    )
}
