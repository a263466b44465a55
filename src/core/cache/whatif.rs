//! What-if edits: a change to the session the simulator re-runs under, as the [`Plan`] the
//! layout step reads (`KIND:ARGS` on the command line):
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

use std::str::FromStr;

use super::layout::{Origin, Piece};
use crate::core::prefix::shape::{RequestShape, parse_duration_secs};
use crate::core::prefix::{BreakAt, ElementId, Session};

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

/// A header segment swapped from request `from` on.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Swap {
    from: usize,
    at: BreakAt,
    old: Vec<ElementId>,
    new: Vec<ElementId>,
}

/// The resolved edits, as the layout step and the simulator read them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    swaps: Vec<Swap>,
    /// (from request, position in the shape's input, tokens, key) of the added message.
    insert: Option<(usize, usize, u64, u64)>,
    after: Vec<u32>,
    /// TTL every request asks for, when set.
    pub ttl_secs: Option<u64>,
    shift: Option<(usize, i64)>,
}

fn segment(shape: &RequestShape, at: BreakAt) -> Vec<ElementId> {
    shape.parts_at(at).map(|p| p.id).collect()
}

impl Plan {
    /// No edit: the session as recorded.
    pub fn none() -> Self {
        Self::default()
    }

    /// Resolves `edits` against `session`.
    pub fn new(session: &Session, edits: &[Edit]) -> Result<Self, WhatIfError> {
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
                Ok((&requests[k - 1].shape, &requests[k].shape))
            };
            match *edit {
                Edit::BreakpointAfter(k) => plan.after.push(k),
                Edit::Ttl(secs) => plan.ttl_secs = Some(secs),
                Edit::UndoTools(k) | Edit::MoveInstructions(k) => {
                    let at = match edit {
                        Edit::UndoTools(_) => BreakAt::Tools,
                        _ => BreakAt::Instructions,
                    };
                    let (before, this) = pair(k)?;
                    let (old, new) = (segment(this, at), segment(before, at));
                    if old == new {
                        return Err(fail(format!(
                            "request {k}'s {} are request {}'s: nothing to undo",
                            at.as_str(),
                            k - 1
                        )));
                    }
                    if at == BreakAt::Instructions {
                        let tokens = old.iter().map(|id| session.pool().tokens(*id)).sum();
                        plan.insert = Some((k, this.input.len(), tokens, (1 << 40) | k as u64));
                    }
                    plan.swaps.push(Swap {
                        from: k,
                        at,
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

    /// Request `i`'s header as (header index, id), when a swap changes it.
    pub(super) fn replace_header(
        &self,
        i: usize,
        shape: &RequestShape,
        ids: &[ElementId],
    ) -> Option<Vec<(u32, ElementId)>> {
        let active: Vec<&Swap> = self
            .swaps
            .iter()
            .filter(|s| i >= s.from && segment(shape, s.at) == s.old)
            .collect();
        if active.is_empty() {
            return None;
        }
        let mut out = Vec::with_capacity(ids.len());
        let mut done: Vec<BreakAt> = Vec::new();
        for (h, part) in shape.header.iter().enumerate() {
            let h = u32::try_from(h).unwrap_or(u32::MAX);
            match active.iter().find(|s| s.at == part.at) {
                Some(swap) if !done.contains(&swap.at) => {
                    done.push(swap.at);
                    out.extend(swap.new.iter().map(|id| (h, *id)));
                }
                Some(_) => {}
                None => out.push((h, part.id)),
            }
        }
        Some(out)
    }

    /// The message a `move-instructions` edit adds to request `i`: (position in its input,
    /// piece).
    pub(super) fn insert_at(&self, i: usize) -> Option<(usize, Piece)> {
        let (from, at, tokens, key) = self.insert?;
        (i >= from).then_some((
            at,
            Piece {
                key,
                tokens,
                class: 0,
                origin: Origin::Added,
            },
        ))
    }

    /// Body input items after which the edits add explicit breakpoints.
    pub(super) fn breakpoints_after(&self, _i: usize) -> &[u32] {
        &self.after
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
