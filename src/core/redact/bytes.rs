//! Bytes that are not UTF-8 (a body with stray bytes, or one that claims an encoding it does not
//! have) as a text the redaction policy can read: the valid UTF-8 runs as they are, every other
//! byte as `\xNN`. What is stored of such a body is this view, redacted — never the raw bytes.

use std::fmt::Write as _;

/// What a stored body that was kept as an [`escaped_view`] says about itself (in the request's
/// extra fields, `body_stored`).
pub const ESCAPED_NOTE: &str = "an escaped view of the bytes (\\xNN for each byte that is not UTF-8), redacted; the client's bytes went upstream unchanged";

/// `bytes` as text: valid UTF-8 kept, each byte of an invalid sequence written `\xNN` (two
/// lowercase hex digits). Valid UTF-8 comes back unchanged.
pub fn escaped_view(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn invalid_bytes_are_escaped_and_valid_text_kept() {
        assert_eq!(
            escaped_view(b"ok \xff\xfe key=\xc3\xa9"),
            "ok \\xff\\xfe key=\u{e9}"
        );
        assert_eq!(escaped_view("plain é".as_bytes()), "plain é");
        assert_eq!(escaped_view(b"\xc3"), "\\xc3");
    }
}
