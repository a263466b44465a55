//! The workbench as a person uses it, through egui_kittest on the whole app (no GPU): pick a
//! model, add a tool, break an item's JSON, import a captured body, export a compiled body to a
//! chosen file, load a stored request. Each test waits for the real worker threads and checks
//! the compiled views as whole values.

use crate::support::ui as ui_support;

use std::time::{Duration, Instant};

use egui_kittest::kittest::Queryable as _;
use pretty_assertions::assert_eq;
use serde_json::json;
use ui_support::{
    app as harness, app_with, body, compile_as_recorded, replace_text, scratch_dir, state,
    wait_for_compile, wait_until,
};

#[test]
fn opens_on_the_embedded_example_with_columns_titled_by_what_they_show() {
    let harness = harness();
    let state = state(&harness);
    assert_eq!(state.prompt.model, "gpt-5.5");
    let labels: Vec<&str> = state.views.iter().map(|v| v.label.as_str()).collect();
    assert_eq!(
        labels,
        ["Standard · OpenAI · HTTP body", "Lite · OpenAI · HTTP body"]
    );
    assert_eq!(
        state.views[0].compiled.dialect,
        promptwire::core::compile::ResolvedDialect::Standard
    );
    assert_eq!(
        state.views[1].compiled.dialect,
        promptwire::core::compile::ResolvedDialect::Lite
    );
}

#[test]
fn editing_the_model_changes_the_compiled_views() {
    let mut harness = harness();
    assert_eq!(body(&harness, 0)["model"], "gpt-5.5");
    harness.get_by_label("Model").click();
    harness.run_steps(4);
    harness
        .get_by_label("gpt-5.4-mini (GPT-5.4-Mini)")
        .click_accesskit();
    harness.run_steps(4);
    wait_for_compile(&mut harness);
    assert_eq!(state(&harness).prompt.model, "gpt-5.4-mini");
    let standard = body(&harness, 0);
    assert_eq!(standard["model"], "gpt-5.4-mini");
    // gpt-5.4-mini's catalog default verbosity is medium (gpt-5.5's is low).
    assert_eq!(standard["text"], json!({"verbosity": "medium"}));
}

#[test]
fn adding_a_tool_puts_it_in_standard_tools_and_lite_additional_tools() {
    let mut harness = harness();
    let before = state(&harness).prompt.tools.len();
    harness.get_by_label("function").click();
    harness.run_steps(4);
    wait_for_compile(&mut harness);
    let new_tool = json!({"type":"function","name":"new_tool","description":"","strict":false,
        "parameters":{"type":"object","properties":{},"additionalProperties":false}});
    assert_eq!(state(&harness).prompt.tools.len(), before + 1);
    let standard = body(&harness, 0);
    let tools = standard["tools"].as_array().expect("tools array");
    assert_eq!(tools.last(), Some(&new_tool));
    let lite = body(&harness, 1);
    assert_eq!(lite.get("tools"), None);
    let additional = &lite["input"][0];
    assert_eq!(additional["type"], "additional_tools");
    // codex-0.169 folds plain function/custom tools into the `functions` namespace (hosted
    // web_search is not offered to Lite models).
    let folded: Vec<String> = additional["tools"][0]["tools"]
        .as_array()
        .expect("namespace members")
        .iter()
        .map(|t| t["name"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(folded, ["shell", "apply_patch", "new_tool"]);
    assert_eq!(additional["tools"][0]["tools"][2], new_tool);
}

#[test]
fn invalid_json_in_an_item_shows_the_error_and_keeps_the_last_good_compile() {
    let mut harness = harness();
    let good = body(&harness, 0);
    let revision = state(&harness).revision;
    harness
        .get_by_label_contains("message user: How many Rust files")
        .click();
    harness.run_steps(4);
    // The editor is at the form's bottom edge (the side panes' header rows take a line).
    harness.get_by_label("Raw JSON").scroll_to_me();
    harness.run_steps(4);
    harness.get_by_label("Raw JSON").click();
    harness.run_steps(4);
    harness.get_by_label("Item JSON").scroll_to_me();
    harness.run_steps(4);
    replace_text(
        &mut harness,
        "Item JSON",
        "{\n  \"type\": \"message\",\n  \"role\": }",
    );
    assert_eq!(
        harness.state().ui_state().items.raw_error.as_deref(),
        Some("invalid JSON at line 3, column 11: expected value")
    );
    assert_eq!(
        state(&harness).revision,
        revision,
        "a broken edit is not applied"
    );
    assert_eq!(body(&harness, 0), good);
    harness.get_by_label_contains("the last valid item is still compiled");
}

#[test]
fn importing_a_captured_body_fills_the_form() {
    let mut harness = harness();
    let captured = json!({
        "model": "gpt-5.4",
        "instructions": "Answer in French.",
        "input": [{"type":"message","role":"user","content":[{"type":"input_text","text":"Bonjour ?"}]}],
        "tools": [],
        "tool_choice": "auto",
        "parallel_tool_calls": false,
        "reasoning": {"effort":"low","summary":"concise"},
        "store": false,
        "stream": true,
        "include": ["reasoning.encrypted_content"],
        "prompt_cache_key": "cache-fr-1"
    });
    harness.get_by_label("Import body…").click();
    harness.run_steps(4);
    harness.get_by_label("Request body (JSON)").focus();
    harness.run_steps(1);
    harness
        .get_by_label("Request body (JSON)")
        .type_text(&captured.to_string());
    harness.run_steps(1);
    harness.get_by_label("Import").click();
    wait_until(&mut harness, "import", |s| s.prompt.model == "gpt-5.4");
    wait_for_compile(&mut harness);
    let state = state(&harness);
    assert_eq!(state.prompt.model, "gpt-5.4");
    assert_eq!(state.prompt.base_instructions, "Answer in French.");
    assert_eq!(state.prompt.input.len(), 1);
    assert_eq!(state.dialog, None);
    assert_eq!(
        state.status.text,
        "Imported the body as a standard request (seed rules, compatible provider)"
    );
    // The imported prompt compiles back to the captured body under the rules it recorded.
    assert_eq!(compile_as_recorded(state), captured);
}

#[test]
fn export_writes_the_file_the_user_chose() {
    let mut harness = harness();
    let path = scratch_dir("ui_export").join("chosen-body.json");
    harness
        .get_all_by_label("Export…")
        .next()
        .expect("export button")
        .click();
    harness.run_steps(4);
    replace_text(&mut harness, "Path", &path.display().to_string());
    harness.get_by_label("Write file").click();
    wait_until(&mut harness, "export", |s| {
        s.status.text.starts_with("Wrote ")
    });
    let written = std::fs::read(&path).expect("export written");
    // Exactly the body's bytes: no newline added.
    assert_eq!(written, state(&harness).views[0].compiled.body_json);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&path).expect("stat").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    assert_eq!(state(&harness).dialog, None);
}

#[test]
fn a_har_export_is_written_by_the_worker_as_the_log_of_the_compiled_request() {
    use promptwire::core::export::{HarEntry, har_log};
    let mut harness = harness();
    let path = scratch_dir("ui_export_har").join("chosen.har");
    harness
        .get_all_by_label("Export HAR…")
        .next()
        .expect("export HAR button")
        .click();
    harness.run_steps(4);
    replace_text(&mut harness, "Path", &path.display().to_string());
    harness.get_by_label("Write file").click();
    wait_until(&mut harness, "HAR export", |s| {
        s.status.text.starts_with("Wrote ")
    });
    let written: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).expect("HAR written")).expect("JSON");
    // The time is the worker's clock; everything else is the log of column 0's request.
    let started = written["log"]["entries"][0]["startedDateTime"]
        .as_str()
        .expect("startedDateTime")
        .to_string();
    let compiled = &state(&harness).views[0].compiled;
    assert_eq!(
        written,
        har_log(&[HarEntry::from_compiled(compiled, &started)], true).expect("redacted")
    );
    assert_eq!(
        state(&harness).status.text,
        format!(
            "Wrote {} bytes to {}",
            std::fs::metadata(&path).expect("stat").len(),
            path.display()
        )
    );
}

