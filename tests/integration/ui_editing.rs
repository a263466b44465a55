//! Edits that must not be lost, on the whole app: undo restores a removed item, leaving unsaved
//! work (loading an example, closing the window) asks first — an invalid raw JSON edit that was
//! never applied included — "Save first" saves and then carries on, a stale error leaves the
//! status bar once a later edit succeeds, the window title says which file and whether it is
//! saved, and the form stays visible and usable at 1024×700: long base instructions (a real
//! Codex body's) show collapsed with their size, and body fields the form has no control for
//! (`temperature`) are shown and editable as other fields.

use crate::support::ui as ui_support;

use egui::{Key, Modifiers};
use egui_kittest::kittest::Queryable as _;
use pretty_assertions::assert_eq;
use ui_support::{app, app_with, fully_visible, replace_text, state, wait_for_compile};

#[test]
fn undo_restores_a_removed_item_and_redo_removes_it_again() {
    let mut harness = app();
    let before = state(&harness).prompt.input.clone();
    harness
        .get_by_label_contains("message user: How many Rust files")
        .click();
    harness.run_steps(3);
    harness.get_by_label("Remove").click();
    harness.run_steps(3);
    let mut removed = before.clone();
    removed.remove(0);
    assert_eq!(state(&harness).prompt.input, removed);
    harness.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    harness.run_steps(3);
    assert_eq!(state(&harness).prompt.input, before);
    assert!(!state(&harness).is_dirty(), "back to the loaded prompt");
    harness.get_by_label("Redo").click();
    harness.run_steps(3);
    assert_eq!(state(&harness).prompt.input, removed);
    wait_for_compile(&mut harness);
    assert_eq!(state(&harness).status.text, "Redid the edit");
}

#[test]
fn typing_makes_one_undo_step_per_field() {
    let mut harness = app();
    let original = state(&harness).prompt.base_instructions.clone();
    replace_text(&mut harness, "Base instructions", "Be terse.");
    assert_eq!(state(&harness).prompt.base_instructions, "Be terse.");
    harness.get_by_label("Undo").click();
    harness.run_steps(3);
    assert_eq!(state(&harness).prompt.base_instructions, original);
}

#[test]
fn loading_an_example_over_unsaved_work_asks_first() {
    let mut harness = app();
    harness.get_by_label("function").click();
    harness.run_steps(3);
    let edited = state(&harness).prompt.clone();
    assert!(state(&harness).is_dirty());
    assert_eq!(
        state(&harness).window_title(),
        "untitled prompt • unsaved — promptwire"
    );
    harness.get_by_label("hello.json").click();
    harness.run_steps(3);
    harness.get_by_label("Unsaved changes");
    assert_eq!(state(&harness).prompt, edited, "nothing replaced yet");
    harness.get_by_label("Cancel").click();
    harness.run_steps(3);
    assert_eq!(state(&harness).dialog, None);
    assert_eq!(state(&harness).prompt, edited);
    harness.get_by_label("hello.json").click();
    harness.run_steps(3);
    harness.get_by_label("Discard changes").click();
    harness.run_steps(3);
    assert_eq!(state(&harness).prompt.model, "gpt-5.5");
    assert_eq!(
        state(&harness).status.text,
        "Loaded the example prompt hello.json"
    );
    assert!(!state(&harness).is_dirty());
}

#[test]
fn closing_the_window_with_unsaved_work_asks_first() {
    let mut harness = app();
    harness.get_by_label("function").click();
    harness.run_steps(3);
    // The window manager's close button.
    harness
        .input_mut()
        .viewports
        .entry(egui::ViewportId::ROOT)
        .or_default()
        .events
        .push(egui::ViewportEvent::Close);
    harness.run_steps(3);
    harness.get_by_label("Unsaved changes");
    harness.get_by_label_contains("Close anyway?");
    assert!(!state(&harness).close_confirmed);
    harness.get_by_label("Discard changes").click();
    harness.run_steps(2);
    assert!(state(&harness).close_confirmed);
}

#[test]
fn the_form_is_visible_and_usable_at_1024_by_700() {
    let mut harness = app_with((1024.0, 700.0), None);
    for label in [
        "Base instructions",
        "Prompt cache key",
        "Model",
        "Provider",
        "Auth",
    ] {
        assert!(fully_visible(&harness, label), "{label} is on screen");
    }
    let field = harness.get_by_label("Base instructions").rect();
    assert!(
        field.width() >= 250.0,
        "the form keeps its width: {field:?}"
    );
    replace_text(&mut harness, "Base instructions", "Answer in one line.");
    wait_for_compile(&mut harness);
    assert_eq!(
        state(&harness).prompt.base_instructions,
        "Answer in one line."
    );
}

