//! A `curl` command (pasted or read from a file) read back into a request: method, URL, headers
//! and body. The command is split as a POSIX shell would (single and double quotes, backslash
//! escapes, `\`-newline continuations, `$'…'` strings), and a body given on standard input by a
//! here-document (`--data-binary @- <<'EOF'` … `EOF`, what promptwire's own Copy as cURL
//! writes) is read from the here-document. Options that do not change the request (`-sS`,
//! `-N`, `--compressed`, …) are skipped; a body read from a file (`-d @file`) is an error (the
//! file is not read).

use super::CapturedHeaders;

/// A request read from a curl command.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CurlRequest {
    /// `POST` unless `-X` says otherwise (`GET` without a body).
    pub method: String,
    /// The URL.
    pub url: String,
    /// Headers as written (`-H 'name: value'`), in order.
    pub headers: Vec<(String, String)>,
    /// The body (`-d`, `--data-raw`, `--data-binary`, `--json`, or a here-document).
    pub body: Option<String>,
}

/// Why a command could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CurlError {
    /// The text does not start with `curl`.
    #[error("not a curl command (it does not start with `curl`)")]
    NotCurl,
    /// A quote is never closed.
    #[error("unclosed {0} quote")]
    Unclosed(char),
    /// An option needs a value and has none.
    #[error("`{0}` needs a value")]
    MissingValue(String),
    /// The body is read from a file the command names.
    #[error("the body is read from the file `{0}`; paste the file's content instead")]
    BodyFromFile(String),
    /// `@-` without a here-document.
    #[error("the body is read from standard input and no here-document follows")]
    NoHeredoc,
    /// A here-document is never closed.
    #[error("the here-document `{0}` is never closed")]
    UnclosedHeredoc(String),
    /// No URL.
    #[error("no URL")]
    NoUrl,
    /// A header without a colon.
    #[error("header `{0}` has no `:`")]
    BadHeader(String),
}

/// Options taking a value that do not change the request.
const SKIPPED_WITH_VALUE: [&str; 14] = [
    "-o",
    "--output",
    "-m",
    "--max-time",
    "--connect-timeout",
    "-w",
    "--write-out",
    "--retry",
    "-x",
    "--proxy",
    "--cacert",
    "--cert",
    "--key",
    "--limit-rate",
];

/// True when `text` (after leading blanks) is a curl command.
pub fn looks_like_curl(text: &str) -> bool {
    let trimmed = text.trim_start().trim_start_matches('$').trim_start();
    trimmed == "curl" || trimmed.starts_with("curl ") || trimmed.starts_with("curl\t")
}

/// Splits the command's first line group into words; returns the words and the text after the
/// line that ends the command (where a here-document's body starts).
fn split_words(text: &str) -> Result<(Vec<String>, &str), CurlError> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some((_, '\n')) => {}
                Some((_, '\r')) if chars.peek().map(|(_, c)| *c) == Some('\n') => {
                    chars.next();
                }
                Some((_, '\r')) => {}
                Some((_, other)) => {
                    word.push(other);
                    in_word = true;
                }
                None => {}
            },
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some((_, '\'')) => break,
                        Some((_, c)) => word.push(c),
                        None => return Err(CurlError::Unclosed('\'')),
                    }
                }
            }
            '$' if chars.peek().map(|(_, c)| *c) == Some('\'') => {
                chars.next();
                in_word = true;
                loop {
                    match chars.next() {
                        Some((_, '\'')) => break,
                        Some((_, '\\')) => match chars.next() {
                            Some((_, 'n')) => word.push('\n'),
                            Some((_, 't')) => word.push('\t'),
                            Some((_, 'r')) => word.push('\r'),
                            Some((_, c)) => word.push(c),
                            None => return Err(CurlError::Unclosed('\'')),
                        },
                        Some((_, c)) => word.push(c),
                        None => return Err(CurlError::Unclosed('\'')),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some((_, '"')) => break,
                        Some((_, '\\')) => match chars.next() {
                            Some((_, '\n')) => {}
                            Some((_, c @ ('"' | '\\' | '$' | '`'))) => word.push(c),
                            Some((_, c)) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => return Err(CurlError::Unclosed('"')),
                        },
                        Some((_, c)) => word.push(c),
                        None => return Err(CurlError::Unclosed('"')),
                    }
                }
            }
            '\n' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                }
                return Ok((words, &text[i + 1..]));
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok((words, ""))
}

/// The body of a here-document closed by a line `delimiter`, from `rest`.
fn heredoc(rest: &str, delimiter: &str) -> Result<String, CurlError> {
    let mut body = String::new();
    let mut first = true;
    for line in rest.split_inclusive('\n') {
        let bare = line.trim_end_matches('\n').trim_end_matches('\r');
        if bare == delimiter {
            return Ok(body);
        }
        if !first {
            body.push('\n');
        }
        first = false;
        body.push_str(bare);
    }
    Err(CurlError::UnclosedHeredoc(delimiter.to_string()))
}

