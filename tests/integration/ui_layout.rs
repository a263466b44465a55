//! The window's layout on the whole app (egui_kittest, no GPU, `build_eframe` with the database
//! injected; a send goes to a loopback server) at 1024×700: the second compiled column (Lite) and every column of the request
//! table can be brought into view with a sideways wheel; collapsing the send timeline (its
//! header, then Alt+4) gives the Prompt form its height back and restoring it takes it again;
//! a pane maximised (header button, Alt+Shift+N) fills the window and comes back; what the
//! panes did is in the persisted settings.

use crate::support::ui as ui_support;

use crate::support::upstream::{End, Reply, Upstream, pieces, sse_file};
use egui::accesskit::Role;
use egui::{Key, Modifiers};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
use pretty_assertions::assert_eq;
use promptwire::app::AppState;
use promptwire::app::panes::PaneId;
use promptwire::app::send::KeyLookup;
use promptwire::app::{AppCommand, PromptEdit};
use promptwire::ui::PromptwireApp;
use std::sync::Arc;
use std::time::Duration;
use ui_support::{App, app_with, pane_rect, scratch_dir, state, wait_for_compile, wait_until};

const SMALL: (f32, f32) = (1024.0, 700.0);

/// A sideways wheel of `dx` points with the pointer at `at`.
fn wheel_sideways(harness: &mut App, at: egui::Pos2, dx: f32) {
    harness.hover_at(at);
    harness.run_steps(1);
    for _ in 0..10 {
        harness.event(egui::Event::MouseWheel {
            unit: egui::MouseWheelUnit::Point,
            delta: egui::vec2(dx / 10.0, 0.0),
            modifiers: Modifiers::NONE,
            phase: egui::TouchPhase::Move,
            source: egui::MouseWheelSource::Unknown,
        });
        harness.run_steps(1);
    }
    harness.run_steps(4);
}

/// True when some node labelled `label` lies wholly inside `rect`.
fn shown_inside(harness: &App, label: &str, rect: egui::Rect) -> bool {
    harness
        .query_all_by_label(label)
        .any(|node| rect.contains_rect(node.rect()))
}

/// The rightmost node labelled `label` (the last column's).
fn rightmost(harness: &App, label: &str) -> egui::Rect {
    harness
        .query_all_by_label(label)
        .map(|node| node.rect())
        .max_by(|a, b| a.left().total_cmp(&b.left()))
        .unwrap_or_else(|| panic!("{label} is drawn"))
}

#[test]
fn the_lite_column_can_be_brought_into_view_at_1024_by_700() {
    let mut harness = app_with(SMALL, None);
    harness.run_steps(4);
    let second = state(&harness).views[1].label.clone();
    assert_eq!(second, "Lite · OpenAI · HTTP body");
    // The second column's last button is cut off by the window's edge …
    let columns = pane_rect(&harness, PaneId::Columns);
    let last = rightmost(&harness, "×");
    assert!(
        !columns.contains_rect(last),
        "the second column ends out of view: {last:?} in {columns:?}"
    );
    // … and the wheel over the first column's text moves the columns sideways.
    wheel_sideways(&mut harness, columns.center(), -2000.0);
    let columns = pane_rect(&harness, PaneId::Columns);
    for label in ["×", second.as_str()] {
        let rect = rightmost(&harness, label);
        assert!(
            columns.contains_rect(rect),
            "{label} was brought into view: {rect:?} in {columns:?}"
        );
    }
}

/// The app on a freshly seeded database at `size`, in the Sessions view with `label` open.
fn sessions_at(name: &str, size: (f32, f32), label: &str) -> App {
    let db = scratch_dir(name).join("promptwire.sqlite");
    let mut harness = app_with(size, Some(db));
    ui_support::show_sessions(&mut harness);
    harness.get_by_label(label).click();
    wait_until(&mut harness, "session analysed", |s: &AppState| {
        !s.sessions.rows.is_empty() && s.browser.analysis.is_some()
    });
    harness
}

#[test]
fn every_request_table_column_can_be_brought_into_view_at_1024_by_700() {
    let mut harness = sessions_at("layout-table", SMALL, "#1 tool-calls · 3 req · gpt-5.5");
    let table = pane_rect(&harness, PaneId::RequestTable);
    // The prefix badge — the why — is in view without scrolling; the last column is not.
    assert!(
        shown_inside(&harness, "prefix", table),
        "the prefix column is in view from the start"
    );
    assert!(
        !shown_inside(&harness, "dialect", table),
        "the dialect column starts out of view"
    );
    // Over the table's column headers (under its filter bar).
    let headers = harness
        .query_all_by_label("time")
        .map(|n| n.rect())
        .find(|r| table.contains_rect(*r))
        .expect("the time column's header");
    wheel_sideways(&mut harness, headers.center(), -2000.0);
    let table = pane_rect(&harness, PaneId::RequestTable);
    for title in ["duration", "1st event", "bytes", "dialect"] {
        assert!(
            shown_inside(&harness, title, table),
            "the {title} column was brought into view"
        );
    }
}