/// Selects the first item of the example and types `text` into its raw JSON editor.
fn type_into_the_first_items_raw_json(harness: &mut ui_support::App, text: &str) {
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
    replace_text(harness, "Item JSON", text);
}

#[test]
fn an_unapplied_invalid_raw_edit_is_unsaved_work_when_loading_an_example() {
    let mut harness = app();
    let loaded = state(&harness).prompt.clone();
    let broken = "{\n  \"type\": \"message\",\n  \"role\": }";
    type_into_the_first_items_raw_json(&mut harness, broken);
    assert!(
        !state(&harness).is_dirty(),
        "the broken edit was not applied"
    );
    assert_eq!(
        state(&harness).unapplied_edits,
        std::collections::BTreeMap::from([("item", 0)])
    );
    assert_eq!(
        state(&harness).window_title(),
        "untitled prompt • unsaved — promptwire"
    );
    harness.get_by_label("hello.json").click();
    harness.run_steps(3);
    harness.get_by_label("Unsaved changes");
    harness.get_by_label(
        "The prompt has an edit that was never applied. Replace it anyway (the changes are lost)?",
    );
    harness.get_by_label(
        "The raw JSON of item 0 has an error and was never applied; saving cannot keep it.",
    );
    harness.get_by_label("Cancel").click();
    harness.run_steps(3);
    assert_eq!(state(&harness).dialog, None);
    assert_eq!(state(&harness).prompt, loaded, "nothing replaced");
    assert_eq!(
        harness.get_by_label("Item JSON").value().as_deref(),
        Some(broken),
        "staying keeps the text"
    );
    // Discarding goes on, and the invalid text goes with the prompt it was typed into.
    harness.get_by_label("hello.json").click();
    harness.run_steps(3);
    harness.get_by_label("Discard changes").click();
    harness.run_steps(4);
    assert_eq!(
        state(&harness).status.text,
        "Loaded the example prompt hello.json"
    );
    assert_eq!(
        state(&harness).unapplied_edits,
        std::collections::BTreeMap::new()
    );
    assert_eq!(harness.state().ui_state().items.raw_error, None);
}

#[test]
fn an_unapplied_invalid_raw_edit_asks_before_the_window_closes() {
    let mut harness = app();
    type_into_the_first_items_raw_json(&mut harness, "[1, 2");
    harness
        .input_mut()
        .viewports
        .entry(egui::ViewportId::ROOT)
        .or_default()
        .events
        .push(egui::ViewportEvent::Close);
    harness.run_steps(3);
    harness.get_by_label("The prompt has an edit that was never applied. Close anyway?");
    assert!(!state(&harness).close_confirmed);
}

#[test]
fn save_first_saves_and_then_loads_what_was_asked_for() {
    let dir = ui_support::scratch_dir("save-first");
    let path = dir.join("mine.json");
    let example = promptwire::core::prompt::Prompt::from_json_str(include_str!(
        "../../assets/prompts/tools-session.json"
    ))
    .expect("example");
    std::fs::write(&path, example.to_json_pretty()).expect("write the prompt file");
    let mut harness = app();
    ui_support::open_through_dialog(&mut harness, &path);
    replace_text(&mut harness, "Base instructions", "Be terse.");
    let edited = (*state(&harness).prompt).clone();
    assert!(state(&harness).is_dirty());
    harness.get_by_label("hello.json").click();
    harness.run_steps(3);
    harness.get_by_label("Save first").click();
    ui_support::wait_until(&mut harness, "the example after the save", |s| {
        s.status.text == "Loaded the example prompt hello.json"
    });
    let on_disk = std::fs::read_to_string(&path).expect("read back");
    assert_eq!(
        promptwire::core::prompt::Prompt::from_json_str(&on_disk).expect("a Prompt"),
        edited
    );
    let hello = promptwire::core::prompt::Prompt::from_json_str(include_str!(
        "../../assets/prompts/hello.json"
    ))
    .expect("hello");
    assert_eq!(*state(&harness).prompt, hello);
    assert_eq!(state(&harness).dialog, None);
    assert!(!state(&harness).is_dirty());
}

