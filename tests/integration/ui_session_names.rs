//! The Sessions list on the whole app (egui_kittest, no GPU) over a real database: a proxy
//! session is listed by its label (client, first user message, time) with its grouping key on
//! hover (a replay of it as `replay of <label>`; the Workbench's sidebar by the label too), an
//! older `proxy session:<uuid>` one as before; and the list's status filter "with failed
//! requests" lists only the sessions that have a failed request.

use crate::support::ui as ui_support;

use egui::accesskit::Role;
use egui_kittest::kittest::Queryable as _;
use pretty_assertions::assert_eq;
use promptwire::app::session_view::MainView;
use promptwire::core::stream::ErrorClass;
use promptwire::store::{
    NewRequest, NewSession, OutcomeRecord, RecordedState, ResponseMeta, Source, Store,
};
use ui_support::{App, app_with, scratch_dir, state, wait_until};

const LABELLED: &str =
    "codex_exec · \"List the files here.\" · 14:03 · session:01a22d2e-1e12-7572-a9bb-3a07cdc8e803";
const OLD: &str = "proxy session:01a22d2e-1e12-7572-a9bb-3a07cdc8e804";

/// 2026-12-02 14:03:30 UTC, plus `minutes`.
fn at(minutes: i64) -> i64 {
    1_796_220_210_000_000 + minutes * 60_000_000
}

/// A database of five sessions (name, source, created, how its one request ended), and the app
/// on it showing the Sessions view.
fn app(name: &str) -> App {
    let db = scratch_dir(name).join("names.sqlite");
    let mut store = Store::open(&db).expect("store");
    let completed = (Some(200), RecordedState::Completed, None);
    let replay = format!("replay of {LABELLED}");
    let sessions = [
        (LABELLED, Source::Proxy, at(0), completed.clone()),
        (
            OLD,
            Source::Proxy,
            at(1),
            (Some(500), RecordedState::Failed, None),
        ),
        (
            "sent and stopped",
            Source::Send,
            at(2),
            (
                Some(200),
                RecordedState::Failed,
                Some(ErrorClass::Cancelled),
            ),
        ),
        (
            "stream cut",
            Source::Send,
            at(3),
            (Some(200), RecordedState::Failed, Some(ErrorClass::Stream)),
        ),
        (&replay, Source::Replay, at(4), completed.clone()),
    ];
    for (name, source, created_us, (status, state, error_class)) in sessions {
        let id = store
            .create_session(&NewSession {
                name: name.to_string(),
                source,
                provider: None,
                model: Some("gpt-5.5".to_string()),
                created_us,
            })
            .expect("session");
        let request = store
            .add_request(
                id,
                &NewRequest::post(
                    "https://api.openai.com/v1/responses",
                    b"{\"model\":\"gpt-5.5\",\"input\":\"x\"}",
                ),
            )
            .expect("request");
        store
            .set_response(
                request,
                &ResponseMeta {
                    status,
                    ..ResponseMeta::default()
                },
            )
            .expect("response");
        store
            .set_outcome(
                request,
                &OutcomeRecord {
                    state,
                    error_class,
                    ..OutcomeRecord::default()
                },
            )
            .expect("outcome");
    }
    drop(store);
    let mut harness = app_with((1500.0, 950.0), Some(db));
    harness
        .get_by_role_and_label(Role::Button, "Sessions")
        .click();
    wait_until(&mut harness, "sessions listed", |s| {
        s.browser.view == MainView::Sessions && s.sessions.sessions.len() == 5
    });
    harness
}

#[test]
fn a_proxy_session_is_listed_by_its_label_with_its_key_on_hover() {
    let mut harness = app("session-names");
    let entry = "#1 codex_exec · \"List the files here.\" · 14:03 · 1 req · gpt-5.5";
    harness.get_by_label(entry).hover();
    harness.run();
    let hover = format!("#1 {LABELLED} (proxy, 2026-12-02 14:03)");
    assert_eq!(harness.query_by_label(&hover).map(|_| ()), Some(()));
    // A replay of it is listed as the replay of its label.
    harness.get_by_label(
        "#5 replay of codex_exec · \"List the files here.\" · 14:03 · 1 req · gpt-5.5",
    );
    // An older proxy session named by its UUID keeps its shorter form.
    harness.get_by_label("#2 proxy client 14:04 …c8e804 · 1 req · gpt-5.5");
    // The Workbench's sidebar lists it by its label too.
    harness
        .get_by_role_and_label(Role::Button, "Workbench")
        .click();
    harness.run();
    harness.get_by_label("#1 codex_exec · \"List the files here.\" · 14:03 (1)");
}

#[test]
fn choosing_failed_lists_only_the_sessions_with_a_failed_request() {
    let mut harness = app("session-status-filter");
    harness
        .get_by_role_and_label(Role::ComboBox, "status")
        .click();
    harness.run();
    harness.get_by_label("with failed requests").click();
    wait_until(&mut harness, "sessions filtered", |s| {
        s.sessions.sessions.len() == 2
    });
    let listed: Vec<(i64, String)> = state(&harness)
        .sessions
        .sessions
        .iter()
        .map(|s| (s.id, s.name.clone()))
        .collect();
    assert_eq!(
        listed,
        vec![(4, "stream cut".to_string()), (2, OLD.to_string())]
    );
    harness.get_by_label("#4 stream cut · 1 req · gpt-5.5");
    assert!(
        harness
            .query_by_label("#3 sent and stopped · 1 req · gpt-5.5 · ! 1 interrupted")
            .is_none()
    );
}
