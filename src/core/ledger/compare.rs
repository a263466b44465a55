//! Two requests compared on their rendered token streams (WIRE_SPEC §19.2): the first differing
//! token — the segment it falls in, the JSON pointer, the token offset — under the prefix rule
//! that an edit inside a segment keeps the tokens before it; every difference between the two,
//! named in the server's vocabulary; and how many of the later request's tokens the earlier one
//! already had (its shared prefix, and its shared content wherever it sits).

use std::collections::HashMap;

use serde::Serialize;
use similar::{Algorithm, DiffOp};

use super::cause::Cause;
use super::render::{Body, Kind, Layout, Rendered, SegmentId, Setting, pointer};
use super::source::Source;
use crate::core::prefix::{Session, Tokenizer};

/// How the later request differs at the divergence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// The segment is there in both, with other content.
    Edited,
    /// The earlier request has segments here that the later one lacks.
    Removed,
    /// The later request has segments here before the earlier one ends.
    Inserted,
}

/// Where the later request first differs from the earlier one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Divergence {
    /// Index of the first differing part (of the later request; of the earlier when removed).
    pub part: usize,
    /// Tokens of the later request before the first differing token.
    pub token: u64,
    /// JSON pointer of the differing content (`/input/3/content/0`, `/tools/2`,
    /// `/reasoning/effort`).
    pub pointer: String,
    /// The source of the differing segment.
    pub source: Source,
    /// Edited, removed or inserted.
    pub change: Change,
}

/// The verdict on one pair of requests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PairVerdict {
    /// Index of the earlier request.
    pub from: usize,
    /// Index of the later request.
    pub to: usize,
    /// Whether the later request's rendered prompt starts with all of the earlier one's.
    pub prefix_kept: bool,
    /// Where the rendered prompts first differ (`None` when kept).
    #[serde(rename = "break")]
    pub divergence: Option<Divergence>,
    /// Every difference, in the server's vocabulary, the primary one first.
    pub causes: Vec<Cause>,
    /// Tokens of the common rendered prefix (routing aside: what a cache holding the earlier
    /// prompt could serve on the same model and route).
    pub reusable_tokens: u64,
    /// Tokens of the later request's content that the earlier one already had, wherever they
    /// sit (what a client that only appended would have had read).
    pub shared_tokens: u64,
    /// Tokens of the earlier request.
    pub from_tokens: u64,
    /// Tokens of the later request.
    pub to_tokens: u64,
    /// Parts not recorded, assumed equal and never compared (`tools`).
    pub not_recorded: Vec<&'static str>,
}

impl PairVerdict {
    /// The primary cause (the first).
    pub fn primary(&self) -> Option<Cause> {
        self.causes.first().copied()
    }
}

/// Common token prefixes of segment pairs, computed once each.
#[derive(Debug, Default)]
pub struct Partials {
    memo: HashMap<(SegmentId, SegmentId), u64>,
}

impl Partials {
    /// Tokens of `b` before its first token that differs from `a` (0 when they cannot share a
    /// prefix: another kind of segment, or opaque content).
    pub fn common(
        &mut self,
        rendered: &Rendered,
        tokenizer: Tokenizer,
        a: SegmentId,
        b: SegmentId,
    ) -> u64 {
        let segments = &rendered.segments;
        if a == b {
            return segments.get(b).tokens;
        }
        if !segments.same_tag(a, b) {
            return 0;
        }
        if let Some(n) = self.memo.get(&(a, b)) {
            return *n;
        }
        let (x, y) = (segments.get(a), segments.get(b));
        let n = match (&x.body, &y.body) {
            (Body::Text(p), Body::Text(q)) => y.lead + common_text_tokens(tokenizer, p, q),
            _ => y.lead,
        }
        .min(y.tokens);
        self.memo.insert((a, b), n);
        n
    }
}

