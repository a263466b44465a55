//! The relay's HTTP/1.1 client for a loopback `http://` upstream: it writes the request on a
//! fresh connection, parses the response head with `httparse`, and decodes the body's framing
//! (RFC 9112 §6.3: none, `Content-Length`, `chunked`, or up to the close) itself, straight from
//! the socket's read buffer. Everything one read delivered comes out as one piece, so a stream
//! of one small HTTP chunk per SSE event costs a few comparisons per chunk, not a hand-over per
//! chunk (hyper's client decodes a chunk, passes it through its body channel and waits for the
//! reader to take it before it decodes the next one: about a microsecond per chunk, most of the
//! relay's cost in `benches/proxy.rs`'s one-chunk-per-event case).
//!
//! The request is written as hyper's client wrote it here: the request line, the forwarded
//! headers in their order, then `host` when the client sent none and `content-length` for a
//! non-empty body.
//! Bounds: a response head of at most [`MAX_HEAD_BYTES`] and [`MAX_HEADERS`] headers, chunk
//! sizes of at most 16 hex digits, trailers of at most [`MAX_TRAILER_BYTES`]; a piece is at most
//! [`MAX_PIECE_BYTES`].

use std::time::Duration;

use bytes::{Buf as _, Bytes, BytesMut};
use futures_util::StreamExt as _;
use hyper::header::{CONTENT_LENGTH, HOST, HeaderMap, HeaderName, HeaderValue, TRANSFER_ENCODING};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use super::upstream::UpstreamResponse;

/// Largest response head read.
pub(crate) const MAX_HEAD_BYTES: usize = 256 * 1024;
/// Most response headers parsed.
pub(crate) const MAX_HEADERS: usize = 128;
/// Largest trailer section skipped after the last chunk.
pub(crate) const MAX_TRAILER_BYTES: usize = 64 * 1024;
/// Largest piece of body handed over at once.
pub(crate) const MAX_PIECE_BYTES: usize = 64 * 1024;
/// Bytes asked of the socket per read.
const READ_BYTES: usize = 64 * 1024;

/// Sends `method url` with `headers` (already without hop-by-hop ones) and `body` on a new
/// connection to the loopback upstream; resolves when the response head has arrived.
pub(crate) async fn send(
    connect_timeout: Duration,
    method: hyper::Method,
    url: &reqwest::Url,
    headers: HeaderMap,
    body: Bytes,
) -> Result<UpstreamResponse, String> {
    let host = url.host_str().unwrap_or("127.0.0.1");
    let port = url.port_or_known_default().unwrap_or(80);
    let address = format!(
        "{}:{port}",
        host.trim_start_matches('[').trim_end_matches(']')
    );
    let mut tcp = tokio::time::timeout(connect_timeout, TcpStream::connect(&address))
        .await
        .map_err(|_| format!("connecting to {address} took longer than {connect_timeout:?}"))?
        .map_err(|e| format!("error sending request for url ({url}): {e}"))?;
    let _ = tcp.set_nodelay(true);
    let authority = match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_string(),
    };
    let head = request_head(&method, url, &headers, &authority, body.len());
    let written = async {
        tcp.write_all(&head).await?;
        if !body.is_empty() {
            tcp.write_all(&body).await?;
        }
        tcp.flush().await
    };
    written
        .await
        .map_err(|e| format!("error sending request for url ({url}): {e}"))?;
    let mut buf = BytesMut::with_capacity(READ_BYTES);
    let head = read_head(&mut tcp, &mut buf).await?;
    let framing = if method == hyper::Method::HEAD {
        Framing::Length(0)
    } else {
        framing(head.status, &head.headers)?
    };
    let reader = BodyReader {
        tcp,
        buf,
        decoder: Decoder::new(framing),
    };
    let body = futures_util::stream::unfold(Some(reader), |reader| async move {
        let mut reader = reader?;
        match reader.next_piece().await {
            Ok(Some(piece)) => Some((Ok(piece), Some(reader))),
            Ok(None) => None,
            Err(message) => Some((Err(message), None)),
        }
    })
    .boxed();
    Ok(UpstreamResponse {
        status: head.status,
        version: head.version,
        headers: head.headers,
        body,
    })
}

