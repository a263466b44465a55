//! Decoding a compressed answer (`Content-Encoding: gzip`, `deflate`, `zstd`) chunk by chunk as
//! it arrives, for the recording proxy (the client always gets the upstream's bytes unchanged;
//! the reader, redaction and store see the plain ones) and for a live send (which may ask for
//! compression: Codex 0.171's `accept-encoding: zstd,gzip`). The output is bounded while it is
//! made: the input goes in small slices (each can expand only so far: deflate at most ~1032×,
//! zstd into a fixed buffer), and decoding stops at a cap, so a decompression bomb never holds
//! more than one slice's output beyond it. An encoding this build does not decode (`br`, a list of codings) is
//! reported as such, never read as if it were plain.

use zstd::stream::raw::{DParameter, Decoder as ZstdDecoder, Operation as _};

use crate::core::stream::StreamError;

/// Compressed bytes handed to a deflate decoder at once: at most ~1 MiB of output.
const DEFLATE_SLICE: usize = 1024;

/// The zstd decoder's output buffer.
const ZSTD_OUT: usize = 64 * 1024;

/// Largest zstd window accepted (8 MiB: what RFC 8878 asks an HTTP decoder to support), which
/// bounds the decoder's own memory.
const ZSTD_WINDOW_LOG_MAX: u32 = 23;

/// Why an answer's body could not be decoded for the recording.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum InflateError {
    /// An encoding this build does not decode.
    #[error("the answer could not be read: Content-Encoding `{0}` is not decoded by promptwire")]
    Unsupported(String),
    /// The decoder failed on the bytes.
    #[error("the answer could not be read: its {encoding} body does not decode ({message})")]
    Corrupt {
        /// `gzip`, `deflate`, `zstd`.
        encoding: String,
        /// The decoder's error.
        message: String,
    },
    /// The decoded body is past the cap.
    #[error("not decoded: the {encoding} answer decodes to over {limit} bytes")]
    TooLarge {
        /// `gzip`, `deflate`, `zstd`.
        encoding: String,
        /// The cap.
        limit: u64,
    },
}

impl InflateError {
    /// The failure it ends a read turn with: `limit_exceeded` past the cap, else
    /// `content_encoding`.
    pub(crate) fn stream_error(&self) -> StreamError {
        match self {
            Self::TooLarge { .. } => StreamError::LimitExceeded {
                message: self.to_string(),
            },
            _ => StreamError::ContentEncoding {
                message: self.to_string(),
            },
        }
    }
}

/// The decoding machinery of one encoding.
enum Kind {
    Gzip(flate2::write::GzDecoder<Vec<u8>>),
    Zlib(flate2::write::ZlibDecoder<Vec<u8>>),
    RawDeflate(flate2::write::DeflateDecoder<Vec<u8>>),
    /// `deflate` before its first byte says whether it is zlib-wrapped (HTTP's) or raw.
    Deflate,
    Zstd(Box<ZstdDecoder<'static>>, Vec<u8>),
}

/// A streaming decoder for one answer's body.
pub(crate) struct Inflater {
    kind: Kind,
    encoding: String,
    cap: u64,
    produced: u64,
}

impl Inflater {
    /// The decoder for `content_encoding` (the header's value), making at most `cap` bytes;
    /// `Ok(None)` when the body is not encoded (no header, `identity`).
    pub(crate) fn for_encoding(
        content_encoding: Option<&str>,
        cap: u64,
    ) -> Result<Option<Self>, InflateError> {
        let codings: Vec<String> = content_encoding
            .unwrap_or("")
            .split(',')
            .map(|c| c.trim().to_ascii_lowercase())
            .filter(|c| !c.is_empty() && c != "identity")
            .collect();
        let encoding = match codings.as_slice() {
            [] => return Ok(None),
            [one] => one.clone(),
            _ => return Err(InflateError::Unsupported(codings.join(", "))),
        };
        let kind = match encoding.as_str() {
            "gzip" | "x-gzip" => Kind::Gzip(flate2::write::GzDecoder::new(Vec::new())),
            "deflate" => Kind::Deflate,
            "zstd" => {
                let corrupt = |e: std::io::Error| InflateError::Corrupt {
                    encoding: "zstd".to_string(),
                    message: e.to_string(),
                };
                let mut decoder = ZstdDecoder::new().map_err(corrupt)?;
                decoder
                    .set_parameter(DParameter::WindowLogMax(ZSTD_WINDOW_LOG_MAX))
                    .map_err(corrupt)?;
                Kind::Zstd(Box::new(decoder), vec![0; ZSTD_OUT])
            }
            _ => return Err(InflateError::Unsupported(encoding)),
        };
        Ok(Some(Self {
            kind,
            encoding,
            cap,
            produced: 0,
        }))
    }

