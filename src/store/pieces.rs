//! How a JSON-object request body is cut for storage (since schema 3): into *pieces*, exact
//! slices of the body's bytes that are content-addressed texts (stored once per database,
//! packed), plus the `input` array's items (texts too, stored once each). Every top-level value of 32 bytes or more is a
//! piece of its own (`tools`, `instructions`, `prompt_cache_key`, …), and so is every such member
//! of a top-level object (`client_metadata`, `text`, …); the bytes between them — braces, keys,
//! commas, whitespace and the short values — are pieces too. Real Codex sends `client_metadata`
//! with its keys in a different order on every request: only the short pieces holding its keys
//! differ, the tool list and every long value are shared.
//!
//! Concatenating the pieces, with the items at the input marker, gives back the exact bytes:
//! key order, duplicate keys, whitespace and number spellings are kept. A body that is not a JSON
//! object (or not UTF-8) is kept verbatim instead; an `input` array whose own framing is not
//! compact (`[a,b]`) is kept as an ordinary piece, unsplit.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

/// Values shorter than this stay inside the surrounding piece (keys, punctuation, `true`, …).
const MIN_PIECE: usize = 32;

/// One part of a cut body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece<'a> {
    /// Exact bytes of the body.
    Text(&'a str),
    /// The `input` array, rebuilt as `[` + items joined by `,` + `]`.
    Input,
}

/// A JSON-object body cut into pieces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CutBody<'a> {
    /// The pieces in order; at most one is [`Piece::Input`].
    pub pieces: Vec<Piece<'a>>,
    /// The input items' exact bytes, in order (empty when there is no input marker).
    pub items: Vec<&'a str>,
    /// The effective (last) top-level `model` string, when there is one.
    pub model: Option<String>,
}

/// A JSON object's entries in order, duplicates included, each value as its exact text.
struct Entries<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);

impl<'de> Deserialize<'de> for Entries<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EntriesVisitor;
        impl<'de> Visitor<'de> for EntriesVisitor {
            type Value = Entries<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(entry) = map.next_entry::<Cow<'de, str>, &'de RawValue>()? {
                    out.push(entry);
                }
                Ok(Entries(out))
            }
        }
        deserializer.deserialize_map(EntriesVisitor)
    }
}

/// Where `part` (a slice of `base`) sits in `base`; None when it is not inside it.
fn span(base: &str, part: &str) -> Option<Range<usize>> {
    let start = (part.as_ptr() as usize).checked_sub(base.as_ptr() as usize)?;
    let end = start.checked_add(part.len())?;
    (end <= base.len()).then_some(start..end)
}

/// The items of a compact array (`[a,b,c]`, no whitespace between), or None.
fn compact_items(array: &str) -> Option<Vec<&str>> {
    let items: Vec<&RawValue> = serde_json::from_str(array).ok()?;
    let items: Vec<&str> = items.iter().map(|raw| raw.get()).collect();
    let mut expected = 1;
    for item in &items {
        let at = span(array, item)?;
        let before = if at.start == 1 { "[" } else { "," };
        if at.start != expected || array.get(at.start - 1..at.start) != Some(before) {
            return None;
        }
        expected = at.end + 1;
    }
    let rendered = if items.is_empty() { 2 } else { expected };
    (rendered == array.len()).then_some(items)
}

/// Collects pieces: the gap before each long value, then the value.
struct Cutter<'a> {
    body: &'a str,
    cursor: usize,
    pieces: Vec<Piece<'a>>,
}

impl<'a> Cutter<'a> {
    fn cut(&mut self, at: Range<usize>, piece: Piece<'a>) -> Option<()> {
        let gap = self.body.get(self.cursor..at.start)?;
        if !gap.is_empty() {
            self.pieces.push(Piece::Text(gap));
        }
        self.pieces.push(piece);
        self.cursor = at.end;
        Some(())
    }

    fn value(&mut self, raw: &'a str) -> Option<()> {
        if raw.len() >= MIN_PIECE {
            self.cut(span(self.body, raw)?, Piece::Text(raw))?;
        }
        Some(())
    }
}

