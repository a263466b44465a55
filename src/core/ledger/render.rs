//! The rendered view (WIRE_SPEC §19.2): each request of a session as the ordered *segments* the
//! server renders — the reasoning effort, verbosity and output schema, then the tools (one
//! segment per tool, schemas in their property order), the base instructions, then every input
//! item from its rendered fields only (a message's text blocks, a call's name and argument
//! string, an output's text, opaque encrypted reasoning). Ids, `status`, `call_id`, the key order
//! of the request and of its items, `client_metadata`, `stream`, `store`, `include` never enter
//! it. Standard and Lite render the same content in the same sections (Lite's `additional_tools`
//! item is the tool section, its developer message the instructions).
//!
//! Every distinct segment is kept once in a [`Segments`] pool, keyed by a 128-bit hash of what it
//! renders, and counted once ([`super::counting::Counting`]); a request is a list of segment ids
//! with running token counts and chained hashes at each boundary, so comparing two requests is a
//! binary search over integers. Items are rendered once per distinct item of the session.
//!
//! What the recording does not have (a rollout's tools) is a *not recorded* segment: it renders
//! nothing, counts nothing, and is equal to every other not-recorded segment of its kind — never
//! compared, never blamed. An item or tool the rendering does not know is its JSON with its keys
//! sorted (key order never renders).

use std::collections::HashMap;
use std::hash::{Hash as _, Hasher as _};
use std::sync::Arc;

use rayon::prelude::*;
use rustc_hash::FxHashMap;
use serde_json::Value;
use siphasher::sip128::{Hasher128 as _, SipHasher13};

use super::counting::Counting;
use super::source::{self, Source};
use super::tool_text::render_tool;
use crate::core::prefix::canon::canonical_json;
use crate::core::prefix::{BreakAt, ElementId, Session, Tokenizer};

/// Index of a segment in a [`Segments`] pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SegmentId(pub u32);

/// What kind of thing a segment renders.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A rendered setting: `reasoning.effort`, `text.verbosity`, `text.format`.
    Setting(Setting),
    /// The framing of the tool section.
    ToolsFrame,
    /// One tool definition.
    Tool,
    /// Top-level `instructions`.
    Instructions,
    /// One content block of a message (`/content/k`, or the whole `content` string).
    Block,
    /// A tool call: name and arguments (or input, or action).
    Call,
    /// A tool call's output.
    Output,
    /// Reasoning: encrypted content, or reasoning text.
    Reasoning,
    /// A compaction item's encrypted content.
    Compaction,
    /// A marker item with no content of its own (`compaction_trigger`).
    Marker,
    /// Any other item, as its compact JSON without ids and status.
    Item,
    /// A part the recording does not have.
    NotRecorded,
}

impl Kind {
    /// The snake_case name (`setting`, `tool`, `block`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Setting(Setting::Effort) => "effort",
            Self::Setting(Setting::Verbosity) => "verbosity",
            Self::Setting(Setting::Format) => "output_schema",
            Self::ToolsFrame => "tools_frame",
            Self::Tool => "tool",
            Self::Instructions => "instructions",
            Self::Block => "block",
            Self::Call => "call",
            Self::Output => "output",
            Self::Reasoning => "reasoning",
            Self::Compaction => "compaction",
            Self::Marker => "marker",
            Self::Item => "item",
            Self::NotRecorded => "not_recorded",
        }
    }
}

/// The rendered settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Setting {
    /// `reasoning.effort`.
    Effort,
    /// `text.verbosity`.
    Verbosity,
    /// `text.format` (an output schema).
    Format,
}

/// What a segment holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    /// Text, counted with o200k_base.
    Text(Box<str>),
    /// Opaque content (encrypted reasoning, an image) of this many bytes: its tokens are an
    /// estimate.
    Opaque(u64),
}

/// One distinct segment.
#[derive(Debug, Clone)]
pub struct Segment {
    /// Where it comes from.
    pub source: Source,
    /// What it renders.
    pub kind: Kind,
    /// A tool's name (tools, calls, outputs), a message's role.
    pub label: Option<Box<str>>,
    /// Its content.
    pub body: Body,
    /// Tokens before its text (role and channel markers).
    pub lead: u64,
    /// Tokens after its text.
    pub trail: u64,
    /// All its tokens: lead, text (or the opaque estimate), trail.
    pub tokens: u64,
    /// Hash of its kind and markers: two segments with the same tag can share a token prefix.
    tag: u64,
    /// Hash of everything it renders (its identity, stable across runs and sessions).
    pub hash: u128,
}

impl Segment {
    /// Whether it is an earlier turn's reasoning the server no longer renders.
    pub fn is_dropped_reasoning(&self) -> bool {
        self.kind == Kind::Reasoning && self.tokens == 0 && self.label.is_some()
    }

    /// Its text, when it is text.
    pub fn text(&self) -> Option<&str> {
        match &self.body {
            Body::Text(t) => Some(t),
            Body::Opaque(_) => None,
        }
    }
}

/// A segment about to be interned.
struct Draft {
    source: Source,
    kind: Kind,
    label: Option<String>,
    body: Body,
    lead: u64,
    trail: u64,
    /// Extra identity (the opaque blob's own hash, a marker's role, …).
    salt: u128,
    /// Tokens of an opaque body (estimated when drafted).
    opaque_tokens: u64,
}

/// Every distinct segment of a session, each counted once.
#[derive(Debug, Default)]
pub struct Segments {
    segments: Vec<Segment>,
    /// By segment hash (already a hash: a fast hasher over it is enough).
    by_key: FxHashMap<u128, SegmentId>,
    /// Segments interned but not counted yet.
    pending: Vec<SegmentId>,
}

