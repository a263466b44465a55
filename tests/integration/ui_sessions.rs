//! The Sessions view on the whole app (egui_kittest, no GPU) over a real database seeded from
//! the bundled samples in a scratch directory, as the app's default database is: the browser
//! flags the failed turns of `failing-stream`, an instant replay fills the timeline with the
//! recorded events and outcome, 1× and 4× keep the recorded pace and step mode moves one event
//! at a time, the `cache-prefix-break` sample shows its break with its cause at the text
//! pointer, a changed `prompt_cache_key` is shown as a warning (never a bare "kept"), the charts
//! are drawn with one point per request, the keyboard moves and opens, two requests compare with
//! the structural diff, a re-send streams beside the recorded outcome and stops at once, the
//! list says how much room the database takes on disk; "Compare: right" opens Compare with room
//! for the bodies at 1024×700, and sorting and a comparison reset when another session opens.

use crate::support::sample_har;
use crate::support::ui as ui_support;

use std::time::Duration;

use crate::support::upstream::{End, Reply, Upstream, pieces, sse_file};
use egui::accesskit::Role;
use egui::{Key, Modifiers};
use egui_kittest::kittest::Queryable as _;
use pretty_assertions::assert_eq;
use promptwire::app::event::PromptSource;
use promptwire::app::session_view::{LineKind, MainView};
use promptwire::app::{AppCommand, AppState, PromptEdit};
use promptwire::core::json_diff::align;
use promptwire::core::provider::ProviderKind;
use promptwire::core::stream::{ErrorClass, StreamReader, read_all};
use promptwire::store::summary::OutcomeClass;
use promptwire::store::{Page, Store};
use ui_support::{App, app_with, scratch_dir, state, wait_until};

/// The app on a freshly seeded database, showing the Sessions view with the list read.
fn sessions_app(name: &str) -> (App, std::path::PathBuf) {
    let db = scratch_dir(name).join("promptwire.sqlite");
    let mut harness = app_with((1500.0, 950.0), Some(db.clone()));
    ui_support::show_sessions(&mut harness);
    (harness, db)
}

/// Opens the session whose list entry reads `label` and waits for its analysis.
fn open_session(harness: &mut App, label: &str) {
    harness.get_by_label(label).click();
    wait_until(harness, "session analysed", |s: &AppState| {
        !s.sessions.rows.is_empty() && s.browser.analysis.is_some()
    });
}

#[test]
fn the_list_says_how_much_room_the_database_takes() {
    let (mut harness, db) = sessions_app("sessions-disk");
    harness.run();
    let bytes = ["", "-wal"]
        .iter()
        .filter_map(|suffix| std::fs::metadata(format!("{}{suffix}", db.display())).ok())
        .map(|m| m.len())
        .sum::<u64>();
    assert_eq!(state(&harness).sessions.db_bytes, Some(bytes));
    let name = db.file_name().expect("name").to_string_lossy().into_owned();
    let shown = format!(
        "Database: {name} · {} on disk",
        promptwire::core::stream::limits::human_size(bytes)
    );
    harness.get_by_label(&shown);
}

#[test]
fn failing_stream_opens_with_its_failed_turns_flagged() {
    let (mut harness, _db) = sessions_app("sessions-failing");
    open_session(&mut harness, "#3 failing-stream · 3 req · gpt-5.5");
    let rows: Vec<(i64, Option<u16>, OutcomeClass, u64)> = state(&harness)
        .sessions
        .rows
        .iter()
        .map(|r| (r.position, r.status, r.outcome.clone(), r.events))
        .collect();
    assert_eq!(
        rows,
        vec![
            // response.failed (rate_limit_exceeded): the stream failed under HTTP 200.
            (
                0,
                Some(200),
                OutcomeClass::Failed("retryable".to_string()),
                2
            ),
            (1, Some(500), OutcomeClass::Http(500), 0),
            // Deltas and then the connection closed without response.completed.
            (2, Some(200), OutcomeClass::Incomplete, 4),
        ]
    );
    // Each flag is on screen, the HTTP 200 ones included.
    for label in [
        "! 200 · failed: retryable",
        "! HTTP 500",
        "! 200 · incomplete",
    ] {
        harness.get_by_label(label);
    }
}

