//! The Record panel on the whole app (egui_kittest, no GPU) over a real scratch database: the
//! recording proxy is started from the panel (its connection limits shown), a reqwest client streams a request through it to a
//! loopback upstream the test starts, the request appears in the Sessions view as it is recorded
//! (with its outcome), its events and outcome stream into the Sessions view's timeline, and the
//! proxy stops from the panel, after which nothing listens; then the
//! replay endpoint serves that recorded session back to the same client.

use crate::support::ui as ui_support;

use std::time::Duration;

use crate::support::upstream::{End, Reply, Upstream, pieces, sse_file};
use egui_kittest::kittest::Queryable as _;
use pretty_assertions::assert_eq;
use promptwire::core::stream::{TurnState, read_all};
use promptwire::store::summary::OutcomeClass;
use promptwire::store::{Page, Store};
use ui_support::{app_with, replace_text, scratch_dir, state, wait_until};

/// A request body as Codex sends it (streamed, grouped by its `session_id` header).
const BODY: &str = r#"{"model":"gpt-5.5","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hello"}]}],"stream":true}"#;

/// Posts `BODY` to `url` and reads the whole streamed answer.
fn post_through(url: &str) -> (u16, Vec<u8>) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let response = reqwest::Client::new()
            .post(url)
            .header("content-type", "application/json")
            .header("session_id", "live-1")
            .body(BODY)
            .send()
            .await
            .expect("send through the proxy");
        let status = response.status().as_u16();
        let bytes = response.bytes().await.expect("answer");
        (status, bytes.to_vec())
    })
}

