//! The last on-screen fixes of issue 22 on the whole app (egui_kittest, no GPU, the real
//! `PromptwireApp` with its database injected, real loopback HTTP for sends and the proxy), by
//! the rectangles of what is drawn: a side pane's Maximise / collapse controls never cover its
//! contents (the sidebar's "Sessions" heading at 1024×700); the replay timeline stays out of
//! the Record panel; nothing above the send timeline moves when a send starts or ends, when the
//! recording proxy starts, or when a replay starts.

use crate::support::ui as ui_support;

use std::sync::Arc;
use std::time::Duration;

use crate::support::upstream::{End, Reply, Upstream, pieces, sse_file};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT as _, Queryable as _};
use pretty_assertions::assert_eq;
use promptwire::app::panes::PaneId;
use promptwire::app::send::KeyLookup;
use promptwire::app::{AppCommand, AppState, PromptEdit};
use promptwire::ui::PromptwireApp;
use ui_support::{
    App, app_with, pane_rect, replace_text, scratch_dir, state, wait_for_compile, wait_until,
};

const SMALL: (f32, f32) = (1024.0, 700.0);

/// Every labelled node drawn inside `rect` (label, rectangle), in tree order.
fn labelled_inside(harness: &App, rect: egui::Rect) -> Vec<(String, egui::Rect)> {
    harness
        .query_all_by(|node| node.label().is_some())
        .filter_map(|node| {
            let label = node.accesskit_node().label()?;
            let r = node.rect();
            (rect.contains_rect(r) && r.area() > 0.0).then_some((label, r))
        })
        .collect()
}

/// The labels of what pane `id`'s own controls (its header's Maximise / collapse) cover.
fn covered_by_controls(harness: &App, id: PaneId) -> Vec<String> {
    let pane = pane_rect(harness, id);
    let title = id.title();
    let controls: Vec<String> = [
        format!("Maximise {title}"),
        format!("Collapse {title}"),
        format!("− {title}"),
    ]
    .into();
    let nodes = labelled_inside(harness, pane);
    let control_rects: Vec<egui::Rect> = nodes
        .iter()
        .filter(|(label, _)| controls.contains(label))
        .map(|(_, r)| *r)
        .collect();
    assert!(!control_rects.is_empty(), "{id:?} has its controls drawn");
    nodes
        .iter()
        .filter(|(label, r)| {
            !controls.contains(label)
                && control_rects
                    .iter()
                    .any(|c| c.shrink(1.0).intersects(r.shrink(1.0)))
        })
        .map(|(label, _)| label.clone())
        .collect()
}

#[test]
fn polish_the_sidebar_controls_do_not_cover_the_sessions_heading() {
    let mut harness = app_with(SMALL, None);
    harness.run_steps(4);
    let sidebar = pane_rect(&harness, PaneId::Sidebar);
    let heading = harness
        .query_all_by_label("Sessions")
        .map(|node| node.rect())
        .find(|r| sidebar.contains_rect(*r))
        .expect("the sidebar's Sessions heading");
    let maximise = harness.get_by_label("Maximise Sidebar").rect();
    assert!(
        !maximise.intersects(heading),
        "Maximise {maximise:?} is clear of the heading {heading:?}"
    );
    // Nothing else in the workbench's side panes is under their controls either.
    for id in [PaneId::Sidebar, PaneId::Form] {
        assert_eq!(
            covered_by_controls(&harness, id),
            Vec::<String>::new(),
            "{id:?}"
        );
    }
}

/// The app on a freshly seeded database at `size`, in the Sessions view with `label` open.
fn sessions_at(name: &str, size: (f32, f32), label: &str) -> App {
    let db = scratch_dir(name).join("promptwire.sqlite");
    let mut harness = app_with(size, Some(db));
    ui_support::show_sessions(&mut harness);
    harness.get_by_label_contains(label).click();
    wait_until(&mut harness, "session analysed", |s: &AppState| {
        !s.sessions.rows.is_empty() && s.browser.analysis.is_some()
    });
    harness.run_steps(4);
    harness
}

#[test]
fn polish_the_session_list_and_record_controls_cover_nothing() {
    let mut harness = sessions_at("polish-list", SMALL, "#1 tool-calls · 3 req");
    harness.get_by_label("Record").click();
    harness.run_steps(4);
    for id in [PaneId::SessionList, PaneId::Record] {
        assert_eq!(
            covered_by_controls(&harness, id),
            Vec::<String>::new(),
            "{id:?}"
        );
    }
}

