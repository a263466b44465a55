//! Export formats for compiled or recorded requests: a `curl` command (the key as an environment
//! variable, never its value) and HAR 1.2 (request with body, response with the SSE text, timings;
//! promptwire's extra fields under `_promptwire`). Secrets are redacted by default, and the
//! redaction fails closed: an export it cannot redact is an error, never written unredacted.

use serde_json::{Value, json};

use super::compile::CompiledRequest;
use super::redact::{
    IDENTIFYING_NOTE, RedactError, is_identifying_header, try_redact_header, try_redact_value,
    try_redacted, try_redacted_json,
};

/// One HTTP exchange to export.
#[derive(Debug, Clone, PartialEq)]
pub struct HarEntry {
    /// ISO 8601 start time (passed in: the core reads no clock).
    pub started_at: String,
    /// `POST`.
    pub method: String,
    /// Request URL.
    pub url: String,
    /// Request headers as shown (already redacted where compiled).
    pub request_headers: Vec<(String, String)>,
    /// Request body text (JSON).
    pub request_body: String,
    /// Response, when there was one.
    pub response: Option<HarResponse>,
    /// Extra promptwire fields (dialect, rules, provider, …), written under `_promptwire`.
    pub extra: Value,
    /// For a request sent as a WebSocket frame: its messages, written as the HAR convention of
    /// browsers writes a WebSocket (`_resourceType: "websocket"`, `_webSocketMessages`).
    pub websocket: Option<Vec<WsMessage>>,
}

/// One WebSocket message of a [`HarEntry`].
#[derive(Debug, Clone, PartialEq)]
pub struct WsMessage {
    /// Sent by the client (`send`), else received (`receive`).
    pub sent: bool,
    /// When, in seconds since the Unix epoch.
    pub time: f64,
    /// The text frame.
    pub data: String,
}

/// The response half of a [`HarEntry`].
#[derive(Debug, Clone, PartialEq)]
pub struct HarResponse {
    /// HTTP status.
    pub status: u16,
    /// Response headers.
    pub headers: Vec<(String, String)>,
    /// The raw SSE text, the JSON answer, or the error body (its text view when the bytes are
    /// not UTF-8).
    pub body: String,
    /// The body as received when it is not UTF-8: exported base64-encoded (`encoding: base64`),
    /// unless redaction had to change its text.
    pub body_bytes: Option<Vec<u8>>,
    /// Its media type (`text/event-stream`, `application/json`, …).
    pub mime_type: String,
    /// Milliseconds from sending to the first response byte.
    pub wait_ms: f64,
    /// Milliseconds spent receiving the body.
    pub receive_ms: f64,
    /// Its size on the wire when it came compressed (`Content-Encoding`): the HAR's `bodySize`,
    /// while `body` is the decoded text.
    pub wire_bytes: Option<u64>,
    /// Why the body is not there (an encoding that could not be decoded).
    pub comment: Option<String>,
}

impl HarEntry {
    /// An entry for a compiled (not yet sent) request.
    pub fn from_compiled(request: &CompiledRequest, started_at: &str) -> Self {
        Self {
            started_at: started_at.to_string(),
            method: "POST".to_string(),
            url: request.url.clone(),
            request_headers: request
                .headers
                .iter()
                .map(|h| (h.name.clone(), h.value.clone()))
                .collect(),
            request_body: String::from_utf8_lossy(&request.body_json).into_owned(),
            response: None,
            websocket: None,
            extra: json!({
                "dialect": request.dialect,
                "rules": request.rules,
                "provider": request.provider_kind,
                "content_encoding": request.compressed_body.as_ref().map(|_| "zstd"),
                "wire_body_bytes": request.wire_body().len(),
            }),
        }
    }
}

fn har_headers(headers: &[(String, String)], redact: bool) -> Result<Value, RedactError> {
    let headers = headers
        .iter()
        .map(|(name, value)| {
            let value = if redact {
                try_redact_header(name, value)?
            } else {
                value.clone()
            };
            Ok(if is_identifying_header(name) {
                json!({"name": name, "value": value, "comment": IDENTIFYING_NOTE})
            } else {
                json!({"name": name, "value": value})
            })
        })
        .collect::<Result<_, RedactError>>()?;
    Ok(Value::Array(headers))
}