/// The request line and headers, as hyper's HTTP/1.1 client writes them.
fn request_head(
    method: &hyper::Method,
    url: &reqwest::Url,
    headers: &HeaderMap,
    authority: &str,
    body_len: usize,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(256 + headers.len() * 64);
    out.extend_from_slice(method.as_str().as_bytes());
    out.push(b' ');
    out.extend_from_slice(url.path().as_bytes());
    if let Some(query) = url.query() {
        out.push(b'?');
        out.extend_from_slice(query.as_bytes());
    }
    out.extend_from_slice(b" HTTP/1.1\r\n");
    let mut line = |name: &[u8], value: &[u8]| {
        out.extend_from_slice(name);
        out.extend_from_slice(b": ");
        out.extend_from_slice(value);
        out.extend_from_slice(b"\r\n");
    };
    for (name, value) in headers {
        if name == CONTENT_LENGTH || name == TRANSFER_ENCODING {
            continue;
        }
        line(name.as_str().as_bytes(), value.as_bytes());
    }
    // Added after the forwarded ones, where `HeaderMap::insert` put them for hyper.
    if !headers.contains_key(HOST) {
        line(b"host", authority.as_bytes());
    }
    if body_len > 0 {
        line(b"content-length", body_len.to_string().as_bytes());
    }
    out.extend_from_slice(b"\r\n");
    out
}

/// A parsed response head.
struct Head {
    status: hyper::StatusCode,
    version: hyper::Version,
    headers: HeaderMap,
}

/// Reads and parses the response head (skipping interim `1xx` answers other than `101`),
/// leaving what follows it in `buf`.
async fn read_head(tcp: &mut TcpStream, buf: &mut BytesMut) -> Result<Head, String> {
    loop {
        if let Some((head, used)) = parse_head(buf)? {
            buf.advance(used);
            let interim = head.status.is_informational()
                && head.status != hyper::StatusCode::SWITCHING_PROTOCOLS;
            if !interim {
                return Ok(head);
            }
            continue;
        }
        if buf.len() >= MAX_HEAD_BYTES {
            return Err(format!(
                "the upstream's response head is longer than {MAX_HEAD_BYTES} bytes"
            ));
        }
        buf.reserve(READ_BYTES);
        let read = tcp
            .read_buf(buf)
            .await
            .map_err(|e| format!("reading the upstream's response: {e}"))?;
        if read == 0 {
            return Err(if buf.is_empty() {
                "the upstream closed the connection without a response".to_string()
            } else {
                "the upstream closed the connection in the middle of the response head".to_string()
            });
        }
    }
}

/// The head at the start of `buf` and its length, or `None` when it is not all there yet.
fn parse_head(buf: &[u8]) -> Result<Option<(Head, usize)>, String> {
    let mut slots = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut slots);
    let used = match response.parse(buf) {
        Ok(httparse::Status::Complete(used)) => used,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(format!("the upstream's response head is not HTTP/1.1: {e}")),
    };
    let code = response.code.unwrap_or(0);
    let status = hyper::StatusCode::from_u16(code)
        .map_err(|_| format!("the upstream answered with status {code}"))?;
    let version = match response.version {
        Some(0) => hyper::Version::HTTP_10,
        _ => hyper::Version::HTTP_11,
    };
    let mut headers = HeaderMap::with_capacity(response.headers.len());
    for header in response.headers.iter() {
        let name = HeaderName::from_bytes(header.name.as_bytes())
            .map_err(|_| format!("the upstream sent a bad header name {:?}", header.name))?;
        let value = HeaderValue::from_bytes(header.value)
            .map_err(|_| format!("the upstream sent a bad value for header {name}"))?;
        headers.append(name, value);
    }
    Ok(Some((
        Head {
            status,
            version,
            headers,
        },
        used,
    )))
}

/// How a response body is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    /// Exactly this many bytes.
    Length(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// Up to the close of the connection.
    Close,
}

/// The framing of a response with `status` and `headers` to a request other than `HEAD`
/// (RFC 9112 §6.3).
pub(crate) fn framing(status: hyper::StatusCode, headers: &HeaderMap) -> Result<Framing, String> {
    if status.is_informational()
        || status == hyper::StatusCode::NO_CONTENT
        || status == hyper::StatusCode::NOT_MODIFIED
    {
        return Ok(Framing::Length(0));
    }
    if headers.contains_key(TRANSFER_ENCODING) {
        let last = headers
            .get_all(TRANSFER_ENCODING)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .rfind(|t| !t.is_empty());
        return Ok(match last {
            Some(t) if t.eq_ignore_ascii_case("chunked") => Framing::Chunked,
            _ => Framing::Close,
        });
    }
    let mut length = None;
    for value in headers.get_all(CONTENT_LENGTH) {
        for part in value.to_str().unwrap_or("").split(',') {
            let parsed: u64 = part
                .trim()
                .parse()
                .map_err(|_| format!("the upstream sent a bad content-length {value:?}"))?;
            if length.is_some_and(|l| l != parsed) {
                return Err("the upstream sent two different content-lengths".to_string());
            }
            length = Some(parsed);
        }
    }
    Ok(length.map_or(Framing::Close, Framing::Length))
}

