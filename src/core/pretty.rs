//! Pretty-printing of JSON text as it was sent, for the request inspector's text view: one pass
//! over the bytes that re-indents them (two spaces, `"key": value`, one element a line, `{}` and
//! `[]` for empty ones — the layout of `serde_json::to_string_pretty`) and records where each
//! line starts, with every token kept as sent (string escapes, the spelling of numbers,
//! repeated keys). No tree is built: a 2 MB body is laid out in a few milliseconds instead of
//! walking a parsed value.

use std::ops::Range;

/// Pretty-printed text and the byte ranges of its lines (without their `\n`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrettyText {
    /// The text.
    pub text: String,
    /// Byte ranges of the lines of `text`.
    pub lines: Vec<Range<usize>>,
}

/// Spaces per level.
const INDENT: usize = 2;

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Bytes that end a number or a literal (`true`, `null`).
fn ends_scalar(b: u8) -> bool {
    is_space(b) || matches!(b, b',' | b':' | b'{' | b'}' | b'[' | b']' | b'"')
}

struct Writer {
    out: Vec<u8>,
    lines: Vec<Range<usize>>,
    line_start: usize,
}

impl Writer {
    fn newline(&mut self, depth: usize) {
        self.lines.push(self.line_start..self.out.len());
        self.out.push(b'\n');
        self.line_start = self.out.len();
        self.out.resize(self.out.len() + INDENT * depth, b' ');
    }
}

/// `bytes` (one JSON value, as serde_json accepts it) re-indented, with its line index. None
/// when the bytes are not UTF-8, a string does not end or a bracket does not close: the caller
/// then pretty-prints another way.
pub fn pretty(bytes: &[u8]) -> Option<PrettyText> {
    std::str::from_utf8(bytes).ok()?;
    let mut w = Writer {
        out: Vec::with_capacity(bytes.len() + bytes.len() / 2),
        lines: Vec::new(),
        line_start: 0,
    };
    let mut depth = 0usize;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'"' => {
                let start = i;
                i += 1;
                loop {
                    match bytes.get(i)? {
                        b'"' => break,
                        b'\\' => i += 2,
                        _ => i += 1,
                    }
                }
                i += 1;
                w.out.extend_from_slice(bytes.get(start..i)?);
            }
            b'{' | b'[' => {
                let close = if b == b'{' { b'}' } else { b']' };
                let next = bytes[i + 1..]
                    .iter()
                    .position(|&c| !is_space(c))
                    .map(|k| i + 1 + k);
                w.out.push(b);
                match next {
                    Some(j) if bytes[j] == close => {
                        w.out.push(close);
                        i = j + 1;
                    }
                    _ => {
                        depth += 1;
                        w.newline(depth);
                        i += 1;
                    }
                }
            }
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                w.newline(depth);
                w.out.push(b);
                i += 1;
            }
            b',' => {
                w.out.push(b',');
                w.newline(depth);
                i += 1;
            }
            b':' => {
                w.out.extend_from_slice(b": ");
                i += 1;
            }
            b if is_space(b) => i += 1,
            _ => {
                let start = i;
                while bytes.get(i).is_some_and(|&c| !ends_scalar(c)) {
                    i += 1;
                }
                w.out.extend_from_slice(&bytes[start..i]);
            }
        }
    }
    if depth != 0 {
        return None;
    }
    w.lines.push(w.line_start..w.out.len());
    let text = String::from_utf8(w.out).ok()?;
    Some(PrettyText {
        text,
        lines: w.lines,
    })
}

