//! The simulator: walks a session's requests in order and keeps what the server would hold, per
//! route — `prompt_cache_key`, service tier, model and the segments covering the first ~256
//! tokens — and predicts, per request, the input tokens read from the cache, written to it and
//! left uncached, with the reason in words. The two cache models are rows of data
//! ([`super::models`]) behind one small interface, [`Rule`]:
//!
//! - `prefix` routes hold whole prompts. A request reads the longest *token* prefix it shares
//!   with a held prompt (an edit inside a segment keeps the tokens before it), counted from the
//!   floor in steps. Writes are free: none predicted.
//! - `breakpoints` routes hold breakpoints (boundary, chained hash, tokens), the latest
//!   `considered` of them. A request reads the longest held breakpoint its own prefix matches
//!   exactly, at or before its own latest breakpoint — never a shorter unmarked prefix — and
//!   writes its breakpoints that are not held (from the floor on).
//!
//! Held entries expire when the request's send time is past their last use plus their TTL;
//! without recorded times nothing expires. A request continuing a response the recording does
//! not have is not simulated and leaves the state as it was.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;

use serde::Serialize;

use super::compare::Partials;
use super::models::{CacheKind, CacheModel, CacheModels};
use super::prices::cacheable_steps;
use super::render::{Kind, Layout, Rendered, SegmentId, chain};
use super::whatif::Plan;
use crate::core::format::grouped;
use crate::core::prefix::{Continuation, Session};

/// Tokens of the prompt start that route a request (WIRE_SPEC §19).
pub const ROUTING_TOKENS: u64 = 256;

/// A user message's last segment (the implicit breakpoint's place).
pub const USER: u8 = 1;
/// A tool output.
pub const TOOL: u8 = 2;
/// Carries an explicit `prompt_cache_breakpoint`.
pub const EXPLICIT: u8 = 4;

/// Keys of pieces a what-if adds (never a segment id).
pub const ADDED_KEY: u64 = 1 << 40;

/// One piece of a prompt as the simulator sees it: a segment (or an added one), its tokens and
/// class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Piece {
    /// Segment id, or a key ≥ [`ADDED_KEY`] for a piece a what-if adds.
    pub key: u64,
    /// Its tokens.
    pub tokens: u64,
    /// [`USER`], [`TOOL`], [`EXPLICIT`] bits.
    pub class: u8,
    /// Its part index in the request's layout (`None` for an added piece).
    pub part: Option<u32>,
}

/// The class of a segment: [`USER`] for the last segment of a user message, [`TOOL`] for a tool
/// output (where the implicit breakpoint goes).
pub fn class_of(s: &super::render::Segment) -> u8 {
    let user = s.kind == Kind::Block
        && s.label
            .as_deref()
            .is_some_and(|r| r.trim_end_matches('*') == "user")
        && s.trail > 0;
    let tool = s.kind == Kind::Output;
    (u8::from(user) * USER) | (u8::from(tool) * TOOL)
}

/// Running counts, chained hashes and keys at each boundary of a prompt: the layout's own when
/// the pieces are its parts (no edit moves a part of it), else computed from the pieces.
#[derive(Debug, Clone)]
pub struct Offsets<'a> {
    /// `cum[k]`: tokens of the first `k` pieces.
    pub cum: Cow<'a, [u64]>,
    /// `hash[k]`: chained hash of the first `k` pieces.
    pub hash: Cow<'a, [u64]>,
    /// Keys of the pieces.
    keys: Keys<'a>,
}

/// The keys of a prompt's pieces: its layout's segment ids, or keys of its own.
#[derive(Debug, Clone)]
enum Keys<'a> {
    Parts(&'a [SegmentId]),
    Owned(Vec<u64>),
}

impl<'a> Offsets<'a> {
    /// The layout's own counts, hashes and parts (its pieces are its parts, same keys and
    /// tokens: `render::fill` computes what [`Offsets::of_pieces`] would).
    fn of_layout(layout: &'a Layout) -> Self {
        Self {
            cum: Cow::Borrowed(&layout.cum),
            hash: Cow::Borrowed(&layout.hash),
            keys: Keys::Parts(&layout.parts),
        }
    }