/// The body side of the connection.
struct BodyReader {
    tcp: TcpStream,
    buf: BytesMut,
    decoder: Decoder,
}

impl BodyReader {
    /// The next piece of body: everything decodable from what has been read (a read is made
    /// when nothing is), `None` at the end.
    async fn next_piece(&mut self) -> Result<Option<Bytes>, String> {
        loop {
            if let Some(piece) = self.decoder.decode(&mut self.buf)? {
                return Ok(Some(piece));
            }
            if self.decoder.is_done() {
                return Ok(None);
            }
            self.buf.reserve(READ_BYTES);
            let read = self
                .tcp
                .read_buf(&mut self.buf)
                .await
                .map_err(|e| format!("reading the upstream's body: {e}"))?;
            if read == 0 {
                return self.decoder.at_eof().map(|()| None);
            }
        }
    }
}

/// Where the chunked decoder is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunk {
    /// Reading a chunk size line (`size` so far, `digits` read).
    Size { size: u64, digits: u8 },
    /// In the chunk extension, up to the line's end.
    Extension { size: u64 },
    /// After the size line's CR, expecting LF.
    SizeLf { size: u64 },
    /// This many data bytes of the chunk to come.
    Data(u64),
    /// The CR after a chunk's data.
    DataCr,
    /// The LF after a chunk's data.
    DataLf,
    /// In the trailer section after the last chunk (`line` bytes of the current line seen,
    /// `total` bytes in all).
    Trailer { line: usize, total: usize },
    /// The body has ended.
    Done,
}

/// A body framing decoder over a read buffer.
#[derive(Debug)]
pub(crate) struct Decoder {
    framing: Framing,
    /// Bytes still to come of a `Length` body.
    remaining: u64,
    chunk: Chunk,
    /// A `Close` body saw the end of the connection.
    closed: bool,
}

impl Decoder {
    /// A decoder for a body delimited by `framing`.
    pub(crate) fn new(framing: Framing) -> Self {
        Self {
            framing,
            remaining: match framing {
                Framing::Length(n) => n,
                _ => 0,
            },
            chunk: Chunk::Size { size: 0, digits: 0 },
            closed: false,
        }
    }

    /// True once the whole body has been decoded.
    pub(crate) fn is_done(&self) -> bool {
        match self.framing {
            Framing::Length(_) => self.remaining == 0,
            Framing::Chunked => self.chunk == Chunk::Done,
            Framing::Close => self.closed,
        }
    }

    /// The connection closed: fine for a `Close` body, an error for one not yet complete.
    pub(crate) fn at_eof(&mut self) -> Result<(), String> {
        match self.framing {
            Framing::Close => {
                self.closed = true;
                Ok(())
            }
            _ if self.is_done() => Ok(()),
            Framing::Length(n) => Err(format!(
                "the upstream closed the connection before the body ended ({} of {n} bytes)",
                n - self.remaining
            )),
            Framing::Chunked => Err(
                "the upstream closed the connection before the last chunk of the body".to_string(),
            ),
        }
    }

    /// Decodes what `buf` holds (consuming it), returning the body bytes found, if any.
    pub(crate) fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, String> {
        match self.framing {
            Framing::Length(_) => {
                if self.remaining == 0 || buf.is_empty() {
                    return Ok(None);
                }
                let take = usize::try_from(self.remaining)
                    .unwrap_or(usize::MAX)
                    .min(buf.len())
                    .min(MAX_PIECE_BYTES);
                self.remaining -= take as u64;
                let piece = buf.split_to(take).freeze();
                if self.remaining == 0 {
                    // Whatever follows the body is not part of it.
                    buf.clear();
                }
                Ok(Some(piece))
            }
            Framing::Close => {
                if buf.is_empty() {
                    return Ok(None);
                }
                let take = buf.len().min(MAX_PIECE_BYTES);
                Ok(Some(buf.split_to(take).freeze()))
            }
            Framing::Chunked => self.decode_chunked(buf),
        }
    }

