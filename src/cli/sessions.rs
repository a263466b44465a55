//! `promptwire sessions list|show ID|export ID|import FILE|DIR|delete ID [--db PATH] [--json]`:
//! the session store from the command line (`list --with failed|interrupted`: only sessions with
//! such a request).
//!
//! Contract for scripts: `list --json` prints a JSON array of
//! `{"id","name","source","model","requests","created_at","interrupted","unanswered","thread",
//! "parent_thread","agent_kind","parent"}` (requests recorded as interrupted, and requests
//! without an outcome — cut off or still running; the text listing flags such a session; the
//! agent a session is — its thread, the thread that spawned it, how, and the stored session of
//! that parent —, null where the recording does not say; the text listing shows each subagent
//! indented under its parent); `show ID --json` gives each request its `outcome` class
//! (`completed`, `interrupted`, `failed: CLASS`, `HTTP 429`, `no answer`, …), `error_class` for a
//! failure (an HTTP error's too: `retry_limit` for a 429) and `retry_after` (the server's
//! Retry-After header, when an error answer had one) and, only where the recording
//! lost events (the database was busy or full), `recording` saying what and why (the text
//! listing prints it under the row); `import FILE.har --json` prints
//! `{"session":ID,"requests":N}`; for a request imported from a Codex rollout, `show` prints
//! under its row what was recorded verbatim and what reconstructed (`--json`: `provenance`, the
//! same lines); `import ROLLOUT.jsonl|DIR --json` (Codex session logs, told
//! apart from HAR by their content; a folder is walked for `rollout-*.jsonl` with progress on
//! standard error) prints `{"rollouts":[{"path","thread_id","session","requests","skipped",
//! "unknown_lines","truncated_line"}],"failed":[{"path","error"}]}`; `export ID --bodies DIR` writes `0000.json`, `0001.json`, … in
//! session order, each the exact body. Exports redact secrets unless `--no-redact`, and are
//! written owner-readable only. `export ID… | --all --otlp URL` sends sessions to an
//! OpenTelemetry collector as traces (`cli::otlp`).

use crate::core::format::count;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::{Args, Subcommand};
use serde_json::{Value, json};

mod rollouts;

use crate::core::format::grouped;
use crate::core::session_label::listed_label;
use crate::core::stream::http_error::header;
use crate::core::stream::usage::UsageCounts;
use crate::store::har::{rfc3339, write_private};
use crate::store::summary::{OutcomeClass, status_label};
use crate::store::{OutcomeRecord, Page, SessionFilter, SessionSummary, Store, nested};

/// Arguments of `sessions`.
#[derive(Debug, Args)]
pub struct SessionsArgs {
    #[command(subcommand)]
    command: SessionsCommand,
    /// Database file (default: the embedded database, created and seeded on first run).
    #[arg(long, global = true)]
    db: Option<PathBuf>,
    /// Machine-readable JSON output.
    #[arg(long, global = true)]
    json: bool,
}

#[derive(Debug, Subcommand)]
enum SessionsCommand {
    /// List sessions, newest first.
    List {
        /// Only sessions whose name, model, input or output text contains this.
        #[arg(long)]
        search: Option<String>,
        /// At most this many sessions.
        #[arg(long, default_value_t = 1000)]
        limit: u64,
        /// Skip this many sessions first.
        #[arg(long, default_value_t = 0)]
        offset: u64,
        /// Only sessions with a request that failed (an HTTP error, a failed or cut stream, no
        /// answer) or was interrupted (stopped, or left open).
        #[arg(long, value_enum)]
        with: Option<super::choices::WithArg>,
    },
    /// Show a session and its requests.
    Show {
        /// Session id.
        id: i64,
    },
    /// Export a session as HAR 1.2, a directory of bodies, or JSON Lines.
    Export(ExportArgs),
    /// Import a HAR file, a Codex rollout (`rollout-*.jsonl`), or every rollout under a folder
    /// (e.g. ~/.codex/sessions), skipping Codex threads imported before.
    Import {
        /// HAR file, rollout file, or folder of rollouts.
        file: PathBuf,
        /// Session name when the file has none (default: the file name).
        #[arg(long)]
        name: Option<String>,
        /// Largest file read (bytes; pipes and devices are cut off at this size too).
        #[arg(long, default_value_t = MAX_IMPORT_BYTES)]
        max_bytes: u64,
    },
    /// Delete a session.
    Delete {
        /// Session id.
        id: i64,
    },
}