    fn of_pieces(pieces: &[Piece]) -> Self {
        let mut cum = Vec::with_capacity(pieces.len() + 1);
        let mut hashes = Vec::with_capacity(pieces.len() + 1);
        let (mut tokens, mut hash) = (0u64, 0x9e37_79b9_7f4a_7c15_u64);
        cum.push(tokens);
        hashes.push(hash);
        for p in pieces {
            tokens += p.tokens;
            hash = chain(hash, p.key);
            cum.push(tokens);
            hashes.push(hash);
        }
        Self {
            cum: Cow::Owned(cum),
            hash: Cow::Owned(hashes),
            keys: Keys::Owned(pieces.iter().map(|p| p.key).collect()),
        }
    }

    /// The key of piece `k`.
    fn key(&self, k: usize) -> Option<u64> {
        match &self.keys {
            Keys::Parts(parts) => parts.get(k).map(|id| u64::from(id.0)),
            Keys::Owned(keys) => keys.get(k).copied(),
        }
    }

    fn len(&self) -> usize {
        match &self.keys {
            Keys::Parts(parts) => parts.len(),
            Keys::Owned(keys) => keys.len(),
        }
    }

    /// Total tokens.
    pub fn total(&self) -> u64 {
        self.cum.last().copied().unwrap_or(0)
    }

    fn common(&self, other: &Offsets<'_>) -> usize {
        let n = self.len().min(other.len());
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
}

/// The session prepared for simulation: the rendered view, each segment's class and each
/// request's cache model.
pub struct Prepared<'a> {
    /// The session.
    pub session: &'a Session,
    /// Its rendered view.
    pub rendered: &'a Rendered,
    classes: Vec<u8>,
    /// Cache model per request.
    pub models: Vec<CacheModel>,
}

impl<'a> Prepared<'a> {
    /// Classifies the segments once and looks each request's model up.
    pub fn new(session: &'a Session, rendered: &'a Rendered, cache_models: &CacheModels) -> Self {
        let segments = &rendered.segments;
        let classes = (0..segments.len())
            .map(|i| class_of(segments.get(super::render::SegmentId(i as u32))))
            .collect();
        Self {
            session,
            rendered,
            classes,
            models: session
                .requests()
                .iter()
                .map(|r| cache_models.lookup(&r.shape.model))
                .collect(),
        }
    }

    /// Whether `plan` changes request `i`'s pieces: swaps or adds one, or marks a breakpoint.
    pub fn plan_touches(&self, i: usize, plan: &Plan) -> bool {
        let Some(layout) = self.rendered.layouts.get(i) else {
            return false;
        };
        !plan.swapped(i, layout).is_empty()
            || plan.insert_at(i, layout).is_some()
            || !plan.breakpoint_parts(layout).is_empty()
    }

    /// The pieces of request `i`'s prompt under `plan`, into `out`; whether `plan` swaps or
    /// adds a piece (otherwise the pieces are the layout's parts, classes aside).
    pub fn pieces(&self, i: usize, plan: &Plan, out: &mut Vec<Piece>) -> bool {
        out.clear();
        let Some(layout) = self.rendered.layouts.get(i) else {
            return false;
        };
        let segments = &self.rendered.segments;
        // Parts an edit puts a breakpoint after, found once (not once per part).
        let after = plan.breakpoint_parts(layout);
        let piece = |k: usize| {
            let id = layout.parts[k];
            let explicit = !layout.explicit.is_empty() && layout.explicit.contains(&(k as u32));
            Piece {
                key: u64::from(id.0),
                tokens: segments.get(id).tokens,
                class: self.classes[id.0 as usize] | (u8::from(explicit) * EXPLICIT),
                part: Some(k as u32),
            }
        };
        let swapped = plan.swapped(i, layout);
        let insert = plan.insert_at(i, layout);
        out.reserve(layout.len() + 1);
        let mut k = 0;
        while k < layout.len() {
            if let Some((range, with)) = swapped.iter().find(|(r, _)| r.start == k) {
                out.extend(with.iter().map(|id| Piece {
                    key: u64::from(id.0),
                    tokens: segments.get(*id).tokens,
                    class: self.classes[id.0 as usize],
                    part: None,
                }));
                k = range.end.max(k + 1);
                if range.is_empty() {
                    out.push(piece(k - 1));
                }
                continue;
            }
            if let Some((at, added)) = insert
                && at == k
            {
                out.push(added);
            }
            let mut p = piece(k);
            if after.contains(&k) {
                p.class |= EXPLICIT;
            }
            out.push(p);
            k += 1;
        }
        if let Some((at, added)) = insert
            && at >= layout.len()
        {
            out.push(added);
        }
        !swapped.is_empty() || insert.is_some()
    }
}

