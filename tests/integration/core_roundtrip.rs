//! Round trips `import-body` → `compile`: every captured body (our own in `tests/data/bodies/`
//! and, when present, the real Codex CLI 0.169 captures in `../shared/fixtures/`) imports to a
//! Prompt that compiles back to the same JSON value — and, for Codex bodies, the same key order
//! with no overrides.

use crate::support::compile as compile_support;
use crate::support::shared;

use compile_support::compile_recorded;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use promptwire::core::compile::ResolvedDialect;
use promptwire::core::import::import_body;
use promptwire::core::items::ResponseItem;
use promptwire::core::models::ModelCatalog;
use promptwire::core::prompt::{Dialect, Prompt};
use serde_json::Value;

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/bodies")
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("read fixture");
    serde_json::from_str(&text).expect("fixture is JSON")
}

fn keys(v: &Value) -> Vec<String> {
    v.as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

/// Imports `body`, compiles it back, and checks the value; returns the import outcome.
fn round_trip(path: &Path) -> promptwire::core::import::ImportOutcome {
    let body = read_json(path);
    let outcome = import_body(&body, &ModelCatalog::bundled()).expect("import");
    let compiled = compile_recorded(&outcome.prompt);
    let back = Value::Object((*compiled.body).clone());
    assert_eq!(back, body, "{}", path.display());
    // The exact bytes parse to the same value too.
    let from_bytes: Value = serde_json::from_slice(&compiled.body_json).expect("body bytes");
    assert_eq!(from_bytes, body);
    outcome
}

fn typed_items(prompt: &Prompt) -> usize {
    prompt
        .input
        .iter()
        .filter(|i| !matches!(i, ResponseItem::Other(_)))
        .count()
}

#[test]
fn own_codex_shaped_bodies_round_trip_exactly_with_key_order() {
    for name in [
        "seed-azure-standard.json",
        "seed-lite-openai.json",
        "codex-0169-standard-history.json",
        "codex-0169-lite-namespaces.json",
    ] {
        let path = data_dir().join(name);
        let outcome = round_trip(&path);
        assert_eq!(outcome.overridden, Vec::<String>::new(), "{name}");
        let compiled = compile_recorded(&outcome.prompt);
        assert_eq!(
            keys(&Value::Object((*compiled.body).clone())),
            keys(&read_json(&path)),
            "{name}: key order"
        );
    }
}

#[test]
fn detection_records_rules_dialect_and_provider() {
    let cases = [
        (
            "seed-azure-standard.json",
            "seed",
            Dialect::Standard,
            "azure",
        ),
        ("seed-lite-openai.json", "seed", Dialect::Lite, "openai"),
        (
            "codex-0169-standard-history.json",
            "codex-0.169",
            Dialect::Standard,
            "compatible",
        ),
        (
            "codex-0169-lite-namespaces.json",
            "codex-0.169",
            Dialect::Lite,
            "compatible",
        ),
    ];
    for (name, rules, dialect, provider) in cases {
        let outcome = import_body(&read_json(&data_dir().join(name)), &ModelCatalog::bundled())
            .expect("import");
        let target = &outcome.prompt.compile;
        assert_eq!(
            (target.rules.as_str(), target.dialect, target.provider.id()),
            (rules, dialect, provider),
            "{name}"
        );
    }
}

#[test]
fn lite_prefix_is_lifted_into_tools_and_instructions() {
    let outcome = round_trip(&data_dir().join("codex-0169-lite-namespaces.json"));
    let prompt = outcome.prompt;
    assert_eq!(
        prompt.base_instructions,
        "You are Codex. Work in small steps."
    );
    // The `functions` namespace is unfolded; the tracker namespace stays a namespace.
    let names: Vec<(&str, Option<&str>)> = prompt
        .tools
        .iter()
        .map(|t| (t.type_name(), t.name()))
        .collect();
    assert_eq!(
        names,
        vec![
            ("custom", Some("apply_patch")),
            ("function", Some("shell")),
            ("namespace", Some("mcp__tracker__")),
        ]
    );
    assert_eq!(prompt.input.len(), 1);
    assert_eq!(typed_items(&prompt), 1);

    // Viewed as standard: tools top-level, instructions as the developer message, no prefix.
    let mut standard = prompt.clone();
    standard.compile.dialect = Dialect::Standard;
    let compiled = compile_recorded(&standard);
    assert_eq!(compiled.dialect, ResolvedDialect::Standard);
    let body = Value::Object((*compiled.body).clone());
    assert_eq!(body["tools"].as_array().map(Vec::len), Some(3));
    assert_eq!(body["input"][0]["role"], "developer");
    assert_eq!(
        body["input"][0]["content"][0]["text"],
        "You are Codex. Work in small steps."
    );
    assert_eq!(body["input"][1]["type"], "message");
    assert_eq!(body["parallel_tool_calls"], Value::Bool(true));
    assert!(body["reasoning"].get("context").is_none());
}

#[test]
fn known_items_import_as_typed_items_and_unknown_ones_verbatim() {
    let outcome = round_trip(&data_dir().join("codex-0169-standard-history.json"));
    let kinds: Vec<&str> = outcome
        .prompt
        .input
        .iter()
        .map(|i| match i {
            ResponseItem::Other(_) => "other",
            other => other.type_name(),
        })
        .collect();
    assert_eq!(
        kinds,
        vec![
            "compaction",
            "message",
            "reasoning",
            "function_call",
            "function_call_output",
            "other",
            "message",
            "message",
        ]
    );
}

#[test]
fn non_codex_body_keeps_every_field_as_overrides() {
    let path = data_dir().join("sdk-app.json");
    let outcome = round_trip(&path);
    assert_eq!(
        outcome.overridden,
        vec![
            "temperature",
            "max_output_tokens",
            "previous_response_id",
            "tools",
            "tool_choice",
            "parallel_tool_calls",
            "reasoning",
            "store",
            "include",
        ]
    );
    assert_eq!(
        outcome.prompt.base_instructions,
        "Translate the user's text to French."
    );
}

#[test]
fn shared_codex_cli_captures_round_trip_exactly() {
    let Some(dir) = shared::shared_fixtures("codex-cli-0.169") else {
        return;
    };
    let bodies = shared::request_bodies(&dir);
    assert_eq!(
        bodies.len(),
        11,
        "the shared fixtures hold 11 request bodies"
    );
    for path in bodies {
        let outcome = round_trip(&path);
        assert_eq!(
            outcome.overridden,
            Vec::<String>::new(),
            "{}",
            path.display()
        );
        assert_eq!(outcome.prompt.compile.rules, "codex-0.169");
        let compiled = compile_recorded(&outcome.prompt);
        assert_eq!(
            keys(&Value::Object((*compiled.body).clone())),
            keys(&read_json(&path)),
            "{}: key order",
            path.display()
        );
        // Every item of a Codex capture is modelled (no verbatim fallbacks).
        assert_eq!(
            typed_items(&outcome.prompt),
            outcome.prompt.input.len(),
            "{}",
            path.display()
        );
    }
}
