//! Structural diff of JSON values shown side by side: the values are laid out as pretty-printed
//! rows on one shared grid, so the same path sits on the same row in every column. Object
//! members are matched by key (in order of first appearance); array items by identity (type,
//! role, call id, name — not by position or content) with a Myers diff over those keys, so an
//! item inserted at the front lines up the rest. Each cell is marked against the column to its
//! left: added, removed (the row is a placeholder in the column that lacks it), changed (a leaf
//! whose value differs), or the same. Punctuation (commas) never counts as a difference.
//! Cost: linear in the size of the values plus the Myers cost of each array's key sequence
//! (bounded: [`super::seq_diff`]).

use serde_json::Value;
use similar::DiffOp;

use super::seq_diff::diff_ops;

use super::json::JsonMap;

/// How a cell compares with the same row in the column to its left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// Equal (or the first column).
    Same,
    /// Present here, absent on the left.
    Added,
    /// Absent here (a placeholder), present on the left.
    Removed,
    /// A leaf whose value differs from the left.
    Changed,
}

/// One column's rows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ColumnRows {
    /// Row text (indented pretty JSON with its comma), or None where this column lacks the row.
    pub text: Vec<Option<Box<str>>>,
    /// Per row: how it compares with the column to the left.
    pub marks: Vec<Mark>,
    /// Per row: the JSON path in this column's own value (`input[2].content`), where present.
    pub paths: Vec<Option<Box<str>>>,
}

/// Several values laid out on one row grid.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Aligned {
    /// One entry per value, in order.
    pub columns: Vec<ColumnRows>,
    /// First row of each run of rows where some column differs from its left neighbour.
    pub differences: Vec<usize>,
}

impl Aligned {
    /// Number of rows (the same in every column).
    pub fn row_count(&self) -> usize {
        self.columns.first().map_or(0, |c| c.text.len())
    }

    /// The first row of column `column` whose path is `path` or lies under it.
    pub fn row_of_path(&self, column: usize, path: &str) -> Option<usize> {
        let paths = &self.columns.get(column)?.paths;
        paths.iter().position(|p| {
            p.as_deref().is_some_and(|p| {
                p == path
                    || p.strip_prefix(path)
                        .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
            })
        })
    }
}

/// Lays out JSON objects (None: the column shows nothing) on one grid and marks the
/// differences; the same as [`align`] on `Value::Object`s, without copying them.
pub fn align_objects(maps: &[Option<&JsonMap>]) -> Aligned {
    let mut builder = Builder {
        columns: vec![ColumnRows::default(); maps.len()],
    };
    let paths: Vec<String> = maps.iter().map(|_| String::new()).collect();
    let present: Vec<Option<String>> = maps.iter().map(|m| m.map(|_| String::new())).collect();
    let cells = |text: &str| maps.iter().map(|m| m.map(|_| text.to_string())).collect();
    builder.row(cells("{"), &present);
    builder.members(maps, &paths, 0);
    builder.row(cells("}"), &present);
    let mut aligned = Aligned {
        columns: builder.columns,
        differences: Vec::new(),
    };
    mark(&mut aligned);
    aligned
}

/// Lays out `values` (None: the column shows nothing) on one grid and marks the differences.
pub fn align(values: &[Option<&Value>]) -> Aligned {
    let mut builder = Builder {
        columns: vec![ColumnRows::default(); values.len()],
    };
    let labels: Vec<Label<'_>> = values.iter().map(|_| Label::None).collect();
    let paths: Vec<String> = values.iter().map(|_| String::new()).collect();
    let last = vec![true; values.len()];
    builder.node(values, &labels, &paths, &last, 0);
    let mut aligned = Aligned {
        columns: builder.columns,
        differences: Vec::new(),
    };
    mark(&mut aligned);
    aligned
}

/// What precedes a value on its row.
#[derive(Clone, Copy)]
enum Label<'a> {
    None,
    Key(&'a str),
}

struct Builder {
    columns: Vec<ColumnRows>,
}

/// Compares two leaf cells by value (not by comma).
fn same_leaf(a: &str, b: &str) -> bool {
    a.trim_end_matches(',') == b.trim_end_matches(',')
}

impl Builder {
    /// Emits one row: `cells[c]` is the text for column c (None: absent).
    fn row(&mut self, cells: Vec<Option<String>>, paths: &[Option<String>]) {
        for (c, (cell, path)) in cells.into_iter().zip(paths).enumerate() {
            let column = &mut self.columns[c];
            column.text.push(cell.map(String::into_boxed_str));
            column.marks.push(Mark::Same);
            column.paths.push(path.clone().map(String::into_boxed_str));
        }
    }

