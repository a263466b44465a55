//! A pair's item-aligned diff ([`PairDiff`], `core/prefix/pair_diff.rs`) flattened once, on the
//! worker, into the lines the view draws: runs of unchanged elements collapsed to one line, a
//! header per added / removed / changed element, its line diff, and a banner at the break. The
//! view then draws only the lines in sight and scrolls to the first difference by index.
//!
//! The break's pointer is marked exactly: each line of an element's pretty JSON gets its own
//! JSON pointer ([`PathTracker`], following the earlier body through the equal and deleted lines
//! and the later body through the equal and inserted ones), and a changed line is marked when
//! its pointer is the break's or lies inside it (`/tools/3` marks every line of that tool). An
//! element added or removed whole is marked on its header when its pointer is inside the
//! break's.

use crate::core::format::grouped;
use crate::core::prefix::{PairDiff, RowKind};

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
    /// Where a long deleted / inserted line pair differs: the character it differs from, a little
    /// context, and the two differing parts (a long string's change is often far off screen).
    Detail,
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
    /// A changed line whose JSON pointer is the break's or inside it (or the header of an
    /// element added or removed whole at the break's pointer).
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

/// One open container of a pretty-printed JSON value.
#[derive(Debug, Clone)]
struct Open {
    /// Its pointer.
    path: String,
    /// An array (members are counted) or an object (members are keyed).
    array: bool,
    /// The next element's index, for an array.
    next: usize,
}

/// Follows the lines of one value's `serde_json::to_string_pretty` output in order and gives
/// each line its JSON pointer: a member or element line the pointer of that member (`/a/b`,
/// `/a/0`), a closing bracket its container's.
#[derive(Debug, Clone)]
pub struct PathTracker {
    base: String,
    stack: Vec<Open>,
}

/// `key` escaped for a JSON pointer (`~` as `~0`, `/` as `~1`).
fn escape_key(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Splits `"key": rest` into the key's value and `rest`; None when the line does not start
/// with a JSON string followed by `": "`.
fn member(line: &str) -> Option<(String, &str)> {
    let body = line.strip_prefix('"')?;
    let mut escaped = false;
    for (i, c) in body.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => {
                let literal = &line[..i + 2];
                let rest = line[i + 2..].strip_prefix(": ")?;
                let key: String = serde_json::from_str(literal).ok()?;
                return Some((key, rest));
            }
            _ => {}
        }
    }
    None
}

impl PathTracker {
    /// A tracker for a value at pointer `base` (`/tools`, `/input/3`).
    pub fn new(base: &str) -> Self {
        Self {
            base: base.to_string(),
            stack: Vec::new(),
        }
    }

    /// The pointer of the next line, `line` (one line of the pretty output, in order).
    pub fn next(&mut self, line: &str) -> String {
        let text = line.trim_start();
        let value = text.strip_suffix(',').unwrap_or(text);
        if matches!(value, "}" | "]") {
            return match self.stack.pop() {
                Some(open) => open.path,
                None => self.base.clone(),
            };
        }
        let (path, value) = match self.stack.last_mut() {
            None => (self.base.clone(), value),
            Some(open) if open.array => {
                let path = format!("{}/{}", open.path, open.next);
                open.next += 1;
                (path, value)
            }
            Some(open) => match member(value) {
                Some((key, rest)) => (format!("{}/{}", open.path, escape_key(&key)), rest),
                None => (open.path.clone(), value),
            },
        };
        if matches!(value, "{" | "[") {
            self.stack.push(Open {
                path: path.clone(),
                array: value == "[",
                next: 0,
            });
        }
        path
    }
}

