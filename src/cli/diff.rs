//! `promptwire diff (BODY.json… | --session ID [--db PATH]) [--json]`: cache-prefix analysis
//! across the requests of a session — captured bodies or a stored session — one line per pair
//! (kept or where it broke and why, each cause and concern explained — the warnings and the
//! server missing the cache, `core::prefix::Concern`, as the Sessions view shows them), a
//! session summary, and with `--json` the machine-readable report. A stored session is read
//! through the store's one adapter (`store::prefix_input`), the Sessions view's input. `--requests N,M` compares two requests of a stored session
//! structurally instead: the verdict, then every element aligned (same / added / removed /
//! changed, with the changed lines of its pretty JSON).
//!
//! Beside the prefix verdicts, the cache as each request's model keeps it (`core::cache`): per
//! request the predicted read / written / uncached tokens, the server's figures and the input
//! dollars paid / ideal / lost (`requests` in `--json`, `summary.cost_usd`, `hazards`), and with
//! `--what-if KIND:ARGS` the session re-simulated under an edit (`what_if`, README "The cache
//! model").

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context as _, bail};
use clap::Args;
use serde_json::{Value, json};

use super::input::{display_name, parse_json, read_text};
use crate::core::cache::{self, CacheRequest, CacheTotals, Edit, Hazard};
use crate::core::format::grouped;
use crate::core::models::cache::CacheModels;
use crate::core::prefix::{
    ChangeKind, Concern, DiffRow, PairReport, PriceTable, RequestMeta, RowKind, Session,
    SessionSummary,
};
use crate::core::stream::StreamReader;
use crate::store::prefix_input::push_stored_session;
use crate::store::{Store, seed};

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
    /// When each body was sent, in Unix milliseconds, comma-separated in body order (for the
    /// `idle_gap` warning).
    #[arg(long, value_delimiter = ',', value_name = "MS,...")]
    sent_at_ms: Vec<i64>,
    /// Seconds of inactivity after which the cache counts as gone, unless a request asks for its
    /// own retention.
    #[arg(long, value_name = "SECS")]
    idle_gap_secs: Option<u64>,
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
    let mut session = Session::default();
    if let Some(secs) = args.idle_gap_secs {
        session = session.with_idle_gap_secs(secs);
    }
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
        return pair_diff_out(&session, &args.requests, args.json);
    }
    let report = session.report(&prices);
    let cached = cache::report(&session, &cache_models, &prices);
    let what_if = match args.what_if.as_slice() {
        [] => None,
        edits => Some(cache::what_if(&session, &cache_models, &prices, edits)?),
    };
    let (requests, totals) = match &what_if {
        Some(w) => (&w.requests, &w.after),
        None => (&cached.requests, &cached.totals),
    };
    let pairs: Vec<PairReport> = if args.pairs.is_empty() {
        report.pairs.clone()
    } else {
        args.pairs
            .iter()
            .map(|&(from, to)| session.compare(from, to))
            .collect::<Result<_, _>>()?
    };

    let mut out = std::io::stdout().lock();
    if args.json {
        let mut summary = summary_json(&report.summary);
        summary["cost_usd"] = cost_json(totals);
        summary["cache_tokens"] = json!({
            "read_tokens": totals.read_tokens,
            "write_tokens": totals.write_tokens,
            "uncached_tokens": totals.uncached_tokens,
        });
        let mut value = json!({
            "pairs": pairs.iter().map(pair_json).collect::<Vec<_>>(),
            "summary": summary,
            "requests": requests.iter().map(request_json).collect::<Vec<_>>(),
            "hazards": cached.hazards,
        });
        if let Some(w) = &what_if {
            value["what_if"] = json!({
                "edits": w.edits,
                "read_tokens_gained": w.read_tokens_gained,
                "usd_saved": w.usd_saved,
                "before": {
                    "read_tokens": w.before.read_tokens,
                    "write_tokens": w.before.write_tokens,
                    "uncached_tokens": w.before.uncached_tokens,
                    "cost_usd": cost_json(&w.before),
                },
            });
        }
        serde_json::to_writer(&mut out, &value)?;
        writeln!(out)?;
    } else {
        for pair in &pairs {
            writeln!(out, "{}", pair_lines(pair))?;
        }
        writeln!(out, "{}", summary_line(&report))?;
        writeln!(out, "{}", cache_line(totals, what_if.as_ref()))?;
        for request in requests {
            if let Some(finding) = &request.finding {
                writeln!(
                    out,
                    "finding at request {}: {}",
                    request.prediction.index,
                    super::shown::shown(finding)
                )?;
            }
        }
        for hazard in &cached.hazards {
            writeln!(out, "{}", hazard_line(hazard))?;
        }
    }
    Ok(())
}