    /// Decodes `input`, handing each piece of plain bytes to `out` as it is made. An error once
    /// the output passes the cap (what was within it has been handed over) or the bytes do not
    /// decode; the decoder is not to be used after an error.
    pub(crate) fn push(
        &mut self,
        input: &[u8],
        out: &mut dyn FnMut(&[u8]),
    ) -> Result<(), InflateError> {
        if let Kind::Deflate = self.kind
            && let Some(first) = input.first()
        {
            // HTTP's `deflate` is zlib-wrapped (CM 8 in the low nibble); some servers send raw.
            self.kind = if first & 0x0f == 8 {
                Kind::Zlib(flate2::write::ZlibDecoder::new(Vec::new()))
            } else {
                Kind::RawDeflate(flate2::write::DeflateDecoder::new(Vec::new()))
            };
        }
        match &mut self.kind {
            Kind::Deflate => Ok(()),
            Kind::Gzip(d) => deflate_slices(input, d, |d| d.get_mut(), &mut |piece| {
                emit(piece, &mut self.produced, self.cap, out)
            })
            .map_err(|e| e.into_error(&self.encoding)),
            Kind::Zlib(d) => deflate_slices(input, d, |d| d.get_mut(), &mut |piece| {
                emit(piece, &mut self.produced, self.cap, out)
            })
            .map_err(|e| e.into_error(&self.encoding)),
            Kind::RawDeflate(d) => deflate_slices(input, d, |d| d.get_mut(), &mut |piece| {
                emit(piece, &mut self.produced, self.cap, out)
            })
            .map_err(|e| e.into_error(&self.encoding)),
            Kind::Zstd(decoder, buffer) => {
                let mut rest = input;
                loop {
                    let status = decoder
                        .run_on_buffers(rest, buffer)
                        .map_err(|e| Stop::Io(e).into_error(&self.encoding))?;
                    rest = &rest[status.bytes_read.min(rest.len())..];
                    let made = &buffer[..status.bytes_written];
                    if !made.is_empty() {
                        emit(made, &mut self.produced, self.cap, out)
                            .map_err(|e| e.into_error(&self.encoding))?;
                    }
                    if rest.is_empty() && status.bytes_written < buffer.len() {
                        return Ok(());
                    }
                }
            }
        }
    }

