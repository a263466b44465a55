//! `promptwire diff (BODY.json… | --session ID [--db PATH]) [--json]`: the session's ledger
//! (`core::ledger`) — captured bodies or a stored session (read through the store's one adapter,
//! `store::prefix_input`, the Sessions view's input). One line per request compared with the
//! turn before it (kept, or where its rendered prompt diverges, to the token, and why, in the
//! server's vocabulary, each cause explained), the session's figures and the sentence the app
//! opens with, the server's disagreements and the hazards; with `--json` the same rows
//! (`pairs`, `requests`, `summary`, `hazards`). `--what-if KIND:ARGS` re-simulates the session
//! under an edit against the ledger. `--requests N,M` compares two stored requests structurally
//! instead: the verdict, then every element aligned (same / added / removed / changed, with the
//! changed lines of its pretty JSON).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context as _, bail};
use clap::Args;
use serde_json::{Value, json};

use super::input::{display_name, parse_json, read_text};
use crate::core::format::grouped;
use crate::core::ledger::summary::{Totals, usd};
use crate::core::ledger::{
    self, CacheModels, Counting, Edit, Hazard, Ledger, PairVerdict, PriceTable, Row, Rules, WhatIf,
};
use crate::core::prefix::{DiffRow, RequestMeta, RowKind, Session};
use crate::core::stream::{PromptCacheDiagnostics, StreamReader};
use crate::store::prefix_input::push_stored_session;

/// Arguments of `diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// Request bodies in the order they were sent (`-` reads one from standard input).
    #[arg(
        value_name = "BODY.json",
        required_unless_present = "session",
        conflicts_with = "session"
    )]
    bodies: Vec<String>,
    /// Analyze a stored session instead of body files.
    #[arg(long, value_name = "ID", conflicts_with_all = ["usage", "sent_at_ms"])]
    session: Option<i64>,
    /// With --session: the structural diff of these two requests (0-based positions).
    #[arg(
        long,
        value_name = "N,M",
        value_delimiter = ',',
        num_args = 1,
        requires = "session",
        conflicts_with = "pairs"
    )]
    requests: Vec<usize>,
    /// Database file for --session (default: the embedded database).
    #[arg(long, value_name = "PATH", requires = "session")]
    db: Option<PathBuf>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// Compare these two requests (0-based `FROM:TO`) instead of each consecutive pair;
    /// repeatable. The summary still covers the consecutive pairs.
    #[arg(long = "pair", value_name = "FROM:TO", value_parser = parse_pair)]
    pairs: Vec<(usize, usize)>,
    /// The response to each body, in the same order (a recorded SSE stream or a JSON response):
    /// its `usage.input_tokens_details.cached_tokens` is shown beside the estimate. Repeatable.
    #[arg(long = "usage", value_name = "FILE")]
    usage: Vec<String>,
    /// When each body was sent, in Unix milliseconds, comma-separated in body order (the cache
    /// expires between requests further apart than its retention).
    #[arg(long, value_delimiter = ',', value_name = "MS,...")]
    sent_at_ms: Vec<i64>,
    /// Cache models by slug prefix over the family rule (`{"models": [{"prefix",
    /// "cache_model", …}]}`, README "The cache model"); a bad file is refused whole.
    #[arg(long = "cache-models", value_name = "FILE")]
    cache_models: Option<String>,
    /// Price table to use instead of the bundled one (`assets/prices.json`).
    #[arg(long, value_name = "FILE")]
    prices: Option<String>,
    /// Re-simulate the cache under an edit (repeatable): `breakpoint-after:K`, `ttl:12h`,
    /// `undo-tools:K`, `move-instructions:K`, `close-gap:K` (README, "The cache model").
    #[arg(long = "what-if", value_name = "KIND:ARGS", value_parser = parse_edit)]
    what_if: Vec<Edit>,
    /// Largest accepted file, in bytes.
    #[arg(long, default_value_t = super::DEFAULT_MAX_BYTES)]
    max_bytes: u64,
}

fn parse_edit(text: &str) -> Result<Edit, String> {
    text.parse::<Edit>().map_err(|e| e.message)
}

fn parse_pair(text: &str) -> Result<(usize, usize), String> {
    let (from, to) = text
        .split_once(':')
        .ok_or_else(|| format!("`{text}` is not FROM:TO"))?;
    let index = |s: &str| {
        s.trim()
            .parse::<usize>()
            .map_err(|_| format!("`{s}` is not a request index"))
    };
    Ok((index(from)?, index(to)?))
}

