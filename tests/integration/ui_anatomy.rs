//! The Anatomy tab on the whole app (egui_kittest) at 1024×700 over the seeded database: the
//! chart of a session's requests by source and the selected request's breakdown show in the
//! analysis pane; a source opens onto its items; a click on an item shows its line in the
//! inspector's body, highlighted and scrolled into view; a click on a chart column selects that
//! request.

use crate::support::ui as ui_support;

use egui::accesskit::Role;
use egui_kittest::kittest::Queryable as _;
use promptwire::app::AppState;
use promptwire::app::panes::PaneId;
use promptwire::core::format::grouped;
use promptwire::core::ledger::Source;
use ui_support::{app_with, pane_rect, scratch_dir, show_sessions, state, wait_until};

#[test]
fn at_1024_by_700_the_chart_and_breakdown_show_and_an_item_opens_in_the_inspector() {
    let db = scratch_dir("ui-anatomy").join("promptwire.sqlite");
    let mut harness = app_with((1024.0, 700.0), Some(db));
    show_sessions(&mut harness);
    harness
        .get_by_label("#1 tool-calls · 3 req · gpt-5.5")
        .click();
    wait_until(&mut harness, "analysed", |s: &AppState| {
        s.browser.analysis.is_some()
    });
    harness.get_by_label("Anatomy").click();
    // A user gives the analysis the room the (empty) replay pane holds.
    harness.get_by_label("− Replay").click();
    harness.run_steps(4);
    let analysis = state(&harness).browser.analysis.clone().expect("analysis");
    let anatomy = analysis.anatomy.clone();
    assert_eq!(anatomy.requests.len(), 3);
    let pane = pane_rect(&harness, PaneId::Analysis);
    let chart = harness
        .get_by_role_and_label(
            Role::Figure,
            "Context by source: 3 requests, 0 compactions, 0 breaks",
        )
        .rect();
    assert!(
        pane.contains_rect(chart) && chart.height() >= 90.0 && chart.width() >= 300.0,
        "the chart {chart:?} is inside the analysis pane {pane:?}"
    );
    // Opening the session selected its first request: the breakdown is that request's.
    assert_eq!(state(&harness).browser.selected, Some(0));
    let first = &anatomy.requests[0];
    let row = harness
        .get_by_label(&format!(
            "source tools {}",
            grouped(first.by_source.get(Source::Tools))
        ))
        .rect();
    assert!(
        pane.contains_rect(row),
        "the breakdown's first row {row:?} is inside the analysis pane {pane:?}"
    );
    // A click on the chart's last column selects the last request.
    click(
        &mut harness,
        egui::pos2(chart.right() - 10.0, chart.bottom() - 20.0),
    );
    wait_until(&mut harness, "request 2 selected", |s: &AppState| {
        s.browser.selected == Some(2)
    });
    let last = &anatomy.requests[2];
    // Scroll the tab down as a user would, open "tool outputs" and click its one item.
    let wheel = |harness: &mut ui_support::App, at: egui::Pos2| {
        harness.event(egui::Event::PointerMoved(at));
        harness.event(egui::Event::MouseWheel {
            unit: egui::MouseWheelUnit::Point,
            delta: egui::vec2(0.0, -150.0),
            modifiers: egui::Modifiers::NONE,
            phase: egui::TouchPhase::Move,
            source: egui::MouseWheelSource::Unknown,
        });
        harness.run_steps(4);
    };
    wheel(&mut harness, pane.center());
    let outputs = last.by_source.get(Source::ToolOutputs);
    let source = format!("source tool outputs {}", grouped(outputs));

    harness.get_by_label(&source).click();
    harness.run_steps(3);
    wheel(&mut harness, pane.center());
    harness.get_by_label("part /input/4/output").click();
    wait_until(&mut harness, "the request read", |s: &AppState| {
        s.browser.selected == Some(2)
            && s.browser.inspect.result.as_ref().is_some_and(|r| {
                Some(r.request) == s.browser.inspect.request && !r.lines.is_empty()
            })
    });
    harness.run_steps(4);
    let found = state(&harness)
        .browser
        .inspect
        .result
        .clone()
        .expect("inspected");
    let line =
        promptwire::core::pretty::line_of_pointer(&found.text, &found.lines, "/input/4/output")
            .expect("the output's line");
    let ui = harness.state().ui_state();
    assert_eq!(
        ui.sessions.inspector.revealed.clone(),
        Some((found.request, Ok(line)))
    );
    let text = found.shown_line(line).0.to_string();
    assert!(text.trim_start().starts_with("\"output\": "), "{text}");
    let inspector = pane_rect(&harness, PaneId::Inspector);
    let shown = harness.get_by_label(&text).rect();
    assert!(
        inspector.contains_rect(shown),
        "the output's line {shown:?} is in view in the inspector {inspector:?}"
    );
    // Back at the top, a click on the chart's first column selects the first request.
    wheel_up(&mut harness, pane.center());
    click(
        &mut harness,
        egui::pos2(chart.left() + 56.0, chart.bottom() - 20.0),
    );
    wait_until(&mut harness, "request 0 selected", |s: &AppState| {
        s.browser.selected == Some(0)
    });
}

/// Scrolls the view under `at` back to its top.
fn wheel_up(harness: &mut ui_support::App, at: egui::Pos2) {
    harness.event(egui::Event::PointerMoved(at));
    harness.event(egui::Event::MouseWheel {
        unit: egui::MouseWheelUnit::Point,
        delta: egui::vec2(0.0, 2000.0),
        modifiers: egui::Modifiers::NONE,
        phase: egui::TouchPhase::Move,
        source: egui::MouseWheelSource::Unknown,
    });
    harness.run_steps(4);
}

/// A click at `at` (pointer moved there first, pressed, released).
fn click(harness: &mut ui_support::App, at: egui::Pos2) {
    harness.hover_at(at);
    harness.run_steps(1);
    harness.drag_at(at);
    harness.run_steps(1);
    harness.drop_at(at);
    harness.run_steps(2);
}
