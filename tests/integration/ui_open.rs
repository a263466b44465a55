//! Open anything on the whole app (egui_kittest, 1024×700) over real SQLite files: a HAR file
//! dropped on the window becomes a session (opened in the Sessions view, its requests in the
//! table); a curl command pasted into the import dialog becomes a Prompt compiling to its body;
//! `promptwire --db PATH` opens the app on that database (its name in the window title and the
//! Sessions footer), and a database dropped on the window becomes the app's database; a dropped
//! Codex rollout whose last line cannot be read is imported and the status says which line was
//! left out.

use crate::support::ui as ui_support;

use std::path::PathBuf;

use egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
use pretty_assertions::assert_eq;
use promptwire::app::session_view::MainView;
use promptwire::ui::PromptwireApp;
use promptwire::ui::window::db_argument;
use serde_json::{Value, json};
use ui_support::{App, app_with, body, scratch_dir, state, wait_for_compile, wait_until};

/// A file dropped on the window, as the windowing integration hands it to egui.
#[derive(Debug)]
struct Dropped(PathBuf);

impl egui::DroppedFile for Dropped {
    fn path(&self) -> &std::path::Path {
        &self.0
    }

    fn bytes(&self) -> Result<Vec<u8>, String> {
        std::fs::read(&self.0).map_err(|e| e.to_string())
    }
}

/// Drops `path` on the window.
fn drop_file(harness: &mut App, path: PathBuf) {
    harness
        .input_mut()
        .dropped_files
        .push(std::sync::Arc::new(Dropped(path)));
    harness.step();
}

#[test]
fn a_dropped_har_becomes_a_session() {
    let dir = scratch_dir("open-har");
    let db = dir.join("promptwire.sqlite");
    let har = dir.join("dropped capture.har");
    // A sample recording without the session fields promptwire writes: named by its file.
    let mut log: Value = serde_json::from_str(
        promptwire::store::seed::SAMPLES
            .iter()
            .find(|(name, _)| *name == "failing-stream.har")
            .map(|(_, text)| *text)
            .expect("sample"),
    )
    .expect("sample is JSON");
    if let Some(extra) = log
        .pointer_mut("/log/entries/0/_promptwire")
        .and_then(Value::as_object_mut)
    {
        extra.remove("session");
    }
    std::fs::write(&har, serde_json::to_vec(&log).expect("json")).expect("har file");
    let mut harness = app_with((1024.0, 700.0), Some(db));
    drop_file(&mut harness, har);
    wait_until(&mut harness, "imported and open", |s| {
        s.browser.view == MainView::Sessions
            && s.sessions.importing.is_none()
            && s.sessions.rows.len() == 3
            && s.sessions
                .sessions
                .iter()
                .any(|x| Some(x.id) == s.sessions.open && x.name == "dropped capture")
    });
    let s = state(&harness);
    let open = s.sessions.open.expect("open session");
    assert_eq!(
        s.status.text,
        format!(
            "Imported {} as session #{open} (3 requests)",
            scratch_dir_path(&harness)
        )
    );
    harness.get_by_label(&format!("#{open} dropped capture · 3 req · gpt-5.5"));
}

/// The dropped file's path as the status shows it.
fn scratch_dir_path(harness: &App) -> String {
    state(harness)
        .sessions
        .db_path
        .as_ref()
        .and_then(|db| db.parent())
        .map(|d| d.join("dropped capture.har").display().to_string())
        .unwrap_or_default()
}

