//! How stored texts and event chunks are packed (schema 4): one tag byte, then either the bytes
//! as they are or one zstd frame made with the embedded dictionary `promptwire-v1`
//! (`dict/promptwire-v1.zdict`, trained by `tools/train_store_dict.py` on the project's own
//! captures of Codex traffic: tool lists, items, header lines, SSE event data). Small texts —
//! most items and events are a few hundred bytes — compress 2–5× with it where plain zstd
//! barely gains; anything else still compresses as zstd does. A text that compression would not
//! shrink is kept plain. Frames carry their content size and no checksum (SQLite pages have
//! their own integrity checks; the content hash of every text is kept beside it).
//!
//! The dictionary is part of the file format: a retrained one gets a new tag and file, and
//! [`TAG_ZSTD_V1`] stays readable forever (`the_v1_dictionary_never_changes`).

use std::cell::RefCell;
use std::io::Read as _;
use std::sync::OnceLock;

use zstd::bulk::{Compressor, Decompressor};
use zstd::dict::{DecoderDictionary, EncoderDictionary};
use zstd::zstd_safe::CParameter;

/// The bytes follow as they are.
pub const TAG_PLAIN: u8 = 0;
/// One zstd frame without its 4-byte magic number, dictionary `promptwire-v1`, content size in
/// the frame header.
pub const TAG_ZSTD_V1: u8 = 1;

/// The magic number every zstd frame starts with (dropped when stored: most texts are small).
const MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// The `promptwire-v1` dictionary.
static DICT_V1: &[u8] = include_bytes!("dict/promptwire-v1.zdict");

/// Values stated to unpack to at most this many bytes are decoded in one call into a buffer of
/// that size; larger ones as a stream (see [`unpack`]).
const BULK_MAX: usize = 16 << 20;

/// Texts shorter than this are kept plain (a frame header costs more than it saves).
const MIN_PACKED: usize = 24;

/// How hard to compress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Events committed while a response streams in: fast (zstd level 3).
    Live,
    /// Everything written once and kept: texts, finished event chunks (zstd level 9 under 1 MiB,
    /// level 3 above, so a multi-megabyte tool output does not stall a write; with the
    /// dictionary, level 19 would save about 1% more on Codex texts at several times the cost).
    Kept,
}

impl Level {
    fn zstd(self, len: usize) -> i32 {
        match self {
            Level::Kept if len < 1 << 20 => 9,
            _ => 3,
        }
    }
}

/// Why packed bytes could not be read back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodecError {
    /// Nothing at all (not even the tag).
    #[error("empty packed value")]
    Empty,
    /// A tag this build does not know (a newer promptwire wrote it).
    #[error("unknown codec tag {0}")]
    UnknownTag(u8),
    /// The frame does not say how long its content is, or says more than allowed.
    #[error("packed value of {size:?} bytes (at most {max} allowed)")]
    TooLarge {
        /// The frame's stated content size, when it states one.
        size: Option<u64>,
        /// The caller's limit.
        max: usize,
    },
    /// zstd refused the frame.
    #[error("damaged packed value: {0}")]
    Damaged(String),
}