    /// The member rows of the objects `maps` (one per key of any of them).
    fn members(&mut self, maps: &[Option<&JsonMap>], paths: &[String], depth: usize) {
        let keys = union_keys(maps);
        let child_last = last_flags(keys.len(), maps, |m, i| m.contains_key(keys[i]));
        for (i, key) in keys.iter().enumerate() {
            let child: Vec<Option<&Value>> =
                maps.iter().map(|m| m.and_then(|m| m.get(*key))).collect();
            let child_labels: Vec<Label<'_>> = child.iter().map(|_| Label::Key(key)).collect();
            let child_paths: Vec<String> = paths
                .iter()
                .map(|p| {
                    if p.is_empty() {
                        (*key).to_string()
                    } else {
                        format!("{p}.{key}")
                    }
                })
                .collect();
            let flags: Vec<bool> = child_last.iter().map(|l| *l == Some(i)).collect();
            self.node(&child, &child_labels, &child_paths, &flags, depth + 1);
        }
    }

    fn node(
        &mut self,
        values: &[Option<&Value>],
        labels: &[Label<'_>],
        paths: &[String],
        last: &[bool],
        depth: usize,
    ) {
        let indent = "  ".repeat(depth);
        let prefix = |c: usize| match labels[c] {
            Label::None => indent.clone(),
            Label::Key(k) => format!("{indent}{}: ", Value::String(k.to_string())),
        };
        let comma = |c: usize| if last[c] { "" } else { "," };
        let present_paths: Vec<Option<String>> = values
            .iter()
            .zip(paths)
            .map(|(v, p)| v.map(|_| p.clone()))
            .collect();
        let all_objects = values.iter().flatten().all(|v| v.is_object());
        let all_arrays = values.iter().flatten().all(|v| v.is_array());
        let any = values.iter().any(Option::is_some);
        if any
            && all_objects
            && values
                .iter()
                .flatten()
                .any(|v| v.as_object().is_some_and(|m| !m.is_empty()))
        {
            let maps: Vec<Option<&JsonMap>> = values
                .iter()
                .map(|v| v.and_then(Value::as_object))
                .collect();
            let open = values
                .iter()
                .enumerate()
                .map(|(c, v)| v.map(|_| format!("{}{{", prefix(c))))
                .collect();
            self.row(open, &present_paths);
            self.members(&maps, paths, depth);
            let close = values
                .iter()
                .enumerate()
                .map(|(c, v)| v.map(|_| format!("{indent}}}{}", comma(c))))
                .collect();
            self.row(close, &present_paths);
        } else if any
            && all_arrays
            && values
                .iter()
                .flatten()
                .any(|v| v.as_array().is_some_and(|a| !a.is_empty()))
        {
            let arrays: Vec<Option<&Vec<Value>>> =
                values.iter().map(|v| v.and_then(Value::as_array)).collect();
            let open = values
                .iter()
                .enumerate()
                .map(|(c, v)| v.map(|_| format!("{}[", prefix(c))))
                .collect();
            self.row(open, &present_paths);
            let slots = align_items(&arrays);
            let child_last: Vec<Option<usize>> = (0..values.len())
                .map(|c| slots.iter().rposition(|s| s[c].is_some()))
                .collect();
            for (i, slot) in slots.iter().enumerate() {
                let child: Vec<Option<&Value>> = arrays
                    .iter()
                    .zip(slot)
                    .map(|(a, idx)| a.zip(*idx).and_then(|(a, j)| a.get(j)))
                    .collect();
                let child_labels: Vec<Label<'_>> = child.iter().map(|_| Label::None).collect();
                let child_paths: Vec<String> = paths
                    .iter()
                    .zip(slot)
                    .map(|(p, idx)| format!("{p}[{}]", idx.unwrap_or(0)))
                    .collect();
                let flags: Vec<bool> = child_last.iter().map(|l| *l == Some(i)).collect();
                self.node(&child, &child_labels, &child_paths, &flags, depth + 1);
            }
            let close = values
                .iter()
                .enumerate()
                .map(|(c, v)| v.map(|_| format!("{indent}]{}", comma(c))))
                .collect();
            self.row(close, &present_paths);
        } else {
            let cells = values
                .iter()
                .enumerate()
                .map(|(c, v)| v.map(|v| format!("{}{}{}", prefix(c), compact(v), comma(c))))
                .collect();
            self.row(cells, &present_paths);
        }
    }
}

fn compact(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// Per column, the index of the last entry (of `n`) it has.
fn last_flags<T>(
    n: usize,
    columns: &[Option<T>],
    has: impl Fn(&T, usize) -> bool,
) -> Vec<Option<usize>> {
    columns
        .iter()
        .map(|c| c.as_ref().and_then(|c| (0..n).rev().find(|&i| has(c, i))))
        .collect()
}

/// The keys of all maps, each once, in order of first appearance (a key new in a later map is
/// placed after the key it follows there).
fn union_keys<'a>(maps: &[Option<&'a JsonMap>]) -> Vec<&'a str> {
    let mut keys: Vec<&'a str> = Vec::new();
    for map in maps.iter().flatten() {
        let mut insert_at = 0;
        for key in map.keys() {
            match keys.iter().position(|k| k == key) {
                Some(i) => insert_at = i + 1,
                None => {
                    keys.insert(insert_at, key.as_str());
                    insert_at += 1;
                }
            }
        }
    }
    keys
}

