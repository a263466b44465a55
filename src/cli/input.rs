//! Reading a JSON input argument (`FILE` or `-` for stdin) with a size limit, and turning JSON
//! syntax errors into messages with line and column.

use std::io::Read;
use std::path::Path;

use anyhow::{Context as _, bail};
use serde_json::Value;

use crate::core::error::PromptError;
/// Sizes in messages, shared with the stream limits.
pub use crate::core::stream::limits::human_size;

/// Reads `arg` (a path, or `-` for stdin) as UTF-8 text of at most `max_bytes`.
pub fn read_text(arg: &str, max_bytes: u64) -> anyhow::Result<String> {
    let bytes = read_bytes(arg, max_bytes)?;
    String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!(
            "{}: not UTF-8 text (invalid byte at offset {})",
            display_name(arg),
            e.utf8_error().valid_up_to()
        )
    })
}

/// Reads `arg` (a path, or `-` for stdin) as bytes, at most `max_bytes`: bounded while reading,
/// so pipes and devices (whose reported size is 0) stop at the limit too.
pub fn read_bytes(arg: &str, max_bytes: u64) -> anyhow::Result<Vec<u8>> {
    if arg == "-" {
        return read_capped(std::io::stdin().lock(), max_bytes)
            .context("reading standard input")?
            .ok_or_else(|| too_large("standard input", max_bytes));
    }
    read_file(Path::new(arg), max_bytes)
}

/// Reads the file at `path` (a device or named pipe too), at most `max_bytes`, bounded while
/// reading.
pub fn read_file(path: &Path, max_bytes: u64) -> anyhow::Result<Vec<u8>> {
    let shown = path.display();
    let file =
        super::pipe::InputFile::open(path).with_context(|| format!("cannot read {shown}"))?;
    // A regular file's size gives the better message up front (and the buffer's size: no
    // doubling copies of a large file); the read stays bounded anyway.
    let reported = file
        .metadata()
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.len());
    if let Some(size) = reported
        && size > max_bytes
    {
        bail!(
            "{shown} is {}, larger than the limit of {} (raise it with --max-bytes)",
            human_size(size),
            human_size(max_bytes)
        );
    }
    let mut bytes = Vec::with_capacity(usize::try_from(reported.unwrap_or(0)).unwrap_or(0) + 1);
    read_capped_into(file, max_bytes, &mut bytes)
        .with_context(|| format!("cannot read {shown}"))?
        .ok_or_else(|| too_large(&shown.to_string(), max_bytes))
}

fn too_large(what: &str, max_bytes: u64) -> anyhow::Error {
    anyhow::anyhow!(
        "{what} is larger than the limit of {} (raise it with --max-bytes)",
        human_size(max_bytes)
    )
}

/// Reads `reader` to its end but never more than `max_bytes` (plus one byte to tell): `None` when
/// there was more. The one bounded reader of the command line; `max_bytes` may be `u64::MAX`.
pub fn read_capped(reader: impl Read, max_bytes: u64) -> std::io::Result<Option<Vec<u8>>> {
    read_capped_into(reader, max_bytes, &mut Vec::new())
}

/// [`read_capped`] into `bytes` (empty, perhaps with room reserved), which it takes.
fn read_capped_into(
    reader: impl Read,
    max_bytes: u64,
    bytes: &mut Vec<u8>,
) -> std::io::Result<Option<Vec<u8>>> {
    let mut reader = reader.take(max_bytes.saturating_add(1));
    // Growing by doubling copies the data at each step (and the allocator may hold on to the
    // old block a while): `read_to_end` on a pipe took 2.66 GB for a 1 GiB limit. So when the
    // size is unknown and the limit not huge, room for the whole limit is reserved up front
    // (address space only: pages are touched as data arrives); else the buffer doubles, but
    // never past the limit plus one byte.
    let cap = usize::try_from(max_bytes.saturating_add(1)).unwrap_or(usize::MAX);
    if bytes.capacity() <= 1 && cap <= MAX_RESERVE_BYTES {
        // Best effort: without the room, the doubling below still works.
        let _ = bytes.try_reserve_exact(cap - bytes.len());
    }
    let mut chunk = vec![0u8; READ_CHUNK_BYTES];
    loop {
        let n = match reader.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if bytes.capacity() - bytes.len() < n {
            let want = bytes
                .capacity()
                .saturating_mul(2)
                .max(READ_CHUNK_BYTES)
                .min(cap);
            let want = want.max(bytes.len() + n);
            bytes
                .try_reserve_exact(want - bytes.len())
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::OutOfMemory, e))?;
        }
        bytes.extend_from_slice(&chunk[..n]);
    }
    let bytes = std::mem::take(bytes);
    Ok((bytes.len() as u64 <= max_bytes).then_some(bytes))
}

/// Largest limit [`read_capped`] reserves room for up front.
const MAX_RESERVE_BYTES: usize = 4 << 30;

/// Size of the reads of [`read_capped`].
const READ_CHUNK_BYTES: usize = 64 * 1024;

/// Parses JSON text, naming the line and column of a syntax error.
pub fn parse_json(arg: &str, text: &str) -> anyhow::Result<Value> {
    let value = serde_json::from_str(text).map_err(|e| {
        anyhow::anyhow!("{}: {}", display_name(arg), PromptError::from_serde("", &e))
    })?;
    warn_duplicate_keys(arg, text);
    Ok(value)
}

/// Most repeated keys named one by one on standard error.
const MAX_DUPLICATE_WARNINGS: usize = 10;

/// Warns on standard error, one line each, about keys repeated anywhere in the JSON `text`
/// read from `arg` (its last value is what counts).
pub fn warn_duplicate_keys(arg: &str, text: &str) {
    let Some((found, all)) = crate::core::import::duplicate_keys(text, MAX_DUPLICATE_WARNINGS)
    else {
        return;
    };
    for duplicate in &found {
        eprintln!("promptwire: warning: {}: {duplicate}", display_name(arg));
    }
    if all > found.len() {
        eprintln!(
            "promptwire: warning: {}: {} more repeated keys",
            display_name(arg),
            all - found.len()
        );
    }
}

/// `stdin` for `-`, else the path.
pub fn display_name(arg: &str) -> &str {
    if arg == "-" { "stdin" } else { arg }
}
