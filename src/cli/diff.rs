//! `promptwire diff`: cache-prefix analysis across captured request bodies — one line per pair
//! (kept or where it broke and why), a session summary, and with `--json` the machine-readable
//! report.

use std::io::Write as _;
use std::time::Duration;

use anyhow::{Context as _, bail};
use clap::Args;
use serde_json::{Value, json};

use super::input::{display_name, parse_json, read_text};
use crate::core::prefix::{PairReport, PriceTable, RequestMeta, Session, SessionSummary};
use crate::core::stream::StreamReader;

/// Arguments of `diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// Request bodies in the order they were sent (`-` reads one from standard input).
    #[arg(required = true, value_name = "BODY.json")]
    bodies: Vec<String>,
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
    /// Price table to use instead of the bundled one (`assets/prices.json`).
    #[arg(long, value_name = "FILE")]
    prices: Option<String>,
    /// Largest accepted file, in bytes.
    #[arg(long, default_value_t = super::DEFAULT_MAX_BYTES)]
    max_bytes: u64,
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
    if let Some(&(from, to)) = args.pairs.iter().find(|(f, t)| *f >= n || *t >= n) {
        let count = if n == 1 {
            "1 request".to_string()
        } else {
            format!("{n} requests")
        };
        bail!(
            "--pair {from}:{to}: the session has {count} (0 to {})",
            n - 1
        );
    }
    let prices = match &args.prices {
        None => PriceTable::bundled(),
        Some(path) => {
            let text = read_text(path, args.max_bytes)?;
            PriceTable::from_json(&text).map_err(|e| anyhow::anyhow!("{path}: {e}"))?
        }
    };

    let mut session = Session::default();
    if let Some(secs) = args.idle_gap_secs {
        session = session.with_idle_gap_secs(secs);
    }
    for (i, arg) in args.bodies.iter().enumerate() {
        let reported_cached_tokens = match args.usage.get(i) {
            Some(path) => {
                let text = read_text(path, args.max_bytes)?;
                reported_cached_tokens(&text)
                    .map_err(|e| anyhow::anyhow!("{}: {e:#}", display_name(path)))?
            }
            None => None,
        };
        let meta = RequestMeta {
            reported_cached_tokens,
            sent_at_ms: args.sent_at_ms.get(i).copied(),
            finished_at_ms: None,
        };
        // One body in memory at a time: the session keeps only its distinct elements.
        let text = read_text(arg, args.max_bytes)?;
        let body = parse_json(arg, &text)?;
        drop(text);
        session
            .push_body(&body, meta)
            .map_err(|e| anyhow::anyhow!("{}: {e}", display_name(arg)))?;
    }

    let report = session.report(&prices);
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
        let value = json!({
            "pairs": pairs.iter().map(pair_json).collect::<Vec<_>>(),
            "summary": summary_json(&report.summary),
        });
        serde_json::to_writer(&mut out, &value)?;
        writeln!(out)?;
    } else {
        for pair in &pairs {
            writeln!(out, "{}", pair_line(pair))?;
        }
        writeln!(out, "{}", summary_line(&report))?;
    }
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
        })),
        "causes": pair.causes.iter().map(|c| c.as_str()).collect::<Vec<_>>(),
        "warnings": pair.warnings.iter().map(|w| w.as_str()).collect::<Vec<_>>(),
        "reusable_bytes": pair.reusable_bytes,
        "reusable_tokens": pair.reusable_tokens,
        "reported_cached_tokens": pair.reported_cached_tokens,
    })
}

fn summary_json(summary: &SessionSummary) -> Value {
    json!({
        "requests": summary.requests,
        "breaks": summary.breaks,
        "input_tokens": summary.input_tokens,
        "reusable_tokens": summary.reusable_tokens,
        "reported_cached_tokens": summary.reported_cached_tokens,
    })
}

/// One human line for a pair.
fn pair_line(pair: &PairReport) -> String {
    let mut line = format!("{} -> {}: ", pair.from, pair.to);
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
    if !pair.warnings.is_empty() {
        let warnings: Vec<&str> = pair.warnings.iter().map(|w| w.as_str()).collect();
        line.push_str(&format!("; warnings: {}", warnings.join(", ")));
        if let Some(gap) = pair.idle_gap_secs {
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
    let mut line = format!(
        "session: {} requests, {} breaks, {} input tokens, {} reusable, {cached} reported cached; \
         misses: {} tokens, ${:.4}",
        s.requests,
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

/// `usage.input_tokens_details.cached_tokens` of a response: the usage of a recorded SSE stream
/// as the stream reader maps it (0 when the usage has no details), or the `usage` of a JSON
/// response (`None` when it has no details). An error when there is no usage at all.
fn reported_cached_tokens(text: &str) -> anyhow::Result<Option<u64>> {
    if text.trim_start().starts_with('{') {
        let value: Value = serde_json::from_str(text).context("not a JSON response")?;
        let usage = value
            .get("usage")
            .or_else(|| value.get("response").and_then(|r| r.get("usage")))
            .context("the response has no `usage`")?;
        return Ok(usage
            .get("input_tokens_details")
            .and_then(|d| d.get("cached_tokens"))
            .and_then(Value::as_u64));
    }
    let mut reader = StreamReader::new();
    reader.push(text.as_bytes(), Duration::ZERO);
    reader.finish(Duration::ZERO);
    let usage = reader
        .outcome()
        .usage
        .as_ref()
        .context("the stream has no `response.completed` event with usage")?;
    Ok(u64::try_from(usage.cached_input_tokens).ok())
}
