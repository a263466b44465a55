//! What-if edits: a change to the session the simulator re-runs under, as the [`Plan`] it reads
//! (`KIND:ARGS` on the command line):
//!
//! - `breakpoint-after:K` — an explicit breakpoint after `/input/K` in every request that has
//!   it (the fix Codex cannot make today);
//! - `ttl:12h` — every request asks for this TTL (`prompt_cache_options.ttl` /
//!   `prompt_cache_retention`);
//! - `undo-tools:K` — request K's change of the tool list (or of its key order) undone: from K
//!   on, a request whose tools are request K's gets request K−1's;
//! - `move-instructions:K` — request K's changed instructions moved into an appended developer
//!   message (Codex's own fix): from K on, a request whose instructions are request K's gets
//!   request K−1's, and a developer message of the new instructions' size after request K's
//!   input items;
//! - `close-gap:K` — the idle gap before request K closed: request K and every later one are
//!   moved earlier by that gap.

use std::ops::Range;
use std::str::FromStr;

use super::render::{Layout, Rendered, SegmentId};
use super::sim::{ADDED_KEY, Piece};
use crate::core::prefix::Session;
use crate::core::prefix::shape::parse_duration_secs;

/// One edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edit {
    /// An explicit breakpoint after body input item K.
    BreakpointAfter(u32),
    /// Every request's TTL, seconds.
    Ttl(u64),
    /// Undo request K's tool-list change.
    UndoTools(usize),
    /// Move request K's changed instructions into an appended developer message.
    MoveInstructions(usize),
    /// Close the idle gap before request K.
    CloseGap(usize),
}

/// An edit that does not parse or does not apply to the session.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--what-if {edit}: {message}")]
pub struct WhatIfError {
    /// The edit as written.
    pub edit: String,
    /// What is wrong.
    pub message: String,
}

const KINDS: &str =
    "breakpoint-after:K, ttl:DURATION (30m, 12h), undo-tools:K, move-instructions:K, close-gap:K";

impl FromStr for Edit {
    type Err = WhatIfError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let fail = |message: String| WhatIfError {
            edit: text.to_string(),
            message,
        };
        let (kind, arg) = text
            .split_once(':')
            .ok_or_else(|| fail(format!("expected KIND:ARGS, one of {KINDS}")))?;
        let index = |arg: &str| {
            arg.trim()
                .parse::<usize>()
                .map_err(|_| fail(format!("`{arg}` is not a request or item index")))
        };
        match kind.trim() {
            "breakpoint-after" => Ok(Self::BreakpointAfter(
                u32::try_from(index(arg)?).map_err(|_| fail("item index too large".into()))?,
            )),
            "ttl" => parse_duration_secs(arg)
                .map(Self::Ttl)
                .ok_or_else(|| fail(format!("`{arg}` is not a duration such as 30m or 12h"))),
            "undo-tools" => Ok(Self::UndoTools(index(arg)?)),
            "move-instructions" => Ok(Self::MoveInstructions(index(arg)?)),
            "close-gap" => Ok(Self::CloseGap(index(arg)?)),
            other => Err(fail(format!("unknown kind `{other}`; one of {KINDS}"))),
        }
    }
}

impl std::fmt::Display for Edit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::BreakpointAfter(k) => write!(f, "breakpoint-after:{k}"),
            Self::Ttl(secs) if secs % 3600 == 0 => write!(f, "ttl:{}h", secs / 3600),
            Self::Ttl(secs) if secs % 60 == 0 => write!(f, "ttl:{}m", secs / 60),
            Self::Ttl(secs) => write!(f, "ttl:{secs}s"),
            Self::UndoTools(k) => write!(f, "undo-tools:{k}"),
            Self::MoveInstructions(k) => write!(f, "move-instructions:{k}"),
            Self::CloseGap(k) => write!(f, "close-gap:{k}"),
        }
    }
}

/// A section of the prompt a what-if can swap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Section {
    Tools,
    Instructions,
}

impl Section {
    fn range(self, layout: &Layout) -> Range<usize> {
        let s = layout.sections;
        match self {
            Self::Tools => s.settings..s.tools,
            Self::Instructions => s.tools..s.instructions,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Tools => "tools",
            Self::Instructions => "instructions",
        }
    }
}

/// A section swapped from request `from` on.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Swap {
    from: usize,
    section: Section,
    old: Vec<SegmentId>,
    new: Vec<SegmentId>,
}

/// The resolved edits, as the simulator reads them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    swaps: Vec<Swap>,
    /// (from request, items before it, tokens, key) of the added message.
    insert: Option<(usize, usize, u64, u64)>,
    after: Vec<u32>,
    /// TTL every request asks for, when set.
    pub ttl_secs: Option<u64>,
    shift: Option<(usize, i64)>,
}

impl Plan {
    /// No edit: the session as recorded.
    pub fn none() -> Self {
        Self::default()
    }