/// Input tokens of one request as the cache rules predict them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Tokens {
    /// Read from the cache.
    pub read_tokens: u64,
    /// Written to the cache (billed at the write rate on breakpoint models).
    pub write_tokens: u64,
    /// Neither.
    pub uncached_tokens: u64,
}

/// What the simulator predicts for one request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Prediction {
    /// Position in the session.
    pub index: usize,
    /// Its cache model.
    pub cache_model: CacheKind,
    /// Tokens of its whole prompt.
    pub input_tokens: u64,
    /// Read / written / uncached.
    pub predicted: Tokens,
    /// The request whose entry it read.
    pub read_from: Option<usize>,
    /// Breakpoints it wrote (breakpoint models).
    pub wrote_breakpoints: usize,
    /// Tokens up to its latest breakpoint (breakpoint models): what a write reaches.
    pub latest_breakpoint_tokens: u64,
    /// Why, in words.
    pub reason: String,
    /// Not simulated (a continuation of an unrecorded response).
    pub undetermined: bool,
    /// An entry it could have read had expired.
    pub expired: bool,
    /// The first request on its route.
    pub first_on_route: bool,
    /// The gap before it, in seconds, when times are known (from the previous request's finish).
    pub idle_gap_secs: Option<u64>,
    /// The TTL it was held under, seconds.
    pub ttl_secs: u64,
    /// The route it went to (a hash: equal routes share a cache).
    pub route: u64,
    /// The floor of its model.
    pub floor_tokens: u64,
    /// Explicit breakpoints it carries (or a what-if gave it).
    pub explicit_breakpoints: usize,
}

#[derive(Debug, Clone)]
struct HeldMark {
    n: usize,
    hash: u64,
    tokens: u64,
    last_used: Option<i64>,
    ttl_ms: i64,
    request: usize,
}

#[derive(Debug, Clone)]
struct HeldPrompt<'a> {
    offsets: Rc<Offsets<'a>>,
    last_used: Option<i64>,
    ttl_ms: i64,
    request: usize,
}

/// What one route holds.
#[derive(Debug, Default)]
struct Route<'a> {
    marks: VecDeque<HeldMark>,
    prompts: Vec<HeldPrompt<'a>>,
    /// An entry dropped as expired for this request: (request that wrote it, gap ms).
    expired: Option<(usize, i64)>,
    seen: bool,
}

fn alive(last_used: Option<i64>, ttl_ms: i64, now: Option<i64>) -> bool {
    match (last_used, now) {
        (Some(used), Some(now)) => now - used <= ttl_ms,
        _ => true,
    }
}

impl Route<'_> {
    fn expire(&mut self, now: Option<i64>) {
        let mut expired = None;
        let mut note = |request: usize, used: Option<i64>| {
            if let (Some(used), Some(now)) = (used, now) {
                expired = Some((request, now - used));
            }
        };
        self.marks.retain(|m| {
            let keep = alive(m.last_used, m.ttl_ms, now);
            if !keep {
                note(m.request, m.last_used);
            }
            keep
        });
        self.prompts.retain(|p| {
            let keep = alive(p.last_used, p.ttl_ms, now);
            if !keep {
                note(p.request, p.last_used);
            }
            keep
        });
        self.expired = expired;
    }
}

/// One request as a rule sees it.
struct Step<'s, 'a> {
    index: usize,
    /// The request's pieces when a what-if moved or marked any (else its layout's parts are
    /// its pieces: `layout` and `classes`).
    pieces: Option<&'s [Piece]>,
    layout: &'s Layout,
    classes: &'s [u8],
    offsets: &'s Rc<Offsets<'a>>,
    finished: Option<i64>,
    ttl_ms: i64,
    explicit_mode: bool,
}