    /// The body ended: hands over what the decoder still holds.
    pub(crate) fn finish(&mut self, out: &mut dyn FnMut(&[u8])) -> Result<(), InflateError> {
        let encoding = self.encoding.clone();
        let held = match &mut self.kind {
            Kind::Gzip(d) => d.try_finish().map(|()| std::mem::take(d.get_mut())),
            Kind::Zlib(d) => d.try_finish().map(|()| std::mem::take(d.get_mut())),
            Kind::RawDeflate(d) => d.try_finish().map(|()| std::mem::take(d.get_mut())),
            Kind::Deflate | Kind::Zstd(..) => Ok(Vec::new()),
        }
        .map_err(|e| Stop::Io(e).into_error(&encoding))?;
        if held.is_empty() {
            return Ok(());
        }
        emit(&held, &mut self.produced, self.cap, out).map_err(|e| e.into_error(&encoding))
    }
}

/// Why decoding stopped.
enum Stop {
    Io(std::io::Error),
    Cap(u64),
}

impl Stop {
    fn into_error(self, encoding: &str) -> InflateError {
        match self {
            Self::Io(e) => InflateError::Corrupt {
                encoding: encoding.to_string(),
                message: e.to_string(),
            },
            Self::Cap(limit) => InflateError::TooLarge {
                encoding: encoding.to_string(),
                limit,
            },
        }
    }
}

/// Hands `piece` to `out` within the cap (counted in `produced`); past it, what fits and then
/// the stop.
fn emit(
    piece: &[u8],
    produced: &mut u64,
    cap: u64,
    out: &mut dyn FnMut(&[u8]),
) -> Result<(), Stop> {
    let room = usize::try_from(cap.saturating_sub(*produced)).unwrap_or(usize::MAX);
    let take = piece.len().min(room);
    if take > 0 {
        out(&piece[..take]);
    }
    *produced += take as u64;
    if piece.len() > room {
        return Err(Stop::Cap(cap));
    }
    Ok(())
}

/// Feeds `input` to a flate2 writer-decoder `decoder` a slice at a time, handing what each
/// slice made (taken out of the decoder's output vector, `output(decoder)`) to `each`.
fn deflate_slices<D: std::io::Write>(
    input: &[u8],
    decoder: &mut D,
    output: fn(&mut D) -> &mut Vec<u8>,
    each: &mut dyn FnMut(&[u8]) -> Result<(), Stop>,
) -> Result<(), Stop> {
    let mut take = |decoder: &mut D| -> Result<(), Stop> {
        let made = output(decoder);
        if made.is_empty() {
            return Ok(());
        }
        let result = each(made);
        made.clear();
        result
    };
    for slice in input.chunks(DEFLATE_SLICE) {
        decoder.write_all(slice).map_err(Stop::Io)?;
        take(decoder)?;
    }
    // flate2's writer holds what the last write decoded until the next one: flushed now, each
    // event is read when its bytes arrive, not when the next chunk does.
    decoder.flush().map_err(Stop::Io)?;
    take(decoder)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::io::Write as _;

    fn gzip(plain: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(plain).expect("gzip");
        e.finish().expect("gzip")
    }

    /// `compressed` decoded in pieces of `piece` bytes, within `cap`.
    fn decode(
        encoding: &str,
        compressed: &[u8],
        piece: usize,
        cap: u64,
    ) -> (Vec<u8>, Result<(), InflateError>) {
        let mut inflater = Inflater::for_encoding(Some(encoding), cap)
            .expect("known")
            .expect("encoded");
        let mut plain = Vec::new();
        for chunk in compressed.chunks(piece) {
            if let Err(e) = inflater.push(chunk, &mut |p| plain.extend_from_slice(p)) {
                return (plain, Err(e));
            }
        }
        let end = inflater.finish(&mut |p| plain.extend_from_slice(p));
        (plain, end)
    }

    #[test]
    fn every_encoding_decodes_in_any_pieces() {
        let plain: Vec<u8> = (0..50_000u32)
            .flat_map(|i| format!("data: {i}\n\n").into_bytes())
            .collect();
        let mut zlib = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        zlib.write_all(&plain).expect("zlib");
        let zlib = zlib.finish().expect("zlib");
        let mut raw = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
        raw.write_all(&plain).expect("raw");
        let raw = raw.finish().expect("raw");
        let zstd = zstd::encode_all(&plain[..], 3).expect("zstd");
        for (encoding, compressed) in [
            ("gzip", gzip(&plain)),
            ("deflate", zlib),
            ("deflate", raw),
            ("zstd", zstd),
        ] {
            for piece in [1, 7, 4096, usize::MAX] {
                let (out, end) = decode(encoding, &compressed, piece, u64::MAX);
                assert_eq!((out == plain, end), (true, Ok(())), "{encoding} {piece}");
            }
        }
    }

    #[test]
    fn what_arrived_is_decoded_at_once() {
        // A server that flushes its compressor after each event (as a streaming one does):
        // each push hands over that event whole, not one push later.
        let events = [
            &b"data: {\"a\":1}\n\n"[..],
            b"data: {\"b\":2}\n\n",
            b"data: [3]\n\n",
        ];
        /// The compressed chunks of `events`, `encoder` flushed after each (`inner`: the
        /// bytes it has written so far).
        fn flushed<W: std::io::Write>(
            mut encoder: W,
            inner: fn(&mut W) -> &mut Vec<u8>,
            events: &[&[u8]],
        ) -> Vec<Vec<u8>> {
            events
                .iter()
                .map(|event| {
                    encoder.write_all(event).expect("write");
                    encoder.flush().expect("flush");
                    std::mem::take(inner(&mut encoder))
                })
                .collect()
        }
        let fast = flate2::Compression::fast();
        let compressed = [
            (
                "gzip",
                flushed(
                    flate2::write::GzEncoder::new(Vec::new(), fast),
                    flate2::write::GzEncoder::get_mut,
                    &events,
                ),
            ),
            (
                "deflate",
                flushed(
                    flate2::write::ZlibEncoder::new(Vec::new(), fast),
                    flate2::write::ZlibEncoder::get_mut,
                    &events,
                ),
            ),
            (
                "zstd",
                flushed(
                    zstd::stream::write::Encoder::new(Vec::new(), 3).expect("zstd"),
                    zstd::stream::write::Encoder::get_mut,
                    &events,
                ),
            ),
        ];
        for (encoding, chunks) in compressed {
            let mut inflater = Inflater::for_encoding(Some(encoding), u64::MAX)
                .expect("known")
                .expect("encoded");
            let pieces: Vec<Vec<u8>> = chunks
                .iter()
                .map(|chunk| {
                    let mut out = Vec::new();
                    inflater
                        .push(chunk, &mut |p| out.extend_from_slice(p))
                        .expect("decodes");
                    out
                })
                .collect();
            let expected: Vec<Vec<u8>> = events.iter().map(|e| e.to_vec()).collect();
            assert_eq!(pieces, expected, "{encoding}");
        }
    }

    #[test]
    fn a_bomb_stops_at_the_cap() {
        let plain = vec![b'a'; 16 * 1024 * 1024];
        for (encoding, compressed) in [
            ("gzip", gzip(&plain)),
            ("zstd", zstd::encode_all(&plain[..], 3).expect("zstd")),
        ] {
            let (out, end) = decode(encoding, &compressed, usize::MAX, 100_000);
            assert_eq!(
                (out.len(), end),
                (
                    100_000,
                    Err(InflateError::TooLarge {
                        encoding: encoding.to_string(),
                        limit: 100_000
                    })
                )
            );
        }
    }

    #[test]
    fn unknown_encodings_and_garbage_are_named() {
        assert!(matches!(Inflater::for_encoding(None, 1), Ok(None)));
        assert!(matches!(
            Inflater::for_encoding(Some(" identity "), 1),
            Ok(None)
        ));
        assert_eq!(
            Inflater::for_encoding(Some("br"), 1).err(),
            Some(InflateError::Unsupported("br".to_string()))
        );
        assert_eq!(
            Inflater::for_encoding(Some("gzip, br"), 1).err(),
            Some(InflateError::Unsupported("gzip, br".to_string()))
        );
        let (_, end) = decode("gzip", b"not gzip at all", 100, 1000);
        assert!(
            matches!(&end, Err(InflateError::Corrupt { encoding, .. }) if encoding == "gzip"),
            "{end:?}"
        );
    }
}
