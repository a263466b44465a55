//! A stored session's ledger for the Sessions view, computed on a worker from the store's
//! content-addressed parts through the store's one adapter (`store::prefix_input`, which
//! `diff --session` reads too) — no body is rebuilt or re-serialized. Every figure the view
//! draws (badges, the sentence, the waterfall, the break list's text, the inspector's cost) is
//! read from the ledger's rows here, once; nothing here computes a cache figure of its own.

use std::sync::Arc;

use crate::core::anatomy::agents::{AgentNode, tree};
use crate::core::anatomy::{self, Agent, AgentTag, Anatomy};
use crate::core::format::grouped;
use crate::core::ledger::summary::usd;
use crate::core::ledger::{self, CacheModels, Cause, Ledger, PriceTable, Row, RowKind, Rules};
use crate::core::models::ModelCatalog;
use crate::core::prefix::Session;
use crate::store::prefix_input::push_parts;
use crate::store::summary::SessionParts;

/// A request's prefix badge in the browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PrefixBadge {
    /// The first request of its conversation (nothing to compare with).
    First,
    /// Its prompt starts with the previous turn's; the notes a bare "kept" would hide (an idle
    /// gap, a routing change, a server shortfall).
    Kept(Vec<Cause>),
    /// The prefix broke before it: the causes, by name, and its notes.
    Broken(String, Vec<Cause>),
    /// A new user turn where the server stopped rendering the earlier reasoning
    /// (`reasoning_dropped`): expected, not a costly break; and its notes.
    NewTurn(Vec<Cause>),
    /// A `generate: false` warm-up: not a turn.
    Warmup,
    /// A compaction request: expected, its own cost.
    Compaction,
    /// The first turn after a compaction: its history was rewritten (and the routing causes, if
    /// any).
    AfterCompaction(Vec<Cause>),
    /// It continues a response the recording does not have: its prompt is not known.
    Undetermined,
}

impl PrefixBadge {
    /// The badge of a ledger row.
    pub fn of(row: &Row) -> Self {
        let notes = || -> Vec<Cause> {
            let mut notes: Vec<Cause> = row
                .verdict
                .as_ref()
                .map(|v| {
                    v.causes
                        .iter()
                        .copied()
                        .filter(|c| c.is_routing())
                        .collect()
                })
                .unwrap_or_default();
            for n in &row.notes {
                if !notes.contains(n) {
                    notes.push(*n);
                }
            }
            notes
        };
        match row.kind {
            RowKind::First => Self::First,
            RowKind::Warmup => Self::Warmup,
            RowKind::Compaction => Self::Compaction,
            RowKind::Undetermined => Self::Undetermined,
            RowKind::AfterCompaction => Self::AfterCompaction(notes()),
            RowKind::Turn => match &row.verdict {
                Some(v)
                    if !v.prefix_kept
                        && v.causes
                            .iter()
                            .filter(|c| !c.is_routing())
                            .all(|c| *c == Cause::ReasoningDropped) =>
                {
                    Self::NewTurn(notes())
                }
                Some(v) if !v.prefix_kept => {
                    let causes: Vec<&str> = v
                        .causes
                        .iter()
                        .filter(|c| !c.is_routing())
                        .map(|c| c.as_str())
                        .collect();
                    Self::Broken(causes.join(", "), notes())
                }
                _ => Self::Kept(notes()),
            },
        }
    }

    /// The badge text (`kept`, `kept · ! idle gap`, `broken: tools_changed`).
    pub fn label(&self) -> String {
        let mut text = match self {
            Self::First => return "first".to_string(),
            Self::Warmup => return "warm-up".to_string(),
            Self::Compaction => return "compaction (expected)".to_string(),
            Self::Undetermined => {
                return "not judged: continues an unrecorded response".to_string();
            }
            Self::AfterCompaction(_) => "after compaction".to_string(),
            Self::Kept(_) => "kept".to_string(),
            Self::NewTurn(_) => "new turn (earlier reasoning dropped)".to_string(),
            Self::Broken(causes, _) => format!("broken: {causes}"),
        };
        let notes = self.notes();
        if !notes.is_empty() {
            let words: Vec<&str> = notes.iter().map(|c| c.short()).collect();
            text.push_str(&format!(" · ! {}", words.join(", ")));
        }
        text
    }