/// A HAR 1.2 log of `entries`. With `redact`, secret headers and keys/tokens in bodies are
/// replaced by `<redacted>`; an error when that cannot be done (a body whose JSON would not
/// parse back once redacted, or a policy that cannot run).
pub fn har_log(entries: &[HarEntry], redact: bool) -> Result<Value, RedactError> {
    let text = |s: &str| -> Result<String, RedactError> {
        if redact {
            Ok(try_redacted_json(s)?.into_owned())
        } else {
            Ok(s.to_string())
        }
    };
    let entries: Vec<Value> = entries
        .iter()
        .map(|e| {
            // What the exchange went over when it was recorded as not HTTP/1.1 (the proxy's
            // upstream side: HTTP/2 by ALPN).
            let version = e
                .extra
                .get("http_version")
                .and_then(Value::as_str)
                .unwrap_or("HTTP/1.1");
            let (response, wait, receive) = match &e.response {
                Some(r) => {
                    let shown = text(&r.body)?;
                    let mut content = match &r.body_bytes {
                        // Bytes as they came, when redaction found nothing to change.
                        Some(bytes) if shown == r.body => json!({"size": bytes.len(),
                            "mimeType": r.mime_type, "text": base64(bytes), "encoding": "base64"}),
                        _ => json!({"size": r.body.len(), "mimeType": r.mime_type, "text": shown}),
                    };
                    // A compressed answer: `text` is the decoded body, `bodySize` what came
                    // over the wire, `compression` what it saved (HAR 1.2 §content).
                    let body_size = r.wire_bytes.unwrap_or(r.body.len() as u64);
                    if r.wire_bytes.is_some() && r.comment.is_none() {
                        content["compression"] =
                            json!(r.body.len() as i64 - i64::try_from(body_size).unwrap_or(0));
                    }
                    if let Some(comment) = &r.comment {
                        content["comment"] = json!(comment);
                    }
                    (
                        json!({
                            "status": r.status,
                            "statusText": "",
                            "httpVersion": version,
                            "cookies": [],
                            "headers": har_headers(&r.headers, redact)?,
                            "content": content,
                            "redirectURL": "",
                            "headersSize": -1,
                            "bodySize": body_size,
                        }),
                        r.wait_ms,
                        r.receive_ms,
                    )
                }
                None => (
                    json!({
                        "status": 0, "statusText": "not sent", "httpVersion": "HTTP/1.1",
                        "cookies": [], "headers": [], "content": {"size": 0, "mimeType": ""},
                        "redirectURL": "", "headersSize": -1, "bodySize": -1,
                    }),
                    -1.0,
                    -1.0,
                ),
            };
            let total = if wait >= 0.0 { wait + receive } else { 0.0 };
            let url = if redact {
                try_redacted(&e.url)?.into_owned()
            } else {
                e.url.clone()
            };
            let extra = if redact {
                try_redact_value(&e.extra)?
            } else {
                e.extra.clone()
            };
            let mut entry = json!({
                "startedDateTime": e.started_at,
                "time": total,
                "request": {
                    "method": e.method,
                    "url": url,
                    "httpVersion": version,
                    "cookies": [],
                    "headers": har_headers(&e.request_headers, redact)?,
                    "queryString": [],
                    "postData": {"mimeType": "application/json", "text": text(&e.request_body)?},
                    "headersSize": -1,
                    "bodySize": e.request_body.len(),
                },
                "response": response,
                "cache": {},
                "timings": {"send": 0, "wait": wait, "receive": receive},
                "_promptwire": extra,
            });
            if let Some(messages) = &e.websocket {
                let messages = messages
                    .iter()
                    .map(|m| {
                        Ok(json!({
                            "type": if m.sent { "send" } else { "receive" },
                            "time": m.time,
                            "opcode": 1,
                            "data": text(&m.data)?,
                        }))
                    })
                    .collect::<Result<Vec<Value>, RedactError>>()?;
                entry["_resourceType"] = json!("websocket");
                entry["_webSocketMessages"] = Value::Array(messages);
            }
            Ok(entry)
        })
        .collect::<Result<_, RedactError>>()?;
    Ok(json!({
        "log": {
            "version": "1.2",
            "creator": {"name": "promptwire", "version": env!("CARGO_PKG_VERSION")},
            "entries": entries,
        }
    }))
}

