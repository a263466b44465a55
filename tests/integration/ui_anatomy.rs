//! The Anatomy tab on the whole app (egui_kittest) at 1024×700 over the seeded database: the
//! chart of a session's requests by source and the selected request's breakdown show in the
//! analysis pane; a source opens onto its items; a click on an item shows its line in the
//! inspector's body, highlighted and scrolled into view; a click on a chart column selects that
//! request.

use crate::support::ui as ui_support;

use egui::accesskit::Role;
use egui_kittest::kittest::{NodeT as _, Queryable as _};
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

/// A Codex run with a subagent (our capture's two rollouts): the session list shows the child
/// under its parent, indented, its kind first; the parent's Anatomy lists both agents, the
/// parent's totals with the child's; a click on the child agent opens its session.
#[test]
fn a_subagent_is_listed_under_its_parent_and_opens_from_the_agents() {
    let db = scratch_dir("ui-anatomy-agents").join("promptwire.sqlite");
    {
        let mut store = promptwire::store::Store::open(&db).expect("db");
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/codex-0.171/subagent-collab-spawn/rollouts");
        store
            .import_rollout_dir(
                &dir,
                promptwire::store::DEFAULT_MAX_ROLLOUT_BYTES,
                &promptwire::core::rollout::Limits::default(),
                &mut |_| {},
                &std::sync::atomic::AtomicBool::new(false),
            )
            .expect("import");
    }
    let mut harness = app_with((1024.0, 700.0), Some(db));
    show_sessions(&mut harness);
    let sessions = state(&harness).sessions.sessions.clone();
    let child = sessions
        .iter()
        .find(|s| s.parent_session.is_some())
        .expect("a child")
        .clone();
    let root_id = child.parent_session.expect("parent");
    // The list: the root's entry first, then the child's, indented, its kind first.
    let entries: Vec<(String, egui::Rect)> = harness
        .query_all_by(|node| {
            node.label()
                .is_some_and(|l| l.starts_with('#') || l.starts_with("collab_spawn · #"))
        })
        .filter_map(|node| Some((node.accesskit_node().label()?, node.rect())))
        .collect();
    assert_eq!(entries.len(), 2, "{entries:?}");
    assert!(
        entries[0].0.starts_with(&format!("#{root_id} ")),
        "{entries:?}"
    );
    assert!(
        entries[1]
            .0
            .starts_with(&format!("collab_spawn · #{} ", child.id)),
        "{entries:?}"
    );
    assert!(
        entries[1].1.left() >= entries[0].1.left() + 10.0
            && entries[1].1.top() > entries[0].1.top(),
        "the child is indented under its parent: {entries:?}"
    );
    // Open the root: its agents are it and the child, the root's totals with the child's.
    harness.get_by_label(&entries[0].0).click();
    wait_until(&mut harness, "analysed", |s: &AppState| {
        s.browser.analysis.is_some() && s.sessions.open == Some(root_id)
    });
    let agents = state(&harness)
        .browser
        .analysis
        .clone()
        .expect("analysis")
        .agents
        .clone();
    let shape: Vec<(Option<i64>, usize, usize, usize)> = agents
        .iter()
        .map(|a| (a.session, a.depth, a.own.requests, a.total.requests))
        .collect();
    assert_eq!(
        shape,
        vec![(Some(root_id), 0, 3, 4), (Some(child.id), 1, 1, 1)]
    );
    assert_eq!(
        agents[0].total.tokens,
        agents[0].own.tokens + agents[1].own.tokens
    );
    harness.get_by_label("Anatomy").click();
    harness.get_by_label("− Replay").click();
    harness.run_steps(4);
    // The agents section, at the end of the tab: scrolled to as a user would, it lists the
    // child; a click on its row opens its session.
    let pane = pane_rect(&harness, PaneId::Analysis);
    let child_row = |harness: &ui_support::App| {
        harness
            .query_all_by(is_child_row)
            .next()
            .is_some_and(|row| pane.contains_rect(row.rect()))
    };
    for _ in 0..20 {
        if child_row(&harness) {
            break;
        }
        harness.event(egui::Event::PointerMoved(pane.center()));
        harness.event(egui::Event::MouseWheel {
            unit: egui::MouseWheelUnit::Point,
            delta: egui::vec2(0.0, -200.0),
            modifiers: egui::Modifiers::NONE,
            phase: egui::TouchPhase::Move,
            source: egui::MouseWheelSource::Unknown,
        });
        harness.run_steps(3);
    }
    harness
        .query_all_by(is_child_row)
        .next()
        .expect("the child agent's row")
        .click();
    wait_until(&mut harness, "the child opened", |s: &AppState| {
        s.sessions.open == Some(child.id) && s.browser.analysis.is_some()
    });
    // The child's Anatomy names the session that spawned it; the link opens it.
    harness.run_steps(4);
    let back = format!("Spawned by session #{root_id} (collab_spawn) — open it");
    let link = harness
        .query_all_by(|node| node.label().is_some_and(|l| l.starts_with(&back)))
        .next()
        .map(|node| node.rect());
    let Some(link) = link else {
        panic!("no link back to the parent");
    };
    click(&mut harness, link.center());
    wait_until(&mut harness, "the parent opened again", |s: &AppState| {
        s.sessions.open == Some(root_id)
    });
}

/// The child agent's row in the Anatomy tab's agents (a label's text is its accesskit value).
fn is_child_row(node: &egui_kittest::kittest::AccessKitNode<'_>) -> bool {
    node.value()
        .is_some_and(|l| l.contains("subagent: collab_spawn"))
}
