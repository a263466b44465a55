//! Importing Codex's own session logs (rollouts, see [`crate::core::rollout`]): each thread
//! becomes one session, one request per model call with its usage as the outcome, in one
//! transaction per rollout, skipped when its thread was imported before (idempotent by thread
//! id). A folder import walks `$CODEX_HOME/sessions`-style trees with a progress callback and a
//! cancel flag, so the app can run it on a worker. Files are only ever opened for reading.
//!
//! Secrets are redacted as for recordings and exports ([`crate::core::redact::redact_text`] over
//! every stored item and field set): rollouts hold whatever the user pasted.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use serde::Serialize;
use serde_json::{Value, json};

use super::Store;
use super::body::push_varint;
use super::error::{StoreError, StoreResult};
use super::rollout_files::{group_by_thread, read_bounded, read_group, rollout_files};
use super::types::{NewRequest, NewSession, OutcomeRecord, RecordedState, ResponseMeta, Source};
use super::write::{
    RequestParts, insert_request_parts, insert_session, intern, store_body, update_response,
    upsert_outcome,
};
use crate::core::redact::{redact_text, try_redact_value, try_redacted_json};
use crate::core::rollout::{self, Limits, RequestKind, Rollout, RolloutSession};

/// Default largest rollout file read, in bytes.
pub const DEFAULT_MAX_ROLLOUT_BYTES: u64 = 1 << 30;

/// What importing one rollout did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RolloutImport {
    /// The file.
    pub path: PathBuf,
    /// Its thread id.
    pub thread_id: String,
    /// The new session (`None` when skipped).
    pub session_id: Option<i64>,
    /// Requests imported.
    pub requests: usize,
    /// True when the thread had been imported before.
    pub skipped: bool,
    /// Lines of unknown types kept with the session.
    pub unknown_lines: usize,
    /// The 1-based number of a last line that did not parse (the file was being written).
    pub truncated_line: Option<usize>,
}

/// Progress of a folder import, reported after each file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FolderProgress {
    /// Files handled so far.
    pub done: usize,
    /// Rollout files found.
    pub total: usize,
    /// Sessions created so far.
    pub imported: usize,
    /// Files skipped (thread imported before).
    pub skipped: usize,
    /// Files that could not be imported.
    pub failed: usize,
}

/// What a folder import did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FolderImport {
    /// Every rollout imported or skipped, in path order.
    pub rollouts: Vec<RolloutImport>,
    /// Files that could not be imported: (path, message).
    pub failed: Vec<(PathBuf, String)>,
    /// True when the cancel flag stopped the walk (what was imported stays).
    pub cancelled: bool,
}

/// A rollout request's fields with `"input": []` at index `input_at` (at the end when past it).
fn head_with_input(head: &crate::core::json::JsonMap, input_at: usize) -> Value {
    let mut out = crate::core::json::JsonMap::with_capacity(head.len() + 1);
    for (index, (key, value)) in head.iter().enumerate() {
        if index == input_at {
            out.insert("input".to_string(), Value::Array(Vec::new()));
        }
        out.insert(key.clone(), value.clone());
    }
    if !out.contains_key("input") {
        out.insert("input".to_string(), Value::Array(Vec::new()));
    }
    Value::Object(out)
}

impl Store {
    /// Thread ids of the rollouts already imported.
    pub fn imported_threads(&self) -> StoreResult<HashSet<String>> {
        let mut stmt = self
            .conn
            .prepare("SELECT name FROM sessions WHERE source = 'import' AND name LIKE '%]'")?;
        let names = stmt.query_map([], |row| row.get::<_, String>(0))?;
        let mut out = HashSet::new();
        for name in names {
            if let Some(id) = thread_of_name(&name?) {
                out.insert(id.to_string());
            }
        }
        Ok(out)
    }

    /// Imports the rollout at `path` (read-only), unless its thread was imported before.
    pub fn import_rollout_file(
        &mut self,
        path: &Path,
        max_bytes: u64,
        limits: &Limits,
    ) -> StoreResult<Vec<RolloutImport>> {
        let known = self.imported_threads()?;
        let bytes = read_bounded(path, max_bytes)?;
        self.import_rollout_bytes(&bytes, path, limits, &known)
    }