/// Single-quotes a string for a POSIX shell.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// A `curl` command that sends the compiled request. The API key is read from the provider's
/// environment variable at run time (`$OPENAI_API_KEY`); its value never appears. Any other
/// credential (a static `Bearer …` or `x-goog-api-key` header, a cookie, URL user info or a key
/// in the query, a secret body field) is shown as `<redacted>`: fill it in before running. A
/// zstd body is shown uncompressed (and the Content-Encoding header left out) so the command
/// stays readable. An error when the body or URL cannot be redacted (the command is not made).
pub fn curl_command(request: &CompiledRequest) -> Result<String, RedactError> {
    let mut out = format!(
        "curl -sS -N -X POST {}",
        shell_quote(&try_redacted(&request.url)?)
    );
    for header in &request.headers {
        if header.name == "content-encoding" {
            continue;
        }
        let line = match &header.secret_env {
            Some(env) if header.value.starts_with("Bearer ") => {
                format!("\"{}: Bearer ${env}\"", header.name)
            }
            Some(env) => format!("\"{}: ${env}\"", header.name),
            None => shell_quote(&format!("{}: {}", header.name, header.shown_value())),
        };
        out.push_str(" \\\n  -H ");
        out.push_str(&line);
    }
    let body = try_redacted_json(&String::from_utf8_lossy(&request.body_json))?.into_owned();
    let mut delimiter = "PROMPTWIRE_BODY".to_string();
    while body.contains(&delimiter) {
        delimiter.push('_');
    }
    out.push_str(&format!(
        " \\\n  --data-binary @- <<'{delimiter}'\n{body}\n{delimiter}\n"
    ));
    Ok(out)
}

/// A `curl` command that sends a recorded request again: `method`, the stored (already
/// redacted) `url` and `headers`, and the body's exact bytes in a quoted here-document. The key
/// is `$OPENAI_API_KEY`, read by the shell at run time: any stored authorization or key header
/// is replaced by `Authorization: Bearer $OPENAI_API_KEY`, and transport headers (`host`,
/// `content-length`, …) are left to curl. A body that is not UTF-8 is shown lossily (the
/// here-document is text).
pub fn curl_for_recorded(
    method: &str,
    url: &str,
    headers: &[(String, String)],
    body: &[u8],
) -> String {
    let method = if method.is_empty() { "POST" } else { method };
    let mut out = format!("curl -sS -N -X {method} {}", shell_quote(url));
    out.push_str(" \\\n  -H \"Authorization: Bearer $OPENAI_API_KEY\"");
    for (name, value) in headers {
        let lower = name.to_ascii_lowercase();
        if lower == "authorization"
            || crate::core::redact::is_secret_header(&lower)
            || crate::core::import::TRANSPORT_HEADERS.contains(&lower.as_str())
            || lower == "content-encoding"
        {
            continue;
        }
        out.push_str(" \\\n  -H ");
        out.push_str(&shell_quote(&format!("{name}: {value}")));
    }
    let body = String::from_utf8_lossy(body);
    let mut delimiter = "PROMPTWIRE_BODY".to_string();
    while body.contains(&delimiter) {
        delimiter.push('_');
    }
    out.push_str(&format!(
        " \\\n  --data-binary @- <<'{delimiter}'\n{body}\n{delimiter}\n"
    ));
    out
}

/// The body a [`curl_for_recorded`] (or [`curl_command`]) command sends: the text between its
/// here-document lines, or None when `command` has none.
pub fn curl_heredoc_body(command: &str) -> Option<&str> {
    let start = command.find("<<'")? + 3;
    let end = start + command[start..].find('\'')?;
    let delimiter = &command[start..end];
    let body_start = end + command[end..].find('\n')? + 1;
    let closing = format!("\n{delimiter}\n");
    let body_end = body_start + command[body_start..].rfind(&closing)?;
    command.get(body_start..body_end)
}

/// Standard base64 (RFC 4648, with padding): HAR's `encoding: base64`.
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for group in bytes.chunks(3) {
        let n = group
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= group.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Decodes standard base64 (padding optional, whitespace ignored); `None` for other text.
pub fn from_base64(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let (mut n, mut bits) = (0u32, 0u32);
    for c in text.bytes().filter(|c| !c.is_ascii_whitespace()) {
        let value = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' => break,
            _ => return None,
        };
        n = n << 6 | u32::from(value);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((n >> bits) as u8);
        }
    }
    Some(out)
}

#[cfg(test)]
mod base64_tests {
    use super::*;

    #[test]
    fn base64_round_trips_every_length() {
        for len in 0..10usize {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 37 + 200) as u8).collect();
            assert_eq!(from_base64(&base64(&bytes)), Some(bytes));
        }
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64(b"fo"), "Zm8=");
    }
}
