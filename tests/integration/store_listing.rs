//! The filtered session listing (`Store::list_sessions_filtered`) on a real SQLite file: by
//! source (a rollout import apart from other imports), by creation time, by model, leaving out
//! a session whose delete can still be undone, paged, and combined with a text search; and
//! renaming a session.

use pretty_assertions::assert_eq;
use promptwire::store::{NewRequest, NewSession, Page, SessionFilter, Source, Store};
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