    fn decode_chunked(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, String> {
        let mut out: Option<BytesMut> = None;
        let mut at = 0;
        let bytes = &buf[..];
        while at < bytes.len() && self.chunk != Chunk::Done {
            match self.chunk {
                Chunk::Data(left) => {
                    let n = usize::try_from(left)
                        .unwrap_or(usize::MAX)
                        .min(bytes.len() - at);
                    let piece = out.get_or_insert_with(|| BytesMut::with_capacity(bytes.len()));
                    piece.extend_from_slice(&bytes[at..at + n]);
                    at += n;
                    let left = left - n as u64;
                    self.chunk = if left == 0 {
                        Chunk::DataCr
                    } else {
                        Chunk::Data(left)
                    };
                    if out.as_ref().is_some_and(|o| o.len() >= MAX_PIECE_BYTES) {
                        break;
                    }
                }
                state => {
                    self.chunk = step(state, bytes[at])?;
                    at += 1;
                }
            }
        }
        buf.advance(at);
        if self.chunk == Chunk::Done {
            buf.clear();
        }
        Ok(out.filter(|o| !o.is_empty()).map(BytesMut::freeze))
    }
}

/// The chunked decoder's next state after `byte` (any state but `Data` and `Done`).
fn step(state: Chunk, byte: u8) -> Result<Chunk, String> {
    let bad = |what: &str| Err(format!("the upstream's chunked body is malformed: {what}"));
    Ok(match state {
        Chunk::Size { size, digits } => match byte {
            b'0'..=b'9' | b'a'..=b'f' | b'A'..=b'F' => {
                if digits >= 16 {
                    return bad("a chunk size longer than 16 hex digits");
                }
                let digit = u64::from(match byte {
                    b'0'..=b'9' => byte - b'0',
                    b'a'..=b'f' => byte - b'a' + 10,
                    _ => byte - b'A' + 10,
                });
                Chunk::Size {
                    size: size << 4 | digit,
                    digits: digits + 1,
                }
            }
            b'\r' | b'\n' | b';' | b' ' | b'\t' if digits == 0 => {
                return bad("a chunk size line without a size");
            }
            b'\r' => Chunk::SizeLf { size },
            b'\n' => after_size(size),
            b';' | b' ' | b'\t' => Chunk::Extension { size },
            _ => return bad("a chunk size that is not hexadecimal"),
        },
        Chunk::Extension { size } => match byte {
            b'\r' => Chunk::SizeLf { size },
            b'\n' => after_size(size),
            _ => Chunk::Extension { size },
        },
        Chunk::SizeLf { size } => match byte {
            b'\n' => after_size(size),
            _ => return bad("a CR without LF after a chunk size"),
        },
        Chunk::DataCr => match byte {
            b'\r' => Chunk::DataLf,
            b'\n' => Chunk::Size { size: 0, digits: 0 },
            _ => return bad("chunk data longer than its size"),
        },
        Chunk::DataLf => match byte {
            b'\n' => Chunk::Size { size: 0, digits: 0 },
            _ => return bad("a CR without LF after chunk data"),
        },
        Chunk::Trailer { line, total } => {
            if total >= MAX_TRAILER_BYTES {
                return bad("trailers longer than 64 KiB");
            }
            match byte {
                b'\n' if line == 0 => Chunk::Done,
                b'\n' => Chunk::Trailer {
                    line: 0,
                    total: total + 1,
                },
                // A CR ends nothing by itself: the LF after it does.
                b'\r' => Chunk::Trailer {
                    line,
                    total: total + 1,
                },
                _ => Chunk::Trailer {
                    line: line + 1,
                    total: total + 1,
                },
            }
        }
        Chunk::Data(_) | Chunk::Done => state,
    })
}

/// After a chunk size line: its data, or the trailers after the last (zero-size) chunk.
fn after_size(size: u64) -> Chunk {
    if size == 0 {
        Chunk::Trailer { line: 0, total: 0 }
    } else {
        Chunk::Data(size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decodes `wire` fed in pieces of `step` bytes; the body, or the first error.
    fn decode_in_steps(framing: Framing, wire: &[u8], step: usize) -> Result<Vec<u8>, String> {
        let mut decoder = Decoder::new(framing);
        let mut buf = BytesMut::new();
        let mut body = Vec::new();
        for piece in wire.chunks(step.max(1)) {
            buf.extend_from_slice(piece);
            while let Some(bytes) = decoder.decode(&mut buf)? {
                body.extend_from_slice(&bytes);
            }
        }
        if !decoder.is_done() {
            decoder.at_eof()?;
        }
        Ok(body)
    }

    #[test]
    fn chunked_bodies_decode_whole_at_every_read_size() {
        let wire =
            b"5\r\nhello\r\n1;ext=1\r\n \r\nA\r\n0123456789\r\n0\r\nx-trailer: 1\r\n\r\nGARBAGE";
        for step in [1, 2, 3, 7, 64, 4096] {
            assert_eq!(
                decode_in_steps(Framing::Chunked, wire, step),
                Ok(b"hello 0123456789".to_vec()),
                "read size {step}"
            );
        }
    }

    #[test]
    fn malformed_and_cut_chunked_bodies_are_errors() {
        assert_eq!(
            decode_in_steps(Framing::Chunked, b"zz\r\n", 4),
            Err(
                "the upstream's chunked body is malformed: a chunk size that is not hexadecimal"
                    .to_string()
            )
        );
        assert_eq!(
            decode_in_steps(Framing::Chunked, b"2\r\nabc\r\n", 4),
            Err(
                "the upstream's chunked body is malformed: chunk data longer than its size"
                    .to_string()
            )
        );
        assert_eq!(
            decode_in_steps(Framing::Chunked, b"11111111111111111\r\n", 4),
            Err(
                "the upstream's chunked body is malformed: a chunk size longer than 16 hex digits"
                    .to_string()
            )
        );
        assert_eq!(
            decode_in_steps(Framing::Chunked, b"5\r\nhel", 4),
            Err("the upstream closed the connection before the last chunk of the body".to_string())
        );
    }

    #[test]
    fn length_and_close_bodies() {
        assert_eq!(
            decode_in_steps(Framing::Length(5), b"helloEXTRA", 3),
            Ok(b"hello".to_vec())
        );
        assert_eq!(
            decode_in_steps(Framing::Length(9), b"hello", 2),
            Err(
                "the upstream closed the connection before the body ended (5 of 9 bytes)"
                    .to_string()
            )
        );
        assert_eq!(
            decode_in_steps(Framing::Close, b"to the end", 4),
            Ok(b"to the end".to_vec())
        );
    }

    #[test]
    fn framing_follows_rfc_9112() {
        let headers = |pairs: &[(&str, &str)]| {
            let mut map = HeaderMap::new();
            for (name, value) in pairs {
                map.append(
                    HeaderName::from_bytes(name.as_bytes()).expect("name"),
                    HeaderValue::from_str(value).expect("value"),
                );
            }
            map
        };
        let ok = hyper::StatusCode::OK;
        assert_eq!(
            framing(
                ok,
                &headers(&[
                    ("transfer-encoding", "gzip, chunked"),
                    ("content-length", "3")
                ])
            ),
            Ok(Framing::Chunked)
        );
        assert_eq!(
            framing(ok, &headers(&[("transfer-encoding", "gzip")])),
            Ok(Framing::Close)
        );
        assert_eq!(
            framing(ok, &headers(&[("content-length", "12")])),
            Ok(Framing::Length(12))
        );
        assert_eq!(
            framing(ok, &headers(&[("content-length", "12, 12")])),
            Ok(Framing::Length(12))
        );
        assert_eq!(
            framing(
                ok,
                &headers(&[("content-length", "12"), ("content-length", "13")])
            ),
            Err("the upstream sent two different content-lengths".to_string())
        );
        assert_eq!(framing(ok, &headers(&[])), Ok(Framing::Close));
        assert_eq!(
            framing(
                hyper::StatusCode::NO_CONTENT,
                &headers(&[("content-length", "9")])
            ),
            Ok(Framing::Length(0))
        );
    }

    #[test]
    fn request_head_is_written_as_hyper_writes_it() {
        let url = reqwest::Url::parse("http://127.0.0.1:8080/v1/responses?x=1").expect("url");
        let mut headers = HeaderMap::new();
        headers.append("content-type", HeaderValue::from_static("application/json"));
        headers.append("x-b", HeaderValue::from_static("1"));
        headers.append("x-a", HeaderValue::from_static("2"));
        let head = request_head(&hyper::Method::POST, &url, &headers, "127.0.0.1:8080", 7);
        assert_eq!(
            String::from_utf8(head).expect("utf8"),
            "POST /v1/responses?x=1 HTTP/1.1\r\ncontent-type: application/json\r\nx-b: \
             1\r\nx-a: 2\r\nhost: 127.0.0.1:8080\r\ncontent-length: 7\r\n\r\n"
        );
    }
}
