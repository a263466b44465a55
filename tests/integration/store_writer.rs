//! The database's one writer: events become visible to other connections without an explicit
//! flush, within about one batch delay; `flush` commits everything including outcomes; a
//! read-only database refuses to record; one writer per file in a process; producers never wait
//! while another connection holds the write lock, and everything queued is stored once it is
//! released; what neither the writer's memory budget nor its journal's disk budget could hold
//! is recorded as lost, never as complete; what the memory budget or the queue could not hold
//! goes to the journal beside the database (owner-only) and is stored, in order; an operation the database refuses for good (a deleted session) is dropped alone.
#![allow(clippy::disallowed_methods, reason = "a test runs its own threads")]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use promptwire::core::stream::RawEvent;
use promptwire::store::{
    NewRequest, NewSession, Notify, OutcomeRecord, OwnedRequest, Page, RecordedState, Report,
    SessionRef, Source, Store, Writer, WriterOptions,
};

fn setup(name: &str) -> (PathBuf, i64) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("store_writer");
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
    (path, session)
}

fn request(n: u64) -> OwnedRequest {
    OwnedRequest::from_new(&NewRequest::post(
        "http://127.0.0.1/v1/responses",
        format!(r#"{{"model":"m","input":[{{"n":{n}}}]}}"#).as_bytes(),
    ))
}

fn event(seq: u64) -> RawEvent {
    RawEvent {
        seq,
        received_at: Duration::from_millis(seq),
        event: None,
        data: format!("{{\"n\":{seq}}}"),
        bytes: None,
    }
}

/// A notify that keeps every report.
fn reports() -> (Notify, Arc<Mutex<Vec<Report>>>) {
    let kept = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&kept);
    let notify: Notify = Arc::new(move |report| sink.lock().expect("reports").push(report));
    (notify, kept)
}

fn stored_request(reports: &Mutex<Vec<Report>>) -> Option<i64> {
    reports
        .lock()
        .expect("reports")
        .iter()
        .find_map(|r| match r {
            Report::RequestStored { request_id, .. } => Some(*request_id),
            _ => None,
        })
}

fn completed(events: u64) -> OutcomeRecord {
    OutcomeRecord {
        state: RecordedState::Completed,
        events,
        ..OutcomeRecord::default()
    }
}

fn only_request(path: &Path, session: i64) -> i64 {
    let store = Store::open(path).expect("reader");
    let requests = store.requests(session, Page::ALL).expect("requests");
    assert_eq!(requests.len(), 1);
    requests[0].id
}

