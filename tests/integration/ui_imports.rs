//! The sidebar's imports on the whole app (egui_kittest, no GPU) over a real scratch database:
//! "Import Codex sessions…" on the vendored rollouts (`tests/data/rollouts`, made by the real
//! Codex CLI) runs as a job, then the Sessions view lists one session per thread with one
//! request per model call, and a second run skips them all; the catalog import merges
//! `codex debug models` output and says what it added and changed, and a broken catalog names
//! the JSON path of the problem.

use crate::support::ui as ui_support;

use std::path::Path;

use egui_kittest::kittest::Queryable as _;
use pretty_assertions::assert_eq;
use promptwire::app::session_view::MainView;
use serde_json::Value;
use ui_support::{app_with, replace_text, scratch_dir, state, wait_until};

fn data(relative: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(relative)
}

#[test]
fn codex_sessions_import_runs_as_a_job_and_shows_the_imported_sessions() {
    let db = scratch_dir("ui-import-rollouts").join("promptwire.sqlite");
    let mut harness = app_with((1500.0, 950.0), Some(db));
    // The sidebar's session list arrives first (it moves the fields below it).
    wait_until(&mut harness, "sidebar sessions listed", |s| {
        s.sessions.listed && s.sessions.loading == 0
    });
    let folder = data("rollouts");
    replace_text(
        &mut harness,
        "Codex sessions",
        &folder.display().to_string(),
    );
    harness.get_by_label("Import Codex sessions…").click();
    wait_until(&mut harness, "rollouts imported", |s| {
        s.imports.rollouts.job.is_none() && s.imports.rollouts.result.is_some()
    });
    let imports = state(&harness).imports.rollouts.clone();
    let report = imports.result.expect("result").expect("imported");
    // One session per thread, one request per model call Codex made (req_NN.json files).
    let mut threads: Vec<(String, usize, bool)> = report
        .rollouts
        .iter()
        .map(|r| (r.thread_id.clone(), r.requests, r.skipped))
        .collect();
    threads.sort();
    assert_eq!(
        threads,
        vec![
            ("01a22d30-89fc-70b3-b345-55a7c2d15602".to_string(), 8, false),
            ("01a22d30-d7ba-7da0-aea2-5bd89727c902".to_string(), 7, false),
            ("01a22d4f-1225-7c73-acaf-5af18cd6a382".to_string(), 5, false),
        ]
    );
    assert_eq!((report.failed.len(), report.cancelled), (0, false));
    let progress = imports.progress.expect("progress was reported");
    assert_eq!(
        (progress.done, progress.total, progress.imported),
        (3, 3, 3)
    );
    // The Sessions view shows them.
    let ids: Vec<i64> = report
        .rollouts
        .iter()
        .filter_map(|r| r.session_id)
        .collect();
    let wanted = ids.clone();
    wait_until(&mut harness, "imported sessions listed", move |s| {
        s.browser.view == MainView::Sessions
            && wanted
                .iter()
                .all(|id| s.sessions.sessions.iter().any(|x| x.id == *id))
    });
    let mut listed: Vec<i64> = state(&harness)
        .sessions
        .sessions
        .iter()
        .filter(|s| ids.contains(&s.id))
        .map(|s| s.requests)
        .collect();
    listed.sort();
    assert_eq!(listed, vec![5, 7, 8]);

    // Again: every thread is known, nothing is imported twice.
    harness
        .get_by_role_and_label(egui::accesskit::Role::Button, "Workbench")
        .click();
    harness.run_steps(3);
    harness.get_by_label("3 imported, 0 skipped");
    harness.get_by_label("Import Codex sessions…").click();
    wait_until(&mut harness, "second import", |s| {
        s.imports.rollouts.job.is_none()
            && s.imports.rollouts.result.as_ref().is_some_and(|r| {
                r.as_ref()
                    .is_ok_and(|r| r.rollouts.iter().all(|x| x.skipped))
            })
    });
    harness
        .get_by_role_and_label(egui::accesskit::Role::Button, "Workbench")
        .click();
    harness.run_steps(3);
    harness.get_by_label("0 imported, 3 skipped");
}

#[test]
fn catalog_import_says_what_it_added_and_changed_and_names_a_bad_path() {
    let dir = scratch_dir("ui-import-catalog");
    let mut harness = app_with((1500.0, 950.0), None);
    // `codex debug models` with one model renamed and one capability of another changed.
    let text = std::fs::read_to_string(data("codex-0.171/codex-debug-models.json")).expect("read");
    let mut printed: Value = serde_json::from_str(&text).expect("JSON");
    let models = printed["models"].as_array_mut().expect("models");
    models[0]["slug"] = Value::from("gpt-6.3-preview");
    let window = models[1]["context_window"]
        .as_u64()
        .expect("context_window");
    models[1]["context_window"] = Value::from(window + 1000);
    let slug_1 = models[1]["slug"].as_str().expect("slug").to_string();
    let file = dir.join("models.json");
    std::fs::write(&file, printed.to_string()).expect("write");
    let before = state(&harness).catalog.models.len();

    replace_text(&mut harness, "Catalog file", &file.display().to_string());
    harness.get_by_label("Import catalog").click();
    wait_until(&mut harness, "catalog merged", |s| {
        s.imports.catalog.is_some()
    });
    let merge = state(&harness)
        .imports
        .catalog
        .clone()
        .expect("import")
        .result
        .expect("merged");
    assert_eq!(
        (merge.added.clone(), merge.changed.clone()),
        (vec!["gpt-6.3-preview".to_string()], vec![slug_1.clone()])
    );
    assert_eq!(state(&harness).catalog.models.len(), before + 1);
    harness.get_by_label(&format!("Catalog: added gpt-6.3-preview; changed {slug_1}"));

    // A catalog that cannot be read names where.
    let broken = dir.join("broken.json");
    std::fs::write(
        &broken,
        r#"{"models":[{"slug":"x","context_window":"big"}]}"#,
    )
    .expect("write");
    replace_text(&mut harness, "Catalog file", &broken.display().to_string());
    harness.get_by_label("Import catalog").click();
    wait_until(&mut harness, "catalog refused", |s| {
        s.imports
            .catalog
            .as_ref()
            .is_some_and(|c| c.result.is_err())
    });
    let error = state(&harness)
        .imports
        .catalog
        .clone()
        .expect("import")
        .result
        .expect_err("refused");
    assert_eq!(
        error,
        format!(
            "{}: model catalog: models[0].context_window: invalid type: string \"big\", expected u64",
            broken.display()
        )
    );
    // In the catalog section and in the status bar.
    assert_eq!(harness.get_all_by_label(&error).count(), 2);
    // The catalog kept what the good file added.
    assert_eq!(state(&harness).catalog.models.len(), before + 1);
}