/// `{"paid", "ideal", "lost"}`, each null when a price is unknown.
fn cost_json(totals: &CacheTotals) -> Value {
    let field = |f: fn(&cache::Dollars) -> f64| totals.cost_usd.as_ref().map(f);
    json!({
        "paid": field(|d| d.paid),
        "ideal": field(|d| d.ideal),
        "lost": field(|d| d.lost),
    })
}

/// One request of `requests` in `--json` (the documented contract, plus the reason in words and
/// a disagreement with the server).
fn request_json(request: &CacheRequest) -> Value {
    let p = &request.prediction;
    json!({
        "index": p.index,
        "model": p.model,
        "cache_model": p.cache_model.as_str(),
        "predicted": {
            "read_tokens": p.predicted.read_tokens,
            "write_tokens": p.predicted.write_tokens,
            "uncached_tokens": p.predicted.uncached_tokens,
        },
        "reported": request.reported.map(|r| json!({
            "cached_tokens": r.cached_tokens,
            "cache_write_tokens": r.cache_write_tokens,
        })),
        "cost_usd": request.cost_usd.map(|c| json!({"paid": c.paid, "ideal": c.ideal, "lost": c.lost})),
        "reason": p.reason,
        "finding": request.finding,
    })
}

/// The human cache line: predicted tokens and dollars (or "price unknown"), and a what-if's
/// saving.
fn cache_line(totals: &CacheTotals, what_if: Option<&cache::WhatIf>) -> String {
    let mut line = format!(
        "cache: read {}, wrote {}, uncached {} tokens; ",
        grouped(totals.read_tokens),
        grouped(totals.write_tokens),
        grouped(totals.uncached_tokens)
    );
    match &totals.cost_usd {
        Some(d) => line.push_str(&format!(
            "paid ${:.4} · ideal ${:.4} · lost ${:.4}",
            d.paid, d.ideal, d.lost
        )),
        None => line.push_str(&format!(
            "price unknown ({})",
            totals.unpriced_models.join(", ")
        )),
    }
    if let Some(w) = what_if {
        line.push_str(&format!(
            "; what-if {}: {} more tokens read",
            w.edits.join(" + "),
            w.read_tokens_gained
        ));
        if let Some(saved) = w.usd_saved {
            line.push_str(&format!(", ${saved:.4} saved"));
        }
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
fn pair_diff_out(session: &Session, requests: &[usize], json_out: bool) -> anyhow::Result<()> {
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
    let pair = session.compare(from, to)?;
    let diff = session.pair_diff(from, to)?;
    let mut out = std::io::stdout().lock();
    if json_out {
        let value = json!({"pair": pair_json(&pair), "diff": diff}).to_string();
        // The diff quotes body lines: printed through the redaction policy.
        writeln!(out, "{}", super::shown::shown(&value))?;
        return Ok(());
    }
    writeln!(out, "{}", pair_lines(&pair))?;
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
    let store = match db {
        Some(path) if !path.exists() => bail!("no database at {}", path.display()),
        Some(path) => Store::open(path)?,
        None => seed::open_seeded(&seed::default_path())?,
    };
    push_stored_session(session, &store, id)?;
    Ok(())
}

/// The `--json` view of a pair (the documented shape, nothing more).
fn pair_json(pair: &PairReport) -> Value {
    json!({
        "from": pair.from,
        "to": pair.to,
        "prefix_kept": pair.prefix_kept,
        "break": pair.break_at.as_ref().map(|b| json!({
            "at": b.at.as_str(),
            "index": b.index,
            "path": b.path,
            "change": b.change,
            "also_changed": b.also_changed,
        })),
        "causes": pair.causes.iter().map(|c| c.as_str()).collect::<Vec<_>>(),
        "warnings": concern_names(pair),
        "notes": notes(pair)
            .into_iter()
            .map(|(code, explanation, fix)| json!({"code": code, "explanation": explanation, "fix": fix}))
            .collect::<Vec<_>>(),
        "reusable_bytes": pair.reusable_bytes,
        "reusable_tokens": pair.reusable_tokens,
        "reported_cached_tokens": pair.reported_cached_tokens,
        "warmup": pair.warmup,
        "undetermined": pair.undetermined,
    })
}

fn summary_json(summary: &SessionSummary) -> Value {
    json!({
        "requests": summary.requests,
        "warmups": summary.warmups,
        "undetermined": summary.undetermined,
        "breaks": summary.breaks,
        "input_tokens": summary.input_tokens,
        "reusable_tokens": summary.reusable_tokens,
        "reported_cached_tokens": summary.reported_cached_tokens,
    })
}

/// (code, explanation, fix) of every cause, then every concern ([`Concern::of`]: the
/// warnings, then the server missing the cache), of a pair.
fn notes(pair: &PairReport) -> Vec<(&'static str, String, Option<&'static str>)> {
    let causes = pair
        .causes
        .iter()
        .map(|c| (c.as_str(), c.explanation().to_string(), c.fix()));
    let concerns = Concern::of(pair)
        .into_iter()
        .map(|c| (c.name(), c.explanation(), c.fix()));
    causes.chain(concerns).collect()
}

/// The names of a pair's concerns: its warnings, then `server_missed_cache` where it applies.
fn concern_names(pair: &PairReport) -> Vec<&'static str> {
    Concern::of(pair).into_iter().map(Concern::name).collect()
}

/// The human lines for a pair: the verdict, then one indented line per cause or warning with its
/// explanation and fix.
fn pair_lines(pair: &PairReport) -> String {
    let mut text = pair_line(pair);
    if pair.warmup || pair.undetermined.is_some() {
        return text;
    }
    for (code, explanation, fix) in notes(pair) {
        text.push_str(&format!("\n    {code}: {explanation}"));
        if let Some(fix) = fix {
            text.push_str(&format!(" Fix: {fix}"));
        }
    }
    text
}

/// The verdict line for a pair.
fn pair_line(pair: &PairReport) -> String {
    let mut line = format!("{} -> {}: ", pair.from, pair.to);
    if let Some(why) = &pair.undetermined {
        line.push_str(&format!("not judged: {why}"));
        return line;
    }
    if pair.warmup {
        line.push_str("warm-up (generate: false), not a turn; ");
        // A warm-up shorter than the turn before it (a resumed conversation's first frame)
        // only reads part of that turn's prefix: no break to report.
        if pair.causes == [crate::core::prefix::Cause::InputItemsRemoved] {
            line.push_str(&format!(
                "its prompt is the first {} of request {}'s {} tokens",
                pair.reusable_tokens, pair.from, pair.from_tokens
            ));
            return line;
        }
    }
    match &pair.break_at {
        None => line.push_str("kept"),
        Some(b) => {
            line.push_str("BROKEN at ");
            line.push_str(b.at.as_str());
            if let Some(index) = b.index {
                line.push_str(&format!("[{index}]"));
            }
            if let Some(path) = &b.path {
                line.push_str(&format!(" {path}"));
            }
            if b.change == ChangeKind::KeyOrder {
                line.push_str(" [key order]");
            }
            if !b.also_changed.is_empty() {
                line.push_str(&format!(" (with {})", b.also_changed.join(", ")));
            }
            let causes: Vec<&str> = pair.causes.iter().map(|c| c.as_str()).collect();
            line.push_str(&format!(" ({})", causes.join(", ")));
        }
    }
    line.push_str(&format!(
        "; reusable {} of {} tokens ({} bytes)",
        pair.reusable_tokens, pair.from_tokens, pair.reusable_bytes
    ));
    if let Some(cached) = pair.reported_cached_tokens {
        line.push_str(&format!("; server cached {cached}"));
    }
    let warnings = concern_names(pair);
    if !warnings.is_empty() {
        line.push_str(&format!("; warnings: {}", warnings.join(", ")));
        if let Some(gap) = pair.idle_gap_secs
            && pair
                .warnings
                .contains(&crate::core::prefix::Warning::IdleGap)
        {
            line.push_str(&format!(" (gap {gap} s)"));
        }
    }
    line
}

fn summary_line(report: &crate::core::prefix::SessionReport) -> String {
    let s = &report.summary;
    let cached = s
        .reported_cached_tokens
        .map_or_else(|| "no".to_string(), |c| c.to_string());
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
    if s.undetermined > 0 {
        aside.push(format!("{} not judged", s.undetermined));
    }
    if !aside.is_empty() {
        requests.push_str(&format!(" ({})", aside.join(", ")));
    }
    let mut line = format!(
        "session: {requests}, {} breaks, {} input tokens, {} reusable, {cached} reported cached; \
         misses: {} tokens, ${:.4}",
        s.breaks,
        s.input_tokens,
        s.reusable_tokens,
        report.cost.missed_tokens,
        report.cost.miss_cost_usd
    );
    if !report.cost.unpriced_models.is_empty() {
        line.push_str(&format!(
            " (no price for {})",
            report.cost.unpriced_models.join(", ")
        ));
    }
    line
}

/// What a response's usage reports.
#[derive(Debug, Default)]
struct Reported {
    cached: Option<u64>,
    write: Option<u64>,
    input: Option<u64>,
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
    })
}