#[test]
fn save_first_before_closing_closes_after_the_save() {
    let dir = ui_support::scratch_dir("save-first-close");
    let path = dir.join("mine.json");
    let example = promptwire::core::prompt::Prompt::from_json_str(include_str!(
        "../../assets/prompts/hello.json"
    ))
    .expect("example");
    std::fs::write(&path, example.to_json_pretty()).expect("write the prompt file");
    let mut harness = app();
    ui_support::open_through_dialog(&mut harness, &path);
    replace_text(&mut harness, "Base instructions", "Closing soon.");
    harness
        .input_mut()
        .viewports
        .entry(egui::ViewportId::ROOT)
        .or_default()
        .events
        .push(egui::ViewportEvent::Close);
    harness.run_steps(3);
    harness.get_by_label("Save first").click();
    ui_support::wait_until(&mut harness, "close after the save", |s| s.close_confirmed);
    let on_disk = std::fs::read_to_string(&path).expect("read back");
    assert_eq!(
        promptwire::core::prompt::Prompt::from_json_str(&on_disk)
            .expect("a Prompt")
            .base_instructions,
        "Closing soon."
    );
}

#[test]
fn an_error_in_the_status_bar_clears_when_a_later_edit_succeeds() {
    let dir = ui_support::scratch_dir("stale-error");
    let missing = dir.join("no-such-prompt.json");
    let mut harness = app();
    harness.get_by_label("Open…").click();
    harness.run_steps(3);
    replace_text(&mut harness, "Path", &missing.display().to_string());
    harness.get_by_label("Open file").click();
    ui_support::wait_until(&mut harness, "the open error", |s| s.status.is_error);
    let error = state(&harness).status.text.clone();
    assert_eq!(
        error,
        format!(
            "Cannot load: {}: No such file or directory (os error 2)",
            missing.display()
        )
    );
    harness.get_by_label(&error);
    harness.key_press(Key::Escape);
    harness.run_steps(3);
    assert_eq!(state(&harness).dialog, None);
    replace_text(&mut harness, "Base instructions", "Fixed it.");
    assert_eq!(
        state(&harness).status,
        promptwire::app::state::Status::default()
    );
    assert!(
        harness.query_by_label(&error).is_none(),
        "the old error is gone"
    );
}

