//! Errors of the core: bad Prompt files and bad captured bodies, each naming the JSON path (or
//! line and column) of the problem.

/// A Prompt file or captured body that cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PromptError {
    /// The text is not JSON.
    #[error("invalid JSON at line {line}, column {column}: {message}")]
    Syntax {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser expected.
        message: String,
    },
    /// The JSON is well-formed but a value is wrong.
    #[error("{path}: {message}")]
    Invalid {
        /// JSON path of the problem (`input[3].call_id`).
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The input is larger than allowed.
    #[error("input is {size} bytes; the limit is {limit} bytes")]
    TooLarge {
        /// Size of the input.
        size: u64,
        /// The limit.
        limit: u64,
    },
}

impl PromptError {
    /// An invalid value at `path`.
    pub fn invalid(path: impl Into<String>, message: impl Into<String>) -> Self {
        let path = path.into();
        Self::Invalid {
            path: if path.is_empty() {
                "$".to_string()
            } else {
                path
            },
            message: message.into(),
        }
    }

    /// Converts a serde_json error found at `path` (syntax errors keep line and column).
    pub fn from_serde(path: &str, err: &serde_json::Error) -> Self {
        use serde_json::error::Category;
        match err.classify() {
            Category::Syntax | Category::Eof | Category::Io => Self::Syntax {
                line: err.line(),
                column: err.column(),
                message: strip_position(&err.to_string()),
            },
            Category::Data => {
                let path = if path == "." { "" } else { path };
                let (path, message) = locate(path.to_string(), &strip_position(&err.to_string()));
                Self::invalid(path, cut_long(&message))
            }
        }
    }
}

/// Longest message kept whole; a longer one (a type error quoting a huge bad value) keeps its
/// first [`KEPT_HEAD_CHARS`] and last [`KEPT_TAIL_CHARS`] characters (the tail says what was
/// expected) and says how much was cut and how long it was in bytes.
pub const MAX_MESSAGE_CHARS: usize = 300;
const KEPT_HEAD_CHARS: usize = 200;
const KEPT_TAIL_CHARS: usize = 60;

/// `message`, cut in the middle when longer than [`MAX_MESSAGE_CHARS`].
fn cut_long(message: &str) -> String {
    let chars = message.chars().count();
    if chars <= MAX_MESSAGE_CHARS {
        return message.to_string();
    }
    let head: String = message.chars().take(KEPT_HEAD_CHARS).collect();
    let tail: String = message.chars().skip(chars - KEPT_TAIL_CHARS).collect();
    let cut = chars - KEPT_HEAD_CHARS - KEPT_TAIL_CHARS;
    format!(
        "{head}… ({cut} characters cut, {} bytes in all) …{tail}",
        message.len()
    )
}

/// serde_json appends " at line L column C"; the path already locates data errors.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

/// Moves path information out of a message into the path: an inner `sub.path: msg` (from a
/// nested item parser) is joined onto `path`, and ``missing field `x` `` names `x` in the path.
fn locate(mut path: String, message: &str) -> (String, String) {
    let mut message = message.to_string();
    while let Some((head, rest)) = message.split_once(": ") {
        let is_path = !head.is_empty()
            && head
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '[' | ']' | '-'));
        if !is_path {
            break;
        }
        path = crate::core::json::join_path(&path, head);
        message = rest.to_string();
    }
    if let Some(field) = message
        .strip_prefix("missing field `")
        .and_then(|r| r.strip_suffix('`'))
    {
        path = crate::core::json::join_path(&path, field);
    }
    (path, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_type_error_does_not_echo_a_huge_value() {
        let text = format!("[\"{}\"]", "x".repeat(1_000_000));
        let Err(err) = serde_json::from_str::<Vec<u32>>(&text) else {
            panic!("a string is not a number");
        };
        let message = PromptError::from_serde("input", &err).to_string();
        assert_eq!(
            message,
            format!(
                "input: invalid type: string \"{}… (999777 characters cut, 1000037 bytes in all) …{}\", expected u32",
                "x".repeat(200 - "invalid type: string \"".len()),
                "x".repeat(60 - "\", expected u32".len())
            )
        );
    }
}