    /// Imports rollout bytes read from `path`, skipping threads in `known`; one transaction per
    /// thread.
    pub fn import_rollout_bytes(
        &mut self,
        bytes: &[u8],
        path: &Path,
        limits: &Limits,
        known: &HashSet<String>,
    ) -> StoreResult<Vec<RolloutImport>> {
        let parsed = rollout::parse(bytes, limits).map_err(|e| StoreError::BadImport {
            message: e.to_string(),
            path: path.to_path_buf(),
        })?;
        let mut out = Vec::with_capacity(parsed.sessions.len());
        for (index, session) in parsed.sessions.iter().enumerate() {
            let mut import = RolloutImport {
                path: path.to_path_buf(),
                thread_id: session.thread_id.clone(),
                session_id: None,
                requests: session.requests.len(),
                skipped: known.contains(&session.thread_id),
                unknown_lines: parsed.unknown.len(),
                truncated_line: parsed.truncated_last_line.as_ref().map(|t| t.line),
            };
            if import.skipped {
                import.requests = 0;
            } else {
                let file_notes = (index == 0).then_some(&parsed);
                import.session_id = Some(self.write_rollout_session(session, file_notes, path)?);
            }
            out.push(import);
        }
        Ok(out)
    }

    /// Imports every rollout (`rollout-*.jsonl`) under `dir`, in path order, skipping threads
    /// imported before; the files of one thread (a resume that started a linked file) become
    /// one session. Calls `progress` after each thread; stops between threads when `cancel` is
    /// set. A file that cannot be imported is reported and the walk goes on.
    pub fn import_rollout_dir(
        &mut self,
        dir: &Path,
        max_bytes: u64,
        limits: &Limits,
        progress: &mut dyn FnMut(&FolderProgress),
        cancel: &AtomicBool,
    ) -> StoreResult<FolderImport> {
        let files = rollout_files(dir)?;
        let mut known = self.imported_threads()?;
        let mut report = FolderImport::default();
        let mut state = FolderProgress {
            done: 0,
            total: files.len(),
            imported: 0,
            skipped: 0,
            failed: 0,
        };
        for group in group_by_thread(files) {
            if cancel.load(Ordering::Relaxed) {
                report.cancelled = true;
                break;
            }
            let first = group.paths[0].clone();
            // The thread id is in the file name: a known thread is skipped without reading.
            let result = match group.thread.filter(|id| known.contains(id)) {
                Some(id) => Ok(vec![RolloutImport {
                    path: first.clone(),
                    thread_id: id,
                    session_id: None,
                    requests: 0,
                    skipped: true,
                    unknown_lines: 0,
                    truncated_line: None,
                }]),
                None => read_group(&group.paths, max_bytes)
                    .and_then(|bytes| self.import_rollout_bytes(&bytes, &first, limits, &known)),
            };
            match result {
                Ok(imports) => {
                    for import in imports {
                        known.insert(import.thread_id.clone());
                        if import.skipped {
                            state.skipped += 1;
                        } else {
                            state.imported += 1;
                        }
                        report.rollouts.push(import);
                    }
                }
                Err(e @ (StoreError::ReadOnly { .. } | StoreError::Sqlite(_))) => return Err(e),
                Err(e) => {
                    state.failed += 1;
                    report.failed.push((first, e.to_string()));
                }
            }
            state.done += group.paths.len();
            progress(&state);
        }
        Ok(report)
    }