#[test]
fn the_compile_worker_lets_go_of_the_prompt_before_counting_tokens() {
    use promptwire::app::{AppOptions, AppState};
    use std::sync::Arc;
    // A prompt large enough that counting its tokens takes a while (~2.5 MB of text).
    let filler = "warning: unused variable `x` in src/main.rs line 42. ".repeat(500);
    let items: Vec<serde_json::Value> = (0..100)
        .map(|i| serde_json::json!({"type":"function_call_output","call_id":format!("call_{i}"),"output":filler}))
        .collect();
    let prompt = promptwire::core::prompt::Prompt::from_json_str(
        &serde_json::json!({"model":"gpt-5.5","input":items}).to_string(),
    )
    .expect("prompt");
    let mut state = AppState::new(Default::default(), AppOptions::default());
    state.replace_prompt(prompt, None);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !state.views_are_current() {
        state.poll();
        assert!(std::time::Instant::now() < deadline, "no compile");
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    assert_eq!(
        state.views[0].tokens, None,
        "tokens are still being counted"
    );
    // Held by the state and by `saved` only: an edit now copies nothing the worker holds.
    assert_eq!(Arc::strong_count(&state.prompt), 2);
}

#[test]
fn save_first_that_cannot_write_replaces_nothing_and_says_so() {
    let dir = ui_support::scratch_dir("save-first-fails");
    let path = dir.join("mine.json");
    let example = promptwire::core::prompt::Prompt::from_json_str(include_str!(
        "../../assets/prompts/hello.json"
    ))
    .expect("example");
    std::fs::write(&path, example.to_json_pretty()).expect("write the prompt file");
    let mut harness = app();
    ui_support::open_through_dialog(&mut harness, &path);
    replace_text(&mut harness, "Base instructions", "Keep me.");
    let edited = state(&harness).prompt.clone();
    // The file's place is taken by a folder: the save cannot write there.
    std::fs::remove_file(&path).expect("remove");
    std::fs::create_dir(&path).expect("a folder in its place");
    harness.get_by_label("structured-output.json").click();
    harness.run_steps(3);
    harness.get_by_label("Save first").click();
    ui_support::wait_until(&mut harness, "the failed save", |s| s.status.is_error);
    let status = state(&harness).status.text.clone();
    let shown = path.display();
    assert_eq!(
        status,
        format!("Cannot write {shown}: File exists (os error 17): {shown} — nothing else was done")
    );
    harness.run_steps(5);
    assert_eq!(state(&harness).prompt, edited, "nothing replaced");
    assert_eq!(state(&harness).dialog, None);
    assert!(state(&harness).is_dirty());
}

/// The app at 1024×700 with `body` imported (an untitled, unsaved form).
fn imported(body: &str) -> ui_support::App {
    let mut harness = app_with((1024.0, 700.0), None);
    harness
        .state()
        .sender()
        .send(promptwire::app::AppCommand::ImportBody(body.to_string()));
    ui_support::wait_until(&mut harness, "imported", |s| {
        s.source == Some(promptwire::app::event::PromptSource::Pasted) && s.views_are_current()
    });
    harness
}

#[test]
fn long_base_instructions_show_collapsed_with_their_size_and_the_items_stay_in_reach() {
    let instructions: String = (0..400)
        .map(|i| format!("Rule {i}: keep the answer short and cite the file you read.\n"))
        .collect();
    let body = serde_json::json!({
        "model": "gpt-5.5",
        "instructions": instructions,
        "input": [{"type": "message", "role": "user",
                   "content": [{"type": "input_text", "text": "hi"}]}],
        "stream": true
    })
    .to_string();
    let mut harness = imported(&body);
    assert_eq!(state(&harness).prompt.base_instructions, instructions);
    // A preview with the size and Expand; the items right under it, on screen.
    let size = format!(
        "{} characters · 400 lines",
        promptwire::core::format::grouped(instructions.chars().count() as u64)
    );
    harness.get_by_label(&size);
    assert!(
        fully_visible(&harness, "Input items (1)"),
        "the items are in reach"
    );
    assert!(fully_visible(&harness, "Expand"));
    // Expanded, the whole text is editable in a box of bounded height.
    harness.get_by_label("Expand").click();
    harness.run_steps(3);
    let field = harness.get_by_label("Base instructions").rect();
    let items = harness.get_by_label("Input items (1)").rect();
    assert!(
        items.top() - field.top() < 600.0,
        "the box stays bounded, the items under it: {field:?} {items:?}"
    );
    replace_text(&mut harness, "Base instructions", "Be terse.");
    wait_for_compile(&mut harness);
    assert_eq!(state(&harness).prompt.base_instructions, "Be terse.");
    // Short again: an ordinary field.
    assert!(fully_visible(&harness, "Base instructions"));
}

#[test]
fn body_fields_the_form_has_no_control_for_are_shown_and_editable() {
    let body = r#"{"model":"gpt-5.5","instructions":"Answer briefly.","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}],"temperature":0.2,"stream":true}"#;
    let mut harness = imported(body);
    assert_eq!(
        state(&harness).prompt.body_overrides.get("temperature"),
        Some(&serde_json::json!(0.2))
    );
    let prompt = &state(&harness).prompt;
    let others = prompt.body_overrides.len() + prompt.body_omit.len();
    harness.get_by_label(&format!("Other body fields ({others})"));
    assert_eq!(
        harness.get_by_label("temperature").value().as_deref(),
        Some("0.2")
    );
    replace_text(&mut harness, "temperature", "0.7");
    wait_for_compile(&mut harness);
    assert_eq!(
        ui_support::body(&harness, 0).get("temperature"),
        Some(&serde_json::json!(0.7))
    );
    // A value that does not parse is not applied and says why.
    replace_text(&mut harness, "temperature", "0.7x");
    harness.run_steps(2);
    assert_eq!(
        state(&harness).prompt.body_overrides.get("temperature"),
        Some(&serde_json::json!(0.7))
    );
    harness.get_by_label_contains("line 1, column");
    // Added by name; removed with ×.
    replace_text(&mut harness, "temperature", "0.7");
    replace_text(&mut harness, "add field", "top_p");
    replace_text(&mut harness, "field value", "0.9");
    harness.get_by_label("Add this field").scroll_to_me();
    harness.run_steps(3);
    harness.get_by_label("Add this field").click();
    wait_for_compile(&mut harness);
    let body = ui_support::body(&harness, 0);
    assert_eq!(
        (body.get("temperature"), body.get("top_p")),
        (Some(&serde_json::json!(0.7)), Some(&serde_json::json!(0.9)))
    );
}