/// Arguments of `sessions export`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("format").required(true).args(["har", "bodies", "jsonl", "otlp"])))]
struct ExportArgs {
    /// Session id (several, or --all, with --otlp).
    #[arg(required_unless_present = "all")]
    ids: Vec<i64>,
    /// Every session (with --otlp).
    #[arg(long, requires = "otlp")]
    all: bool,
    /// Send each session as a trace to this OpenTelemetry collector (OTLP/HTTP; its base URL,
    /// e.g. http://127.0.0.1:6006 for Phoenix, or the full …/v1/traces endpoint).
    #[arg(long, value_name = "URL")]
    otlp: Option<String>,
    #[command(flatten)]
    otlp_args: super::otlp::OtlpArgs,
    /// Write a HAR 1.2 file.
    #[arg(long)]
    har: Option<PathBuf>,
    /// Write one file per request body (`0000.json`, …) into this directory.
    #[arg(long)]
    bodies: Option<PathBuf>,
    /// Write JSON Lines (one request per line).
    #[arg(long)]
    jsonl: Option<PathBuf>,
    /// Keep secrets (keys, tokens) in the export instead of redacting them.
    #[arg(long)]
    no_redact: bool,
}

/// Largest HAR or rollout file `import` reads unless `--max-bytes` says otherwise.
const MAX_IMPORT_BYTES: u64 = 1024 * 1024 * 1024;

fn open(db: Option<&Path>) -> anyhow::Result<Store> {
    Ok(crate::store::send_recording::open_or_default(db)?)
}

/// Runs `job` on the database's one writer thread (as the app's imports do: live recordings of
/// this process would queue behind it), after opening (and seeding the default) database, and
/// waits for its result.
fn on_writer<T: Send + 'static>(
    db: Option<&Path>,
    job: impl FnOnce(&mut Store) -> anyhow::Result<T> + Send + 'static,
) -> anyhow::Result<T> {
    let store = open(db)?;
    let path = store.path().to_path_buf();
    drop(store);
    let writer = crate::store::Writer::open(&path)?;
    writer
        .run(job)
        .recv()
        .map_err(|_| anyhow::anyhow!("the database's writer stopped before the job ran"))?
}

fn session_json(s: &SessionSummary) -> Value {
    json!({
        "id": s.id,
        "name": s.name,
        "source": s.source,
        "model": s.model,
        "requests": s.requests,
        "created_at": rfc3339(s.created_us),
        "interrupted": s.interrupted,
        "unanswered": s.unanswered,
        "thread": s.agent.as_ref().map(|a| &a.thread),
        "parent_thread": s.agent.as_ref().and_then(|a| a.parent.as_ref()),
        "agent_kind": s.agent.as_ref().and_then(|a| a.kind.as_ref()),
        "parent": s.parent_session,
    })
}

/// The agent line of `sessions show`: `agent: thread T` for a root, `agent: collab_spawn
/// subagent, thread T, spawned by thread P (session N)` for a child.
fn agent_line(agent: &crate::core::anatomy::AgentTag, parent: Option<i64>) -> String {
    let mut line = match &agent.kind {
        Some(kind) => format!("agent: {kind} subagent, thread {}", agent.thread),
        None if agent.parent.is_some() => format!("agent: subagent, thread {}", agent.thread),
        None => format!("agent: thread {}", agent.thread),
    };
    if let Some(p) = &agent.parent {
        line.push_str(&format!(", spawned by thread {p}"));
        match parent {
            Some(id) => line.push_str(&format!(" (session {id})")),
            None => line.push_str(" (not stored)"),
        }
    }
    line.push('\n');
    line
}

/// One request's usage in words: "usage: 1,234 input (1,024 cached, 512 written) · 56 output".
fn usage_text(usage: &Value) -> String {
    let n = |k: &str| {
        usage[k].as_i64().map_or_else(
            || "-".to_string(),
            |v| match u64::try_from(v) {
                Ok(v) => grouped(v),
                Err(_) => v.to_string(),
            },
        )
    };
    let mut text = format!(
        "usage: {} input ({} cached",
        n("input_tokens"),
        n("cached_tokens")
    );
    // The store keeps one usage shape, an unreported count as 0: say "written" when some were.
    if usage["cache_write_tokens"].as_i64().is_some_and(|n| n > 0) {
        text.push_str(&format!(", {} written", n("cache_write_tokens")));
    }
    text.push_str(&format!(") · {} output", n("output_tokens")));
    text
}

fn print(text: &str) -> anyhow::Result<()> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    // Whatever a session holds (older databases, imports) is printed through the policy.
    writeln!(out, "{}", super::shown::shown(text)).context("writing to standard output")?;
    out.flush().context("writing to standard output")
}

