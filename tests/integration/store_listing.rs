//! The filtered session listing (`Store::list_sessions_filtered`) on a real SQLite file: by
//! source (a rollout import apart from other imports), by creation time, by model, leaving out
//! a session whose delete can still be undone, paged, and combined with a text search; and
//! renaming a session; and sessions with a failed or interrupted request (also through
//! `sessions list --with`).

use pretty_assertions::assert_eq;
use promptwire::core::stream::ErrorClass;
use promptwire::store::{
    NewRequest, NewSession, OutcomeRecord, Page, RecordedState, ResponseMeta, SessionFilter,
    SessionStatus, Source, Store,
};
use serde_json::json;

/// Sessions (name, source, model, created, rollout extra on its request).
fn store(name: &str) -> Store {
    let path = crate::support::scratch(name).join("listing.sqlite");
    let mut store = Store::open(&path).expect("store");
    let sessions = [
        ("proxy one", Source::Proxy, "gpt-5.5", 1_000, false),
        ("sent", Source::Send, "gpt-6-sol", 2_000, false),
        ("har import", Source::Import, "gpt-5.5", 3_000, false),
        ("rollout [thread]", Source::Import, "gpt-5.5", 4_000, true),
        ("proxy two", Source::Proxy, "gpt-5.5", 5_000, false),
    ];
    for (name, source, model, created_us, rollout) in sessions {
        let id = store
            .create_session(&NewSession {
                name: name.to_string(),
                source,
                provider: None,
                model: Some(model.to_string()),
                created_us,
            })
            .expect("session");
        store
            .add_request(
                id,
                &NewRequest {
                    dialect: None,
                    rules: None,
                    provider: None,
                    method: "POST".to_string(),
                    url: "https://api.openai.com/v1/responses".to_string(),
                    body: format!("{{\"model\":\"{model}\",\"input\":\"hello {name}\"}}")
                        .as_bytes(),
                    headers: &[],
                    extra: rollout.then(|| json!({"rollout": {"line": 1}})),
                    started_us: Some(created_us),
                },
            )
            .expect("request");
    }
    store
}

fn names(store: &Store, filter: &SessionFilter, search: &str, page: Page) -> Vec<String> {
    store
        .list_sessions_filtered(filter, search, page)
        .expect("listing")
        .into_iter()
        .map(|s| s.name)
        .collect()
}

#[test]
fn sessions_filter_by_source_time_model_and_leave_out_a_pending_delete() {
    let mut store = store("listing-filter");
    let by = |source: &str| SessionFilter {
        source: Some(source.to_string()),
        ..SessionFilter::default()
    };
    assert_eq!(
        [
            names(&store, &by("proxy"), "", Page::ALL),
            names(&store, &by("import"), "", Page::ALL),
            names(&store, &by("rollout"), "", Page::ALL),
            names(&store, &by("send"), "", Page::ALL),
        ],
        [
            vec!["proxy two".to_string(), "proxy one".to_string()],
            vec!["har import".to_string()],
            vec!["rollout [thread]".to_string()],
            vec!["sent".to_string()],
        ]
    );
    let window = SessionFilter {
        from_us: Some(2_000),
        to_us: Some(4_000),
        ..SessionFilter::default()
    };
    assert_eq!(
        names(&store, &window, "", Page::ALL),
        vec!["har import".to_string(), "sent".to_string()]
    );
    let model = SessionFilter {
        model: "6-SOL".to_string(),
        ..SessionFilter::default()
    };
    assert_eq!(
        names(&store, &model, "", Page::ALL),
        vec!["sent".to_string()]
    );
    let all = store.list_sessions(Page::ALL).expect("all");
    let hidden = SessionFilter {
        exclude: Some(all[0].id),
        ..SessionFilter::default()
    };
    assert_eq!(
        names(
            &store,
            &hidden,
            "",
            Page {
                offset: 1,
                limit: 2
            }
        ),
        vec!["har import".to_string(), "sent".to_string()]
    );
    // A search, then the filter: "hello" is in every body; only the proxy ones pass.
    assert_eq!(
        names(&store, &by("proxy"), "hello", Page::ALL),
        vec!["proxy two".to_string(), "proxy one".to_string()]
    );
    store.rename_session(all[0].id, "renamed").expect("rename");
    assert_eq!(
        store.session(all[0].id).map(|s| s.name).ok(),
        Some("renamed".to_string())
    );
}

/// Sessions whose requests ended as given: (HTTP status, outcome state and error class).
type Ending = (Option<u16>, Option<(RecordedState, Option<ErrorClass>)>);

