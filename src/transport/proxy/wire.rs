//! What the proxy changes, and does not change, on the way through: which headers are forwarded
//! (all but hop-by-hop ones), where a request goes upstream, how a compressed request body is
//! decoded for storage (never for forwarding), and which session a request belongs to.

use std::io::Read as _;

use crate::core::anatomy::AgentTag;
use hyper::header::{HeaderMap, HeaderName};
use serde_json::Value;

/// Hop-by-hop headers (RFC 9110 §7.6.1) and those the HTTP client sets itself; never forwarded.
const HOP_BY_HOP: [&str; 10] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
];

/// True for a header the proxy must not forward: hop-by-hop ones, `Host`, `Content-Length`
/// (recomputed for the bytes sent) and any header the `Connection` header names.
pub fn is_hop_by_hop(name: &HeaderName, connection: &[String]) -> bool {
    let name = name.as_str();
    HOP_BY_HOP.contains(&name)
        || name == "content-length"
        || connection.iter().any(|c| c.eq_ignore_ascii_case(name))
}

/// The header names listed in `Connection`.
pub fn connection_tokens(headers: &HeaderMap) -> Vec<String> {
    headers
        .get_all(hyper::header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|t| t.trim().to_ascii_lowercase())
        .filter(|t| !t.is_empty())
        .collect()
}

/// The headers to forward: everything but hop-by-hop ones, in order, values untouched.
pub fn forwarded_headers(headers: &HeaderMap) -> HeaderMap {
    let connection = connection_tokens(headers);
    let mut out = HeaderMap::with_capacity(headers.len());
    for (name, value) in headers {
        if !is_hop_by_hop(name, &connection) {
            out.append(name.clone(), value.clone());
        }
    }
    out
}

/// Headers as (name, value) text pairs, for the store (which drops secret ones) and events.
pub fn header_pairs(headers: &HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(name, value)| {
            (
                name.as_str().to_string(),
                String::from_utf8_lossy(value.as_bytes()).into_owned(),
            )
        })
        .collect()
}

/// The upstream URL for an incoming `path_and_query`: the upstream's origin, its base path unless
/// the incoming path already starts with it (a client pointed at `http://127.0.0.1:PORT/v1`
/// and an upstream `https://api.openai.com/v1` both give `…/v1/responses`), then the path.
pub fn upstream_url(upstream: &reqwest::Url, path_and_query: &str) -> String {
    let origin = upstream.origin().ascii_serialization();
    let base = upstream.path().trim_end_matches('/');
    let path_only = path_and_query.split('?').next().unwrap_or("");
    let already = base.is_empty()
        || path_only == base
        || path_only
            .strip_prefix(base)
            .is_some_and(|rest| rest.starts_with('/'));
    if already {
        format!("{origin}{path_and_query}")
    } else {
        format!("{origin}{base}{path_and_query}")
    }
}

/// True when `path` has a `.` or `..` segment, spelled out or percent-encoded (`%2e`), which a
/// URL parser would resolve — out of the upstream's base path for `..`.
pub fn has_dot_segment(path: &str) -> bool {
    path.split('/').any(|segment| {
        let decoded = segment.to_ascii_lowercase().replace("%2e", ".");
        decoded == "." || decoded == ".."
    })
}

/// True for the paths that are recorded: `…/responses` and `…/responses/compact`.
pub fn is_responses_path(path: &str) -> bool {
    let path = path.trim_end_matches('/');
    path.ends_with("/responses") || path.ends_with("/responses/compact") || path == "responses"
}

/// Why a request body could not be decoded for storage.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The decoder failed.
    #[error("cannot decode the {encoding} request body: {message}")]
    Corrupt {
        /// `zstd` / `gzip`.
        encoding: String,
        /// The decoder's error.
        message: String,
    },
    /// The decoded body is larger than allowed.
    #[error("the decoded {encoding} request body is larger than {limit} bytes")]
    TooLarge {
        /// `zstd` / `gzip`.
        encoding: String,
        /// The limit.
        limit: usize,
    },
    /// An encoding the proxy does not decode.
    #[error("request bodies with Content-Encoding `{0}` are forwarded but not decoded")]
    Unsupported(String),
}

/// The body as stored: decoded from `content_encoding` (zstd, gzip, deflate; identity when `None`),
/// at most `limit` bytes. The forwarded bytes are never these.
pub fn decode_body(
    raw: &[u8],
    content_encoding: Option<&str>,
    limit: usize,
) -> Result<Vec<u8>, DecodeError> {
    let encoding = content_encoding.map(|e| e.trim().to_ascii_lowercase());
    let reader: Box<dyn std::io::Read + '_> =
        match encoding.as_deref() {
            None | Some("") | Some("identity") => return Ok(raw.to_vec()),
            Some("zstd") => Box::new(zstd::stream::read::Decoder::new(raw).map_err(|e| {
                DecodeError::Corrupt {
                    encoding: "zstd".to_string(),
                    message: e.to_string(),
                }
            })?),
            Some("gzip" | "x-gzip") => Box::new(flate2::read::GzDecoder::new(raw)),
            // HTTP's `deflate` is zlib-wrapped; some clients send a raw deflate stream.
            Some("deflate") if raw.first().is_some_and(|b| b & 0x0f == 8) => {
                Box::new(flate2::read::ZlibDecoder::new(raw))
            }
            Some("deflate") => Box::new(flate2::read::DeflateDecoder::new(raw)),
            Some(other) => return Err(DecodeError::Unsupported(other.to_string())),
        };
    let name = encoding.unwrap_or_default();
    let mut out = Vec::new();
    let limit_u64 = u64::try_from(limit).unwrap_or(u64::MAX);
    reader
        .take(limit_u64.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| DecodeError::Corrupt {
            encoding: name.clone(),
            message: e.to_string(),
        })?;
    if out.len() > limit {
        return Err(DecodeError::TooLarge {
            encoding: name,
            limit,
        });
    }
    Ok(out)
}

