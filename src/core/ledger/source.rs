//! Where a rendered segment comes from (its *source*): the part of the agent's context it belongs
//! to — tools, the base instructions, developer context (permissions, skills, collaboration mode),
//! user instructions (AGENTS.md), the environment context, user and assistant messages,
//! reasoning, tool calls and their outputs, compaction — read from the item's role and the
//! opening of its text, as Codex writes them. Pure.

use serde::Serialize;

/// The source of a segment. Serialized with the names of the anatomy (`tools`, `instructions`,
/// `developer`, `user_instructions`, `environment`, `user`, `assistant`, `reasoning`,
/// `tool_calls`, `tool_outputs`, `compaction`, `other`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// Tool definitions (`tools`, Lite `additional_tools`) and their framing.
    Tools,
    /// The base instructions (`instructions`, or the developer message Codex sends in their
    /// place).
    Instructions,
    /// Other developer or system messages (permissions, skills, collaboration mode, …).
    Developer,
    /// User instructions: AGENTS.md and the like.
    UserInstructions,
    /// Codex's `<environment_context>` message.
    Environment,
    /// A user message.
    User,
    /// An assistant message.
    Assistant,
    /// Reasoning (encrypted content or reasoning text).
    Reasoning,
    /// A tool call (function, custom, shell, web search, …).
    ToolCalls,
    /// A tool call's output.
    ToolOutputs,
    /// Compaction: the handoff prompt, a compaction item, a summary of compacted history.
    Compaction,
    /// Anything else: rendered settings (reasoning effort, verbosity, output schema), unknown
    /// items.
    Other,
}

impl Source {
    /// Every source, in the order the anatomy lists them.
    pub const ALL: [Source; 12] = [
        Self::Tools,
        Self::Instructions,
        Self::Developer,
        Self::UserInstructions,
        Self::Environment,
        Self::User,
        Self::Assistant,
        Self::Reasoning,
        Self::ToolCalls,
        Self::ToolOutputs,
        Self::Compaction,
        Self::Other,
    ];

    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Tools => "tools",
            Self::Instructions => "instructions",
            Self::Developer => "developer",
            Self::UserInstructions => "user_instructions",
            Self::Environment => "environment",
            Self::User => "user",
            Self::Assistant => "assistant",
            Self::Reasoning => "reasoning",
            Self::ToolCalls => "tool_calls",
            Self::ToolOutputs => "tool_outputs",
            Self::Compaction => "compaction",
            Self::Other => "other",
        }
    }

    /// A few words for a legend (`tool outputs`).
    pub fn label(self) -> &'static str {
        match self {
            Self::Tools => "tools",
            Self::Instructions => "instructions",
            Self::Developer => "developer",
            Self::UserInstructions => "user instructions",
            Self::Environment => "environment",
            Self::User => "user",
            Self::Assistant => "assistant",
            Self::Reasoning => "reasoning",
            Self::ToolCalls => "tool calls",
            Self::ToolOutputs => "tool outputs",
            Self::Compaction => "compaction",
            Self::Other => "other",
        }
    }
}

/// The opening of the summary Codex puts in place of compacted history (its `summary_prefix`
/// template).
pub const SUMMARY_OPENING: &str = "Another language model started to solve this problem";

/// The source of one text block of a message with `role`.
pub fn of_block(role: &str, text: &str) -> Source {
    let opening = text.trim_start();
    match role {
        "assistant" => Source::Assistant,
        "developer" | "system" => Source::Developer,
        "user" => {
            if opening.starts_with("# AGENTS.md instructions")
                || opening.starts_with("<user_instructions>")
                || opening.starts_with("<INSTRUCTIONS>")
            {
                Source::UserInstructions
            } else if opening.starts_with("<environment_context>") {
                Source::Environment
            } else if opening.starts_with(SUMMARY_OPENING)
                || opening.starts_with(checkpoint_opening())
            {
                Source::Compaction
            } else {
                Source::User
            }
        }
        "tool" => Source::ToolOutputs,
        _ => Source::Other,
    }
}

/// The first sentence of Codex's compaction handoff prompt.
fn checkpoint_opening() -> &'static str {
    let prompt = crate::core::compile::compaction::CHECKPOINT_PROMPT;
    prompt.split_once('.').map_or(prompt, |(first, _)| first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_told_apart_by_role_and_opening() {
        let cases = [
            ("assistant", "Done.", Source::Assistant),
            (
                "developer",
                "<permissions instructions>\n…",
                Source::Developer,
            ),
            ("system", "x", Source::Developer),
            (
                "user",
                "# AGENTS.md instructions for /w\n",
                Source::UserInstructions,
            ),
            (
                "user",
                "<user_instructions>\nbe brief",
                Source::UserInstructions,
            ),
            (
                "user",
                "<environment_context>\n  <cwd>/w</cwd>",
                Source::Environment,
            ),
            (
                "user",
                "Another language model started to solve this problem and …",
                Source::Compaction,
            ),
            (
                "user",
                "You are performing a CONTEXT CHECKPOINT COMPACTION. Create …",
                Source::Compaction,
            ),
            ("user", "list the files here", Source::User),
            ("tool", "42", Source::ToolOutputs),
            ("critic", "x", Source::Other),
        ];
        let got: Vec<Source> = cases.iter().map(|(r, t, _)| of_block(r, t)).collect();
        let want: Vec<Source> = cases.iter().map(|(_, _, s)| *s).collect();
        assert_eq!(got, want);
    }
}
