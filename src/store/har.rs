//! Import and export of sessions: HAR 1.2 (request with body, response with the SSE text,
//! timings, promptwire's fields under `_promptwire`), a directory of bodies (`0000.json`, …, each
//! the exact body), and JSON Lines (one request per line). Exports redact secrets in headers and
//! bodies unless asked not to, and are written owner-readable only (0600).

use std::io::Write as _;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use rusqlite::Transaction;

use super::Store;
use super::codec::Level;
use super::error::{StoreError, StoreResult};
use super::types::{
    NewRequest, NewSession, OutcomeRecord, Page, RecordedState, ResponseMeta, Source,
};
use super::write::{
    insert_events, insert_request, insert_session, update_response, upsert_outcome,
};
use crate::core::anatomy::AgentTag;
use crate::core::export::{HarEntry, HarResponse, WsMessage, har_log};
use crate::core::redact::{is_identifying_header, try_redact_header, try_redacted_json};
use crate::core::stream::http_error::{classify_http_error, header};
use crate::core::stream::{RawEvent, Replay, SseDecoder, Timing};

/// Formats Unix microseconds as RFC 3339 (UTC, milliseconds).
pub fn rfc3339(us: i64) -> String {
    chrono::DateTime::from_timestamp_micros(us)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
        .unwrap_or_default()
}

fn parse_rfc3339(text: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|t| t.timestamp_micros())
}

/// The SSE text of recorded events (`event:` line when named, one `data:` line per data line).
pub fn sse_text(events: &[RawEvent]) -> String {
    let mut out = String::new();
    for event in events {
        if let Some(name) = &event.event {
            out.push_str("event: ");
            out.push_str(name);
            out.push('\n');
        }
        for line in event.data.split('\n') {
            out.push_str("data: ");
            out.push_str(line);
            out.push('\n');
        }
        out.push('\n');
    }
    out
}

fn ms(us: Option<i64>) -> f64 {
    us.map_or(-1.0, |us| us as f64 / 1000.0)
}

/// Largest HAR timing accepted on import, in milliseconds (a century).
const MAX_TIMING_MS: f64 = 100.0 * 365.0 * 24.0 * 3600.0 * 1000.0;

/// Writes `bytes` to `path`, readable and writable by its owner only. Never writes through a
/// symbolic link: an existing file or link at `path` is replaced, and the new file is created
/// exclusively (`O_EXCL`, which does not follow links).
pub fn write_private(path: &Path, bytes: &[u8]) -> StoreResult<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if !meta.is_dir() => {
            std::fs::remove_file(path).map_err(|e| StoreError::io(e, path))?;
        }
        _ => {}
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    let mut file = options.open(path).map_err(|e| StoreError::io(e, path))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))
            .map_err(|e| StoreError::io(e, path))?;
    }
    file.write_all(bytes).map_err(|e| StoreError::io(e, path))?;
    file.sync_all().map_err(|e| StoreError::io(e, path))
}

/// The media type a response's `content-type` header names (parameters aside).
fn content_type(headers: &[(String, String)]) -> Option<&str> {
    header(headers, "content-type")
        .and_then(|v| v.split(';').next())
        .map(str::trim)
}