#[test]
fn an_instant_replay_fills_the_timeline_with_the_recorded_events_and_outcome() {
    let (mut harness, db) = sessions_app("sessions-replay");
    open_session(&mut harness, "#3 failing-stream · 3 req · gpt-5.5");
    let request = state(&harness).sessions.rows[2].id;
    harness.key_press(Key::J);
    harness.key_press(Key::J);
    harness.run_steps(3);
    assert_eq!(state(&harness).browser.selected, Some(2));
    harness.get_by_label("instant").click();
    wait_until(&mut harness, "replay finished", |s| {
        s.browser.timeline.outcome().is_some()
    });
    // The same recorded events through the decoder, independently of the app.
    let store = Store::open(&db).expect("db");
    let events = store.events(request, Page::ALL).expect("events");
    let mut reader = StreamReader::new();
    let mut expected = Vec::new();
    for event in &events {
        expected.extend(reader.push(&event.to_sse(), event.received_at));
    }
    let recorded = store.outcome(request).expect("outcome").expect("recorded");
    let end = Duration::from_micros(recorded.total_us.unwrap_or(0) as u64);
    expected.extend(reader.finish(end));
    let timeline = &state(&harness).browser.timeline;
    let shown: Vec<_> = timeline.rows().iter().map(|r| r.entry.clone()).collect();
    assert_eq!(shown, expected);
    assert_eq!(timeline.outcome(), Some(reader.outcome()));
    assert_eq!(
        state(&harness).browser.replay.recorded.as_deref(),
        Some(&recorded)
    );
    harness.get_by_label(&promptwire::ui::sessions::recorded_text(&recorded));
}

#[test]
fn the_cache_prefix_sample_shows_its_break_cause_and_pointer() {
    let (mut harness, _db) = sessions_app("sessions-prefix");
    open_session(&mut harness, "#4 cache-prefix-break · 3 req · gpt-5.5");
    wait_until(&mut harness, "pair diff", |s| s.browser.pair_diff.is_some());
    let analysis = state(&harness).browser.analysis.clone().expect("analysis");
    let row = analysis.row(2).expect("row 2");
    let v = row.verdict.as_ref().expect("verdict");
    let d = v.divergence.as_ref().expect("a break");
    // The base instructions (Codex's first developer message) were edited at their end: the
    // break is inside them, to the token, and every token before the edit is reusable.
    let layout = &analysis.ledger.rendered.layouts[1];
    let instructions_end = layout.cum[layout.sections.instructions];
    assert_eq!(
        (
            d.pointer.as_str(),
            d.source,
            v.causes.clone(),
            v.reusable_tokens <= instructions_end,
            v.reusable_tokens + 8 >= instructions_end
        ),
        (
            "/input/0/content/0/text",
            promptwire::core::ledger::Source::Instructions,
            vec![promptwire::core::ledger::Cause::InputChanged],
            true,
            true
        ),
        "reusable {} of the {instructions_end} tokens through the instructions",
        v.reusable_tokens
    );
    harness.get_by_label(&promptwire::app::session_view::break_text(row));
    harness.get_by_label("» prefix broke at /input/0/content/0/text · input_changed");
    // The edit is at the end of a 3.6 KB text, far off screen: a detail line says where.
    harness.get_by_label_contains("{+ Answer in one sentence.+}");
    let browser = &state(&harness).browser;
    assert_eq!(browser.pair, Some((1, 2)));
    let view = browser.pair_diff.as_ref().expect("pair view");
    let first = view.first_difference.expect("a difference");
    assert_eq!(
        view.lines[first].text,
        "» prefix broke at /input/0/content/0/text · input_changed"
    );
    // The changed lines at the pointer (`"text": …`, not the derived id) are marked.
    let at_pointer: Vec<(LineKind, bool)> = view
        .lines
        .iter()
        .filter(|l| l.at_pointer)
        .map(|l| {
            let member = l.text.trim_start_matches(['-', '+', ' ']);
            (l.kind, member.starts_with("\"text\":"))
        })
        .collect();
    assert_eq!(
        at_pointer,
        [(LineKind::Delete, true), (LineKind::Insert, true)]
    );
    let badges: Vec<String> = browser
        .analysis
        .as_ref()
        .expect("analysis")
        .badges
        .iter()
        .map(|b| b.label())
        .collect();
    assert_eq!(
        badges,
        [
            "first",
            "kept",
            "broken: input_changed · ! server shortfall"
        ]
    );
}

