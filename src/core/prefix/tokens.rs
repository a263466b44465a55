//! Token counting with the o200k_base encoding (the encoding of the GPT-4o/GPT-5 model family),
//! through `tiktoken-rs`.
//!
//! Long texts are counted in segments of about [`SEGMENT_BYTES`], so time and memory stay linear:
//! `tiktoken-rs` merges each pre-token piece with a heap over its bytes, which costs seconds and
//! hundreds of megabytes on one long run (8 MB of one character). A segment ends before a space
//! that follows a printable ASCII character — always a boundary of o200k's pre-tokenizer, so the
//! count is exact; only a run with no such space for [`MAX_SEGMENT_BYTES`] is cut anyway (into
//! ~100-byte pieces, which tiktoken merges quickly), an estimate that may miscount a token or two
//! at each cut. A text longer than [`PARALLEL_BYTES`] has its segments counted on all cores.
//!
//! The tables load on the first count, not when a [`Tokenizer`] is made: a session that never
//! counts (or fails on its first body) never pays for them.

use std::collections::HashMap;

use rayon::prelude::*;
use tiktoken_rs::CoreBPE;

/// An o200k_base token counter. Cheap to copy; the encoding tables are loaded once per process
/// on the first count (a few hundred milliseconds).
#[derive(Clone, Copy)]
pub struct Tokenizer {
    _private: (),
}

impl std::fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tokenizer(o200k_base)")
    }
}

impl Tokenizer {
    /// The o200k_base counter (the bundled tables load on its first count).
    pub fn o200k() -> Self {
        Self { _private: () }
    }

    /// Number of tokens in `text`, special-token markers counted as ordinary text.
    pub fn count(&self, text: &str) -> u64 {
        self.count_unless(text, || false).unwrap_or(0)
    }

    /// Like [`Tokenizer::count`], but `stop` is asked between segments (about every
    /// [`SEGMENT_BYTES`]): None when it said stop. A worker counting a body nobody looks at
    /// any more (the user selected another request) gives the cores back at once.
    pub fn count_unless(&self, text: &str, stop: impl Fn() -> bool + Sync) -> Option<u64> {
        if text.len() <= PARALLEL_BYTES {
            return count_segments(segments(text), &stop);
        }
        // Segments are independent (each ends at a pre-tokenizer boundary): count batches of
        // them on all cores.
        let all: Vec<(&str, bool)> = segments(text).collect();
        all.par_chunks(SEGMENTS_PER_TASK)
            .map(|batch| count_segments(batch.iter().copied(), &stop))
            .sum()
    }
}

/// The process-wide o200k_base tables (loaded on first use).
fn bpe() -> &'static CoreBPE {
    tiktoken_rs::o200k_base_singleton()
}

/// Tokens in a sequence of segments of one text; None once `stop` says so (asked before each
/// segment).
fn count_segments<'a>(
    segments: impl Iterator<Item = (&'a str, bool)>,
    stop: &impl Fn() -> bool,
) -> Option<u64> {
    let bpe = bpe();
    // Runs repeat (one character over megabytes): each distinct run piece is encoded once.
    let mut run_pieces: HashMap<&str, u64> = HashMap::new();
    segments
        .map(|(segment, forced)| {
            if stop() {
                return None;
            }
            Some(match forced {
                // A long run with no boundary: in pieces short enough for tiktoken's quick
                // merge.
                true => pieces(segment, RUN_PIECE_BYTES)
                    .map(|piece| {
                        *run_pieces
                            .entry(piece)
                            .or_insert_with(|| bpe.encode_ordinary(piece).len() as u64)
                    })
                    .sum(),
                false => bpe.encode_ordinary(segment).len() as u64,
            })
        })
        .sum()
}

/// Texts longer than this are counted in parallel.
pub const PARALLEL_BYTES: usize = 1024 * 1024;

/// Segments counted by one parallel task (about 1 MB).
const SEGMENTS_PER_TASK: usize = 64;

/// Length of the segments a long text is counted in.
pub const SEGMENT_BYTES: usize = 16 * 1024;

/// Longest segment: a run without a safe boundary is cut here.
pub const MAX_SEGMENT_BYTES: usize = 64 * 1024;

/// Length of the pieces a run without boundaries is counted in (tiktoken merges pieces under
/// 100 bytes with a quick scan, longer ones with a heap costing ~200 ns a byte).
const RUN_PIECE_BYTES: usize = 96;

/// `text` cut into segments of at least [`SEGMENT_BYTES`] (the last may be shorter), each ending
/// at a pre-tokenizer boundary when one comes within [`MAX_SEGMENT_BYTES`]; `true` marks a
/// segment cut where no boundary came.
fn segments(text: &str) -> impl Iterator<Item = (&str, bool)> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let (cut, forced) = cut_point(rest);
        let (segment, tail) = rest.split_at(cut);
        rest = tail;
        Some((segment, forced))
    })
}