/// The identity of an array item: what it is, not what it says (so edited items line up).
fn item_key(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let field = |name: &str| map.get(name).and_then(Value::as_str).unwrap_or("");
            format!(
                "{}\u{1}{}\u{1}{}\u{1}{}",
                field("type"),
                field("role"),
                field("call_id"),
                field("name")
            )
        }
        other => compact(other),
    }
}

/// Lines up the items of several arrays: each slot holds, per column, the index of its item.
fn align_items(arrays: &[Option<&Vec<Value>>]) -> Vec<Vec<Option<usize>>> {
    let n = arrays.len();
    let mut slots: Vec<Vec<Option<usize>>> = Vec::new();
    let mut slot_keys: Vec<String> = Vec::new();
    for (c, array) in arrays.iter().enumerate() {
        let Some(array) = array else { continue };
        let keys: Vec<String> = array.iter().map(item_key).collect();
        let mut merged: Vec<Vec<Option<usize>>> = Vec::with_capacity(slots.len().max(keys.len()));
        let mut merged_keys: Vec<String> = Vec::with_capacity(merged.capacity());
        let take_old = |merged: &mut Vec<Vec<Option<usize>>>,
                        mk: &mut Vec<String>,
                        i: usize,
                        j: Option<usize>| {
            let mut slot = slots[i].clone();
            slot[c] = j;
            merged.push(slot);
            mk.push(slot_keys[i].clone());
        };
        let new_slot = |j: usize| {
            let mut slot = vec![None; n];
            slot[c] = Some(j);
            slot
        };
        for op in diff_ops(&slot_keys, &keys) {
            match op {
                DiffOp::Equal {
                    old_index,
                    new_index,
                    len,
                } => {
                    for d in 0..len {
                        take_old(
                            &mut merged,
                            &mut merged_keys,
                            old_index + d,
                            Some(new_index + d),
                        );
                    }
                }
                DiffOp::Delete {
                    old_index, old_len, ..
                } => {
                    for d in 0..old_len {
                        take_old(&mut merged, &mut merged_keys, old_index + d, None);
                    }
                }
                DiffOp::Insert {
                    new_index, new_len, ..
                } => {
                    for d in 0..new_len {
                        merged.push(new_slot(new_index + d));
                        merged_keys.push(keys[new_index + d].clone());
                    }
                }
                DiffOp::Replace {
                    old_index,
                    old_len,
                    new_index,
                    new_len,
                } => {
                    for d in 0..old_len {
                        take_old(&mut merged, &mut merged_keys, old_index + d, None);
                    }
                    for d in 0..new_len {
                        merged.push(new_slot(new_index + d));
                        merged_keys.push(keys[new_index + d].clone());
                    }
                }
            }
        }
        slots = merged;
        slot_keys = merged_keys;
    }
    slots
}

/// Marks each cell against the column to its left and collects the runs of differences.
fn mark(aligned: &mut Aligned) {
    let rows = aligned.row_count();
    let mut differs = vec![false; rows];
    for c in 1..aligned.columns.len() {
        let (left, right) = aligned.columns.split_at_mut(c);
        let (left, right) = (&left[c - 1], &mut right[0]);
        let cells = left.text.iter().zip(&right.text).zip(&mut right.marks);
        for (((l, r), slot), differ) in cells.zip(differs.iter_mut()) {
            let m = match (l, r) {
                (None, Some(_)) => Mark::Added,
                (Some(_), None) => Mark::Removed,
                (Some(a), Some(b)) if !same_leaf(a, b) && !is_bracket(a) && !is_bracket(b) => {
                    Mark::Changed
                }
                _ => Mark::Same,
            };
            *slot = m;
            *differ |= m != Mark::Same;
        }
    }
    aligned.differences = (0..rows)
        .filter(|&r| differs[r] && (r == 0 || !differs[r - 1]))
        .collect();
}

