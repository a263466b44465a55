//! Image snapshots of key screens (the whole app rendered with wgpu on lavapipe), so a layout
//! regression fails CI: the workbench at 1024×700 and 1600×1000, and the import dialog. Run
//! with `cargo test --features snapshots --test ui_snapshots`; `UPDATE_SNAPSHOTS=1` rewrites
//! the images in `tests/snapshots/`.

// The one support tree of the integration tests; this binary uses only its UI helpers (and
// tests run their own threads and read the environment, as in tests/integration/main.rs).
#[allow(dead_code, clippy::disallowed_methods)]
#[path = "support/mod.rs"]
mod support;

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
use promptwire::app::AppState;
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
