//! The rows summed: the session's tokens and dollars (paid, ideal, lost), the loss by cause with
//! the requests it fell on, the compactions and their own cost — and the one sentence the app
//! and `diff` open with, built from those sums only.

use serde::Serialize;

use super::cause::Cause;
use super::rows::{Dollars, Row, RowKind};
use crate::core::format::grouped;
use crate::core::prefix::Session;

/// Token and dollar totals.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Totals {
    /// Input tokens (the server's where reported, else the estimate).
    pub input_tokens: u64,
    /// Tokens read from the cache.
    pub read_tokens: u64,
    /// Tokens written to it.
    pub write_tokens: u64,
    /// Tokens neither.
    pub uncached_tokens: u64,
    /// Dollars; `None` when a request's model has no checked price.
    pub cost_usd: Option<Dollars>,
    /// Models without a checked price.
    pub unpriced_models: Vec<String>,
}

/// One cause's share of the session's loss.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LossByCause {
    /// The cause.
    pub cause: Cause,
    /// Dollars.
    pub usd: f64,
    /// Tokens.
    pub tokens: u64,
    /// The requests it fell on.
    pub requests: Vec<usize>,
}

/// The session's figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// Requests.
    pub requests: usize,
    /// Warm-ups among them.
    pub warmups: usize,
    /// Compaction requests among them.
    pub compactions: usize,
    /// Requests whose prompt is not known (continuations of unrecorded responses).
    pub undetermined: usize,
    /// Requests whose prefix broke at a cost.
    pub breaks: usize,
    /// Input tokens as the rendered view counts them (estimates).
    pub estimated_tokens: u64,
    /// `input_tokens` the server reported, summed (`None` if none did).
    pub reported_input_tokens: Option<u64>,
    /// `cached_tokens` the server reported, summed (`None` if none did).
    pub reported_cached_tokens: Option<u64>,
    /// The rows' figures summed.
    pub totals: Totals,
    /// The loss by cause, largest first.
    pub lost_by_cause: Vec<LossByCause>,
    /// What the compaction requests paid (their own cost, not a loss).
    pub compaction_usd: Option<f64>,
}

/// Sums the rows.
pub fn sum(rows: &[Row], _session: &Session) -> Summary {
    let mut totals = Totals {
        cost_usd: Some(Dollars::default()),
        ..Totals::default()
    };
    let mut lost_by_cause: Vec<LossByCause> = Vec::new();
    let mut compaction_usd = Some(0.0);
    for row in rows {
        totals.input_tokens += row.input_tokens();
        totals.read_tokens += row.read_tokens();
        totals.write_tokens += row.write_tokens();
        totals.uncached_tokens += row.uncached_tokens();
        match (row.cost_usd, &mut totals.cost_usd) {
            (Some(c), Some(t)) => {
                t.paid += c.paid;
                t.ideal += c.ideal;
                t.lost += c.lost;
            }
            (None, _) if !row.prediction.undetermined => {
                totals.cost_usd = None;
                if !totals.unpriced_models.contains(&row.model) {
                    totals.unpriced_models.push(row.model.clone());
                }
            }
            _ => {}
        }
        if row.kind == RowKind::Compaction {
            compaction_usd = compaction_usd.zip(row.cost_usd).map(|(t, c)| t + c.paid);
        }
        for l in &row.lost_by_cause {
            match lost_by_cause.iter_mut().find(|x| x.cause == l.cause) {
                Some(x) => {
                    x.usd += l.usd;
                    x.tokens += l.tokens;
                    if !x.requests.contains(&row.index) {
                        x.requests.push(row.index);
                    }
                }
                None => lost_by_cause.push(LossByCause {
                    cause: l.cause,
                    usd: l.usd,
                    tokens: l.tokens,
                    requests: vec![row.index],
                }),
            }
        }
    }
    lost_by_cause.sort_by(|a, b| b.usd.total_cmp(&a.usd));
    let reported = |f: fn(&Row) -> Option<u64>| {
        let values: Vec<u64> = rows.iter().filter_map(f).collect();
        (!values.is_empty()).then(|| values.iter().sum())
    };
    Summary {
        requests: rows.len(),
        warmups: rows.iter().filter(|r| r.kind == RowKind::Warmup).count(),
        compactions: rows
            .iter()
            .filter(|r| r.kind == RowKind::Compaction)
            .count(),
        undetermined: rows
            .iter()
            .filter(|r| r.kind == RowKind::Undetermined)
            .count(),
        breaks: rows.iter().filter(|r| r.is_break()).count(),
        estimated_tokens: rows.iter().map(|r| r.tokens).sum(),
        reported_input_tokens: reported(|r| r.reported.as_ref().and_then(|x| x.input_tokens)),
        reported_cached_tokens: reported(|r| r.reported.as_ref().and_then(|x| x.cached_tokens)),
        totals,
        lost_by_cause,
        compaction_usd: compaction_usd
            .filter(|_| rows.iter().any(|r| r.kind == RowKind::Compaction)),
    }
}