/// What a rule decided for one request.
struct Outcome {
    read: u64,
    written: u64,
    wrote: usize,
    from: Option<usize>,
    /// The boundary of the breakpoint read (breakpoint models).
    mark: Option<usize>,
    latest: u64,
    words: String,
}

/// The one interface the simulator calls: how a cache model reads and writes a request on its
/// route.
trait Rule {
    fn apply<'a>(
        &self,
        route: &mut Route<'a>,
        step: &Step<'_, 'a>,
        partial: &mut dyn FnMut(u64, u64) -> u64,
    ) -> Outcome;
}

impl Rule for CacheModel {
    fn apply<'a>(
        &self,
        route: &mut Route<'a>,
        step: &Step<'_, 'a>,
        partial: &mut dyn FnMut(u64, u64) -> u64,
    ) -> Outcome {
        match *self {
            CacheModel::Prefix {
                floor_tokens,
                step_tokens,
                ..
            } => prefix_rule(route, step, partial, floor_tokens, step_tokens),
            CacheModel::Breakpoints {
                floor_tokens,
                max_writes,
                considered,
                ..
            } => breakpoint_rule(route, step, floor_tokens, max_writes, considered),
        }
    }
}

fn prefix_rule<'a>(
    route: &mut Route<'a>,
    step: &Step<'_, 'a>,
    partial: &mut dyn FnMut(u64, u64) -> u64,
    floor: u64,
    step_tokens: u64,
) -> Outcome {
    let offsets = step.offsets;
    let mut best: Option<(u64, usize)> = None;
    for (h, held) in route.prompts.iter().enumerate() {
        let k = offsets.common(&held.offsets);
        let mut tokens = offsets.cum[k];
        if let (Some(x), Some(y)) = (held.offsets.key(k), offsets.key(k))
            && x < ADDED_KEY
            && y < ADDED_KEY
        {
            tokens += partial(x, y);
        }
        if best.is_none_or(|(t, b)| (tokens, held.request) > (t, route.prompts[b].request)) {
            best = Some((tokens, h));
        }
    }
    let (read, from) = match best {
        Some((tokens, h)) => {
            let read = cacheable_steps(tokens, floor, step_tokens);
            if read > 0 {
                let held = &mut route.prompts[h];
                held.last_used = step.finished;
                held.ttl_ms = held.ttl_ms.max(step.ttl_ms);
                (read, Some(held.request))
            } else {
                (0, None)
            }
        }
        None => (0, None),
    };
    let words = match from {
        Some(j) => format!(
            "read {} tokens of request {j}'s prompt (counted from {} in {}-token steps); writes are free",
            grouped(read),
            grouped(floor),
            step_tokens
        ),
        None => String::new(),
    };
    route
        .prompts
        .retain(|p| offsets.common(&p.offsets) < p.offsets.len());
    route.prompts.push(HeldPrompt {
        offsets: Rc::clone(offsets),
        last_used: step.finished,
        ttl_ms: step.ttl_ms,
        request: step.index,
    });
    if route.prompts.len() > 80 {
        route.prompts.remove(0);
    }
    Outcome {
        read,
        written: 0,
        wrote: 0,
        from,
        mark: None,
        latest: 0,
        words,
    }
}