/// Tokens two texts share before their first difference, counted up to the last point before it
/// where o200k's pre-tokenizer always splits (before a space that follows a printable ASCII
/// character, or after a line end followed by a letter or digit), so the tokens counted are tokens
/// of both texts.
pub fn common_text_tokens(tokenizer: Tokenizer, a: &str, b: &str) -> u64 {
    let d = a
        .bytes()
        .zip(b.bytes())
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    let bytes = b.as_bytes();
    let floor = d.saturating_sub(4096);
    let cut = (floor.max(1)..=d.min(bytes.len().saturating_sub(1)))
        .rev()
        .find(|&i| {
            let space = bytes[i] == b' ' && bytes[i - 1].is_ascii_graphic();
            let line = bytes[i - 1] == b'\n' && bytes[i].is_ascii_alphanumeric();
            (space || line) && b.is_char_boundary(i)
        });
    match cut {
        Some(i) => tokenizer.count(&b[..i]),
        None => {
            // No split point close before the difference: the text before it, less the token
            // the difference may merge into.
            let mut end = d.min(b.len());
            while !b.is_char_boundary(end) {
                end -= 1;
            }
            tokenizer.count(&b[..end]).saturating_sub(1)
        }
    }
}

/// What the comparison needs to know about the requests besides their layouts.
#[derive(Debug, Clone, Copy)]
pub struct Context {
    /// The later request is a compaction request, or the first turn after one.
    pub compaction: bool,
}

/// Compares request `from` (earlier) with request `to` of `session`.
pub fn compare(
    session: &Session,
    rendered: &Rendered,
    partials: &mut Partials,
    from: usize,
    to: usize,
    context: Context,
) -> PairVerdict {
    let (a, b) = (&rendered.layouts[from], &rendered.layouts[to]);
    let (ra, rb) = (&session.requests()[from], &session.requests()[to]);
    let tokenizer = session.pool().tokenizer();
    let k = a.common(b);
    // A warm-up whose prompt is the start of the turn before it (a resumed session's first frame
    // re-sends the opening context) reads all of itself: nothing diverges.
    let kept = k == a.len() || (rb.warmup && k == b.len());
    let mut causes = Vec::new();
    if ra.shape.model != rb.shape.model {
        causes.push(Cause::ModelChanged);
    }
    if ra.shape.prompt_cache_key != rb.shape.prompt_cache_key {
        causes.push(Cause::PromptCacheKeyChanged);
    }
    if ra.shape.service_tier != rb.shape.service_tier {
        causes.push(Cause::ServiceTierChanged);
    }
    let mut not_recorded: Vec<&'static str> = a.not_recorded.clone();
    for n in &b.not_recorded {
        if !not_recorded.contains(n) {
            not_recorded.push(n);
        }
    }
    if kept {
        let reusable = a.total().min(b.total());
        return PairVerdict {
            from,
            to,
            prefix_kept: true,
            divergence: None,
            causes,
            reusable_tokens: reusable,
            shared_tokens: reusable,
            from_tokens: a.total(),
            to_tokens: b.total(),
            not_recorded,
        };
    }
    // Where, to the token.
    let partial = match (a.parts.get(k), b.parts.get(k)) {
        (Some(x), Some(y)) => partials.common(rendered, tokenizer, *x, *y),
        _ => 0,
    };
    let token = b.cum.get(k).copied().unwrap_or(b.total()) + partial;
    // Everything that differs, section by section.
    let section_causes = section_causes(rendered, a, b);
    // The side whose part at `k` comes first in the prompt order is where they part: the other
    // side has no part of that section there (a tool list dropped, an effort added).
    let section_a = (k < a.len()).then(|| section_of(rendered, a, k));
    let section_b = (k < b.len()).then(|| section_of(rendered, b, k));
    let (at, earlier_is_a) = match (section_a, section_b) {
        (Some(x), Some(y)) if rank(x) < rank(y) => (x, true),
        (Some(_), Some(y)) => (y, false),
        (Some(x), None) => (x, true),
        (None, Some(y)) => (y, false),
        (None, None) => (Section::Input, false),
    };
    let compaction = context.compaction || rb.shape.is_compaction;
    let place_cause = |section: Section| match section {
        Section::Setting(Setting::Effort) => Cause::ReasoningEffortChanged,
        Section::Setting(Setting::Verbosity) => Cause::VerbosityChanged,
        Section::Setting(Setting::Format) => Cause::TextFormatChanged,
        Section::Tools if compaction => Cause::ContextCompacted,
        Section::Tools => Cause::ToolsChanged,
        Section::Input if compaction => Cause::ContextCompacted,
        Section::Input => Cause::InputChanged,
    };
    // The server dropped the earlier turns' reasoning where `b` parts from `a`: expected.
    let dropped = b
        .parts
        .get(k)
        .is_some_and(|id| rendered.segments.get(*id).is_dropped_reasoning());
    let primary = match dropped {
        true => Cause::ReasoningDropped,
        false => place_cause(at),
    };
    if !causes.contains(&primary) {
        causes.push(primary);
    }
    for section in section_causes {
        if dropped && section == Section::Input {
            continue;
        }
        let cause = place_cause(section);
        if !causes.contains(&cause) {
            causes.push(cause);
        }
    }
    if compaction && !causes.contains(&Cause::ContextCompacted) {
        causes.push(Cause::ContextCompacted);
    }
    // Routing causes first, then the cause at the divergence, then the rest in order.
    let routing: Vec<Cause> = causes.iter().copied().filter(|c| c.is_routing()).collect();
    let rest: Vec<Cause> = causes.iter().copied().filter(|c| !c.is_routing()).collect();
    let causes: Vec<Cause> = routing.into_iter().chain(rest).collect();
    // How much content is shared, wherever it sits.
    let (equal, mut change) = aligned(rendered, a, b, k);
    if let (Some(x), Some(y)) = (section_a, section_b)
        && x != y
    {
        change = if earlier_is_a {
            Change::Removed
        } else {
            Change::Inserted
        };
    }
    let shared_tokens = (equal + partial).max(token).min(b.total());
    let (which, on) = if earlier_is_a { (a, k) } else { (b, k) };
    let source = rendered.segments.get(which.parts[on]).source;
    let mut at_pointer = match (change, which.place(on)) {
        // A whole item removed or inserted: the item, not its first block.
        (
            Change::Removed | Change::Inserted,
            Some(super::render::Place::Item { index, part: 0 }),
        ) => {
            format!("/input/{index}")
        }
        _ => pointer(which, &rendered.segments, on),
    };
    if k < a.len() && k < b.len() && section_a == section_b {
        let (pa, pb) = (
            pointer(a, &rendered.segments, k),
            pointer(b, &rendered.segments, k),
        );
        if let (Some(x), Some(y)) = (value_at(session, from, &pa), value_at(session, to, &pb))
            && let Some(inside) = first_rendered_difference(x, y)
        {
            at_pointer = format!("{pb}{inside}");
        }
    }
    PairVerdict {
        from,
        to,
        prefix_kept: false,
        divergence: Some(Divergence {
            part: k,
            token,
            pointer: at_pointer,
            source,
            change,
        }),
        causes,
        reusable_tokens: token,
        shared_tokens,
        from_tokens: a.total(),
        to_tokens: b.total(),
        not_recorded,
    }
}