/// The key that groups a request into a session: a subagent's own thread (Codex sends its
/// child threads with the root's `session-id` but their own `thread-id` and an
/// `x-codex-parent-thread-id`: each is a conversation of its own), else the client's session or
/// thread id (the `session_id` / `session-id` / `thread-id` headers, else
/// `client_metadata.session_id` / `thread_id`), else `prompt_cache_key`, else the connection.
pub fn session_key(headers: &HeaderMap, body: Option<&Value>, connection: u64) -> String {
    if let Some(tag) = agent_tag(headers, body)
        && tag.is_subagent()
    {
        return format!("session:{}", tag.thread);
    }
    for name in ["session_id", "session-id", "thread-id", "thread_id"] {
        if let Some(value) = headers.get(name).and_then(|v| v.to_str().ok())
            && !value.trim().is_empty()
        {
            return format!("session:{}", value.trim());
        }
    }
    if let Some(body) = body {
        let meta = body.get("client_metadata");
        for name in ["session_id", "thread_id"] {
            if let Some(id) = meta.and_then(|m| m.get(name)).and_then(Value::as_str)
                && !id.trim().is_empty()
            {
                return format!("session:{}", id.trim());
            }
        }
        if let Some(key) = body.get("prompt_cache_key").and_then(Value::as_str)
            && !key.trim().is_empty()
        {
            return format!("cache:{}", key.trim());
        }
    }
    format!("connection:{connection}")
}

/// The agent a request says it is ([`AgentTag::from_request`] on its headers and body).
pub fn agent_tag(headers: &HeaderMap, body: Option<&Value>) -> Option<AgentTag> {
    let pairs = headers
        .iter()
        .filter_map(|(name, value)| Some((name.as_str(), value.to_str().ok()?)));
    AgentTag::from_request(pairs, body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_urls_join_without_doubling_the_base() {
        let up = reqwest::Url::parse("https://api.example.com/v1").expect("url");
        assert_eq!(
            upstream_url(&up, "/v1/responses"),
            "https://api.example.com/v1/responses"
        );
        assert_eq!(
            upstream_url(&up, "/responses?x=1"),
            "https://api.example.com/v1/responses?x=1"
        );
        assert_eq!(
            upstream_url(&up, "/v10/models"),
            "https://api.example.com/v1/v10/models"
        );
        let root = reqwest::Url::parse("http://127.0.0.1:9").expect("url");
        assert_eq!(
            upstream_url(&root, "/v1/responses"),
            "http://127.0.0.1:9/v1/responses"
        );
    }

    #[test]
    fn session_keys_prefer_the_client_ids() {
        let mut headers = HeaderMap::new();
        let body =
            serde_json::json!({"client_metadata": {"thread_id": "t1"}, "prompt_cache_key": "k"});
        assert_eq!(session_key(&headers, Some(&body), 3), "session:t1");
        let body = serde_json::json!({"prompt_cache_key": "k"});
        assert_eq!(session_key(&headers, Some(&body), 3), "cache:k");
        assert_eq!(session_key(&headers, None, 3), "connection:3");
        headers.insert("session-id", "s9".parse().expect("value"));
        assert_eq!(session_key(&headers, Some(&body), 3), "session:s9");
        // A subagent (Codex 0.171's collab_spawn child): its own thread, not the root's session.
        headers.insert("thread-id", "child".parse().expect("value"));
        assert_eq!(session_key(&headers, Some(&body), 3), "session:s9");
        headers.insert("x-codex-parent-thread-id", "s9".parse().expect("value"));
        assert_eq!(session_key(&headers, Some(&body), 3), "session:child");
        let child = serde_json::json!({"client_metadata": {"session_id": "s9",
            "thread_id": "child2", "x-openai-subagent": "review"}});
        assert_eq!(
            session_key(&HeaderMap::new(), Some(&child), 3),
            "session:child2"
        );
    }

    #[test]
    fn bodies_decode_within_their_limit() {
        let plain = br#"{"model":"m"}"#;
        let z = zstd::encode_all(&plain[..], 3).expect("zstd");
        assert_eq!(decode_body(&z, Some("zstd"), 100).expect("decoded"), plain);
        assert_eq!(
            decode_body(&z, Some("zstd"), 4),
            Err(DecodeError::TooLarge {
                encoding: "zstd".to_string(),
                limit: 4
            })
        );
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut gz, plain).expect("gzip");
        let gz = gz.finish().expect("gzip");
        assert_eq!(decode_body(&gz, Some("gzip"), 100).expect("decoded"), plain);
        assert_eq!(decode_body(plain, None, 100).expect("identity"), plain);
        let mut zlib = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut zlib, plain).expect("zlib");
        let zlib = zlib.finish().expect("zlib");
        assert_eq!(
            decode_body(&zlib, Some("deflate"), 100).expect("zlib"),
            plain
        );
        let mut raw =
            flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut raw, plain).expect("deflate");
        let raw = raw.finish().expect("deflate");
        assert_eq!(decode_body(&raw, Some("deflate"), 100).expect("raw"), plain);
        assert!(matches!(
            decode_body(b"nope", Some("gzip"), 100),
            Err(DecodeError::Corrupt { .. })
        ));
        assert_eq!(
            decode_body(b"x", Some("br"), 100),
            Err(DecodeError::Unsupported("br".to_string()))
        );
    }
}
