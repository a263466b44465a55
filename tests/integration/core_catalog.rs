//! Model catalogs from Codex itself: what `codex debug models` prints (the shared 0.171
//! fixture) and Codex's cache file read into `ModelCatalog` (service tiers and reasoning levels as
//! objects, unknown fields ignored), errors naming the JSON path, and merging a catalog into
//! another with the slugs it added and changed.

use crate::support::shared;

use pretty_assertions::assert_eq;
use promptwire::core::models::{CatalogMerge, ModelCatalog};
use serde_json::{Value, json};

fn debug_models() -> Option<Value> {
    let dir = shared::shared_fixtures("codex-cli-0.171")?;
    let text = std::fs::read_to_string(dir.join("codex-debug-models.json")).expect("read");
    Some(serde_json::from_str(&text).expect("JSON"))
}

fn catalog_of(value: &Value) -> Result<ModelCatalog, String> {
    ModelCatalog::from_json(&value.to_string()).map_err(|e| e.to_string())
}

#[test]
fn codex_debug_models_output_reads_into_the_catalog() {
    let Some(printed) = debug_models() else {
        return;
    };
    let catalog = catalog_of(&printed).expect("codex debug models is accepted");
    let slugs: Vec<&str> = catalog.models.iter().map(|m| m.slug.as_str()).collect();
    assert_eq!(
        slugs,
        [
            "gpt-6.2-sol",
            "gpt-6.2-astra",
            "gpt-6-astra",
            "gpt-6.1-sol",
            "gpt-6.1-terra",
            "gpt-6-sol",
            "gpt-6-luna",
            "gpt-5.6-sol",
            "gpt-5.6-terra",
            "gpt-5.6-luna",
            "gpt-daybreak-blue-latest",
            "gpt-daybreak-red-latest",
            "gpt-5.5",
            "codex-auto-review",
        ]
    );
    // Every capability field of the first entry, as the compiler sees it.
    assert_eq!(
        serde_json::to_value(&catalog.models[0]).expect("serialize"),
        json!({
            "slug": "gpt-6.2-sol",
            "display_name": "GPT-6.2-Sol",
            "use_responses_lite": true,
            "supports_reasoning_summaries": true,
            "supports_reasoning_summary_parameter": true,
            "support_verbosity": true,
            "default_verbosity": "low",
            "default_reasoning_level": "low",
            "default_reasoning_summary": "none",
            "supported_reasoning_efforts": ["low", "medium", "high", "xhigh", "max", "ultra"],
            "supports_parallel_tool_calls": true,
            "context_window": 500000,
            "max_context_window": 872000,
            "service_tiers": ["priority"],
        })
    );
    // gpt-5.5 is the one standard model; the two daybreak models offer no tier.
    let lite: Vec<bool> = catalog
        .models
        .iter()
        .map(|m| m.use_responses_lite)
        .collect();
    assert_eq!(lite.iter().filter(|l| !**l).count(), 1);
    assert!(!catalog.lookup("gpt-5.5").use_responses_lite);
    assert_eq!(
        catalog.lookup("gpt-daybreak-red-latest").service_tiers,
        Vec::<String>::new()
    );
}

#[test]
fn codex_cache_file_reads_like_the_printed_catalog() {
    let Some(printed) = debug_models() else {
        return;
    };
    let cache = json!({
        "fetched_at": "2026-11-30T15:00:00Z",
        "etag": "W/\"abc\"",
        "client_version": "0.171.0",
        "models": printed["models"].clone(),
    });
    assert_eq!(catalog_of(&cache), catalog_of(&printed));
}

#[test]
fn unreadable_catalogs_are_refused_at_the_json_path() {
    let cases = [
        (
            json!({"models": [{"slug": "m", "service_tiers": [5]}]}),
            "model catalog: models[0].service_tiers[0]: invalid type: integer `5`, expected a string or an object with a string `id`",
        ),
        (
            json!({"models": [{"slug": "m"}, {"slug": "n", "service_tiers": [{"name": "Fast"}]}]}),
            "model catalog: models[1].service_tiers[0]: missing field `id`",
        ),
        (
            json!({"models": [{"slug": "m", "supported_reasoning_levels": [{"effort": 3}]}]}),
            "model catalog: models[0].supported_reasoning_levels[0].effort: invalid type: integer `3`, expected a string",
        ),
        (
            json!({"models": [{"slug": "m", "use_responses_lite": "yes"}]}),
            "model catalog: models[0].use_responses_lite: invalid type: string \"yes\", expected a boolean",
        ),
        (json!({"data": []}), "model catalog: missing field `models`"),
    ];
    for (catalog, message) in cases {
        assert_eq!(catalog_of(&catalog), Err(message.to_string()), "{catalog}");
    }
}

#[test]
fn merge_reports_added_and_changed_slugs() {
    let mut ours = catalog_of(&json!({"models": [
        {"slug": "a", "default_reasoning_level": "low", "source": "ours"},
        {"slug": "b", "default_reasoning_level": "low", "source": "ours"},
    ]}))
    .expect("catalog");
    let theirs = catalog_of(&json!({"models": [
        {"slug": "b", "default_reasoning_level": "high"},
        {"slug": "c", "use_responses_lite": true},
        {"slug": "a", "default_reasoning_level": "low"},
    ]}))
    .expect("catalog");
    let report = ours.merge(theirs, "imported");
    assert_eq!(
        report,
        CatalogMerge {
            added: vec!["c".to_string()],
            changed: vec!["b".to_string()],
        }
    );
    let expected = catalog_of(&json!({"models": [
        {"slug": "a", "default_reasoning_level": "low", "source": "ours"},
        {"slug": "b", "default_reasoning_level": "high", "source": "imported"},
        {"slug": "c", "use_responses_lite": true, "source": "imported"},
    ]}))
    .expect("catalog");
    assert_eq!(ours, expected);
}

#[test]
fn merging_0171_into_the_0169_catalog_adds_the_new_models() {
    let Some(printed) = debug_models() else {
        return;
    };
    let Some(old_dir) = shared::shared_fixtures("codex-cli-0.169") else {
        return;
    };
    let old = std::fs::read_to_string(old_dir.join("models-capabilities.json")).expect("read");
    let mut catalog = ModelCatalog::from_json(&old).expect("0.169 catalog");
    let report = catalog.merge(catalog_of(&printed).expect("0.171"), "codex debug models");
    assert_eq!(
        report,
        CatalogMerge {
            added: vec!["gpt-6.2-sol".to_string(), "gpt-6.2-astra".to_string()],
            changed: vec!["gpt-6.1-sol".to_string()],
        }
    );
    assert_eq!(catalog.lookup("gpt-6.1-sol").context_window, Some(500_000));
    // Merging the same catalog again changes nothing.
    let again = catalog.merge(catalog_of(&printed).expect("0.171"), "codex debug models");
    assert_eq!(again, CatalogMerge::default());
}
