//! Targets `har_import` and `rollout_import`: `promptwire sessions import` of a HAR file or a
//! Codex rollout into a fresh in-memory store, then what browsing and exporting the imported
//! session reads back (requests, bodies, events, outcomes, the HAR and JSONL exports, and the
//! cache-prefix analysis of the stored bodies).
//!
//! Invariant checked: a session's own HAR export imports again, with as many requests.

use std::path::Path;

use crate::core::ledger::{self, Rules};
use crate::core::prefix::Session;
use crate::core::rollout::Limits;
use crate::store::prefix_input::push_stored_session;
use crate::store::{Page, Store};

/// Input: a HAR file's bytes.
pub fn har_import(data: &[u8]) {
    let _ = try_har_import(data);
}

/// Input: a rollout file's bytes (JSON lines). The line bound is lowered to 64 KiB so long
/// lines are exercised at fuzzing sizes.
pub fn rollout_import(data: &[u8]) {
    let _ = try_rollout_import(data);
}

fn try_har_import(data: &[u8]) -> Result<(), String> {
    let text = std::str::from_utf8(data).map_err(|e| e.to_string())?;
    let mut store = Store::open_in_memory().map_err(|e| e.to_string())?;
    let (id, count) = store
        .import_har(text, "fuzz", Path::new("fuzz.har"))
        .map_err(|e| e.to_string())?;
    read_back(&mut store, id, Some(count));
    Ok(())
}

fn try_rollout_import(data: &[u8]) -> Result<(), String> {
    let limits = Limits {
        max_line_bytes: 64 * 1024,
    };
    let _ = crate::core::rollout::looks_like_rollout(data);
    let mut store = Store::open_in_memory().map_err(|e| e.to_string())?;
    let imports = store
        .import_rollout_bytes(
            data,
            Path::new("fuzz.jsonl"),
            &limits,
            &std::collections::HashMap::new(),
        )
        .map_err(|e| e.to_string())?;
    for import in imports {
        if let Some(id) = import.session_id {
            read_back(&mut store, id, Some(import.requests));
        }
    }
    Ok(())
}

/// Reads session `id` back the ways the app and the CLI do; its HAR export must import again
/// with `count` requests (when given).
fn read_back(store: &mut Store, id: i64, count: Option<usize>) {
    let requests = store
        .requests(id, Page::ALL)
        .expect("an imported session lists its requests");
    if let Some(count) = count {
        assert_eq!(requests.len(), count, "the import reported another count");
    }
    for request in &requests {
        store
            .request(request.id)
            .expect("an imported request reads");
        store.body(request.id).expect("an imported body reads");
        store
            .events(request.id, Page::ALL)
            .expect("imported events read");
        store
            .outcome(request.id)
            .expect("an imported outcome reads");
    }
    let mut session = Session::default();
    if push_stored_session(&mut session, store, id).is_ok() {
        let _ = ledger::ledger(&session, &Rules::bundled());
    }
    let _ = store.export_jsonl(id, true);
    let _ = store.export_har(id, true);
    let har = store
        .export_har(id, false)
        .expect("an imported session exports");
    let text = serde_json::to_string(&har).expect("a HAR value serializes");
    let (_, again) = store
        .import_har(&text, "fuzz again", Path::new("again.har"))
        .expect("a session's own HAR export imports");
    assert_eq!(
        again,
        requests.len(),
        "the re-import lost or added requests"
    );
}
