//! Edits that must not be lost, on the whole app: undo restores a removed item, leaving unsaved
//! work (loading an example, closing the window) asks first, the window title says which file
//! and whether it is saved, and the form stays visible and usable at 1024×700.

mod ui_support;

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