#[test]
fn a_pasted_curl_command_becomes_a_prompt() {
    let sent = json!({
        "model": "gpt-5.5",
        "instructions": "Be brief.",
        "input": [{"type": "message", "role": "user",
                   "content": [{"type": "input_text", "text": "What's 2+2?"}]}],
        "stream": true
    });
    let command = promptwire::core::export::curl_for_recorded(
        "POST",
        "https://api.openai.com/v1/responses",
        &[("content-type".to_string(), "application/json".to_string())],
        serde_json::to_string_pretty(&sent)
            .expect("json")
            .as_bytes(),
    );
    let mut harness = app_with((1024.0, 700.0), None);
    harness.get_by_label("Import body…").click();
    harness.run_steps(3);
    harness.get_by_label("Request body (JSON)").focus();
    harness.run_steps(1);
    harness
        .get_by_label("Request body (JSON)")
        .type_text(&command);
    harness.run_steps(3);
    harness.get_by_label("Import").click();
    wait_until(&mut harness, "import", |s| s.dialog.is_none());
    wait_for_compile(&mut harness);
    let compiled = body(&harness, 0);
    assert_eq!(
        (
            compiled.get("model").cloned(),
            compiled.get("instructions").cloned(),
            compiled.get("input").cloned()
        ),
        (
            Some(Value::from("gpt-5.5")),
            Some(Value::from("Be brief.")),
            sent.get("input").cloned()
        )
    );
    assert!(
        !state(&harness).status.is_error,
        "{}",
        state(&harness).status.text
    );
}

#[test]
fn db_opens_the_app_on_that_database_and_a_dropped_database_switches_to_it() {
    let args = |list: &[&str]| -> Vec<std::ffi::OsString> {
        list.iter().map(std::ffi::OsString::from).collect()
    };
    assert_eq!(
        [
            db_argument(&args(&["promptwire", "--db", "/tmp/a.sqlite"])),
            db_argument(&args(&["promptwire", "--db=/tmp/b.sqlite"])),
            db_argument(&args(&["promptwire", "sessions", "list"])),
            db_argument(&args(&["promptwire"])),
        ],
        [
            Some(PathBuf::from("/tmp/a.sqlite")),
            Some(PathBuf::from("/tmp/b.sqlite")),
            None,
            None
        ]
    );
    let dir = scratch_dir("open-db");
    let first = dir.join("first.sqlite");
    let second = dir.join("second.sqlite");
    drop(promptwire::store::seed::open_seeded(&second).expect("second database"));
    let mut harness: App = Harness::builder()
        .with_size(egui::vec2(1024.0, 700.0))
        .build_eframe(move |cc| PromptwireApp::on_db(cc, first));
    wait_for_compile(&mut harness);
    assert_eq!(
        state(&harness).window_title(),
        "untitled prompt — first.sqlite — promptwire"
    );
    harness
        .get_by_role_and_label(Role::Button, "Sessions")
        .click();
    wait_until(&mut harness, "listed", |s| !s.sessions.sessions.is_empty());
    harness.get_by_label_contains("Database: first.sqlite · ");
    drop_file(&mut harness, second.clone());
    let want = second.clone();
    wait_until(&mut harness, "switched", move |s| {
        s.sessions.db_path.as_ref() == Some(&want)
            && s.sessions.loading == 0
            && !s.sessions.sessions.is_empty()
    });
    harness.get_by_label_contains("Database: second.sqlite · ");
    assert_eq!(
        state(&harness).window_title(),
        "untitled prompt — second.sqlite — promptwire"
    );
}

/// Over unsaved edits, a dropped rollout folder is imported without asking (nothing in the form
/// is replaced), while a dropped Prompt file asks first — once it has been read — and goes into
/// the form only after "Discard changes".
#[test]
fn only_what_replaces_the_form_asks_about_unsaved_edits() {
    let dir = scratch_dir("open-unsaved");
    let folder = dir.join("codex sessions");
    std::fs::create_dir_all(&folder).expect("folder");
    let rollouts = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/rollouts/codex-0.171-lite-resume-same-model");
    let rollout = std::fs::read_dir(&rollouts)
        .expect("fixture folder")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("rollout-"))
        })
        .expect("a rollout file");
    std::fs::copy(&rollout, folder.join(rollout.file_name().expect("name"))).expect("copy");
    let mut harness = app_with((1024.0, 700.0), Some(dir.join("promptwire.sqlite")));
    wait_for_compile(&mut harness);
    harness
        .state()
        .sender()
        .send(promptwire::app::AppCommand::Edit(Box::new(
            promptwire::app::PromptEdit::RemoveItem(0),
        )));
    harness.run_steps(2);
    assert!(state(&harness).has_unsaved_work());
    let edited = state(&harness).prompt.clone();

    drop_file(&mut harness, folder);
    wait_until(&mut harness, "rollout imported", |s| {
        !s.sessions.sessions.is_empty()
    });
    assert_eq!(state(&harness).dialog, None, "no question for a folder");
    assert_eq!(state(&harness).prompt, edited, "the form is as edited");

    let prompt_file =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/prompts/hello.json");
    drop_file(&mut harness, prompt_file);
    wait_until(&mut harness, "asked", |s| {
        matches!(
            s.dialog,
            Some(promptwire::app::state::Dialog::Unsaved { .. })
        )
    });
    assert_eq!(
        state(&harness).prompt,
        edited,
        "nothing replaced while it asks"
    );
    harness.run_steps(2);
    harness.get_by_label("Discard changes").click();
    wait_until(&mut harness, "opened", |s| {
        s.dialog.is_none() && s.prompt != edited
    });
    let hello = promptwire::core::prompt::Prompt::from_json_str(
        &std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/prompts/hello.json"),
        )
        .expect("hello.json"),
    )
    .expect("prompt");
    assert_eq!(*state(&harness).prompt, hello);
}

