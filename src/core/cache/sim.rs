//! The simulator: walks a session's requests in order and keeps what the server would hold, per
//! route — `prompt_cache_key`, the model and the elements covering the first ~256 tokens — and
//! predicts, per request, the input tokens read from the cache, written to it and left uncached,
//! with the reason in words.
//!
//! - `prefix` routes hold whole prompts (a prompt that a later one on the route extends is
//!   dropped: the later one covers it, and is newer). A request reads the longest prefix it
//!   shares with a held prompt, counted from the floor in steps. Writes are free: none predicted.
//! - `breakpoints` routes hold breakpoints (boundary, chained hash, tokens), the latest
//!   `considered` of them. A request reads the longest held breakpoint its own prefix matches
//!   exactly, at or before its own latest breakpoint — never a shorter unmarked prefix — and
//!   writes its breakpoints that are not held (from the floor on): the written tokens run from
//!   what it read to its latest new breakpoint.
//!
//! Held entries expire when the request's send time is past their last use (the finish of the
//! request that wrote or read them) plus their TTL; without recorded times nothing expires. A
//! request continuing a response the recording does not have is not simulated and leaves the
//! state as it was.

use std::collections::{HashMap, VecDeque};
use std::rc::Rc;

use serde::Serialize;

use super::layout::{self, Mark, Offsets, Origin, Piece};
use super::whatif::Plan;
use crate::core::format::grouped;
use crate::core::models::cache::{CacheKind, CacheModel, CacheModels};
use crate::core::prefix::cost::cacheable_steps;
use crate::core::prefix::{Continuation, Session};

/// Tokens of the prompt start that route a request (WIRE_SPEC §19).
pub const ROUTING_TOKENS: u64 = 256;

/// The session prepared for simulation: element classes and each request's cache model.
#[derive(Debug, Clone)]
pub struct Prepared<'a> {
    /// The session.
    pub session: &'a Session,
    classes: Vec<u8>,
    /// Cache model per request.
    pub models: Vec<CacheModel>,
}

impl<'a> Prepared<'a> {
    /// Classifies the session's elements once and looks each request's model up.
    pub fn new(session: &'a Session, cache_models: &CacheModels) -> Self {
        Self {
            session,
            classes: layout::classes(session.pool()),
            models: session
                .requests()
                .iter()
                .map(|r| cache_models.lookup(&r.shape.model))
                .collect(),
        }
    }

    /// The pieces of request `i`'s whole prompt under `plan`, into `out`.
    pub fn pieces(&self, i: usize, plan: &Plan, out: &mut Vec<Piece>) {
        out.clear();
        let Some(request) = self.session.requests().get(i) else {
            return;
        };
        let pool = self.session.pool();
        let class = |id: crate::core::prefix::ElementId| {
            self.classes.get(id.0 as usize).copied().unwrap_or(0)
        };
        let shape = &request.shape;
        let header_ids: Vec<_> = shape.header.iter().map(|p| p.id).collect();
        let replaced = plan.replace_header(i, shape, &header_ids);
        out.reserve(shape.header.len() + shape.input.len() + 1);
        match replaced {
            Some(ids) => out.extend(ids.into_iter().map(|(h, id)| Piece {
                key: u64::from(id.0),
                tokens: pool.tokens(id),
                class: 0,
                origin: Origin::Header(h),
            })),
            None => out.extend(shape.header.iter().enumerate().map(|(h, p)| Piece {
                key: u64::from(p.id.0),
                tokens: pool.tokens(p.id),
                class: 0,
                origin: Origin::Header(u32::try_from(h).unwrap_or(u32::MAX)),
            })),
        }
        let insert = plan.insert_at(i);
        for (k, id) in shape.input.iter().enumerate() {
            if let Some((at, piece)) = insert
                && at == k
            {
                out.push(piece);
            }
            out.push(Piece {
                key: u64::from(id.0),
                tokens: pool.tokens(*id),
                class: class(*id),
                origin: Origin::Input(u32::try_from(k + shape.input_offset).unwrap_or(u32::MAX)),
            });
        }
        if let Some((at, piece)) = insert
            && at >= shape.input.len()
        {
            out.push(piece);
        }
    }
}