/// A database of sessions whose requests ended in each way, its path.
fn status_sessions(name: &str) -> (Store, std::path::PathBuf) {
    let path = crate::support::scratch(name).join("listing.sqlite");
    let mut store = Store::open(&path).expect("store");
    let completed = (Some(200), Some((RecordedState::Completed, None)));
    let sessions: [(&str, Vec<Ending>); 8] = [
        ("all completed", vec![completed.clone(), completed.clone()]),
        ("http 500", vec![completed.clone(), (Some(500), None)]),
        (
            "stream cut",
            vec![(
                Some(200),
                Some((RecordedState::Failed, Some(ErrorClass::Stream))),
            )],
        ),
        (
            "cancelled",
            vec![(
                Some(200),
                Some((RecordedState::Failed, Some(ErrorClass::Cancelled))),
            )],
        ),
        (
            "still open",
            vec![(Some(200), Some((RecordedState::Open, None)))],
        ),
        ("no answer", vec![(None, None)]),
        (
            "websocket ok",
            vec![(Some(101), Some((RecordedState::Completed, None)))],
        ),
        (
            "both",
            vec![
                (
                    Some(200),
                    Some((RecordedState::Failed, Some(ErrorClass::Interrupted))),
                ),
                (
                    Some(200),
                    Some((RecordedState::Failed, Some(ErrorClass::RequestTimeout))),
                ),
            ],
        ),
    ];
    for (i, (name, endings)) in sessions.iter().enumerate() {
        let created_us = i64::try_from(i).expect("small") * 1_000;
        let id = store
            .create_session(&NewSession {
                name: name.to_string(),
                source: Source::Proxy,
                provider: None,
                model: Some("gpt-5.5".to_string()),
                created_us,
            })
            .expect("session");
        for (status, outcome) in endings {
            let request = store
                .add_request(
                    id,
                    &NewRequest::post("https://api.openai.com/v1/responses", b"{\"input\":\"x\"}"),
                )
                .expect("request");
            if status.is_some() {
                store
                    .set_response(
                        request,
                        &ResponseMeta {
                            status: *status,
                            ..ResponseMeta::default()
                        },
                    )
                    .expect("response");
            }
            if let Some((state, error_class)) = outcome {
                store
                    .set_outcome(
                        request,
                        &OutcomeRecord {
                            state: *state,
                            error_class: error_class.clone(),
                            ..OutcomeRecord::default()
                        },
                    )
                    .expect("outcome");
            }
        }
    }
    (store, path)
}

#[test]
fn sessions_filter_by_a_failed_or_interrupted_request_as_the_request_table_classes_them() {
    let (store, _) = status_sessions("listing-status");
    let with = |status: Option<SessionStatus>| SessionFilter {
        status,
        ..SessionFilter::default()
    };
    assert_eq!(
        [
            names(&store, &with(Some(SessionStatus::Failed)), "", Page::ALL),
            names(
                &store,
                &with(Some(SessionStatus::Interrupted)),
                "",
                Page::ALL
            ),
            names(&store, &with(None), "", Page::ALL)
                .into_iter()
                .take(2)
                .collect(),
            // Paged in SQL: the second failed session is the second row.
            names(
                &store,
                &with(Some(SessionStatus::Failed)),
                "",
                Page {
                    offset: 1,
                    limit: 1
                }
            ),
            // With a search, the filter is held against each session found.
            names(
                &store,
                &with(Some(SessionStatus::Interrupted)),
                "still",
                Page::ALL
            ),
        ],
        [
            vec![
                "both".to_string(),
                "no answer".to_string(),
                "stream cut".to_string(),
                "http 500".to_string(),
            ],
            vec![
                "both".to_string(),
                "still open".to_string(),
                "cancelled".to_string(),
            ],
            vec!["both".to_string(), "websocket ok".to_string()],
            vec!["no answer".to_string()],
            vec!["still open".to_string()],
        ]
    );
}

#[test]
fn sessions_list_with_failed_or_interrupted_lists_those_sessions() {
    let (store, path) = status_sessions("listing-status-cli");
    drop(store);
    let db = path.to_str().expect("path");
    let listed = |args: &[&str]| {
        let output = crate::support::cli::run(
            &[&["sessions", "list", "--json", "--db", db], args].concat(),
            None,
        );
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        let list: serde_json::Value = serde_json::from_slice(&output.stdout).expect("json");
        list.as_array()
            .expect("array")
            .iter()
            .map(|s| s["name"].as_str().expect("name").to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        [
            listed(&["--with", "failed"]),
            listed(&["--with", "interrupted", "--search", "c"]),
        ],
        [
            vec![
                "both".to_string(),
                "no answer".to_string(),
                "stream cut".to_string(),
                "http 500".to_string(),
            ],
            vec!["cancelled".to_string()],
        ]
    );
}
