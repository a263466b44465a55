//! Comparing two requests in prompt order: whether the later prompt starts with the earlier one,
//! where it first differs (the first differing field that carries content, with the derived
//! fields that changed with it), every cause of difference from the fixed vocabulary, and the
//! routing warnings (their explanations and fixes are in `explain.rs`).

use serde::Serialize;
use serde_json::Value;
use similar::DiffOp;

use super::canon::{ChangeKind, Digest, differences, digest};
use super::pool::{ElementId, ElementPool};
use super::shape::{HeaderPart, RequestShape};

/// A position of the prompt order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BreakAt {
    /// The model slug.
    Model,
    /// `reasoning`.
    Reasoning,
    /// `text` and the other rendered top-level settings.
    Text,
    /// The tool list (`tools` or Lite `additional_tools`), `parallel_tool_calls`, `tool_choice`.
    Tools,
    /// Base instructions (`instructions` or the Lite developer message).
    Instructions,
    /// An input item.
    Input,
}

impl BreakAt {
    /// The snake_case name used on the wire of the report.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Model => "model",
            Self::Reasoning => "reasoning",
            Self::Text => "text",
            Self::Tools => "tools",
            Self::Instructions => "instructions",
            Self::Input => "input",
        }
    }
}

/// Where the prefix broke.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Break {
    /// Position in the prompt order.
    pub at: BreakAt,
    /// For `input`: the index of the first differing item in the body's `input` array.
    pub index: Option<usize>,
    /// JSON pointer, into the bodies, of the first difference that carries content
    /// (`/reasoning/effort`, `/input/0/content/0/text`, not the `id` derived from that text);
    /// it may name a location only one of the two bodies has.
    pub path: Option<String>,
    /// How the bodies differ at `path` (`key_order`: the same keys sent in another order).
    pub change: ChangeKind,
    /// Pointers of derived fields (ids computed from the content) that changed with it.
    pub also_changed: Vec<String>,
}

/// Fields derived from an item's content (Codex gives base-instruction and Lite prefix items
/// deterministic ids from their text): never the place to point at when content changed too.
const DERIVED_FIELDS: &[&str] = &["id"];

/// Where `new` first differs from `old` (relative pointer), how, and the derived fields that
/// changed with it; `None` when they serialize identically.
fn locate(old: &Value, new: &Value) -> Option<(String, ChangeKind, Vec<String>)> {
    let diffs = differences(old, new, 64);
    let is_derived = is_derived_path;
    let primary = diffs
        .iter()
        .find(|d| !is_derived(&d.path))
        .or(diffs.first())?;
    let also_changed = diffs
        .iter()
        .filter(|d| is_derived(&d.path) && d.path != primary.path)
        .map(|d| d.path.clone())
        .collect();
    Some((primary.path.clone(), primary.kind, also_changed))
}

/// Whether two elements differ only in derived fields (or not at all).
fn only_derived(pool: &ElementPool, x: ElementId, y: ElementId) -> bool {
    x == y
        || differences(pool.value(x), pool.value(y), 64)
            .iter()
            .all(|d| is_derived_path(&d.path))
}

/// Whether a pointer names a derived field ([`DERIVED_FIELDS`]).
fn is_derived_path(path: &str) -> bool {
    path.rsplit('/')
        .next()
        .is_some_and(|last| DERIVED_FIELDS.contains(&last))
}

/// Why a prefix broke (fixed vocabulary, serialized in snake_case).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// Another model slug.
    ModelChanged,
    /// `reasoning` differs.
    ReasoningChanged,
    /// `text` (verbosity, output format) or another rendered setting differs.
    TextChanged,
    /// Tools added, removed or edited, or `parallel_tool_calls` / `tool_choice` changed.
    ToolsChanged,
    /// The same tools in another order.
    ToolsReordered,
    /// Base instructions differ.
    InstructionsChanged,
    /// Standard ↔ Lite.
    DialectChanged,
    /// An earlier input item was edited (or an item inserted before the end).
    InputItemEdited,
    /// Earlier input items were removed.
    InputItemsRemoved,
    /// A new history: a compaction item appeared, or most earlier items were replaced.
    InputRewritten,
    /// One of the two is a compaction request (Codex's handoff-summary request before a model
    /// switch, remote compaction, or `/responses/compact`): a side request, not a turn.
    CompactionRequest,
    /// Only ids derived from the thread, session or turn differ (Codex mints them per thread):
    /// the same text, yet another prompt from that item on.
    DerivedIdsChanged,
}

