//! Why a request read less than it could, in the server's vocabulary (WIRE_SPEC §19.2: the
//! reasons of `prompt_cache_diagnostics`), so that a local verdict can be set beside the
//! server's, plus the few things only a recording can say (an idle gap past the cache's
//! retention, routing overflow, a shared prefix no breakpoint covers, a part the recording does
//! not have, a server that read less than the rules allow). Each has an explanation and, where
//! there is one, the fix.

use serde::Serialize;

/// A reason, serialized in snake_case. The first nine are the server's own names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// Another model slug: another cache.
    ModelChanged,
    /// Another `prompt_cache_key`: routed to another cache.
    PromptCacheKeyChanged,
    /// Another `service_tier`: routed to another cache.
    ServiceTierChanged,
    /// `reasoning.effort` differs (rendered first).
    ReasoningEffortChanged,
    /// `text.verbosity` differs.
    VerbosityChanged,
    /// `text.format` (the output schema) differs.
    TextFormatChanged,
    /// A tool added, removed, edited or moved, or a schema's properties in another order.
    ToolsChanged,
    /// The history was compacted: a compaction request, or the history it replaced.
    ContextCompacted,
    /// The instructions or an earlier input item differ (edited, removed, inserted).
    InputChanged,
    /// A new user turn: the server no longer renders the previous turns' reasoning (models
    /// before GPT-5.6), so the prompt parts at the first of it. Expected: no loss.
    ReasoningDropped,
    /// The cache expired: the gap before the request is longer than its retention.
    IdleGap,
    /// More than ~15 requests a minute on one prefix and key: the server may overflow.
    RoutingOverflow,
    /// Breakpoint models: the shared prefix runs past the last breakpoint it matches, and the
    /// server does not fall back to an unmarked prefix.
    NoBreakpoint,
    /// The server read less than the rules allow, with no cause the recording shows (evicted,
    /// routed elsewhere).
    ServerShortfall,
}