impl Segments {
    /// The segment with this id.
    pub fn get(&self, id: SegmentId) -> &Segment {
        &self.segments[id.0 as usize]
    }

    /// Number of distinct segments.
    pub fn len(&self) -> usize {
        self.segments.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.segments.is_empty()
    }

    /// Every segment, in id order.
    pub fn iter(&self) -> impl Iterator<Item = &Segment> {
        self.segments.iter()
    }

    fn intern(&mut self, draft: Draft) -> SegmentId {
        let tag = tag_of(&draft);
        let mut hasher =
            SipHasher13::new_with_keys(0x7365_676d_656e_7473, u64::from(draft.kind_code()));
        hasher.write_u64(tag);
        hasher.write_u128(draft.salt);
        if let Body::Text(text) = &draft.body {
            hasher.write(text.as_bytes());
        }
        let key = hasher.finish128().as_u128();
        if let Some(id) = self.by_key.get(&key) {
            return *id;
        }
        let id = SegmentId(u32::try_from(self.segments.len()).unwrap_or(u32::MAX));
        let text_pending = matches!(draft.body, Body::Text(_));
        self.segments.push(Segment {
            hash: key,
            source: draft.source,
            kind: draft.kind,
            label: draft.label.map(String::into_boxed_str),
            tokens: draft.lead + draft.trail + draft.opaque_tokens,
            body: draft.body,
            lead: draft.lead,
            trail: draft.trail,
            tag,
        });
        if text_pending {
            self.pending.push(id);
        }
        self.by_key.insert(key, id);
        id
    }

    /// Counts the text of every segment interned since the last call, on all cores.
    fn count_pending(&mut self, tokenizer: Tokenizer) {
        let pending = std::mem::take(&mut self.pending);
        let counts: Vec<u64> = pending
            .par_iter()
            .map(|id| match &self.segments[id.0 as usize].body {
                Body::Text(text) => tokenizer.count(text),
                Body::Opaque(_) => 0,
            })
            .collect();
        for (id, count) in pending.into_iter().zip(counts) {
            self.segments[id.0 as usize].tokens += count;
        }
    }

    /// Whether two segments can share a token prefix (same kind and markers).
    pub fn same_tag(&self, a: SegmentId, b: SegmentId) -> bool {
        self.get(a).tag == self.get(b).tag
    }
}

impl Draft {
    fn kind_code(&self) -> u8 {
        match self.kind {
            Kind::Setting(Setting::Effort) => 1,
            Kind::Setting(Setting::Verbosity) => 2,
            Kind::Setting(Setting::Format) => 3,
            Kind::ToolsFrame => 4,
            Kind::Tool => 5,
            Kind::Instructions => 6,
            Kind::Block => 7,
            Kind::Call => 8,
            Kind::Output => 9,
            Kind::Reasoning => 10,
            Kind::Compaction => 11,
            Kind::Marker => 12,
            Kind::Item => 13,
            Kind::NotRecorded => 14,
        }
    }
}

fn tag_of(draft: &Draft) -> u64 {
    let mut hasher = siphasher::sip::SipHasher13::new_with_keys(7, 11);
    hasher.write_u8(draft.kind_code());
    hasher.write_u8(source_code(draft.source));
    hasher.write_u64(draft.lead);
    hasher.write_u64(draft.trail);
    if let Some(label) = &draft.label {
        hasher.write(label.as_bytes());
    }
    hasher.finish()
}

fn source_code(source: Source) -> u8 {
    Source::ALL.iter().position(|s| *s == source).unwrap_or(0) as u8
}

/// Where a part of a request sits, for its JSON pointer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// A field or element before the input items (`/reasoning/effort`, `/tools/3`,
    /// `/input/0/tools/0/tools/2`, `/instructions`).
    Header(Box<str>),
    /// Input item `index` of the whole prompt (its position in the body's `input` when the body
    /// carries the whole prompt), its `part`-th segment.
    Item {
        /// Position of the item.
        index: usize,
        /// Which of the item's segments (a message's content block).
        part: usize,
    },
}

/// The sections of the prompt order, as part-index ends.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sections {
    /// End of the rendered settings.
    pub settings: usize,
    /// End of the tool section.
    pub tools: usize,
    /// End of the instructions.
    pub instructions: usize,
}

/// One request's rendered prompt.
#[derive(Debug, Clone, Default)]
pub struct Layout {
    /// Its segments in prompt order.
    pub parts: Vec<SegmentId>,
    /// Running token count at each boundary: `cum[k]` covers the first `k` parts.
    pub cum: Vec<u64>,
    /// Chained hash at each boundary.
    pub hash: Vec<u64>,
    /// Where the sections end.
    pub sections: Sections,
    /// Pointer of each header part (settings, tools, instructions), shared by the requests with
    /// the same header.
    header: Arc<[Box<str>]>,
    /// For each input item after the header (in whole-prompt order), its first part.
    item_start: Vec<u32>,
    /// Whole-prompt position of the first of those items.
    first_item: usize,
    /// Parts the recording does not have (`tools`).
    pub not_recorded: Vec<&'static str>,
    /// Parts that end a content block carrying an explicit `prompt_cache_breakpoint`.
    pub explicit: Vec<u32>,
    /// Its constant-part segment (see [`Anchor`]).
    anchor: Option<SegmentId>,
    /// The request whose reported `input_tokens` sized that constant part, and its tokens.
    pub anchored: Option<Anchor>,
}

/// The constant part of a rendered request — what the server renders that the recording does
/// not show (framing, a rollout's tools): the server's `input_tokens` of the first request with
/// this header less the rest of its estimate (0 when the estimate is already above it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Anchor {
    /// The request whose count sized it.
    pub request: usize,
    /// Its tokens.
    pub tokens: u64,
}