fn breakpoint_rule(
    route: &mut Route<'_>,
    step: &Step<'_, '_>,
    floor: u64,
    max_writes: usize,
    considered: usize,
) -> Outcome {
    let offsets = step.offsets;
    let marks = match step.pieces {
        Some(pieces) => marks(pieces, step.explicit_mode, max_writes),
        None => layout_marks(step.layout, step.classes, step.explicit_mode, max_writes),
    };
    let latest = marks.last().copied().unwrap_or(0);
    let skip = route.marks.len().saturating_sub(considered);
    let best = route
        .marks
        .iter_mut()
        .skip(skip)
        .filter(|m| m.n <= latest && offsets.hash.get(m.n) == Some(&m.hash))
        .max_by_key(|m| (m.tokens, m.request));
    let (read, from, mark) = match best {
        Some(held) => {
            held.last_used = step.finished;
            held.ttl_ms = held.ttl_ms.max(step.ttl_ms);
            (held.tokens, Some(held.request), Some(held.n))
        }
        None => (0, None, None),
    };
    let mut wrote = 0;
    let mut furthest = 0;
    for &at in &marks {
        let tokens = offsets.cum[at];
        if tokens < floor {
            continue;
        }
        let hash = offsets.hash[at];
        if let Some(held) = route.marks.iter_mut().find(|m| m.n == at && m.hash == hash) {
            held.last_used = step.finished;
            held.ttl_ms = held.ttl_ms.max(step.ttl_ms);
            continue;
        }
        route.marks.push_back(HeldMark {
            n: at,
            hash,
            tokens,
            last_used: step.finished,
            ttl_ms: step.ttl_ms,
            request: step.index,
        });
        wrote += 1;
        furthest = furthest.max(tokens);
    }
    while route.marks.len() > considered {
        route.marks.pop_front();
    }
    let written = furthest.saturating_sub(read);
    let mut words = if step.explicit_mode && marks.is_empty() {
        "explicit mode (prompt_cache_options.mode) and no breakpoint: nothing is read or written"
            .to_string()
    } else {
        match from {
            Some(j) => format!(
                "read {} tokens up to the breakpoint of request {j}",
                grouped(read)
            ),
            None => String::new(),
        }
    };
    if !(step.explicit_mode && marks.is_empty()) {
        let wrote_words = match wrote {
            0 => "wrote nothing".to_string(),
            1 => format!("wrote 1 breakpoint, {} tokens", grouped(written)),
            n => format!("wrote {n} breakpoints, {} tokens", grouped(written)),
        };
        if words.is_empty() {
            words = wrote_words;
        } else {
            words = format!("{words}; {wrote_words}");
        }
    }
    Outcome {
        read,
        written,
        wrote,
        from,
        mark,
        latest: offsets.cum.get(latest).copied().unwrap_or(0),
        words,
    }
}

/// The breakpoint boundaries of a prompt, in order, at most `max_writes` (the latest ones; the
/// implicit one — after the latest user or tool message, unless explicit mode — always kept).
pub fn marks(pieces: &[Piece], explicit_mode: bool, max_writes: usize) -> Vec<usize> {
    let implicit = if explicit_mode {
        None
    } else {
        pieces
            .iter()
            .rposition(|p| p.class & (USER | TOOL) != 0)
            .map(|k| k + 1)
    };
    let explicit = pieces
        .iter()
        .enumerate()
        .filter(|(_, p)| p.class & EXPLICIT != 0)
        .map(|(k, _)| k + 1);
    keep_latest(implicit, explicit, max_writes)
}

/// [`marks`] of request `layout`'s own parts (no what-if moved or marked anything): the same
/// boundaries, read off the layout and the segments' classes without building its pieces.
fn layout_marks(
    layout: &Layout,
    classes: &[u8],
    explicit_mode: bool,
    max_writes: usize,
) -> Vec<usize> {
    let implicit = if explicit_mode {
        None
    } else {
        layout
            .parts
            .iter()
            .rposition(|id| classes[id.0 as usize] & (USER | TOOL) != 0)
            .map(|k| k + 1)
    };
    let explicit = explicit_parts(layout).into_iter().map(|k| k + 1);
    keep_latest(implicit, explicit, max_writes)
}

/// The parts of `layout` that carry an explicit breakpoint, in order, each once.
fn explicit_parts(layout: &Layout) -> Vec<usize> {
    let mut parts: Vec<usize> = layout
        .explicit
        .iter()
        .map(|&k| k as usize)
        .filter(|&k| k < layout.len())
        .collect();
    parts.sort_unstable();
    parts.dedup();
    parts
}

/// The implicit boundary and the latest explicit ones, at most `max_writes` in all, in order.
fn keep_latest(
    implicit: Option<usize>,
    explicit: impl Iterator<Item = usize>,
    max_writes: usize,
) -> Vec<usize> {
    let mut explicit: Vec<usize> = explicit.filter(|&at| Some(at) != implicit).collect();
    let room = max_writes.saturating_sub(usize::from(implicit.is_some()));
    if explicit.len() > room {
        explicit.drain(..explicit.len() - room);
    }
    let mut all: Vec<usize> = explicit.into_iter().chain(implicit).collect();
    all.sort_unstable();
    all
}

