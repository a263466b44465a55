//! A stored session's cache-prefix analysis for the Sessions view, computed on a worker from
//! the store's content-addressed parts: each distinct item is parsed and interned once
//! (`Session::intern_item_owned`), each request pushed as its fields plus item ids — no body is
//! rebuilt or re-serialized. Everything the view draws per frame (badges, chart series, the
//! break list's text) is computed here once.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use crate::core::json::JsonMap;
use crate::core::prefix::cost::cacheable_tokens;
use crate::core::prefix::{PairReport, PriceTable, RequestMeta, Session, SessionReport, Warning};
use crate::store::summary::{SessionParts, usage_tokens};

/// Something about a pair that a bare "kept" would hide: a warning of the analysis
/// (`prompt_cache_key_changed`, `idle_gap`, `client_metadata_changed`), or the server reporting
/// far fewer `cached_tokens` than the local verdict says were reusable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Concern {
    /// A warning of the prefix analysis.
    Warning(Warning),
    /// The local verdict is kept, but the server served well under half of what was cacheable.
    ServerMissed {
        /// The server's `cached_tokens` for the later request.
        reported: u64,
        /// What the local estimate says the server could have served (`cacheable_tokens`).
        cacheable: u64,
    },
}

impl Concern {
    /// The concerns of `pair`: its warnings, then the server-missed rule ([`server_missed`]).
    pub fn of(pair: &PairReport) -> Vec<Self> {
        let mut out: Vec<Self> = pair.warnings.iter().copied().map(Self::Warning).collect();
        if let Some(missed) = server_missed(pair) {
            out.push(missed);
        }
        out
    }

    /// A few words for the badge (`cache key changed`).
    pub fn short(self) -> &'static str {
        match self {
            Self::Warning(Warning::PromptCacheKeyChanged) => "cache key changed",
            Self::Warning(Warning::IdleGap) => "idle gap",
            Self::Warning(Warning::ClientMetadataChanged) => "client metadata changed",
            Self::ServerMissed { .. } => "server missed the cache",
        }
    }

    /// The snake_case name (`prompt_cache_key_changed`, `server_missed_cache`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Warning(w) => w.as_str(),
            Self::ServerMissed { .. } => "server_missed_cache",
        }
    }

    /// What it means.
    pub fn explanation(self) -> String {
        match self {
            Self::Warning(w) => w.explanation().to_string(),
            Self::ServerMissed {
                reported,
                cacheable,
            } => format!(
                "The prompt starts with the previous one, yet the server reported {reported} cached tokens where about {cacheable} were cacheable: the cache was lost (another server, evicted, or a cache key or retention the analysis cannot see)."
            ),
        }
    }

    /// What Codex does about it, where it has a fix.
    pub fn fix(self) -> Option<&'static str> {
        match self {
            Self::Warning(w) => w.fix(),
            Self::ServerMissed { .. } => Some(
                "Keep one prompt_cache_key per conversation and keep turns within the cache retention (prompt_cache_retention: \"24h\" where supported).",
            ),
        }
    }
}

/// The server-missed rule: a pair whose prefix the local analysis kept, whose later request
/// reported `cached_tokens`, where the locally reusable prefix is cacheable (≥ 1,024 tokens,
/// [`cacheable_tokens`]) and the server served less than half of that. The local estimate
/// counts fewer tokens than the server's own rendering, so a server figure under half of it is
/// a lost cache, not a counting difference.
pub fn server_missed(pair: &PairReport) -> Option<Concern> {
    let reported = pair.reported_cached_tokens?;
    let cacheable = cacheable_tokens(pair.reusable_tokens);
    (pair.prefix_kept && cacheable > 0 && reported.saturating_mul(2) < cacheable).then_some(
        Concern::ServerMissed {
            reported,
            cacheable,
        },
    )
}

/// A request's prefix badge in the browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PrefixBadge {
    /// The first request (nothing to compare with).
    First,
    /// Its prompt starts with the previous one's; what a bare "kept" would hide.
    Kept(Vec<Concern>),
    /// The prefix broke before it: the causes, by name, and the pair's concerns.
    Broken(String, Vec<Concern>),
}

impl PrefixBadge {
    /// The badge text (`kept`, `kept · ! cache key changed`, `broken: tools_changed`).
    pub fn label(&self) -> String {
        let mut text = match self {
            Self::First => return "first".to_string(),
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
            Self::First => &[],
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
    let missed =
        cacheable_tokens(pair.from_tokens).saturating_sub(cacheable_tokens(pair.reusable_tokens));
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

fn parse(json: &str, what: &str) -> Result<Value, String> {
    serde_json::from_str(json).map_err(|e| format!("{what}: stored JSON does not parse: {e}"))
}

/// Analyses session `session` from its stored parts.
pub fn analyze_parts(
    session: i64,
    parts: SessionParts,
    prices: &PriceTable,
) -> Result<Analysis, String> {
    let started = std::time::Instant::now();
    if parts.requests.is_empty() {
        return Err(format!("session {session} has no requests"));
    }
    let mut prefix = Session::default();
    let mut ids = HashMap::with_capacity(parts.items.len());
    for (id, json) in parts.items {
        let value = parse(&json, &format!("item {id}"))?;
        ids.insert(id, prefix.intern_item_owned(value));
    }
    let mut heads: HashMap<i64, JsonMap> = HashMap::new();
    for (id, json) in parts.fields {
        match parse(&json, &format!("fields {id}"))? {
            Value::Object(map) => {
                heads.insert(id, map);
            }
            _ => return Err(format!("fields {id}: not a JSON object")),
        }
    }
    let mut server = Vec::new();
    for (position, request) in parts.requests.iter().enumerate() {
        let where_ = || format!("session {session}, request {position}");
        let reported = request
            .usage
            .as_ref()
            .and_then(|usage| usage_tokens(usage).1);
        if let Some(tokens) = reported {
            server.push([position as f64, tokens as f64]);
        }
        let sent_at_ms = request.started_us.map(|us| us / 1000);
        let meta = RequestMeta {
            reported_cached_tokens: reported,
            sent_at_ms,
            finished_at_ms: sent_at_ms
                .zip(request.total_us)
                .map(|(ms, total)| ms + total / 1000),
        };
        let pushed = match (&request.verbatim, request.fields_id) {
            (Some(bytes), _) => {
                let body: Value = serde_json::from_slice(bytes)
                    .map_err(|e| format!("{}: the stored body is not JSON: {e}", where_()))?;
                prefix.push_body(&body, meta)
            }
            (None, Some(fields)) => {
                let head = heads
                    .get(&fields)
                    .ok_or_else(|| format!("{}: missing fields {fields}", where_()))?;
                let input = request
                    .items
                    .iter()
                    .map(|id| {
                        ids.get(id)
                            .copied()
                            .ok_or_else(|| format!("{}: missing item {id}", where_()))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                prefix.push_parts(head, &input, meta)
            }
            (None, None) => return Err(format!("{}: the stored body is not JSON", where_())),
        };
        pushed.map_err(|e| format!("{}: {e}", where_()))?;
    }
    let report = prefix.report(prices);
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
        if pair.prefix_kept {
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
        badges,
        breaks,
        notes,
        cached_local,
        uncached_local,
        cached_server: server,
        sent_bytes,
        full_history_bytes,
        millis: started.elapsed().as_secs_f64() * 1000.0,
    })
}
