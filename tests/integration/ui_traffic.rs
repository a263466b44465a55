//! The Traffic view and the Record panel's setup text on the whole app (egui_kittest, no GPU)
//! at 1024×700, over a real scratch database: the proxy started from the Record panel shows the
//! Traffic view; requests a reqwest client streams through it to a loopback upstream the test
//! starts appear there as rows without a click — with their client, model, status, tokens,
//! session and, once the session is analysed, the prefix badge the request table shows — while
//! the Record panel stays open beside them and shows what to paste into a client (the listening
//! URL, a Copy button per snippet). With the panel still open the Sessions view's request table
//! keeps at least five rows in view; a row's "Open session" shows its request there. The list's
//! own filters and its hold-still scrolling are checked on the Traffic panel alone.

use crate::support::ui as ui_support;

use std::time::Duration;

use crate::support::upstream::{End, Reply, Upstream, pieces, sse_file};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT as _, Queryable as _};
use pretty_assertions::assert_eq;
use promptwire::app::panes::PaneId;
use promptwire::app::proxy::{RecordEvent, ServerKind};
use promptwire::app::session_view::MainView;
use promptwire::app::session_view::filter::StatusClass;
use promptwire::app::traffic::{Origin, TrafficCommand, TrafficFilter};
use promptwire::app::{AppCommand, AppEvent, AppOptions, AppState, Settings, command_channel};
use promptwire::core::setup_lines::setup_snippets;
use promptwire::store::OutcomeRecord;
use promptwire::store::RecordedState;
use promptwire::store::summary::OutcomeClass;
use promptwire::transport::proxy::ProxyEvent;
use promptwire::ui::traffic::{TrafficUi, list_ui};
use ui_support::{app_with, pane_rect, replace_text, scratch_dir, state, wait_until};

/// A request body as Codex sends it (grouped by its `session_id` header).
const BODY: &str = r#"{"model":"gpt-5.5","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hello"}]}],"stream":true}"#;

/// Posts `BODY` to `url` as `client` (its user agent) and reads the whole streamed answer.
fn post_through(url: &str, client: &str) -> u16 {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let response = reqwest::Client::new()
            .post(url)
            .header("content-type", "application/json")
            .header("user-agent", client)
            .header("session_id", "traffic-1")
            .body(BODY)
            .send()
            .await
            .expect("send through the proxy");
        let status = response.status().as_u16();
        response.bytes().await.expect("answer");
        status
    })
}

/// The text `copied` put on the clipboard within the next frames.
fn copied_text(harness: &mut ui_support::App) -> Option<String> {
    for _ in 0..200 {
        harness.step();
        let copied = harness
            .output()
            .platform_output
            .commands
            .iter()
            .find_map(|c| match c {
                egui::OutputCommand::CopyText(text) => Some(text.clone()),
                _ => None,
            });
        if copied.is_some() {
            return copied;
        }
    }
    None
}