/// Cuts a body into pieces; None when it is not a JSON object (keep it verbatim).
pub fn cut(bytes: &[u8]) -> Option<CutBody<'_>> {
    let body = std::str::from_utf8(bytes).ok()?;
    let Entries(entries) = serde_json::from_str(body).ok()?;
    let input_at = entries.iter().rposition(|(key, _)| key == "input");
    let model = entries
        .iter()
        .rev()
        .find(|(key, _)| key == "model")
        .and_then(|(_, raw)| serde_json::from_str::<String>(raw.get()).ok());
    let mut cutter = Cutter {
        body,
        cursor: 0,
        pieces: Vec::new(),
    };
    let mut items = Vec::new();
    for (index, (_, raw)) in entries.iter().enumerate() {
        let raw = raw.get();
        if Some(index) == input_at
            && let Some(list) = compact_items(raw)
        {
            cutter.cut(span(body, raw)?, Piece::Input)?;
            items = list;
        } else if raw.starts_with('{') {
            let Entries(members) = serde_json::from_str(raw).ok()?;
            for (_, member) in &members {
                cutter.value(member.get())?;
            }
        } else {
            cutter.value(raw)?;
        }
    }
    let rest = body.get(cutter.cursor..)?;
    if !rest.is_empty() {
        cutter.pieces.push(Piece::Text(rest));
    }
    Some(CutBody {
        pieces: cutter.pieces,
        items,
        model,
    })
}

/// The body from its pieces' texts (`None` = the input marker) and its items.
pub fn join<S: AsRef<str>>(pieces: &[Option<S>], items: &[S]) -> Vec<u8> {
    let items_len: usize = items.iter().map(|i| i.as_ref().len() + 1).sum();
    let len: usize = pieces
        .iter()
        .map(|p| p.as_ref().map_or(items_len + 1, |t| t.as_ref().len()))
        .sum();
    let mut out = Vec::with_capacity(len);
    for piece in pieces {
        match piece {
            Some(text) => out.extend_from_slice(text.as_ref().as_bytes()),
            None => {
                out.push(b'[');
                for (k, item) in items.iter().enumerate() {
                    if k > 0 {
                        out.push(b',');
                    }
                    out.extend_from_slice(item.as_ref().as_bytes());
                }
                out.push(b']');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(body: &str) -> Vec<u8> {
        let Some(cut) = cut(body.as_bytes()) else {
            return body.as_bytes().to_vec();
        };
        let pieces: Vec<Option<&str>> = cut
            .pieces
            .iter()
            .map(|p| match p {
                Piece::Text(t) => Some(*t),
                Piece::Input => None,
            })
            .collect();
        join(&pieces, &cut.items)
    }

    #[test]
    fn long_values_and_object_members_are_pieces_of_their_own() {
        let long = "x".repeat(40);
        let body = format!(
            r#"{{"model":"m","input":[{{"a":1}},2],"tools":["{long}"],"meta":{{"b":"{long}","c":1}}}}"#
        );
        let got = cut(body.as_bytes()).map(|c| (c.pieces, c.items, c.model));
        let tools = format!(r#"["{long}"]"#);
        let quoted = format!(r#""{long}""#);
        assert_eq!(
            got,
            Some((
                vec![
                    Piece::Text(r#"{"model":"m","input":"#),
                    Piece::Input,
                    Piece::Text(r#","tools":"#),
                    Piece::Text(&tools),
                    Piece::Text(r#","meta":{"b":"#),
                    Piece::Text(&quoted),
                    Piece::Text(r#","c":1}}"#),
                ],
                vec![r#"{"a":1}"#, "2"],
                Some("m".to_string())
            ))
        );
        assert_eq!(round_trip(&body), body.as_bytes());
    }

    #[test]
    fn every_spelling_comes_back_exactly() {
        let long = "y".repeat(50);
        for body in [
            "{}".to_string(),
            " {\n  \"input\" : [ 1 , 2 ],\n  \"a\": 1.50e3 \n}\n".to_string(),
            format!(r#"{{"input":[],"a":"{long}","a":"{long}2","input":[3,{{"k":"{long}"}}]}}"#),
            format!(r#"{{"meta":{{"z":"{long}","a":"\u00e9{long}"}},"input":"text"}}"#),
            r#"{"model":1,"model":"second"}"#.to_string(),
        ] {
            assert_eq!(
                String::from_utf8_lossy(&round_trip(&body)),
                body,
                "round trip of {body:?}"
            );
        }
    }

    #[test]
    fn only_compact_input_arrays_are_split_and_non_objects_are_not_cut() {
        assert_eq!(compact_items("[]"), Some(vec![]));
        assert_eq!(compact_items("[1,{\"a\":2}]"), Some(vec!["1", "{\"a\":2}"]));
        assert_eq!(compact_items("[ 1]"), None);
        assert_eq!(compact_items("[1 ,2]"), None);
        assert_eq!(compact_items("[1,2 ]"), None);
        assert_eq!(compact_items("[ ]"), None);
        assert_eq!(cut(b"[1,2]"), None);
        assert_eq!(cut(b"not json"), None);
        assert_eq!(cut(b"{\"a\":\xff}"), None);
        let dup = cut(br#"{"model":"a","model":"b"}"#).map(|c| c.model);
        assert_eq!(dup, Some(Some("b".to_string())));
    }
}