#[test]
fn a_one_request_session_charts_its_one_point() {
    let (mut harness, _db) = sessions_app("sessions-one-point");
    open_session(&mut harness, "#2 lite-image · 1 req · gpt-6-sol");
    harness.get_by_label("1 request");
    harness.get_by_role_and_label(
        Role::Figure,
        "Payload growth: sent 1 point, whole history 1 point",
    );
}

#[test]
fn the_charts_have_one_point_per_request() {
    let (mut harness, _db) = sessions_app("sessions-charts");
    open_session(&mut harness, "#4 cache-prefix-break · 3 req · gpt-5.5");
    harness.get_by_label("Payload growth");
    let analysis = state(&harness).browser.analysis.clone().expect("analysis");
    // The plots themselves were drawn: each plot's response names what it drew, and the legend
    // of every series is there.
    harness.get_by_role_and_label(
        Role::Figure,
        &format!(
            "Input tokens per request: 3 requests, {} breaks, 0 compactions",
            analysis.ledger.summary.breaks
        ),
    );
    harness.get_by_role_and_label(
        Role::Figure,
        "Payload growth: sent 3 points, whole history 3 points",
    );
    for series in [
        "read from the cache",
        "written to it",
        "not cached",
        "sent",
        "whole history",
    ] {
        harness.get_by_label(series);
    }
    let xs = |series: &[[f64; 2]]| series.iter().map(|p| p[0]).collect::<Vec<_>>();
    let per_request = vec![0.0, 1.0, 2.0];
    let w = &analysis.waterfall;
    assert_eq!(xs(&w.read), per_request);
    assert_eq!(xs(&w.uncached), per_request);
    assert_eq!(xs(&analysis.sent_bytes), per_request);
    assert_eq!(xs(&analysis.full_history_bytes), per_request);
    // The server reported cached_tokens for each request of the sample: the waterfall's reads
    // are the server's.
    let server: Vec<[f64; 2]> = state(&harness)
        .sessions
        .rows
        .iter()
        .filter_map(|r| Some([r.position as f64, r.cached_tokens? as f64]))
        .collect();
    assert_eq!(w.read, server);
    assert_eq!(server.len(), 3);
}

#[test]
fn keyboard_moves_opens_in_the_form_and_focuses_search() {
    let (mut harness, _db) = sessions_app("sessions-keys");
    open_session(&mut harness, "#1 tool-calls · 3 req · gpt-5.5");
    harness.key_press(Key::ArrowDown);
    harness.run_steps(2);
    harness.key_press(Key::J);
    harness.run_steps(2);
    harness.key_press(Key::K);
    harness.run_steps(2);
    assert_eq!(state(&harness).browser.selected, Some(1));
    let request = state(&harness).sessions.rows[1].id;
    harness.key_press(Key::Enter);
    wait_until(&mut harness, "loaded into the form", move |s| {
        s.sessions.loaded_request == Some(request)
    });
    assert_eq!(state(&harness).browser.view, MainView::Workbench);
    assert_eq!(
        state(&harness).source,
        Some(PromptSource::Stored {
            session: 1,
            request,
            position: 1
        })
    );
    harness
        .get_by_role_and_label(Role::Button, "Sessions")
        .click();
    harness.run_steps(2);
    harness.key_press(Key::Slash);
    harness.run_steps(2);
    assert!(harness.get_by_label("Search sessions").is_focused());
    harness.get_by_label("Search sessions").type_text("lite");
    harness.key_press(Key::Enter);
    wait_until(&mut harness, "search", |s| {
        s.sessions.search == "lite" && s.sessions.sessions.len() == 1
    });
    assert_eq!(state(&harness).sessions.sessions[0].name, "lite-image");
}

#[test]
fn two_requests_compare_with_the_structural_diff() {
    let (mut harness, db) = sessions_app("sessions-compare");
    open_session(&mut harness, "#4 cache-prefix-break · 3 req · gpt-5.5");
    harness
        .get_by_role_and_label(Role::Button, "Compare")
        .click();
    harness.run_steps(2);
    harness.get_by_label("Compare: left").click();
    harness.run_steps(2);
    harness.key_press(Key::J);
    harness.key_press(Key::J);
    harness.run_steps(2);
    harness.get_by_label("Compare: right").click();
    wait_until(&mut harness, "compared", |s| {
        s.browser.compare.result.is_some()
    });
    let store = Store::open(&db).expect("db");
    let rows = &state(&harness).sessions.rows;
    let a = store.body(rows[0].id).expect("body").value.expect("json");
    let b = store.body(rows[2].id).expect("body").value.expect("json");
    let compared = state(&harness)
        .browser
        .compare
        .result
        .clone()
        .expect("result");
    assert_eq!(compared.aligned, align(&[Some(&a), Some(&b)]));
    assert!(!compared.aligned.differences.is_empty());
}