/// Input tokens of one request as the cache rules predict them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
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
    /// Model slug.
    pub model: String,
    /// Its cache model.
    pub cache_model: CacheKind,
    /// Tokens of its whole prompt (the analysis's estimate).
    pub input_tokens: u64,
    /// Read / written / uncached.
    pub predicted: Tokens,
    /// What a cache that reused every reusable token (the prefix shared with the previous
    /// request of the same model, from the floor) would have read.
    pub ideal_read_tokens: u64,
    /// The request whose entry it read.
    pub read_from: Option<usize>,
    /// Breakpoints it wrote (breakpoint models).
    pub wrote_breakpoints: usize,
    /// Why, in words.
    pub reason: String,
    /// Not simulated (a continuation of an unrecorded response).
    pub undetermined: bool,
    /// The gap before it, in seconds, when times are known (from the previous request's finish).
    pub idle_gap_secs: Option<u64>,
    /// The TTL it was held under, seconds.
    pub ttl_secs: u64,
    /// The route it went to (a hash: equal routes share a cache).
    pub route: u64,
    /// Where it first differs from the previous request (JSON pointer), when it does.
    pub break_at: Option<String>,
    /// The last body input item it shares with the previous request (where an explicit
    /// breakpoint would keep the shared prefix).
    pub shared_item: Option<u32>,
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
    origin: Origin,
    class: u8,
}

#[derive(Debug, Clone)]
struct HeldPrompt {
    offsets: Rc<Offsets>,
    last_used: Option<i64>,
    ttl_ms: i64,
    request: usize,
}

#[derive(Debug, Default)]
struct Route {
    marks: VecDeque<HeldMark>,
    prompts: Vec<HeldPrompt>,
    /// Expired entries dropped for this request: (request that wrote it, gap ms).
    expired: Option<(usize, i64)>,
    seen: bool,
}

fn alive(last_used: Option<i64>, ttl_ms: i64, now: Option<i64>) -> bool {
    match (last_used, now) {
        (Some(used), Some(now)) => now - used <= ttl_ms,
        _ => true,
    }
}