impl PairView {
    /// Flattens `diff`; `break_path` (the JSON pointer of the divergence) and `causes` describe
    /// where and why the prefix broke.
    pub fn new(diff: &PairDiff, break_path: Option<&str>, causes: &str) -> Self {
        let at_pointer_path = |path: &str| break_path.is_some_and(|b| inside(path, b));
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
            let at_break = break_path.is_some_and(|path| {
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
            // A whole element added or removed: its header stands for its lines.
            let whole = row.lines.is_empty()
                && [row.from_pointer.as_deref(), row.to_pointer.as_deref()]
                    .into_iter()
                    .flatten()
                    .any(|p| at_pointer_path(p) || break_path.is_some_and(|b| inside(b, p)));
            lines.push(PairLine {
                kind: LineKind::Header,
                text: format!("{kind} {} {places}", row.at.as_str()),
                at_break,
                at_pointer: at_break && whole,
            });
            let mut old = PathTracker::new(row.from_pointer.as_deref().unwrap_or(element));
            let mut new = PathTracker::new(row.to_pointer.as_deref().unwrap_or(element));
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
                let path = match kind {
                    LineKind::Delete => old.next(&change.text),
                    LineKind::Insert => new.next(&change.text),
                    _ => {
                        old.next(&change.text);
                        new.next(&change.text)
                    }
                };
                let at_pointer = at_break && kind != LineKind::Same && at_pointer_path(&path);
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
            lines: with_details(lines),
            first_difference,
        }
    }
}

/// Lines longer than this get a [`LineKind::Detail`] line when one deleted line is replaced by
/// one inserted line.
const DETAIL_FROM_CHARS: usize = 100;
/// Characters of common context shown before the difference.
const DETAIL_CONTEXT_CHARS: usize = 40;
/// Characters of each differing part shown.
const DETAIL_PART_CHARS: usize = 160;

/// `lines` with a [`LineKind::Detail`] line after each long line that one deleted line and one
/// inserted line (in that order, a run of exactly one each) replace.
fn with_details(lines: Vec<PairLine>) -> Vec<PairLine> {
    let mut out = Vec::with_capacity(lines.len());
    let mut i = 0;
    while i < lines.len() {
        let line = &lines[i];
        let single_pair = line.kind == LineKind::Delete
            && lines.get(i + 1).is_some_and(|l| l.kind == LineKind::Insert)
            && (i == 0 || lines[i - 1].kind != LineKind::Delete)
            && lines.get(i + 2).is_none_or(|l| l.kind != LineKind::Insert);
        if single_pair {
            let (old, new) = (&lines[i], &lines[i + 1]);
            out.push(old.clone());
            out.push(new.clone());
            if let Some(text) = detail(&old.text, &new.text) {
                out.push(PairLine {
                    kind: LineKind::Detail,
                    text,
                    at_break: old.at_break || new.at_break,
                    at_pointer: false,
                });
            }
            i += 2;
            continue;
        }
        out.push(line.clone());
        i += 1;
    }
    out
}

/// Where `old` and `new` (a deleted and an inserted line, each after its one-character sign)
/// differ, when either is long: `  ↳ from character N: …context[-old part-]{+new part+}` (an
/// empty part left out).
fn detail(old: &str, new: &str) -> Option<String> {
    let old: Vec<char> = old.chars().skip(1).collect();
    let new: Vec<char> = new.chars().skip(1).collect();
    if old.len().max(new.len()) <= DETAIL_FROM_CHARS {
        return None;
    }
    let prefix = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let rest = old.len().min(new.len()) - prefix;
    let suffix = old
        .iter()
        .rev()
        .zip(new.iter().rev())
        .take(rest)
        .take_while(|(a, b)| a == b)
        .count();
    let context: String = old[prefix.saturating_sub(DETAIL_CONTEXT_CHARS)..prefix]
        .iter()
        .collect();
    let part = |chars: &[char]| {
        let shown: String = chars.iter().take(DETAIL_PART_CHARS).collect();
        if chars.len() > DETAIL_PART_CHARS {
            format!("{shown}… ({} characters)", chars.len())
        } else {
            shown
        }
    };
    let removed = part(&old[prefix..old.len() - suffix]);
    let added = part(&new[prefix..new.len() - suffix]);
    let ellipsis = if prefix > DETAIL_CONTEXT_CHARS {
        "…"
    } else {
        ""
    };
    let removed = if removed.is_empty() {
        String::new()
    } else {
        format!("[-{removed}-]")
    };
    let added = if added.is_empty() {
        String::new()
    } else {
        format!("{{+{added}+}}")
    };
    Some(format!(
        "  ↳ from character {}: {ellipsis}{context}{removed}{added}",
        grouped(prefix as u64)
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::core::prefix::{RequestMeta, Session};

    /// Every line's pointer, by walking the pretty output.
    fn paths(value: &Value, base: &str) -> Vec<(String, String)> {
        let pretty = serde_json::to_string_pretty(value).expect("pretty");
        let mut tracker = PathTracker::new(base);
        pretty
            .lines()
            .map(|line| (tracker.next(line), line.trim().to_string()))
            .collect()
    }

    #[test]
    fn each_pretty_line_gets_its_pointer() {
        let value = json!({
            "a/b": [1, {"x~": "}", "e": []}, [true]],
            "q\"k": {},
            "s": "a \"quoted\": {"
        });
        let got = paths(&value, "/tools/2");
        let want: Vec<(&str, &str)> = vec![
            ("/tools/2", "{"),
            ("/tools/2/a~1b", "\"a/b\": ["),
            ("/tools/2/a~1b/0", "1,"),
            ("/tools/2/a~1b/1", "{"),
            ("/tools/2/a~1b/1/x~0", "\"x~\": \"}\","),
            ("/tools/2/a~1b/1/e", "\"e\": []"),
            ("/tools/2/a~1b/1", "},"),
            ("/tools/2/a~1b/2", "["),
            ("/tools/2/a~1b/2/0", "true"),
            ("/tools/2/a~1b/2", "]"),
            ("/tools/2/a~1b", "],"),
            ("/tools/2/q\"k", "\"q\\\"k\": {},"),
            ("/tools/2/s", "\"s\": \"a \\\"quoted\\\": {\""),
            ("/tools/2", "}"),
        ];
        let want: Vec<(String, String)> = want
            .into_iter()
            .map(|(p, l)| (p.to_string(), l.to_string()))
            .collect();
        assert_eq!(got, want);
    }

    fn tool(name: &str, description: &str) -> Value {
        json!({"type": "function", "name": name, "description": description,
               "parameters": {"type": "object", "properties": {}}})
    }

    fn view_of(a: &Value, b: &Value) -> PairView {
        let mut session = Session::default();
        session.push_body(a, RequestMeta::default()).expect("a");
        session.push_body(b, RequestMeta::default()).expect("b");
        let report = crate::core::ledger::compare_pair(
            &session,
            &crate::core::ledger::Counting::default(),
            0,
            1,
        );
        let diff = session.pair_diff(0, 1).expect("diff");
        PairView::new(
            &diff,
            report.divergence.as_ref().map(|d| d.pointer.as_str()),
            "tools_changed",
        )
    }

    fn marked(view: &PairView) -> Vec<(LineKind, String)> {
        view.lines
            .iter()
            .filter(|l| l.at_pointer)
            .map(|l| (l.kind, l.text.clone()))
            .collect()
    }

    #[test]
    fn a_long_changed_line_says_where_it_differs() {
        let old = format!("-   \"text\": \"{} Use the shell.\"", "a".repeat(120));
        let new = format!(
            "+   \"text\": \"{} Use the shell. Answer briefly.\"",
            "a".repeat(120)
        );
        assert_eq!(
            detail(&old, &new).as_deref(),
            Some(
                "  ↳ from character 147: …aaaaaaaaaaaaaaaaaaaaaaaaa Use the shell.{+ Answer briefly.+}"
            )
        );
        // Short lines are plain to read already.
        assert_eq!(detail("- \"a\"", "+ \"b\""), None);
        let lines = |kinds: &[(LineKind, &str)]| -> Vec<PairLine> {
            kinds
                .iter()
                .map(|(kind, text)| PairLine {
                    kind: *kind,
                    text: (*text).to_string(),
                    at_break: false,
                    at_pointer: false,
                })
                .collect()
        };
        let kinds = |lines: Vec<PairLine>| lines.iter().map(|l| l.kind).collect::<Vec<_>>();
        // One deleted line replaced by one inserted line gets the detail; runs of several do not.
        assert_eq!(
            kinds(with_details(lines(&[
                (LineKind::Delete, &old),
                (LineKind::Insert, &new)
            ]))),
            [LineKind::Delete, LineKind::Insert, LineKind::Detail]
        );
        assert_eq!(
            kinds(with_details(lines(&[
                (LineKind::Delete, &old),
                (LineKind::Delete, &old),
                (LineKind::Insert, &new)
            ]))),
            [LineKind::Delete, LineKind::Delete, LineKind::Insert]
        );
        assert_eq!(grouped(1_234_567), "1,234,567");
    }

    #[test]
    fn the_break_pointer_marks_exactly_its_lines() {
        let body = |tools: Vec<Value>| {
            json!({"model": "gpt-5.5", "tools": tools,
                   "input": [{"type": "message", "role": "user",
                              "content": [{"type": "input_text", "text": "hi"}]}]})
        };
        // Two tools whose descriptions both change: only the first one's line is the break's
        // (the last key alone would mark both).
        let a = body(vec![tool("a", "old a"), tool("b", "old b")]);
        let b = body(vec![tool("a", "new a"), tool("b", "new b")]);
        let view = view_of(&a, &b);
        assert_eq!(
            marked(&view),
            [
                (
                    LineKind::Delete,
                    "-     \"description\": \"old a\",".to_string()
                ),
                (
                    LineKind::Insert,
                    "+     \"description\": \"new a\",".to_string()
                ),
            ]
        );
        // A tool added at the end: the break points at /tools/2 and every line of it is marked,
        // nothing else.
        let a = body(vec![tool("a", "x"), tool("b", "y")]);
        let b = body(vec![tool("a", "x"), tool("b", "y"), tool("c", "z")]);
        let view = view_of(&a, &b);
        // Every inserted line of the new tool; its closing brace lines up with the old last
        // tool's (an equal line), and tool b's new `},` lies outside the pointer.
        let added = serde_json::to_string_pretty(&tool("c", "z")).expect("pretty");
        let lines: Vec<&str> = added.lines().collect();
        let want: Vec<(LineKind, String)> = lines[..lines.len() - 1]
            .iter()
            .map(|l| (LineKind::Insert, format!("+   {l}")))
            .collect();
        assert_eq!(marked(&view), want);
    }
}