impl Layout {
    /// Its constant-part segment: what the recording cannot show (a rollout's tools, the
    /// framing), sized on the server's count.
    pub fn anchor_segment(&self) -> Option<SegmentId> {
        self.anchor
    }

    /// Whole-prompt position of the first input item after the header.
    pub fn first_item(&self) -> usize {
        self.first_item
    }

    /// Number of parts.
    pub fn len(&self) -> usize {
        self.parts.len()
    }

    /// Whether it has no part.
    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }

    /// Its tokens.
    pub fn total(&self) -> u64 {
        self.cum.last().copied().unwrap_or(0)
    }

    /// Where part `k` sits.
    pub fn place(&self, k: usize) -> Option<Place> {
        if let Some(pointer) = self.header.get(k) {
            return Some(Place::Header(pointer.clone()));
        }
        if k >= self.parts.len() {
            return None;
        }
        let k32 = u32::try_from(k).unwrap_or(u32::MAX);
        let item = self
            .item_start
            .partition_point(|&s| s <= k32)
            .checked_sub(1)?;
        Some(Place::Item {
            index: self.first_item + item,
            part: (k32 - self.item_start[item]) as usize,
        })
    }

    /// The whole-prompt position of the item part `k` belongs to.
    pub fn item_of(&self, k: usize) -> Option<usize> {
        match self.place(k)? {
            Place::Item { index, .. } => Some(index),
            Place::Header(_) => None,
        }
    }

    /// Number of leading parts `self` and `other` share.
    pub fn common(&self, other: &Layout) -> usize {
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

    /// Whether the first `n` parts hash to `hash`.
    pub fn matches(&self, n: usize, hash: u64) -> bool {
        self.hash.get(n) == Some(&hash)
    }

    /// The first boundary whose running count reaches `tokens` (the whole prompt if none).
    pub fn boundary_at(&self, tokens: u64) -> usize {
        self.cum.partition_point(|&c| c < tokens).min(self.len())
    }

    /// The parts of the first input item at or after whole-prompt position `index`, as a range.
    pub fn item_parts(&self, index: usize) -> Option<std::ops::Range<usize>> {
        let k = index.checked_sub(self.first_item)?;
        let start = *self.item_start.get(k)? as usize;
        let end = self
            .item_start
            .get(k + 1)
            .map_or(self.parts.len(), |e| *e as usize);
        Some(start..end)
    }

    /// Number of input items after the header.
    pub fn items(&self) -> usize {
        self.item_start.len()
    }
}

/// The JSON pointer of part `k` of `layout`.
pub fn pointer(layout: &Layout, segments: &Segments, k: usize) -> String {
    match layout.place(k) {
        Some(Place::Header(p)) => p.to_string(),
        Some(Place::Item { index, part }) => {
            let segment = segments.get(layout.parts[k]);
            match segment.kind {
                Kind::Block if segment.label.as_deref().is_some_and(|l| l.ends_with('*')) => {
                    format!("/input/{index}/content")
                }
                Kind::Block => format!("/input/{index}/content/{part}"),
                Kind::Call => format!("/input/{index}/arguments"),
                Kind::Output => format!("/input/{index}/output"),
                Kind::Reasoning | Kind::Compaction => format!("/input/{index}/encrypted_content"),
                _ => format!("/input/{index}"),
            }
        }
        None => String::new(),
    }
}

/// The rendered view of a session: its segments and one layout per request.
#[derive(Debug, Default)]
pub struct Rendered {
    /// Every distinct segment.
    pub segments: Segments,
    /// One per request, in order.
    pub layouts: Vec<Layout>,
    /// The counting rules used.
    pub counting: Counting,
}

/// Renders every request of `session`.
pub fn render(session: &Session, counting: &Counting) -> Rendered {
    let all: Vec<usize> = (0..session.len()).collect();
    render_some(session, counting, &all)
}

/// Renders the requests of `session` at `indices` (the others get an empty layout).
pub fn render_some(session: &Session, counting: &Counting, indices: &[usize]) -> Rendered {
    let mut renderer = Renderer {
        segments: Segments::default(),
        items: FxHashMap::default(),
        info: Vec::new(),
        names: FxHashMap::default(),
        markers: FxHashMap::default(),
        headers: HashMap::new(),
        base: *counting,
        counting: *counting,
    };
    let mut layouts: Vec<Layout> = vec![Layout::default(); session.len()];
    for &i in indices {
        if let Some(request) = session.requests().get(i) {
            layouts[i] = renderer.layout(session, request);
        }
    }
    let tokenizer = session.pool().tokenizer();
    renderer.segments.count_pending(tokenizer);
    let mut segments = renderer.segments;
    anchor(session, indices, &mut layouts, &mut segments);
    for layout in &mut layouts {
        fill(layout, &segments);
    }
    Rendered {
        segments,
        layouts,
        counting: *counting,
    }
}

/// Sizes each header's constant part on the first request with that header whose
/// `input_tokens` the server reported (a header with none takes the latest one sized before it).
fn anchor(session: &Session, indices: &[usize], layouts: &mut [Layout], segments: &mut Segments) {
    let mut sized: HashMap<SegmentId, Anchor> = HashMap::new();
    let mut latest: Option<Anchor> = None;
    for &i in indices {
        let Some(id) = layouts.get(i).and_then(|l| l.anchor) else {
            continue;
        };
        let found = match sized.get(&id) {
            Some(a) => Some(*a),
            None => {
                let reported = session
                    .requests()
                    .get(i)
                    .and_then(|r| r.meta.reported_input_tokens)
                    .filter(|&n| n > 0);
                let a = match reported {
                    Some(reported) => {
                        let estimate: u64 = layouts[i]
                            .parts
                            .iter()
                            .map(|p| segments.get(*p).tokens)
                            .sum();
                        Some(Anchor {
                            request: i,
                            tokens: reported.saturating_sub(estimate),
                        })
                    }
                    None => latest,
                };
                if let Some(a) = a {
                    sized.insert(id, a);
                    let segment = &mut segments.segments[id.0 as usize];
                    segment.lead = a.tokens;
                    segment.tokens = a.tokens;
                }
                a
            }
        };
        if let Some(a) = found {
            latest = Some(a);
            layouts[i].anchored = Some(a);
        }
    }
}