/// An opening or closing line of a container (never a difference by itself).
fn is_bracket(text: &str) -> bool {
    let t = text.trim_end_matches(',');
    t.ends_with('{') || t.ends_with('[') || t.trim_start() == "}" || t.trim_start() == "]"
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    /// The grid as lines `text|mark` per column, for whole-value comparison.
    fn grid(aligned: &Aligned) -> Vec<Vec<String>> {
        aligned
            .columns
            .iter()
            .map(|c| {
                c.text
                    .iter()
                    .zip(&c.marks)
                    .map(|(t, m)| format!("{}|{m:?}", t.as_deref().unwrap_or("·")))
                    .collect()
            })
            .collect()
    }

    #[test]
    fn a_dropped_key_is_a_placeholder_and_an_inserted_item_lines_up_the_rest() {
        let standard = json!({"model": "m", "input": [{"type": "message", "role": "user", "text": "hi"}], "tools": [{"type": "function", "name": "shell"}], "stream": true});
        let lite = json!({"model": "m", "input": [{"type": "additional_tools", "role": "developer"}, {"type": "message", "role": "user", "text": "hello"}], "stream": true});
        let aligned = align(&[Some(&standard), Some(&lite)]);
        assert_eq!(
            grid(&aligned),
            vec![
                vec![
                    "{|Same",
                    "  \"model\": \"m\",|Same",
                    "  \"input\": [|Same",
                    "·|Same",
                    "·|Same",
                    "·|Same",
                    "·|Same",
                    "    {|Same",
                    "      \"type\": \"message\",|Same",
                    "      \"role\": \"user\",|Same",
                    "      \"text\": \"hi\"|Same",
                    "    }|Same",
                    "  ],|Same",
                    "  \"tools\": [|Same",
                    "    {|Same",
                    "      \"type\": \"function\",|Same",
                    "      \"name\": \"shell\"|Same",
                    "    }|Same",
                    "  ],|Same",
                    "  \"stream\": true|Same",
                    "}|Same",
                ],
                vec![
                    "{|Same",
                    "  \"model\": \"m\",|Same",
                    "  \"input\": [|Same",
                    "    {|Added",
                    "      \"type\": \"additional_tools\",|Added",
                    "      \"role\": \"developer\"|Added",
                    "    },|Added",
                    "    {|Same",
                    "      \"type\": \"message\",|Same",
                    "      \"role\": \"user\",|Same",
                    "      \"text\": \"hello\"|Changed",
                    "    }|Same",
                    "  ],|Same",
                    "·|Removed",
                    "·|Removed",
                    "·|Removed",
                    "·|Removed",
                    "·|Removed",
                    "·|Removed",
                    "  \"stream\": true|Same",
                    "}|Same",
                ],
            ]
            .into_iter()
            .map(|c| c.into_iter().map(String::from).collect::<Vec<_>>())
            .collect::<Vec<_>>()
        );
        assert_eq!(aligned.differences, vec![3, 10, 13]);
        assert_eq!(aligned.row_of_path(1, "input[1].text"), Some(10));
        assert_eq!(aligned.row_of_path(0, "tools"), Some(13));
    }

    #[test]
    fn a_trailing_comma_is_not_a_difference() {
        let a = json!({"a": 1, "b": 2});
        let b = json!({"a": 1});
        let aligned = align(&[Some(&a), Some(&b)]);
        assert_eq!(
            aligned.columns[1].marks,
            vec![Mark::Same, Mark::Same, Mark::Removed, Mark::Same]
        );
        assert_eq!(aligned.differences, vec![2]);
    }

    #[test]
    fn three_columns_are_marked_against_their_left_neighbour() {
        let a = json!({"x": 1});
        let b = json!({"x": 2});
        let c = json!({"x": 2, "y": true});
        let aligned = align(&[Some(&a), Some(&b), Some(&c)]);
        let marks: Vec<Vec<Mark>> = aligned.columns.iter().map(|c| c.marks.clone()).collect();
        assert_eq!(
            marks,
            vec![
                vec![Mark::Same; 4],
                vec![Mark::Same, Mark::Changed, Mark::Same, Mark::Same],
                vec![Mark::Same, Mark::Same, Mark::Added, Mark::Same],
            ]
        );
    }

    #[test]
    fn objects_align_the_same_as_values() {
        let a = json!({"a": [1, {"b": null}], "c": "x"});
        let b = json!({"a": [1], "d": {}});
        let maps = [a.as_object(), b.as_object()];
        assert_eq!(align_objects(&maps), align(&[Some(&a), Some(&b)]));
    }
}
