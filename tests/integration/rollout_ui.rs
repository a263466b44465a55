//! The Sessions view on the whole app (egui_kittest, no GPU) over a real database holding an
//! imported Codex rollout (tests/data/rollouts, made by the real Codex CLI): the selected
//! request says which of its parts were recorded verbatim and which reconstructed, with the
//! same lines as `sessions show`, and the file's unknown lines and truncation.

use crate::support::ui as ui_support;

use egui::Key;
use egui::accesskit::Role;
use egui_kittest::kittest::Queryable as _;
use pretty_assertions::assert_eq;
use promptwire::app::AppState;
use promptwire::app::session_view::MainView;
use promptwire::core::rollout::Limits;
use promptwire::store::{DEFAULT_MAX_ROLLOUT_BYTES, Store};
use ui_support::{app_with, scratch_dir, state, wait_until};

#[test]
fn the_selected_imported_request_shows_what_was_reconstructed() {
    let db = scratch_dir("rollout-provenance").join("promptwire.sqlite");
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/rollouts/codex-0.171-standard-sandbox-switch-to-lite");
    let file = std::fs::read_dir(&folder)
        .expect("dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .expect("rollout");
    let (session, name) = {
        let mut store = Store::open(&db).expect("db");
        let imports = store
            .import_rollout_file(&file, DEFAULT_MAX_ROLLOUT_BYTES, &Limits::default())
            .expect("import");
        let id = imports[0].session_id.expect("imported");
        (id, store.session(id).expect("session").name)
    };
    let mut harness = app_with((1500.0, 950.0), Some(db));
    harness
        .get_by_role_and_label(Role::Button, "Sessions")
        .click();
    wait_until(&mut harness, "sessions listed", |s| {
        s.browser.view == MainView::Sessions && s.sessions.sessions.iter().any(|x| x.id == session)
    });
    harness
        .get_by_label(&format!("#{session} {name} · 8 req · gpt-5.5"))
        .click();
    wait_until(&mut harness, "session open", |s: &AppState| {
        s.sessions.open == Some(session) && s.sessions.rows.len() == 8
    });
    assert_eq!(state(&harness).browser.selected, Some(0));
    harness
        .get_by_label("Request #0: imported from a Codex rollout — recorded vs reconstructed")
        .click();
    harness.run_steps(3);
    let path = file.display().to_string();
    for line in [
        format!("Codex rollout {path} line 13 (Codex 0.171.0), turn call, rebuilt under rules codex-0.171"),
        "recorded verbatim: input 1-3 (rollout items), model (turn_context), usage (token_usage_record)".to_string(),
        "reconstructed items: input[0] base-instructions message (session_meta, compiled id)".to_string(),
        "reconstructed fields: include, parallel_tool_calls, prompt_cache_key, reasoning, store, stream, text, tool_choice (rules codex-0.171 with the model catalog)".to_string(),
        "not recorded: tools, client_metadata".to_string(),
        "unknown lines: none".to_string(),
        "last line: complete".to_string(),
    ] {
        harness.get_by_label(&line);
    }
    // The compaction call, five rows down: its handoff prompt is reconstructed too.
    for _ in 0..5 {
        harness.key_press(Key::J);
    }
    harness.run_steps(3);
    assert_eq!(state(&harness).browser.selected, Some(5));
    harness.get_by_label("Request #5: imported from a Codex rollout — recorded vs reconstructed");
    harness.get_by_label(
        "reconstructed items: input[0] base-instructions message (session_meta, compiled id), input[20] compaction prompt (Codex's fixed text)",
    );
    harness.get_by_label("unknown lines: none");
}