impl Store {
    /// The HAR 1.2 log of a session. With `redact`, secrets in headers and bodies are replaced.
    pub fn export_har(&self, session_id: i64, redact: bool) -> StoreResult<Value> {
        let session = self.session(session_id)?;
        let mut entries = Vec::new();
        for summary in self.requests(session_id, Page::ALL)? {
            let record = self.request(summary.id)?;
            let body = self.body(summary.id)?;
            let events = self.events(summary.id, Page::ALL)?;
            let outcome = self.outcome(summary.id)?;
            let websocket = summary.method == "WS";
            let started_us = summary.started_us.unwrap_or(session.created_us);
            // A compressed answer's size on the wire, and why its body is not there.
            let extra_field = |name: &str| record.extra.as_ref().and_then(|e| e.get(name));
            let wire_bytes = extra_field("response_wire_bytes").and_then(Value::as_u64);
            let body_note = extra_field("response_body_note")
                .and_then(Value::as_str)
                .map(str::to_string);
            let response = summary.status.map(|status| {
                let (text, mime_type) = match (&record.response_body, events.as_slice()) {
                    (_, [only]) if only.is_json_response() => {
                        (only.data.clone(), "application/json".to_string())
                    }
                    (Some(bytes), []) => (
                        String::from_utf8_lossy(bytes).into_owned(),
                        content_type(&record.response_headers)
                            .unwrap_or("application/json")
                            .to_string(),
                    ),
                    _ if websocket => (String::new(), String::new()),
                    // A body that could not be decoded (`response_body_note`): nothing shown.
                    (None, []) if body_note.is_some() => (
                        String::new(),
                        content_type(&record.response_headers)
                            .unwrap_or("")
                            .to_string(),
                    ),
                    _ => (sse_text(&events), "text/event-stream".to_string()),
                };
                let wait = ms(summary.wait_us);
                let total = ms(summary.total_us);
                // Events kept as bytes that are not UTF-8: the body as those bytes.
                let body_bytes = match events.as_slice() {
                    [only] if only.is_json_response() => only.bytes.clone(),
                    // An error body that is not UTF-8: its bytes (`encoding: base64`).
                    [] if !websocket => record
                        .response_body
                        .clone()
                        .filter(|b| std::str::from_utf8(b).is_err()),
                    _ if events.iter().any(|e| e.bytes.is_some())
                        && mime_type == "text/event-stream" =>
                    {
                        Some(events.iter().flat_map(RawEvent::to_sse).collect())
                    }
                    _ => None,
                };
                HarResponse {
                    status,
                    headers: record.response_headers.clone(),
                    body: text,
                    body_bytes,
                    mime_type,
                    wait_ms: wait.max(0.0),
                    receive_ms: (total - wait).max(0.0),
                    wire_bytes,
                    comment: body_note.clone(),
                }
            });
            let mut extra = match record.extra.clone() {
                Some(Value::Object(map)) => map,
                _ => serde_json::Map::new(),
            };
            extra.insert("position".to_string(), json!(summary.position));
            extra.insert("dialect".to_string(), json!(summary.dialect));
            extra.insert("rules".to_string(), json!(summary.rules));
            extra.insert("provider".to_string(), json!(summary.provider));
            extra.insert(
                "session".to_string(),
                json!({
                    "name": session.name,
                    "source": session.source,
                    "provider": session.provider,
                    "model": session.model,
                    "created_at": rfc3339(session.created_us),
                }),
            );
            extra.insert(
                "event_times_us".to_string(),
                Value::Array(
                    events
                        .iter()
                        .map(|e| {
                            json!(u64::try_from(e.received_at.as_micros()).unwrap_or(u64::MAX))
                        })
                        .collect(),
                ),
            );
            if let Some(outcome) = &outcome {
                // Redacted with the rest of `_promptwire` (error message and text included).
                let value = serde_json::to_value(outcome).unwrap_or(Value::Null);
                extra.insert("outcome".to_string(), value);
            }
            // A frame and the frames that answered it, at their times.
            let request_body = String::from_utf8_lossy(&body.bytes).into_owned();
            let websocket = websocket.then(|| {
                let at = |us: i64| us as f64 / 1e6;
                let mut messages = vec![WsMessage {
                    sent: true,
                    time: at(started_us),
                    data: request_body.clone(),
                }];
                messages.extend(events.iter().map(|e| WsMessage {
                    sent: false,
                    time: at(started_us.saturating_add(
                        i64::try_from(e.received_at.as_micros()).unwrap_or(i64::MAX),
                    )),
                    data: e.data.clone(),
                }));
                messages
            });
            entries.push(HarEntry {
                started_at: rfc3339(started_us),
                method: if websocket.is_some() {
                    "GET".to_string()
                } else {
                    summary.method.clone()
                },
                url: summary.url.clone(),
                request_headers: record.headers.clone(),
                request_body,
                response,
                extra: Value::Object(extra),
                websocket,
            });
        }
        har_log(&entries, redact).map_err(StoreError::redaction("HAR export"))
    }

