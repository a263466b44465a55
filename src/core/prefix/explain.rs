//! What each cause and warning means, in a sentence a user can act on, and — where Codex itself
//! has a way to avoid the miss — the fix.

use super::compare::{Cause, Warning};

impl Cause {
    /// A short human explanation.
    pub fn explanation(self) -> &'static str {
        match self {
            Self::ModelChanged => {
                "Another model: each model has its own cache, so nothing of the earlier prompt is reused."
            }
            Self::ReasoningChanged => {
                "The reasoning settings are rendered before tools and input: changing them re-reads the whole prompt."
            }
            Self::TextChanged => {
                "Verbosity, output format or another rendered setting changed: it comes before tools and input."
            }
            Self::ToolsChanged => {
                "The tool list is sent before the instructions and input, byte for byte: a tool added, removed or edited, or a schema whose keys arrive in another order, changes everything after it."
            }
            Self::ToolsReordered => {
                "The same tools in another order: the rendering differs from the first moved tool on."
            }
            Self::InstructionsChanged => {
                "The base instructions were edited: every item after them is re-read."
            }
            Self::DialectChanged => {
                "Standard and Responses Lite place the tools and instructions differently (top-level fields vs the first input items)."
            }
            Self::InputItemEdited => {
                "An earlier input item differs: the history was edited instead of appended to."
            }
            Self::InputItemsRemoved => {
                "Earlier input items were dropped (pruning or truncation): everything after the first one is re-read."
            }
            Self::InputRewritten => {
                "The history was replaced (compaction or a new conversation): nothing after the break is reused."
            }
            Self::CompactionRequest => {
                "A compaction request (tools: [], a handoff-summary prompt) is a side request: it does not extend the conversation's prefix, and the history after it starts anew. One miss per compaction is expected."
            }
            Self::DerivedIdsChanged => {
                "Only ids derived from the thread, session or turn changed; the text is the same. A new thread mints new ids, so its prompt differs from that item on and cannot reuse the old thread's cache."
            }
        }
    }

    /// What Codex itself does to avoid this miss, where it has a fix.
    pub fn fix(self) -> Option<&'static str> {
        match self {
            Self::ModelChanged => Some(
                "Keep one model per thread; Codex compacts before a switch so the new model starts from a short history.",
            ),
            Self::ToolsChanged => Some(
                "Send the tool list identical every turn: the same schemas, keys in the same order (MCP servers may reorder them), as Codex does by building its tool list once per session.",
            ),
            Self::ToolsReordered => {
                Some("Keep a stable tool order (Codex sorts MCP tools by their qualified name).")
            }
            Self::InstructionsChanged => Some(
                "Append the new sandbox policy (or other changed context) as a new developer message instead of editing the first one, as Codex does.",
            ),
            Self::InputItemEdited => Some(
                "Keep the history append-only: send changes as new items, as Codex does for sandbox, approval and environment changes.",
            ),
            Self::InputItemsRemoved => Some(
                "Drop old items only when compacting, once, rather than pruning a little every turn.",
            ),
            Self::DerivedIdsChanged => Some(
                "Continue the same thread (codex resume) to reuse its cache; a new thread starts its own.",
            ),
            Self::ReasoningChanged
            | Self::TextChanged
            | Self::DialectChanged
            | Self::InputRewritten
            | Self::CompactionRequest => None,
        }
    }
}

impl Warning {
    /// A short human explanation.
    pub fn explanation(self) -> &'static str {
        match self {
            Self::PromptCacheKeyChanged => {
                "Another prompt_cache_key routes the request to other servers, where nothing is cached, even with the same prefix."
            }
            Self::ClientMetadataChanged => {
                "client_metadata differs; it is not part of the prompt and costs no cache hits."
            }
            Self::IdleGap => {
                "The pause before this request is longer than the cache retention: the prefix is likely gone even though nothing changed."
            }
        }
    }

    /// What Codex itself does to avoid this, where it has a fix.
    pub fn fix(self) -> Option<&'static str> {
        match self {
            Self::PromptCacheKeyChanged => {
                Some("Keep one prompt_cache_key per conversation (Codex uses the thread id).")
            }
            Self::ClientMetadataChanged => None,
            Self::IdleGap => Some(
                "Ask for longer retention (prompt_cache_retention: \"24h\") where the model supports it.",
            ),
        }
    }
}