/// Runs `diff`.
pub fn run(args: &DiffArgs) -> anyhow::Result<()> {
    let prices = match &args.prices {
        None => PriceTable::bundled(),
        Some(path) => {
            let text = read_text(path, args.max_bytes)?;
            PriceTable::from_json(&text).map_err(|e| anyhow::anyhow!("{path}: {e}"))?
        }
    };
    let cache_models = match &args.cache_models {
        None => CacheModels::default(),
        Some(path) => {
            let text = read_text(path, args.max_bytes)?;
            CacheModels::from_json(&text)
                .map_err(|e| anyhow::anyhow!("--cache-models {path}: {e}"))?
        }
    };
    let rules = Rules {
        cache_models,
        prices,
        counting: Counting::default(),
    };
    let mut session = Session::default();
    match args.session {
        Some(id) => load_stored(&mut session, id, args.db.as_deref())?,
        None => load_bodies(&mut session, args)?,
    }
    let n = session.len();
    if let Some(&(from, to)) = args.pairs.iter().find(|(f, t)| *f >= n || *t >= n) {
        let count = match n {
            1 => "1 request".to_string(),
            n => format!("{n} requests"),
        };
        bail!(
            "--pair {from}:{to}: the session has {count} (0 to {})",
            n.saturating_sub(1)
        );
    }
    if !args.requests.is_empty() {
        return pair_diff_out(&session, &rules.counting, &args.requests, args.json);
    }
    let ledger = ledger::ledger(&session, &rules);
    let what_if = match args.what_if.as_slice() {
        [] => None,
        edits => Some(ledger.what_if(&session, &rules, edits)?),
    };
    let pairs: Vec<PairVerdict> = if args.pairs.is_empty() {
        ledger
            .rows
            .iter()
            .filter_map(|r| r.verdict.clone())
            .collect()
    } else {
        args.pairs
            .iter()
            .map(|&(from, to)| ledger::compare_pair(&session, &rules.counting, from, to))
            .collect()
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        let mut value = json!({
            "pairs": pairs.iter().map(|p| pair_json(p, &ledger)).collect::<Vec<_>>(),
            "summary": summary_json(&ledger),
            "requests": ledger.rows.iter().map(request_json).collect::<Vec<_>>(),
            "hazards": ledger.hazards,
        });
        if let Some(w) = &what_if {
            value["what_if"] = what_if_json(w);
        }
        serde_json::to_writer(&mut out, &value)?;
        writeln!(out)?;
    } else {
        for pair in &pairs {
            writeln!(out, "{}", pair_lines(pair, &ledger))?;
        }
        writeln!(out, "{}", summary_line(&ledger))?;
        writeln!(out, "{}", cost_line(&ledger.summary.totals))?;
        writeln!(out, "{}", ledger.summary.sentence())?;
        if let Some(w) = &what_if {
            writeln!(out, "{}", what_if_line(w))?;
        }
        for row in &ledger.rows {
            if let Some(finding) = &row.finding {
                writeln!(
                    out,
                    "finding at request {}: {}",
                    row.index,
                    super::shown::shown(finding)
                )?;
            }
        }
        for hazard in &ledger.hazards {
            writeln!(out, "{}", hazard_line(hazard))?;
        }
    }
    Ok(())
}

/// `{"paid", "ideal", "lost"}`, each null when a price is unknown.
fn cost_json(totals: &Totals) -> Value {
    let field = |f: fn(&ledger::Dollars) -> f64| totals.cost_usd.as_ref().map(f);
    json!({
        "paid": field(|d| d.paid),
        "ideal": field(|d| d.ideal),
        "lost": field(|d| d.lost),
    })
}

fn summary_json(ledger: &Ledger) -> Value {
    let s = &ledger.summary;
    let t = &s.totals;
    json!({
        "requests": s.requests,
        "warmups": s.warmups,
        "compactions": s.compactions,
        "undetermined": s.undetermined,
        "breaks": s.breaks,
        "input_tokens": s.estimated_tokens,
        "reported_input_tokens": s.reported_input_tokens,
        "reported_cached_tokens": s.reported_cached_tokens,
        "cache_tokens": {
            "input_tokens": t.input_tokens,
            "read_tokens": t.read_tokens,
            "write_tokens": t.write_tokens,
            "uncached_tokens": t.uncached_tokens,
        },
        "cost_usd": cost_json(t),
        "unpriced_models": t.unpriced_models,
        "lost_by_cause": s.lost_by_cause.iter().map(|l| json!({
            "cause": l.cause.as_str(), "usd": l.usd, "tokens": l.tokens, "requests": l.requests,
        })).collect::<Vec<_>>(),
        "compaction_usd": s.compaction_usd,
        "sentence": s.sentence(),
    })
}