#[test]
fn at_1024x700_with_the_record_panel_open_proxied_requests_show_live_in_traffic() {
    const REQUESTS: usize = 6;
    let answer = sse_file("text-answer.sse");
    let replies = (0..REQUESTS)
        .map(|_| Reply::answer(pieces(&answer, 2, Duration::from_millis(5)), End::Complete))
        .collect();
    let upstream = Upstream::in_order(replies);
    let db = scratch_dir("ui-traffic").join("promptwire.sqlite");
    let mut harness = app_with((1024.0, 700.0), Some(db));

    harness.get_by_label("Record").click();
    harness.run_steps(2);
    replace_text(&mut harness, "Listen address", "127.0.0.1:0");
    replace_text(&mut harness, "Upstream URL", &upstream.base_url());
    harness.get_by_label("Start proxy").click();
    wait_until(&mut harness, "proxy listening", |s| {
        s.record.proxy.addr.is_some()
    });
    // The flow list is one click away, in the view tabs (and under the proxy's counts).
    harness.get_by_label("Show the Traffic view").click();
    harness.run_steps(2);
    assert_eq!(state(&harness).browser.view, MainView::Traffic);
    let addr = state(&harness).record.proxy.addr.expect("address");
    let url = format!("http://{addr}/v1");

    // The Record panel says what to paste, for the address it listens on, with Copy buttons.
    let snippets = setup_snippets(addr);
    harness.get_by_label(&snippets[0].text);
    harness.get_by_label(&format!("OPENAI_BASE_URL={url}"));
    assert!(
        snippets[0].text.contains(&format!("base_url = \"{url}\"")),
        "{}",
        snippets[0].text
    );
    harness
        .get_by_label(&format!("Copy {}", snippets[0].title))
        .click();
    assert_eq!(copied_text(&mut harness), Some(snippets[0].text.clone()));

    // A client pointed at the proxy: its request is a row of the Traffic view, no click.
    assert_eq!(
        post_through(&format!("{url}/responses"), "OpenAI/Python 2.8.1"),
        200
    );
    wait_until(
        &mut harness,
        "the proxied request listed and read back",
        |s| {
            s.traffic.len() == 1
                && s.traffic.rows().all(|r| {
                    r.outcome == Some(OutcomeClass::Completed)
                        && r.client.is_some()
                        && r.position.is_some()
                        && r.badge.is_some()
                })
        },
    );
    let row = state(&harness).traffic.rows().next().expect("row").clone();
    assert_eq!(
        (
            row.origin,
            row.method.as_str(),
            row.url.as_str(),
            row.client.as_deref(),
            row.model.as_deref(),
            row.status_text(),
            row.position,
            row.badge.as_ref().map(|b| b.label()),
        ),
        (
            Origin::Proxy,
            "POST",
            format!("{}/responses", upstream.base_url()).as_str(),
            Some("OpenAI/Python"),
            Some("gpt-5.5"),
            "200 · completed".to_string(),
            Some(0),
            Some("first".to_string()),
        )
    );
    let session = row.session.expect("stored in a session");
    // On screen: in the Traffic pane, beside the open Record panel.
    harness.run_steps(2);
    let traffic = pane_rect(&harness, PaneId::Traffic);
    let record = pane_rect(&harness, PaneId::Record);
    assert!(
        traffic.right() <= record.left() + 1.0,
        "{traffic:?} {record:?}"
    );
    // The prefix badge is in view (the last columns scroll sideways in this width).
    for label in ["OpenAI/Python", "gpt-5.5", "200 · completed", "first"] {
        let node = harness.get_by_label(label);
        assert!(
            traffic.contains_rect(node.rect()),
            "{label} shown in the Traffic pane {traffic:?}: {:?}",
            node.rect()
        );
    }

    // Five more in the same conversation: newest at the top as they come.
    for _ in 1..REQUESTS {
        assert_eq!(
            post_through(&format!("{url}/responses"), "OpenAI/Python 2.8.1"),
            200
        );
    }
    wait_until(&mut harness, "all rows stored", |s| {
        s.traffic.len() == REQUESTS
            && s.traffic
                .rows()
                .all(|r| r.position.is_some() && r.badge.is_some())
    });
    let shown: Vec<Option<i64>> = (0..REQUESTS)
        .map(|i| {
            state(&harness)
                .traffic
                .shown_newest_first(i)
                .and_then(|r| r.position)
        })
        .collect();
    assert_eq!(
        shown,
        vec![Some(5), Some(4), Some(3), Some(2), Some(1), Some(0)]
    );

    // Select the newest: the inspector shows it; "Open session" shows it in its session.
    let newest = state(&harness)
        .traffic
        .shown_newest_first(0)
        .expect("row")
        .id;
    harness
        .state()
        .sender()
        .send(AppCommand::Traffic(TrafficCommand::Select(newest)));
    wait_until(&mut harness, "inspected", |s| {
        s.traffic.inspected().is_some()
    });
    harness.get_by_label(&format!("POST {}/responses", upstream.base_url()));
    harness
        .get_by_label(&format!("Open session #{session} turn 5"))
        .click();
    wait_until(&mut harness, "its session open on its request", move |s| {
        s.browser.view == MainView::Sessions
            && s.sessions.open == Some(session)
            && s.sessions.rows.len() == REQUESTS
            && s.browser.selected == Some(5)
    });
    // The Record panel is still open: the request table keeps at least five rows in view.
    harness.run_steps(3);
    assert!(state(&harness).record.proxy.is_active());
    let table = pane_rect(&harness, PaneId::RequestTable);
    let header = harness
        .query_all_by_label("time")
        .filter(|n| table.contains_rect(n.rect()))
        .map(|n| n.rect().bottom())
        .fold(f32::NAN, f32::max);
    assert!(header.is_finite(), "the table's header is in its pane");
    // Each row's time cell (`HH:MM:SS`) wholly in view under the header.
    let rows_in_view = harness
        .query_all_by_role(egui::accesskit::Role::Label)
        .filter(|n| {
            let text = n.value().unwrap_or_default();
            let is_time = text.len() == 8 && text.matches(':').count() == 2;
            is_time && table.contains_rect(n.rect()) && n.rect().top() >= header - 0.5
        })
        .count();
    assert!(
        rows_in_view >= 5,
        "{rows_in_view} request rows in view in {table:?} beside the Record panel"
    );
    harness.get_by_label("Stop proxy").click();
    wait_until(&mut harness, "proxy stopped", |s| {
        !s.record.proxy.is_active()
    });
}

/// The Traffic panel alone on an app state fed the proxy's events.
struct Panel {
    state: AppState,
    ui: TrafficUi,
    tx: promptwire::app::CommandSender,
    rx: promptwire::app::CommandReceiver,
}

fn panel() -> Harness<'static, Panel> {
    let (tx, rx) = command_channel(None);
    let state = AppState::new(Settings::default(), AppOptions::default());
    Harness::builder()
        .with_size(egui::vec2(1024.0, 500.0))
        .build_ui_state(
            |ui, panel: &mut Panel| {
                list_ui(ui, &panel.state, &mut panel.ui, &panel.tx);
                panel.state.handle_all(&panel.rx);
            },
            Panel {
                state,
                ui: TrafficUi::default(),
                tx,
                rx,
            },
        )
}