#[test]
fn polish_the_replay_timeline_stays_out_of_the_record_panel() {
    let mut harness = sessions_at("polish-rule", SMALL, "#1 tool-calls · 3 req");
    harness.get_by_label("Record").click();
    harness.run_steps(4);
    harness.get_by_label("instant").click();
    wait_until(&mut harness, "replayed", |s| {
        s.browser.timeline.outcome().is_some()
    });
    harness.run_steps(4);
    let record = pane_rect(&harness, PaneId::Record);
    let replay = pane_rect(&harness, PaneId::ReplayTimeline);
    assert!(
        replay.right() <= record.left() + 1.0,
        "the replay pane {replay:?} ends where the Record panel {record:?} starts"
    );
    // Everything the replay pane draws (its rule's row included) is left of the Record panel.
    let inside: Vec<(String, egui::Rect)> = labelled_inside(&harness, replay)
        .into_iter()
        .filter(|(_, r)| r.right() > record.left())
        .collect();
    assert_eq!(inside, Vec::new());
}

/// The whole app at `size` on a scratch database, with a key, sending to `base_url`.
fn send_app(name: &str, size: (f32, f32), base_url: &str) -> App {
    let db = scratch_dir(name).join("promptwire.sqlite");
    let lookup: KeyLookup = Arc::new(|name| (name == "OPENAI_API_KEY").then(|| "sk-x".into()));
    let mut harness = Harness::builder()
        .with_size(egui::vec2(size.0, size.1))
        .build_eframe(move |cc| PromptwireApp::with_db(cc, Some(db)).with_key_lookup(lookup));
    wait_for_compile(&mut harness);
    harness
        .state()
        .sender()
        .send(AppCommand::Edit(Box::new(PromptEdit::BaseUrl(Some(
            base_url.to_string(),
        )))));
    let base = base_url.to_string();
    wait_until(&mut harness, "compiled for loopback", move |s| {
        s.views_are_current() && s.views[0].compiled.url.starts_with(&base)
    });
    harness
}

/// Where the workbench's panes above the timeline are: the form, the columns, the sidebar.
fn workbench_rects(harness: &App) -> [egui::Rect; 3] {
    [PaneId::Form, PaneId::Columns, PaneId::Sidebar].map(|id| pane_rect(harness, id))
}

/// A slow answer: its events in 4 pieces 200 ms apart.
fn slow_answer() -> Reply {
    Reply::answer(
        pieces(&sse_file("text-answer.sse"), 4, Duration::from_millis(200)),
        End::Complete,
    )
}

#[test]
fn polish_nothing_moves_when_a_send_starts_or_ends() {
    let server = Upstream::in_order(vec![slow_answer(), slow_answer()]);
    let mut harness = send_app("polish-send", SMALL, &server.base_url());
    let before = workbench_rects(&harness);
    harness.get_by_label("Send").click();
    wait_until(&mut harness, "streaming", |s| {
        s.send.job.is_some() && !s.send.timeline.rows().is_empty()
    });
    let first = workbench_rects(&harness);
    // The first send makes room for the timeline under the form: the form's top stays.
    assert_eq!(
        first.map(|r| (r.top(), r.left(), r.width())),
        before.map(|r| (r.top(), r.left(), r.width()))
    );
    wait_until(&mut harness, "sent", |s| {
        s.send.job.is_none() && s.send.recorded.is_some()
    });
    assert_eq!(workbench_rects(&harness), first, "after the first send");
    // From then on the timeline's room is kept: a second send moves nothing.
    harness.get_by_label("Send").click();
    wait_until(&mut harness, "streaming again", |s| {
        s.send.job.is_some() && !s.send.timeline.rows().is_empty()
    });
    assert_eq!(workbench_rects(&harness), first, "while the second streams");
    wait_until(&mut harness, "sent again", |s| {
        s.send.job.is_none() && server.received().len() == 2
    });
    assert_eq!(workbench_rects(&harness), first, "after the second send");
}

#[test]
fn polish_nothing_moves_when_the_proxy_starts() {
    let upstream = Upstream::in_order(vec![slow_answer()]);
    let db = scratch_dir("polish-proxy").join("promptwire.sqlite");
    let mut harness = app_with(SMALL, Some(db));
    harness.get_by_label("Record").click();
    harness.run_steps(4);
    replace_text(&mut harness, "Listen address", "127.0.0.1:0");
    replace_text(&mut harness, "Upstream URL", &upstream.base_url());
    harness.run_steps(4);
    let before = (
        workbench_rects(&harness),
        pane_rect(&harness, PaneId::Record),
        harness.get_by_label("Recording proxy").rect(),
    );
    harness.get_by_label("Start proxy").click();
    wait_until(&mut harness, "proxy listening", |s| {
        s.record.proxy.addr.is_some()
    });
    harness.run_steps(4);
    let after = (
        workbench_rects(&harness),
        pane_rect(&harness, PaneId::Record),
        harness.get_by_label("Recording proxy").rect(),
    );
    assert_eq!(after, before);
    harness.get_by_label("Stop proxy").click();
    wait_until(&mut harness, "proxy stopped", |s| {
        !s.record.proxy.is_active()
    });
}