impl Route {
    fn expire(&mut self, now: Option<i64>) {
        self.expired = None;
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

/// Simulates every request of the session under `plan` (the what-if edits; [`Plan::none`] for
/// the session as recorded).
pub fn simulate(prepared: &Prepared<'_>, plan: &Plan) -> Vec<Prediction> {
    let session = prepared.session;
    let requests = session.requests();
    let mut routes: HashMap<u64, Route> = HashMap::new();
    let mut previous: Option<(usize, Rc<Offsets>)> = None;
    let mut last_finish: Option<i64> = None;
    let mut pieces = Vec::new();
    let mut out = Vec::with_capacity(requests.len());
    for (i, request) in requests.iter().enumerate() {
        let model = prepared.models[i];
        let kind = model.kind();
        let shift = plan.shift_ms(i);
        let sent = request.meta.sent_at_ms.map(|t| t - shift);
        let finished = request.meta.finished_at_ms.map(|t| t - shift).or(sent);
        let idle_gap_secs = match (last_finish, sent) {
            (Some(from), Some(to)) => Some(u64::try_from((to - from) / 1000).unwrap_or(0)),
            _ => None,
        };
        let ttl_secs = plan
            .ttl_secs
            .or(request.shape.cache_ttl_secs)
            .unwrap_or_else(|| model.default_ttl_secs());
        let ttl_ms = i64::try_from(ttl_secs.saturating_mul(1000)).unwrap_or(i64::MAX);
        let base = Prediction {
            index: i,
            model: request.shape.model.clone(),
            cache_model: kind,
            input_tokens: request.tokens,
            predicted: Tokens {
                uncached_tokens: request.tokens,
                ..Tokens::default()
            },
            ideal_read_tokens: 0,
            read_from: None,
            wrote_breakpoints: 0,
            reason: String::new(),
            undetermined: false,
            idle_gap_secs,
            ttl_secs,
            route: 0,
            break_at: None,
            shared_item: None,
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
        prepared.pieces(i, plan, &mut pieces);
        let mut filled = Offsets::default();
        filled.fill(&pieces);
        // Shared by the route's held prompt and the next request's comparison: filled once.
        let offsets = Rc::new(filled);
        let total = offsets.total();
        let route_key = route_hash(
            request.shape.prompt_cache_key.as_deref(),
            &request.shape.model,
            offsets.hash[offsets.boundary_at(ROUTING_TOKENS)],
        );
        let route = routes.entry(route_key).or_default();
        route.expire(sent);
        let first_on_route = !route.seen;
        route.seen = true;
        // What a perfect cache would read: the prefix shared with the previous request of the
        // same model, from the floor (in steps for the prefix model).
        let shared = previous
            .as_ref()
            .filter(|(j, _)| requests[*j].shape.model == request.shape.model)
            .map_or(0, |(_, prev)| offsets.cum[offsets.common(prev)]);
        let describe_break = |prev: Option<&Offsets>| -> Option<String> {
            let prev = prev?;
            let k = offsets.common(prev);
            (k < offsets.len() && k < prev.len()).then(|| {
                let piece = pieces[k];
                layout::pointer(session, i, piece.origin)
            })
        };
        let previous_offsets = previous.as_ref().map(|(_, o)| o.as_ref());
        let mut prediction = match model {
            CacheModel::Prefix {
                floor_tokens,
                step_tokens,
                ..
            } => {
                let best = route
                    .prompts
                    .iter_mut()
                    .map(|p| {
                        let k = offsets.common(&p.offsets);
                        (offsets.cum[k], p)
                    })
                    .max_by_key(|(tokens, p)| (*tokens, p.request));
                let (read, from) = match best {
                    Some((tokens, held)) => {
                        let read = cacheable_steps(tokens, floor_tokens, step_tokens);
                        if read > 0 {
                            held.last_used = finished;
                            held.ttl_ms = held.ttl_ms.max(ttl_ms);
                        }
                        (read, (read > 0).then_some(held.request))
                    }
                    None => (0, None),
                };
                let ideal = cacheable_steps(shared, floor_tokens, step_tokens).max(read);
                let reason = match from {
                    Some(j) => {
                        let mut text = format!(
                            "read {} tokens of request {j}'s prefix ({} shared, counted from {} \
                             in {}-token steps)",
                            grouped(read),
                            grouped(shared.max(read)),
                            grouped(floor_tokens),
                            step_tokens
                        );
                        if let Some(at) = describe_break(previous_offsets) {
                            text.push_str(&format!("; the break at {at} is after it"));
                        }
                        text.push_str("; writes are free");
                        text
                    }
                    None => prefix_miss_reason(
                        route,
                        first_on_route,
                        shared,
                        floor_tokens,
                        describe_break(previous_offsets),
                    ),
                };
                route
                    .prompts
                    .retain(|p| offsets.common(&p.offsets) < p.offsets.len());
                route.prompts.push(HeldPrompt {
                    offsets: Rc::clone(&offsets),
                    last_used: finished,
                    ttl_ms,
                    request: i,
                });
                if route.prompts.len() > 80 {
                    route.prompts.remove(0);
                }
                Prediction {
                    predicted: Tokens {
                        read_tokens: read,
                        write_tokens: 0,
                        uncached_tokens: total.saturating_sub(read),
                    },
                    ideal_read_tokens: ideal,
                    read_from: from,
                    reason,
                    ..base
                }
            }
            CacheModel::Breakpoints {
                floor_tokens,
                max_writes,
                considered,
                ..
            } => {
                let explicit_mode = request.shape.cache_mode_explicit;
                let marks = layout::marks(
                    &pieces,
                    explicit_mode,
                    max_writes,
                    plan.breakpoints_after(i),
                );
                let latest = marks.last().map_or(0, |m| m.at);
                let skip = route.marks.len().saturating_sub(considered);
                let best = route
                    .marks
                    .iter_mut()
                    .skip(skip)
                    .filter(|m| m.n <= latest && offsets.matches(m.n, m.hash))
                    .max_by_key(|m| (m.tokens, m.request));
                let (read, from, read_desc) = match best {
                    Some(held) => {
                        held.last_used = finished;
                        held.ttl_ms = held.ttl_ms.max(ttl_ms);
                        let desc = format!(
                            "the breakpoint of request {} (end of {} at {})",
                            held.request,
                            layout::noun(held.class, held.origin),
                            layout::pointer(session, held.request, held.origin)
                        );
                        (held.tokens, Some(held.request), Some(desc))
                    }
                    None => (0, None, None),
                };
                let (written, write_tokens) = write_marks(
                    route,
                    &marks,
                    &offsets,
                    &pieces,
                    read,
                    floor_tokens,
                    finished,
                    ttl_ms,
                    i,
                );
                while route.marks.len() > considered {
                    route.marks.pop_front();
                }
                let ideal = if shared >= floor_tokens {
                    shared.max(read)
                } else {
                    read
                };
                let mut reason = match (&read_desc, explicit_mode && marks.is_empty()) {
                    (_, true) => {
                        "explicit mode (prompt_cache_options.mode) and no breakpoint: nothing is \
                         read or written"
                            .to_string()
                    }
                    (Some(desc), _) => {
                        let mut text = format!("read {} tokens up to {desc}", grouped(read));
                        if let Some(at) = describe_break(previous_offsets) {
                            text.push_str(&format!("; the break at {at} is after it"));
                        }
                        text
                    }
                    (None, _) => breakpoint_miss_reason(
                        route,
                        first_on_route,
                        shared,
                        describe_break(previous_offsets),
                    ),
                };
                if !(explicit_mode && marks.is_empty()) {
                    reason.push_str(&match written {
                        0 => "; wrote nothing".to_string(),
                        1 => format!("; wrote 1 breakpoint, {} tokens", grouped(write_tokens)),
                        n => format!("; wrote {n} breakpoints, {} tokens", grouped(write_tokens)),
                    });
                }
                Prediction {
                    predicted: Tokens {
                        read_tokens: read,
                        write_tokens,
                        uncached_tokens: total.saturating_sub(read + write_tokens),
                    },
                    ideal_read_tokens: ideal,
                    read_from: from,
                    wrote_breakpoints: written,
                    reason,
                    ..base
                }
            }
        };
        prediction.input_tokens = total;
        prediction.route = route_key;
        if let Some((_, prev)) = &previous {
            let k = offsets.common(prev);
            if k < offsets.len() && k < prev.len() {
                prediction.break_at = Some(layout::pointer(session, i, pieces[k].origin));
            }
            prediction.shared_item = pieces[..k].iter().rev().find_map(|p| match p.origin {
                Origin::Input(item) => Some(item),
                _ => None,
            });
        }
        prediction.explicit_breakpoints = pieces
            .iter()
            .filter(|p| {
                p.class & layout::EXPLICIT != 0
                    || matches!(p.origin, Origin::Input(k) if plan.breakpoints_after(i).contains(&k))
            })
            .count();
        out.push(prediction);
        previous = Some((i, offsets));
    }
    out
}

/// Writes the request's breakpoints that are not held; returns how many and the tokens written
/// (from what was read to the latest new breakpoint).
#[allow(
    clippy::too_many_arguments,
    reason = "one step of the walk, its state spelled out"
)]
fn write_marks(
    route: &mut Route,
    marks: &[Mark],
    offsets: &Offsets,
    pieces: &[Piece],
    read: u64,
    floor_tokens: u64,
    finished: Option<i64>,
    ttl_ms: i64,
    request: usize,
) -> (usize, u64) {
    let mut written = 0;
    let mut furthest = 0;
    for mark in marks {
        let tokens = offsets.cum[mark.at];
        if tokens < floor_tokens {
            continue;
        }
        let hash = offsets.hash[mark.at];
        if let Some(held) = route
            .marks
            .iter_mut()
            .find(|m| m.n == mark.at && m.hash == hash)
        {
            held.last_used = finished;
            held.ttl_ms = held.ttl_ms.max(ttl_ms);
            continue;
        }
        let piece = pieces[mark.at - 1];
        route.marks.push_back(HeldMark {
            n: mark.at,
            hash,
            tokens,
            last_used: finished,
            ttl_ms,
            request,
            origin: piece.origin,
            class: piece.class,
        });
        written += 1;
        furthest = furthest.max(tokens);
    }
    (written, furthest.saturating_sub(read))
}

fn gap_words(ms: i64) -> String {
    let secs = ms / 1000;
    if secs >= 120 {
        format!("{} min", secs / 60)
    } else {
        format!("{secs} s")
    }
}

fn prefix_miss_reason(
    route: &Route,
    first: bool,
    shared: u64,
    floor: u64,
    at: Option<String>,
) -> String {
    if let Some((j, gap)) = route.expired
        && route.prompts.is_empty()
    {
        return format!(
            "read nothing: request {j}'s cache expired (idle {} past its retention)",
            gap_words(gap)
        );
    }
    if first {
        return "read nothing: the first request on its route (model, prompt_cache_key and \
                first ~256 tokens)"
            .to_string();
    }
    match at {
        Some(at) if shared < floor => format!(
            "read nothing: the break at {at} leaves {} shared tokens, under the {} floor",
            grouped(shared),
            grouped(floor)
        ),
        Some(at) => format!("read nothing: the prompt differs from {at} on"),
        None => "read nothing: no held prompt shares 1,024 tokens with it".to_string(),
    }
}

fn breakpoint_miss_reason(route: &Route, first: bool, shared: u64, at: Option<String>) -> String {
    if let Some((j, gap)) = route.expired
        && route.marks.iter().all(|m| m.request >= j)
    {
        return format!(
            "read nothing: the breakpoints of request {j} expired (idle {} past the TTL)",
            gap_words(gap)
        );
    }
    if first {
        return "read nothing: the first request on its route (model, prompt_cache_key and \
                first ~256 tokens)"
            .to_string();
    }
    match at {
        Some(at) => format!(
            "read nothing: no held breakpoint lies before the break at {at} ({} shared tokens \
             before it are not at a breakpoint, and there is no fallback to an unmarked prefix)",
            grouped(shared)
        ),
        None => "read nothing: no held breakpoint matches its prefix".to_string(),
    }
}

fn route_hash(key: Option<&str>, model: &str, head: u64) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut h);
    model.hash(&mut h);
    head.hash(&mut h);
    h.finish()
}