/// Simulates every request of the session under `plan` ([`Plan::none`] for the session as
/// recorded).
pub fn simulate(prepared: &Prepared<'_>, plan: &Plan, partials: &mut Partials) -> Vec<Prediction> {
    let session = prepared.session;
    let rendered = prepared.rendered;
    let tokenizer = session.pool().tokenizer();
    let requests = session.requests();
    let mut routes: HashMap<u64, Route> = HashMap::new();
    let mut last_finish: Option<i64> = None;
    let mut pieces = Vec::new();
    let mut heads: HashMap<(u64, u64), u64> = HashMap::new();
    let mut out = Vec::with_capacity(requests.len());
    for (i, request) in requests.iter().enumerate() {
        let model = prepared.models[i];
        let shift = plan.shift_ms(i);
        let sent = request.meta.sent_at_ms.map(|t| t - shift);
        let finished = request.meta.finished_at_ms.map(|t| t - shift).or(sent);
        let idle_gap_secs = match (last_finish, sent) {
            (Some(from), Some(to)) => Some(u64::try_from((to - from + 500) / 1000).unwrap_or(0)),
            _ => None,
        };
        let ttl_secs = plan
            .ttl_secs
            .or(request.shape.cache_ttl_secs)
            .unwrap_or_else(|| model.default_ttl_secs());
        let ttl_ms = i64::try_from(ttl_secs.saturating_mul(1000)).unwrap_or(i64::MAX);
        let total = rendered.layouts[i].total();
        let base = Prediction {
            index: i,
            cache_model: model.kind(),
            input_tokens: total,
            predicted: Tokens {
                uncached_tokens: total,
                ..Tokens::default()
            },
            read_from: None,
            wrote_breakpoints: 0,
            latest_breakpoint_tokens: 0,
            reason: String::new(),
            undetermined: false,
            expired: false,
            first_on_route: false,
            idle_gap_secs,
            ttl_secs,
            route: 0,
            floor_tokens: model.floor_tokens(),
            explicit_breakpoints: 0,
        };
        if let Continuation::Unrecorded { .. } = request.continuation {
            out.push(Prediction {
                undetermined: true,
                reason: "not simulated: it continues a response the recording does not have, \
                         so its whole prompt is unknown"
                    .to_string(),
                ..base
            });
            continue;
        }
        if finished.is_some() {
            last_finish = finished;
        }
        // The pieces are built only when a what-if changes this request's (else they are its
        // layout's parts: the offsets and breakpoints are read off the layout).
        let layout = &rendered.layouts[i];
        let planned = prepared.plan_touches(i, plan);
        let moved = planned && prepared.pieces(i, plan, &mut pieces);
        let offsets = Rc::new(match moved {
            false => Offsets::of_layout(layout),
            true => Offsets::of_pieces(&pieces),
        });
        let total = offsets.total();
        let route_key = route_hash(
            request.shape.prompt_cache_key.as_deref(),
            request.shape.service_tier.as_deref(),
            &request.shape.model,
            head_hash(rendered, &offsets, &mut heads),
        );
        let route = routes.entry(route_key).or_default();
        route.expire(sent);
        let first_on_route = !route.seen;
        route.seen = true;
        let step = Step {
            index: i,
            pieces: planned.then_some(pieces.as_slice()),
            layout,
            classes: &prepared.classes,
            offsets: &offsets,
            finished,
            ttl_ms,
            explicit_mode: request.shape.cache_mode_explicit,
        };
        let mut partial = |x: u64, y: u64| {
            partials.common(
                rendered,
                tokenizer,
                super::render::SegmentId(x as u32),
                super::render::SegmentId(y as u32),
            )
        };
        let expired = route.expired;
        let mut outcome = model.apply(route, &step, &mut partial);
        // After an idle gap the conversation's own entries are gone, but the instructions and
        // tools other conversations send stay warm: on 34 real Codex sessions every request
        // after a gap of over 30 minutes read exactly those, less one block (7 of 7).
        if let (
            0,
            Some(_),
            CacheModel::Prefix {
                floor_tokens,
                step_tokens,
                ..
            },
        ) = (outcome.read, expired, model)
        {
            let layout = &rendered.layouts[i];
            let header = layout
                .cum
                .get(layout.sections.instructions)
                .copied()
                .unwrap_or(0);
            let read =
                cacheable_steps(header, floor_tokens, step_tokens).saturating_sub(step_tokens);
            if read >= floor_tokens {
                outcome.read = read;
                outcome.words = format!(
                    "read {} tokens: only the instructions and tools, which other conversations \
                     keep warm (its own entries expired)",
                    grouped(read)
                );
            }
        }
        if let (Some(j), Some(n)) = (outcome.from, outcome.mark) {
            // Name the breakpoint's place: the end of the part before it, in request j.
            let at = super::render::pointer(&rendered.layouts[j], &rendered.segments, n - 1);
            let of = format!("the breakpoint of request {j}");
            outcome.words = outcome
                .words
                .replacen(&of, &format!("{of} (the end of {at})"), 1);
        }
        let reason = if outcome.read > 0
            || outcome.from.is_some()
            || outcome.words.starts_with("explicit mode")
        {
            outcome.words.clone()
        } else {
            let miss = match (expired, first_on_route) {
                (Some((j, gap)), _) => format!(
                    "read nothing: request {j}'s cache expired (idle {} past its retention)",
                    gap_words(gap)
                ),
                (None, true) => "read nothing: the first request on its route (model, \
                                 prompt_cache_key, service tier and first ~256 tokens)"
                    .to_string(),
                (None, false) => "read nothing: nothing held on its route matches its prefix \
                                  from the floor on"
                    .to_string(),
            };
            if outcome.words.is_empty() {
                miss
            } else {
                format!("{miss}; {}", outcome.words)
            }
        };
        let explicit_breakpoints = match planned {
            true => pieces.iter().filter(|p| p.class & EXPLICIT != 0).count(),
            false => explicit_parts(layout).len(),
        };
        out.push(Prediction {
            input_tokens: total,
            predicted: Tokens {
                read_tokens: outcome.read,
                write_tokens: outcome.written,
                uncached_tokens: total.saturating_sub(outcome.read + outcome.written),
            },
            read_from: outcome.from,
            wrote_breakpoints: outcome.wrote,
            latest_breakpoint_tokens: outcome.latest,
            reason,
            expired: expired.is_some(),
            first_on_route,
            route: route_key,
            explicit_breakpoints,
            ..base
        });
    }
    out
}