#[test]
fn shortcuts_switch_views_open_sessions_and_replay() {
    let db = scratch_dir("sessions-shortcuts").join("promptwire.sqlite");
    let mut harness = app_with((1500.0, 950.0), Some(db));
    harness.key_press_modifiers(Modifiers::COMMAND, Key::Num2);
    wait_until(&mut harness, "sessions listed", |s| {
        s.browser.view == MainView::Sessions && s.sessions.sessions.len() == 4
    });
    // Newest first: Shift+J opens #4, then #3; Shift+K goes back to #4.
    for (key, want) in [(Key::J, 4), (Key::J, 3), (Key::K, 4)] {
        harness.key_press_modifiers(Modifiers::SHIFT, key);
        wait_until(&mut harness, "session open", move |s| {
            s.sessions.open == Some(want)
                && s.browser
                    .analysis
                    .as_ref()
                    .is_some_and(|a| a.session == want)
        });
    }
    harness.key_press(Key::R);
    wait_until(&mut harness, "replayed", |s| {
        s.browser.timeline.outcome().is_some()
    });
    assert_eq!(state(&harness).browser.replay.request, Some((4, 0)));
    harness.key_press_modifiers(Modifiers::COMMAND, Key::Num1);
    harness.run_steps(2);
    assert_eq!(state(&harness).browser.view, MainView::Workbench);
}

#[test]
fn resend_streams_a_new_answer_beside_the_recorded_one_and_records_it() {
    let server = Upstream::in_order(vec![Reply::answer(
        pieces(&sse_file("text-answer.sse"), 3, Duration::from_millis(20)),
        End::Complete,
    )]);
    let (mut harness, db) = sessions_app("sessions-resend");
    // The workbench's provider: a Responses-compatible endpoint on loopback (no key).
    let mut target = state(&harness).prompt.compile.clone();
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
    open_session(&mut harness, "#1 tool-calls · 3 req · gpt-5.5");
    harness.get_by_label("Re-send").click();
    wait_until(&mut harness, "re-sent and recorded", |s| {
        s.browser.replay.job.is_none() && s.sessions.rows.len() == 4 && s.browser.analysis.is_some()
    });
    let store = Store::open(&db).expect("db");
    let rows = state(&harness).sessions.rows.clone();
    let sent = store.body(rows[0].id).expect("body").bytes;
    let received = server.received();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].body, sent);
    // Recorded as a new request of the same session, with the same body and the new outcome.
    assert_eq!(rows[3].position, 3);
    assert_eq!(store.body(rows[3].id).expect("body").bytes, sent);
    let timeline = &state(&harness).browser.timeline;
    let outcome = timeline.outcome().expect("outcome").clone();
    let (_, expected) = read_all(&sse_file("text-answer.sse"), Duration::ZERO);
    assert_eq!(
        (&outcome.text, &outcome.usage, outcome.events),
        (&expected.text, &expected.usage, expected.events)
    );
    let stored = store
        .outcome(rows[3].id)
        .expect("outcome")
        .expect("recorded");
    assert_eq!(
        (stored.state.as_str(), &stored.text),
        ("completed", &expected.text)
    );
    // Both outcomes on screen, side by side.
    let recorded = store
        .outcome(rows[0].id)
        .expect("outcome")
        .expect("recorded");
    harness.get_by_label(&promptwire::ui::sessions::recorded_text(&recorded));
    harness.get_by_label(&promptwire::ui::sessions::resent_text(&outcome));
    // And in full, column by column: usage with cached tokens, timings, items, the whole text.
    let (input, cached, output) =
        promptwire::store::summary::usage_tokens(recorded.usage.as_ref().expect("recorded usage"));
    let usage = outcome.usage.expect("usage");
    let ms = |us: Option<i64>| format!("{} ms", us.expect("timing") / 1000);
    for label in [
        "recorded state: completed".to_string(),
        "re-sent state: completed".to_string(),
        format!(
            "recorded tokens: {} in ({} cached) / {} out",
            input.expect("input"),
            cached.expect("cached"),
            output.expect("output")
        ),
        format!(
            "re-sent tokens: {} in ({} cached) / {} out",
            usage.input_tokens, usage.cached_input_tokens, usage.output_tokens
        ),
        format!("recorded duration: {}", ms(recorded.total_us)),
        format!("recorded first event: {}", ms(recorded.first_event_us)),
        format!(
            "re-sent first event: {} ms",
            outcome
                .timings
                .first_event
                .expect("first event")
                .as_millis()
        ),
        format!(
            "re-sent duration: {} ms",
            outcome.timings.total.expect("total").as_millis()
        ),
        // The recorded first turn called the shell tool; the new answer is a message.
        "recorded items: function_call shell".to_string(),
        "re-sent items: message".to_string(),
    ] {
        harness.get_by_label(&label);
    }
    assert!(
        expected.text.chars().count() > 60,
        "a text longer than 60 chars"
    );
    // Whole in the re-sent column: collapsing the side-by-side view takes exactly that one away
    // (the timeline shows the text too).
    let shown = harness.query_all_by_label(&expected.text).count();
    harness.get_by_label("Recorded vs re-sent").click();
    harness.run_steps(3);
    assert_eq!(
        harness.query_all_by_label(&expected.text).count(),
        shown - 1
    );
}

