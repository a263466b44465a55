//! Codex CLI 0.171: the `codex-0.171` preset, import detecting it, the bundled catalog's 0.171
//! models (auto picks Lite), and exact round trips (import → compile, same bytes) of the shared
//! 0.171 captures (`../shared/fixtures/codex-cli-0.171/`) and of our own captures of the real
//! CLI (`tests/data/codex-0.171/`).

use crate::support::compile as compile_support;
use crate::support::shared;

use compile_support::compile_recorded;
use std::path::Path;

use pretty_assertions::assert_eq;
use promptwire::core::compile::{ResolvedDialect, compile};
use promptwire::core::import::{CapturedHeaders, import_body, import_request};
use promptwire::core::items::ResponseItem;
use promptwire::core::models::ModelCatalog;
use promptwire::core::prompt::{Dialect, Prompt};
use promptwire::core::provider::{Provider, ProviderKind};
use promptwire::core::rules::CompileRules;
use serde_json::{Value, json};

fn read_bytes(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The exact bytes the client sent: the file itself when it is compact, else (a capture saved
/// pretty-printed) its value written compactly, keys in file order.
fn wire_bytes(path: &Path) -> Vec<u8> {
    let raw = read_bytes(path);
    let value: Value = serde_json::from_slice(&raw).expect("fixture is JSON");
    let compact = serde_json::to_vec(&value).expect("serialize");
    if compact == raw { raw } else { compact }
}

/// Imports a captured body and checks that it compiles back to the same bytes with the preset
/// `preset`, nothing kept as an override and every item typed.
fn assert_round_trip(path: &Path, preset: &str) -> Prompt {
    let bytes = wire_bytes(path);
    let body: Value = serde_json::from_slice(&bytes).expect("JSON");
    let outcome = import_body(&body, &ModelCatalog::bundled()).expect("import");
    let name = path.display().to_string();
    assert_eq!(outcome.overridden, Vec::<String>::new(), "{name}");
    assert_eq!(outcome.prompt.compile.rules, preset, "{name}");
    let typed = outcome
        .prompt
        .input
        .iter()
        .filter(|i| !matches!(i, ResponseItem::Other(_)))
        .count();
    assert_eq!(typed, outcome.prompt.input.len(), "{name}: verbatim items");
    let compiled = compile_recorded(&outcome.prompt);
    assert_eq!(
        String::from_utf8_lossy(&compiled.body_json),
        String::from_utf8_lossy(&bytes),
        "{name}"
    );
    // The symptom: with `auto` the 0.171 Lite model must compile the same way.
    let mut auto = outcome.prompt.clone();
    auto.compile.dialect = Dialect::Auto;
    assert_eq!(compile_recorded(&auto).body_json, bytes, "{name}: auto");
    outcome.prompt
}

#[test]
fn shared_0171_captures_round_trip_exactly() {
    let Some(dir) = shared::shared_fixtures("codex-cli-0.171") else {
        return;
    };
    let bodies = shared::request_bodies(&dir);
    assert_eq!(
        bodies.len(),
        4,
        "the shared 0.171 fixtures hold 4 request bodies"
    );
    for path in &bodies {
        let prompt = assert_round_trip(path, "codex-0.171");
        let expected = if path.to_string_lossy().contains("lite-") {
            Dialect::Lite
        } else {
            Dialect::Standard
        };
        assert_eq!(prompt.compile.dialect, expected, "{}", path.display());
    }
}

/// Imports a body with the headers captured beside it and checks that the compiled headers are
/// the captured ones (names, order, values; transport headers aside), with nothing kept as an
/// explicit header: every value comes from the Prompt's ids, client identity and preset.
fn assert_header_round_trip(path: &Path, preset: &str) {
    let name = path.display().to_string();
    let headers_path = shared::headers_beside(path).unwrap_or_else(|| panic!("{name}: headers"));
    let text = std::fs::read_to_string(&headers_path).expect("read headers");
    let captured = CapturedHeaders::parse(&text).expect("headers parse");
    let body: Value = serde_json::from_slice(&wire_bytes(path)).expect("JSON");
    let outcome = import_request(&body, Some(&captured), &ModelCatalog::bundled()).expect("import");
    assert_eq!(outcome.prompt.compile.rules, preset, "{name}");
    assert_eq!(outcome.overridden, Vec::<String>::new(), "{name}");
    assert_eq!(
        outcome.prompt.headers,
        serde_json::Map::new(),
        "{name}: explicit headers"
    );
    let compiled = compile_recorded(&outcome.prompt);
    let actual: Vec<(String, String)> = compiled
        .headers
        .iter()
        .map(|h| (h.name.clone(), h.value.clone()))
        .collect();
    assert_eq!(actual, captured.comparable(), "{name}");
    assert_eq!(compiled.body_json, wire_bytes(path), "{name}: body");
}

#[test]
fn shared_captures_headers_round_trip() {
    for (dir, preset, count) in [
        ("codex-cli-0.171", "codex-0.171", 4),
        ("codex-cli-0.169", "codex-0.169", 11),
    ] {
        let Some(dir) = shared::shared_fixtures(dir) else {
            return;
        };
        let bodies = shared::request_bodies(&dir);
        assert_eq!(bodies.len(), count);
        for path in &bodies {
            assert_header_round_trip(path, preset);
        }
    }
}

/// Our own captures of the real Codex CLI 0.171 (`codex exec` against a stand-in upstream,
/// `tools/standin_upstream.py`, vendored with its `vendor` mode): bodies and headers.
#[test]
fn own_0171_captures_round_trip_exactly() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/codex-0.171");
    let bodies = shared::request_bodies(&dir);
    assert_eq!(bodies.len(), 12, "own captures");
    for path in &bodies {
        // The compaction request offers no tools and names a model 0.169 had too: its body
        // alone holds no evidence of 0.171 (same bytes under both presets), so import keeps the
        // older preset; its headers' user agent says 0.171.
        let body_only = if path.ends_with("compaction-model-switch/req_00.json") {
            "codex-0.169"
        } else {
            "codex-0.171"
        };
        assert_round_trip(path, body_only);
        assert_header_round_trip(path, "codex-0.171");
    }
}

#[test]
fn preset_is_listed_and_parsed() {
    assert_eq!(
        CompileRules::PRESETS,
        ["seed", "codex-0.169", "codex-0.171"]
    );
    let rules = CompileRules::preset("codex-0.171").expect("preset");
    assert_eq!(rules.name, "codex-0.171");
    assert_eq!(rules.client_version, "0.171.0");
    assert_eq!(rules.accept_encoding.as_deref(), Some("zstd,gzip"));
    // Body rules are 0.169's.
    let base = CompileRules::codex_0_169();
    assert_eq!(
        (rules.field_order.clone(), rules.instructions, rules.ids),
        (base.field_order, base.instructions, base.ids)
    );
}

#[test]
fn auto_picks_lite_for_the_new_0171_models() {
    let catalog = ModelCatalog::bundled();
    for slug in ["gpt-6.2-sol", "gpt-6.2-astra"] {
        let model = catalog.lookup(slug);
        assert_eq!(model.source.as_deref(), Some("codex-cli-0.171"), "{slug}");
        let prompt = Prompt::from_json_str(
            &json!({
                "model": slug,
                "input": [{"type": "message", "role": "user",
                           "content": [{"type": "input_text", "text": "hi"}]}],
                "thread_id": "t1",
            })
            .to_string(),
        )
        .expect("prompt");
        let compiled = compile(
            &prompt,
            &model,
            &Provider::preset(ProviderKind::Compatible),
            Dialect::Auto,
            &CompileRules::codex_0_171(),
        )
        .expect("compile");
        assert_eq!(compiled.dialect, ResolvedDialect::Lite, "{slug}");
        let at_id = promptwire::core::compile::lite::additional_tools_id("t1", b"[]");
        assert_eq!(
            Value::Object((*compiled.body).clone()),
            json!({
                "model": slug,
                "stream": true,
                "input": [
                    {"type": "additional_tools", "id": at_id, "role": "developer", "tools": []},
                    {"type": "message", "role": "user",
                     "content": [{"type": "input_text", "text": "hi"}]}
                ],
                "tool_choice": "auto",
                "parallel_tool_calls": false,
                "reasoning": {"effort": "low", "context": "all_turns"},
                "store": false,
                "include": ["reasoning.encrypted_content"],
                "prompt_cache_key": "t1",
                "text": {"verbosity": "low"}
            }),
            "{slug}"
        );
    }
}