impl Cause {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ModelChanged => "model_changed",
            Self::PromptCacheKeyChanged => "prompt_cache_key_changed",
            Self::ServiceTierChanged => "service_tier_changed",
            Self::ReasoningEffortChanged => "reasoning_effort_changed",
            Self::VerbosityChanged => "verbosity_changed",
            Self::TextFormatChanged => "text_format_changed",
            Self::ToolsChanged => "tools_changed",
            Self::ContextCompacted => "context_compacted",
            Self::InputChanged => "input_changed",
            Self::ReasoningDropped => "reasoning_dropped",
            Self::IdleGap => "idle_gap",
            Self::RoutingOverflow => "routing_overflow",
            Self::NoBreakpoint => "no_breakpoint",
            Self::ServerShortfall => "server_shortfall",
        }
    }

    /// Whether the server's `prompt_cache_diagnostics` uses this name.
    pub fn is_servers(self) -> bool {
        !matches!(
            self,
            Self::IdleGap
                | Self::RoutingOverflow
                | Self::NoBreakpoint
                | Self::ServerShortfall
                | Self::ReasoningDropped
        )
    }

    /// Whether it sends the request to another cache (nothing of the earlier one is readable).
    pub fn is_routing(self) -> bool {
        matches!(
            self,
            Self::ModelChanged | Self::PromptCacheKeyChanged | Self::ServiceTierChanged
        )
    }

    /// A few words (`model switch`, `idle gap`).
    pub fn short(self) -> &'static str {
        match self {
            Self::ModelChanged => "model switch",
            Self::PromptCacheKeyChanged => "cache key change",
            Self::ServiceTierChanged => "service tier change",
            Self::ReasoningEffortChanged => "effort change",
            Self::VerbosityChanged => "verbosity change",
            Self::TextFormatChanged => "output schema change",
            Self::ToolsChanged => "tools change",
            Self::ContextCompacted => "compaction",
            Self::InputChanged => "history edit",
            Self::ReasoningDropped => "earlier reasoning dropped",
            Self::IdleGap => "idle gap",
            Self::RoutingOverflow => "routing overflow",
            Self::NoBreakpoint => "no breakpoint",
            Self::ServerShortfall => "server shortfall",
        }
    }

    /// What it means, in a sentence.
    pub fn explanation(self) -> &'static str {
        match self {
            Self::ModelChanged => {
                "Another model: each model has its own cache, so nothing of the earlier prompt is read."
            }
            Self::PromptCacheKeyChanged => {
                "Another prompt_cache_key routes the request to another cache, where nothing of this conversation is held."
            }
            Self::ServiceTierChanged => {
                "Another service tier is served by another cache, where nothing of this conversation is held."
            }
            Self::ReasoningEffortChanged => {
                "The reasoning effort is rendered first, before the tools: changing it re-reads the whole prompt."
            }
            Self::VerbosityChanged => {
                "Verbosity is rendered before the tools and instructions: changing it re-reads everything after it."
            }
            Self::TextFormatChanged => {
                "The output schema is rendered before the tools and instructions: changing it re-reads everything after it."
            }
            Self::ToolsChanged => {
                "The tools are rendered before the instructions and history: a tool added, removed, edited or moved, or a schema whose properties come in another order, re-reads everything after it."
            }
            Self::ContextCompacted => {
                "The history was compacted: the compaction request and the rewritten history are expected costs of their own, not a cache loss."
            }
            Self::InputChanged => {
                "The instructions or an earlier item differ: the history was edited instead of appended to, and everything after the change is re-read."
            }
            Self::ReasoningDropped => {
                "A new user turn: this model's server renders only the current turn's reasoning, so the previous turns' reasoning items drop out of the prompt and everything after the first of them is re-read. Expected, not a loss (measured on OpenAI's own counts of real Codex sessions)."
            }
            Self::IdleGap => {
                "The pause before this request is longer than the cache's retention: the prefix expired although nothing changed."
            }
            Self::RoutingOverflow => {
                "More than about 15 requests a minute on one prefix and key: the server may send some to other machines, which miss."
            }
            Self::NoBreakpoint => {
                "This model reads the cache at breakpoints only: the shared prefix runs past the last breakpoint it matches, and there is no fallback to an unmarked prefix."
            }
            Self::ServerShortfall => {
                "The server read less than the cache rules allow and the recording shows no reason: evicted, or routed to another machine."
            }
        }
    }

    /// What to do about it, where there is something to do.
    pub fn fix(self) -> Option<&'static str> {
        match self {
            Self::ModelChanged => Some(
                "Keep one model per conversation; Codex compacts before a switch so the new model starts from a short history.",
            ),
            Self::PromptCacheKeyChanged => {
                Some("Send one prompt_cache_key per conversation (Codex uses the thread id).")
            }
            Self::ServiceTierChanged => Some("Keep one service tier per conversation."),
            Self::ReasoningEffortChanged => Some(
                "Keep one reasoning effort per conversation, or change it only where a miss is acceptable.",
            ),
            Self::VerbosityChanged | Self::TextFormatChanged => {
                Some("Keep the text settings fixed for the whole conversation.")
            }
            Self::ToolsChanged => Some(
                "Send the tool list identical every turn: the same tools in the same order, each schema's properties in the same order (serialize them once).",
            ),
            Self::ContextCompacted | Self::ReasoningDropped => None,
            Self::InputChanged => Some(
                "Keep the history append-only: send changes as new items, as Codex does for sandbox, approval and environment changes.",
            ),
            Self::IdleGap => Some(
                "Ask for a longer retention: prompt_cache_retention \"24h\" on prefix models, prompt_cache_options.ttl \"12h\" on breakpoint models.",
            ),
            Self::RoutingOverflow => Some(
                "Spread the requests over more prompt_cache_key values (one per conversation), or slow them down.",
            ),
            Self::NoBreakpoint => Some(
                "Put an explicit prompt_cache_breakpoint on the last stable item, or keep changing content after the latest user message.",
            ),
            Self::ServerShortfall => Some(
                "Keep one prompt_cache_key per conversation and the turns within the cache's retention; compare with the server's prompt_cache_diagnostics.",
            ),
        }
    }

    /// The cause the server reports under this name (`reason` of `prompt_cache_diagnostics`).
    pub fn from_server(name: &str) -> Option<Self> {
        [
            Self::ModelChanged,
            Self::PromptCacheKeyChanged,
            Self::ServiceTierChanged,
            Self::ReasoningEffortChanged,
            Self::VerbosityChanged,
            Self::TextFormatChanged,
            Self::ToolsChanged,
            Self::ContextCompacted,
            Self::InputChanged,
        ]
        .into_iter()
        .find(|c| c.as_str() == name)
    }
}
