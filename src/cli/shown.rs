//! What the command line prints, made safe for a terminal: the one helper every printer of
//! `src/cli` passes its lines through. It redacts (the policy of [`crate::core::redact`]) and
//! escapes terminal control characters that a session name, a model string, a header or an
//! answer could carry: C0 controls other than newline and tab become `\u{1b}`-style text, DEL
//! and C1 controls `\u009b`-style (a valid JSON escape: JSON lines, whose C0 controls serde has
//! already escaped, stay JSON). Text without any is returned unchanged.

use std::borrow::Cow;
use std::fmt::Write as _;

/// `text` redacted and with its terminal control characters escaped (see the module header).
pub fn shown(text: &str) -> Cow<'_, str> {
    match crate::core::redact::redacted(text) {
        Cow::Borrowed(text) => escape_controls(text),
        Cow::Owned(text) => Cow::Owned(escape_controls(&text).into_owned()),
    }
}

/// True for the characters a terminal could act on.
fn is_control(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

/// `text` with every terminal control character escaped (see the module header).
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if !is_control(c) {
            out.push(c);
        } else if u32::from(c) < 0x20 {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        } else {
            let _ = write!(out, "\\u{:04x}", u32::from(c));
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn control_characters_are_escaped_and_text_kept() {
        assert_eq!(
            shown("name \x1b[31mred\x1b[0m\r\x07 tab\tline\nnext \u{7f}\u{9b}2J é"),
            "name \\u{1b}[31mred\\u{1b}[0m\\u{d}\\u{7} tab\tline\nnext \\u007f\\u009b2J é"
        );
        assert_eq!(shown("plain"), Cow::Borrowed("plain"));
        let json = serde_json::json!({"name": "a\u{1b}b\u{9b}"}).to_string();
        let parsed: serde_json::Value = serde_json::from_str(&shown(&json)).expect("still JSON");
        assert_eq!(parsed, serde_json::json!({"name": "a\u{1b}b\u{9b}"}));
    }
}