fn gap_words(ms: i64) -> String {
    let secs = ms / 1000;
    if secs >= 120 {
        format!("{} min", secs / 60)
    } else {
        format!("{secs} s")
    }
}

/// A hash of the first [`ROUTING_TOKENS`] tokens of a prompt: the pieces wholly inside them,
/// then the start of the piece they end in — its text up to about as many bytes as tokens are
/// left (four a token), or the whole piece when it is opaque. `memo` keeps the start of a
/// piece per (key, tokens left).
fn head_hash(
    rendered: &Rendered,
    offsets: &Offsets<'_>,
    memo: &mut HashMap<(u64, u64), u64>,
) -> u64 {
    let whole = offsets
        .cum
        .partition_point(|&c| c <= ROUTING_TOKENS)
        .saturating_sub(1);
    let hash = offsets.hash[whole];
    let Some(key) = offsets.key(whole) else {
        return hash;
    };
    let left = ROUTING_TOKENS - offsets.cum[whole];
    let start = *memo.entry((key, left)).or_insert_with(|| {
        if key >= ADDED_KEY {
            return key;
        }
        let segment = rendered.segments.get(super::render::SegmentId(key as u32));
        match segment.text() {
            Some(text) => {
                let left_bytes = (left.saturating_sub(segment.lead) as usize).saturating_mul(4);
                let mut end = left_bytes.min(text.len());
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                use std::hash::{Hash, Hasher};
                let mut h = std::collections::hash_map::DefaultHasher::new();
                segment.lead.hash(&mut h);
                text[..end].hash(&mut h);
                h.finish()
            }
            None => key,
        }
    });
    chain(hash, start)
}

fn route_hash(key: Option<&str>, tier: Option<&str>, model: &str, head: u64) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut h);
    tier.hash(&mut h);
    model.hash(&mut h);
    head.hash(&mut h);
    h.finish()
}
