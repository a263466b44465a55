//! One replay, one set of times: on a real database seeded from the bundled sample sessions
//! (imported from `sessions/samples/*.har`, each event with its recorded time), every request
//! of every session replayed by the built binary (`promptwire replay --timing instant --json`)
//! and by the whole app (the Sessions view's instant replay, egui_kittest) shows the same
//! recorded times — each event's receive time and the outcome's timings — and those are the
//! stored times of the recording, not the moment of the replay.

use crate::support::ui as ui_support;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use egui::Key;
use egui_kittest::kittest::Queryable as _;
use pretty_assertions::assert_eq;
use promptwire::app::AppState;
use promptwire::app::session_view::MainView;
use promptwire::core::stream::TurnOutcome;
use promptwire::store::{Page, Store};
use serde_json::{Value, json};
use ui_support::{App, app_with, scratch_dir, state, wait_until};

/// The recorded times a replay shows for one request: `(seq, receive time in µs)` per event,
/// and the outcome's timings.
#[derive(Debug, Clone, PartialEq)]
struct Times {
    events: Vec<(u64, u64)>,
    timings: Value,
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).expect("fits")
}

/// The outcome's timings as the CLI prints them.
fn timings(outcome: &TurnOutcome) -> Value {
    let t = &outcome.timings;
    json!({
        "first_event_us": t.first_event.map(micros),
        "first_text_us": t.first_text.map(micros),
        "last_event_us": t.last_event.map(micros),
        "total_us": t.total.map(micros),
    })
}

/// `promptwire replay --session S --request N --timing instant --json --db DB`, read back.
fn cli_times(db: &Path, session: i64, position: i64) -> Times {
    let out = Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .args([
            "replay",
            "--session",
            &session.to_string(),
            "--request",
            &position.to_string(),
            "--timing",
            "instant",
            "--json",
            "--db",
            db.to_str().expect("path"),
        ])
        .output()
        .expect("run promptwire");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let mut events = Vec::new();
    let mut outcome = None;
    for line in String::from_utf8(out.stdout).expect("utf8").lines() {
        let value: Value = serde_json::from_str(line).expect("a JSON line");
        if value.get("outcome").is_some() {
            assert_eq!(outcome, None, "one outcome line");
            outcome = Some(value["timings"].clone());
        } else {
            let seq = value["seq"].as_u64().expect("seq");
            let at = value["at_us"].as_u64().expect("at_us");
            events.push((seq, at));
        }
    }
    Times {
        events,
        timings: outcome.expect("an outcome line"),
    }
}

/// Moves the Sessions view's selection to row `index`.
fn select(harness: &mut App, index: usize) {
    for _ in 0..20 {
        match state(harness).browser.selected {
            Some(i) if i == index => return,
            Some(i) if i > index => harness.key_press(Key::K),
            _ => harness.key_press(Key::J),
        }
        harness.run_steps(2);
    }
    panic!("row {index} could not be selected");
}

/// The app's instant replay of row `index` of the open session, read back from its timeline.
fn app_times(harness: &mut App, session: i64, index: usize) -> Times {
    select(harness, index);
    let position = state(harness).sessions.rows[index].position;
    let generation = state(harness).browser.replay.generation.current();
    harness.get_by_label("instant").click();
    wait_until(harness, "replay finished", |s: &AppState| {
        let replay = &s.browser.replay;
        replay.generation.current() == generation + 1
            && replay.request == Some((session, position))
            && replay.job.is_none()
            && s.browser.timeline.outcome().is_some()
    });
    let timeline = &state(harness).browser.timeline;
    Times {
        events: timeline
            .rows()
            .iter()
            .map(|r| (r.entry.raw.seq, micros(r.entry.raw.received_at)))
            .collect(),
        timings: timings(timeline.outcome().expect("outcome")),
    }
}

#[test]
fn cli_and_app_replays_show_the_same_recorded_times() {
    let db = scratch_dir("replay-same-times").join("promptwire.sqlite");
    let mut harness = app_with((1500.0, 950.0), Some(db.clone()));
    harness
        .get_by_role_and_label(egui::accesskit::Role::Button, "Sessions")
        .click();
    wait_until(&mut harness, "sessions listed", |s| {
        s.browser.view == MainView::Sessions && !s.sessions.sessions.is_empty()
    });
    let store = Store::open(&db).expect("db");
    let sessions = store.list_sessions(Page::ALL).expect("sessions");
    assert_eq!(sessions.len(), 4, "the four bundled samples");
    let mut replayed = 0;
    let mut timed = 0;
    for session in &sessions {
        harness
            .get_by_label_contains(&format!("#{} {} ·", session.id, session.name))
            .click();
        wait_until(&mut harness, "session open", |s: &AppState| {
            s.sessions.open == Some(session.id) && s.sessions.rows.len() as i64 == session.requests
        });
        let rows: Vec<(i64, i64)> = state(&harness)
            .sessions
            .rows
            .iter()
            .map(|r| (r.id, r.position))
            .collect();
        for (index, (request, position)) in rows.into_iter().enumerate() {
            let cli = cli_times(&db, session.id, position);
            let app = app_times(&mut harness, session.id, index);
            let what = format!(
                "session {} ({}), request {position}",
                session.id, session.name
            );
            assert_eq!(cli, app, "{what}");
            // And they are the recording's times: each stored event's receive time.
            let stored: Vec<(u64, u64)> = store
                .events(request, Page::ALL)
                .expect("events")
                .iter()
                .map(|e| (e.seq, micros(e.received_at)))
                .collect();
            // A replay shows the events up to the end of the turn (none after a completion).
            assert_eq!(cli.events, stored[..cli.events.len()], "{what}");
            assert_eq!(
                cli.timings["first_event_us"],
                json!(stored.first().map(|e| e.1)),
                "{what}"
            );
            replayed += 1;
            timed += usize::from(stored.iter().any(|e| e.1 > 0));
        }
    }
    assert_eq!(replayed, 10, "every request of the samples");
    assert_eq!(timed, 9, "every streamed request has its recorded times");
}
