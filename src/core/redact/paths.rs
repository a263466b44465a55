//! Where a redacted rendering of a JSON value differs from the value: the paths of the members
//! the policy replaced, for telling the user what a printed document no longer holds.

use serde_json::Value;

/// The paths (`body_overrides.password`, `input[0].content[1].text`, `headers["x-a b"]`) at
/// which `shown` (the redacted rendering of `original`, parsed back) differs from `original`,
/// in document order. A member whose whole value changed is named once, not its children.
pub fn redacted_paths(original: &Value, shown: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk(original, shown, &mut String::new(), &mut out);
    out
}

fn walk(original: &Value, shown: &Value, path: &mut String, out: &mut Vec<String>) {
    match (original, shown) {
        (Value::Object(a), Value::Object(b)) if a.len() == b.len() => {
            for (key, value) in a {
                let Some(other) = b.get(key) else {
                    out.push(path_or_root(path));
                    return;
                };
                let len = path.len();
                push_key(path, key);
                walk(value, other, path, out);
                path.truncate(len);
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (value, other)) in a.iter().zip(b).enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                walk(value, other, path, out);
                path.truncate(len);
            }
        }
        _ if original != shown => out.push(path_or_root(path)),
        _ => {}
    }
}

fn path_or_root(path: &str) -> String {
    match path.is_empty() {
        true => "(the whole document)".to_string(),
        false => path.to_string(),
    }
}

fn push_key(path: &mut String, key: &str) {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if plain {
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(key);
    } else {
        path.push('[');
        path.push_str(&Value::String(key.to_string()).to_string());
        path.push(']');
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::redacted_paths;

    #[test]
    fn names_each_changed_member_once() {
        let original = json!({
            "model": "m",
            "headers": {"x-auth-token": "t", "accept": "a"},
            "body_overrides": {"password": "p", "credentials": {"pw": "q", "n": 1}},
            "input": [{"content": [{"text": "hi"}, {"text": "sk-abcdefgh12345"}]}],
            "odd key": "v",
        });
        let shown = json!({
            "model": "m",
            "headers": {"x-auth-token": "<redacted>", "accept": "a"},
            "body_overrides": {"password": "<redacted>", "credentials": {"pw": "<redacted>", "n": "<redacted>"}},
            "input": [{"content": [{"text": "hi"}, {"text": "sk-<redacted>"}]}],
            "odd key": "<redacted>",
        });
        assert_eq!(
            redacted_paths(&original, &shown),
            vec![
                "headers.x-auth-token",
                "body_overrides.password",
                "body_overrides.credentials.pw",
                "body_overrides.credentials.n",
                "input[0].content[1].text",
                "[\"odd key\"]",
            ]
        );
        assert_eq!(redacted_paths(&original, &original), Vec::<String>::new());
        assert_eq!(
            redacted_paths(&json!("a"), &json!("b")),
            vec!["(the whole document)"]
        );
    }
}