    /// Writes each request body of a session to `dir` as `0000.json`, `0001.json`, … in session
    /// order, each the exact body (secrets redacted when `redact`), never through a symbolic
    /// link. Returns the number written. A folder it creates is owner-only (0700); an existing one keeps its permissions.
    pub fn export_bodies(&self, session_id: i64, dir: &Path, redact: bool) -> StoreResult<usize> {
        // The folder itself is never a symbolic link: the files would land where it points.
        if std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(StoreError::io(
                std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "the folder is a symbolic link; give the folder it points to, or another",
                ),
                dir,
            ));
        }
        if !dir.is_dir() {
            let mut builder = std::fs::DirBuilder::new();
            builder.recursive(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::DirBuilderExt as _;
                builder.mode(0o700);
            }
            builder.create(dir).map_err(|e| StoreError::io(e, dir))?;
        }
        let requests = self.requests(session_id, Page::ALL)?;
        for (index, summary) in requests.iter().enumerate() {
            let body = self.body(summary.id)?;
            let path = dir.join(format!("{index:04}.json"));
            if redact {
                let text = String::from_utf8_lossy(&body.bytes);
                let text =
                    try_redacted_json(&text).map_err(StoreError::redaction("body export"))?;
                write_private(&path, text.as_bytes())?;
            } else {
                write_private(&path, &body.bytes)?;
            }
        }
        Ok(requests.len())
    }

    /// JSON Lines of a session: one object per request with its body, events and outcome.
    pub fn export_jsonl(&self, session_id: i64, redact: bool) -> StoreResult<String> {
        let session = self.session(session_id)?;
        let mut out = String::new();
        for summary in self.requests(session_id, Page::ALL)? {
            let record = self.request(summary.id)?;
            let body = self.body(summary.id)?;
            let events: Vec<Value> = self
                .events(summary.id, Page::ALL)?
                .into_iter()
                .map(|e| {
                    json!({
                        "seq": e.seq,
                        "received_us": u64::try_from(e.received_at.as_micros()).unwrap_or(u64::MAX),
                        "event": e.event,
                        "data": e.data,
                    })
                })
                .collect();
            let headers: Vec<Value> = record
                .headers
                .iter()
                .map(|(n, v)| {
                    let v = if redact {
                        try_redact_header(n, v)?
                    } else {
                        v.clone()
                    };
                    Ok(json!([n, v]))
                })
                .collect::<Result<_, _>>()
                .map_err(StoreError::redaction("JSON Lines export"))?;
            let identifying: Vec<&str> = record
                .headers
                .iter()
                .chain(&record.response_headers)
                .filter(|(n, _)| is_identifying_header(n))
                .map(|(n, _)| n.as_str())
                .collect();
            let line = json!({
                "session": session.id,
                "session_name": session.name,
                "position": summary.position,
                "started_at": summary.started_us.map(rfc3339),
                "method": summary.method,
                "url": summary.url,
                "dialect": summary.dialect,
                "rules": summary.rules,
                "provider": summary.provider,
                "headers": headers,
                "body": body.value.clone().unwrap_or_else(|| Value::String(String::from_utf8_lossy(&body.bytes).into_owned())),
                "status": summary.status,
                "wait_us": summary.wait_us,
                "total_us": summary.total_us,
                "response_body": record.response_body,
                "events": events,
                "outcome": self.outcome(summary.id)?,
            });
            let mut line = line;
            if !identifying.is_empty()
                && let Some(map) = line.as_object_mut()
            {
                // Marked, not redacted: these name an organization, project or account.
                map.insert("identifying_headers".to_string(), json!(identifying));
            }
            let line = line.to_string();
            if redact {
                let line =
                    try_redacted_json(&line).map_err(StoreError::redaction("JSON Lines export"))?;
                out.push_str(&line);
            } else {
                out.push_str(&line);
            }
            out.push('\n');
        }
        Ok(out)
    }

    /// Imports a HAR file's text as a new session; returns (session id, requests imported).
    /// `name` is used when the file carries no session name.
    pub fn import_har(&mut self, text: &str, name: &str, path: &Path) -> StoreResult<(i64, usize)> {
        self.import_har_with(text, name, path, &mut |_, _| true)
    }

    /// [`Store::import_har`], telling `progress` how far it is — `(done, total)` steps: each
    /// entry parsed, then each entry written, so `total` is twice the entries — after every
    /// step. When `progress` returns false the import stops: nothing is kept (the one
    /// transaction is rolled back) and the error is [`StoreError::Cancelled`].
    pub fn import_har_with(
        &mut self,
        text: &str,
        name: &str,
        path: &Path,
        progress: &mut dyn FnMut(usize, usize) -> bool,
    ) -> StoreResult<(i64, usize)> {
        let bad = |message: String| StoreError::BadImport {
            message,
            path: path.to_path_buf(),
        };
        let har: Value = serde_json::from_str(text)
            .map_err(|e| bad(format!("not a HAR file (invalid JSON: {e})")))?;
        let entries = har
            .pointer("/log/entries")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("not a HAR file (no log.entries)".to_string()))?;
        let first_extra = entries.first().and_then(|e| e.get("_promptwire"));
        let session_info = first_extra.and_then(|x| x.get("session"));
        let info_str = |key: &str| {
            session_info
                .and_then(|s| s.get(key))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let first_started = entries
            .first()
            .and_then(|e| e.get("startedDateTime"))
            .and_then(Value::as_str)
            .and_then(parse_rfc3339);
        let created_us = info_str("created_at")
            .as_deref()
            .and_then(parse_rfc3339)
            .or(first_started)
            .unwrap_or(0);
        let first_model = entries.first().and_then(|e| {
            let text = e.pointer("/request/postData/text")?.as_str()?;
            let body: Value = serde_json::from_str(text).ok()?;
            body.get("model")?.as_str().map(str::to_string)
        });
        let session = NewSession {
            name: info_str("name").unwrap_or_else(|| name.to_string()),
            source: Source::Import,
            provider: info_str("provider"),
            model: info_str("model").or(first_model),
            created_us,
        };
        // Parse every entry before writing anything.
        let total = entries.len() * 2;
        let mut parsed = Vec::with_capacity(entries.len());
        for (i, e) in entries.iter().enumerate() {
            parsed.push(parse_entry(e).map_err(|m| bad(format!("entry {i}: {m}")))?);
            if !progress(i + 1, total) {
                return Err(StoreError::Cancelled);
            }
        }
        // One transaction: a failure, a cancel or a kill midway leaves nothing behind. Each
        // agent (a subagent's thread) is a session of its own, linked to its parent.
        let conn = self.writable()?;
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let groups = agent_groups(&parsed);
        let mut main = None;
        let mut done = 0;
        for (k, (agent, entries)) in groups.iter().enumerate() {
            let this = match (k, agent) {
                (0, _) => session.clone(),
                (_, agent) => NewSession {
                    name: format!(
                        "{} · {} {}",
                        session.name,
                        agent
                            .as_ref()
                            .and_then(|a| a.kind.as_deref())
                            .unwrap_or("subagent"),
                        agent.as_ref().map_or("", |a| a.thread.as_str())
                    ),
                    ..session.clone()
                },
            };
            let session_id = insert_session(&tx, &this)?;
            if let Some(agent) = agent {
                super::links::set_agent(&tx, session_id, agent)?;
            }
            main.get_or_insert(session_id);
            let chosen: Vec<&ParsedEntry> = entries.iter().map(|&i| &parsed[i]).collect();
            import_entries(&tx, session_id, &chosen, &mut |written| {
                progress(parsed.len() + done + written, total)
            })?;
            done += entries.len();
        }
        let session_id = match main {
            Some(id) => id,
            None => insert_session(&tx, &session)?,
        };
        tx.commit()?;
        Ok((session_id, parsed.len()))
    }
}