/// Fills a layout's running counts and chained hashes.
pub fn fill(layout: &mut Layout, segments: &Segments) {
    layout.cum.clear();
    layout.hash.clear();
    layout.cum.reserve(layout.parts.len() + 1);
    layout.hash.reserve(layout.parts.len() + 1);
    let (mut tokens, mut hash) = (0u64, SEED);
    layout.cum.push(tokens);
    layout.hash.push(hash);
    for id in &layout.parts {
        tokens += segments.get(*id).tokens;
        hash = chain(hash, u64::from(id.0));
        layout.cum.push(tokens);
        layout.hash.push(hash);
    }
}

const SEED: u64 = 0x9e37_79b9_7f4a_7c15;

/// One step of the chained hash.
pub fn chain(hash: u64, key: u64) -> u64 {
    let mut x = hash ^ key.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x = (x ^ (x >> 33)).wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 29)
}

struct Renderer {
    segments: Segments,
    /// An item's segments and which of them carry an explicit breakpoint, by (item, the tool
    /// name an output is rendered with).
    items: FxHashMap<ItemKey, (Vec<SegmentId>, Vec<u32>)>,
    /// What the layout needs to know of an item without rendering it, by item id (read once
    /// per distinct item).
    info: Vec<Option<ItemInfo>>,
    /// call_id hash → (the call's name hash, the call's item), for the request being laid out
    /// (kept to reuse its allocation).
    names: FxHashMap<u64, (u64, ElementId)>,
    /// Marker segments by (salt, tokens): interned once, not once per call run.
    markers: FxHashMap<(u128, u64), SegmentId>,
    /// The header (settings, tools, instructions) of each distinct set of header parts.
    headers: HashMap<u64, Header>,
    /// The counting rules asked for (families with a row of their own use theirs).
    base: Counting,
    /// The rules of the request being laid out (its model's family).
    counting: Counting,
}

/// A rendered item's memo key: the item, the hash of the tool name an output is rendered with,
/// and its variant (the counting row's code, xor 1 for an earlier turn's dropped reasoning).
type ItemKey = (ElementId, u64, u64);

/// What pairs a call with its output (the hash of the `call_id`, a call's name) and what kind of
/// item it is, read once per distinct item.
struct ItemInfo {
    call_id: Option<u64>,
    name: Option<Box<str>>,
    /// The hash of `name` ([`name_hash`]), when there is one.
    name_hash: u64,
    class: Class,
}

/// The kinds of item the layout treats apart.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    /// A `role: user` message: a new turn starts.
    User,
    /// A function or custom tool call (consecutive calls make a run).
    Call,
    /// A reasoning item.
    Reasoning,
    /// Anything else.
    Other,
}

/// A rendered header, shared by the requests whose header parts are the same.
#[derive(Clone)]
struct Header {
    parts: Vec<SegmentId>,
    pointers: Arc<[Box<str>]>,
    sections: Sections,
    not_recorded: Vec<&'static str>,
    /// Its constant-part segment, when the recording misses a part.
    anchor: Option<SegmentId>,
}

impl Renderer {
    fn layout(
        &mut self,
        session: &Session,
        request: &crate::core::prefix::session::SessionRequest,
    ) -> Layout {
        let pool = session.pool();
        let shape = &request.shape;
        self.counting = self.base.for_model(
            Some(&shape.model)
                .filter(|m| !m.is_empty())
                .map(String::as_str),
        );
        let code = self.counting.code();
        let tools_recorded = !request.meta.not_recorded.iter().any(|n| n == "tools");
        let key = {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            code.hash(&mut h);
            tools_recorded.hash(&mut h);
            for part in &shape.header {
                part.id.hash(&mut h);
                part.pointer.hash(&mut h);
            }
            h.finish()
        };
        let header = match self.headers.get(&key) {
            Some(header) => header.clone(),
            None => {
                let header = self.header_of(session, request, tools_recorded);
                self.headers.insert(key, header.clone());
                header
            }
        };
        let mut layout = Layout {
            parts: header.parts,
            header: header.pointers,
            sections: header.sections,
            not_recorded: header.not_recorded,
            anchor: header.anchor,
            ..Layout::default()
        };
        // Items.
        layout.first_item = shape.input_offset;
        // call_id → the call's name, as the items come (a call precedes its output).
        self.names.clear();
        layout.item_start.reserve(shape.input.len());
        layout.parts.reserve(shape.input.len());
        for id in &shape.input {
            let at = id.0 as usize;
            if self.info.len() <= at {
                self.info.resize_with(at + 1, || None);
            }
            if self.info[at].is_none() {
                self.info[at] = Some(item_info(pool.value(*id)));
            }
        }
        // Read through a moved-out table, so segments can be interned meanwhile.
        let info = std::mem::take(&mut self.info);
        let info_of = |id: &ElementId| info[id.0 as usize].as_ref();
        // The reasoning of turns before the latest user message, which families that drop it
        // do not render.
        let turn_start = match self.counting.keeps_earlier_reasoning {
            true => 0,
            false => shape
                .input
                .iter()
                .rposition(|id| info_of(id).is_some_and(|i| i.class == Class::User))
                .unwrap_or(0),
        };
        let mut run = 0usize;
        for (k, id) in shape.input.iter().enumerate() {
            let Some(item_info) = info_of(id) else {
                continue;
            };
            let output_of = match (item_info.name.is_some(), item_info.call_id) {
                (true, Some(call)) => {
                    self.names.insert(call, (item_info.name_hash, *id));
                    None
                }
                (false, Some(call)) => self.names.get(&call).copied(),
                _ => None,
            };
            let dropped = item_info.class == Class::Reasoning && k < turn_start;
            let key = (
                *id,
                output_of.map_or(0, |(h, _)| h),
                code ^ u64::from(dropped),
            );
            let start = u32::try_from(layout.parts.len()).unwrap_or(u32::MAX);
            layout.item_start.push(start);
            // A run of consecutive calls is rendered with its own markers: at its first call,
            // and once more at its second (parallel calls).
            run = if item_info.class == Class::Call {
                run + 1
            } else {
                0
            };
            let marker = match run {
                1 => self.marker("call run", self.counting.run_tokens, 4),
                2 => self.marker("parallel calls", self.counting.parallel_tokens, 5),
                _ => None,
            };
            layout.parts.extend(marker);
            let base = u32::try_from(layout.parts.len()).unwrap_or(u32::MAX);
            if let Some((ids, marked)) = self.items.get(&key) {
                layout.parts.extend_from_slice(ids);
                layout.explicit.extend(marked.iter().map(|k| base + k));
                continue;
            }
            let item = pool.value(*id);
            let drafts = if dropped {
                vec![dropped_reasoning(item)]
            } else {
                let name = output_of.and_then(|(_, call)| info_of(&call)?.name.as_deref());
                self.item(item, name)
            };
            let ids: Vec<SegmentId> = drafts
                .into_iter()
                .map(|d| self.segments.intern(d))
                .collect();
            let marked = explicit_blocks(item, ids.len());
            layout.parts.extend_from_slice(&ids);
            layout.explicit.extend(marked.iter().map(|k| base + k));
            self.items.insert(key, (ids, marked));
        }
        self.info = info;
        layout
    }