/// One request of `requests` in `--json`: a ledger row.
fn request_json(row: &Row) -> Value {
    let p = &row.prediction;
    json!({
        "index": row.index,
        "kind": row.kind,
        "previous": row.previous,
        "model": row.model,
        "cache_model": row.cache_model.as_str(),
        "tokens": row.tokens,
        "predicted": {
            "read_tokens": p.predicted.read_tokens,
            "write_tokens": p.predicted.write_tokens,
            "uncached_tokens": p.predicted.uncached_tokens,
        },
        "reported": row.reported.as_ref().map(|r| json!({
            "input_tokens": r.input_tokens,
            "cached_tokens": r.cached_tokens,
            "cache_write_tokens": r.cache_write_tokens,
            "diagnostics": r.diagnostics,
        })),
        "ideal_read_tokens": row.ideal_read_tokens,
        "cost_usd": row.cost_usd.map(|c| json!({"paid": c.paid, "ideal": c.ideal, "lost": c.lost})),
        "lost_by_cause": row.lost_by_cause.iter().map(|l| json!({
            "cause": l.cause.as_str(), "usd": l.usd, "tokens": l.tokens,
        })).collect::<Vec<_>>(),
        "notes": row.notes.iter().map(|c| c.as_str()).collect::<Vec<_>>(),
        "reason": p.reason,
        "finding": row.finding,
        "not_recorded": row.not_recorded,
    })
}

fn what_if_json(w: &WhatIf) -> Value {
    json!({
        "edits": w.edits,
        "read_tokens_gained": w.read_tokens_gained,
        "usd_saved": w.usd_saved,
        "before": {
            "read_tokens": w.before.read_tokens,
            "write_tokens": w.before.write_tokens,
            "uncached_tokens": w.before.uncached_tokens,
            "cost_usd": cost_json(&w.before),
        },
        "after": {
            "read_tokens": w.after.read_tokens,
            "write_tokens": w.after.write_tokens,
            "uncached_tokens": w.after.uncached_tokens,
            "cost_usd": cost_json(&w.after),
        },
        "requests": w.requests.iter().map(|r| json!({
            "index": r.index,
            "read_tokens": r.tokens.read_tokens,
            "write_tokens": r.tokens.write_tokens,
            "uncached_tokens": r.tokens.uncached_tokens,
            "paid": r.paid,
            "reason": r.reason,
        })).collect::<Vec<_>>(),
    })
}

/// The session's tokens and dollars: one paid, one ideal, one lost.
fn cost_line(totals: &Totals) -> String {
    let mut line = format!(
        "cache: read {}, wrote {}, uncached {} of {} input tokens; ",
        grouped(totals.read_tokens),
        grouped(totals.write_tokens),
        grouped(totals.uncached_tokens),
        grouped(totals.input_tokens)
    );
    match &totals.cost_usd {
        Some(d) => line.push_str(&format!(
            "paid {} · ideal {} · lost {}",
            usd(d.paid),
            usd(d.ideal),
            usd(d.lost)
        )),
        None => line.push_str(&format!(
            "price unknown ({})",
            totals.unpriced_models.join(", ")
        )),
    }
    line
}

fn what_if_line(w: &WhatIf) -> String {
    let mut line = format!(
        "what-if {}: {} more tokens read",
        w.edits.join(" + "),
        w.read_tokens_gained
    );
    if let (Some(before), Some(after)) = (w.before.cost_usd, w.after.cost_usd) {
        line.push_str(&format!(
            "; paid {} → {} ({} saved)",
            usd(before.paid),
            usd(after.paid),
            usd(before.paid - after.paid)
        ));
    }
    line
}

fn hazard_line(hazard: &Hazard) -> String {
    format!(
        "hazard {} at request {}: {} Fix: {}",
        hazard.code, hazard.request, hazard.message, hazard.fix
    )
}

