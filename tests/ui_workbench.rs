//! The workbench as a person uses it, through egui_kittest (no GPU): pick a model, add a tool,
//! break an item's JSON, import a captured body, export a compiled body to a chosen file. Each
//! test waits for the real compile worker thread and checks the compiled views as whole values.

use std::path::Path;
use std::time::{Duration, Instant};

use egui::{Key, Modifiers};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
use pretty_assertions::assert_eq;
use promptwire::app::AppState;
use promptwire::app::state::Settings;
use promptwire::ui::workbench_ui;
use serde_json::{Value, json};

fn harness() -> Harness<'static, AppState> {
    let mut harness = Harness::builder()
        .with_size(egui::vec2(1500.0, 950.0))
        .build_ui_state(workbench_ui, AppState::new(Settings::default()));
    wait_for_compile(&mut harness);
    harness
}

/// Steps frames until the views show the current prompt revision (the worker is a thread).
fn wait_for_compile(harness: &mut Harness<'static, AppState>) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        harness.step();
        let s = harness.state();
        if !s.views.is_empty()
            && s.views_revision == s.revision
            && (s.requested_revision_is_current())
        {
            break;
        }
        assert!(Instant::now() < deadline, "compile did not finish");
        std::thread::sleep(Duration::from_millis(5));
    }
    harness.run_steps(4);
}

fn body(harness: &Harness<'static, AppState>, column: usize) -> Value {
    Value::Object((*harness.state().views[column].compiled.body).clone())
}

/// The form's prompt compiled with the rules, provider and dialect it records.
fn compile_as_recorded(state: &AppState) -> Value {
    let prompt = &state.prompt;
    let compiled = promptwire::core::compile::compile(
        prompt,
        &state.catalog.lookup(&prompt.model),
        &promptwire::core::provider::Provider::preset(prompt.compile.provider),
        prompt.compile.dialect,
        &promptwire::core::rules::CompileRules::preset(&prompt.compile.rules).expect("rules"),
    )
    .expect("compile");
    Value::Object((*compiled.body).clone())
}

fn replace_text(harness: &mut Harness<'static, AppState>, label: &str, text: &str) {
    harness.get_by_label(label).focus();
    harness.run_steps(1);
    harness.key_press_modifiers(Modifiers::COMMAND, Key::A);
    harness.run_steps(1);
    harness.get_by_label(label).type_text(text);
    harness.run_steps(4);
}

#[test]
fn opens_on_the_embedded_example_with_request_and_other_dialect_columns() {
    let harness = harness();
    let state = harness.state();
    assert_eq!(state.prompt.model, "gpt-5.5");
    let labels: Vec<&str> = state.views.iter().map(|v| v.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "Request · OpenAI · HTTP body",
            "Other dialect · OpenAI · HTTP body"
        ]
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
    assert_eq!(harness.state().prompt.model, "gpt-5.4-mini");
    let standard = body(&harness, 0);
    assert_eq!(standard["model"], "gpt-5.4-mini");
    // gpt-5.4-mini's catalog default verbosity is medium (gpt-5.5's is low).
    assert_eq!(standard["text"], json!({"verbosity": "medium"}));
}

#[test]
fn adding_a_tool_puts_it_in_standard_tools_and_lite_additional_tools() {
    let mut harness = harness();
    let before = harness.state().prompt.tools.len();
    harness.get_by_label("function").click();
    harness.run_steps(4);
    wait_for_compile(&mut harness);
    let new_tool = json!({"type":"function","name":"new_tool","description":"","strict":false,
        "parameters":{"type":"object","properties":{},"additionalProperties":false}});
    let state = harness.state();
    assert_eq!(state.prompt.tools.len(), before + 1);
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
    let revision = harness.state().revision;
    harness
        .get_by_label_contains("message user: How many Rust files")
        .click();
    harness.run_steps(4);
    harness.get_by_label("Raw JSON").click();
    harness.run_steps(4);
    replace_text(
        &mut harness,
        "Item JSON",
        "{\n  \"type\": \"message\",\n  \"role\": }",
    );
    let state = harness.state();
    assert_eq!(
        state.items_form.raw_error.as_deref(),
        Some("invalid JSON at line 3, column 11: expected value")
    );
    assert_eq!(state.revision, revision, "a broken edit is not applied");
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
    harness.run_steps(4);
    wait_for_compile(&mut harness);
    let state = harness.state();
    assert_eq!(state.prompt.model, "gpt-5.4");
    assert_eq!(state.prompt.base_instructions, "Answer in French.");
    assert_eq!(state.prompt.input.len(), 1);
    assert!(state.import_dialog.is_none());
    assert_eq!(
        state.status.text,
        "Imported a standard body (seed rules, compatible provider)"
    );
    // The imported prompt compiles back to the captured body under the rules it recorded.
    assert_eq!(compile_as_recorded(state), captured);
}

