//! The Sessions view at the smallest supported window, 1024×700 (egui_kittest on the whole app
//! over a real SQLite file: the seeded samples plus a session of one request with a long header
//! value and 40 recorded events): after an instant replay the timeline pane shows several event
//! rows under its bars (it showed one), at 1600×1000 too; after a re-send (to a loopback
//! server) the recorded-vs-re-sent comparison starts closed and, opened, scrolls in the room the
//! timeline leaves (it pushed the timeline out of the pane); the inspector's header table gives
//! a long value the rest of the pane's width on one line (it wrapped a few characters a line).

use crate::support::ui as ui_support;

use std::path::PathBuf;
use std::time::Duration;

use egui::accesskit::Role;
use egui_kittest::kittest::Queryable as _;
use promptwire::app::panes::PaneId;
use promptwire::core::stream::RawEvent;
use promptwire::store::seed::open_seeded;
use promptwire::store::{NewRequest, NewSession, OutcomeRecord, RecordedState, Source};
use ui_support::{App, app_with, event_rows_in_view, scratch_dir, wait_until};

/// Events recorded for the request (created, deltas, completed).
const EVENTS: usize = 40;

/// The long header value (a Codex user agent).
const USER_AGENT: &str =
    "codex_cli_rs/0.169.0 (Mac OS 15.5.0; arm64) iTerm.app/3.5.14 (codex-exec; 0.169.0)";

fn events() -> Vec<RawEvent> {
    (0..EVENTS)
        .map(|i| {
            let (name, data) = match i {
                0 => (
                    "response.created",
                    "{\"type\":\"response.created\",\"response\":{\"id\":\"resp_1\"}}".to_string(),
                ),
                i if i == EVENTS - 1 => (
                    "response.completed",
                    "{\"type\":\"response.completed\",\"response\":{\"id\":\"resp_1\",\"status\":\"completed\",\"usage\":{\"input_tokens\":20,\"output_tokens\":38,\"total_tokens\":58}}}".to_string(),
                ),
                i => (
                    "response.output_text.delta",
                    format!(
                        "{{\"type\":\"response.output_text.delta\",\"output_index\":0,\"content_index\":0,\"delta\":\"word{i} \"}}"
                    ),
                ),
            };
            RawEvent {
                seq: i as u64,
                received_at: Duration::from_millis(10 * i as u64 + 5),
                event: Some(name.to_string()),
                data, bytes: None,
            }
        })
        .collect()
}

/// A seeded database plus the `many-events` session; returns the path and the session id.
fn database(name: &str) -> (PathBuf, i64) {
    let db = scratch_dir(name).join("promptwire.sqlite");
    let mut store = open_seeded(&db).expect("seeded database");
    let session = store
        .create_session(&NewSession {
            name: "many-events".to_string(),
            source: Source::Send,
            provider: Some("openai".to_string()),
            model: Some("gpt-5.5".to_string()),
            created_us: 1_900_000_000_000_000,
        })
        .expect("session");
    let headers = [
        ("content-type".to_string(), "application/json".to_string()),
        ("user-agent".to_string(), USER_AGENT.to_string()),
        ("originator".to_string(), "codex_cli_rs".to_string()),
    ];
    let body = "{\"model\":\"gpt-5.5\",\"input\":\"count to forty\",\"stream\":true}";
    let id = store
        .add_request(
            session,
            &NewRequest {
                dialect: Some("standard".to_string()),
                provider: Some("openai".to_string()),
                headers: &headers,
                started_us: Some(1_900_000_000_000_000),
                ..NewRequest::post("https://api.openai.com/v1/responses", body.as_bytes())
            },
        )
        .expect("request");
    store.add_events(id, &events()).expect("events");
    store
        .set_outcome(
            id,
            &OutcomeRecord {
                state: RecordedState::Completed,
                events: EVENTS as u64,
                total_us: Some(10_000 * EVENTS as i64),
                first_event_us: Some(5_000),
                ..OutcomeRecord::default()
            },
        )
        .expect("outcome");
    (db, session)
}

/// The app at `size` in the Sessions view with `many-events` open and its request inspected.
fn opened(name: &str, size: (f32, f32)) -> App {
    let (db, session) = database(name);
    let mut harness = app_with(size, Some(db));
    ui_support::show_sessions(&mut harness);
    harness
        .get_by_label_contains(&format!("#{session} many-events"))
        .click();
    wait_until(&mut harness, "request inspected", |s| {
        s.sessions.rows.len() == 1 && s.browser.inspect.result.is_some()
    });
    harness
}

/// Replays the request instantly and waits for the whole timeline.
fn replay(harness: &mut App) {
    harness
        .get_by_role_and_label(Role::Button, "instant")
        .click();
    wait_until(harness, "replayed", |s| {
        s.browser.replay.job.is_none() && s.browser.timeline.rows().len() >= EVENTS
    });
}

