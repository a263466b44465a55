//! The live recorder: events become visible to other connections without an explicit flush,
//! within about one batch delay; `flush` and `finish` commit everything including outcomes; a
//! read-only database refuses to record.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use promptwire::core::stream::RawEvent;
use promptwire::store::{
    NewRequest, NewSession, OutcomeRecord, Page, RecordedState, Recorder, RecorderOptions, Source,
    Store,
};

fn setup(name: &str) -> (PathBuf, i64) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("store_recorder");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let path = dir.join(format!("{name}.sqlite"));
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    let mut store = Store::open(&path).expect("open");
    let session = store
        .create_session(&NewSession {
            name: name.to_string(),
            source: Source::Send,
            provider: None,
            model: None,
            created_us: 0,
        })
        .expect("session");
    let request = store
        .add_request(
            session,
            &NewRequest {
                dialect: None,
                rules: None,
                provider: None,
                method: "POST".to_string(),
                url: "http://127.0.0.1/v1/responses".to_string(),
                body: b"{}",
                headers: &[],
                extra: None,
                started_us: None,
            },
        )
        .expect("request");
    (path, request)
}

fn event(seq: u64) -> RawEvent {
    RawEvent {
        seq,
        received_at: Duration::from_millis(seq),
        event: None,
        data: format!("{{\"n\":{seq}}}"),
    }
}

#[test]
fn events_are_committed_within_the_batch_delay_without_a_flush() {
    let (path, request) = setup("delay");
    let recorder = Recorder::start(&path, RecorderOptions::default()).expect("recorder");
    let reader = Store::open(&path).expect("reader");
    let sent = Instant::now();
    for seq in 0..10 {
        recorder.event(request, event(seq)).expect("event");
    }
    let mut seen = 0;
    while sent.elapsed() < Duration::from_secs(2) {
        seen = reader.event_count(request).expect("count");
        if seen == 10 {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let delay = sent.elapsed();
    assert_eq!(seen, 10);
    // 100 ms batch delay; generous margin for a loaded machine.
    assert!(
        delay < Duration::from_millis(600),
        "committed after {delay:?}"
    );
    recorder.finish().expect("finish");
}

#[test]
fn flush_and_finish_commit_events_and_outcomes() {
    let (path, request) = setup("flush");
    let options = RecorderOptions {
        max_delay: Duration::from_secs(60),
        ..RecorderOptions::default()
    };
    let recorder = Recorder::start(&path, options).expect("recorder");
    for seq in 0..3 {
        recorder.event(request, event(seq)).expect("event");
    }
    recorder.flush().expect("flush");
    assert_eq!(recorder.committed_events(), 3);
    let reader = Store::open(&path).expect("reader");
    assert_eq!(reader.event_count(request).expect("count"), 3);
    recorder.event(request, event(3)).expect("event");
    let outcome = OutcomeRecord {
        state: RecordedState::Completed,
        events: 4,
        ..OutcomeRecord::default()
    };
    recorder.outcome(request, outcome.clone()).expect("outcome");
    recorder.finish().expect("finish");
    let events = reader.events(request, Page::ALL).expect("events");
    assert_eq!(events, (0..4).map(event).collect::<Vec<_>>());
    assert_eq!(reader.outcome(request).expect("outcome"), Some(outcome));
}

#[test]
fn a_read_only_database_cannot_record() {
    use std::os::unix::fs::PermissionsExt as _;
    let (path, _) = setup("readonly");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).expect("chmod");
    let err = Recorder::start(&path, RecorderOptions::default()).expect_err("read-only");
    assert!(err.to_string().contains("read-only"), "{err}");
}

#[test]
fn requests_can_be_added_while_the_recorder_commits() {
    let (path, request) = setup("concurrent");
    let options = RecorderOptions {
        max_delay: Duration::from_millis(1),
        max_batch: 8,
        ..RecorderOptions::default()
    };
    let recorder = Recorder::start(&path, options).expect("recorder");
    let mut store = Store::open(&path).expect("writer");
    let session = store.list_sessions(Page::ALL).expect("list")[0].id;
    for seq in 0..2000 {
        recorder.event(request, event(seq)).expect("event");
        if seq % 50 == 0 {
            let body = format!(r#"{{"model":"m","input":[{{"n":{seq}}}]}}"#);
            store
                .add_request(
                    session,
                    &NewRequest {
                        dialect: None,
                        rules: None,
                        provider: None,
                        method: "POST".to_string(),
                        url: "http://127.0.0.1/v1/responses".to_string(),
                        body: body.as_bytes(),
                        headers: &[],
                        extra: None,
                        started_us: None,
                    },
                )
                .expect("a request written while the recorder commits");
        }
    }
    recorder.finish().expect("finish");
    assert_eq!(store.event_count(request).expect("count"), 2000);
    assert_eq!(
        store.requests(session, Page::ALL).expect("requests").len(),
        41
    );
}

fn chunks(path: &Path, request: i64) -> i64 {
    rusqlite::Connection::open(path)
        .and_then(|c| {
            c.query_row(
                "SELECT count(*) FROM events WHERE request_id = ?1",
                [request],
                |r| r.get(0),
            )
        })
        .expect("chunk rows")
}

#[test]
fn a_slow_stream_commits_small_chunks_and_its_outcome_packs_them_into_one() {
    let (path, request) = setup("repack");
    let options = RecorderOptions {
        max_batch: 7,
        ..RecorderOptions::default()
    };
    let recorder = Recorder::start(&path, options).expect("recorder");
    let sent: Vec<RawEvent> = (0..200).map(event).collect();
    for e in &sent {
        recorder.event(request, e.clone()).expect("event");
    }
    recorder.flush().expect("flush");
    // One chunk per commit while the response streams; every event readable at any offset.
    assert!(
        chunks(&path, request) >= 200 / 7,
        "{}",
        chunks(&path, request)
    );
    let reader = Store::open(&path).expect("reader");
    assert_eq!(reader.events(request, Page::ALL).expect("events"), sent);
    assert_eq!(
        reader
            .events(
                request,
                Page {
                    offset: 5,
                    limit: 9
                }
            )
            .expect("a page across chunks"),
        sent[5..14].to_vec()
    );
    let outcome = OutcomeRecord {
        state: RecordedState::Completed,
        events: 200,
        ..OutcomeRecord::default()
    };
    recorder.outcome(request, outcome).expect("outcome");
    recorder.finish().expect("finish");
    assert_eq!(chunks(&path, request), 1);
    assert_eq!(reader.events(request, Page::ALL).expect("events"), sent);
    assert_eq!(reader.event_count(request).expect("count"), 200);
    assert_eq!(
        reader
            .events(
                request,
                Page {
                    offset: 195,
                    limit: 100
                }
            )
            .expect("the last page"),
        sent[195..].to_vec()
    );
}
