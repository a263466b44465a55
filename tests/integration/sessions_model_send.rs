//! The one sessions model on the whole app (egui_kittest, no GPU, the real `PromptwireApp` on a
//! freshly seeded scratch database, a loopback stand-in upstream answering with real SSE bytes):
//! the Sessions tab, shown before a workbench Send, lists the new session and shows its new
//! request — rows and prefix analysis — without any click, and a second Send into the open
//! session adds its row there too. The sidebar reads the same model, so it agrees.

use crate::support::ui as ui_support;

use std::sync::Arc;
use std::time::Duration;

use crate::support::upstream::{End, Reply, Upstream, pieces, sse_file};
use egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
use pretty_assertions::assert_eq;
use promptwire::app::session_view::{MainView, PrefixBadge, SESSIONS_PAGE};
use promptwire::app::{AppCommand, AppState, PromptEdit};
use promptwire::store::summary::OutcomeClass;
use promptwire::store::{Page, Store};
use promptwire::ui::PromptwireApp;
use ui_support::{App, scratch_dir, state, wait_for_compile, wait_until};

/// `text-answer.sse`, whole.
fn text_answer() -> Reply {
    Reply::answer(
        pieces(&sse_file("text-answer.sse"), 4, Duration::from_millis(10)),
        End::Complete,
    )
}

/// The app on a seeded scratch database, its provider pointed at `server`, showing the
/// Sessions tab with its list read.
fn app_on_sessions_tab(server: &Upstream) -> (App, std::path::PathBuf) {
    let db = scratch_dir("sessions-model-send").join("promptwire.sqlite");
    let path = db.clone();
    let lookup: promptwire::app::send::KeyLookup =
        Arc::new(|name| (name == "OPENAI_API_KEY").then(|| "sk-test-0123".to_string()));
    let mut harness = Harness::builder()
        .with_size(egui::vec2(1500.0, 950.0))
        .build_eframe(move |cc| PromptwireApp::with_db(cc, Some(path)).with_key_lookup(lookup));
    wait_for_compile(&mut harness);
    harness
        .state()
        .sender()
        .send(AppCommand::Edit(Box::new(PromptEdit::BaseUrl(Some(
            server.base_url(),
        )))));
    let base = server.base_url();
    wait_until(&mut harness, "compiled for loopback", move |s| {
        s.views_are_current() && s.views[0].compiled.url.starts_with(&base)
    });
    harness
        .get_by_role_and_label(Role::Button, "Sessions")
        .click();
    wait_until(&mut harness, "sessions listed", |s| {
        s.browser.view == MainView::Sessions
            && !s.sessions.sessions.is_empty()
            && s.sessions.loading == 0
    });
    (harness, db)
}

/// Sends the workbench's target column the way its Send button or Ctrl+Enter does — not a
/// click on the Sessions tab — and waits until it is recorded; returns (session, request).
fn send(harness: &mut App) -> (i64, i64) {
    let before = state(harness).send.generation.current();
    harness.state().sender().send(AppCommand::Send);
    wait_until(harness, "sent and recorded", move |s| {
        s.send.generation.current() > before
            && s.send.job.is_none()
            && (s.send.recorded.is_some() || s.send.error.is_some())
    });
    let s = state(harness);
    assert_eq!(s.send.error, None);
    s.send.recorded.expect("recorded")
}

/// What the Sessions tab shows of the open session: (listed session ids, open session, rows as
/// (id, position, outcome), the analysis's session and badge per request).
type Shown = (
    Vec<i64>,
    Option<i64>,
    Vec<(i64, i64, OutcomeClass)>,
    Option<(i64, Vec<PrefixBadge>)>,
);

fn shown(s: &AppState) -> Shown {
    (
        s.sessions.sessions.iter().map(|x| x.id).collect(),
        s.sessions.open,
        s.sessions
            .rows
            .iter()
            .map(|r| (r.id, r.position, r.outcome.clone()))
            .collect(),
        s.browser
            .analysis
            .as_ref()
            .map(|a| (a.session, a.badges.clone())),
    )
}

#[test]
fn the_sessions_tab_open_before_a_workbench_send_shows_the_new_request_without_any_click() {
    let server = Upstream::in_order(vec![text_answer(), text_answer()]);
    let (mut harness, db) = app_on_sessions_tab(&server);
    let listed_before: Vec<i64> = state(&harness)
        .sessions
        .sessions
        .iter()
        .map(|s| s.id)
        .collect();
    assert_eq!(state(&harness).sessions.open, None);

    let (session, first) = send(&mut harness);
    let mut listed: Vec<i64> = vec![session];
    listed.extend(&listed_before);
    listed.truncate(SESSIONS_PAGE as usize);
    let want: Shown = (
        listed.clone(),
        Some(session),
        vec![(first, 0, OutcomeClass::Completed)],
        Some((session, vec![PrefixBadge::First])),
    );
    let expected = want.clone();
    wait_until(
        &mut harness,
        "the Sessions tab shows the new request",
        move |s| shown(s) == expected && !s.browser.analyzing && s.sessions.loading == 0,
    );
    let s = state(&harness);
    assert_eq!(shown(s), want);
    assert_eq!(s.browser.view, MainView::Sessions);
    // The stored truth the tab shows.
    let store = Store::open(&db).expect("db");
    let summary = store.session(session).expect("stored session");
    assert_eq!(
        store
            .request_rows(session, Page::ALL)
            .expect("rows")
            .iter()
            .map(|r| (r.id, r.position, r.outcome.clone()))
            .collect::<Vec<_>>(),
        want.2
    );
    // On screen, without a click: the list entry, the open session's header and its count.
    harness.run();
    let model = summary.model.clone().unwrap_or_else(|| "?".to_string());
    harness.get_by_label(&format!("#{session} {} · 1 req · {model}", summary.name));
    harness.get_by_label(&format!("#{session} {}", summary.name));
    harness.get_by_label("1 request");

    // The open session is the one Send adds to: a second Send shows its row there too.
    let (again, second) = send(&mut harness);
    assert_eq!(again, session);
    let expected = (
        listed,
        Some(session),
        vec![
            (first, 0, OutcomeClass::Completed),
            (second, 1, OutcomeClass::Completed),
        ],
    );
    wait_until(
        &mut harness,
        "the Sessions tab shows the second request",
        move |s| {
            let (ids, open, rows, analysis) = shown(s);
            (ids, open, rows) == expected
                && analysis.is_some_and(|(id, badges)| id == session && badges.len() == 2)
                && !s.browser.analyzing
        },
    );
    harness.run();
    harness.get_by_label(&format!("#{session} {} · 2 req · {model}", summary.name));
    harness.get_by_label("2 requests");
    assert_eq!(server.received().len(), 2);
}