/// Feeds one proxied exchange `n` to the app: started, then ended (`failed` or completed).
fn exchange(state: &mut AppState, n: u64, model: &str, failed: bool) {
    let event = |event| {
        AppEvent::Record(RecordEvent::Event {
            kind: ServerKind::Proxy,
            event: Box::new(event),
        })
    };
    state.apply_event(event(ProxyEvent::RequestStarted {
        exchange: n,
        method: "POST".to_string(),
        url: format!("http://up/v1/responses?m={model}"),
        dialect: Some("standard".to_string()),
    }));
    let outcome = OutcomeRecord {
        state: if failed {
            RecordedState::Failed
        } else {
            RecordedState::Completed
        },
        server_model: Some(model.to_string()),
        usage: Some(serde_json::json!({"input_tokens": 100 + n, "output_tokens": 7})),
        ..OutcomeRecord::default()
    };
    state.apply_event(event(ProxyEvent::Outcome {
        exchange: n,
        status: Some(if failed { 500 } else { 200 }),
        outcome: Box::new(outcome),
        turn: None,
    }));
}

/// The tokens cell (`NNN / 7`) of the first row wholly in view under the list's header.
fn top_tokens(harness: &Harness<'static, Panel>) -> Option<String> {
    let header = harness.get_by_label("tokens in / out").rect().bottom();
    harness
        .query_all_by_label_contains(" / 7")
        .map(|n| {
            let text = n
                .value()
                .or_else(|| n.accesskit_node().label())
                .unwrap_or_default();
            (n.rect().top(), text)
        })
        .filter(|(top, _)| *top >= header)
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, label)| label)
}

#[test]
fn the_traffic_list_filters_and_holds_still_while_scrolled_down() {
    let mut harness = panel();
    for n in 1..=300_u64 {
        let model = if n.is_multiple_of(3) {
            "gpt-6.2-sol"
        } else {
            "gpt-5.5"
        };
        exchange(
            &mut harness.state_mut().state,
            n,
            model,
            n.is_multiple_of(10),
        );
    }
    harness.run_steps(3);
    let drawn = harness.state().ui.rows_drawn;
    assert!(
        (5..60).contains(&drawn),
        "only the rows in view are laid out: {drawn} of 300"
    );
    // Newest first.
    assert_eq!(
        harness
            .state()
            .state
            .traffic
            .shown_newest_first(0)
            .map(|r| r.input_tokens),
        Some(Some(400))
    );
    // The filters: status class, model, text.
    let filtered = |harness: &mut Harness<'static, Panel>, filter: TrafficFilter| {
        harness
            .state()
            .tx
            .send(AppCommand::Traffic(TrafficCommand::Filter(filter)));
        harness.run_steps(2);
        harness.state().state.traffic.visible().len()
    };
    let counts = (
        filtered(
            &mut harness,
            TrafficFilter {
                status: StatusClass::Failed,
                ..TrafficFilter::default()
            },
        ),
        filtered(
            &mut harness,
            TrafficFilter {
                model: "6.2".to_string(),
                ..TrafficFilter::default()
            },
        ),
        filtered(
            &mut harness,
            TrafficFilter {
                text: "HTTP 500".to_string(),
                model: "gpt-5.5".to_string(),
                ..TrafficFilter::default()
            },
        ),
        filtered(&mut harness, TrafficFilter::default()),
    );
    assert_eq!(counts, (30, 100, 20, 300));
    harness.get_by_label("300 requests");
    harness.get_by_label("Pause");

    // Scrolled down: arriving rows do not move the rows in view.
    harness.event(egui::Event::PointerMoved(egui::pos2(500.0, 300.0)));
    harness.event(egui::Event::MouseWheel {
        unit: egui::MouseWheelUnit::Point,
        delta: egui::vec2(0.0, -600.0),
        modifiers: egui::Modifiers::NONE,
        phase: egui::TouchPhase::Move,
        source: egui::MouseWheelSource::Unknown,
    });
    harness.run_steps(5);
    let before = harness.state().ui.offset;
    assert!(before > 100.0, "scrolled down: {before}");
    let seen = top_tokens(&harness);
    assert!(
        seen.as_deref().is_some_and(|t| t.ends_with(" / 7")),
        "a row in view: {seen:?}"
    );
    for n in 301..=305 {
        exchange(&mut harness.state_mut().state, n, "gpt-5.5", false);
    }
    harness.run_steps(3);
    assert_eq!(top_tokens(&harness), seen, "the rows in view stayed");
    harness.get_by_label("Resume (5 new above)").click();
    harness.run_steps(3);
    assert_eq!(harness.state().ui.offset, 0.0);
    assert_eq!(
        harness
            .state()
            .state
            .traffic
            .shown_newest_first(0)
            .map(|r| r.input_tokens),
        Some(Some(405))
    );
}