/// The app re-sending tool-calls turn 0 to a loopback server that sends one event and then
/// nothing for a minute, once that event has arrived (only cancelling the send ends it).
fn stalled_resend(name: &str) -> (App, std::path::PathBuf, Upstream) {
    let first_event = b"event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_stall\",\"status\":\"in_progress\"}}\n\n".to_vec();
    let server = Upstream::in_order(vec![Reply::answer(
        vec![(Duration::ZERO, first_event)],
        End::Hang(Duration::from_secs(60)),
    )]);
    let (mut harness, db) = sessions_app(name);
    let mut target = state(&harness).prompt.compile.clone();
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
    open_session(&mut harness, "#1 tool-calls · 3 req · gpt-5.5");
    harness.get_by_label("Re-send").click();
    wait_until(&mut harness, "the first event arrived", |s| {
        !s.browser.timeline.rows().is_empty()
    });
    harness.run_steps(2);
    (harness, db, server)
}

#[test]
fn stop_ends_a_stalled_resend_at_once_and_records_it_interrupted() {
    let (mut harness, db, _server) = stalled_resend("sessions-resend-stop");
    assert!(
        state(&harness).browser.replay.job.is_some(),
        "still streaming"
    );
    let stopped = std::time::Instant::now();
    harness.get_by_role_and_label(Role::Button, "Stop").click();
    wait_until(&mut harness, "stopped, recorded and reloaded", |s| {
        s.browser.replay.job.is_none() && s.sessions.rows.len() == 4
    });
    let took = stopped.elapsed();
    assert!(took < Duration::from_secs(5), "Stop took {took:?}");
    let rows = state(&harness).sessions.rows.clone();
    assert_eq!(rows[3].outcome, OutcomeClass::Interrupted);
    let store = Store::open(&db).expect("db");
    let stored = store
        .outcome(rows[3].id)
        .expect("outcome")
        .expect("recorded");
    assert_eq!(
        (
            stored.state.as_str(),
            stored.error_class.as_ref().map(|c| c.as_str()),
            stored.events
        ),
        ("failed", Some("cancelled"), 1)
    );
    harness.get_by_label(&promptwire::ui::sessions::status_text(&rows[3]));
    harness.get_by_label("re-sent state: failed (cancelled)");
}

