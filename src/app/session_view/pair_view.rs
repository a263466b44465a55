//! A pair's item-aligned diff ([`PairDiff`], `core/prefix/pair_diff.rs`) flattened once, on the
//! worker, into the lines the view draws: runs of unchanged elements collapsed to one line, a
//! header per added / removed / changed element, its line diff, and a banner at the break. The
//! view then draws only the lines in sight and scrolls to the first difference by index.

use crate::core::prefix::{Break, PairDiff, RowKind};

/// What a line of the pair view shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// A run of unchanged elements.
    Collapsed,
    /// An element that differs: what and where.
    Header,
    /// An unchanged line inside a changed element.
    Same,
    /// A line only in the later request.
    Insert,
    /// A line only in the earlier request.
    Delete,
    /// The break: its pointer and causes.
    Break,
}

/// One drawn line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairLine {
    /// Kind.
    pub kind: LineKind,
    /// Text.
    pub text: String,
    /// Inside the element where the prefix broke.
    pub at_break: bool,
    /// A changed line at the break's pointer (its last key), inside that element.
    pub at_pointer: bool,
}

/// The flattened diff of one pair.
#[derive(Debug, Clone, PartialEq)]
pub struct PairView {
    /// The pair (earlier, later).
    pub pair: (usize, usize),
    /// Lines in order.
    pub lines: Vec<PairLine>,
    /// Index of the first line that shows a difference (the break banner when there is one).
    pub first_difference: Option<usize>,
}

/// True when `pointer` names `element` or lies inside it.
fn inside(pointer: &str, element: &str) -> bool {
    pointer == element
        || pointer
            .strip_prefix(element)
            .is_some_and(|rest| rest.starts_with('/'))
}

impl PairView {
    /// Flattens `diff`; `brk` and `causes` describe where and why the prefix broke.
    pub fn new(diff: &PairDiff, brk: Option<&Break>, causes: &str) -> Self {
        let break_path = brk.and_then(|b| b.path.clone());
        // The last key of the pointer as it starts a pretty-printed member line (`"text":`).
        let pointer_key = break_path
            .as_deref()
            .and_then(|p| p.rsplit('/').next())
            .filter(|k| !k.is_empty() && k.parse::<usize>().is_err())
            .map(|k| format!("\"{}\":", k.replace("~1", "/").replace("~0", "~")));
        let mut lines = Vec::new();
        let mut first_difference = None;
        let mut same_run: Vec<&str> = Vec::new();
        let flush = |run: &mut Vec<&str>, lines: &mut Vec<PairLine>| {
            if let (Some(first), Some(last)) = (run.first(), run.last()) {
                let text = if run.len() == 1 {
                    format!("… 1 unchanged element ({first})")
                } else {
                    format!("… {} unchanged elements ({first} … {last})", run.len())
                };
                lines.push(PairLine {
                    kind: LineKind::Collapsed,
                    text,
                    at_break: false,
                    at_pointer: false,
                });
            }
            run.clear();
        };
        for row in &diff.rows {
            let pointer = row
                .to_pointer
                .as_deref()
                .or(row.from_pointer.as_deref())
                .unwrap_or("");
            let element = if pointer.is_empty() {
                row.at.as_str()
            } else {
                pointer
            };
            if row.kind == RowKind::Same {
                same_run.push(element);
                continue;
            }
            flush(&mut same_run, &mut lines);
            let at_break = break_path.as_deref().is_some_and(|path| {
                [row.from_pointer.as_deref(), row.to_pointer.as_deref()]
                    .into_iter()
                    .flatten()
                    .any(|p| inside(path, p))
            });
            if at_break && let Some(path) = &break_path {
                first_difference.get_or_insert(lines.len());
                lines.push(PairLine {
                    kind: LineKind::Break,
                    text: format!("» prefix broke at {path} · {causes}"),
                    at_break: true,
                    at_pointer: false,
                });
            }
            first_difference.get_or_insert(lines.len());
            let kind = match row.kind {
                RowKind::Added => "added",
                RowKind::Removed => "removed",
                _ => "changed",
            };
            let places = match (&row.from_pointer, &row.to_pointer) {
                (Some(a), Some(b)) if a == b => a.clone(),
                (Some(a), Some(b)) => format!("{a} -> {b}"),
                (Some(a), None) => a.clone(),
                (None, Some(b)) => b.clone(),
                (None, None) => row.at.as_str().to_string(),
            };
            lines.push(PairLine {
                kind: LineKind::Header,
                text: format!("{kind} {} {places}", row.at.as_str()),
                at_break,
                at_pointer: false,
            });
            for change in &row.lines {
                let kind = match change.tag {
                    "insert" => LineKind::Insert,
                    "delete" => LineKind::Delete,
                    _ => LineKind::Same,
                };
                let sign = match kind {
                    LineKind::Insert => '+',
                    LineKind::Delete => '-',
                    _ => ' ',
                };
                let at_pointer = at_break
                    && kind != LineKind::Same
                    && pointer_key
                        .as_deref()
                        .is_some_and(|key| change.text.trim_start().starts_with(key));
                lines.push(PairLine {
                    kind,
                    text: format!("{sign} {}", change.text),
                    at_break,
                    at_pointer,
                });
            }
        }
        flush(&mut same_run, &mut lines);
        Self {
            pair: (diff.from, diff.to),
            lines,
            first_difference,
        }
    }
}