    /// The notes shown with the verdict.
    pub fn notes(&self) -> &[Cause] {
        match self {
            Self::First | Self::Warmup | Self::Compaction | Self::Undetermined => &[],
            Self::Kept(c) | Self::Broken(_, c) | Self::AfterCompaction(c) | Self::NewTurn(c) => c,
        }
    }

    /// Kept, with a note: the strip and the table mark it as a warning, not as kept.
    pub fn is_warned_kept(&self) -> bool {
        matches!(self, Self::Kept(c) if !c.is_empty())
    }

    /// Whether it marks a costly break.
    pub fn is_broken(&self) -> bool {
        matches!(self, Self::Broken(..))
    }
}

/// The waterfall's series: per request, tokens read, written and uncached (the ledger's rows:
/// the server's figures where reported), and where breaks and compactions fall.
#[derive(Debug, Clone, Default)]
pub struct Waterfall {
    /// `[index, tokens]` read from the cache.
    pub read: Vec<[f64; 2]>,
    /// `[index, tokens]` written to it.
    pub written: Vec<[f64; 2]>,
    /// `[index, tokens]` neither.
    pub uncached: Vec<[f64; 2]>,
    /// Requests whose prefix broke at a cost.
    pub breaks: Vec<f64>,
    /// Compaction requests.
    pub compactions: Vec<f64>,
    /// The highest input of a request.
    pub top: f64,
}

/// The ledger of one session and what the view draws from it.
#[derive(Debug)]
pub struct Analysis {
    /// The session id.
    pub session: i64,
    /// The analysed session (for pair diffs and what-ifs on demand).
    pub prefix: Arc<Session>,
    /// The ledger: every cache figure of the session.
    pub ledger: Arc<Ledger>,
    /// The rules it was computed under (the what-if re-simulates with them).
    pub rules: Arc<Rules>,
    /// Per request: its badge.
    pub badges: Vec<PrefixBadge>,
    /// Per costly break: (request index, the row's text).
    pub breaks: Vec<(usize, String)>,
    /// Per break or warned request, in order: (request index, the row's text) — the "Breaks and
    /// warnings" list.
    pub notes: Vec<(usize, String)>,
    /// The sentence the pane opens with (the ledger summary's).
    pub sentence: String,
    /// The waterfall's series.
    pub waterfall: Waterfall,
    /// Per priced request `[index, dollars]`: what its input paid.
    pub cost_paid: Vec<[f64; 2]>,
    /// Per priced request `[index, dollars]`: what it lost.
    pub cost_lost: Vec<[f64; 2]>,
    /// Per request that reported it `[index, tokens]`: the server's `cached_tokens`.
    pub cached_server: Vec<[f64; 2]>,
    /// Per request `[index, bytes]`: the body as sent.
    pub sent_bytes: Vec<[f64; 2]>,
    /// Per request `[index, bytes]`: the body if it resent the whole history.
    pub full_history_bytes: Vec<[f64; 2]>,
    /// The anatomy of the session (what fills each request's context), from the ledger.
    pub anatomy: Arc<Anatomy>,
    /// The agents of the run: this session, and its subagents' sessions when stored.
    pub agents: Vec<Agent>,
    /// Milliseconds the analysis took (read + ledger + anatomy).
    pub millis: f64,
    /// Where the cache models came from, or why a cache-models file was not applied.
    pub cache_models_note: Option<CacheModelsNote>,
}

/// The database's cache-models file (`cache-models.json` beside it), as the analysis read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CacheModelsNote {
    /// Applied: its path and how many rows it has.
    Loaded(String, usize),
    /// Not applied (the built-in table is used): why, with the line and column.
    Refused(String),
}

impl CacheModelsNote {
    /// The line the prefix view shows.
    pub fn text(&self) -> String {
        match self {
            Self::Loaded(path, rows) => format!(
                "cache models: {path} ({rows} row{})",
                if *rows == 1 { "" } else { "s" }
            ),
            Self::Refused(why) => format!("cache models not applied (built-in used): {why}"),
        }
    }
}

