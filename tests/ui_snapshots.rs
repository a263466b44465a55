//! Image snapshots of key screens (the whole app rendered with wgpu on lavapipe), so a layout
//! regression fails CI: the workbench at 1024×700 and 1600×1000, the import dialog, and the
//! Sessions view (a seeded database, a request in the inspector) at both sizes. Run
//! with `cargo test --features snapshots --test ui_snapshots`; `UPDATE_SNAPSHOTS=1` rewrites
//! the images in `tests/snapshots/`.

// The one support tree of the integration tests; this binary uses only its UI helpers (and
// tests run their own threads and read the environment, as in tests/integration/main.rs).
#[allow(dead_code, clippy::disallowed_methods)]
#[path = "support/mod.rs"]
mod support;

use egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
use promptwire::app::AppState;
use promptwire::app::session_view::MainView;
use promptwire::ui::PromptwireApp;
use support::ui::{App, wait_until};

fn rendered(width: f32, height: f32) -> App {
    let mut harness = Harness::builder()
        .with_size(egui::vec2(width, height))
        .wgpu()
        .build_eframe(|cc| PromptwireApp::with_db(cc, None));
    // Steady: compiled and token counts in, so the picture does not depend on timing.
    wait_until(&mut harness, "compile and tokens", |s: &AppState| {
        s.views_are_current() && s.views.iter().all(|v| v.tokens.is_some())
    });
    harness
}

#[test]
fn workbench_at_1024_by_700() {
    let mut harness = rendered(1024.0, 700.0);
    harness.snapshot("workbench_1024x700");
}

#[test]
fn workbench_at_1600_by_1000() {
    let mut harness = rendered(1600.0, 1000.0);
    harness.snapshot("workbench_1600x1000");
}

#[test]
fn import_dialog_at_1024_by_700() {
    let mut harness = rendered(1024.0, 700.0);
    harness.get_by_label("Import body…").click();
    harness.run_steps(3);
    harness.snapshot("import_dialog_1024x700");
}

/// The Sessions view at `width`×`height` on the seeded sample database, the cache-prefix
/// sample open and its first request in the inspector. The database is at a relative path, so
/// the footer that names it reads the same in every checkout.
fn sessions(width: f32, height: f32, name: &str) -> App {
    let dir = std::path::PathBuf::from("target/tmp/ui_snapshots").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let db = dir.join("promptwire.sqlite");
    let mut harness = Harness::builder()
        .with_size(egui::vec2(width, height))
        .wgpu()
        .build_eframe(move |cc| PromptwireApp::with_db(cc, Some(db)));
    wait_until(&mut harness, "compile", AppState::views_are_current);
    harness
        .get_by_role_and_label(Role::Button, "Sessions")
        .click();
    wait_until(&mut harness, "sessions listed", |s| {
        s.browser.view == MainView::Sessions && !s.sessions.sessions.is_empty()
    });
    harness
        .get_by_label_contains("#4 cache-prefix-break · 3 req")
        .click();
    wait_until(&mut harness, "analysed and inspected", |s: &AppState| {
        !s.sessions.rows.is_empty()
            && s.browser.analysis.is_some()
            && s.browser.inspect.result.is_some()
    });
    harness.run_steps(6);
    harness
}

#[test]
fn sessions_at_1024_by_700() {
    let mut harness = sessions(1024.0, 700.0, "sessions-small");
    harness.snapshot("sessions_1024x700");
}

#[test]
fn sessions_at_1600_by_1000() {
    let mut harness = sessions(1600.0, 1000.0, "sessions-large");
    harness.snapshot("sessions_1600x1000");
}