fn encoder_dictionary(level: i32) -> &'static EncoderDictionary<'static> {
    static LEVELS: [OnceLock<EncoderDictionary<'static>>; 2] = [OnceLock::new(), OnceLock::new()];
    let cell = if level == 3 { &LEVELS[0] } else { &LEVELS[1] };
    cell.get_or_init(|| EncoderDictionary::copy(DICT_V1, level))
}

fn decoder_dictionary() -> &'static DecoderDictionary<'static> {
    static DICT: OnceLock<DecoderDictionary<'static>> = OnceLock::new();
    DICT.get_or_init(|| DecoderDictionary::copy(DICT_V1))
}

thread_local! {
    /// One compressor per level and thread (a zstd context is costly to make).
    static COMPRESSORS: RefCell<Vec<(i32, Compressor<'static>)>> = const { RefCell::new(Vec::new()) };
    static DECOMPRESSOR: RefCell<Option<Decompressor<'static>>> = const { RefCell::new(None) };
}

fn compress(bytes: &[u8], level: i32) -> Option<Vec<u8>> {
    COMPRESSORS.with(|cell| {
        let mut list = cell.borrow_mut();
        let index = match list.iter().position(|(l, _)| *l == level) {
            Some(index) => index,
            None => {
                let mut c = Compressor::with_prepared_dictionary(encoder_dictionary(level)).ok()?;
                c.set_parameter(CParameter::ChecksumFlag(false)).ok()?;
                c.set_parameter(CParameter::DictIdFlag(false)).ok()?;
                c.set_parameter(CParameter::ContentSizeFlag(true)).ok()?;
                list.push((level, c));
                list.len() - 1
            }
        };
        let compressor = &mut list[index].1;
        // A large value first tries a buffer a quarter its size: the bulk API allocates the
        // worst case (more than the input) for the output, which for a 16 MiB answer doubled
        // what a recording held at its end. Only a value that does not compress 4× pays that.
        if bytes.len() > LARGE_VALUE {
            let mut out = Vec::with_capacity(bytes.len() / 4);
            if compressor.compress_to_buffer(bytes, &mut out).is_ok() {
                return Some(out);
            }
        }
        compressor.compress(bytes).ok()
    })
}

/// Values above this many bytes are compressed into a small buffer first (see [`compress`]).
const LARGE_VALUE: usize = 1 << 20;

/// Packs `bytes`: compressed when that makes them smaller, plain otherwise.
pub fn pack(bytes: &[u8], level: Level) -> Vec<u8> {
    if bytes.len() >= MIN_PACKED
        && let Some(frame) = compress(bytes, level.zstd(bytes.len()))
        && let Some(body) = frame.strip_prefix(&MAGIC)
        && body.len() + 1 < bytes.len()
    {
        let mut out = Vec::with_capacity(body.len() + 1);
        out.push(TAG_ZSTD_V1);
        out.extend_from_slice(body);
        return out;
    }
    let mut out = Vec::with_capacity(bytes.len() + 1);
    out.push(TAG_PLAIN);
    out.extend_from_slice(bytes);
    out
}

/// The content size a packed value states (plain: its length), without unpacking it.
pub fn unpacked_len(packed: &[u8]) -> Result<u64, CodecError> {
    match packed.split_first() {
        None => Err(CodecError::Empty),
        Some((&TAG_PLAIN, rest)) => Ok(rest.len() as u64),
        Some((&TAG_ZSTD_V1, body)) => {
            match zstd::zstd_safe::get_frame_content_size(&with_magic(&body[..body.len().min(18)]))
            {
                Ok(Some(size)) => Ok(size),
                Ok(None) => Err(CodecError::TooLarge { size: None, max: 0 }),
                Err(_) => Err(CodecError::Damaged("no frame header".to_string())),
            }
        }
        Some((&tag, _)) => Err(CodecError::UnknownTag(tag)),
    }
}

/// A stored frame with its magic number put back.
fn with_magic(body: &[u8]) -> Vec<u8> {
    let mut frame = Vec::with_capacity(body.len() + MAGIC.len());
    frame.extend_from_slice(&MAGIC);
    frame.extend_from_slice(body);
    frame
}

fn damaged(e: impl std::fmt::Display) -> CodecError {
    CodecError::Damaged(e.to_string())
}

/// Decodes a stored frame (magic number dropped) as a stream, stopping after `n` bytes: memory
/// grows with what the frame really holds, not with what its header claims.
fn decode_stream(body: &[u8], n: u64) -> Result<Vec<u8>, CodecError> {
    let decoder = zstd::stream::read::Decoder::with_prepared_dictionary(
        std::io::BufReader::new(MAGIC.as_slice().chain(body)),
        decoder_dictionary(),
    )
    .map_err(damaged)?;
    let mut out = Vec::new();
    decoder.take(n).read_to_end(&mut out).map_err(damaged)?;
    Ok(out)
}

/// Decodes a stored frame of `size` bytes in one call, with this thread's decompressor.
fn decode_bulk(body: &[u8], size: usize) -> Result<Vec<u8>, CodecError> {
    let frame = with_magic(body);
    DECOMPRESSOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            *slot = Some(
                Decompressor::with_prepared_dictionary(decoder_dictionary()).map_err(damaged)?,
            );
        }
        let Some(d) = slot.as_mut() else {
            return Err(damaged("no decompressor"));
        };
        d.decompress(&frame, size).map_err(damaged)
    })
}

/// Unpacks a packed value of at most `max` bytes.
pub fn unpack(packed: &[u8], max: usize) -> Result<Vec<u8>, CodecError> {
    let size = unpacked_len(packed)?;
    if size > max as u64 {
        return Err(CodecError::TooLarge {
            size: Some(size),
            max,
        });
    }
    let out = match packed.split_first() {
        Some((&TAG_PLAIN, rest)) => return Ok(rest.to_vec()),
        Some((_, body)) => match usize::try_from(size) {
            Ok(size) if size <= BULK_MAX => decode_bulk(body, size)?,
            _ => decode_stream(body, size)?,
        },
        None => return Err(CodecError::Empty),
    };
    if out.len() as u64 != size {
        return Err(damaged(format!(
            "{} bytes where the frame states {size}",
            out.len()
        )));
    }
    Ok(out)
}