/// A section of the prompt order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Section {
    Setting(Setting),
    Tools,
    Input,
}

/// A section's place in the prompt order.
fn rank(section: Section) -> u8 {
    match section {
        Section::Setting(Setting::Effort) => 0,
        Section::Setting(Setting::Verbosity) => 1,
        Section::Setting(Setting::Format) => 2,
        Section::Tools => 3,
        Section::Input => 4,
    }
}

fn section_of(rendered: &Rendered, layout: &Layout, k: usize) -> Section {
    if k < layout.sections.settings {
        return match layout
            .parts
            .get(k)
            .map(|id| rendered.segments.get(*id).kind)
        {
            Some(Kind::Setting(which)) => Section::Setting(which),
            _ => Section::Setting(Setting::Effort),
        };
    }
    if k < layout.sections.tools {
        Section::Tools
    } else {
        Section::Input
    }
}

/// The sections that differ between `a` and `b` (settings one by one).
fn section_causes(rendered: &Rendered, a: &Layout, b: &Layout) -> Vec<Section> {
    let setting = |l: &Layout, which: Setting| {
        l.parts[..l.sections.settings]
            .iter()
            .copied()
            .find(|id| rendered.segments.get(*id).kind == Kind::Setting(which))
    };
    let mut out = Vec::new();
    for which in [Setting::Effort, Setting::Verbosity, Setting::Format] {
        if setting(a, which) != setting(b, which) {
            out.push(Section::Setting(which));
        }
    }
    fn tools(l: &Layout) -> &[SegmentId] {
        &l.parts[l.sections.settings..l.sections.tools]
    }
    fn input(l: &Layout) -> &[SegmentId] {
        &l.parts[l.sections.tools..]
    }
    if tools(a) != tools(b) {
        out.push(Section::Tools);
    }
    let (ia, ib) = (input(a), input(b));
    if ib.len() < ia.len() || ib[..ia.len()] != *ia {
        out.push(Section::Input);
    }
    out
}