    /// The header of a request: its rendered settings, tools and instructions.
    fn header_of(
        &mut self,
        session: &Session,
        request: &crate::core::prefix::session::SessionRequest,
        tools_recorded: bool,
    ) -> Header {
        let pool = session.pool();
        let shape = &request.shape;
        let mut layout = Layout::default();
        let mut pointers: Vec<Box<str>> = Vec::new();
        let c = self.counting;
        if c.request_tokens > 0 {
            let id = self.segments.intern(Draft {
                source: Source::Other,
                kind: Kind::Marker,
                label: Some("request".into()),
                body: Body::Text("".into()),
                lead: c.request_tokens,
                trail: 0,
                salt: 1,
                opaque_tokens: 0,
            });
            layout.parts.push(id);
            pointers.push("".into());
        }
        // Settings.
        for part in shape.parts_at(BreakAt::Reasoning) {
            if let Some(effort) = pool.value(part.id).get("effort").and_then(Value::as_str) {
                self.header(
                    &mut layout,
                    &mut pointers,
                    setting(Setting::Effort, format!("Reasoning: {effort}"), c),
                    "/reasoning/effort",
                );
            }
        }
        for part in shape.parts_at(BreakAt::Text) {
            if &*part.pointer != "/text" {
                continue;
            }
            let text = pool.value(part.id);
            if let Some(v) = text.get("verbosity").and_then(Value::as_str) {
                self.header(
                    &mut layout,
                    &mut pointers,
                    setting(Setting::Verbosity, format!("Verbosity: {v}"), c),
                    "/text/verbosity",
                );
            }
            if let Some(format) = text.get("format")
                && format
                    .get("type")
                    .and_then(Value::as_str)
                    .is_some_and(|t| t != "text")
            {
                let name = format
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("output");
                let schema = format.get("schema").map_or_else(
                    || serde_json::to_string(format).unwrap_or_default(),
                    |s| serde_json::to_string(s).unwrap_or_default(),
                );
                let rendered = format!("# Response Formats\n\n## {name}\n\n{schema}");
                self.header(
                    &mut layout,
                    &mut pointers,
                    setting(Setting::Format, rendered, c),
                    "/text/format",
                );
            }
        }
        layout.sections.settings = layout.parts.len();
        // Tools.
        let mut tools: Vec<(String, &Value)> = Vec::new();
        for part in shape.parts_at(BreakAt::Tools) {
            let value = pool.value(part.id);
            match &*part.pointer {
                "/tools" => {
                    if let Some(list) = value.as_array() {
                        tools.extend(
                            list.iter()
                                .enumerate()
                                .map(|(k, t)| (format!("/tools/{k}"), t)),
                        );
                    }
                }
                p if value.get("type").and_then(Value::as_str) == Some("additional_tools") => {
                    if let Some(list) = value.get("tools").and_then(Value::as_array) {
                        tools.extend(
                            list.iter()
                                .enumerate()
                                .map(|(k, t)| (format!("{p}/tools/{k}"), t)),
                        );
                    }
                }
                _ => {}
            }
        }
        if !tools_recorded {
            layout.not_recorded.push("tools");
            let id = self.segments.intern(Draft {
                source: Source::Tools,
                kind: Kind::NotRecorded,
                label: Some("tools".into()),
                body: Body::Text("".into()),
                lead: 0,
                trail: 0,
                salt: 2,
                opaque_tokens: 0,
            });
            layout.parts.push(id);
            pointers.push("/tools".into());
        } else if !tools.is_empty() {
            let frame = self.segments.intern(Draft {
                source: Source::Tools,
                kind: Kind::ToolsFrame,
                label: None,
                body: Body::Text("".into()),
                lead: c.tools_frame_tokens,
                trail: 0,
                salt: 0,
                opaque_tokens: 0,
            });
            layout.parts.push(frame);
            pointers.push(
                tools[0]
                    .0
                    .rsplit_once('/')
                    .map_or("/tools", |(p, _)| p)
                    .into(),
            );
            for (pointer, tool) in &tools {
                self.tool(&mut layout, &mut pointers, tool, pointer, "");
            }
        }
        layout.sections.tools = layout.parts.len();
        // Instructions.
        for part in shape.parts_at(BreakAt::Instructions) {
            let value = pool.value(part.id);
            match value {
                Value::String(text) => {
                    let id = self.segments.intern(Draft {
                        source: Source::Instructions,
                        kind: Kind::Instructions,
                        label: None,
                        body: Body::Text(text.as_str().into()),
                        lead: c.message_tokens.saturating_sub(1),
                        trail: c.message_tokens.min(1),
                        salt: 0,
                        opaque_tokens: 0,
                    });
                    layout.parts.push(id);
                    pointers.push(part.pointer.clone());
                }
                item => {
                    let drafts = self.message(item, Some(Source::Instructions));
                    for (k, draft) in drafts.into_iter().enumerate() {
                        let id = self.segments.intern(draft);
                        layout.parts.push(id);
                        let blocks = item.get("content").is_some_and(Value::is_array);
                        pointers.push(if blocks {
                            format!("{}/content/{k}", part.pointer).into()
                        } else {
                            format!("{}/content", part.pointer).into()
                        });
                    }
                }
            }
        }
        // The constant part the recording cannot show (tools a rollout does not record, the
        // request's framing): no tokens until the server's count anchors it (`anchor`). One
        // segment for the session: sized once, it never makes two prompts differ. A recording
        // with the whole body has none: its rendering stands as estimated.
        let anchor = (!layout.not_recorded.is_empty()).then(|| {
            let id = self.segments.intern(Draft {
                source: Source::Other,
                kind: Kind::Marker,
                label: Some("constant part (anchored on the server's count)".into()),
                body: Body::Text("".into()),
                lead: 0,
                trail: 0,
                salt: 0xa11c,
                opaque_tokens: 0,
            });
            layout.parts.push(id);
            pointers.push("".into());
            id
        });
        layout.sections.instructions = layout.parts.len();
        Header {
            parts: layout.parts,
            pointers: pointers.into(),
            sections: layout.sections,
            not_recorded: layout.not_recorded,
            anchor,
        }
    }