/// The whole app at 1024×700 after one Send to a loopback server (the timeline is shown).
fn sent_app(name: &str) -> (App, Upstream) {
    let server = Upstream::in_order(vec![Reply::answer(
        pieces(&sse_file("text-answer.sse"), 2, Duration::ZERO),
        End::Complete,
    )]);
    let db = scratch_dir(name).join("promptwire.sqlite");
    let lookup: KeyLookup = Arc::new(|name| (name == "OPENAI_API_KEY").then(|| "sk-x".into()));
    let mut harness = Harness::builder()
        .with_size(egui::vec2(SMALL.0, SMALL.1))
        .build_eframe(move |cc| PromptwireApp::with_db(cc, Some(db)).with_key_lookup(lookup));
    wait_for_compile(&mut harness);
    let base = server.base_url();
    harness
        .state()
        .sender()
        .send(AppCommand::Edit(Box::new(PromptEdit::BaseUrl(Some(
            base.clone(),
        )))));
    wait_until(&mut harness, "compiled for loopback", move |s| {
        s.views_are_current() && s.views[0].compiled.url.starts_with(&base)
    });
    harness.get_by_label("Send").click();
    wait_until(&mut harness, "sent and recorded", |s| {
        s.send.job.is_none() && s.send.recorded.is_some()
    });
    harness.run_steps(4);
    (harness, server)
}

/// The Prompt form's height.
fn form_height(harness: &App) -> f32 {
    pane_rect(harness, PaneId::Form).height()
}

#[test]
fn collapsing_and_restoring_the_timeline_gives_the_form_its_height_back() {
    let (mut harness, _server) = sent_app("layout-collapse");
    let with_timeline = form_height(&harness);
    let timeline = pane_rect(&harness, PaneId::SendTimeline).height();
    assert!(timeline > 100.0, "the timeline keeps its room: {timeline}");
    // A click on its header collapses it: the form gets the room.
    harness.get_by_label("− Timeline").click();
    harness.run_steps(4);
    assert!(
        state(&harness)
            .settings
            .panes
            .is_collapsed(PaneId::SendTimeline)
    );
    let collapsed = pane_rect(&harness, PaneId::SendTimeline).height();
    assert!(collapsed < 40.0, "collapsed to its header: {collapsed}");
    let without = form_height(&harness);
    assert!(
        without > with_timeline + timeline - collapsed - 20.0,
        "the form grew from {with_timeline} to {without}"
    );
    // Alt+4 (the timeline is the workbench's fourth pane) restores it.
    harness.key_press_modifiers(Modifiers::ALT, Key::Num4);
    harness.run_steps(4);
    assert_eq!(
        (
            state(&harness)
                .settings
                .panes
                .is_collapsed(PaneId::SendTimeline),
            form_height(&harness).round()
        ),
        (false, with_timeline.round())
    );
}

#[test]
fn a_pane_is_maximised_to_the_window_and_back() {
    let (mut harness, _server) = sent_app("layout-maximise");
    let form = form_height(&harness);
    harness.get_by_label("Maximise Timeline").click();
    harness.run_steps(4);
    assert_eq!(
        state(&harness).settings.panes.maximised,
        Some(PaneId::SendTimeline)
    );
    let maximised = pane_rect(&harness, PaneId::SendTimeline);
    assert!(
        maximised.height() > 560.0 && maximised.width() > 1000.0,
        "the timeline fills the window: {maximised:?}"
    );
    assert_eq!(harness.query_by_label("Send target").is_none(), true);
    harness.get_by_label("Restore Timeline").click();
    harness.run_steps(4);
    assert_eq!(state(&harness).settings.panes.maximised, None);
    assert_eq!(form_height(&harness).round(), form.round());
    // By key: Alt+Shift+3 maximises the compiled columns, again restores.
    harness.key_press_modifiers(Modifiers::ALT | Modifiers::SHIFT, Key::Num3);
    harness.run_steps(4);
    assert_eq!(
        state(&harness).settings.panes.maximised,
        Some(PaneId::Columns)
    );
    let columns = pane_rect(&harness, PaneId::Columns);
    assert!(
        columns.width() > 1000.0,
        "columns fill the window: {columns:?}"
    );
    harness.key_press_modifiers(Modifiers::ALT | Modifiers::SHIFT, Key::Num3);
    harness.run_steps(4);
    assert_eq!(state(&harness).settings.panes.maximised, None);
    assert_eq!(form_height(&harness).round(), form.round());
}

/// Clicks that resize nothing leave the panes' sizes unset, so their defaults keep following
/// the window: a release anywhere used to store every pane's window-derived default for good.
#[test]
fn clicks_that_resize_nothing_remember_no_pane_size() {
    let mut harness = app_with((1024.0, 700.0), None);
    wait_for_compile(&mut harness);
    harness
        .get_by_role_and_label(Role::Button, "Sessions")
        .click();
    harness.run_steps(3);
    harness
        .get_by_role_and_label(Role::Button, "Workbench")
        .click();
    harness.run_steps(3);
    harness.get_by_label("Next difference").click();
    harness.run_steps(3);
    let sizes: Vec<(PaneId, Option<f32>)> = PaneId::WORKBENCH
        .iter()
        .chain(PaneId::SESSIONS.iter())
        .map(|id| (*id, state(&harness).settings.panes.size(*id)))
        .collect();
    assert!(
        sizes.iter().all(|(_, size)| size.is_none()),
        "sizes stored without a resize: {sizes:?}"
    );
}
