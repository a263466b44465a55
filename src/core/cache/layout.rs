//! The layout step: a request's whole prompt (its elements in prompt order, from the session's
//! [`ElementPool`]) as token offsets — the running token count and a chained hash at every
//! element boundary — and where its breakpoints fall.
//!
//! An element is a *piece*: its key (the pool id, or a synthetic key for an element a what-if
//! adds), its tokens, and its class (a user message, a tool output, an item carrying an explicit
//! `prompt_cache_breakpoint`). The chained hash at boundary `k` covers the first `k` pieces, so
//! two prompts agree on their first `k` pieces exactly when their hashes at `k` agree (up to a
//! 64-bit collision): matching a breakpoint is one comparison, and the longest common prefix of
//! two prompts is a binary search.
//!
//! Breakpoints (breakpoint models): the implicit one at the end of the latest user or tool
//! message (unless `prompt_cache_options.mode` is `explicit`), and one at the end of every input
//! item that carries an explicit breakpoint on a content block (the end of the item, not of the
//! block: the analysis counts tokens per item). At most `max_writes` are kept — the latest ones,
//! the implicit one always among them.

use serde_json::Value;

use crate::core::prefix::{ElementPool, Session};

/// A user message (`role: user`).
pub const USER: u8 = 1;
/// A tool output (`*_call_output`, `role: tool`).
pub const TOOL: u8 = 2;
/// Carries an explicit `prompt_cache_breakpoint` on a content block.
pub const EXPLICIT: u8 = 4;

/// The class bits of an input item.
pub fn classify(value: &Value) -> u8 {
    let ty = value.get("type").and_then(Value::as_str);
    let role = value.get("role").and_then(Value::as_str);
    let mut class = 0;
    if role == Some("user") && ty.is_none_or(|t| t == "message") {
        class |= USER;
    }
    if role == Some("tool") || ty.is_some_and(|t| t.ends_with("_call_output")) {
        class |= TOOL;
    }
    let explicit = value
        .get("content")
        .and_then(Value::as_array)
        .is_some_and(|blocks| {
            blocks
                .iter()
                .any(|b| b.get("prompt_cache_breakpoint").is_some())
        });
    if explicit {
        class |= EXPLICIT;
    }
    class
}

/// The class bits of every element of a pool, by id.
pub fn classes(pool: &ElementPool) -> Vec<u8> {
    (0..pool.len())
        .map(|i| {
            let id = crate::core::prefix::ElementId(u32::try_from(i).unwrap_or(u32::MAX));
            classify(pool.value(id))
        })
        .collect()
}

/// Where a piece sits in its request's body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Header part `k` of the request's shape (its pointer names it).
    Header(u32),
    /// Body input item `k` (`/input/k`).
    Input(u32),
    /// An element a what-if added (the moved instructions).
    Added,
}

/// One element of a prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Piece {
    /// Pool id, or a synthetic key (≥ 2³²) for an added element.
    pub key: u64,
    /// Its tokens.
    pub tokens: u64,
    /// Class bits ([`USER`], [`TOOL`], [`EXPLICIT`]).
    pub class: u8,
    /// Where it is in the body.
    pub origin: Origin,
}

/// Token offsets and chained hashes at each boundary of a prompt: `cum[k]` and `hash[k]`
/// describe its first `k` pieces (`cum[0] = 0`).
#[derive(Debug, Clone, Default)]
pub struct Offsets {
    /// Running token count.
    pub cum: Vec<u64>,
    /// Chained hash.
    pub hash: Vec<u64>,
}

impl Offsets {
    /// Fills `self` from `pieces`.
    pub fn fill(&mut self, pieces: &[Piece]) {
        self.cum.clear();
        self.hash.clear();
        self.cum.reserve(pieces.len() + 1);
        self.hash.reserve(pieces.len() + 1);
        let (mut tokens, mut hash) = (0u64, SEED);
        self.cum.push(tokens);
        self.hash.push(hash);
        for piece in pieces {
            tokens += piece.tokens;
            hash = chain(hash, piece.key);
            self.cum.push(tokens);
            self.hash.push(hash);
        }
    }

    /// Number of pieces.
    pub fn len(&self) -> usize {
        self.cum.len().saturating_sub(1)
    }

    /// Whether there is no piece.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Total tokens.
    pub fn total(&self) -> u64 {
        self.cum.last().copied().unwrap_or(0)
    }

    /// Number of leading pieces `self` and `other` share.
    pub fn common(&self, other: &Offsets) -> usize {
        let n = self.len().min(other.len());
        // hash[k] equal ⇒ hash[j] equal for every j < k: binary search the last equal boundary.
        let (mut lo, mut hi) = (0usize, n);
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if self.hash[mid] == other.hash[mid] {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        lo
    }

    /// Whether the first `n` pieces hash to `hash`.
    pub fn matches(&self, n: usize, hash: u64) -> bool {
        self.hash.get(n) == Some(&hash)
    }

    /// The first boundary whose running count reaches `tokens` (the whole prompt if none).
    pub fn boundary_at(&self, tokens: u64) -> usize {
        self.cum.partition_point(|&c| c < tokens).min(self.len())
    }
}

const SEED: u64 = 0x9e37_79b9_7f4a_7c15;

/// One step of the chained hash.
fn chain(hash: u64, key: u64) -> u64 {
    let mut x = hash ^ key.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x = (x ^ (x >> 33)).wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 29)
}

