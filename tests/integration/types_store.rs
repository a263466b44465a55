//! The recorded state and the error class are enums that become text only in SQL, on a real
//! SQLite file: every state and every known class is stored and read back as itself; a class
//! this build does not know comes back as `ErrorClass::Unknown` with its name; a state it does
//! not know is a read error naming it (never a panic), and the session browser shows that
//! request as having no answer.

use crate::support::db;

use pretty_assertions::assert_eq;
use promptwire::core::stream::ErrorClass;
use promptwire::store::summary::OutcomeClass;
use promptwire::store::{
    NewRequest, NewSession, OutcomeRecord, Page, RecordedState, Source, Store,
};

fn add_request(store: &mut Store, session: i64) -> i64 {
    store
        .add_request(
            session,
            &NewRequest::post(
                "http://127.0.0.1:9/v1/responses",
                br#"{"model":"m","input":[]}"#,
            ),
        )
        .expect("request")
}

#[test]
fn states_and_classes_round_trip_and_unknown_text_is_named_not_a_panic() {
    let path = db::scratch_db("types");
    let mut store = Store::open(&path).expect("open");
    let session = store
        .create_session(&NewSession {
            name: "types".to_string(),
            source: Source::Send,
            provider: None,
            model: None,
            created_us: 0,
        })
        .expect("session");
    let mut written = Vec::new();
    for state in RecordedState::ALL {
        written.push((state, None));
    }
    for class in ErrorClass::KNOWN {
        written.push((RecordedState::Failed, Some(class)));
    }
    let mut ids = Vec::new();
    for (state, class) in &written {
        let id = add_request(&mut store, session);
        let outcome = OutcomeRecord {
            state: *state,
            error_class: class.clone(),
            ..OutcomeRecord::default()
        };
        store.set_outcome(id, &outcome).expect("outcome");
        ids.push(id);
    }
    let read: Vec<(RecordedState, Option<ErrorClass>)> = ids
        .iter()
        .map(|id| {
            let o = store.outcome(*id).expect("read").expect("outcome");
            (o.state, o.error_class)
        })
        .collect();
    assert_eq!(read, written);
    drop(store);

    // Text another build wrote.
    let conn = rusqlite::Connection::open(&path).expect("sqlite");
    conn.execute(
        "UPDATE outcomes SET error_class = 'http' WHERE request_id = ?1",
        [ids[3]],
    )
    .expect("class");
    conn.execute(
        "UPDATE outcomes SET state = 'paused' WHERE request_id = ?1",
        [ids[0]],
    )
    .expect("state");
    drop(conn);
    let store = Store::open(&path).expect("reopen");
    assert_eq!(
        store
            .outcome(ids[3])
            .expect("read")
            .and_then(|o| o.error_class),
        Some(ErrorClass::Unknown("http".to_string()))
    );
    assert_eq!(
        store.outcome(ids[0]).map_err(|e| e.to_string()),
        Err(
            "database error: Conversion error from type Text at index: 0, unknown recorded \
             state `paused` (expected open, completed or failed)"
                .to_string()
        )
    );
    let rows = store.request_rows(session, Page::first(4)).expect("rows");
    let classes: Vec<OutcomeClass> = rows.into_iter().map(|r| r.outcome).collect();
    assert_eq!(
        classes,
        vec![
            OutcomeClass::None,
            OutcomeClass::Completed,
            OutcomeClass::Failed("failed".to_string()),
            OutcomeClass::Failed("http".to_string()),
        ]
    );
}

/// A WebSocket exchange is stored with status 101: its class is what its frames said, not
/// "HTTP 101" (which the Record panel counted as an error for every WebSocket request).
#[test]
fn a_websocket_exchange_is_classed_by_its_frames_not_by_its_101() {
    let cases = [
        (Some(101), Some(RecordedState::Completed), None),
        (
            Some(101),
            Some(RecordedState::Failed),
            Some(ErrorClass::Stream),
        ),
        (
            Some(429),
            Some(RecordedState::Failed),
            Some(ErrorClass::Retryable),
        ),
        (Some(200), Some(RecordedState::Completed), None),
    ];
    let classes: Vec<OutcomeClass> = cases
        .iter()
        .map(|(status, state, class)| OutcomeClass::of(*status, *state, class.as_ref()))
        .collect();
    assert_eq!(
        classes,
        vec![
            OutcomeClass::Completed,
            OutcomeClass::Incomplete,
            OutcomeClass::Http(429),
            OutcomeClass::Completed,
        ]
    );
    assert_eq!(classes[0].is_problem(), false);
    let labels: Vec<String> = [Some(101), Some(429), Some(200), None]
        .into_iter()
        .map(promptwire::store::summary::status_label)
        .collect();
    assert_eq!(labels, ["WS", "HTTP 429", "HTTP 200", "-"]);
}