#[test]
fn a_changed_prompt_cache_key_is_shown_as_a_warning_not_as_kept() {
    // The seeded database plus the tool-calls sample whose last request has another cache key.
    let db = scratch_dir("sessions-cache-key").join("promptwire.sqlite");
    let har = sample_har::variant("tool-calls.har", "cache-key-change", |position, body, _| {
        if position == 2 {
            body["prompt_cache_key"] = serde_json::Value::String("another-thread".to_string());
        }
    });
    let mut store = promptwire::store::seed::open_seeded(&db).expect("seeded db");
    store
        .import_har(&har, "cache-key-change", std::path::Path::new("key.har"))
        .expect("import");
    drop(store);
    let mut harness = app_with((1500.0, 950.0), Some(db));
    harness
        .get_by_role_and_label(Role::Button, "Sessions")
        .click();
    wait_until(&mut harness, "sessions listed", |s| {
        s.sessions.sessions.len() == 5
    });
    open_session(&mut harness, "#5 cache-key-change · 3 req · gpt-5.5");
    // No break, so the warned pair is the one shown.
    wait_until(&mut harness, "pair shown", |s| {
        s.browser.pair == Some((1, 2))
    });
    let analysis = state(&harness).browser.analysis.clone().expect("analysis");
    let labels: Vec<String> = analysis.badges.iter().map(|b| b.label()).collect();
    // Request 2 starts a new user turn (the server stops rendering the earlier reasoning:
    // expected) under another cache key.
    let badge = "new turn (earlier reasoning dropped) · ! cache key change";
    assert_eq!(labels, ["first", "kept", badge]);
    let row = analysis.row(2).expect("row 2");
    // On screen: the table's badge, the row in "Breaks and warnings", its explanation and fix.
    harness.get_by_label(badge);
    harness.get_by_label("Breaks and warnings");
    harness.get_by_label(&promptwire::app::session_view::break_text(row));
    let cause = promptwire::core::ledger::Cause::PromptCacheKeyChanged;
    harness.get_by_label(&format!(
        "prompt_cache_key_changed: {} Fix: {}",
        cause.explanation(),
        cause.fix().expect("a fix")
    ));
}

/// Replays the selected request at `speed` and returns how long it took on the wall clock.
fn timed_replay(harness: &mut App, speed: &str) -> Duration {
    let started = std::time::Instant::now();
    harness.get_by_role_and_label(Role::Button, speed).click();
    wait_until(harness, "replay finished", |s| {
        s.browser.replay.job.is_none() && s.browser.timeline.outcome().is_some()
    });
    started.elapsed()
}

#[test]
fn original_and_4x_replays_keep_the_recorded_pace() {
    let (mut harness, db) = sessions_app("sessions-replay-pace");
    open_session(&mut harness, "#1 tool-calls · 3 req · gpt-5.5");
    let request = state(&harness).sessions.rows[0].id;
    let store = Store::open(&db).expect("db");
    let recorded = store.outcome(request).expect("outcome").expect("recorded");
    let total = Duration::from_micros(recorded.total_us.expect("total") as u64);
    assert!(
        total >= Duration::from_millis(500),
        "a recording long enough to time: {total:?}"
    );
    let original = timed_replay(&mut harness, "1×");
    let fast = timed_replay(&mut harness, "4×");
    let instant = timed_replay(&mut harness, "instant");
    // Never earlier than due. The harness adds its frames to each replay alike (what the
    // instant one takes), so the pace is read from the differences: 4× takes a quarter of the
    // recording more than instant, 1× three quarters more than 4× (bounds with room for a busy
    // machine, yet failing when 4× runs instant or at 1×).
    let timings = format!("1× {original:?}, 4× {fast:?}, instant {instant:?}, recorded {total:?}");
    assert!(original >= total, "{timings}");
    assert!(fast >= total / 4, "{timings}");
    assert!(fast.saturating_sub(instant) <= total * 3 / 4, "{timings}");
    // 4× waits for its events (a good part of a quarter of the recording more than instant),
    // told apart only while the harness's own frames are quick: on a machine so busy that the
    // instant replay alone takes a quarter of the recording, the two differ by noise.
    if instant < total / 4 {
        assert!(fast.saturating_sub(instant) >= total / 8, "{timings}");
    }
    assert!(original.saturating_sub(fast) >= total * 3 / 8, "{timings}");
    assert!(instant < fast, "instant {instant:?}, 4× {fast:?}");
    // Each pace shows the same recorded events.
    assert_eq!(
        state(&harness).browser.timeline.rows().len(),
        recorded.events as usize
    );
}