/// The entries of a HAR by agent: first those of the root conversation (no subagent tag), then
/// each subagent's thread in the order it first appears, each with its tag (the root's: the
/// first thread its entries name). One group when the file holds one conversation.
fn agent_groups(parsed: &[ParsedEntry]) -> Vec<(Option<AgentTag>, Vec<usize>)> {
    let mut root: (Option<AgentTag>, Vec<usize>) = (None, Vec::new());
    let mut children: Vec<(Option<AgentTag>, Vec<usize>)> = Vec::new();
    for (i, entry) in parsed.iter().enumerate() {
        let body: Option<Value> = serde_json::from_str(&entry.body).ok();
        let headers = entry.headers.iter().map(|(n, v)| (n.as_str(), v.as_str()));
        match AgentTag::from_request(headers, body.as_ref()) {
            Some(tag) if tag.is_subagent() => {
                match children
                    .iter_mut()
                    .find(|(t, _)| t.as_ref().is_some_and(|t| t.thread == tag.thread))
                {
                    Some((_, list)) => list.push(i),
                    None => children.push((Some(tag), vec![i])),
                }
            }
            tag => {
                if root.0.is_none() {
                    root.0 = tag;
                }
                root.1.push(i);
            }
        }
    }
    let mut groups = Vec::with_capacity(children.len() + 1);
    if !root.1.is_empty() {
        groups.push(root);
    }
    groups.extend(children);
    groups
}