/// The file name of the cache-models file the app reads beside the session database.
pub const CACHE_MODELS_FILE: &str = "cache-models.json";

/// Reads `cache-models.json` beside the database at `db`: the built-in table (and no note) when
/// there is none; the built-in table and the reason when it cannot be read or does not parse
/// (nothing of a bad file is applied).
pub fn cache_models_beside(db: &std::path::Path) -> (CacheModels, Option<CacheModelsNote>) {
    let path = db.with_file_name(CACHE_MODELS_FILE);
    let shown = path.display().to_string();
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return (CacheModels::default(), None);
        }
        Err(e) => {
            return (
                CacheModels::default(),
                Some(CacheModelsNote::Refused(format!("{shown}: {e}"))),
            );
        }
    };
    match CacheModels::from_json(&text) {
        Ok(models) => {
            let rows = models.models.len();
            (models, Some(CacheModelsNote::Loaded(shown, rows)))
        }
        Err(e) => (
            CacheModels::default(),
            Some(CacheModelsNote::Refused(format!("{shown}: {e}"))),
        ),
    }
}

impl Analysis {
    /// The ledger row of request `index`.
    pub fn row(&self, index: usize) -> Option<&Row> {
        self.ledger.rows.get(index)
    }

    /// The pair (earlier, later) a row was compared as.
    fn pair_of(&self, index: usize) -> Option<(usize, usize)> {
        let row = self.row(index)?;
        Some((row.previous?, index))
    }

    /// The first costly break (earlier, later), if any.
    pub fn first_break(&self) -> Option<(usize, usize)> {
        let (index, _) = self.breaks.first()?;
        self.pair_of(*index)
    }

    /// The first break, else the first warned request: the pair shown on opening.
    pub fn first_note(&self) -> Option<(usize, usize)> {
        if let Some(pair) = self.first_break() {
            return Some(pair);
        }
        let (index, _) = self.notes.first()?;
        self.pair_of(*index)
    }
}

/// The text of a row in the "Breaks and warnings" list: where, why, and what it cost — all
/// figures the row's.
pub fn break_text(row: &Row) -> String {
    let Some(v) = &row.verdict else {
        return format!("request {}: {}", row.index, PrefixBadge::of(row).label());
    };
    let mut text = format!("request {} (against {})", row.index, v.from);
    match &v.divergence {
        Some(d) => text.push_str(&format!(
            ": broken at {} ({}, token {})",
            d.pointer,
            d.source.label(),
            grouped(d.token)
        )),
        None => text.push_str(": prefix kept"),
    }
    let causes: Vec<&str> = v.causes.iter().map(|c| c.as_str()).collect();
    if !causes.is_empty() {
        text.push_str(&format!(" · {}", causes.join(", ")));
    }
    text.push_str(&format!(
        " · reusable {} of {} tokens · read {}",
        grouped(v.reusable_tokens),
        grouped(v.from_tokens),
        grouped(row.read_tokens())
    ));
    if let Some(d) = row.cost_usd.filter(|d| d.lost > 0.0) {
        text.push_str(&format!(" · lost {}", usd(d.lost)));
    }
    let notes: Vec<&str> = row.notes.iter().map(|c| c.as_str()).collect();
    if !notes.is_empty() {
        text.push_str(&format!(" · ! {}", notes.join(", ")));
    }
    text
}

/// A row's figures in words: the simulator's reason, the server's figures, its dollars (the
/// loss by cause) or "price unknown".
pub fn row_text(row: &Row) -> String {
    let p = &row.prediction;
    let money = match &row.cost_usd {
        Some(d) if d.lost > 0.0 => {
            let by: Vec<String> = row
                .lost_by_cause
                .iter()
                .map(|l| format!("{} to {}", usd(l.usd), l.cause.short()))
                .collect();
            format!(
                "paid {}, ideal {}, lost {} ({})",
                usd(d.paid),
                usd(d.ideal),
                usd(d.lost),
                by.join(", ")
            )
        }
        Some(d) => format!("paid {}, nothing lost", usd(d.paid)),
        None => "price unknown".to_string(),
    };
    let server = match &row.reported {
        Some(r) => format!(
            " · server: input {}, cached {}",
            r.input_tokens.map_or_else(|| "?".to_string(), grouped),
            r.cached_tokens.map_or_else(|| "?".to_string(), grouped)
        ),
        None => String::new(),
    };
    format!(
        "request {} ({} cache): {}{server} · {money}",
        row.index,
        p.cache_model.as_str(),
        p.reason
    )
}