#[test]
fn step_mode_shows_one_more_or_one_fewer_event() {
    let (mut harness, _db) = sessions_app("sessions-step");
    open_session(&mut harness, "#1 tool-calls · 3 req · gpt-5.5");
    // The instant replay, for what every step is compared with.
    harness
        .get_by_role_and_label(Role::Button, "instant")
        .click();
    wait_until(&mut harness, "instant replay", |s| {
        s.browser.timeline.outcome().is_some()
    });
    let all: Vec<_> = state(&harness)
        .browser
        .timeline
        .rows()
        .iter()
        .map(|r| r.entry.clone())
        .collect();
    let outcome = state(&harness).browser.timeline.outcome().cloned();
    assert!(all.len() >= 3, "{} events", all.len());
    harness.get_by_role_and_label(Role::Button, "step").click();
    wait_until(&mut harness, "buffered", |s| {
        s.browser.replay.job.is_none() && !s.browser.replay.buffer.is_empty()
    });
    let n = all.len();
    let shown = |harness: &App| -> Vec<_> {
        state(harness)
            .browser
            .timeline
            .rows()
            .iter()
            .map(|r| r.entry.clone())
            .collect()
    };
    assert_eq!(shown(&harness), Vec::new());
    harness.get_by_label(&format!("0 / {n}"));
    for _ in 0..2 {
        harness
            .get_by_role_and_label(Role::Button, "Next event ›")
            .click();
        harness.run_steps(2);
    }
    assert_eq!(shown(&harness), all[..2].to_vec());
    harness.get_by_label(&format!("2 / {n}"));
    assert_eq!(state(&harness).browser.timeline.outcome(), None);
    harness
        .get_by_role_and_label(Role::Button, "‹ Previous event")
        .click();
    harness.run_steps(2);
    assert_eq!(shown(&harness), all[..1].to_vec());
    harness.get_by_label(&format!("1 / {n}"));
    // Previous at the start stays at 0; Next past the end stays at the end, with the outcome.
    for _ in 0..3 {
        harness
            .get_by_role_and_label(Role::Button, "‹ Previous event")
            .click();
        harness.run_steps(1);
    }
    assert_eq!(shown(&harness), Vec::new());
    for _ in 0..n + 2 {
        harness
            .get_by_role_and_label(Role::Button, "Next event ›")
            .click();
        harness.run_steps(1);
    }
    harness.run_steps(2);
    assert_eq!(shown(&harness), all);
    harness.get_by_label(&format!("{n} / {n}"));
    assert_eq!(state(&harness).browser.timeline.outcome().cloned(), outcome);
}

#[test]
fn a_kept_pair_the_server_did_not_serve_reads_server_shortfall() {
    // The tool-calls sample with a long developer message shared by every request (a kept,
    // cacheable prefix), and the server reporting 0 cached tokens for the second request.
    let db = scratch_dir("sessions-server-missed").join("promptwire.sqlite");
    // The server serves the third request as the rules predict.
    let served = sample_har::predicted_reads(&sample_har::long_prefix_session("x", [0, 0, 0]))[2];
    let har = sample_har::long_prefix_session("server-missed", [0, 0, served]);
    let mut store = promptwire::store::seed::open_seeded(&db).expect("seeded db");
    store
        .import_har(&har, "server-missed", std::path::Path::new("missed.har"))
        .expect("import");
    drop(store);
    let mut harness = app_with((1500.0, 950.0), Some(db));
    harness
        .get_by_role_and_label(Role::Button, "Sessions")
        .click();
    wait_until(&mut harness, "sessions listed", |s| {
        s.sessions.sessions.len() == 5
    });
    open_session(&mut harness, "#5 server-missed · 3 req · gpt-5.5");
    wait_until(&mut harness, "pair shown", |s| {
        s.browser.pair == Some((0, 1))
    });
    let analysis = state(&harness).browser.analysis.clone().expect("analysis");
    let row = analysis.row(1).expect("row 1");
    harness.get_by_label("kept · ! server shortfall");
    harness.get_by_label(&promptwire::app::session_view::break_text(row));
    let cause = promptwire::core::ledger::Cause::ServerShortfall;
    harness.get_by_label(&format!(
        "server_shortfall: {} Fix: {}",
        cause.explanation(),
        cause.fix().expect("a fix")
    ));
    // The sentence says what it cost: the ledger's paid and lost, lost to the shortfall at
    // request 1.
    let summary = &analysis.ledger.summary;
    let lost = summary.totals.cost_usd.expect("priced").lost;
    assert!(lost > 0.0);
    let sentence = summary.sentence();
    assert!(
        sentence.contains(&format!(
            "lost: {} to server shortfall at request 1",
            promptwire::core::ledger::summary::usd(lost)
        )),
        "{sentence}"
    );
    harness.get_by_label(&sentence);
}