/// Writes `parsed` into session `session_id`, telling `written` after each entry (false from
/// it stops with [`StoreError::Cancelled`]; the caller's transaction is then dropped).
fn import_entries(
    tx: &Transaction<'_>,
    session_id: i64,
    parsed: &[&ParsedEntry],
    written: &mut dyn FnMut(usize) -> bool,
) -> StoreResult<()> {
    for (done, entry) in parsed.iter().enumerate() {
        let id = insert_request(
            tx,
            session_id,
            &NewRequest {
                dialect: entry.dialect.clone(),
                rules: entry.rules.clone(),
                provider: entry.provider.clone(),
                method: entry.method.clone(),
                url: entry.url.clone(),
                body: entry.body.as_bytes(),
                headers: &entry.headers,
                extra: entry.extra.clone(),
                started_us: entry.started_us,
            },
        )?;
        if let Some(response) = &entry.response {
            update_response(tx, id, response)?;
        }
        insert_events(tx, id, &entry.events, Level::Kept)?;
        if let Some(outcome) = &entry.outcome {
            upsert_outcome(tx, id, outcome)?;
        }
        if !written(done + 1) {
            return Err(StoreError::Cancelled);
        }
    }
    Ok(())
}

struct ParsedEntry {
    method: String,
    url: String,
    headers: Vec<(String, String)>,
    body: String,
    started_us: Option<i64>,
    dialect: Option<String>,
    rules: Option<String>,
    provider: Option<String>,
    extra: Option<Value>,
    response: Option<ResponseMeta>,
    events: Vec<RawEvent>,
    outcome: Option<OutcomeRecord>,
}