    /// A marker segment of `tokens` (None when it has none).
    fn marker(&mut self, label: &str, tokens: u64, salt: u128) -> Option<SegmentId> {
        if tokens == 0 {
            return None;
        }
        if let Some(id) = self.markers.get(&(salt, tokens)) {
            return Some(*id);
        }
        let id = self.segments.intern(Draft {
            source: Source::ToolCalls,
            kind: Kind::Marker,
            label: Some(label.to_string()),
            body: Body::Text("".into()),
            lead: tokens,
            trail: 0,
            salt,
            opaque_tokens: 0,
        });
        self.markers.insert((salt, tokens), id);
        Some(id)
    }

    fn header(
        &mut self,
        layout: &mut Layout,
        pointers: &mut Vec<Box<str>>,
        draft: Draft,
        pointer: &str,
    ) {
        let id = self.segments.intern(draft);
        layout.parts.push(id);
        pointers.push(pointer.into());
    }

    fn tool(
        &mut self,
        layout: &mut Layout,
        pointers: &mut Vec<Box<str>>,
        tool: &Value,
        pointer: &str,
        prefix: &str,
    ) {
        if tool.get("type").and_then(Value::as_str) == Some("namespace")
            && let Some(inner) = tool.get("tools").and_then(Value::as_array)
        {
            let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
            let description = tool
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or("");
            // The namespace's own line.
            let id = self.segments.intern(Draft {
                source: Source::Tools,
                kind: Kind::Tool,
                label: Some(format!("{prefix}{name}")),
                body: Body::Text(format!("## {prefix}{name}\n{description}\n").into()),
                lead: 0,
                trail: 0,
                salt: 0,
                opaque_tokens: 0,
            });
            layout.parts.push(id);
            pointers.push(pointer.into());
            let prefix = format!("{prefix}{name}.");
            for (k, t) in inner.iter().enumerate() {
                self.tool(
                    layout,
                    pointers,
                    t,
                    &format!("{pointer}/tools/{k}"),
                    &prefix,
                );
            }
            return;
        }
        let name = tool
            .get("name")
            .and_then(Value::as_str)
            .or_else(|| tool.get("type").and_then(Value::as_str))
            .unwrap_or("");
        let id = self.segments.intern(Draft {
            source: Source::Tools,
            kind: Kind::Tool,
            label: Some(format!("{prefix}{name}")),
            body: Body::Text(render_tool(tool, prefix).into()),
            lead: 0,
            trail: 0,
            salt: 0,
            opaque_tokens: 0,
        });
        layout.parts.push(id);
        pointers.push(pointer.into());
    }