#[test]
fn proxy_started_from_the_record_panel_records_live_into_the_session_browser() {
    let answer = sse_file("text-answer.sse");
    let upstream = Upstream::in_order(vec![Reply::answer(
        pieces(&answer, 3, Duration::from_millis(20)),
        End::Complete,
    )]);
    let db = scratch_dir("ui-proxy").join("promptwire.sqlite");
    let mut harness = app_with((1500.0, 950.0), Some(db.clone()));
    ui_support::show_sessions(&mut harness);
    let listed_before = state(&harness).sessions.sessions.len();

    harness.get_by_label("Record").click();
    harness.run_steps(2);
    // A non-loopback address is flagged before anything starts.
    replace_text(&mut harness, "Listen address", "0.0.0.0:0");
    harness.get_by_label(
        "Warning: not a loopback address: other machines can reach it and its recordings",
    );
    replace_text(&mut harness, "Listen address", "127.0.0.1:0");
    replace_text(&mut harness, "Upstream URL", &upstream.base_url());
    harness.get_by_label("Start proxy").click();
    wait_until(&mut harness, "proxy listening", |s| {
        s.record.proxy.addr.is_some()
    });
    let proxy = state(&harness).record.proxy.clone();
    let addr = proxy.addr.expect("address");
    assert_eq!(addr.ip().is_loopback(), true);
    let base_url = format!("http://{addr}/v1");
    assert_eq!(proxy.base_url.as_deref(), Some(base_url.as_str()));
    harness.get_by_label(&format!("Listening on {addr}"));
    // The connection limits it serves with are shown.
    harness.get_by_label(
        "Limits: head 10 s · body pause 10 s · whole request 60 s · 512 connections, 448 per peer",
    );

    // A client pointed at the proxy gets the upstream's stream byte for byte.
    let (status, received) = post_through(&format!("{base_url}/responses"));
    assert_eq!((status, received), (200, answer.clone()));
    let seen = upstream.received();
    assert_eq!(seen.len(), 1);
    assert_eq!(
        (seen[0].method.as_str(), seen[0].path.as_str()),
        ("POST", "/v1/responses")
    );
    assert_eq!(seen[0].body, BODY.as_bytes());

    // The request shows up in the session browser without any refresh by the user.
    wait_until(&mut harness, "recorded request listed", move |s| {
        s.record.proxy.requests == 1
            && s.sessions.sessions.len() == listed_before + 1
            && s.sessions
                .sessions
                .iter()
                .any(|x| x.requests == 1 && x.name.ends_with(" · session:live-1"))
    });
    // The proxied request streamed into the Sessions view's timeline: its events (as the
    // decoder reads the upstream's bytes, independently of the app) and its completed outcome.
    wait_until(&mut harness, "proxied outcome in the timeline", |s| {
        s.browser.timeline.outcome().is_some()
    });
    let (entries, expected) = read_all(&answer, Duration::ZERO);
    let timeline = &state(&harness).browser.timeline;
    let shown: Vec<_> = timeline
        .rows()
        .iter()
        .map(|r| {
            (
                r.entry.raw.seq,
                r.entry.raw.event.clone(),
                r.entry.raw.data.clone(),
            )
        })
        .collect();
    let wanted: Vec<_> = entries
        .iter()
        .map(|e| (e.raw.seq, e.raw.event.clone(), e.raw.data.clone()))
        .collect();
    assert_eq!(shown, wanted);
    let outcome = timeline.outcome().expect("outcome").clone();
    assert_eq!(
        (
            &outcome.state,
            &outcome.text,
            &outcome.usage,
            outcome.events
        ),
        (
            &expected.state,
            &expected.text,
            &expected.usage,
            expected.events
        )
    );
    let TurnState::Completed { response_id, .. } = &expected.state else {
        panic!("the fixture completes: {:?}", expected.state);
    };
    harness.run_steps(2);
    harness.get_by_label("proxied request #1 (live)");
    harness.get_by_label(&format!("completed · {response_id}"));
    let session = state(&harness).record.proxy.session.expect("session");
    let created_us = state(&harness)
        .sessions
        .sessions
        .iter()
        .find(|s| s.id == session)
        .expect("listed")
        .created_us;
    let time = chrono::DateTime::from_timestamp_micros(created_us)
        .expect("time")
        .format("%H:%M");
    let label = format!("#{session} proxy · \"hello\" · {time} · 1 req · gpt-5.5");
    harness.get_by_label(&label).click();
    // Its outcome follows once the recorder has committed it.
    wait_until(&mut harness, "recorded outcome shown", |s| {
        s.record.proxy.finished == 1
            && s.sessions.rows.len() == 1
            && s.sessions.rows[0].outcome != OutcomeClass::None
            && s.browser.analysis.is_some()
    });
    let row = state(&harness).sessions.rows[0].clone();
    assert_eq!(
        (row.position, row.status, row.outcome),
        (0, Some(200), OutcomeClass::Completed)
    );
    let store = Store::open(&db).expect("db");
    assert_eq!(store.body(row.id).expect("body").bytes, BODY.as_bytes());
    let sessions = store.list_sessions(Page::first(100)).expect("sessions");
    assert_eq!(
        sessions.iter().filter(|s| s.id == session).count(),
        1,
        "the recorded session is in the store"
    );
    harness.get_by_label("1 request · 0 in flight · 0 errors");
    // Another endpoint is relayed, not recorded, and the panel counts it by kind.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let models = runtime.block_on(async {
        reqwest::Client::new()
            .get(format!("{base_url}/models?limit=5"))
            .send()
            .await
            .map(|r| r.status().as_u16())
    });
    // (The test's upstream serves one connection: the proxy answers 502 for it, still relayed.)
    assert!(models.is_ok(), "the proxy answers: {models:?}");
    wait_until(&mut harness, "passthrough counted", |s| {
        !s.record.proxy.passthrough.is_empty()
    });
    harness.get_by_label("1 request passed through, not recorded: GET /v1/models ×1");
    assert_eq!(
        state(&harness).record.proxy.requests,
        1,
        "a passthrough is not a recorded request"
    );

    // Stop: the panel says so and nothing listens any more.
    harness.get_by_label("Stop proxy").click();
    wait_until(&mut harness, "proxy stopped", |s| {
        !s.record.proxy.is_active()
    });
    harness.get_by_label("Start proxy");
    assert_eq!(std::net::TcpStream::connect(addr).is_err(), true);

    // The replay endpoint serves the open (recorded) session to the same client, instantly.
    harness.get_by_label(&format!("Will serve session #{session} (open in Sessions)"));
    replace_text(&mut harness, "Replay listen address", "127.0.0.1:0");
    harness.get_by_label("instant (no waits)").click();
    harness.get_by_label("Start replay endpoint").click();
    wait_until(&mut harness, "replay endpoint listening", |s| {
        s.record.replay.addr.is_some()
    });
    let replay_addr = state(&harness).record.replay.addr.expect("address");
    harness.get_by_label(&format!("Serves session #{session}"));
    let (status, replayed) = post_through(&format!("http://{replay_addr}/v1/responses"));
    let (_, expected) = read_all(&answer, Duration::ZERO);
    let (_, served) = read_all(&replayed, Duration::ZERO);
    assert_eq!(
        (status, &served.text, &served.usage, served.events),
        (200, &expected.text, &expected.usage, expected.events)
    );
    // The incoming request is stored as a session linked to the recording, listed live.
    wait_until(&mut harness, "replay session listed", |s| {
        s.record.replay.requests == 1
            && s.sessions.sessions.iter().any(|x| {
                x.name.starts_with("replay of proxy · \"hello\" · ")
                    && x.name.ends_with(" · session:live-1")
                    && x.requests == 1
            })
    });
    harness.get_by_label("Stop replay endpoint").click();
    wait_until(&mut harness, "replay endpoint stopped", |s| {
        !s.record.replay.is_active()
    });
    assert_eq!(std::net::TcpStream::connect(replay_addr).is_err(), true);
}
