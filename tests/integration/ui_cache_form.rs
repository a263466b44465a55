//! The Prompt form's cache settings on the whole app (egui_kittest): the collapsed "Prompt
//! cache" section sets `prompt_cache_options` (mode, TTL, comparison response) and
//! `prompt_cache_retention`, a part's "Cache breakpoint" box marks its content block, and the
//! compiled body carries exactly that; clearing the fields takes them off the body again.

use crate::support::ui as ui_support;

use egui::{Key, Modifiers};
use egui_kittest::kittest::Queryable as _;
use pretty_assertions::assert_eq;
use promptwire::core::prompt::{CacheMode, PromptCacheOptions};
use serde_json::json;
use ui_support::{app_with, body, replace_text, state, wait_for_compile};

/// Selects all of the field labelled `label` and deletes it.
fn clear_text(harness: &mut ui_support::App, label: &str) {
    harness.get_by_label(label).focus();
    harness.run_steps(1);
    harness.key_press_modifiers(Modifiers::COMMAND, Key::A);
    harness.run_steps(1);
    harness.key_press(Key::Backspace);
    harness.run_steps(4);
}

#[test]
fn the_prompt_cache_section_and_the_breakpoint_box_reach_the_body() {
    // Tall enough for the form's last section (the Prompt cache) to be on screen.
    let mut harness = app_with((1500.0, 2400.0), None);
    wait_for_compile(&mut harness);
    let before = body(&harness, 0);
    assert_eq!(before.get("prompt_cache_options"), None);

    harness.get_by_label("Prompt cache").click();
    harness.run_steps(3);
    harness.get_by_label("Cache mode").click();
    harness.run_steps(3);
    harness.get_by_label("explicit").click();
    harness.run_steps(3);
    harness.get_by_label("Retention").click();
    harness.run_steps(3);
    harness.get_by_label("24h").click();
    harness.run_steps(3);
    replace_text(&mut harness, "Cache TTL", "12h");
    replace_text(&mut harness, "Compare with response", "resp_prev");
    harness
        .get_by_label_contains("message user: How many Rust files")
        .click();
    harness.run_steps(3);
    harness
        .get_by_label("Cache breakpoint after part 0")
        .click();
    harness.run_steps(3);
    wait_for_compile(&mut harness);

    let prompt = &state(&harness).prompt;
    assert_eq!(
        (
            &prompt.prompt_cache_options,
            prompt.prompt_cache_retention.as_deref()
        ),
        (
            &PromptCacheOptions {
                mode: Some(CacheMode::Explicit),
                ttl: Some("12h".to_string()),
                comparison_response_id: Some("resp_prev".to_string()),
            },
            Some("24h")
        )
    );
    let after = body(&harness, 0);
    // The body is the one before, with the two fields after `prompt_cache_key` and the block's
    // breakpoint: nothing else changed.
    let mut expected = serde_json::Map::new();
    for (key, value) in before.as_object().expect("object") {
        expected.insert(key.clone(), value.clone());
        if key == "prompt_cache_key" {
            expected.insert(
                "prompt_cache_options".to_string(),
                json!({"mode": "explicit", "ttl": "12h", "comparison_response_id": "resp_prev"}),
            );
            expected.insert("prompt_cache_retention".to_string(), json!("24h"));
        }
    }
    let mut expected = serde_json::Value::Object(expected);
    let items = expected["input"].as_array_mut().expect("input");
    let user = items
        .iter_mut()
        .find(|item| {
            item["content"][0]["text"]
                .as_str()
                .is_some_and(|t| t.starts_with("How many Rust files"))
        })
        .expect("the user message");
    user["content"][0]["prompt_cache_breakpoint"] = json!({"mode": "explicit"});
    assert_eq!(
        serde_json::to_string(&after).expect("json"),
        serde_json::to_string(&expected).expect("json")
    );

    // Cleared again: the body is the one before.
    clear_text(&mut harness, "Cache TTL");
    clear_text(&mut harness, "Compare with response");
    harness.get_by_label("Cache mode").click();
    harness.run_steps(3);
    harness.get_by_label("not set").click();
    harness.run_steps(3);
    harness.get_by_label("Retention").click();
    harness.run_steps(3);
    harness.get_by_label("not set").click();
    harness.run_steps(3);
    harness
        .get_by_label("Cache breakpoint after part 0")
        .click();
    harness.run_steps(3);
    wait_for_compile(&mut harness);
    assert_eq!(body(&harness, 0), before);
}
