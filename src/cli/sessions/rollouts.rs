//! `sessions import ROLLOUT.jsonl|DIR`: Codex session logs into the store, one session per
//! thread, a thread imported before given only the requests its file gained since (skipped when
//! none); for a folder, progress on standard error.

use crate::core::format::count;
use std::io::{IsTerminal as _, Write as _};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::print;
use crate::core::rollout::{Limits, provenance};
use crate::store::{DEFAULT_MAX_ROLLOUT_BYTES, FolderImport, FolderProgress, RolloutImport, Store};

/// For a request imported from a rollout: what of it is recorded and what reconstructed, and
/// (first request) the file's unknown lines and truncation; None for any other request.
pub(super) fn provenance(store: &Store, request_id: i64) -> anyhow::Result<Option<Vec<String>>> {
    let record = store.request(request_id)?;
    let Some(rollout) = record.extra.as_ref().and_then(|e| e.get("rollout")) else {
        return Ok(None);
    };
    if !provenance::is_rollout(Some(rollout)) {
        return Ok(None);
    }
    let mut lines = provenance::request_lines(rollout);
    lines.extend(provenance::file_lines(rollout));
    Ok(Some(lines))
}

/// Imports one rollout file whose bytes were read.
pub(super) fn import_file(
    store: &mut Store,
    path: &Path,
    bytes: &[u8],
    json_out: bool,
) -> anyhow::Result<()> {
    let known = store.imported_threads()?;
    let imports = store.import_rollout_bytes(bytes, path, &Limits::default(), &known)?;
    let report = FolderImport {
        rollouts: imports,
        failed: Vec::new(),
        cancelled: false,
    };
    report_out(&report, json_out)
}

/// Imports every rollout under `dir`.
pub(super) fn import_dir(store: &mut Store, dir: &Path, json_out: bool) -> anyhow::Result<()> {
    let never = AtomicBool::new(false);
    let mut meter = Meter::new();
    let report = store.import_rollout_dir(
        dir,
        DEFAULT_MAX_ROLLOUT_BYTES,
        &Limits::default(),
        &mut |p| meter.show(p),
        &never,
    )?;
    meter.end();
    report_out(&report, json_out)
}

fn report_out(report: &FolderImport, json_out: bool) -> anyhow::Result<()> {
    if json_out {
        let rollouts: Vec<Value> = report.rollouts.iter().map(import_json).collect();
        let failed: Vec<Value> = report
            .failed
            .iter()
            .map(|(path, error)| json!({"path": path.display().to_string(), "error": error}))
            .collect();
        return print(&json!({"rollouts": rollouts, "failed": failed}).to_string());
    }
    let mut lines = Vec::new();
    for import in &report.rollouts {
        lines.push(match import.session_id {
            Some(id) if import.appended > 0 => format!(
                "appended {} to session {id} from {} (the rollout grew since it was imported)",
                count(import.appended as u64, "request"),
                import.path.display()
            ),
            Some(id) => format!(
                "imported session {id} ({}) from {}",
                count(import.requests as u64, "request"),
                import.path.display()
            ),
            None => format!(
                "skipped {}: thread {} was imported before, nothing new",
                import.path.display(),
                import.thread_id
            ),
        });
        if let Some(line) = import.truncated_line {
            lines.push(format!(
                "  line {line} is incomplete (the file is still being written): imported what is complete"
            ));
        }
        if import.unknown_lines > 0 && import.session_id.is_some() {
            lines.push(format!(
                "  {} lines of unknown types kept with the session",
                import.unknown_lines
            ));
        }
    }
    for (path, error) in &report.failed {
        lines.push(format!("failed {}: {error}", path.display()));
    }
    let imported = report.rollouts.iter().filter(|r| !r.skipped).count();
    let skipped = report.rollouts.len() - imported;
    lines.push(format!(
        "{imported} imported, {skipped} skipped, {} failed",
        report.failed.len()
    ));
    print(&lines.join("\n"))
}

fn import_json(import: &RolloutImport) -> Value {
    json!({
        "path": import.path.display().to_string(),
        "thread_id": import.thread_id,
        "session": import.session_id,
        "requests": import.requests,
        "skipped": import.skipped,
        "appended": import.appended,
        "unknown_lines": import.unknown_lines,
        "truncated_line": import.truncated_line,
    })
}

/// Progress on standard error: a line rewritten in place on a terminal, else a line every 10%.
struct Meter {
    terminal: bool,
    last: Option<Instant>,
    last_tenth: usize,
    shown: bool,
}

impl Meter {
    fn new() -> Self {
        Self {
            terminal: std::io::stderr().is_terminal(),
            last: None,
            last_tenth: 0,
            shown: false,
        }
    }

    fn show(&mut self, p: &FolderProgress) {
        let text = format!(
            "importing rollouts: {}/{} ({} imported, {} skipped, {} failed)",
            p.done, p.total, p.imported, p.skipped, p.failed
        );
        let mut err = std::io::stderr().lock();
        if self.terminal {
            let due = self
                .last
                .is_none_or(|t| t.elapsed() >= Duration::from_millis(100));
            if due || p.done == p.total {
                let _ = write!(err, "\r{text}");
                let _ = err.flush();
                self.last = Some(Instant::now());
                self.shown = true;
            }
        } else {
            let tenth = (p.done * 10).checked_div(p.total).unwrap_or(10);
            if tenth > self.last_tenth || p.done == p.total {
                self.last_tenth = tenth;
                let _ = writeln!(err, "{text}");
            }
        }
    }

    fn end(&self) {
        if self.terminal && self.shown {
            let _ = writeln!(std::io::stderr());
        }
    }
}
