//! A stored session's cache-prefix analysis for the Sessions view, computed on a worker from
//! the store's content-addressed parts through the store's one adapter
//! (`store::prefix_input`, which `diff --session` reads too) — no body is rebuilt or
//! re-serialized. Everything the view draws per frame (badges, chart series, the break list's
//! text) is computed here once; what a pair's verdict hides ([`Concern`]) is core's.

use std::sync::Arc;

use crate::core::cache::CacheReport;
use crate::core::models::cache::CacheModels;
use crate::core::prefix::{
    Concern, PairReport, PriceTable, Session, SessionReport, missed_cacheable_tokens,
};
use crate::store::prefix_input::push_parts;
use crate::store::summary::SessionParts;

/// A request's prefix badge in the browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PrefixBadge {
    /// The first request (nothing to compare with).
    First,
    /// Its prompt starts with the previous one's; what a bare "kept" would hide.
    Kept(Vec<Concern>),
    /// The prefix broke before it: the causes, by name, and the pair's concerns.
    Broken(String, Vec<Concern>),
    /// A `generate: false` warm-up: not a turn, not judged as one.
    Warmup,
    /// It continues a response the recording does not have: its prompt is not known.
    Undetermined,
}

impl PrefixBadge {
    /// The badge text (`kept`, `kept · ! cache key changed`, `broken: tools_changed`).
    pub fn label(&self) -> String {
        let mut text = match self {
            Self::First => return "first".to_string(),
            Self::Warmup => return "warm-up".to_string(),
            Self::Undetermined => {
                return "not judged: continues an unrecorded response".to_string();
            }
            Self::Kept(_) => "kept".to_string(),
            Self::Broken(causes, _) => format!("broken: {causes}"),
        };
        let concerns = self.concerns();
        if !concerns.is_empty() {
            let words: Vec<&str> = concerns.iter().map(|c| c.short()).collect();
            text.push_str(&format!(" · ! {}", words.join(", ")));
        }
        text
    }

    /// The concerns shown with the verdict.
    pub fn concerns(&self) -> &[Concern] {
        match self {
            Self::First | Self::Warmup | Self::Undetermined => &[],
            Self::Kept(c) | Self::Broken(_, c) => c,
        }
    }

    /// Kept, with a concern: the strip and the table mark it as a warning, not as kept.
    pub fn is_warned_kept(&self) -> bool {
        matches!(self, Self::Kept(c) if !c.is_empty())
    }
}

/// The prefix analysis of one session and what the view draws from it.
#[derive(Debug)]
pub struct Analysis {
    /// The session id.
    pub session: i64,
    /// The analysed session (for pair diffs on demand).
    pub prefix: Arc<Session>,
    /// Consecutive pairs, totals, miss cost, growth.
    pub report: SessionReport,
    /// Per request: its badge.
    pub badges: Vec<PrefixBadge>,
    /// Per break: (pair index in `report.pairs`, the row's text).
    pub breaks: Vec<(usize, String)>,
    /// Per break or warned pair, in pair order: (pair index in `report.pairs`, the row's text)
    /// — the "Breaks and warnings" list.
    pub notes: Vec<(usize, String)>,
    /// The cache as each request's model keeps it (`core::cache`): per request read / written /
    /// uncached tokens and dollars, the session's paid / ideal / lost, the hazards.
    pub cache: CacheReport,
    /// Per priced request `[index, dollars]`: what its input paid, under its cache model.
    pub cost_paid: Vec<[f64; 2]>,
    /// Per priced request `[index, dollars]`: what the break before it lost.
    pub cost_lost: Vec<[f64; 2]>,
    /// Per request `[index, tokens]`: locally estimated reusable (cached) input.
    pub cached_local: Vec<[f64; 2]>,
    /// Per request `[index, tokens]`: locally estimated uncached input.
    pub uncached_local: Vec<[f64; 2]>,
    /// Per request that reported it `[index, tokens]`: the server's `cached_tokens`.
    pub cached_server: Vec<[f64; 2]>,
    /// Per request `[index, bytes]`: the body as sent.
    pub sent_bytes: Vec<[f64; 2]>,
    /// Per request `[index, bytes]`: the body if it resent the whole history.
    pub full_history_bytes: Vec<[f64; 2]>,
    /// Milliseconds the analysis took (read + analyse).
    pub millis: f64,
    /// The cache models it simulated with (the what-if re-simulates with them too).
    pub cache_models: Arc<CacheModels>,
    /// Where they came from, or why a cache-models file was not applied.
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
pub fn cache_models_beside(db: &std::path::Path) -> (Arc<CacheModels>, Option<CacheModelsNote>) {
    let path = db.with_file_name(CACHE_MODELS_FILE);
    let shown = path.display().to_string();
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return (Arc::new(CacheModels::default()), None);
        }
        Err(e) => {
            return (
                Arc::new(CacheModels::default()),
                Some(CacheModelsNote::Refused(format!("{shown}: {e}"))),
            );
        }
    };
    match CacheModels::from_json(&text) {
        Ok(models) => {
            let rows = models.models.len();
            (Arc::new(models), Some(CacheModelsNote::Loaded(shown, rows)))
        }
        Err(e) => (
            Arc::new(CacheModels::default()),
            Some(CacheModelsNote::Refused(format!("{shown}: {e}"))),
        ),
    }
}

impl Analysis {
    /// The first broken pair (earlier, later), if any.
    pub fn first_break(&self) -> Option<(usize, usize)> {
        let (pair, _) = self.breaks.first()?;
        let pair = self.report.pairs.get(*pair)?;
        Some((pair.from, pair.to))
    }