    /// Whether it changes nothing.
    pub fn is_none(&self) -> bool {
        *self == Self::default()
    }

    /// Resolves `edits` against `session` and its rendered view.
    pub fn new(
        session: &Session,
        rendered: &Rendered,
        edits: &[Edit],
    ) -> Result<Self, WhatIfError> {
        let requests = session.requests();
        let mut plan = Self::default();
        for edit in edits {
            let fail = |message: String| WhatIfError {
                edit: edit.to_string(),
                message,
            };
            let pair = |k: usize| {
                if k == 0 || k >= requests.len() {
                    return Err(fail(format!(
                        "request {k} has no earlier request in this session of {} (1 to {})",
                        requests.len(),
                        requests.len().saturating_sub(1)
                    )));
                }
                Ok((&rendered.layouts[k - 1], &rendered.layouts[k]))
            };
            match *edit {
                Edit::BreakpointAfter(k) => plan.after.push(k),
                Edit::Ttl(secs) => plan.ttl_secs = Some(secs),
                Edit::UndoTools(k) | Edit::MoveInstructions(k) => {
                    let section = match edit {
                        Edit::UndoTools(_) => Section::Tools,
                        _ => Section::Instructions,
                    };
                    let (before, this) = pair(k)?;
                    let old = this.parts[section.range(this)].to_vec();
                    let new = before.parts[section.range(before)].to_vec();
                    if old == new {
                        return Err(fail(format!(
                            "request {k}'s {} are request {}'s: nothing to undo",
                            section.name(),
                            k - 1
                        )));
                    }
                    if section == Section::Instructions {
                        let tokens = old.iter().map(|id| rendered.segments.get(*id).tokens).sum();
                        plan.insert = Some((k, this.items(), tokens, ADDED_KEY | k as u64));
                    }
                    plan.swaps.push(Swap {
                        from: k,
                        section,
                        old,
                        new,
                    });
                }
                Edit::CloseGap(k) => {
                    pair(k)?;
                    let before = &requests[k - 1].meta;
                    let idle_from = before.finished_at_ms.or(before.sent_at_ms);
                    let gap = match (idle_from, requests[k].meta.sent_at_ms) {
                        (Some(from), Some(to)) => (to - from).max(0),
                        _ => {
                            return Err(fail(format!(
                                "requests {} and {k} have no recorded times",
                                k - 1
                            )));
                        }
                    };
                    plan.shift = Some((k, gap));
                }
            }
        }
        Ok(plan)
    }

    /// The sections of request `i` a swap replaces: (their parts, the parts put instead).
    pub(super) fn swapped(&self, i: usize, layout: &Layout) -> Vec<(Range<usize>, Vec<SegmentId>)> {
        self.swaps
            .iter()
            .filter(|s| i >= s.from && layout.parts[s.section.range(layout)] == *s.old)
            .map(|s| (s.section.range(layout), s.new.clone()))
            .collect()
    }

    /// The message a `move-instructions` edit adds to request `i`: (the part it goes before,
    /// piece).
    pub(super) fn insert_at(&self, i: usize, layout: &Layout) -> Option<(usize, Piece)> {
        let (from, items, tokens, key) = self.insert?;
        if i < from {
            return None;
        }
        let at = match layout.item_parts(layout.first_item() + items) {
            Some(range) => range.start,
            None => layout.len(),
        };
        Some((
            at,
            Piece {
                key,
                tokens,
                class: 0,
                part: None,
            },
        ))
    }

    /// The parts of `layout` an edit puts an explicit breakpoint after (the last part of each
    /// body input item it names).
    pub(super) fn breakpoint_parts(&self, layout: &Layout) -> Vec<usize> {
        self.after
            .iter()
            .filter_map(|&item| layout.item_parts(item as usize))
            .filter(|r| !r.is_empty())
            .map(|r| r.end - 1)
            .collect()
    }

    /// How much earlier request `i` is sent, ms.
    pub(super) fn shift_ms(&self, i: usize) -> i64 {
        match self.shift {
            Some((from, gap)) if i >= from => gap,
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_parse_and_print() {
        for text in [
            "breakpoint-after:5",
            "ttl:12h",
            "ttl:30m",
            "undo-tools:3",
            "move-instructions:2",
            "close-gap:7",
        ] {
            let edit: Edit = text.parse().expect(text);
            assert_eq!(edit.to_string(), text);
        }
        assert_eq!("ttl:12h".parse::<Edit>(), Ok(Edit::Ttl(43_200)));
        assert_eq!(
            "grow:1".parse::<Edit>().map_err(|e| e.to_string()),
            Err(format!(
                "--what-if grow:1: unknown kind `grow`; one of {KINDS}"
            ))
        );
        assert!("ttl:forever".parse::<Edit>().is_err());
        assert!("undo-tools".parse::<Edit>().is_err());
    }
}