/// Reads a curl command.
pub fn parse_curl(text: &str) -> Result<CurlRequest, CurlError> {
    if !looks_like_curl(text) {
        return Err(CurlError::NotCurl);
    }
    let start = text.find("curl").unwrap_or(0);
    let (words, rest) = split_words(&text[start..])?;
    let mut request = CurlRequest::default();
    let mut method = None;
    let mut stdin_body = false;
    let mut heredoc_delimiter = None;
    let mut words = words.into_iter().skip(1);
    while let Some(word) = words.next() {
        let mut value = |name: &str| {
            words
                .next()
                .ok_or_else(|| CurlError::MissingValue(name.to_string()))
        };
        match word.as_str() {
            "-X" | "--request" => method = Some(value(&word)?),
            "-H" | "--header" => {
                let line = value(&word)?;
                let (name, val) = line
                    .split_once(':')
                    .ok_or_else(|| CurlError::BadHeader(line.clone()))?;
                request
                    .headers
                    .push((name.trim().to_string(), val.trim().to_string()));
            }
            "-A" | "--user-agent" => {
                request
                    .headers
                    .push(("user-agent".to_string(), value(&word)?));
            }
            "-d" | "--data" | "--data-raw" | "--data-binary" | "--data-ascii" | "--json" => {
                let data = value(&word)?;
                if word == "--json" {
                    request
                        .headers
                        .push(("content-type".to_string(), "application/json".to_string()));
                }
                match data.strip_prefix('@') {
                    Some("-") if word != "--data-raw" => stdin_body = true,
                    Some(file) if word != "--data-raw" => {
                        return Err(CurlError::BodyFromFile(file.to_string()));
                    }
                    _ => request.body = Some(data),
                }
            }
            "--url" => request.url = value(&word)?,
            w if w.starts_with("<<") => {
                let d = w.trim_start_matches("<<").trim_start_matches('-');
                let d = if d.is_empty() {
                    value("<<")?
                } else {
                    d.to_string()
                };
                heredoc_delimiter = Some(d);
            }
            w if SKIPPED_WITH_VALUE.contains(&w) || w == "-u" || w == "--user" => {
                value(w)?;
            }
            w if w.starts_with('-') => {}
            _ if request.url.is_empty() => request.url = word,
            _ => {}
        }
    }
    if stdin_body {
        let delimiter = heredoc_delimiter.ok_or(CurlError::NoHeredoc)?;
        request.body = Some(heredoc(rest, &delimiter)?);
    }
    if request.url.is_empty() {
        return Err(CurlError::NoUrl);
    }
    request.method = method.unwrap_or_else(|| {
        if request.body.is_some() {
            "POST"
        } else {
            "GET"
        }
        .to_string()
    });
    Ok(request)
}

impl CurlRequest {
    /// The headers as a capture the body import folds into a Prompt (names lower-cased, the
    /// URL's path as the capture's path).
    pub fn captured_headers(&self) -> CapturedHeaders {
        let after = self
            .url
            .split_once("://")
            .map_or(self.url.as_str(), |(_, rest)| rest);
        let path = after
            .find('/')
            .map(|i| after[i..].split('?').next().unwrap_or("").to_string());
        CapturedHeaders {
            path,
            headers: self
                .headers
                .iter()
                .map(|(n, v)| (n.to_ascii_lowercase(), v.clone()))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_heredoc_command_as_copy_as_curl_writes_it() {
        let command = crate::core::export::curl_for_recorded(
            "POST",
            "https://api.openai.com/v1/responses",
            &[("content-type".to_string(), "application/json".to_string())],
            b"{\"model\":\"gpt-5\",\n \"input\":\"it's\"}",
        );
        assert_eq!(
            parse_curl(&command),
            Ok(CurlRequest {
                method: "POST".to_string(),
                url: "https://api.openai.com/v1/responses".to_string(),
                headers: vec![
                    (
                        "Authorization".to_string(),
                        "Bearer $OPENAI_API_KEY".to_string()
                    ),
                    ("content-type".to_string(), "application/json".to_string()),
                ],
                body: Some("{\"model\":\"gpt-5\",\n \"input\":\"it's\"}".to_string()),
            })
        );
    }

    #[test]
    fn reads_quoted_data_and_continuations() {
        let command = "curl https://x.test/v1/responses \\\n  -H 'Content-Type: application/json' \\\n  -d '{\"model\":\"m\",\"input\":\"it'\\''s\"}'";
        assert_eq!(
            parse_curl(command),
            Ok(CurlRequest {
                method: "POST".to_string(),
                url: "https://x.test/v1/responses".to_string(),
                headers: vec![("Content-Type".to_string(), "application/json".to_string())],
                body: Some("{\"model\":\"m\",\"input\":\"it's\"}".to_string()),
            })
        );
        assert_eq!(
            parse_curl("curl -d @body.json https://x.test"),
            Err(CurlError::BodyFromFile("body.json".to_string()))
        );
        assert_eq!(parse_curl("wget x"), Err(CurlError::NotCurl));
    }
}