/// Tokens of `b`'s parts that `a` has too, aligned in order (a diff of the part lists), and how
/// `b` differs at part `k`, the first difference.
fn aligned(rendered: &Rendered, a: &Layout, b: &Layout, k: usize) -> (u64, Change) {
    let tokens =
        |ids: &[SegmentId]| -> u64 { ids.iter().map(|id| rendered.segments.get(*id).tokens).sum() };
    let equal_prefix = tokens(&b.parts[..k.min(b.len())]);
    let (ra, rb) = (&a.parts[k.min(a.len())..], &b.parts[k.min(b.len())..]);
    if rb.is_empty() {
        return (equal_prefix, Change::Removed);
    }
    if ra.is_empty() {
        return (equal_prefix, Change::Inserted);
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(50);
    let ops = similar::capture_diff_slices_deadline(Algorithm::Myers, ra, rb, Some(deadline));
    let mut equal = equal_prefix;
    let mut change = None;
    for op in &ops {
        match *op {
            DiffOp::Equal { new_index, len, .. } => {
                equal += tokens(&rb[new_index..new_index + len])
            }
            DiffOp::Delete { .. } => {
                change.get_or_insert(Change::Removed);
            }
            DiffOp::Insert { .. } => {
                change.get_or_insert(Change::Inserted);
            }
            DiffOp::Replace { .. } => {
                change.get_or_insert(Change::Edited);
            }
        }
    }
    (equal, change.unwrap_or(Change::Edited))
}

/// The value at JSON `pointer` of request `index`'s body (its whole prompt: the items of a
/// continued response count as its own).
fn value_at<'a>(
    session: &'a Session,
    index: usize,
    pointer: &str,
) -> Option<&'a serde_json::Value> {
    let request = session.requests().get(index)?;
    let pool = session.pool();
    let shape = &request.shape;
    let rest = pointer.strip_prefix('/')?;
    let (first, tail) = rest.split_once('/').map_or((rest, ""), |(f, t)| (f, t));
    let (value, tail) = if first == "input" {
        let (k, tail) = tail.split_once('/').map_or((tail, ""), |(k, t)| (k, t));
        let k: usize = k.parse().ok()?;
        let header = format!("/input/{k}");
        let id = match shape.header.iter().find(|p| *p.pointer == *header) {
            Some(part) => part.id,
            None => *shape.input.get(k.checked_sub(shape.input_offset)?)?,
        };
        (pool.value(id), tail)
    } else {
        let header = format!("/{first}");
        let part = shape.header.iter().find(|p| *p.pointer == *header)?;
        (pool.value(part.id), tail)
    };
    if tail.is_empty() {
        Some(value)
    } else {
        value.pointer(&format!("/{tail}"))
    }
}

/// Where two values first differ in what is rendered: not in the order of an object's own keys
/// (deeper key order counts: a schema's properties are rendered in order), not in an `id`,
/// `status` or `call_id` (a relative JSON pointer; `None` when only those differ).
fn first_rendered_difference(a: &serde_json::Value, b: &serde_json::Value) -> Option<String> {
    use crate::core::prefix::ChangeKind;
    crate::core::prefix::canon::differences(a, b, 64)
        .into_iter()
        .find(|d| {
            (d.kind != ChangeKind::KeyOrder || d.path.matches('/').count() > 1)
                && !d
                    .path
                    .rsplit('/')
                    .next()
                    .is_some_and(|last| matches!(last, "id" | "status" | "call_id"))
        })
        .map(|d| d.path)
}
