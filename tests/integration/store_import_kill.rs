//! `promptwire sessions import` of a 300-entry HAR is one transaction (issue 15): the real CLI,
//! killed with SIGKILL while it writes, leaves no session at all — never a partial one listed
//! like a complete one — and the database still opens and imports the same file whole.

#![cfg(unix)]

use crate::support::xorshift;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use promptwire::core::stream::RawEvent;
use promptwire::store::{NewRequest, NewSession, Page, ResponseMeta, Source, Store};

use xorshift::Xorshift;

const ENTRIES: usize = 300;

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("store_import_kill");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let path = dir.join(name);
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    path
}

/// A HAR of 300 requests, each with ~40 KB of body no other shares (hard to compress) and 20 events, written by
/// the store's own export.
pub(crate) fn write_har(path: &Path) {
    let db = scratch("source.sqlite");
    let mut store = Store::open(&db).expect("open source");
    let session = store
        .create_session(&NewSession {
            name: "three hundred".to_string(),
            source: Source::Proxy,
            provider: Some("openai".to_string()),
            model: Some("gpt-5.5".to_string()),
            created_us: 1_795_000_000_000_000,
        })
        .expect("session");
    for k in 0..ENTRIES {
        // Hex of a xorshift sequence: text the store's compression cannot shrink much, so the
        // import writes megabytes and a kill lands while it writes.
        let mut rng = Xorshift(0x9e37_79b9_7f4a_7c15u64 ^ k as u64);
        let text: String = (0..2400).map(|_| format!("{:016x} ", rng.next())).collect();
        let body = serde_json::json!({
            "model": "gpt-5.5",
            "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}],
            "stream": true,
        });
        let body = serde_json::to_vec(&body).expect("render");
        let id = store
            .add_request(
                session,
                &NewRequest {
                    dialect: Some("standard".to_string()),
                    provider: Some("openai".to_string()),
                    started_us: Some(1_795_000_000_000_000 + k as i64 * 1_000_000),
                    ..NewRequest::post("http://127.0.0.1:9/v1/responses", &body)
                },
            )
            .expect("request");
        store
            .set_response(
                id,
                &ResponseMeta {
                    status: Some(200),
                    headers: vec![("content-type".to_string(), "text/event-stream".to_string())],
                    body: None,
                    wait_us: Some(1000),
                    total_us: Some(9000),
                    http_version: None,
                    extra: None,
                },
            )
            .expect("response");
        let events: Vec<RawEvent> = (0..20u64)
            .map(|seq| RawEvent {
                seq,
                received_at: Duration::from_millis(seq),
                event: Some("response.output_text.delta".to_string()),
                data: format!(
                    r#"{{"type":"response.output_text.delta","sequence_number":{seq},"delta":"entry {k} word {seq} "}}"#
                ), bytes: None,
            })
            .collect();
        store.add_events(id, &events).expect("events");
    }
    let har = store.export_har(session, false).expect("export");
    std::fs::write(path, har.to_string()).expect("write har");
}

fn import(har: &Path, db: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_promptwire"));
    command
        .args(["sessions", "import"])
        .arg(har)
        .arg("--db")
        .arg(db)
        .arg("--json")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    command
}

/// Sessions and their request counts.
fn sessions(db: &Path) -> Vec<(String, i64)> {
    let store = Store::open(db).expect("the database opens after the kill");
    store
        .list_sessions(Page::ALL)
        .expect("list")
        .into_iter()
        .map(|s| (s.name, s.requests))
        .collect()
}

fn wal_len(db: &Path) -> u64 {
    std::fs::metadata(format!("{}-wal", db.display())).map_or(0, |m| m.len())
}

#[test]
fn sigkill_mid_import_leaves_no_partial_session() {
    let har = scratch("three-hundred.har");
    write_har(&har);
    let mut killed_mid_write = 0;
    for attempt in 0..5 {
        let db = scratch(&format!("target-{attempt}.sqlite"));
        // The schema exists beforehand, so whatever the child writes to the WAL is the import.
        drop(Store::open(&db).expect("create"));
        let mut child = import(&har, &db).spawn().expect("spawn the CLI");
        let deadline = Instant::now() + Duration::from_secs(120);
        let mut exited = false;
        // Wait until the import has written a good part of its transaction, then kill it.
        while wal_len(&db) < 2_000_000 {
            if child.try_wait().expect("poll").is_some() {
                exited = true;
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the import neither wrote nor ended"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        if !exited {
            child.kill().expect("SIGKILL");
        }
        let status = child.wait().expect("reap");
        let found = sessions(&db);
        if exited || status.success() {
            // Finished before the kill: then it is whole.
            assert_eq!(found, vec![("three hundred".to_string(), ENTRIES as i64)]);
        } else if !found.is_empty() {
            // Killed after the commit but before the process exited: whole, as it must be.
            assert_eq!(
                found,
                vec![("three hundred".to_string(), ENTRIES as i64)],
                "attempt {attempt}: a partial import was left"
            );
        } else {
            killed_mid_write += 1;
            // The same file then imports whole into the same database.
            let out = import(&har, &db).status().expect("re-run");
            assert!(out.success());
            assert_eq!(
                sessions(&db),
                vec![("three hundred".to_string(), ENTRIES as i64)]
            );
        }
    }
    assert!(
        killed_mid_write > 0,
        "no attempt killed the import while it was writing"
    );
}

/// A HAR import tells its progress — each entry parsed, then each written, of twice the
/// entries — and a cancel from the progress callback midway through the writes keeps nothing;
/// the same file then imports whole.
#[test]
fn a_har_import_reports_progress_and_a_cancel_keeps_nothing() {
    let har_path = scratch("progress.har");
    write_har(&har_path);
    let text = std::fs::read_to_string(&har_path).expect("har");
    let db = scratch("progress.sqlite");
    let mut store = Store::open(&db).expect("open");
    let mut seen = Vec::new();
    let cancelled = store.import_har_with(&text, "progress", &har_path, &mut |done, total| {
        seen.push((done, total));
        done < ENTRIES + ENTRIES / 2
    });
    assert!(
        matches!(cancelled, Err(promptwire::store::StoreError::Cancelled)),
        "{cancelled:?}"
    );
    let expected: Vec<(usize, usize)> = (1..=ENTRIES + ENTRIES / 2)
        .map(|done| (done, 2 * ENTRIES))
        .collect();
    assert_eq!(seen, expected);
    assert_eq!(store.list_sessions(Page::ALL).expect("sessions").len(), 0);
    let mut last = None;
    let (_, requests) = store
        .import_har_with(&text, "progress", &har_path, &mut |done, total| {
            last = Some((done, total));
            true
        })
        .expect("imported");
    assert_eq!(
        (requests, last),
        (ENTRIES, Some((2 * ENTRIES, 2 * ENTRIES)))
    );
    assert_eq!(store.list_sessions(Page::ALL).expect("sessions").len(), 1);
}