/// `--requests N,M`: the verdict and the aligned diff of two stored requests.
fn pair_diff_out(
    session: &Session,
    counting: &Counting,
    requests: &[usize],
    json_out: bool,
) -> anyhow::Result<()> {
    let &[from, to] = requests else {
        bail!("--requests takes two request positions, N,M");
    };
    let n = session.len();
    if from >= n || to >= n {
        bail!(
            "--requests {from},{to}: the session has {n} requests (0 to {})",
            n.saturating_sub(1)
        );
    }
    let pair = ledger::compare_pair(session, counting, from, to);
    let diff = session.pair_diff(from, to)?;
    let mut out = std::io::stdout().lock();
    if json_out {
        let value = json!({"pair": verdict_json(&pair, None), "diff": diff}).to_string();
        // The diff quotes body lines: printed through the redaction policy.
        writeln!(out, "{}", super::shown::shown(&value))?;
        return Ok(());
    }
    writeln!(out, "{}", verdict_lines(&pair, None))?;
    let mut same: Vec<&DiffRow> = Vec::new();
    let flush_same = |same: &mut Vec<&DiffRow>, out: &mut dyn std::io::Write| {
        if let (Some(first), Some(last)) = (same.first(), same.last()) {
            let name = |r: &DiffRow| r.to_pointer.clone().unwrap_or_default();
            let text = match same.len() {
                1 => format!("  = {}", name(first)),
                k => format!("  = {} … {} ({k} elements)", name(first), name(last)),
            };
            writeln!(out, "{}", super::shown::shown(&text))?;
        }
        same.clear();
        std::io::Result::Ok(())
    };
    for row in &diff.rows {
        if row.kind == RowKind::Same {
            same.push(row);
            continue;
        }
        flush_same(&mut same, &mut out)?;
        let from = row.from_pointer.as_deref().unwrap_or("");
        let to = row.to_pointer.as_deref().unwrap_or("");
        let head = match row.kind {
            RowKind::Added => format!("  + {to}"),
            RowKind::Removed => format!("  - {from}"),
            _ if from == to => format!("  ~ {to}"),
            _ => format!("  ~ {from} -> {to}"),
        };
        writeln!(out, "{head}")?;
        for line in row.lines.iter().filter(|l| l.tag != "equal") {
            let mark = if line.tag == "delete" { '-' } else { '+' };
            writeln!(out, "      {mark} {}", super::shown::shown(&line.text))?;
        }
    }
    flush_same(&mut same, &mut out)?;
    Ok(())
}

/// Pushes the body files, each with its usage file and timestamp when given.
fn load_bodies(session: &mut Session, args: &DiffArgs) -> anyhow::Result<()> {
    let n = args.bodies.len();
    if args.bodies.iter().filter(|b| *b == "-").count() > 1 {
        bail!("standard input (`-`) can be read only once");
    }
    if !args.usage.is_empty() && args.usage.len() != n {
        bail!(
            "expected one --usage file per body ({n}), got {}",
            args.usage.len()
        );
    }
    if !args.sent_at_ms.is_empty() && args.sent_at_ms.len() != n {
        bail!(
            "expected one --sent-at-ms value per body ({n}), got {}",
            args.sent_at_ms.len()
        );
    }
    for (i, arg) in args.bodies.iter().enumerate() {
        let reported = match args.usage.get(i) {
            Some(path) => {
                let text = read_text(path, args.max_bytes)?;
                reported_usage(&text)
                    .map_err(|e| anyhow::anyhow!("{}: {e:#}", display_name(path)))?
            }
            None => Reported::default(),
        };
        let meta = RequestMeta {
            reported_cached_tokens: reported.cached,
            reported_cache_write_tokens: reported.write,
            reported_input_tokens: reported.input,
            diagnostics: reported.diagnostics,
            sent_at_ms: args.sent_at_ms.get(i).copied(),
            ..RequestMeta::default()
        };
        // One body in memory at a time: the session keeps only its distinct elements.
        let text = read_text(arg, args.max_bytes)?;
        let body = parse_json(arg, &text)?;
        drop(text);
        session
            .push_body_owned(body, meta)
            .map_err(|e| anyhow::anyhow!("{}: {e}", display_name(arg)))?;
    }
    Ok(())
}

