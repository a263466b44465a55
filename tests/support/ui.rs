//! Shared helpers of the whole-app UI tests: the real `PromptwireApp` in an egui_kittest harness
//! (no GPU), with the session database injected, and waits for its worker threads.

use super::shared;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use egui::{Key, Modifiers};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
use promptwire::app::AppState;
use promptwire::ui::PromptwireApp;
use serde_json::Value;

/// The app under test.
pub type App = Harness<'static, PromptwireApp>;

/// The whole app at `size`, browsing the database `db` (None: no sessions), compiled once.
pub fn app_with(size: (f32, f32), db: Option<PathBuf>) -> App {
    let mut harness = Harness::builder()
        .with_size(egui::vec2(size.0, size.1))
        .build_eframe(move |cc| PromptwireApp::with_db(cc, db));
    wait_for_compile(&mut harness);
    harness
}

/// The whole app at 1500×950 without a session database.
pub fn app() -> App {
    app_with((1500.0, 950.0), None)
}

/// The app state.
pub fn state(harness: &App) -> &AppState {
    harness.state().state()
}

/// Steps frames until `done` holds (workers are threads), failing with `what` after 20 s.
pub fn wait_until(harness: &mut App, what: &str, done: impl Fn(&AppState) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        harness.step();
        if done(state(harness)) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{what} did not happen; status: {:?}",
            state(harness).status
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    harness.run_steps(3);
}

/// Steps frames until the views show the current prompt revision.
pub fn wait_for_compile(harness: &mut App) {
    wait_until(harness, "compile", AppState::views_are_current);
}

/// The compiled body of column `column`.
pub fn body(harness: &App, column: usize) -> Value {
    Value::Object((*state(harness).views[column].compiled.body).clone())
}

/// Replaces the text of the field labelled `label` with `text`.
pub fn replace_text(harness: &mut App, label: &str, text: &str) {
    harness.get_by_label(label).focus();
    harness.run_steps(1);
    harness.key_press_modifiers(Modifiers::COMMAND, Key::A);
    harness.run_steps(1);
    harness.get_by_label(label).type_text(text);
    harness.run_steps(4);
}

/// A fresh scratch directory `<target tmp>/<test module>/<name>-<pid>` ([`super::scratch`]).
#[track_caller]
pub fn scratch_dir(name: &str) -> PathBuf {
    super::scratch(name)
}

/// The prompt compiled as the CLI compiles it: the target it records, no overrides.
pub fn compile_as_recorded(state: &AppState) -> Value {
    let prompt = &state.prompt;
    let target = promptwire::core::target::resolve_target(&prompt.compile, &Default::default())
        .expect("target");
    let compiled = promptwire::core::target::compile_for(
        prompt,
        &state.catalog.lookup(&prompt.model),
        &target,
    )
    .expect("compile");
    Value::Object((*compiled.body).clone())
}

/// A file or folder of the shared fixtures, through the one helper of `tests/support/shared.rs`
/// (a loud failure under CI=true when missing, otherwise a skip note and None).
pub fn shared_fixture(relative: &str) -> Option<PathBuf> {
    shared::shared_fixtures(relative)
}

/// Opens `path` through the Open… dialog, as a user would, and waits for it to compile.
pub fn open_through_dialog(harness: &mut App, path: &Path) {
    use egui_kittest::kittest::Queryable as _;
    harness.get_by_label("Open…").click();
    harness.run_steps(3);
    replace_text(harness, "Path", &path.display().to_string());
    harness.get_by_label("Open file").click();
    let want = path.to_path_buf();
    wait_until(harness, "open", move |s| {
        s.prompt_path.as_ref() == Some(&want)
    });
    wait_for_compile(harness);
}

/// True when the node labelled `label` lies inside the window.
pub fn fully_visible(harness: &App, label: &str) -> bool {
    use egui_kittest::kittest::Queryable as _;
    let rect = harness.get_by_label(label).rect();
    let screen = harness.ctx.content_rect();
    screen.contains_rect(rect)
}

/// Where pane `id` was drawn last frame (the part inside the window).
///
/// # Panics
/// When the pane was not drawn.
pub fn pane_rect(harness: &App, id: promptwire::app::panes::PaneId) -> egui::Rect {
    let screen = harness.ctx.content_rect();
    harness
        .state()
        .ui_state()
        .panes
        .rects
        .get(&id)
        .unwrap_or_else(|| panic!("{id:?} was drawn"))
        .intersect(screen)
}

/// Event rows of the timeline in pane `id` wholly in view: their time cells (`+0.015`), inside
/// the pane and below the table's header.
///
/// # Panics
/// When the timeline's header is not in the pane.
pub fn event_rows_in_view(harness: &App, id: promptwire::app::panes::PaneId) -> usize {
    let pane = pane_rect(harness, id);
    let header = harness
        .query_all_by_label("time")
        .filter(|n| pane.contains_rect(n.rect()))
        .map(|n| n.rect().bottom())
        .fold(f32::NAN, f32::max);
    assert!(
        header.is_finite(),
        "the timeline's header is in its pane {pane:?}"
    );
    harness
        .query_all_by_label_contains("+0.")
        .filter(|n| {
            let rect = n.rect();
            pane.contains_rect(rect) && rect.top() >= header - 0.5
        })
        .count()
}

/// Clicks the Sessions tab and waits until the view shows the listed sessions.
pub fn show_sessions(harness: &mut App) {
    harness
        .get_by_role_and_label(egui::accesskit::Role::Button, "Sessions")
        .click();
    wait_until(harness, "sessions listed", |s| {
        s.browser.view == promptwire::app::session_view::MainView::Sessions
            && !s.sessions.sessions.is_empty()
    });
}
