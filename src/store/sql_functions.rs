//! SQL functions every store connection has: `pw_text(packed)` and `pw_text(packed, n)` unpack a
//! packed column (`codec.rs`) to text — all of it, or its first `n` bytes — so that search can
//! `LIKE` over texts that are stored compressed. NULL stays NULL; a value that cannot be
//! unpacked reads as NULL (it matches nothing; the read that needs it reports the damage).

use rusqlite::Connection;
use rusqlite::functions::FunctionFlags;
use rusqlite::types::ValueRef;

use super::codec;
use super::read::MAX_TEXT;

fn unpacked(packed: &[u8], prefix: Option<i64>) -> Option<String> {
    let bytes = match prefix {
        Some(n) => codec::unpack_prefix(packed, usize::try_from(n).unwrap_or(0)).ok()?,
        None => codec::unpack(packed, MAX_TEXT).ok()?,
    };
    Some(match String::from_utf8(bytes) {
        Ok(text) => text,
        // A prefix may end inside a character.
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

/// Registers the functions on `conn`.
pub fn register(conn: &Connection) -> rusqlite::Result<()> {
    let flags = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    conn.create_scalar_function("pw_text", 1, flags, |ctx| {
        Ok(match ctx.get_raw(0) {
            ValueRef::Blob(packed) => unpacked(packed, None),
            _ => None,
        })
    })?;
    conn.create_scalar_function("pw_text", 2, flags, |ctx| {
        let n: i64 = ctx.get(1)?;
        Ok(match ctx.get_raw(0) {
            ValueRef::Blob(packed) => unpacked(packed, Some(n)),
            _ => None,
        })
    })
}