#[test]
fn a_stored_request_loads_into_the_form_from_the_sessions_list() {
    let db = scratch_dir("ui_sessions").join("sessions.sqlite");
    let mut harness = app_with((1500.0, 950.0), Some(db.clone()));
    // The first frame lists the (freshly seeded) sessions on a reader thread.
    let deadline = Instant::now() + Duration::from_secs(20);
    while state(&harness).sessions.sessions.is_empty() {
        assert!(Instant::now() < deadline, "sessions were not listed");
        harness.step();
        std::thread::sleep(Duration::from_millis(10));
    }
    let session = state(&harness).sessions.sessions[0].clone();
    harness
        .get_by_label_contains(&format!("#{} {}", session.id, session.name))
        .click();
    harness.run_steps(2);
    while state(&harness).sessions.rows.is_empty() {
        assert!(Instant::now() < deadline, "requests were not listed");
        harness.step();
        std::thread::sleep(Duration::from_millis(10));
    }
    let request = state(&harness).sessions.rows[0].clone();
    harness.get_by_label_contains("turn 0 ·").click();
    harness.run_steps(2);
    wait_until(&mut harness, "load", |s| {
        s.sessions.loaded_request == Some(request.id)
    });
    wait_for_compile(&mut harness);
    // The form now holds the prompt that compiles back to the stored body.
    let store = promptwire::store::Store::open_read_only(&db).expect("open db");
    let stored = store
        .body(request.id)
        .expect("body")
        .value
        .expect("json body");
    assert_eq!(compile_as_recorded(state(&harness)), stored);
}

#[test]
fn row_buttons_reorder_duplicate_and_remove_items() {
    let mut harness = harness();
    let before: Vec<String> = state(&harness)
        .prompt
        .input
        .iter()
        .map(|i| serde_json::to_string(i).expect("json"))
        .collect();
    harness
        .get_by_label_contains("message user: How many Rust files")
        .click();
    harness.run_steps(4);
    harness.get_by_label("Down").click();
    harness.run_steps(4);
    let after: Vec<String> = state(&harness)
        .prompt
        .input
        .iter()
        .map(|i| serde_json::to_string(i).expect("json"))
        .collect();
    let mut expected = before.clone();
    expected.swap(0, 1);
    assert_eq!(after, expected);
    assert_eq!(state(&harness).selected_item, Some(1));
    harness.get_by_label("Duplicate").click();
    harness.run_steps(4);
    assert_eq!(state(&harness).prompt.input.len(), before.len() + 1);
    harness.get_by_label("Remove").click();
    harness.run_steps(4);
    let after_remove: Vec<String> = state(&harness)
        .prompt
        .input
        .iter()
        .map(|i| serde_json::to_string(i).expect("json"))
        .collect();
    assert_eq!(after_remove, expected);
}