#[test]
fn a_replay_started_over_a_stalled_resend_ends_it_and_its_row_still_appears() {
    let (mut harness, db, _server) = stalled_resend("sessions-resend-replaced");
    harness
        .get_by_role_and_label(Role::Button, "instant")
        .click();
    wait_until(&mut harness, "replayed, and the re-sent row read", |s| {
        s.browser.replay.job.is_none()
            && s.browser.timeline.outcome().is_some()
            && s.sessions.rows.len() == 4
    });
    assert!(!state(&harness).browser.replay.resend);
    let rows = state(&harness).sessions.rows.clone();
    assert_eq!(rows[3].outcome, OutcomeClass::Interrupted);
    let stored = Store::open(&db)
        .expect("db")
        .outcome(rows[3].id)
        .expect("outcome")
        .expect("recorded");
    assert_eq!(stored.error_class, Some(ErrorClass::Cancelled));
}

#[test]
fn compare_right_opens_compare_with_room_for_the_bodies_at_1024x700() {
    let db = scratch_dir("sessions-compare-room").join("promptwire.sqlite");
    let mut harness = ui_support::app_with((1024.0, 700.0), Some(db));
    ui_support::show_sessions(&mut harness);
    open_session(&mut harness, "#4 cache-prefix-break · 3 req · gpt-5.5");
    assert_eq!(
        harness.state().ui_state().sessions.tab,
        promptwire::ui::sessions::SessionsTab::Prefix
    );
    harness.get_by_label("Compare: left").click();
    harness.run_steps(2);
    harness.key_press(Key::J);
    harness.key_press(Key::J);
    harness.run_steps(2);
    harness.get_by_label("Compare: right").click();
    wait_until(&mut harness, "compared", |s| {
        s.browser.compare.result.is_some()
    });
    harness.run_steps(3);
    // Compare is shown, on the whole window: the room under the table was a line or two.
    assert_eq!(
        (
            harness.state().ui_state().sessions.tab,
            state(&harness).settings.panes.maximised
        ),
        (
            promptwire::ui::sessions::SessionsTab::Compare,
            Some(promptwire::app::panes::PaneId::Analysis)
        )
    );
    let analysis = ui_support::pane_rect(&harness, promptwire::app::panes::PaneId::Analysis);
    assert!(analysis.height() >= 550.0, "{analysis:?}");
    harness.get_by_label("Next difference");
    // Restore gives the table its room back, Compare still shown under it.
    harness.get_by_label("Restore Analysis").click();
    harness.run_steps(3);
    assert_eq!(state(&harness).settings.panes.maximised, None);
}

#[test]
fn sorting_and_a_comparison_reset_when_another_session_opens() {
    let (mut harness, _db) = sessions_app("sessions-reset");
    open_session(&mut harness, "#4 cache-prefix-break · 3 req · gpt-5.5");
    harness.get_by_role_and_label(Role::Button, "input").click();
    harness.run_steps(2);
    assert_eq!(
        state(&harness).browser.filter.sort,
        Some((
            promptwire::app::session_view::filter::SortColumn::Input,
            false
        ))
    );
    harness.get_by_label("Compare: left").click();
    harness.run_steps(2);
    harness.key_press(Key::J);
    harness.run_steps(2);
    harness.get_by_label("Compare: right").click();
    wait_until(&mut harness, "compared", |s| {
        s.browser.compare.result.is_some()
    });
    harness
        .get_by_label("#1 tool-calls · 3 req · gpt-5.5")
        .click();
    wait_until(&mut harness, "the other session analysed", |s| {
        s.sessions.open == Some(1) && s.browser.analysis.is_some()
    });
    let browser = &state(&harness).browser;
    assert_eq!(
        (
            browser.filter.sort,
            browser.compare.slots.clone(),
            browser.compare.result.is_none(),
            browser.visible.clone()
        ),
        (None, [None, None], true, vec![0, 1, 2])
    );
    // A half-chosen comparison stays: two sessions can still be compared.
    harness.get_by_label("Compare: left").click();
    harness.run_steps(2);
    harness
        .get_by_label("#4 cache-prefix-break · 3 req · gpt-5.5")
        .click();
    wait_until(&mut harness, "back", |s| {
        s.sessions.open == Some(4) && s.browser.analysis.is_some()
    });
    assert!(state(&harness).browser.compare.slots[0].is_some());
}
