//! The compactions of a session, from the ledger's rows: each compaction request (in-band,
//! `compaction_trigger`, `/responses/compact`) — or, when the recording has none, the turn whose
//! history was rewritten — with the tokens before and after, what the compaction request itself
//! paid and read from the cache, and the **re-warm** after it: the tokens written or left
//! uncached by the requests after the compaction until one reads the new history again. Several
//! compactions close together are a **loop**.

use serde::Serialize;

use crate::core::ledger::{Ledger, Row, RowKind};

/// Two compactions with at most this many turns between them are part of a loop.
pub const LOOP_TURNS: usize = 3;

/// A request reads "the new history again" once it reads at least this share of the first
/// request after the compaction.
const REWARMED_SHARE: f64 = 0.9;

/// One compaction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Compaction {
    /// The compaction request (or, when none was recorded, the first turn after it).
    pub index: usize,
    /// Whether the compaction request itself is recorded.
    pub recorded: bool,
    /// Input tokens before: the compaction request's (else the turn before's).
    pub tokens_before: u64,
    /// Input tokens of the first turn after it (None when the session ends first).
    pub tokens_after: Option<u64>,
    /// The first turn after it.
    pub after: Option<usize>,
    /// What the compaction request paid for its input, when priced.
    pub cost_usd: Option<f64>,
    /// What it read from the cache.
    pub read_tokens: Option<u64>,
    /// Tokens written or left uncached from the first turn after it until the cache holds the
    /// new history again.
    pub rewarm_tokens: u64,
    /// What those requests paid for their input, when priced.
    pub rewarm_usd: Option<f64>,
    /// Requests the re-warm took.
    pub rewarm_requests: usize,
    /// Part of a run of compactions close together (at most [`LOOP_TURNS`] turns apart).
    pub in_loop: bool,
}

/// The compactions of `ledger`.
pub fn find(ledger: &Ledger) -> Vec<Compaction> {
    let rows = &ledger.rows;
    let mut out: Vec<Compaction> = Vec::new();
    let mut pending: Option<usize> = None; // a compaction request waiting for its turn after
    let mut turns_since: Option<usize> = None;
    let mut last_turn: Option<&Row> = None;
    for (k, row) in rows.iter().enumerate() {
        match row.kind {
            RowKind::Compaction => {
                out.push(Compaction {
                    index: row.index,
                    recorded: true,
                    tokens_before: row.input_tokens(),
                    tokens_after: None,
                    after: None,
                    cost_usd: row.cost_usd.map(|d| d.paid),
                    read_tokens: Some(row.read_tokens()),
                    rewarm_tokens: 0,
                    rewarm_usd: None,
                    rewarm_requests: 0,
                    in_loop: turns_since.is_some_and(|t| t <= LOOP_TURNS),
                });
                if turns_since.is_some_and(|t| t <= LOOP_TURNS)
                    && let Some(previous) = out.len().checked_sub(2).and_then(|p| out.get_mut(p))
                {
                    previous.in_loop = true;
                }
                pending = Some(out.len() - 1);
                turns_since = Some(0);
            }
            RowKind::AfterCompaction => {
                let slot = match pending.take() {
                    Some(p) => p,
                    None => {
                        // The compaction itself is not recorded (a rollout's remote compaction).
                        out.push(Compaction {
                            index: row.index,
                            recorded: false,
                            tokens_before: last_turn.map_or(0, Row::input_tokens),
                            tokens_after: None,
                            after: None,
                            cost_usd: None,
                            read_tokens: None,
                            rewarm_tokens: 0,
                            rewarm_usd: None,
                            rewarm_requests: 0,
                            in_loop: turns_since.is_some_and(|t| t <= LOOP_TURNS),
                        });
                        if turns_since.is_some_and(|t| t <= LOOP_TURNS)
                            && let Some(previous) =
                                out.len().checked_sub(2).and_then(|p| out.get_mut(p))
                        {
                            previous.in_loop = true;
                        }
                        out.len() - 1
                    }
                };
                let c = &mut out[slot];
                c.after = Some(row.index);
                c.tokens_after = Some(row.input_tokens());
                rewarm(c, &rows[k..]);
                turns_since = Some(1);
                last_turn = Some(row);
            }
            RowKind::Turn | RowKind::First => {
                // The first turn after a compaction request, whatever the ledger compares it
                // with (a resumed session's first turn has nothing before it but the compaction).
                if let Some(slot) = pending.take() {
                    let c = &mut out[slot];
                    c.after = Some(row.index);
                    c.tokens_after = Some(row.input_tokens());
                    rewarm(c, &rows[k..]);
                }
                turns_since = turns_since.map(|t| t + 1);
                last_turn = Some(row);
            }
            RowKind::Warmup | RowKind::Undetermined => {}
        }
    }
    out
}

/// Fills the re-warm of `c` from `rows` (starting at the first turn after it).
fn rewarm(c: &mut Compaction, rows: &[Row]) {
    let Some(first) = rows.first() else {
        return;
    };
    let target = (first.input_tokens() as f64 * REWARMED_SHARE) as u64;
    let mut usd = Some(0.0);
    for (n, row) in rows.iter().enumerate() {
        if matches!(row.kind, RowKind::Warmup | RowKind::Undetermined) {
            continue;
        }
        if n > 0 && (row.kind == RowKind::Compaction || row.read_tokens() >= target) {
            break;
        }
        c.rewarm_tokens += row.write_tokens() + row.uncached_tokens();
        c.rewarm_requests += 1;
        usd = usd.zip(row.cost_usd).map(|(u, d)| u + d.paid);
    }
    c.rewarm_usd = usd;
}