/// Unpacks a packed UTF-8 text of at most `max` bytes.
pub fn unpack_text(packed: &[u8], max: usize) -> Result<String, CodecError> {
    String::from_utf8(unpack(packed, max)?).map_err(|e| damaged(format!("not UTF-8: {e}")))
}

/// The first `n` bytes of a packed value (all of it when shorter), decoding no further — what
/// a search reads of a large body.
pub fn unpack_prefix(packed: &[u8], n: usize) -> Result<Vec<u8>, CodecError> {
    match packed.split_first() {
        None => Err(CodecError::Empty),
        Some((&TAG_PLAIN, rest)) => Ok(rest[..rest.len().min(n)].to_vec()),
        Some((&TAG_ZSTD_V1, body)) => decode_stream(body, n as u64),
        Some((&tag, _)) => Err(CodecError::UnknownTag(tag)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_v1_dictionary_never_changes() {
        // Databases hold frames made with this dictionary: a retrained one needs a new tag.
        use siphasher::sip128::{Hasher128 as _, SipHasher13};
        let mut hasher = SipHasher13::new_with_keys(1, 2);
        std::hash::Hasher::write(&mut hasher, DICT_V1);
        let hash = format!("{:032x}", hasher.finish128().as_u128());
        assert_eq!(
            (DICT_V1.len(), hash.as_str()),
            (32768, "dd6eaddd1cbe87e0e3b7646cfc71c1c1")
        );
    }

    #[test]
    fn texts_round_trip_packed_or_plain() {
        let item = r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"List the files here, then run the tests and tell me what failed."}]}"#;
        let packed = pack(item.as_bytes(), Level::Kept);
        assert_eq!(packed[0], TAG_ZSTD_V1);
        assert!(
            packed.len() * 2 < item.len(),
            "{} of {}",
            packed.len(),
            item.len()
        );
        assert_eq!(unpack_text(&packed, 1 << 20).as_deref(), Ok(item));
        assert_eq!(unpacked_len(&packed), Ok(item.len() as u64));
        let short = pack(b"true", Level::Live);
        assert_eq!(short, b"\0true");
        assert_eq!(unpack(&short, 4), Ok(b"true".to_vec()));
        let noise: Vec<u8> = (0..200u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        assert_eq!(pack(&noise, Level::Kept)[0], TAG_PLAIN);
        assert_eq!(unpack(&pack(&noise, Level::Kept), 200), Ok(noise));
    }

    #[test]
    fn a_large_value_unpacks_as_a_stream_and_a_lying_header_costs_nothing() {
        let big = "0123456789abcdef".repeat(2 << 20);
        let packed = pack(big.as_bytes(), Level::Live);
        assert!(packed.len() < 100_000, "{}", packed.len());
        assert_eq!(unpack(&packed, 64 << 20).map(|b| b.len()), Ok(big.len()));
        // A frame that claims 2 GiB but holds a few bytes is damaged, not a 2 GiB allocation.
        // Frame header: single segment, 8-byte content size 2^31; then one raw block "tiny".
        let mut lying = vec![TAG_ZSTD_V1, 0xe0];
        lying.extend_from_slice(&(1u64 << 31).to_le_bytes());
        lying.extend_from_slice(&[33, 0, 0]);
        lying.extend_from_slice(b"tiny");
        assert_eq!(unpacked_len(&lying), Ok(1 << 31));
        assert!(matches!(
            unpack(&lying, usize::MAX),
            Err(CodecError::Damaged(_))
        ));
    }

    #[test]
    fn limits_and_damage_are_errors() {
        let text = "abc ".repeat(1000);
        let packed = pack(text.as_bytes(), Level::Live);
        assert_eq!(
            unpack(&packed, 100),
            Err(CodecError::TooLarge {
                size: Some(4000),
                max: 100
            })
        );
        assert_eq!(unpack_prefix(&packed, 6), Ok(b"abc ab".to_vec()));
        assert_eq!(unpack(&[], 10), Err(CodecError::Empty));
        assert_eq!(unpack(&[7, 1, 2], 10), Err(CodecError::UnknownTag(7)));
        let mut broken = packed.clone();
        let last = broken.len() - 1;
        broken.truncate(last);
        assert!(matches!(
            unpack(&broken, 10_000),
            Err(CodecError::Damaged(_))
        ));
    }

    proptest::proptest! {
        #[test]
        fn any_bytes_round_trip_at_both_levels(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..3000)) {
            for level in [Level::Live, Level::Kept] {
                let packed = pack(&bytes, level);
                proptest::prop_assert!(packed.len() <= bytes.len() + 1);
                proptest::prop_assert_eq!(unpack(&packed, bytes.len()), Ok(bytes.clone()));
            }
        }
    }
}