    /// The segments of one input item.
    fn item(&self, item: &Value, output_name: Option<&str>) -> Vec<Draft> {
        let c = self.counting;
        let ty = item.get("type").and_then(Value::as_str);
        let text = |key: &str| item.get(key).and_then(Value::as_str).unwrap_or("");
        match ty {
            Some("message") | None if item.get("role").is_some() => self.message(item, None),
            Some("function_call") | Some("custom_tool_call") => {
                let name = text("name");
                let args = if ty == Some("function_call") {
                    text("arguments")
                } else {
                    text("input")
                };
                let own = match ty == Some("custom_tool_call") {
                    true => c.custom_call_tokens,
                    false => c.call_tokens,
                };
                vec![Draft {
                    source: Source::ToolCalls,
                    kind: Kind::Call,
                    label: Some(name.to_string()),
                    body: Body::Text(format!("{name}\n{args}").into()),
                    lead: own.saturating_sub(1),
                    trail: own.min(1),
                    salt: u128::from(ty == Some("custom_tool_call")),
                    opaque_tokens: 0,
                }]
            }
            Some(t) if t.ends_with("_call") => {
                // local_shell_call, web_search_call, tool_search_call, image_generation_call, …
                let mut rest = stripped(item);
                rest.remove("type");
                vec![Draft {
                    source: Source::ToolCalls,
                    kind: Kind::Call,
                    label: Some(t.trim_end_matches("_call").to_string()),
                    body: Body::Text(canonical_json(&Value::Object(rest)).into()),
                    lead: c.call_tokens.saturating_sub(1),
                    trail: c.call_tokens.min(1),
                    salt: 2,
                    opaque_tokens: 0,
                }]
            }
            Some(t) if t.ends_with("_call_output") => {
                let (body, images) = output_text(item.get("output"));
                let name = output_name.unwrap_or("");
                // Rendered with its call's name (in the markers, not counted as text again).
                vec![Draft {
                    source: Source::ToolOutputs,
                    kind: Kind::Output,
                    label: Some(name.to_string()),
                    body: Body::Text(body.into()),
                    lead: c.output_tokens.saturating_sub(1),
                    trail: c.output_tokens.min(1) + images * c.image_tokens,
                    salt: u128::from(name_hash(name)),
                    opaque_tokens: 0,
                }]
            }
            Some("reasoning") => {
                if let Some(blob) = item.get("encrypted_content").and_then(Value::as_str) {
                    vec![opaque(
                        Source::Reasoning,
                        Kind::Reasoning,
                        blob,
                        c.reasoning(blob.len()),
                    )]
                } else {
                    let texts: Vec<&str> = item
                        .get("content")
                        .and_then(Value::as_array)
                        .map(|a| {
                            a.iter()
                                .filter_map(|b| b.get("text").and_then(Value::as_str))
                                .collect()
                        })
                        .unwrap_or_default();
                    if texts.is_empty() {
                        return Vec::new();
                    }
                    vec![Draft {
                        source: Source::Reasoning,
                        kind: Kind::Reasoning,
                        label: None,
                        body: Body::Text(texts.join("\n").into()),
                        lead: c.message_tokens.saturating_sub(1),
                        trail: c.message_tokens.min(1),
                        salt: 0,
                        opaque_tokens: 0,
                    }]
                }
            }
            Some("compaction") | Some("compaction_summary") | Some("context_compaction") => {
                let blob = text("encrypted_content");
                vec![opaque(
                    Source::Compaction,
                    Kind::Compaction,
                    blob,
                    c.compaction(blob.len()),
                )]
            }
            Some("compaction_trigger") => vec![Draft {
                source: Source::Compaction,
                kind: Kind::Marker,
                label: Some("compaction_trigger".into()),
                body: Body::Text("".into()),
                lead: c.message_tokens,
                trail: 0,
                salt: 3,
                opaque_tokens: 0,
            }],
            _ => vec![Draft {
                source: Source::Other,
                kind: Kind::Item,
                label: ty.map(str::to_string),
                body: Body::Text(canonical_json(&Value::Object(stripped(item))).into()),
                lead: c.message_tokens.saturating_sub(1),
                trail: c.message_tokens.min(1),
                salt: 0,
                opaque_tokens: 0,
            }],
        }
    }

    /// The segments of a message: one per content block (one for a string content). The first
    /// carries the opening markers, the last the closing one. `source` overrides the source
    /// read from the role and text (the base instructions).
    fn message(&self, item: &Value, source: Option<Source>) -> Vec<Draft> {
        let c = self.counting;
        let role = item.get("role").and_then(Value::as_str).unwrap_or("user");
        let lead = c.message_tokens.saturating_sub(1);
        let trail = c.message_tokens.min(1);
        let blocks: Vec<Block<'_>> = match item.get("content") {
            Some(Value::String(s)) => vec![Block::text(s)],
            Some(Value::Array(list)) => list.iter().map(|b| block(b, &c)).collect(),
            _ => vec![Block::text("")],
        };
        let whole_string = matches!(item.get("content"), Some(Value::String(_)));
        let n = blocks.len();
        let first_source = blocks
            .iter()
            .find_map(|b| b.text)
            .map_or(source::of_block(role, ""), |t| source::of_block(role, t));
        blocks
            .into_iter()
            .enumerate()
            .map(|(k, b)| {
                let own = b.text.map_or(first_source, |t| source::of_block(role, t));
                Draft {
                    source: source.unwrap_or(own),
                    kind: Kind::Block,
                    label: Some(if whole_string {
                        format!("{role}*")
                    } else {
                        role.to_string()
                    }),
                    body: b.body,
                    lead: if k == 0 { lead } else { 0 },
                    trail: if k + 1 == n { trail } else { 0 },
                    salt: b.salt,
                    opaque_tokens: b.opaque_tokens,
                }
            })
            .collect()
    }
}

/// One content block of a message, ready to draft.
struct Block<'a> {
    body: Body,
    opaque_tokens: u64,
    /// Its text, when it is text (for its source).
    text: Option<&'a str>,
    /// The hash of an opaque block's content (its identity).
    salt: u128,
}

impl<'a> Block<'a> {
    fn text(text: &'a str) -> Self {
        Self {
            body: Body::Text(text.into()),
            opaque_tokens: 0,
            text: Some(text),
            salt: 0,
        }
    }
}

