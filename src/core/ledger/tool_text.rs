//! A tool definition as the server renders it (WIRE_SPEC §19.2, after the harmony format): a
//! function tool is a TypeScript-like declaration — its description as a comment, its name, and
//! its parameters **in the JSON schema's property order**, each with its description, `?` when
//! optional, its type (enums as unions of literals, arrays, nested objects) and its default;
//! a custom (freeform) tool is its description, name and grammar; any other tool (web search,
//! local shell, …) is its JSON with sorted keys. Pure.

use serde_json::Value;

/// Deepest schema nesting rendered; deeper parts are rendered as `any`.
const MAX_DEPTH: usize = 32;

/// The rendering of one tool definition (`prefix` is the namespace path of a tool inside a
/// namespace, empty at the top level).
pub fn render_tool(tool: &Value, prefix: &str) -> String {
    let text = |key: &str| tool.get(key).and_then(Value::as_str).unwrap_or("");
    let name = format!("{prefix}{}", text("name"));
    let mut out = String::new();
    match tool.get("type").and_then(Value::as_str) {
        Some("function") | None
            if tool.get("parameters").is_some() || tool.get("name").is_some() =>
        {
            comment(&mut out, text("description"), "");
            out.push_str("type ");
            out.push_str(&name);
            out.push_str(" = (");
            match tool.get("parameters") {
                Some(params) if has_properties(params) => {
                    out.push_str("_: ");
                    schema_type(&mut out, params, 0);
                }
                _ => {}
            }
            out.push_str(") => any;\n");
        }
        Some("custom") => {
            comment(&mut out, text("description"), "");
            out.push_str("type ");
            out.push_str(&name);
            out.push_str(" = (FREEFORM) => any;\n");
            if let Some(format) = tool.get("format") {
                let field = |key: &str| format.get(key).and_then(Value::as_str).unwrap_or("");
                if !field("definition").is_empty() {
                    out.push_str("// format: ");
                    out.push_str(field("syntax"));
                    out.push('\n');
                    out.push_str(field("definition"));
                    out.push('\n');
                }
            }
        }
        _ => {
            out.push_str(&crate::core::prefix::canon::canonical_json(tool));
            out.push('\n');
        }
    }
    out
}

fn has_properties(schema: &Value) -> bool {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty())
}

/// `// line` for each line of `text`, indented by `indent`.
fn comment(out: &mut String, text: &str, indent: &str) {
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        out.push_str(indent);
        out.push_str("// ");
        out.push_str(line);
        out.push('\n');
    }
}

/// The TypeScript-like type of a JSON schema.
fn schema_type(out: &mut String, schema: &Value, depth: usize) {
    if depth > MAX_DEPTH {
        out.push_str("any");
        return;
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let literals: Vec<String> = values
            .iter()
            .map(|v| serde_json::to_string(v).unwrap_or_default())
            .collect();
        out.push_str(&literals.join(" | "));
        return;
    }
    if let Some(value) = schema.get("const") {
        out.push_str(&serde_json::to_string(value).unwrap_or_default());
        return;
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(options) = schema.get(key).and_then(Value::as_array) {
            for (i, option) in options.iter().enumerate() {
                if i > 0 {
                    out.push_str(" | ");
                }
                schema_type(out, option, depth + 1);
            }
            return;
        }
    }
    let ty = match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(types)) => types.iter().filter_map(Value::as_str).collect(),
        _ if schema.get("properties").is_some() => vec!["object"],
        _ => vec![],
    };
    if ty.is_empty() {
        out.push_str("any");
        return;
    }
    for (i, t) in ty.iter().enumerate() {
        if i > 0 {
            out.push_str(" | ");
        }
        match *t {
            "string" => out.push_str("string"),
            "number" | "integer" => out.push_str("number"),
            "boolean" => out.push_str("boolean"),
            "null" => out.push_str("null"),
            "array" => match schema.get("items") {
                Some(items) if items.is_object() => {
                    out.push_str("Array<");
                    schema_type(out, items, depth + 1);
                    out.push('>');
                }
                _ => out.push_str("any[]"),
            },
            "object" => object_type(out, schema, depth),
            other => out.push_str(other),
        }
    }
}

/// `{` one line per property in schema order `}`.
fn object_type(out: &mut String, schema: &Value, depth: usize) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        out.push_str("object");
        return;
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    out.push_str("{\n");
    for (name, property) in properties {
        let description = property
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("");
        comment(out, description, "");
        out.push_str(name);
        if !required.contains(&name.as_str()) {
            out.push('?');
        }
        out.push_str(": ");
        schema_type(out, property, depth + 1);
        out.push(',');
        if let Some(default) = property.get("default") {
            out.push_str(" // default: ");
            out.push_str(&serde_json::to_string(default).unwrap_or_default());
        }
        out.push('\n');
    }
    out.push('}');
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_function_tool_renders_its_parameters_in_schema_order() {
        let tool = json!({"type": "function", "name": "get_weather",
        "description": "Weather now.\nIn one city.",
        "strict": false,
        "parameters": {"type": "object", "required": ["city"], "properties": {
            "unit": {"type": "string", "enum": ["c", "f"], "default": "c"},
            "city": {"type": "string", "description": "City name"},
            "days": {"type": "array", "items": {"type": "integer"}},
            "opts": {"type": "object", "properties": {"x": {"type": ["string", "null"]}}}
        }}});
        assert_eq!(
            render_tool(&tool, ""),
            "// Weather now.\n// In one city.\ntype get_weather = (_: {\nunit?: \"c\" | \"f\", // default: \"c\"\n// City name\ncity: string,\ndays?: Array<number>,\nopts?: {\nx?: string | null,\n},\n}) => any;\n"
        );
        // The same schema with its properties in another order is another rendering.
        let mut reordered = tool.clone();
        reordered["parameters"]["properties"] = json!({
            "city": {"type": "string", "description": "City name"},
            "unit": {"type": "string", "enum": ["c", "f"], "default": "c"},
            "days": {"type": "array", "items": {"type": "integer"}},
            "opts": {"type": "object", "properties": {"x": {"type": ["string", "null"]}}}
        });
        assert_ne!(render_tool(&reordered, ""), render_tool(&tool, ""));
        // Key order of the tool object itself is not rendered.
        let keys_moved = json!({"parameters": tool["parameters"], "description": tool["description"],
            "name": "get_weather", "strict": false, "type": "function"});
        assert_eq!(render_tool(&keys_moved, ""), render_tool(&tool, ""));
    }

    #[test]
    fn custom_and_other_tools() {
        let custom = json!({"type": "custom", "name": "exec", "description": "Run code.",
            "format": {"type": "grammar", "syntax": "lark", "definition": "start: /.+/"}});
        assert_eq!(
            render_tool(&custom, "functions."),
            "// Run code.\ntype functions.exec = (FREEFORM) => any;\n// format: lark\nstart: /.+/\n"
        );
        let search = json!({"type": "web_search", "external_web_access": false});
        assert_eq!(
            render_tool(&search, ""),
            "{\"external_web_access\":false,\"type\":\"web_search\"}\n"
        );
        let bare = json!({"type": "function", "name": "now", "parameters": {"type": "object", "properties": {}}});
        assert_eq!(render_tool(&bare, ""), "type now = () => any;\n");
    }
}
