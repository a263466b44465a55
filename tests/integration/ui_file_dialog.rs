//! The file dialog on the whole app (egui_kittest, 1024×700) over real files in a scratch
//! folder: Save (Ctrl+S) on a form that was not opened from a file — an imported body — asks
//! where, and a file already at the chosen path is replaced only when the user says so (then
//! Ctrl+S saves over that file, now the form's own, without asking); Open (Ctrl+O) gives the
//! path field the keyboard and Tab completes the path from the folder; an export's dialog names
//! the column it writes.

use crate::support::ui as ui_support;

use egui::{Key, Modifiers};
use egui_kittest::kittest::Queryable as _;
use pretty_assertions::assert_eq;
use promptwire::app::AppCommand;
use promptwire::app::settings::ExportKind;
use promptwire::app::state::Dialog;
use promptwire::core::prompt::Prompt;
use ui_support::{app_with, replace_text, scratch_dir, state, wait_until};

const SMALL: (f32, f32) = (1024.0, 700.0);

/// A body an SDK app sent (imported, it becomes an untitled, unsaved form).
const BODY: &str = r#"{"model":"gpt-5.5","instructions":"Answer briefly.","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}],"temperature":0.2,"stream":true}"#;

fn imported_app() -> ui_support::App {
    let mut harness = app_with(SMALL, None);
    harness
        .state()
        .sender()
        .send(AppCommand::ImportBody(BODY.to_string()));
    wait_until(&mut harness, "imported", |s| {
        s.source == Some(promptwire::app::event::PromptSource::Pasted) && s.views_are_current()
    });
    harness
}

#[test]
fn save_on_an_imported_form_asks_where_and_replaces_an_existing_file_only_when_told() {
    let dir = scratch_dir("file-dialog-save");
    let existing = dir.join("prompt.json");
    std::fs::write(&existing, "KEEP").expect("an existing file");
    let mut harness = imported_app();
    assert_eq!(state(&harness).prompt_path, None);
    harness.key_press_modifiers(Modifiers::COMMAND, Key::S);
    harness.run_steps(3);
    // Asked where: the dialog, its path field with the keyboard; nothing written.
    assert!(matches!(
        state(&harness).dialog,
        Some(Dialog::File {
            kind: Some(ExportKind::Prompt),
            ..
        })
    ));
    harness.get_by_label("Save the Prompt file");
    assert!(harness.get_by_label("Path").is_focused());
    replace_text(&mut harness, "Path", &existing.display().to_string());
    harness.get_by_label("Write file").click();
    wait_until(&mut harness, "asked to replace", |s| {
        matches!(
            &s.dialog,
            Some(Dialog::File {
                replace: Some(_),
                ..
            })
        )
    });
    harness.get_by_label(&format!("{} exists. Replace it?", existing.display()));
    assert_eq!(std::fs::read_to_string(&existing).expect("read"), "KEEP");
    assert_eq!(state(&harness).prompt_path, None);
    harness.get_by_label("Replace").click();
    let want = existing.clone();
    wait_until(&mut harness, "saved", move |s| {
        s.prompt_path.as_ref() == Some(&want) && s.dialog.is_none()
    });
    let written = std::fs::read_to_string(&existing).expect("read");
    assert_eq!(
        Prompt::from_json_str(&written).expect("a Prompt file"),
        *state(&harness).prompt
    );
    assert!(!state(&harness).is_dirty());
    // Now it is the form's own file: Ctrl+S saves over it, no dialog.
    replace_text(&mut harness, "Base instructions", "Answer in one line.");
    harness.key_press_modifiers(Modifiers::COMMAND, Key::S);
    wait_until(&mut harness, "saved again", |s| !s.is_dirty());
    assert_eq!(state(&harness).dialog, None);
    let again = Prompt::from_json_str(&std::fs::read_to_string(&existing).expect("read"))
        .expect("a Prompt file");
    assert_eq!(again.base_instructions, "Answer in one line.");
}

/// The path field's text once the completion Tab asked for (a worker lists the folder) is
/// `expected`, or after 2 s.
fn path_after_tab(harness: &mut ui_support::App, expected: &str) -> Option<String> {
    for _ in 0..400 {
        if harness.get_by_label("Path").value().as_deref() == Some(expected) {
            break;
        }
        harness.step();
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    harness.get_by_label("Path").value()
}

#[test]
fn open_focuses_the_path_and_tab_completes_it() {
    let dir = scratch_dir("file-dialog-tab");
    std::fs::write(dir.join("conversation-turn-3.json"), "{}").expect("file");
    std::fs::create_dir_all(dir.join("captures")).expect("folder");
    std::fs::write(dir.join("captures").join("body.json"), "{}").expect("file");
    let mut harness = app_with(SMALL, None);
    harness.key_press_modifiers(Modifiers::COMMAND, Key::O);
    harness.run_steps(3);
    let field = harness.get_by_label("Path");
    assert!(
        field.is_focused(),
        "Ctrl+O gives the path field the keyboard"
    );
    // Type the start of a name: Tab completes the one file that starts so.
    replace_text(&mut harness, "Path", &format!("{}/conv", dir.display()));
    harness.key_press(Key::Tab);
    let want = format!("{}/conversation-turn-3.json", dir.display());
    assert_eq!(path_after_tab(&mut harness, &want), Some(want));
    assert!(
        harness.get_by_label("Path").is_focused(),
        "Tab kept the keyboard"
    );
    // A folder completes with its slash, and Tab again goes into it.
    replace_text(&mut harness, "Path", &format!("{}/capt", dir.display()));
    harness.key_press(Key::Tab);
    let folder = format!("{}/captures/", dir.display());
    assert_eq!(path_after_tab(&mut harness, &folder), Some(folder.clone()));
    harness.key_press(Key::Tab);
    let inside = format!("{folder}body.json");
    assert_eq!(path_after_tab(&mut harness, &inside), Some(inside.clone()));
}

#[test]
fn an_export_dialog_names_the_column_it_writes() {
    let mut harness = app_with(SMALL, None);
    let second = state(&harness).views[1].label.clone();
    harness
        .state()
        .sender()
        .send(AppCommand::ShowFileDialog(Some(ExportKind::Json), 1));
    harness.run_steps(3);
    harness.get_by_label(&format!("Export the compiled bytes of “{second}”"));
    harness.key_press(Key::Escape);
    harness.run_steps(2);
    harness
        .state()
        .sender()
        .send(AppCommand::ShowFileDialog(Some(ExportKind::Har), 0));
    harness.run_steps(3);
    let first = state(&harness).views[0].label.clone();
    harness.get_by_label(&format!("Export “{first}” as HAR"));
}