fn har_headers(value: Option<&Value>) -> Vec<(String, String)> {
    value
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(|h| {
                    Some((
                        h.get("name")?.as_str()?.to_string(),
                        h.get("value")?.as_str()?.to_string(),
                    ))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A WebSocket entry's messages (`_webSocketMessages`, as browsers write them): the first text
/// frame the client sent (the request), and every text frame received after it as an event
/// (its time from the entry's start). `None` for an entry that is not a WebSocket.
fn websocket_messages(
    entry: &Value,
    started_us: Option<i64>,
) -> Option<(Option<String>, Vec<RawEvent>)> {
    let messages = entry.get("_webSocketMessages")?.as_array()?;
    let start_s = started_us.map_or(0.0, |us| us as f64 / 1e6);
    let mut sent = None;
    let mut events = Vec::new();
    for message in messages {
        let (Some(kind), Some(data)) = (
            message.get("type").and_then(Value::as_str),
            message.get("data").and_then(Value::as_str),
        ) else {
            continue;
        };
        if message
            .get("opcode")
            .and_then(Value::as_u64)
            .is_some_and(|op| op != 1)
        {
            continue;
        }
        match kind {
            "send" if sent.is_none() => sent = Some(data.to_string()),
            "receive" => {
                let time = message
                    .get("time")
                    .and_then(Value::as_f64)
                    .unwrap_or(start_s);
                let after = (time - start_s).clamp(0.0, MAX_TIMING_MS / 1000.0);
                events.push(RawEvent {
                    seq: events.len() as u64,
                    received_at: Duration::from_secs_f64(after),
                    event: None,
                    data: data.to_string(),
                    bytes: None,
                });
            }
            _ => {}
        }
    }
    Some((sent, events))
}

fn parse_entry(entry: &Value) -> Result<ParsedEntry, String> {
    let request = entry.get("request").ok_or("no request")?;
    let url = request
        .get("url")
        .and_then(Value::as_str)
        .ok_or("request has no url")?
        .to_string();
    let started_us = entry
        .get("startedDateTime")
        .and_then(Value::as_str)
        .and_then(parse_rfc3339);
    let ws = websocket_messages(entry, started_us);
    let method = if ws.is_some() {
        "WS".to_string()
    } else {
        request
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or("POST")
            .to_string()
    };
    let body = request
        .pointer("/postData/text")
        .and_then(Value::as_str)
        .filter(|text| !text.is_empty())
        .map(str::to_string)
        .or_else(|| ws.as_ref().and_then(|(sent, _)| sent.clone()))
        .unwrap_or_default();
    let mut extra = match entry.get("_promptwire") {
        Some(Value::Object(map)) => map.clone(),
        _ => serde_json::Map::new(),
    };
    let take_str = |extra: &mut serde_json::Map<String, Value>, key: &str| {
        extra
            .remove(key)
            .and_then(|v| v.as_str().map(str::to_string))
    };
    // A HAR from another tool has no dialect: it is read from the body's shape.
    let dialect = take_str(&mut extra, "dialect").or_else(|| {
        serde_json::from_str::<Value>(&body)
            .ok()
            .and_then(|value| crate::core::prefix::shape::Dialect::of_body(&value))
            .map(|d| d.id().to_string())
    });
    let rules = take_str(&mut extra, "rules");
    let provider = take_str(&mut extra, "provider");
    extra.remove("session");
    extra.remove("position");
    let times: Vec<u64> = extra
        .remove("event_times_us")
        .and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or_default();
    // Times from the file are never negative: a negative one is dropped as unknown.
    let stored_outcome: Option<OutcomeRecord> = extra
        .remove("outcome")
        .and_then(|v| serde_json::from_value(v).ok())
        .map(|mut o: OutcomeRecord| {
            for t in [&mut o.first_event_us, &mut o.first_text_us, &mut o.total_us] {
                *t = t.filter(|us| *us >= 0);
            }
            o
        });
    // HAR timings in milliseconds; beyond a century is not a time (and would overflow sums).
    let timing = |key: &str| {
        entry
            .pointer(&format!("/timings/{key}"))
            .and_then(Value::as_f64)
            .filter(|v| v.is_finite() && (0.0..=MAX_TIMING_MS).contains(v))
            .map(|ms| (ms * 1000.0).round() as i64)
    };
    let status = entry
        .pointer("/response/status")
        .and_then(Value::as_u64)
        .and_then(|s| u16::try_from(s).ok())
        .filter(|s| *s != 0);
    let mut events = Vec::new();
    let mut response = None;
    let mut outcome = stored_outcome;
    if let Some(status) = status {
        let response_value = entry.get("response");
        let headers = har_headers(response_value.and_then(|r| r.get("headers")));
        let text = response_value
            .and_then(|r| r.pointer("/content/text"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        // `encoding: base64`: the body as bytes (not UTF-8 when it was exported so).
        let body: Vec<u8> = match response_value
            .and_then(|r| r.pointer("/content/encoding"))
            .and_then(Value::as_str)
        {
            Some("base64") => crate::core::export::from_base64(&text)
                .ok_or("response content is not valid base64")?,
            _ => text.clone().into_bytes(),
        };
        let text = match String::from_utf8(body.clone()) {
            Ok(decoded) => decoded,
            Err(_) => String::from_utf8_lossy(&body).into_owned(),
        };
        let wait_us = timing("wait");
        let total_us = match (wait_us, timing("receive")) {
            (Some(w), Some(r)) => Some(w.saturating_add(r)),
            (w, _) => w,
        };
        let at = Duration::from_micros(u64::try_from(wait_us.unwrap_or(0)).unwrap_or(0));
        let mut response_body = None;
        let json_answer = response_value
            .and_then(|r| r.pointer("/content/mimeType"))
            .and_then(Value::as_str)
            .or_else(|| content_type(&headers))
            .is_some_and(|m| m.contains("application/json"));
        if let Some((_, received)) = ws {
            // A WebSocket: the frames that answered the request are its events.
            events = received;
            if outcome.is_none() {
                let end = events.last().map_or(at, |e| e.received_at);
                let replay = Replay::new(events.iter().cloned(), &[], end, Timing::Instant);
                outcome = Some(OutcomeRecord::from_turn(&replay.into_outcome()));
            }
        } else if (200..300).contains(&status) {
            if json_answer {
                // A non-streaming answer: one JSON event, as the proxy records it.
                events = vec![RawEvent::json_response_bytes(body.clone(), at)];
            } else {
                let mut decoder = SseDecoder::new();
                events = decoder.push(&body, at);
                events.extend(decoder.finish(at));
            }
            if times.len() == events.len() {
                for (event, us) in events.iter_mut().zip(&times) {
                    event.received_at = Duration::from_micros(*us);
                }
            }
            if outcome.is_none() {
                // The imported events read by the one replay, ending with the last one.
                let end = events.last().map_or(at, |e| e.received_at);
                let replay = Replay::new(events.iter().cloned(), &[], end, Timing::Instant);
                outcome = Some(OutcomeRecord::from_turn(&replay.into_outcome()));
            }
        } else {
            if outcome.is_none() {
                let error = classify_http_error(status, &headers, &text, &url);
                outcome = Some(OutcomeRecord {
                    state: RecordedState::Failed,
                    error_class: Some(error.class()),
                    error_message: Some(error.to_string()),
                    ..OutcomeRecord::default()
                });
            }
            response_body = Some(body.clone());
        }
        response = Some(ResponseMeta {
            status: Some(status),
            headers,
            body: response_body,
            wait_us,
            total_us,
            // Kept with `_promptwire` (imported as the extra fields).
            http_version: None,
            extra: None,
        });
    }
    Ok(ParsedEntry {
        method,
        url,
        headers: har_headers(request.get("headers")),
        body,
        started_us,
        dialect,
        rules,
        provider,
        extra: if extra.is_empty() {
            None
        } else {
            Some(Value::Object(extra))
        },
        response,
        events,
        outcome,
    })
}