/// Pushes the requests of stored session `id`, with their recorded usage and timing.
fn load_stored(session: &mut Session, id: i64, db: Option<&Path>) -> anyhow::Result<()> {
    let store = super::replay::open_existing(db)?;
    push_stored_session(session, &store, id)?;
    Ok(())
}

/// The row a pair stands for, when it is the ledger's own comparison of `to`.
fn row_of<'a>(pair: &PairVerdict, ledger: &'a Ledger) -> Option<&'a Row> {
    ledger
        .rows
        .get(pair.to)
        .filter(|r| r.previous == Some(pair.from) && r.verdict.is_some())
}

/// The `--json` view of a pair.
fn pair_json(pair: &PairVerdict, ledger: &Ledger) -> Value {
    verdict_json(pair, row_of(pair, ledger))
}

fn verdict_json(pair: &PairVerdict, row: Option<&Row>) -> Value {
    json!({
        "from": pair.from,
        "to": pair.to,
        "kind": row.map(|r| r.kind),
        "prefix_kept": pair.prefix_kept,
        "break": pair.divergence,
        "causes": pair.causes.iter().map(|c| c.as_str()).collect::<Vec<_>>(),
        "warnings": row.map(|r| r.notes.iter().map(|c| c.as_str()).collect::<Vec<_>>()).unwrap_or_default(),
        "notes": notes(pair, row)
            .into_iter()
            .map(|(code, explanation, fix)| json!({"code": code, "explanation": explanation, "fix": fix}))
            .collect::<Vec<_>>(),
        "reusable_tokens": pair.reusable_tokens,
        "shared_tokens": pair.shared_tokens,
        "from_tokens": pair.from_tokens,
        "to_tokens": pair.to_tokens,
        "reported_cached_tokens": row.and_then(|r| r.reported.as_ref()).and_then(|r| r.cached_tokens),
        "lost_usd": row.and_then(|r| r.cost_usd).map(|c| c.lost),
        "not_recorded": pair.not_recorded,
    })
}

/// (code, explanation, fix) of every cause, then of every note of the row (idle gap, …).
fn notes(
    pair: &PairVerdict,
    row: Option<&Row>,
) -> Vec<(&'static str, String, Option<&'static str>)> {
    let mut causes: Vec<ledger::Cause> = pair.causes.clone();
    for note in row.map(|r| r.notes.as_slice()).unwrap_or(&[]) {
        if !causes.contains(note) {
            causes.push(*note);
        }
    }
    causes
        .into_iter()
        .map(|c| (c.as_str(), c.explanation().to_string(), c.fix()))
        .collect()
}

/// The human lines for a pair: the verdict, then one indented line per cause with its
/// explanation and fix.
fn pair_lines(pair: &PairVerdict, ledger: &Ledger) -> String {
    verdict_lines(pair, row_of(pair, ledger))
}

fn verdict_lines(pair: &PairVerdict, row: Option<&Row>) -> String {
    let mut text = verdict_line(pair, row);
    for (code, explanation, fix) in notes(pair, row) {
        text.push_str(&format!("\n    {code}: {explanation}"));
        if let Some(fix) = fix {
            text.push_str(&format!(" Fix: {fix}"));
        }
    }
    text
}

/// The verdict line for a pair.
fn verdict_line(pair: &PairVerdict, row: Option<&Row>) -> String {
    use crate::core::ledger::RowKind as K;
    let mut line = format!("{} -> {}: ", pair.from, pair.to);
    match row.map(|r| r.kind) {
        Some(K::Warmup) => line.push_str("warm-up (generate: false), not a turn; "),
        Some(K::Compaction) => line.push_str("compaction request; "),
        Some(K::AfterCompaction) => line.push_str("first turn after a compaction; "),
        _ => {}
    }
    match &pair.divergence {
        None => line.push_str("kept"),
        Some(d) => {
            line.push_str(&format!(
                "BROKEN at {} ({}, token {})",
                d.pointer,
                d.source.as_str(),
                grouped(d.token)
            ));
            let causes: Vec<&str> = pair.causes.iter().map(|c| c.as_str()).collect();
            line.push_str(&format!(" ({})", causes.join(", ")));
        }
    }
    if pair.divergence.is_none() && !pair.causes.is_empty() {
        let causes: Vec<&str> = pair.causes.iter().map(|c| c.as_str()).collect();
        line.push_str(&format!(" ({})", causes.join(", ")));
    }
    line.push_str(&format!(
        "; reusable {} of {} tokens",
        grouped(pair.reusable_tokens),
        grouped(pair.from_tokens)
    ));
    if let Some(row) = row {
        if let Some(cached) = row.reported.as_ref().and_then(|r| r.cached_tokens) {
            line.push_str(&format!("; server cached {}", grouped(cached)));
        }
        if let Some(lost) = row.cost_usd.map(|c| c.lost).filter(|l| *l > 0.0) {
            line.push_str(&format!("; lost {}", usd(lost)));
        }
        let notes: Vec<&str> = row.notes.iter().map(|c| c.as_str()).collect();
        if !notes.is_empty() {
            line.push_str(&format!("; also: {}", notes.join(", ")));
            if let Some(gap) = row.prediction.idle_gap_secs
                && row.notes.contains(&ledger::Cause::IdleGap)
            {
                line.push_str(&format!(" (gap {gap} s)"));
            }
        }
    }
    if !pair.not_recorded.is_empty() {
        line.push_str(&format!(
            "; not recorded (assumed unchanged): {}",
            pair.not_recorded.join(", ")
        ));
    }
    line
}