#[test]
fn export_writes_the_file_the_user_chose() {
    let mut harness = harness();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ui_export");
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("chosen-body.json");
    let _ = std::fs::remove_file(&path);
    harness
        .get_all_by_label("Export JSON…")
        .next()
        .expect("export button")
        .click();
    harness.run_steps(4);
    replace_text(&mut harness, "Path", &path.display().to_string());
    harness.get_by_label("Write file").click();
    harness.run_steps(4);
    let written = std::fs::read(&path).expect("export written");
    let mut expected = harness.state().views[0].compiled.body_json.clone();
    expected.push(b'\n');
    assert_eq!(written, expected);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&path).expect("stat").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    assert!(harness.state().file_dialog.is_none());
    assert!(harness.state().status.text.starts_with("Wrote "));
}

#[test]
fn a_stored_request_loads_into_the_form_from_the_sessions_list() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ui_sessions");
    std::fs::create_dir_all(&dir).expect("dir");
    let db = dir.join(format!("ui-{}.sqlite", std::process::id()));
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
    }
    let mut harness = Harness::builder()
        .with_size(egui::vec2(1500.0, 950.0))
        .build_ui_state(
            workbench_ui,
            AppState::with_store(Settings::default(), Some(db.clone())),
        );
    // The first frame lists the (freshly seeded) sessions on a reader thread.
    let deadline = Instant::now() + Duration::from_secs(20);
    while harness.state().sessions.sessions.is_empty() {
        assert!(Instant::now() < deadline, "sessions were not listed");
        harness.step();
        std::thread::sleep(Duration::from_millis(10));
    }
    let session = harness.state().sessions.sessions[0].clone();
    harness
        .get_by_label_contains(&format!("#{} {}", session.id, session.name))
        .click();
    harness.run_steps(2);
    while harness.state().sessions.requests.is_empty() {
        assert!(Instant::now() < deadline, "requests were not listed");
        harness.step();
        std::thread::sleep(Duration::from_millis(10));
    }
    let request = harness.state().sessions.requests[0].clone();
    harness.get_by_label_contains("turn 0 ·").click();
    harness.run_steps(2);
    while !harness.state().status.text.contains("stored request") {
        assert!(
            Instant::now() < deadline,
            "body was not loaded: {:?}",
            harness.state().status
        );
        harness.step();
        std::thread::sleep(Duration::from_millis(10));
    }
    wait_for_compile(&mut harness);
    // The form now holds the prompt that compiles back to the stored body.
    let store = promptwire::store::Store::open_read_only(&db).expect("open db");
    let stored = store
        .body(request.id)
        .expect("body")
        .value
        .expect("json body");
    let state = harness.state();
    assert_eq!(compile_as_recorded(state), stored);
}

#[test]
fn row_buttons_reorder_duplicate_and_remove_items() {
    let mut harness = harness();
    let before: Vec<String> = harness
        .state()
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
    let after: Vec<String> = harness
        .state()
        .prompt
        .input
        .iter()
        .map(|i| serde_json::to_string(i).expect("json"))
        .collect();
    let mut expected = before.clone();
    expected.swap(0, 1);
    assert_eq!(after, expected);
    assert_eq!(harness.state().items_form.selected, Some(1));
    harness.get_by_label("Duplicate").click();
    harness.run_steps(4);
    assert_eq!(harness.state().prompt.input.len(), before.len() + 1);
    harness.get_by_label("Remove").click();
    harness.run_steps(4);
    let after_remove: Vec<String> = harness
        .state()
        .prompt
        .input
        .iter()
        .map(|i| serde_json::to_string(i).expect("json"))
        .collect();
    assert_eq!(after_remove, expected);
}