/// A content block: text (`input_text`, `output_text`, a refusal), an image (an estimate by its
/// `detail`, identified by its URL or file id), or anything else as an opaque estimate of its
/// compact JSON.
fn block<'a>(b: &'a Value, c: &Counting) -> Block<'a> {
    if let Some(text) = b
        .get("text")
        .or_else(|| b.get("refusal"))
        .and_then(Value::as_str)
    {
        return Block::text(text);
    }
    match b.get("type").and_then(Value::as_str) {
        Some("input_image") => {
            let low = b.get("detail").and_then(Value::as_str) == Some("low");
            let source = b
                .get("image_url")
                .or_else(|| b.get("file_id"))
                .and_then(Value::as_str)
                .unwrap_or("");
            Block {
                body: Body::Opaque(source.len() as u64),
                opaque_tokens: if low {
                    c.image_low_tokens
                } else {
                    c.image_tokens
                },
                text: None,
                salt: blob_hash(source.as_bytes()),
            }
        }
        _ => {
            let text = canonical_json(&Value::Object(stripped(b)));
            Block {
                body: Body::Opaque(text.len() as u64),
                opaque_tokens: (text.len() as u64).div_ceil(4),
                text: None,
                salt: blob_hash(text.as_bytes()),
            }
        }
    }
}

/// The content blocks of a message that carry an explicit `prompt_cache_breakpoint` (their
/// segment positions within the item; one segment per block).
fn explicit_blocks(item: &Value, segments: usize) -> Vec<u32> {
    let Some(blocks) = item.get("content").and_then(Value::as_array) else {
        return Vec::new();
    };
    if blocks.len() != segments {
        return Vec::new();
    }
    blocks
        .iter()
        .enumerate()
        .filter(|(_, b)| b.get("prompt_cache_breakpoint").is_some())
        .map(|(k, _)| k as u32)
        .collect()
}

/// An opaque segment of `blob` (encrypted content) estimated at `tokens`, identified by its hash.
fn opaque(source: Source, kind: Kind, blob: &str, tokens: u64) -> Draft {
    Draft {
        source,
        kind,
        label: None,
        body: Body::Opaque(blob.len() as u64),
        lead: 0,
        trail: 0,
        salt: blob_hash(blob.as_bytes()),
        opaque_tokens: tokens,
    }
}

/// A rendered setting.
fn setting(which: Setting, text: String, c: Counting) -> Draft {
    Draft {
        source: Source::Other,
        kind: Kind::Setting(which),
        label: None,
        body: Body::Text(text.into()),
        lead: c.setting_tokens,
        trail: 0,
        salt: 0,
        opaque_tokens: 0,
    }
}

/// An output's text (a string, or the texts of a content list) and how many images it holds.
fn output_text(output: Option<&Value>) -> (String, u64) {
    match output {
        Some(Value::String(s)) => (s.clone(), 0),
        Some(Value::Array(list)) => {
            let mut images = 0;
            let texts: Vec<&str> = list
                .iter()
                .filter_map(|b| {
                    if b.get("type").and_then(Value::as_str) == Some("input_image") {
                        images += 1;
                    }
                    b.get("text").and_then(Value::as_str)
                })
                .collect();
            (texts.join("\n"), images)
        }
        Some(other) => (serde_json::to_string(other).unwrap_or_default(), 0),
        None => (String::new(), 0),
    }
}

/// What pairs an item with a call — the hash of its `call_id` (a call's or an output's), and for
/// a call its name (an output is rendered with its call's name; the id itself is not rendered)
/// — and its [`Class`].
fn item_info(item: &Value) -> ItemInfo {
    let ty = item.get("type").and_then(Value::as_str).unwrap_or("");
    let call_id = item.get("call_id").and_then(Value::as_str).map(name_hash);
    let name: Option<Box<str>> = (!ty.ends_with("_call_output"))
        .then(|| item.get("name").and_then(Value::as_str))
        .flatten()
        .filter(|_| call_id.is_some())
        .map(Box::from);
    let class = match ty {
        "function_call" | "custom_tool_call" => Class::Call,
        "reasoning" => Class::Reasoning,
        "message" | "" if item.get("role").and_then(Value::as_str) == Some("user") => Class::User,
        _ => Class::Other,
    };
    ItemInfo {
        call_id: call_id.filter(|_| name.is_some() || ty.ends_with("_call_output")),
        name_hash: name.as_deref().map_or(0, name_hash),
        name,
        class,
    }
}

/// A reasoning item of an earlier turn that the server no longer renders: no tokens, and a
/// segment of its own (the prompt differs from the one that rendered it).
fn dropped_reasoning(item: &Value) -> Draft {
    let blob = item
        .get("encrypted_content")
        .and_then(Value::as_str)
        .map_or_else(|| canonical_json(item), str::to_string);
    Draft {
        source: Source::Reasoning,
        kind: Kind::Reasoning,
        label: Some("not rendered (an earlier turn's reasoning)".to_string()),
        body: Body::Opaque(blob.len() as u64),
        lead: 0,
        trail: 0,
        salt: blob_hash(blob.as_bytes()) ^ 1,
        opaque_tokens: 0,
    }
}

fn name_hash(name: &str) -> u64 {
    let mut hasher = siphasher::sip::SipHasher13::new_with_keys(3, 5);
    hasher.write(name.as_bytes());
    hasher.finish() | 1
}

fn blob_hash(bytes: &[u8]) -> u128 {
    let mut hasher = SipHasher13::new_with_keys(0x626c_6f62, 0x6861_7368);
    hasher.write(bytes);
    hasher.finish128().as_u128()
}

/// An item without the fields that are never rendered (`id`, `status`, `call_id`).
fn stripped(item: &Value) -> serde_json::Map<String, Value> {
    let mut map = item.as_object().cloned().unwrap_or_default();
    for key in ["id", "status", "call_id"] {
        map.remove(key);
    }
    map
}