#[test]
fn polish_nothing_moves_when_a_replay_starts() {
    let mut harness = sessions_at("polish-replay", SMALL, "#1 tool-calls · 3 req");
    let panes = [
        PaneId::SessionList,
        PaneId::RequestTable,
        PaneId::Analysis,
        PaneId::ReplayTimeline,
    ];
    let before = panes.map(|id| pane_rect(&harness, id));
    harness.get_by_label("1×").click();
    wait_until(&mut harness, "replaying", |s| {
        !s.browser.timeline.rows().is_empty()
    });
    assert_eq!(panes.map(|id| pane_rect(&harness, id)), before, "replaying");
    wait_until(&mut harness, "replayed", |s| {
        s.browser.timeline.outcome().is_some()
    });
    harness.run_steps(4);
    assert_eq!(panes.map(|id| pane_rect(&harness, id)), before, "replayed");
}

/// A chart's series: its name and its points.
type Series<'a> = (&'a str, &'a [[f64; 2]]);

/// The places of chart `chart` (its egui_plot id) where a legend entry covers its data: each
/// point of each series and, for lines, 8 places along every segment, on screen.
fn legend_over_data(harness: &App, chart: &str, series: &[Series<'_>]) -> Vec<String> {
    let memory = egui_plot::PlotMemory::load(&harness.ctx, egui::Id::unique(chart))
        .unwrap_or_else(|| panic!("{chart} was drawn"));
    let transform = memory.transform();
    let frame = *transform.frame();
    let legend: Vec<(String, egui::Rect)> = series
        .iter()
        .filter(|(_, points)| !points.is_empty())
        .map(|(name, _)| {
            // Its entry: the node of that name nearest the plot (in its column, with the y
            // axis' labels left of the frame).
            let rect = harness
                .query_all_by_label(name)
                .map(|node| node.rect())
                .filter(|r| {
                    let column = frame.expand2(egui::vec2(80.0, 0.0));
                    r.x_range().intersects(column.x_range()) && r.top() < frame.bottom()
                })
                .min_by(|a, b| {
                    (frame.top() - a.bottom())
                        .abs()
                        .total_cmp(&(frame.top() - b.bottom()).abs())
                })
                .unwrap_or_else(|| panic!("{chart}: the legend entry {name} is drawn"));
            ((*name).to_string(), rect.expand(2.0))
        })
        .collect();
    // Drawn outside the plot's frame, the legend covers none of it.
    let mut covered: Vec<String> = legend
        .iter()
        .filter(|(_, rect)| rect.shrink(2.0).intersects(frame))
        .map(|(entry, _)| format!("legend entry {entry} inside the plot"))
        .collect();
    for (name, points) in series {
        let mut places: Vec<[f64; 2]> = points.to_vec();
        for pair in points.windows(2) {
            for step in 1..8 {
                let t = f64::from(step) / 8.0;
                places.push([
                    pair[0][0] + (pair[1][0] - pair[0][0]) * t,
                    pair[0][1] + (pair[1][1] - pair[0][1]) * t,
                ]);
            }
        }
        for [x, y] in places {
            let at = transform.position_from_point(&egui_plot::PlotPoint::new(x, y));
            for (entry, rect) in &legend {
                if rect.contains(at) {
                    covered.push(format!("{name} ({x}, {y}) under legend entry {entry}"));
                }
            }
        }
    }
    covered
}

#[test]
fn polish_chart_legends_do_not_cover_the_data() {
    for size in [SMALL, (1600.0, 1000.0)] {
        let mut harness = sessions_at("polish-legend", size, "#4 cache-prefix-break · 3 req");
        // The charts are in the Analysis pane, under the prefix view's text: shown in full.
        harness.get_by_label("Maximise Analysis").click();
        harness.run_steps(6);
        let a = state(&harness).browser.analysis.clone().expect("analysis");
        // (The waterfall's legend is a row above its plot, never over it.)
        let charts: [(&str, Vec<Series<'_>>); 2] = [
            (
                "prefix_growth_chart",
                vec![
                    ("sent", &a.sent_bytes),
                    ("whole history", &a.full_history_bytes),
                ],
            ),
            (
                "prefix_cost_chart",
                vec![("paid", &a.cost_paid), ("lost", &a.cost_lost)],
            ),
        ];
        for (chart, series) in &charts {
            assert_eq!(
                legend_over_data(&harness, chart, series),
                Vec::<String>::new(),
                "{chart} at {size:?}"
            );
        }
    }
}

#[test]
fn polish_the_inspector_ends_where_the_replay_pane_starts() {
    let harness = sessions_at("polish-inspector", SMALL, "#4 cache-prefix-break · 3 req");
    let inspector = harness
        .state()
        .ui_state()
        .sessions
        .inspector
        .rect
        .expect("the inspector was drawn");
    let replay = pane_rect(&harness, PaneId::ReplayTimeline);
    // Its contents (a request's headers) do not push it, and its edge line, into the replay
    // pane under it.
    assert!(
        inspector.bottom() <= replay.top() + 1.0,
        "the inspector {inspector:?} ends above the replay pane {replay:?}"
    );
}