/// The line of `text` (pretty-printed by [`pretty`], its lines `lines`) where the value at JSON
/// `pointer` starts (`/input/3/content/0`; `""` is the whole value): read from the layout's
/// indentation alone, one pass over the lines up to it. None when the pointer names nothing.
pub fn line_of_pointer(text: &str, lines: &[Range<usize>], pointer: &str) -> Option<usize> {
    let line = |k: usize| lines.get(k).and_then(|r| text.get(r.clone()));
    let indent = |s: &str| s.len() - s.trim_start_matches(' ').len();
    let mut at = 0usize;
    if pointer.is_empty() {
        return line(0).map(|_| 0);
    }
    for (depth, token) in pointer.strip_prefix('/')?.split('/').enumerate() {
        let token = token.replace("~1", "/").replace("~0", "~");
        let opening = line(at)?.trim_end();
        let child = INDENT * (depth + 1);
        let key = opening.ends_with('{').then(|| {
            let quoted = serde_json::to_string(&token).unwrap_or_default();
            format!("{quoted}: ")
        });
        if !(opening.ends_with('{') || opening.ends_with('[')) {
            return None;
        }
        let index: Option<usize> = match &key {
            Some(_) => None,
            None => Some(token.parse().ok()?),
        };
        let mut seen = 0usize;
        let mut found = None;
        let mut k = at + 1;
        while let Some(l) = line(k) {
            let i = indent(l);
            if i < child {
                break; // the container closed
            }
            if i == child {
                let rest = &l[i..];
                match (&key, index) {
                    (Some(key), _) if rest.starts_with(key.as_str()) => {
                        found = Some(k);
                        break;
                    }
                    (None, Some(n)) if !rest.starts_with('}') && !rest.starts_with(']') => {
                        if seen == n {
                            found = Some(k);
                            break;
                        }
                        seen += 1;
                    }
                    _ => {}
                }
            }
            k += 1;
        }
        at = found?;
    }
    Some(at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// The text's lines through the index.
    fn lines(p: &PrettyText) -> Vec<&str> {
        p.lines.iter().map(|r| &p.text[r.clone()]).collect()
    }

    #[test]
    fn lays_out_as_serde_json_does() {
        for body in [
            r#"{"model":"gpt-5.5","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"it's a \"test\"\n"}]}],"tools":[],"reasoning":{},"stream":true,"n":-1500.25,"x":null}"#,
            "  [ 1 , [ ] , { } , [ [ 2 ] ] , \"é ü\" , false ]  ",
            "{\n  \"already\": {\n    \"pretty\": [1, 2]\n  }\n}",
            "\"just a string\"",
            "42",
            "{}",
        ] {
            let value: serde_json::Value = serde_json::from_str(body).expect("json");
            let expected = serde_json::to_string_pretty(&value).expect("pretty");
            let shown = pretty(body.as_bytes()).expect("pretty");
            assert_eq!(shown.text, expected);
            assert_eq!(lines(&shown), expected.split('\n').collect::<Vec<_>>());
        }
    }

    #[test]
    fn keeps_tokens_as_sent() {
        // serde_json would write "é", "/", 1000.0 and one "a".
        let body = r#"{"a":"\u00e9\/","n":1.0e3,"a":2}"#;
        let shown = pretty(body.as_bytes()).expect("pretty");
        assert_eq!(
            lines(&shown),
            vec![
                "{",
                r#"  "a": "\u00e9\/","#,
                r#"  "n": 1.0e3,"#,
                r#"  "a": 2"#,
                "}"
            ]
        );
    }

    #[test]
    fn refuses_what_does_not_close() {
        for body in ["{\"a\":1", "\"open", "[1]]", "{\"a\":\"\\"] {
            assert_eq!(pretty(body.as_bytes()), None, "{body}");
        }
        assert_eq!(pretty(&[b'"', 0xff, b'"']), None);
    }

    #[test]
    fn pointers_find_their_line() {
        let body = br#"{"model":"m","input":[{"type":"message","content":[{"text":"a"},{"text":"b/c"}]},"x",[1,2]],"a/b":{"k":[]}}"#;
        let p = pretty(body).expect("pretty");
        let at = |ptr: &str| line_of_pointer(&p.text, &p.lines, ptr).map(|k| lines(&p)[k].trim());
        assert_eq!(
            [
                at(""),
                at("/model"),
                at("/input"),
                at("/input/0"),
                at("/input/0/content/1"),
                at("/input/0/content/1/text"),
                at("/input/1"),
                at("/input/2"),
                at("/input/2/1"),
                at("/a~1b/k"),
                at("/input/3"),
                at("/nothing"),
                at("/model/x"),
            ],
            [
                Some("{"),
                Some(r#""model": "m","#),
                Some(r#""input": ["#),
                Some("{"),
                Some("{"),
                Some(r#""text": "b/c""#),
                Some(r#""x","#),
                Some("["),
                Some("2"),
                Some(r#""k": []"#),
                None,
                None,
                None,
            ]
        );
    }
}