    /// Writes one thread as a new session, in one transaction.
    fn write_rollout_session(
        &mut self,
        session: &RolloutSession,
        file: Option<&Rollout>,
        path: &Path,
    ) -> StoreResult<i64> {
        let conn = self.writable()?;
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let first_model = session
            .requests
            .first()
            .and_then(|r| r.head.get("model"))
            .and_then(Value::as_str)
            .map(str::to_string);
        let session_id = insert_session(
            &tx,
            &NewSession {
                name: session_name(session),
                source: Source::Import,
                provider: session
                    .meta
                    .get("model_provider")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                model: first_model,
                created_us: session.started_at_ms.unwrap_or(0).saturating_mul(1000),
            },
        )?;
        // Each item serialized, redacted and interned once for the whole session.
        let mut item_ids: HashMap<u32, (i64, usize)> = HashMap::new();
        for (position, request) in session.requests.iter().enumerate() {
            let mut list = Vec::with_capacity(request.input.len() * 3);
            let mut items_bytes = 0usize;
            for index in &request.input {
                let (id, len) = match item_ids.get(index) {
                    Some(known) => *known,
                    None => {
                        let value = session.items.get(*index as usize).unwrap_or(&Value::Null);
                        let text = value.to_string();
                        let text = try_redacted_json(&text)
                            .map_err(StoreError::redaction("rollout input item"))?;
                        let id = intern(&tx, &text)?;
                        item_ids.insert(*index, (id, text.len()));
                        (id, text.len())
                    }
                };
                items_bytes += len;
                push_varint(&mut list, u64::try_from(id).unwrap_or(0));
            }
            // `{fields…,"input":[items]…}`, compact: the fields with an empty input array where
            // the items go, cut into pieces; the items are joined in on rebuild.
            let head = head_with_input(&request.head, request.input_at).to_string();
            let head = try_redacted_json(&head)
                .map_err(StoreError::redaction("rollout request fields"))?;
            let head_cut = store_body(&tx, head.as_bytes())?;
            let Some(head_pieces) = head_cut.pieces.filter(|list| list.contains(&0)) else {
                return Err(StoreError::Damaged(format!(
                    "rollout request {position}: its fields do not make a JSON object"
                )));
            };
            let n = request.input.len();
            let body_bytes = head.len() + items_bytes + n.saturating_sub(1);
            let mut extra = json!({
                "rollout": {
                    "file": path.display().to_string(),
                    "line": request.line,
                    "thread_id": session.thread_id,
                    "cli_version": session.cli_version,
                    "rules": session.rules,
                    "item_rules": session.item_rules,
                    "kind": request.kind,
                    "response_id": request.response_id,
                    "turn_id": request.turn_id,
                    "usage_source": request.usage_source,
                    "input_items": request.input.len(),
                    "reconstructed_items": request.reconstructed_items,
                    "reconstructed_fields": request.reconstructed_fields,
                    "not_recorded": request.not_recorded,
                }
            });
            if position == 0
                && let Some(file) = file
            {
                extra["rollout"]["unknown_lines"] =
                    serde_json::to_value(&file.unknown).unwrap_or(Value::Null);
                extra["rollout"]["truncated_last_line"] =
                    serde_json::to_value(&file.truncated_last_line).unwrap_or(Value::Null);
                extra = try_redact_value(&extra)
                    .map_err(StoreError::redaction("rollout provenance"))?;
            }
            let lite = session
                .items
                .get(request.input.first().copied().unwrap_or(u32::MAX) as usize)
                .and_then(|v| v.get("type"))
                .and_then(Value::as_str)
                == Some("additional_tools");
            let new = NewRequest {
                dialect: Some(if lite { "lite" } else { "standard" }.to_string()),
                rules: Some(session.rules.clone()),
                provider: session
                    .meta
                    .get("model_provider")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                method: "POST".to_string(),
                url: match request.kind {
                    RequestKind::Compaction => "codex-rollout:/responses#compaction",
                    RequestKind::Turn => "codex-rollout:/responses",
                }
                .to_string(),
                body: &[],
                headers: &[],
                extra: Some(extra),
                started_us: request.sent_at_ms.map(|ms| ms.saturating_mul(1000)),
            };
            let parts = RequestParts {
                pieces: Some(&head_pieces),
                model: head_cut.model.as_deref(),
                item_list: &list,
                verbatim: None,
                body_bytes,
            };
            let request_id = insert_request_parts(&tx, session_id, &new, &parts)?;
            let total_us = request
                .sent_at_ms
                .zip(request.finished_at_ms)
                .map(|(a, b)| (b - a).max(0).saturating_mul(1000));
            update_response(
                &tx,
                request_id,
                &ResponseMeta {
                    total_us,
                    ..ResponseMeta::default()
                },
            )?;
            if let Some(usage) = &request.usage {
                let outcome = OutcomeRecord {
                    state: RecordedState::Completed,
                    response_id: request.response_id.clone(),
                    usage: serde_json::to_value(usage).ok(),
                    total_us,
                    ..OutcomeRecord::default()
                };
                upsert_outcome(&tx, request_id, &outcome)?;
            }
        }
        tx.commit()?;
        Ok(session_id)
    }
}

/// `Codex 0.171.0 · first prompt… [thread id]`: the bracketed thread id is what makes imports
/// idempotent.
fn session_name(session: &RolloutSession) -> String {
    let prompt = session
        .requests
        .iter()
        .flat_map(|r| r.input.iter())
        .filter_map(|i| session.items.get(*i as usize))
        .find_map(|item| {
            let is_user = item.get("role").and_then(Value::as_str) == Some("user");
            let text = item.pointer("/content/0/text").and_then(Value::as_str)?;
            (is_user && !text.starts_with('<')).then_some(text)
        })
        .unwrap_or("");
    let mut excerpt: String = redact_text(prompt).chars().take(60).collect();
    if prompt.chars().count() > 60 {
        excerpt.push('…');
    }
    let version = session.cli_version.as_deref().unwrap_or("?");
    format!("Codex {version} · {excerpt} [{}]", session.thread_id)
}

fn thread_of_name(name: &str) -> Option<&str> {
    let inner = name.strip_suffix(']')?;
    inner.rsplit_once('[').map(|(_, id)| id)
}