    /// The first broken pair, else the first pair with a warning: the pair shown on opening.
    pub fn first_note(&self) -> Option<(usize, usize)> {
        if let Some(pair) = self.first_break() {
            return Some(pair);
        }
        let (pair, _) = self.notes.first()?;
        let pair = self.report.pairs.get(*pair)?;
        Some((pair.from, pair.to))
    }
}

/// The text of a break row: where, why, and what it cost.
pub fn break_text(pair: &PairReport) -> String {
    let place = pair.break_at.as_ref().map_or_else(String::new, |b| {
        let at = b.path.clone().unwrap_or_else(|| b.at.as_str().to_string());
        if b.also_changed.is_empty() {
            format!(" at {at}")
        } else {
            format!(" at {at} (with {})", b.also_changed.join(", "))
        }
    });
    let causes: Vec<&str> = pair.causes.iter().map(|c| c.as_str()).collect();
    let missed = missed_cacheable_tokens(pair);
    format!(
        "turns {}–{}: broken{place} · {} · reusable {} of {} tokens · {missed} cacheable tokens missed",
        pair.from,
        pair.to,
        causes.join(", "),
        pair.reusable_tokens,
        pair.from_tokens
    )
}

/// The text of a kept pair's row in the "Breaks and warnings" list.
pub fn warning_text(pair: &PairReport, concerns: &[Concern]) -> String {
    let names: Vec<&str> = concerns.iter().map(|c| c.name()).collect();
    let server = pair
        .reported_cached_tokens
        .map_or_else(String::new, |c| format!(" · server cached {c}"));
    format!(
        "turns {}–{}: kept · ! {} · reusable {} of {} tokens{server}",
        pair.from,
        pair.to,
        names.join(", "),
        pair.reusable_tokens,
        pair.from_tokens
    )
}

/// Analyses session `session` from its stored parts (read into the analysis by the store's
/// one adapter, [`push_parts`]).
pub fn analyze_parts(
    session: i64,
    parts: SessionParts,
    prices: &PriceTable,
) -> Result<Analysis, String> {
    analyze_parts_with(session, parts, prices, Arc::default(), None)
}

/// [`analyze_parts`] with these cache models (and the note of where they came from).
pub fn analyze_parts_with(
    session: i64,
    parts: SessionParts,
    prices: &PriceTable,
    cache_models: Arc<CacheModels>,
    cache_models_note: Option<CacheModelsNote>,
) -> Result<Analysis, String> {
    let started = std::time::Instant::now();
    let mut prefix = Session::default();
    push_parts(&mut prefix, session, parts).map_err(|e| e.to_string())?;
    let server = prefix
        .requests()
        .iter()
        .enumerate()
        .filter_map(|(position, request)| {
            let tokens = request.meta.reported_cached_tokens?;
            Some([position as f64, tokens as f64])
        })
        .collect();
    let report = prefix.report(prices);
    let cache = crate::core::cache::report(&prefix, &cache_models, prices);
    let priced = || {
        cache
            .requests
            .iter()
            .filter_map(|r| r.cost_usd.map(|d| (r.prediction.index as f64, d)))
    };
    let cost_paid = priced().map(|(x, d)| [x, d.paid]).collect();
    let cost_lost = priced().map(|(x, d)| [x, d.lost]).collect();
    let n = prefix.len();
    let mut badges = vec![PrefixBadge::First];
    let mut cached_local = vec![[0.0, 0.0]];
    let mut uncached_local = vec![[0.0, prefix.requests()[0].tokens as f64]];
    let mut breaks = Vec::new();
    let mut notes = Vec::new();
    for (k, pair) in report.pairs.iter().enumerate() {
        let x = pair.to as f64;
        cached_local.push([x, pair.reusable_tokens as f64]);
        uncached_local.push([
            x,
            pair.to_tokens.saturating_sub(pair.reusable_tokens) as f64,
        ]);
        let concerns = Concern::of(pair);
        if pair.warmup {
            badges.push(PrefixBadge::Warmup);
        } else if let Some(why) = &pair.undetermined {
            notes.push((k, format!("request {}: not judged: {why}", pair.to)));
            badges.push(PrefixBadge::Undetermined);
        } else if pair.prefix_kept {
            if !concerns.is_empty() {
                notes.push((k, warning_text(pair, &concerns)));
            }
            badges.push(PrefixBadge::Kept(concerns));
        } else {
            let causes: Vec<&str> = pair.causes.iter().map(|c| c.as_str()).collect();
            let mut text = break_text(pair);
            if !concerns.is_empty() {
                let names: Vec<&str> = concerns.iter().map(|c| c.name()).collect();
                text.push_str(&format!(" · ! {}", names.join(", ")));
            }
            breaks.push((k, text.clone()));
            notes.push((k, text));
            badges.push(PrefixBadge::Broken(causes.join(", "), concerns));
        }
    }
    debug_assert_eq!(badges.len(), n);
    let sent_bytes = report
        .growth
        .iter()
        .map(|g| [g.index as f64, g.sent_bytes as f64])
        .collect();
    let full_history_bytes = report
        .growth
        .iter()
        .map(|g| [g.index as f64, g.full_history_bytes as f64])
        .collect();
    Ok(Analysis {
        session,
        prefix: Arc::new(prefix),
        report,
        cache,
        cost_paid,
        cost_lost,
        badges,
        breaks,
        notes,
        cached_local,
        uncached_local,
        cached_server: server,
        sent_bytes,
        full_history_bytes,
        millis: started.elapsed().as_secs_f64() * 1000.0,
        cache_models,
        cache_models_note,
    })
}