#[test]
fn the_timeline_shows_several_event_rows_at_1024_by_700() {
    for (name, size, rows) in [
        ("small-timeline", (1024.0, 700.0), 4),
        ("large-timeline", (1600.0, 1000.0), 8),
    ] {
        let mut harness = opened(name, size);
        replay(&mut harness);
        let shown = event_rows_in_view(&harness, PaneId::ReplayTimeline);
        assert!(
            shown >= rows,
            "{shown} event rows in view at {size:?}, want at least {rows}"
        );
        // Step mode's extra controls squeeze the bar's texts, not the timeline.
        let toolbar = place(&harness, "Following");
        harness.get_by_role_and_label(Role::Button, "step").click();
        wait_until(&mut harness, "step mode", |s| {
            s.browser.replay.job.is_none()
                && s.browser.replay.speed == promptwire::app::session_view::ReplaySpeed::Step
        });
        harness.get_by_label("Next event ›");
        assert_eq!(place(&harness, "Following"), toolbar, "at {size:?}");
    }
}

#[test]
fn a_long_header_value_gets_the_rest_of_the_inspector_on_one_line() {
    let harness = opened("small-headers", (1024.0, 700.0));
    let pane = harness
        .state()
        .ui_state()
        .sessions
        .inspector
        .rect
        .expect("the inspector was drawn");
    let value = harness.get_by_label(USER_AGENT).rect();
    let name = harness.get_by_label("user-agent").rect();
    let line = harness.get_by_label("originator").rect().height();
    assert!(
        value.height() <= line * 1.5,
        "the value is one line: {value:?} (a line is {line})"
    );
    assert!(
        value.width() >= pane.width() * 0.5,
        "the value has most of the pane: {value:?} in {pane:?}"
    );
    assert!(
        value.left() > name.right() && value.right() <= pane.right() + 0.5,
        "the value is beside its name and inside the pane: {value:?}, {name:?}, {pane:?}"
    );
}

#[test]
fn a_resend_leaves_the_timeline_event_rows_at_1024_by_700() {
    use crate::support::upstream::{End, Reply, Upstream, pieces, sse_file};
    use promptwire::app::{AppCommand, PromptEdit};
    use promptwire::core::provider::ProviderKind;
    let server = Upstream::in_order(vec![Reply::answer(
        pieces(&sse_file("text-answer.sse"), 3, Duration::ZERO),
        End::Complete,
    )]);
    let mut harness = opened("small-resend", (1024.0, 700.0));
    // The workbench's provider: a Responses-compatible endpoint on loopback (no key).
    let mut target = ui_support::state(&harness).prompt.compile.clone();
    target.provider = ProviderKind::Compatible;
    target.base_url = Some(server.base_url());
    harness
        .state()
        .sender()
        .send(AppCommand::Edit(Box::new(PromptEdit::Target(target))));
    let base = server.base_url();
    wait_until(&mut harness, "compiled for loopback", move |s| {
        s.views_are_current() && s.views[0].compiled.url.starts_with(&base)
    });
    harness.get_by_label("Re-send").click();
    wait_until(&mut harness, "re-sent and recorded", |s| {
        s.browser.replay.job.is_none()
            && s.sessions.rows.len() == 2
            && s.browser.timeline.outcome().is_some()
    });
    assert_eq!(server.received().len(), 1);
    // The comparison starts closed here (its header stays), the timeline keeps its rows.
    harness.get_by_label("Recorded vs re-sent");
    let shown = event_rows_in_view(&harness, PaneId::ReplayTimeline);
    assert!(shown >= 3, "{shown} event rows in view after a re-send");
    // Opened, it scrolls in what the timeline leaves it: an event row is still in view.
    harness.get_by_label("Recorded vs re-sent").click();
    harness.run_steps(4);
    harness.get_by_label("recorded state: completed");
    let shown = event_rows_in_view(&harness, PaneId::ReplayTimeline);
    assert!(
        shown >= 1,
        "{shown} event rows in view with the comparison open"
    );
}

/// Where the node labelled `label` is (its first one).
fn place(harness: &App, label: &str) -> egui::Pos2 {
    harness.get_by_label(label).rect().min
}

#[test]
fn moving_between_requests_and_copying_keep_the_panes_contents_in_place() {
    let db = scratch_dir("small-steady").join("promptwire.sqlite");
    open_seeded(&db).expect("seeded database");
    let mut harness = app_with((1024.0, 700.0), Some(db));
    ui_support::show_sessions(&mut harness);
    harness
        .get_by_label("#1 tool-calls · 3 req · gpt-5.5")
        .click();
    let inspected = |row: usize| {
        move |s: &promptwire::app::AppState| {
            s.browser.analysis.is_some()
                && s.browser.inspect.result.as_ref().map(|i| i.request)
                    == s.sessions.rows.get(row).map(|r| r.id)
        }
    };
    wait_until(&mut harness, "turn 0 inspected", inspected(0));
    // The request table's header under the selected row's bar.
    let header = place(&harness, "dialect");
    harness.key_press(egui::Key::J);
    wait_until(&mut harness, "turn 1 inspected", inspected(1));
    assert_eq!(place(&harness, "dialect"), header, "the table stays put");
    harness.key_press(egui::Key::K);
    wait_until(&mut harness, "turn 0 inspected again", inspected(0));
    assert_eq!(place(&harness, "dialect"), header, "the table stays put");
    // A copy says so in the inspector's title row: its body view stays where it was.
    let body = place(&harness, "Raw bytes");
    harness.key_press(egui::Key::C);
    wait_until(&mut harness, "copied", |s| s.browser.inspect.note.is_some());
    assert_eq!(
        place(&harness, "Raw bytes"),
        body,
        "the body view stays put"
    );
}