#[test]
fn events_are_committed_within_the_batch_delay_without_a_flush() {
    let (path, session) = setup("delay");
    let writer = Writer::open(&path).expect("writer");
    let mut request_writer = writer.begin_request(SessionRef::Id(session), request(0), None);
    let sent = Instant::now();
    for seq in 0..10 {
        request_writer.event(event(seq));
    }
    let reader = Store::open(&path).expect("reader");
    let mut seen = 0;
    while sent.elapsed() < Duration::from_secs(2) {
        if let Ok(requests) = reader.requests(session, Page::ALL)
            && let Some(r) = requests.first()
        {
            seen = reader.event_count(r.id).expect("count");
            if seen == 10 {
                break;
            }
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
}

#[test]
fn flush_commits_events_and_outcomes_and_reports_them_as_stored() {
    let (path, session) = setup("flush");
    let options = WriterOptions {
        max_delay: Duration::from_secs(60),
        ..WriterOptions::default()
    };
    let writer = Writer::open_with(&path, options).expect("writer");
    let (notify, reports) = reports();
    let mut request_writer =
        writer.begin_request(SessionRef::Id(session), request(0), Some(notify));
    for seq in 0..3 {
        request_writer.event(event(seq));
    }
    assert!(writer.flush(Duration::from_secs(10)), "flushed");
    let id = only_request(&path, session);
    assert_eq!(stored_request(&reports), Some(id));
    let reader = Store::open(&path).expect("reader");
    assert_eq!(reader.event_count(id).expect("count"), 3);
    request_writer.event(event(3));
    request_writer.outcome(completed(4));
    assert!(writer.flush(Duration::from_secs(10)), "flushed");
    assert_eq!(
        reader.events(id, Page::ALL).expect("events"),
        (0..4).map(event).collect::<Vec<_>>()
    );
    assert_eq!(reader.outcome(id).expect("outcome"), Some(completed(4)));
    let last = reports.lock().expect("reports").last().cloned();
    assert_eq!(
        last,
        Some(Report::OutcomeStored {
            key: request_writer_key(&reports),
            request_id: id,
            outcome: Box::new(completed(4)),
            stored_events: 4,
            status: None,
        })
    );
    assert_eq!(writer.status().committed_events, 4);
}

fn request_writer_key(reports: &Mutex<Vec<Report>>) -> promptwire::store::RequestKey {
    reports
        .lock()
        .expect("reports")
        .iter()
        .find_map(|r| match r {
            Report::RequestStored { key, .. } => Some(*key),
            _ => None,
        })
        .expect("a stored request")
}

#[test]
fn a_read_only_database_cannot_be_written() {
    use std::os::unix::fs::PermissionsExt as _;
    let (path, _) = setup("readonly");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).expect("chmod");
    let err = Writer::open(&path).expect_err("read-only");
    assert!(err.to_string().contains("read-only"), "{err}");
}

#[test]
fn one_writer_per_database_file_in_a_process() {
    let (path, _) = setup("one");
    let first = Writer::open(&path).expect("writer");
    let second = Writer::open(&path).expect("writer");
    assert!(first.is_same(&second));
    let (other, _) = setup("other");
    assert!(!first.is_same(&Writer::open(&other).expect("writer")));
}

#[test]
fn requests_can_be_added_by_another_connection_while_the_writer_commits() {
    let (path, session) = setup("concurrent");
    let options = WriterOptions {
        max_delay: Duration::from_millis(1),
        max_batch: 8,
        ..WriterOptions::default()
    };
    let writer = Writer::open_with(&path, options).expect("writer");
    let mut request_writer = writer.begin_request(SessionRef::Id(session), request(0), None);
    let mut store = Store::open(&path).expect("another connection");
    for seq in 0..2000 {
        request_writer.event(event(seq));
        if seq % 50 == 0 {
            let body = format!(r#"{{"model":"m","input":[{{"n":{seq}}}]}}"#);
            store
                .add_request(
                    session,
                    &NewRequest::post("http://127.0.0.1/v1/responses", body.as_bytes()),
                )
                .expect("a request written while the writer commits");
        }
    }
    request_writer.outcome(completed(2000));
    assert!(writer.flush(Duration::from_secs(30)), "flushed");
    let requests = store.requests(session, Page::ALL).expect("requests");
    assert_eq!(requests.len(), 41);
    let recorded = requests
        .iter()
        .find(|r| store.outcome(r.id).expect("outcome").is_some())
        .expect("the writer's request");
    assert_eq!(store.event_count(recorded.id).expect("count"), 2000);
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
    let (path, session) = setup("repack");
    let options = WriterOptions {
        max_batch: 7,
        ..WriterOptions::default()
    };
    let writer = Writer::open_with(&path, options).expect("writer");
    let mut request_writer = writer.begin_request(SessionRef::Id(session), request(0), None);
    let sent: Vec<RawEvent> = (0..200).map(event).collect();
    for e in &sent {
        request_writer.event(e.clone());
    }
    assert!(writer.flush(Duration::from_secs(10)), "flushed");
    let request = only_request(&path, session);
    // One chunk per commit while the response streams; every event readable at any offset.
    assert!(
        chunks(&path, request) >= 200 / 8,
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
    request_writer.outcome(completed(200));
    assert!(writer.flush(Duration::from_secs(10)), "flushed");
    assert_eq!(chunks(&path, request), 1);
    assert_eq!(reader.events(request, Page::ALL).expect("events"), sent);
    assert_eq!(reader.event_count(request).expect("count"), 200);
}

/// Holds the database's write lock from another connection for `hold`.
fn lock_for(path: &Path, hold: Duration) -> std::thread::JoinHandle<()> {
    let conn = rusqlite::Connection::open(path).expect("locker");
    conn.execute_batch("BEGIN IMMEDIATE")
        .expect("take the write lock");
    std::thread::spawn(move || {
        std::thread::sleep(hold);
        conn.execute_batch("COMMIT").expect("release");
    })
}

#[test]
fn producers_never_wait_on_a_locked_database_and_everything_is_stored_after() {
    let (path, session) = setup("locked");
    let writer = Writer::open(&path).expect("writer");
    let locker = lock_for(&path, Duration::from_secs(3));
    let (notify, reports) = reports();
    let mut slowest = Duration::ZERO;
    let mut timed = |f: &mut dyn FnMut()| {
        let t = Instant::now();
        f();
        slowest = slowest.max(t.elapsed());
    };
    let mut writers = Vec::new();
    for n in 0..5 {
        let mut w = None;
        timed(&mut || {
            w = Some(writer.begin_request(
                SessionRef::Id(session),
                request(n),
                Some(Arc::clone(&notify)),
            ))
        });
        writers.push(w.expect("writer"));
    }
    for seq in 0..400 {
        for w in &mut writers {
            timed(&mut || w.event(event(seq)));
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    for w in writers {
        let mut w = Some(w);
        timed(&mut || {
            if let Some(w) = w.take() {
                w.outcome(completed(400));
            }
        });
    }
    // The lock is still held: nothing stored yet, and the writer says why.
    assert_eq!(stored_request(&reports), None);
    let problem = writer.status().problem.expect("a problem while locked");
    assert!(
        problem.contains("locked") || problem.contains("busy"),
        "{problem}"
    );
    assert!(
        slowest < Duration::from_millis(100),
        "a producer waited {slowest:?} (the lock is held 3 s)"
    );
    locker.join().expect("locker");
    assert!(
        writer.flush(Duration::from_secs(30)),
        "flushed after the lock"
    );
    let store = Store::open(&path).expect("reader");
    let requests = store.requests(session, Page::ALL).expect("requests");
    assert_eq!(requests.len(), 5);
    for r in requests {
        assert_eq!(store.event_count(r.id).expect("count"), 400);
        assert_eq!(store.outcome(r.id).expect("outcome"), Some(completed(400)));
    }
    assert_eq!(writer.status().problem, None);
}

#[test]
fn what_the_budget_cannot_hold_is_recorded_as_lost_never_as_complete() {
    let (path, session) = setup("budget");
    // Neither the memory budget nor the journal's disk budget holds the stream.
    let options = WriterOptions {
        event_budget_bytes: 4 * 1024,
        journal_budget_bytes: 4 * 1024,
        ..WriterOptions::default()
    };
    let writer = Writer::open_with(&path, options).expect("writer");
    let locker = lock_for(&path, Duration::from_millis(800));
    let mut request_writer = writer.begin_request(SessionRef::Id(session), request(0), None);
    for seq in 0..500 {
        request_writer.event(event(seq));
    }
    let lost = request_writer.lost_events();
    assert!(lost > 0 && lost < 500, "{lost} lost");
    request_writer.outcome(completed(500));
    locker.join().expect("locker");
    assert!(writer.flush(Duration::from_secs(30)), "flushed");
    let id = only_request(&path, session);
    let store = Store::open(&path).expect("reader");
    let outcome = store.outcome(id).expect("read").expect("outcome");
    let reason = "the writer's queue and its journal's disk budget were full (the database could not keep up or could not be written)";
    assert_eq!(
        outcome,
        OutcomeRecord {
            lost_events: lost,
            lost_reason: Some(reason.to_string()),
            ..completed(500)
        }
    );
    assert_eq!(store.event_count(id).expect("count"), 500 - lost);
    assert_eq!(
        outcome.recording_gap(),
        Some(format!(
            "recording incomplete: {lost} events lost ({reason})"
        ))
    );
    assert_eq!(writer.status().lost_events, lost);
    // The Sessions table flags the row, and says what was lost on hover.
    let rows = store.request_rows(session, Page::ALL).expect("rows");
    assert_eq!(
        rows[0].recording_gap,
        Some(format!(
            "recording incomplete: {lost} events lost ({reason})"
        ))
    );
    assert_eq!(
        promptwire::ui::sessions::status_text(&rows[0]),
        "! completed · recording incomplete"
    );
    assert_eq!(
        store.list_sessions(Page::ALL).expect("list")[0].unfinished(),
        Some("1 recorded incompletely".to_string())
    );
}

#[test]
fn a_request_into_a_deleted_session_is_refused_alone() {
    let (path, session) = setup("refused");
    let writer = Writer::open(&path).expect("writer");
    let (gone_notify, gone) = reports();
    let (kept_notify, kept) = reports();
    let mut dead =
        writer.begin_request(SessionRef::Id(session + 100), request(0), Some(gone_notify));
    let mut live = writer.begin_request(SessionRef::Id(session), request(1), Some(kept_notify));
    dead.event(event(0));
    live.event(event(0));
    dead.outcome(completed(1));
    live.outcome(completed(1));
    assert!(writer.flush(Duration::from_secs(10)), "flushed");
    let gone = gone.lock().expect("reports").clone();
    assert_eq!(gone.len(), 1);
    assert!(
        matches!(&gone[0], Report::RequestLost { reason, .. } if reason == &format!("session {} is no longer in the database", session + 100)),
        "{gone:?}"
    );
    let id = only_request(&path, session);
    assert_eq!(stored_request(&kept), Some(id));
    let store = Store::open(&path).expect("reader");
    assert_eq!(store.outcome(id).expect("outcome"), Some(completed(1)));
}

#[test]
fn a_job_runs_on_the_writer_after_everything_queued_before_it() {
    let (path, session) = setup("job");
    let options = WriterOptions {
        max_delay: Duration::from_secs(60),
        ..WriterOptions::default()
    };
    let writer = Writer::open_with(&path, options).expect("writer");
    let mut request_writer = writer.begin_request(SessionRef::Id(session), request(0), None);
    for seq in 0..5 {
        request_writer.event(event(seq));
    }
    // The job sees the request and its five events: they were committed before it ran, even
    // with a batch delay of a minute.
    let seen = writer.run(move |store| {
        let requests = store.requests(session, Page::ALL)?;
        let id = requests[0].id;
        let events = store.event_count(id)?;
        let created = store.create_session(&NewSession {
            name: "made by the job".to_string(),
            source: Source::Import,
            provider: None,
            model: None,
            created_us: 1,
        })?;
        Ok::<_, promptwire::store::StoreError>((requests.len(), events, created))
    });
    let (requests, events, created) = seen
        .recv_timeout(Duration::from_secs(10))
        .expect("the job ran")
        .expect("the job's reads and write");
    assert_eq!((requests, events), (1, 5));
    let store = Store::open(&path).expect("reader");
    assert_eq!(
        store.session(created).expect("session").name,
        "made by the job"
    );
}

#[test]
fn a_stream_that_fills_the_queue_loses_nothing_and_gets_its_outcome_stored() {
    let (path, session) = setup("queue-full");
    let options = WriterOptions {
        queue_capacity: 64,
        ..WriterOptions::default()
    };
    let writer = Writer::open_with(&path, options).expect("writer");
    // The writer thread is held in a job, so nothing leaves the queue meanwhile: what does not
    // fit goes to the journal.
    let (release, held) = std::sync::mpsc::channel::<()>();
    let job_done = writer.run(move |_| {
        let _ = held.recv_timeout(Duration::from_secs(10));
    });
    let mut request_writer = writer.begin_request(SessionRef::Id(session), request(0), None);
    for seq in 0..200 {
        request_writer.event(event(seq));
    }
    assert_eq!(request_writer.lost_events(), 0);
    request_writer.outcome(completed(200));
    release.send(()).expect("release the writer");
    job_done.recv().expect("the job ran");
    assert!(writer.flush(Duration::from_secs(30)), "flushed");
    let id = only_request(&path, session);
    let store = Store::open(&path).expect("reader");
    assert_eq!(store.outcome(id).expect("read"), Some(completed(200)));
    assert_eq!(
        store.events(id, Page::ALL).expect("events"),
        (0..200).map(event).collect::<Vec<_>>()
    );
}

#[test]
fn a_locked_database_spills_to_the_journal_and_everything_is_stored_in_order() {
    let (path, session) = setup("journal");
    let options = WriterOptions {
        queue_capacity: 256,
        event_budget_bytes: 16 * 1024,
        ..WriterOptions::default()
    };
    let writer = Writer::open_with(&path, options).expect("writer");
    let locker = lock_for(&path, Duration::from_millis(1500));
    let mut request_writer = writer.begin_request(SessionRef::Id(session), request(0), None);
    for seq in 0..20_000 {
        request_writer.event(event(seq));
    }
    assert_eq!(request_writer.lost_events(), 0);
    request_writer.outcome(completed(20_000));
    // Meanwhile the journal holds what the queue could not, owner-only, beside the database.
    let status = writer.status();
    assert!(status.journaled_events > 0, "{status:?}");
    let journal = std::fs::read_dir(path.parent().expect("dir"))
        .expect("dir")
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("journal.sqlite.journal-"))
        })
        .expect("a journal file");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&journal)
            .expect("meta")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    locker.join().expect("locker");
    assert!(writer.flush(Duration::from_secs(30)), "flushed");
    let id = only_request(&path, session);
    let store = Store::open(&path).expect("reader");
    assert_eq!(
        store.events(id, Page::ALL).expect("events"),
        (0..20_000).map(event).collect::<Vec<_>>()
    );
    assert_eq!(store.outcome(id).expect("outcome"), Some(completed(20_000)));
    let status = writer.status();
    assert_eq!(
        (
            status.lost_events,
            status.journaled_events,
            status.committed_events
        ),
        (0, 0, 20_000)
    );
    assert!(status.spilled_events > 0);
    drop(writer);
    assert!(
        !journal.exists(),
        "the journal is removed when the writer stops"
    );
}