impl Cause {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ModelChanged => "model_changed",
            Self::ReasoningChanged => "reasoning_changed",
            Self::TextChanged => "text_changed",
            Self::ToolsChanged => "tools_changed",
            Self::ToolsReordered => "tools_reordered",
            Self::InstructionsChanged => "instructions_changed",
            Self::DialectChanged => "dialect_changed",
            Self::InputItemEdited => "input_item_edited",
            Self::InputItemsRemoved => "input_items_removed",
            Self::InputRewritten => "input_rewritten",
            Self::CompactionRequest => "compaction_request",
            Self::DerivedIdsChanged => "derived_ids_changed",
        }
    }
}

/// Something that costs cache hits without breaking the prefix (serialized in snake_case).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Warning {
    /// `prompt_cache_key` differs: the request is routed elsewhere.
    PromptCacheKeyChanged,
    /// `client_metadata` differs as a map (never reported for key order alone).
    ClientMetadataChanged,
    /// The gap since the previous request is longer than the cache retention (WIRE_SPEC §19).
    IdleGap,
}

impl Warning {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::PromptCacheKeyChanged => "prompt_cache_key_changed",
            Self::ClientMetadataChanged => "client_metadata_changed",
            Self::IdleGap => "idle_gap",
        }
    }
}

/// The verdict for one pair of requests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PairReport {
    /// Index of the earlier request.
    pub from: usize,
    /// Index of the later request.
    pub to: usize,
    /// Whether `to`'s prompt starts with all of `from`'s.
    pub prefix_kept: bool,
    /// Where it broke (`None` when kept).
    #[serde(rename = "break")]
    pub break_at: Option<Break>,
    /// Every difference found, in vocabulary order (empty when kept).
    pub causes: Vec<Cause>,
    /// Routing and timing warnings, in vocabulary order.
    pub warnings: Vec<Warning>,
    /// Bytes of `from`'s rendering that `to` can reuse.
    pub reusable_bytes: u64,
    /// Tokens of `from`'s rendering that `to` can reuse.
    pub reusable_tokens: u64,
    /// Tokens of `from`'s whole rendering.
    pub from_tokens: u64,
    /// Tokens of `to`'s whole rendering.
    pub to_tokens: u64,
    /// Seconds between the two requests (when both timestamps are known and the pair is
    /// consecutive).
    pub idle_gap_secs: Option<u64>,
    /// `usage.input_tokens_details.cached_tokens` the server reported for `to`.
    pub reported_cached_tokens: Option<u64>,
    /// `to` is a warm-up (`generate: false`): shown, not a turn — not counted in the breaks or
    /// the cost.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub warmup: bool,
    /// Why the pair could not be judged (`to` continues a response the recording does not
    /// have); not counted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undetermined: Option<String>,
}

impl PairReport {
    /// Whether the pair counts as a turn in the totals and the cost (not a warm-up, judged).
    pub fn counts(&self) -> bool {
        !self.warmup && self.undetermined.is_none()
    }
}

/// The timing-independent part of a pair verdict.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PrefixVerdict {
    /// Where it broke (`None` when kept).
    pub break_at: Option<Break>,
    /// Causes in vocabulary order.
    pub causes: Vec<Cause>,
    /// `prompt_cache_key_changed` / `client_metadata_changed`.
    pub warnings: Vec<Warning>,
    /// Reusable bytes.
    pub reusable_bytes: u64,
    /// Reusable tokens.
    pub reusable_tokens: u64,
}

/// Compares `a` (earlier) with `b` (later).
pub fn compare(pool: &ElementPool, a: &RequestShape, b: &RequestShape) -> PrefixVerdict {
    let mut reusable_bytes = 0;
    let mut reusable_tokens = 0;
    let mut add = |id: ElementId| {
        reusable_bytes += pool.bytes(id);
        reusable_tokens += pool.tokens(id);
    };

    // The break: the first element that differs, in prompt order.
    let mut break_at = None;
    let header_len = a.header.len().max(b.header.len());
    for i in 0..header_len {
        match (a.header.get(i), b.header.get(i)) {
            (Some(x), Some(y)) if x == y => add(x.id),
            (x, y) => {
                break_at = Some(header_break(pool, x, y, b));
                break;
            }
        }
    }
    if break_at.is_none() {
        let n = common_prefix(&a.input, &b.input);
        a.input[..n].iter().for_each(|id| add(*id));
        if n < a.input.len() {
            let index = a.input_offset + n;
            let (inside, change, derived) = b
                .input
                .get(n)
                .and_then(|y| locate(pool.value(a.input[n]), pool.value(*y)))
                .unwrap_or((String::new(), ChangeKind::Removed, Vec::new()));
            let pointer = |inner: &str| format!("/input/{index}{inner}");
            break_at = Some(Break {
                at: BreakAt::Input,
                index: Some(index),
                path: Some(pointer(&inside)),
                change,
                also_changed: derived.iter().map(|d| pointer(d)).collect(),
            });
        }
    }

    let causes = if break_at.is_some() {
        causes(pool, a, b)
    } else {
        Vec::new()
    };
    let mut warnings = Vec::new();
    if a.prompt_cache_key != b.prompt_cache_key {
        warnings.push(Warning::PromptCacheKeyChanged);
    }
    if a.client_metadata != b.client_metadata {
        warnings.push(Warning::ClientMetadataChanged);
    }
    PrefixVerdict {
        break_at,
        causes,
        warnings,
        reusable_bytes,
        reusable_tokens,
    }
}