/// Analyses session `session` from its stored parts with the bundled rules.
pub fn analyze_parts(
    session: i64,
    parts: SessionParts,
    prices: &PriceTable,
) -> Result<Analysis, String> {
    let rules = Rules {
        prices: prices.clone(),
        ..Rules::bundled()
    };
    analyze_parts_with(session, parts, Arc::new(rules), None)
}

/// [`analyze_parts`] under these rules (and the note of where their cache models came from).
pub fn analyze_parts_with(
    session: i64,
    parts: SessionParts,
    rules: Arc<Rules>,
    cache_models_note: Option<CacheModelsNote>,
) -> Result<Analysis, String> {
    let started = std::time::Instant::now();
    let mut prefix = Session::default();
    push_parts(&mut prefix, session, parts).map_err(|e| e.to_string())?;
    let ledger = ledger::ledger(&prefix, &rules);
    let anatomy = anatomy::with_catalog(&prefix, &ledger, &ModelCatalog::bundled());
    // The session alone; `jobs::analyze_stored` puts its subagents' sessions beside it.
    let agents = tree(vec![AgentNode::of_ledger(
        AgentTag {
            thread: format!("session {session}"),
            ..AgentTag::default()
        },
        Some(session),
        &ledger,
    )]);
    let rows = &ledger.rows;
    let badges: Vec<PrefixBadge> = rows.iter().map(PrefixBadge::of).collect();
    let mut breaks = Vec::new();
    let mut notes = Vec::new();
    for (row, badge) in rows.iter().zip(&badges) {
        let warned = !badge.notes().is_empty() || row.finding.is_some();
        if row.is_break() {
            breaks.push((row.index, break_text(row)));
        }
        if row.is_break() || (warned && row.verdict.is_some()) || row.kind == RowKind::Undetermined
        {
            notes.push((row.index, break_text(row)));
        }
    }
    let x = |row: &Row| row.index as f64;
    let priced = || rows.iter().filter_map(|r| r.cost_usd.map(|d| (x(r), d)));
    let waterfall = Waterfall {
        read: rows
            .iter()
            .map(|r| [x(r), r.read_tokens() as f64])
            .collect(),
        written: rows
            .iter()
            .map(|r| [x(r), r.write_tokens() as f64])
            .collect(),
        uncached: rows
            .iter()
            .map(|r| [x(r), r.uncached_tokens() as f64])
            .collect(),
        breaks: rows.iter().filter(|r| r.is_break()).map(x).collect(),
        compactions: rows
            .iter()
            .filter(|r| r.kind == RowKind::Compaction)
            .map(x)
            .collect(),
        top: rows
            .iter()
            .map(|r| r.input_tokens() as f64)
            .fold(0.0, f64::max),
    };
    let growth = prefix.growth(|i| {
        rows.get(i)
            .and_then(|r| r.verdict.as_ref())
            .is_some_and(|v| v.prefix_kept && v.from + 1 == i)
    });
    Ok(Analysis {
        session,
        cost_paid: priced().map(|(x, d)| [x, d.paid]).collect(),
        cost_lost: priced().map(|(x, d)| [x, d.lost]).collect(),
        cached_server: rows
            .iter()
            .filter_map(|r| Some([x(r), r.reported.as_ref()?.cached_tokens? as f64]))
            .collect(),
        sent_bytes: growth
            .iter()
            .map(|g| [g.index as f64, g.sent_bytes as f64])
            .collect(),
        full_history_bytes: growth
            .iter()
            .map(|g| [g.index as f64, g.full_history_bytes as f64])
            .collect(),
        sentence: ledger.summary.sentence(),
        badges,
        breaks,
        notes,
        waterfall,
        prefix: Arc::new(prefix),
        ledger: Arc::new(ledger),
        anatomy: Arc::new(anatomy),
        agents,
        rules,
        millis: started.elapsed().as_secs_f64() * 1000.0,
        cache_models_note,
    })
}