/// A large HAR dropped on the window imports with its progress in the Sessions list ("Importing
/// name: N%") and a Cancel that keeps nothing of it.
#[cfg(unix)]
#[test]
fn a_har_import_shows_its_progress_and_cancels_to_nothing() {
    let dir = scratch_dir("open-har-cancel");
    let har = dir.join("big capture.har");
    crate::store_import_kill::write_har(&har);
    let mut harness = app_with((1024.0, 700.0), Some(dir.join("promptwire.sqlite")));
    drop_file(&mut harness, har);
    wait_until(&mut harness, "progress reported", |s| {
        s.sessions.import_job.is_some_and(|id| {
            s.workers
                .running
                .iter()
                .any(|j| j.id == id && j.progress.is_some())
        })
    });
    harness.run_steps(2);
    assert_eq!(
        harness
            .query_all_by_label_contains("Importing big capture: ")
            .count(),
        2,
        "in the Sessions list and on the job's chip"
    );
    harness
        .get_by_role_and_label(Role::Button, "Cancel")
        .click();
    wait_until(&mut harness, "cancelled", |s| {
        s.sessions.importing.is_none()
    });
    let s = state(&harness);
    assert_eq!(
        s.status.text,
        format!(
            "Import of {} cancelled: nothing was imported",
            dir.join("big capture.har").display()
        )
    );
    let store = promptwire::store::Store::open(dir.join("promptwire.sqlite")).expect("db");
    let names: Vec<String> = store
        .list_sessions(promptwire::store::Page::ALL)
        .expect("sessions")
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert!(
        !names.iter().any(|n| n == "big capture"),
        "nothing of the cancelled import is kept: {names:?}"
    );
}

#[test]
fn a_dropped_rollout_whose_last_line_cannot_be_read_says_so() {
    let dir = scratch_dir("open-rollout-bad-line");
    let db = dir.join("promptwire.sqlite");
    let source = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "tests/data/rollouts/codex-0.171-lite-resume-same-model/rollout-2026-11-30T16-34-46-01a22d4f-1225-7c73-acaf-5af18cd6a382.jsonl",
    );
    let mut text = std::fs::read_to_string(source).expect("rollout");
    let lines = text.lines().count();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("{\"timestamp\":\"2026-11-30T16:40:00Z\",\"type\":\"response_item\",\"payl");
    let rollout =
        dir.join("rollout-2026-11-30T16-34-46-01a22d4f-1225-7c73-acaf-5af18cd6a382.jsonl");
    std::fs::write(&rollout, text).expect("rollout file");
    let mut harness = app_with((1024.0, 700.0), Some(db));
    drop_file(&mut harness, rollout);
    wait_until(&mut harness, "imported", |s| {
        s.sessions.importing.is_none() && s.status.text.starts_with("Imported ")
    });
    let status = &state(&harness).status;
    assert!(
        status.text.ends_with(&format!(
            "; line {} could not be read (cut off or damaged) and was left out",
            lines + 1
        )),
        "{}",
        status.text
    );
}
