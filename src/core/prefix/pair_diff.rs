//! Item-aligned diff of two requests, for the app: header elements matched by their place in the
//! body, input items aligned by content (Myers over element ids, via `similar`), and a line diff
//! of the pretty JSON of every element that changed.

use serde::Serialize;
use similar::DiffOp;

use crate::core::seq_diff::diff_ops;

use super::pool::{ElementId, ElementPool};
use super::shape::BreakAt;
use super::shape::{HeaderPart, RequestShape};

/// How an element fared between the two requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RowKind {
    /// Equal as JSON values.
    Same,
    /// Only in the later request.
    Added,
    /// Only in the earlier request.
    Removed,
    /// In both, with different values.
    Changed,
}

/// One line of a text diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LineChange {
    /// `equal`, `delete` or `insert`.
    pub tag: &'static str,
    /// The line, without its line break.
    pub text: String,
}

/// One aligned element.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiffRow {
    /// Same, added, removed or changed.
    pub kind: RowKind,
    /// Position in the prompt order.
    pub at: BreakAt,
    /// JSON pointer of the element in the earlier body.
    pub from_pointer: Option<String>,
    /// JSON pointer of the element in the later body.
    pub to_pointer: Option<String>,
    /// For changed elements: line diff of their pretty JSON.
    pub lines: Vec<LineChange>,
}

/// The aligned diff of two requests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PairDiff {
    /// Earlier request index.
    pub from: usize,
    /// Later request index.
    pub to: usize,
    /// Rows in prompt order.
    pub rows: Vec<DiffRow>,
}

/// Aligns `a` (request `from`) with `b` (request `to`).
pub fn pair_diff(
    pool: &ElementPool,
    from: usize,
    a: &RequestShape,
    to: usize,
    b: &RequestShape,
) -> PairDiff {
    let mut rows = Vec::new();
    for at in [
        BreakAt::Model,
        BreakAt::Reasoning,
        BreakAt::Text,
        BreakAt::Tools,
        BreakAt::Instructions,
    ] {
        header_rows(pool, at, a, b, &mut rows);
    }
    let ptr_a = |i: usize| Some(format!("/input/{}", a.input_offset + i));
    let ptr_b = |i: usize| Some(format!("/input/{}", b.input_offset + i));
    for op in diff_ops(&a.input, &b.input) {
        match op {
            DiffOp::Equal {
                old_index,
                new_index,
                len,
            } => {
                for k in 0..len {
                    rows.push(row(
                        RowKind::Same,
                        ptr_a(old_index + k),
                        ptr_b(new_index + k),
                    ));
                }
            }
            DiffOp::Delete {
                old_index, old_len, ..
            } => {
                for k in 0..old_len {
                    rows.push(row(RowKind::Removed, ptr_a(old_index + k), None));
                }
            }
            DiffOp::Insert {
                new_index, new_len, ..
            } => {
                for k in 0..new_len {
                    rows.push(row(RowKind::Added, None, ptr_b(new_index + k)));
                }
            }
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                for k in 0..old_len.max(new_len) {
                    let x = (k < old_len).then(|| a.input[old_index + k]);
                    let y = (k < new_len).then(|| b.input[new_index + k]);
                    let mut r = row(
                        RowKind::Changed,
                        x.and(ptr_a(old_index + k)),
                        y.and(ptr_b(new_index + k)),
                    );
                    match (x, y) {
                        (Some(x), Some(y)) => r.lines = line_diff(pool, x, y),
                        (Some(_), None) => r.kind = RowKind::Removed,
                        _ => r.kind = RowKind::Added,
                    }
                    rows.push(r);
                }
            }
        }
    }
    PairDiff { from, to, rows }
}

fn row(kind: RowKind, from_pointer: Option<String>, to_pointer: Option<String>) -> DiffRow {
    DiffRow {
        kind,
        at: BreakAt::Input,
        from_pointer,
        to_pointer,
        lines: Vec::new(),
    }
}

/// Rows for the header parts at one position, matched by pointer (`b`'s order, then the parts
/// only `a` has).
fn header_rows(
    pool: &ElementPool,
    at: BreakAt,
    a: &RequestShape,
    b: &RequestShape,
    rows: &mut Vec<DiffRow>,
) {
    let pa: Vec<&HeaderPart> = a.parts_at(at).collect();
    let pb: Vec<&HeaderPart> = b.parts_at(at).collect();
    let mut push = |kind, x: Option<&HeaderPart>, y: Option<&HeaderPart>| {
        let lines = match (x, y) {
            (Some(x), Some(y)) if x.id != y.id => line_diff(pool, x.id, y.id),
            _ => Vec::new(),
        };
        rows.push(DiffRow {
            kind,
            at,
            from_pointer: x.map(|p| p.pointer.to_string()),
            to_pointer: y.map(|p| p.pointer.to_string()),
            lines,
        });
    };
    // Parts at the same position are matched by kind (a Lite `/input/0` tool list stands for
    // the standard `/tools` one), so first by pointer, then the rest in order.
    let mut unmatched_a: Vec<&HeaderPart> = pa
        .iter()
        .copied()
        .filter(|x| !pb.iter().any(|y| y.pointer == x.pointer))
        .collect();
    for y in &pb {
        match pa.iter().find(|x| x.pointer == y.pointer) {
            Some(x) => {
                let kind = if x.id == y.id {
                    RowKind::Same
                } else {
                    RowKind::Changed
                };
                push(kind, Some(x), Some(y));
            }
            None if is_list(y) && unmatched_a.first().is_some_and(|x| is_list(x)) => {
                let x = unmatched_a.remove(0);
                push(RowKind::Changed, Some(x), Some(y));
            }
            None => push(RowKind::Added, None, Some(y)),
        }
    }
    for x in unmatched_a {
        push(RowKind::Removed, Some(x), None);
    }
}

/// A tool list or instructions element, whichever dialect carries it.
fn is_list(part: &HeaderPart) -> bool {
    matches!(
        &*part.pointer,
        "/tools" | "/input/0" | "/instructions" | "/input/1"
    )
}

/// Line diff of the pretty JSON of two elements (bounded: [`crate::core::seq_diff`]).
fn line_diff(pool: &ElementPool, x: ElementId, y: ElementId) -> Vec<LineChange> {
    let old = serde_json::to_string_pretty(pool.value(x)).unwrap_or_default();
    let new = serde_json::to_string_pretty(pool.value(y)).unwrap_or_default();
    let old: Vec<&str> = old.lines().collect();
    let new: Vec<&str> = new.lines().collect();
    let line = |tag: &'static str, text: &str| LineChange {
        tag,
        text: text.to_string(),
    };
    let mut out = Vec::new();
    for op in diff_ops(&old, &new) {
        match op {
            DiffOp::Equal { old_index, len, .. } => out.extend(
                old[old_index..old_index + len]
                    .iter()
                    .map(|t| line("equal", t)),
            ),
            DiffOp::Delete {
                old_index, old_len, ..
            } => out.extend(
                old[old_index..old_index + old_len]
                    .iter()
                    .map(|t| line("delete", t)),
            ),
            DiffOp::Insert {
                new_index, new_len, ..
            } => out.extend(
                new[new_index..new_index + new_len]
                    .iter()
                    .map(|t| line("insert", t)),
            ),
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                out.extend(
                    old[old_index..old_index + old_len]
                        .iter()
                        .map(|t| line("delete", t)),
                );
                out.extend(
                    new[new_index..new_index + new_len]
                        .iter()
                        .map(|t| line("insert", t)),
                );
            }
        }
    }
    out
}
