//! What a pair's bare verdict would hide, computed once for every reader (the Sessions view and
//! `promptwire diff`): the analysis's warnings, and the server reporting far fewer
//! `cached_tokens` than the local verdict says were reusable ("the server missed the cache");
//! and for a break, the cacheable tokens it cost.

use super::cost::cacheable_tokens;
use super::{PairReport, Warning};

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

    /// A few words for a badge (`cache key changed`).
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

/// Cacheable tokens of the earlier request that the later one could not reuse: what a break
/// cost (0 for a kept pair whose reusable prefix is all of the earlier request).
pub fn missed_cacheable_tokens(pair: &PairReport) -> u64 {
    cacheable_tokens(pair.from_tokens).saturating_sub(cacheable_tokens(pair.reusable_tokens))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(reusable_tokens: u64, reported: Option<u64>) -> PairReport {
        PairReport {
            from: 0,
            to: 1,
            prefix_kept: true,
            break_at: None,
            causes: Vec::new(),
            warnings: Vec::new(),
            reusable_bytes: reusable_tokens * 4,
            reusable_tokens,
            from_tokens: reusable_tokens,
            to_tokens: reusable_tokens + 10,
            idle_gap_secs: None,
            reported_cached_tokens: reported,
            warmup: false,
            undetermined: None,
        }
    }

    #[test]
    fn a_kept_pair_served_under_half_of_its_cacheable_prefix_is_a_miss() {
        let cacheable = cacheable_tokens(4000);
        assert_eq!(
            server_missed(&kept(4000, Some(0))),
            Some(Concern::ServerMissed {
                reported: 0,
                cacheable
            })
        );
        assert_eq!(server_missed(&kept(4000, Some(cacheable))), None);
        assert_eq!(server_missed(&kept(4000, None)), None);
        // Under 1,024 tokens nothing is cacheable: nothing to miss.
        assert_eq!(server_missed(&kept(500, Some(0))), None);
    }
}
