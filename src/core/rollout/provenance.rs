//! What of an imported rollout request was recorded verbatim and what was reconstructed, as
//! lines of text for `sessions show` and the session browser. Reads the `extra.rollout` object
//! the store keeps with each imported request (see `store::rollout`); pure.

use serde_json::Value;

/// At most this many unknown lines are named one by one.
const UNKNOWN_SHOWN: usize = 10;

/// True when `extra_rollout` (a request's `extra.rollout`) is there to describe.
pub fn is_rollout(extra_rollout: Option<&Value>) -> bool {
    extra_rollout.is_some_and(Value::is_object)
}

/// The lines that say where one imported request came from: which input items and body fields
/// are as the rollout recorded them, which were reconstructed (and by what), what the rollout
/// does not record, and what the compiler's item rules changed.
pub fn request_lines(rollout: &Value) -> Vec<String> {
    let text = |key: &str| rollout.get(key).and_then(Value::as_str);
    let list = |key: &str| -> Vec<String> {
        rollout
            .get(key)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| match v {
                        Value::String(s) => Some(s.clone()),
                        Value::Number(n) => Some(n.to_string()),
                        _ => None,
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let compaction = text("kind") == Some("compaction");
    let rules = text("rules").unwrap_or("?");
    let mut lines = Vec::new();
    let mut origin = format!(
        "Codex rollout {} line {}",
        text("file").unwrap_or("?"),
        rollout
            .get("line")
            .and_then(Value::as_u64)
            .map_or_else(|| "?".to_string(), |n| n.to_string())
    );
    if let Some(version) = text("cli_version") {
        origin.push_str(&format!(" (Codex {version})"));
    }
    origin.push_str(&format!(
        ", {} call, rebuilt under rules {rules}",
        if compaction { "compaction" } else { "turn" }
    ));
    lines.push(origin);

    let rebuilt: Vec<usize> = rollout
        .get("reconstructed_items")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_u64)
                .filter_map(|n| usize::try_from(n).ok())
                .collect()
        })
        .unwrap_or_default();
    let total = rollout
        .get("input_items")
        .and_then(Value::as_u64)
        .and_then(|n| usize::try_from(n).ok());
    let verbatim = match total {
        Some(total) => {
            let positions: Vec<usize> = (0..total).filter(|i| !rebuilt.contains(i)).collect();
            if positions.is_empty() {
                "none".to_string()
            } else {
                format!("input {}", ranges(&positions))
            }
        }
        None => "the other input items".to_string(),
    };
    let usage = match text("usage_source") {
        Some("token_usage_record") => "usage (token_usage_record)",
        Some("token_count") => "usage (token_count event)",
        _ => "usage (not recorded)",
    };
    lines.push(format!(
        "recorded verbatim: {verbatim} (rollout items), model (turn_context), {usage}"
    ));
    let last = rebuilt.iter().copied().max();
    let items: Vec<String> = rebuilt
        .iter()
        .map(|&i| {
            if compaction && Some(i) == last {
                format!("input[{i}] compaction prompt (Codex's fixed text)")
            } else {
                format!("input[{i}] base-instructions message (session_meta, compiled id)")
            }
        })
        .collect();
    lines.push(format!(
        "reconstructed items: {}",
        if items.is_empty() {
            "none".to_string()
        } else {
            items.join(", ")
        }
    ));
    let fields = list("reconstructed_fields");
    lines.push(format!(
        "reconstructed fields: {} (rules {rules} with the model catalog)",
        if fields.is_empty() {
            "none".to_string()
        } else {
            fields.join(", ")
        }
    ));
    for rule in list("item_rules") {
        lines.push(format!("item rule: {rule}"));
    }
    let missing = list("not_recorded");
    lines.push(format!(
        "not recorded: {}",
        if missing.is_empty() {
            "nothing".to_string()
        } else {
            missing.join(", ")
        }
    ));
    lines
}

/// The lines about the whole file, from the first request's `extra.rollout`: unknown lines kept
/// and a truncated last line. Empty when that request carries neither key (not the first).
pub fn file_lines(rollout: &Value) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(unknown) = rollout.get("unknown_lines").and_then(Value::as_array) {
        if unknown.is_empty() {
            lines.push("unknown lines: none".to_string());
        } else {
            lines.push(format!(
                "unknown lines kept: {} (stored with the first request)",
                unknown.len()
            ));
            for u in unknown.iter().take(UNKNOWN_SHOWN) {
                let line = u.get("line").and_then(Value::as_u64).unwrap_or(0);
                let line_type = u.get("line_type").and_then(Value::as_str).unwrap_or("?");
                lines.push(match u.get("payload_type").and_then(Value::as_str) {
                    Some(payload) => format!("  line {line}: {line_type} / {payload}"),
                    None => format!("  line {line}: {line_type}"),
                });
            }
            if unknown.len() > UNKNOWN_SHOWN {
                lines.push(format!("  … and {} more", unknown.len() - UNKNOWN_SHOWN));
            }
        }
    }
    match rollout.get("truncated_last_line") {
        Some(Value::Object(t)) => {
            let line = t.get("line").and_then(Value::as_u64).unwrap_or(0);
            let bytes = t.get("bytes").and_then(Value::as_u64).unwrap_or(0);
            lines.push(format!(
                "truncated: line {line} ({bytes} bytes) is incomplete (the session was still being written); imported what is complete"
            ));
        }
        Some(Value::Null) => lines.push("last line: complete".to_string()),
        _ => {}
    }
    lines
}

/// `0-3, 5, 7-9`.
fn ranges(positions: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut iter = positions.iter().copied().peekable();
    while let Some(start) = iter.next() {
        let mut end = start;
        while iter.peek() == Some(&(end + 1)) {
            end += 1;
            iter.next();
        }
        out.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
    }
    out.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ranges_join_runs() {
        assert_eq!(ranges(&[1, 2, 3, 5, 7, 8]), "1-3, 5, 7-8");
        assert_eq!(ranges(&[]), "");
    }

    #[test]
    fn a_compaction_request_names_its_prompt() {
        let rollout = json!({
            "file": "r.jsonl", "line": 9, "cli_version": "0.169.0", "rules": "codex-0.169",
            "kind": "compaction", "usage_source": "token_count", "input_items": 4,
            "reconstructed_items": [0, 3], "reconstructed_fields": ["include", "stream"],
            "not_recorded": ["client_metadata"], "item_rules": []
        });
        assert_eq!(
            request_lines(&rollout),
            vec![
                "Codex rollout r.jsonl line 9 (Codex 0.169.0), compaction call, rebuilt under rules codex-0.169",
                "recorded verbatim: input 1-2 (rollout items), model (turn_context), usage (token_count event)",
                "reconstructed items: input[0] base-instructions message (session_meta, compiled id), input[3] compaction prompt (Codex's fixed text)",
                "reconstructed fields: include, stream (rules codex-0.169 with the model catalog)",
                "not recorded: client_metadata",
            ]
        );
        assert_eq!(file_lines(&rollout), Vec::<String>::new());
    }
}