/// The break at header position `i`, where `x` (earlier) and `y` (later) differ.
fn header_break(
    pool: &ElementPool,
    x: Option<&HeaderPart>,
    y: Option<&HeaderPart>,
    b: &RequestShape,
) -> Break {
    let (at, path, change, also_changed) =
        match (x, y) {
            (Some(x), Some(y)) if x.pointer == y.pointer => {
                let (inside, change, derived) = locate(pool.value(x.id), pool.value(y.id))
                    .unwrap_or((String::new(), ChangeKind::Value, Vec::new()));
                let pointer = |inner: &str| format!("{}{inner}", x.pointer);
                let derived = derived.iter().map(|d| pointer(d)).collect();
                (x.at, pointer(&inside), change, derived)
            }
            // Different fields at this place: report the one the other request lacks.
            (Some(x), Some(y)) if b.header.iter().any(|p| p.pointer == x.pointer) => {
                (y.at, y.pointer.to_string(), ChangeKind::Added, Vec::new())
            }
            (Some(only), Some(_)) | (Some(only), None) => (
                only.at,
                only.pointer.to_string(),
                ChangeKind::Removed,
                Vec::new(),
            ),
            (None, Some(only)) => (
                only.at,
                only.pointer.to_string(),
                ChangeKind::Added,
                Vec::new(),
            ),
            (None, None) => (BreakAt::Model, String::new(), ChangeKind::Value, Vec::new()),
        };
    Break {
        at,
        index: None,
        path: Some(path),
        change,
        also_changed,
    }
}