/// `text` in pieces of at most `max` bytes (more for a character longer than that), cut at
/// character boundaries.
fn pieces(text: &str, max: usize) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let cut = (1..=max.min(rest.len()))
            .rev()
            .find(|&i| rest.is_char_boundary(i))
            .unwrap_or(rest.len());
        let (piece, tail) = rest.split_at(cut);
        rest = tail;
        Some(piece)
    })
}

/// Where the first segment of `text` ends, and whether it was cut without a boundary.
fn cut_point(text: &str) -> (usize, bool) {
    let bytes = text.as_bytes();
    if bytes.len() <= MAX_SEGMENT_BYTES {
        return (bytes.len(), false);
    }
    // A space after a printable ASCII character (not whitespace): the piece before ends there
    // and the next starts with the space, whatever precedes it.
    let safe = (SEGMENT_BYTES..MAX_SEGMENT_BYTES)
        .find(|&i| bytes[i] == b' ' && bytes[i - 1].is_ascii_graphic());
    match safe {
        Some(i) => (i, false),
        None => (
            (1..=MAX_SEGMENT_BYTES)
                .rev()
                .find(|&i| text.is_char_boundary(i))
                .unwrap_or(bytes.len()),
            true,
        ),
    }
}

impl Default for Tokenizer {
    fn default() -> Self {
        Self::o200k()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_o200k_tokens() {
        let t = Tokenizer::o200k();
        assert_eq!(t.count(""), 0);
        assert_eq!(t.count("hello world"), 2);
        // Special markers in user text are plain text, never a control token.
        assert!(t.count("<|endoftext|>") > 1);
    }

    #[test]
    fn long_text_counts_as_one_piece_would() {
        let t = Tokenizer::o200k();
        // Words, numbers, punctuation, double spaces, line ends and non-ASCII, well past a
        // segment: counted in segments, the total equals one whole encoding.
        let unit = "Hello, wörld!  The 12345 crates\n\tcompile   fast; naïve café's 'quoted' ";
        // Past PARALLEL_BYTES too: segments counted on several threads add up the same.
        let text = unit.repeat(20_000);
        assert!(text.len() > PARALLEL_BYTES);
        assert!(text.len() > 4 * MAX_SEGMENT_BYTES);
        assert!(segments(&text).count() > 4);
        let whole = bpe().encode_ordinary(&text).len() as u64;
        assert_eq!(t.count(&text), whole);
        assert_eq!(segments(&text).map(|(s, _)| s).collect::<String>(), text);
        assert!(segments(&text).all(|(_, forced)| !forced));
    }

    #[test]
    fn a_count_told_to_stop_stops_between_segments() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let t = Tokenizer::o200k();
        let unit = "Hello, world! The 12345 crates compile fast; ";
        for text in [unit.repeat(4_000), unit.repeat(40_000)] {
            assert!(segments(&text).count() > 4);
            assert_eq!(t.count_unless(&text, || false), Some(t.count(&text)));
            // Told to stop after two segments: no count.
            let asked = AtomicUsize::new(0);
            let stopped = t.count_unless(&text, || asked.fetch_add(1, Ordering::Relaxed) >= 2);
            assert_eq!(stopped, None);
        }
    }

    #[test]
    fn a_run_without_spaces_is_cut_at_char_boundaries() {
        let text = "é".repeat(100_000);
        let parts: Vec<(&str, bool)> = segments(&text).collect();
        assert_eq!(parts.iter().map(|(s, _)| *s).collect::<String>(), text);
        assert!(parts.iter().all(|(p, _)| p.len() <= MAX_SEGMENT_BYTES));
        assert!(parts[..parts.len() - 1].iter().all(|(_, forced)| *forced));
        let small: Vec<&str> = pieces(parts[0].0, RUN_PIECE_BYTES).collect();
        assert_eq!(small.concat(), parts[0].0);
        assert!(small.iter().all(|p| p.len() <= RUN_PIECE_BYTES));
        assert!(
            small[..small.len() - 1]
                .iter()
                .all(|p| p.len() >= RUN_PIECE_BYTES - 1)
        );
        let t = Tokenizer::o200k();
        let whole = bpe().encode_ordinary(&text).len() as u64;
        let counted = t.count(&text);
        // An estimate on such runs: at most a token or two off per piece.
        let cuts = text.len().div_ceil(RUN_PIECE_BYTES - 1) as u64;
        assert!(counted.abs_diff(whole) <= 2 * cuts, "{counted} vs {whole}");
    }
}