/// `$0.221`: dollars with three decimals, four under a cent.
pub fn usd(x: f64) -> String {
    if x != 0.0 && x.abs() < 0.01 {
        format!("${x:.4}")
    } else {
        format!("${x:.3}")
    }
}

/// Where a cause fell: `at request 10`, `at requests 3, 7 and 9`, `at 12 requests`.
fn at_requests(cause: Cause, requests: &[usize]) -> String {
    let before = matches!(cause, Cause::IdleGap);
    let word = if before { "before" } else { "at" };
    match requests {
        [] => String::new(),
        [one] => format!(" {word} request {one}"),
        some if some.len() <= 4 => {
            let (last, rest) = some.split_last().map_or((0, &[][..]), |(l, r)| (*l, r));
            let rest: Vec<String> = rest.iter().map(ToString::to_string).collect();
            format!(" {word} requests {} and {last}", rest.join(", "))
        }
        many => format!(" {word} {} requests", many.len()),
    }
}

impl Summary {
    /// The sentence the analysis opens with: what the input cost, what was lost and to what, and
    /// the compactions — every figure from the sums above.
    pub fn sentence(&self) -> String {
        let t = &self.totals;
        let Some(cost) = t.cost_usd else {
            let read_share = if t.input_tokens > 0 {
                t.read_tokens as f64 * 100.0 / t.input_tokens as f64
            } else {
                0.0
            };
            return format!(
                "{} input tokens, {} read from the cache ({read_share:.0} %); price unknown for {}",
                grouped(t.input_tokens),
                grouped(t.read_tokens),
                t.unpriced_models.join(", ")
            );
        };
        let mut text = format!("Input cost {}", usd(cost.paid));
        if cost.lost > 0.0 {
            let share = if cost.paid > 0.0 {
                cost.lost * 100.0 / cost.paid
            } else {
                0.0
            };
            text.push_str(&format!("; {} ({share:.0} %) lost", usd(cost.lost)));
            let parts: Vec<String> = self
                .lost_by_cause
                .iter()
                .filter(|l| l.usd > 0.0)
                .map(|l| {
                    format!(
                        "{} to {}{}",
                        usd(l.usd),
                        article(l.cause),
                        at_requests(l.cause, &l.requests)
                    )
                })
                .collect();
            if !parts.is_empty() {
                text.push_str(": ");
                text.push_str(&parts.join(", "));
            }
        } else {
            text.push_str("; nothing lost");
        }
        if self.compactions > 0 {
            let noun = if self.compactions == 1 {
                "compaction"
            } else {
                "compactions"
            };
            match self.compaction_usd {
                Some(c) => text.push_str(&format!(
                    "; {} {noun} (expected, {})",
                    self.compactions,
                    usd(c)
                )),
                None => text.push_str(&format!("; {} {noun} (expected)", self.compactions)),
            }
        }
        text
    }
}

/// `the model switch`, `an idle gap`.
fn article(cause: Cause) -> String {
    let words = cause.short();
    match cause {
        Cause::IdleGap => format!("an {words}"),
        Cause::RoutingOverflow | Cause::ServerShortfall | Cause::NoBreakpoint => words.to_string(),
        _ => format!("the {words}"),
    }
}