fn common_prefix(a: &[ElementId], b: &[ElementId]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

fn parts_equal(a: &RequestShape, b: &RequestShape, at: BreakAt) -> bool {
    a.parts_at(at).eq(b.parts_at(at))
}

/// Every cause of difference between `a` and `b` (called when the prefix broke).
fn causes(pool: &ElementPool, a: &RequestShape, b: &RequestShape) -> Vec<Cause> {
    let mut causes = Vec::new();
    if !parts_equal(a, b, BreakAt::Model) {
        causes.push(Cause::ModelChanged);
    }
    if !parts_equal(a, b, BreakAt::Reasoning) {
        causes.push(Cause::ReasoningChanged);
    }
    if !parts_equal(a, b, BreakAt::Text) {
        causes.push(Cause::TextChanged);
    }
    if a.dialect != b.dialect {
        // Tools and instructions moved between top-level fields and input items: the dialect
        // switch is the cause, not their content.
        causes.push(Cause::DialectChanged);
    } else {
        if !parts_equal(a, b, BreakAt::Tools) {
            causes.push(if tools_reordered(pool, a, b) {
                Cause::ToolsReordered
            } else {
                Cause::ToolsChanged
            });
        }
        if !parts_equal(a, b, BreakAt::Instructions) {
            let ids_only = a
                .parts_at(BreakAt::Instructions)
                .zip(b.parts_at(BreakAt::Instructions))
                .all(|(x, y)| x.pointer == y.pointer && only_derived(pool, x.id, y.id))
                && a.parts_at(BreakAt::Instructions).count()
                    == b.parts_at(BreakAt::Instructions).count();
            causes.push(if ids_only {
                Cause::DerivedIdsChanged
            } else {
                Cause::InstructionsChanged
            });
        }
    }
    let n = common_prefix(&a.input, &b.input);
    if n < a.input.len() {
        causes.extend(input_causes(pool, &a.input[n..], &b.input[n..]));
    }
    if a.is_compaction != b.is_compaction {
        causes.push(Cause::CompactionRequest);
    }
    causes.sort();
    causes.dedup();
    causes
}

/// Same tool settings and the same tools as a multiset, in another order.
fn tools_reordered(pool: &ElementPool, a: &RequestShape, b: &RequestShape) -> bool {
    let pa: Vec<&HeaderPart> = a.parts_at(BreakAt::Tools).collect();
    let pb: Vec<&HeaderPart> = b.parts_at(BreakAt::Tools).collect();
    if pa.len() != pb.len() {
        return false;
    }
    let mut any_list = false;
    for (x, y) in pa.iter().zip(&pb) {
        if x.pointer != y.pointer {
            return false;
        }
        if x.id == y.id {
            continue;
        }
        let is_list = &*x.pointer == "/tools" || &*x.pointer == "/input/0";
        if !is_list {
            return false;
        }
        let mut la = Vec::new();
        let mut lb = Vec::new();
        tool_leaves(pool.value(x.id), &mut la);
        tool_leaves(pool.value(y.id), &mut lb);
        la.sort_unstable();
        lb.sort_unstable();
        if la != lb {
            return false;
        }
        any_list = true;
    }
    any_list
}

/// The tools of a tool list as digests, looking inside namespaces and the Lite item: a holder
/// (`{"tools":[…], …}`) counts as its other fields plus each of its tools.
fn tool_leaves(value: &Value, out: &mut Vec<Digest>) {
    match value {
        Value::Array(tools) => tools.iter().for_each(|t| tool_leaves(t, out)),
        Value::Object(map) if matches!(map.get("tools"), Some(Value::Array(_))) => {
            let mut holder = map.clone();
            if let Some(tools) = holder.shift_remove("tools") {
                out.push(digest(&Value::Object(holder)));
                tool_leaves(&tools, out);
            }
        }
        other => out.push(digest(other)),
    }
}

/// Item types that stand for a compacted history.
const COMPACTION_TYPES: &[&str] = &["compaction", "compaction_summary", "context_compaction"];

/// Classifies how the earlier items `a` (from the first difference on) became `b`.
fn input_causes(pool: &ElementPool, a: &[ElementId], b: &[ElementId]) -> Vec<Cause> {
    let new_compaction = b.iter().any(|id| {
        !a.contains(id)
            && pool
                .value(*id)
                .get("type")
                .and_then(Value::as_str)
                .is_some_and(|t| COMPACTION_TYPES.contains(&t))
    });
    if new_compaction {
        return vec![Cause::InputRewritten];
    }
    let ops = crate::core::seq_diff::diff_ops(a, b);
    let (mut matched, mut removed, mut edited, mut replaced, mut derived) = (0, 0, 0, 0, 0);
    let last = ops.len().saturating_sub(1);
    for (i, op) in ops.iter().enumerate() {
        // Items added after the last old item are the session growing, not a change.
        let trailing = i == last;
        match *op {
            DiffOp::Equal { len, .. } => matched += len,
            DiffOp::Delete { old_len, .. } => removed += old_len,
            DiffOp::Insert { new_len, .. } => {
                if !trailing {
                    edited += new_len;
                }
            }
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                for p in 0..old_len.min(new_len) {
                    if only_derived(pool, a[old_index + p], b[new_index + p]) {
                        derived += 1;
                        continue;
                    }
                    let x = pool.value(a[old_index + p]);
                    let y = pool.value(b[new_index + p]);
                    if same_identity(x, y) {
                        edited += 1;
                    } else {
                        replaced += 1;
                    }
                }
                if old_len > new_len {
                    removed += old_len - new_len;
                } else if !trailing {
                    edited += new_len - old_len;
                }
            }
        }
    }
    if replaced > 0 && (matched + derived) * 2 < a.len() {
        return vec![Cause::InputRewritten];
    }
    let mut causes = Vec::new();
    if derived > 0 {
        causes.push(Cause::DerivedIdsChanged);
    }
    if edited + replaced > 0 {
        causes.push(Cause::InputItemEdited);
    }
    if removed > 0 {
        causes.push(Cause::InputItemsRemoved);
    }
    if causes.is_empty() {
        causes.push(Cause::InputItemEdited);
    }
    causes
}

/// Whether two items are versions of the same item: same type, and the same `call_id`, `id` or
/// message role where they have one.
fn same_identity(x: &Value, y: &Value) -> bool {
    let field = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
    if field(x, "type") != field(y, "type") {
        return false;
    }
    for key in ["call_id", "id"] {
        if let (Some(p), Some(q)) = (field(x, key), field(y, key)) {
            return p == q;
        }
    }
    field(x, "role") == field(y, "role")
}