fn summary_line(ledger: &Ledger) -> String {
    let s = &ledger.summary;
    let cached = s
        .reported_cached_tokens
        .map_or_else(|| "no".to_string(), grouped);
    let mut requests = match s.requests {
        1 => "1 request".to_string(),
        n => format!("{n} requests"),
    };
    let mut aside = Vec::new();
    match s.warmups {
        0 => {}
        1 => aside.push("1 warm-up".to_string()),
        n => aside.push(format!("{n} warm-ups")),
    }
    match s.compactions {
        0 => {}
        1 => aside.push("1 compaction".to_string()),
        n => aside.push(format!("{n} compactions")),
    }
    if s.undetermined > 0 {
        aside.push(format!("{} not judged", s.undetermined));
    }
    if !aside.is_empty() {
        requests.push_str(&format!(" ({})", aside.join(", ")));
    }
    format!(
        "session: {requests}, {} breaks, {} input tokens (estimated), {cached} reported cached",
        s.breaks,
        grouped(s.estimated_tokens),
    )
}

/// What a response's usage reports.
#[derive(Debug, Default)]
struct Reported {
    cached: Option<u64>,
    write: Option<u64>,
    input: Option<u64>,
    diagnostics: Option<PromptCacheDiagnostics>,
}

/// `usage.input_tokens_details.cached_tokens` (and `cache_write_tokens`, `input_tokens`) of a
/// response: the usage of a recorded SSE stream as the stream reader maps it (0 when the usage
/// has no details), or the `usage` of a JSON response (`None` when it has no details). An error
/// when there is no usage at all.
fn reported_usage(text: &str) -> anyhow::Result<Reported> {
    let count = |n: Option<i64>| n.and_then(|n| u64::try_from(n).ok());
    if text.trim_start().starts_with('{') {
        let value: Value = serde_json::from_str(text).context("not a JSON response")?;
        let usage = value
            .get("usage")
            .or_else(|| value.get("response").and_then(|r| r.get("usage")))
            .context("the response has no `usage`")?;
        let details = usage.get("input_tokens_details");
        return Ok(Reported {
            cached: details
                .and_then(|d| d.get("cached_tokens"))
                .and_then(Value::as_u64),
            write: details
                .and_then(|d| d.get("cache_write_tokens"))
                .and_then(Value::as_u64),
            input: usage.get("input_tokens").and_then(Value::as_u64),
            diagnostics: value
                .get("prompt_cache_diagnostics")
                .or_else(|| {
                    value
                        .get("response")
                        .and_then(|r| r.get("prompt_cache_diagnostics"))
                })
                .and_then(PromptCacheDiagnostics::from_value),
        });
    }
    let mut reader = StreamReader::new();
    reader.push(text.as_bytes(), Duration::ZERO);
    reader.finish(Duration::ZERO);
    let usage = reader
        .outcome()
        .usage
        .as_ref()
        .context("the stream has no `response.completed` event with usage")?;
    Ok(Reported {
        cached: count(Some(usage.cached_input_tokens)),
        write: count(Some(usage.cache_write_input_tokens)).filter(|&w| w > 0),
        input: count(Some(usage.input_tokens)),
        diagnostics: reader.outcome().cache_diagnostics.clone(),
    })
}