/// Runs `sessions`.
pub fn run(args: &SessionsArgs) -> anyhow::Result<()> {
    let db = args.db.as_deref();
    match &args.command {
        SessionsCommand::List {
            search,
            limit,
            offset,
            with,
        } => {
            let store = open(db)?;
            let page = Page {
                offset: *offset,
                limit: *limit,
            };
            let sessions = match (search, with) {
                (search, Some(with)) => {
                    let filter = SessionFilter {
                        status: Some((*with).into()),
                        ..SessionFilter::default()
                    };
                    store.list_sessions_filtered(&filter, search.as_deref().unwrap_or(""), page)?
                }
                (Some(text), None) => store.search_sessions(text, page)?,
                (None, None) => store.list_sessions(page)?,
            };
            if args.json {
                let list: Vec<Value> = sessions.iter().map(session_json).collect();
                return print(&Value::Array(list).to_string());
            }
            let mut text = String::new();
            // Each subagent under its parent, indented, its kind before its name.
            for (i, depth) in nested(&sessions) {
                let s = &sessions[i];
                let flag = s
                    .unfinished()
                    .map_or_else(String::new, |text| format!("  ! {text}"));
                let name = match (depth, s.agent.as_ref().and_then(|a| a.kind.as_deref())) {
                    (0, _) => listed_name(s).to_string(),
                    (d, kind) => format!(
                        "{}{}{}",
                        "  ".repeat(d.min(8)),
                        kind.map_or_else(String::new, |k| format!("{k}: ")),
                        listed_name(s)
                    ),
                };
                text.push_str(&format!(
                    "{:>5}  {:<24}  {:<6}  {:<16}  {:>4} req  {}{flag}\n",
                    s.id,
                    name,
                    s.source,
                    s.model.as_deref().unwrap_or("-"),
                    s.requests,
                    rfc3339(s.created_us)
                ));
            }
            print(text.trim_end())
        }
        SessionsCommand::Show { id } => {
            let store = open(db)?;
            let session = store.session(*id)?;
            let requests = store.requests(*id, Page::ALL)?;
            let mut rows = Vec::with_capacity(requests.len());
            let mut provenance = Vec::with_capacity(requests.len());
            for r in &requests {
                provenance.push(rollouts::provenance(&store, r.id)?);
                let outcome = store.outcome(r.id)?;
                let class = OutcomeClass::of(
                    r.status,
                    outcome.as_ref().map(|o| o.state),
                    outcome.as_ref().and_then(|o| o.error_class.as_ref()),
                );
                let gap = outcome.as_ref().and_then(OutcomeRecord::recording_gap);
                let usage = outcome
                    .as_ref()
                    .and_then(|o| o.usage.as_ref())
                    .and_then(UsageCounts::from_value);
                let mut row = json!({
                    "id": r.id,
                    "position": r.position,
                    "model": r.model,
                    "dialect": r.dialect,
                    "provider": r.provider,
                    "url": r.url,
                    "body_bytes": r.body_bytes,
                    "status": r.status,
                    "state": r.state,
                    "outcome": class.label(),
                    "events": store.event_count(r.id)?,
                    "started_at": r.started_us.map(rfc3339),
                    "total_us": r.total_us,
                    "usage": usage.map(|u| json!({
                        "input_tokens": u.input_tokens,
                        "cached_tokens": u.cached_input_tokens,
                        "cache_write_tokens": u.cache_write_input_tokens,
                        "output_tokens": u.output_tokens,
                    })),
                });
                // A failure's class and, when the server asked for one, its Retry-After.
                if let Some(error) = outcome.as_ref().and_then(|o| o.error_class.as_ref()) {
                    row["error_class"] = json!(error.as_str());
                }
                if r.status
                    .is_some_and(|s| !(200..300).contains(&s) && s != 101)
                {
                    let record = store.request(r.id)?;
                    if let Some(after) = header(&record.response_headers, "retry-after") {
                        row["retry_after"] = json!(after);
                    }
                }
                // Only where the recording lost something: what was lost and why.
                if let Some(gap) = gap {
                    row["recording"] = json!(gap);
                }
                rows.push(row);
            }
            if args.json {
                for (row, lines) in rows.iter_mut().zip(&provenance) {
                    if let Some(lines) = lines {
                        row["provenance"] = json!(lines);
                    }
                }
                let out = json!({"session": session_json(&session), "requests": rows});
                return print(&out.to_string());
            }
            let mut text = format!(
                "session {}  {}  ({}, {}, created {}){}\n",
                session.id,
                session.name,
                session.source,
                session.model.as_deref().unwrap_or("-"),
                rfc3339(session.created_us),
                session
                    .unfinished()
                    .map_or_else(String::new, |text| format!("  ! {text}"))
            );
            // The agent it is: a subagent names how it was spawned and by whom.
            if let Some(agent) = &session.agent {
                text.push_str(&agent_line(agent, session.parent_session));
            }
            for (row, lines) in rows.iter().zip(&provenance) {
                let get = |k: &str| match row.get(k) {
                    Some(Value::String(s)) => s.clone(),
                    Some(Value::Null) | None => "-".to_string(),
                    Some(other) => other.to_string(),
                };
                text.push_str(&format!(
                    "  #{:<4} {:<16} {:<8} {:<8} {:<9} {:>5} events {:>9} B\n",
                    get("position"),
                    get("model"),
                    get("dialect"),
                    status_label(
                        row.get("status")
                            .and_then(Value::as_u64)
                            .and_then(|s| u16::try_from(s).ok())
                    ),
                    get("outcome"),
                    get("events"),
                    get("body_bytes"),
                ));
                match (row.get("error_class"), row.get("retry_after")) {
                    (Some(Value::String(class)), Some(Value::String(after))) => {
                        text.push_str(&format!("        {class}, Retry-After {after}\n"));
                    }
                    (Some(Value::String(class)), None) if get("outcome").starts_with("HTTP") => {
                        text.push_str(&format!("        {class}\n"));
                    }
                    (None, Some(Value::String(after))) => {
                        text.push_str(&format!("        Retry-After {after}\n"));
                    }
                    _ => {}
                }
                if let Some(usage) = row.get("usage").filter(|u| !u.is_null()) {
                    text.push_str(&format!("        {}\n", usage_text(usage)));
                }
                if let Some(Value::String(gap)) = row.get("recording") {
                    text.push_str(&format!("        ! {gap}\n"));
                }
                for line in lines.iter().flatten() {
                    text.push_str(&format!("        {line}\n"));
                }
            }
            print(text.trim_end())
        }
        SessionsCommand::Export(export) => {
            let store = open(db)?;
            if let Some(url) = &export.otlp {
                return super::otlp::export_sessions(
                    &store,
                    &export.ids,
                    export.all,
                    url,
                    &export.otlp_args,
                    args.json,
                );
            }
            let [id] = export.ids[..] else {
                anyhow::bail!("export --har, --bodies and --jsonl take one session id");
            };
            let redact = !export.no_redact;
            let (path, count) = if let Some(path) = &export.har {
                let har = store.export_har(id, redact)?;
                let text = serde_json::to_string_pretty(&har).context("rendering the HAR")?;
                write_private(path, text.as_bytes())?;
                (path, store.session(id)?.requests)
            } else if let Some(dir) = &export.bodies {
                let n = store.export_bodies(id, dir, redact)?;
                (dir, i64::try_from(n).unwrap_or(i64::MAX))
            } else if let Some(path) = &export.jsonl {
                let text = store.export_jsonl(id, redact)?;
                write_private(path, text.as_bytes())?;
                (path, store.session(id)?.requests)
            } else {
                anyhow::bail!("export needs --har FILE, --bodies DIR or --jsonl FILE");
            };
            if args.json {
                print(&json!({"session": id, "requests": count, "path": path}).to_string())
            } else {
                print(&format!(
                    "exported {count} requests of session {} to {}",
                    id,
                    path.display()
                ))
            }
        }
        SessionsCommand::Import {
            file,
            name,
            max_bytes,
        } => {
            let meta = std::fs::metadata(file)
                .with_context(|| format!("cannot read {}", file.display()))?;
            if meta.is_dir() {
                let (dir, json) = (file.clone(), args.json);
                return on_writer(db, move |store| rollouts::import_dir(store, &dir, json));
            }
            let bytes = super::input::read_file(file, *max_bytes)?;
            if crate::core::rollout::looks_like_rollout(&bytes) {
                let (path, json) = (file.clone(), args.json);
                return on_writer(db, move |store| {
                    rollouts::import_file(store, &path, &bytes, json)
                });
            }
            let text = String::from_utf8(bytes)
                .with_context(|| format!("not UTF-8 text: {}", file.display()))?;
            let default_name = file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "import".to_string());
            let (name, path) = (name.clone().unwrap_or(default_name), file.clone());
            let (session, requests) =
                on_writer(db, move |store| Ok(store.import_har(&text, &name, &path)?))?;
            if args.json {
                print(&json!({"session": session, "requests": requests}).to_string())
            } else {
                print(&format!(
                    "imported session {session} ({})",
                    count(requests as u64, "request")
                ))
            }
        }
        SessionsCommand::Delete { id } => {
            let id = *id;
            on_writer(db, move |store| Ok(store.delete_session(id)?))?;
            if args.json {
                print(&json!({"deleted": id}).to_string())
            } else {
                print(&format!("deleted session {id}"))
            }
        }
    }
}

/// The name `list` prints: a proxy session's label (a replay's `replay of <label>`) without the
/// grouping key its stored name ends in (`show` prints the whole name).
fn listed_name(s: &SessionSummary) -> &str {
    listed_label(&s.source, &s.name).unwrap_or(&s.name)
}
