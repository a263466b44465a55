//! Importing Codex's own session logs (rollouts, see [`crate::core::rollout`]): each thread
//! becomes one session, one request per model call with its usage as the outcome, in one
//! transaction per rollout, skipped when its thread was imported before (idempotent by thread
//! id). A folder import walks `$CODEX_HOME/sessions`-style trees with a progress callback and a
//! cancel flag, so the app can run it on a worker. Files are only ever opened for reading.
//!
//! Secrets are redacted as for recordings and exports ([`crate::core::redact::redact_text`] over
//! every stored item and field set): rollouts hold whatever the user pasted.

use std::collections::HashMap;
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
use crate::core::rollout::{
    self, Limits, ReconstructedRequest, RequestKind, Rollout, RolloutSession,
};

/// The rollout lines a session holds: line → (request id, its outcome is stored).
type StoredLines = HashMap<usize, (i64, bool)>;

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
    /// True when the thread had been imported before and the file held nothing new.
    pub skipped: bool,
    /// Requests appended to the session of a thread imported before (the file grew).
    pub appended: usize,
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
    /// Files skipped (thread imported before, nothing new).
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
    /// The rollouts already imported: thread id → its session.
    pub fn imported_threads(&self) -> StoreResult<HashMap<String, i64>> {
        let mut stmt = self.conn.prepare(
            "SELECT id, name FROM sessions WHERE source = 'import' AND name LIKE '%]' ORDER BY id",
        )?;
        let rows = stmt.query_map([], |row| {
            Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?))
        })?;
        let mut out = HashMap::new();
        for row in rows {
            let (id, name) = row?;
            if let Some(thread) = thread_of_name(&name) {
                out.entry(thread.to_string()).or_insert(id);
            }
        }
        Ok(out)
    }

    /// The rollout lines of the requests stored in `session`, each with its request id and
    /// whether its outcome (the usage) is stored.
    fn stored_rollout_lines(&self, session: i64) -> StoreResult<StoredLines> {
        let mut out = HashMap::new();
        for summary in self.requests(session, super::Page::ALL)? {
            let record = self.request(summary.id)?;
            let line = record
                .extra
                .as_ref()
                .and_then(|e| e.pointer("/rollout/line"))
                .and_then(Value::as_u64)
                .and_then(|l| usize::try_from(l).ok());
            if let Some(line) = line {
                out.insert(line, (summary.id, self.outcome(summary.id)?.is_some()));
            }
        }
        Ok(out)
    }

    /// Imports the rollout at `path` (read-only); a thread imported before gets the requests
    /// the file has gained since (by line), nothing when it has none.
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

    /// Imports rollout bytes read from `path`; a thread in `known` (thread → session) gets only
    /// the requests of lines it does not have yet, appended to its session, and an outcome for
    /// a stored request whose usage came later. One transaction per thread.
    pub fn import_rollout_bytes(
        &mut self,
        bytes: &[u8],
        path: &Path,
        limits: &Limits,
        known: &HashMap<String, i64>,
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
                skipped: false,
                appended: 0,
                unknown_lines: parsed.unknown.len(),
                truncated_line: parsed.truncated_last_line.as_ref().map(|t| t.line),
            };
            match known.get(&session.thread_id) {
                Some(&existing) => {
                    let stored = self.stored_rollout_lines(existing)?;
                    let appended =
                        self.write_rollout_session(session, None, path, Some((existing, &stored)))?;
                    import.requests = 0;
                    import.appended = appended.1;
                    import.skipped = appended.1 == 0;
                    if !import.skipped {
                        import.session_id = Some(existing);
                    }
                }
                None => {
                    let file_notes = (index == 0).then_some(&parsed);
                    let (id, _) = self.write_rollout_session(session, file_notes, path, None)?;
                    import.session_id = Some(id);
                }
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
            // A known thread is read too: the file may have grown since (Codex was writing it).
            let result = read_group(&group.paths, max_bytes)
                .and_then(|bytes| self.import_rollout_bytes(&bytes, &first, limits, &known));
            match result {
                Ok(imports) => {
                    for import in imports {
                        if let Some(id) = import.session_id {
                            known.entry(import.thread_id.clone()).or_insert(id);
                        }
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

    /// Writes one thread as a new session, or (`existing`: its session and the lines it holds,
    /// each with whether its outcome is stored) the requests of lines it does not hold yet,
    /// appended, and the outcome of a held request whose usage came later. One transaction.
    /// Returns the session and the number of requests written.
    fn write_rollout_session(
        &mut self,
        session: &RolloutSession,
        file: Option<&Rollout>,
        path: &Path,
        existing: Option<(i64, &StoredLines)>,
    ) -> StoreResult<(i64, usize)> {
        let conn = self.writable()?;
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        if let Some((session_id, stored)) = existing {
            let mut item_ids = HashMap::new();
            let mut written = 0;
            for request in &session.requests {
                match stored.get(&request.line) {
                    None => {
                        write_rollout_request(
                            &tx,
                            session_id,
                            session,
                            request,
                            None,
                            path,
                            &mut item_ids,
                        )?;
                        written += 1;
                    }
                    Some(&(id, false)) => {
                        write_rollout_outcome(&tx, id, request, rollout_total_us(request))?;
                    }
                    Some(_) => {}
                }
            }
            tx.commit()?;
            return Ok((session_id, written));
        }
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
        super::links::set_agent(&tx, session_id, &session.agent())?;
        // Each item serialized, redacted and interned once for the whole session.
        let mut item_ids: HashMap<u32, (i64, usize)> = HashMap::new();
        for (position, request) in session.requests.iter().enumerate() {
            let notes = file.filter(|_| position == 0);
            write_rollout_request(
                &tx,
                session_id,
                session,
                request,
                notes,
                path,
                &mut item_ids,
            )?;
        }
        let written = session.requests.len();
        tx.commit()?;
        Ok((session_id, written))
    }
}

/// Writes one request of a rollout thread at the session's next position, inside `tx`: its
/// fields and interned items (`item_ids` remembers the items interned for the thread), its
/// provenance under `extra.rollout` (`notes`: the file's unknown and truncated lines, for the
/// first request), its duration and its usage as the outcome.
fn write_rollout_request(
    tx: &rusqlite::Transaction<'_>,
    session_id: i64,
    session: &RolloutSession,
    request: &ReconstructedRequest,
    notes: Option<&Rollout>,
    path: &Path,
    item_ids: &mut HashMap<u32, (i64, usize)>,
) -> StoreResult<()> {
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
                let id = intern(tx, &text)?;
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
    let head = try_redacted_json(&head).map_err(StoreError::redaction("rollout request fields"))?;
    let head_cut = store_body(tx, head.as_bytes())?;
    let Some(head_pieces) = head_cut.pieces.filter(|list| list.contains(&0)) else {
        return Err(StoreError::Damaged(format!(
            "rollout line {}: its fields do not make a JSON object",
            request.line
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
    if let Some(file) = notes {
        extra["rollout"]["unknown_lines"] =
            serde_json::to_value(&file.unknown).unwrap_or(Value::Null);
        extra["rollout"]["truncated_last_line"] =
            serde_json::to_value(&file.truncated_last_line).unwrap_or(Value::Null);
        extra = try_redact_value(&extra).map_err(StoreError::redaction("rollout provenance"))?;
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
    let request_id = insert_request_parts(tx, session_id, &new, &parts)?;
    let total_us = rollout_total_us(request);
    update_response(
        tx,
        request_id,
        &ResponseMeta {
            total_us,
            ..ResponseMeta::default()
        },
    )?;
    write_rollout_outcome(tx, request_id, request, total_us)?;
    Ok(())
}

/// A rollout request's duration, from its sent and finished times.
fn rollout_total_us(request: &ReconstructedRequest) -> Option<i64> {
    request
        .sent_at_ms
        .zip(request.finished_at_ms)
        .map(|(a, b)| (b - a).max(0).saturating_mul(1000))
}

/// Stores a rollout request's usage as the outcome of stored request `request_id`.
fn write_rollout_outcome(
    tx: &rusqlite::Transaction<'_>,
    request_id: i64,
    request: &ReconstructedRequest,
    total_us: Option<i64>,
) -> StoreResult<()> {
    if let Some(usage) = &request.usage {
        let outcome = OutcomeRecord {
            state: RecordedState::Completed,
            response_id: request.response_id.clone(),
            usage: serde_json::to_value(usage).ok(),
            total_us,
            ..OutcomeRecord::default()
        };
        upsert_outcome(tx, request_id, &outcome)?;
    }
    Ok(())
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
        // A subagent's first message is its task, from its parent (`agent_message`); else
        // Codex's name for it.
        .or_else(|| subagent_task(session))
        .unwrap_or("");
    let mut excerpt: String = redact_text(prompt).chars().take(60).collect();
    if prompt.chars().count() > 60 {
        excerpt.push('…');
    }
    let version = session.cli_version.as_deref().unwrap_or("?");
    format!("Codex {version} · {excerpt} [{}]", session.thread_id)
}

/// What a subagent thread was asked to do, for its name: the task its parent sent (the last
/// line of the first `agent_message`'s text, `Task name: …` before it), else its
/// `session_meta.agent_path` / `agent_nickname`.
fn subagent_task(session: &RolloutSession) -> Option<&str> {
    let message = session
        .items
        .iter()
        .find(|item| item.get("type").and_then(Value::as_str) == Some("agent_message"));
    let task = message
        .and_then(|m| m.pointer("/content/0/text"))
        .and_then(Value::as_str)
        .and_then(|text| {
            text.lines()
                .find_map(|l| l.strip_prefix("Task name: "))
                .map(str::trim)
        });
    task.or_else(|| session.meta.get("agent_path").and_then(Value::as_str))
        .or_else(|| session.meta.get("agent_nickname").and_then(Value::as_str))
        .filter(|t| !t.is_empty())
}

fn thread_of_name(name: &str) -> Option<&str> {
    let inner = name.strip_suffix(']')?;
    inner.rsplit_once('[').map(|(_, id)| id)
}