/// A breakpoint of one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    /// Boundary: the breakpoint covers the first `at` pieces.
    pub at: usize,
    /// Whether it is explicit (else the implicit one).
    pub explicit: bool,
}

/// The breakpoints of a prompt, in order, at most `max_writes` (the latest ones; the implicit
/// one is always kept). `extra_after` adds explicit breakpoints after these body input items
/// (a what-if).
pub fn marks(
    pieces: &[Piece],
    explicit_mode: bool,
    max_writes: usize,
    extra_after: &[u32],
) -> Vec<Mark> {
    let implicit = if explicit_mode {
        None
    } else {
        pieces
            .iter()
            .rposition(|p| p.class & (USER | TOOL) != 0)
            .map(|k| k + 1)
    };
    let mut explicit: Vec<usize> = pieces
        .iter()
        .enumerate()
        .filter(|(_, p)| {
            p.class & EXPLICIT != 0
                || matches!(p.origin, Origin::Input(k) if extra_after.contains(&k))
        })
        .map(|(k, _)| k + 1)
        .filter(|&at| Some(at) != implicit)
        .collect();
    let room = max_writes.saturating_sub(usize::from(implicit.is_some()));
    if explicit.len() > room {
        explicit.drain(..explicit.len() - room);
    }
    let mut all: Vec<Mark> = explicit
        .into_iter()
        .map(|at| Mark { at, explicit: true })
        .chain(implicit.map(|at| Mark {
            at,
            explicit: false,
        }))
        .collect();
    all.sort_by_key(|m| m.at);
    all
}

/// The JSON pointer of a piece of request `index` of `session`.
pub fn pointer(session: &Session, index: usize, origin: Origin) -> String {
    match origin {
        Origin::Header(k) => session
            .requests()
            .get(index)
            .and_then(|r| r.shape.header.get(k as usize))
            .map_or_else(String::new, |p| p.pointer.to_string()),
        Origin::Input(k) => format!("/input/{k}"),
        Origin::Added => "the added developer message".to_string(),
    }
}

/// What a piece is, in words ("the user message", "the tool output", "the item").
pub fn noun(class: u8, origin: Origin) -> &'static str {
    match origin {
        Origin::Header(_) => "the element",
        Origin::Added => "the added developer message",
        Origin::Input(_) if class & USER != 0 => "the user message",
        Origin::Input(_) if class & TOOL != 0 => "the tool output",
        Origin::Input(_) => "the item",
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn piece(key: u64, tokens: u64, class: u8, k: u32) -> Piece {
        Piece {
            key,
            tokens,
            class,
            origin: Origin::Input(k),
        }
    }

    #[test]
    fn classes_of_items() {
        let user = json!({"type": "message", "role": "user", "content": []});
        let easy = json!({"role": "user", "content": "hi"});
        let tool = json!({"type": "function_call_output", "call_id": "c", "output": "x"});
        let marked = json!({"type": "message", "role": "developer", "content": [
            {"type": "input_text", "text": "x", "prompt_cache_breakpoint": {"mode": "explicit"}}]});
        let assistant = json!({"type": "message", "role": "assistant", "content": []});
        assert_eq!(
            [&user, &easy, &tool, &marked, &assistant].map(classify),
            [USER, USER, TOOL, EXPLICIT, 0]
        );
    }

    #[test]
    fn offsets_common_prefix_and_marks() {
        let a = [piece(1, 10, 0, 0), piece(2, 20, USER, 1), piece(3, 5, 0, 2)];
        let b = [
            piece(1, 10, 0, 0),
            piece(2, 20, USER, 1),
            piece(4, 7, TOOL, 2),
        ];
        let (mut x, mut y) = (Offsets::default(), Offsets::default());
        x.fill(&a);
        y.fill(&b);
        assert_eq!((x.cum.clone(), x.total()), (vec![0, 10, 30, 35], 35));
        assert_eq!((x.common(&y), y.common(&x), x.common(&x)), (2, 2, 3));
        assert!(y.matches(2, x.hash[2]) && !y.matches(3, x.hash[3]));
        assert_eq!(x.boundary_at(256), 3);
        assert_eq!(x.boundary_at(11), 2);
        assert_eq!(
            marks(&b, false, 4, &[0]),
            vec![
                Mark {
                    at: 1,
                    explicit: true
                },
                Mark {
                    at: 3,
                    explicit: false
                }
            ]
        );
        assert_eq!(marks(&b, true, 4, &[]), vec![]);
        // At most 4: the latest explicit ones and the implicit one.
        let many: Vec<Piece> = (0..6).map(|k| piece(k, 1, EXPLICIT, k as u32)).collect();
        let at: Vec<usize> = marks(&many, true, 4, &[]).iter().map(|m| m.at).collect();
        assert_eq!(at, vec![3, 4, 5, 6]);
    }
}
