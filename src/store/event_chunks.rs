//! Raw events as stored (schema 4): consecutive events of one request in chunks, each chunk one
//! row of `events` holding its records packed (`codec.rs`). A record is the event's sequence
//! number and arrival time as deltas from the previous record (zigzag LEB128), its `event:` name
//! and its data — every byte and microsecond kept. Live recording writes a chunk per commit
//! (fast compression); once the request has its outcome, runs of small chunks are packed again
//! into chunks of up to [`CHUNK_TARGET`] record bytes, so a slow stream of tiny deltas ends up
//! compressed as well as one imported whole. Reading a page decodes only the chunks it touches.

use std::time::Duration;

use rusqlite::{Connection, params};

use super::body::push_varint;
use super::codec::{self, Level};
use super::error::{StoreError, StoreResult};
use crate::core::redact::try_redacted_json;
use crate::core::stream::RawEvent;

/// Record bytes a chunk is filled up to (a single larger event gets a chunk of its own).
pub const CHUNK_TARGET: usize = 256 << 10;

/// The most record bytes one stored chunk may unpack to: a chunk is filled to [`CHUNK_TARGET`]
/// unless one event is larger, and a recorded event is at most the default event limit (a
/// larger one, under a raised `--max-event-bytes`, may take four times that). A damaged or
/// crafted row cannot ask for more: its stated size is checked before anything is allocated.
const MAX_CHUNK: usize =
    4 * crate::core::stream::limits::DEFAULT_MAX_EVENT_BYTES as usize + CHUNK_TARGET;

fn zigzag(value: i64) -> u64 {
    ((value << 1) ^ (value >> 63)) as u64
}

fn unzigzag(value: u64) -> i64 {
    ((value >> 1) as i64) ^ -((value & 1) as i64)
}

fn micros(at: Duration) -> i64 {
    i64::try_from(at.as_micros()).unwrap_or(i64::MAX)
}

/// The first byte of a record's name field when its data is kept as bytes that are not UTF-8
/// (a byte no UTF-8 name can start with): then `0` (no name) or `1` and the name follow.
const RAW_DATA: u8 = 0xFF;

/// Appends one record after `prev` (seq, µs) of the chunk. `raw`: `data` is bytes as they
/// came that are not UTF-8 (marked in the name field, so older records read as before).
fn push_record(
    out: &mut Vec<u8>,
    prev: (i64, i64),
    event: &RawEvent,
    data: &[u8],
    raw: bool,
) -> (i64, i64) {
    let seq = i64::try_from(event.seq).unwrap_or(i64::MAX);
    let us = micros(event.received_at);
    push_varint(out, zigzag(seq.wrapping_sub(prev.0)));
    push_varint(out, zigzag(us.wrapping_sub(prev.1)));
    match (&event.event, raw) {
        (Some(name), false) => {
            push_varint(out, name.len() as u64 + 1);
            out.extend_from_slice(name.as_bytes());
        }
        (None, false) => push_varint(out, 0),
        (Some(name), true) => {
            push_varint(out, name.len() as u64 + 3);
            out.extend_from_slice(&[RAW_DATA, 1]);
            out.extend_from_slice(name.as_bytes());
        }
        (None, true) => {
            push_varint(out, 3);
            out.extend_from_slice(&[RAW_DATA, 0]);
        }
    }
    push_varint(out, data.len() as u64);
    out.extend_from_slice(data);
    (seq, us)
}

/// Reads records: a cursor over a chunk's unpacked bytes.
struct Records<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Records<'_> {
    fn varint(&mut self) -> Result<u64, String> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = *self.bytes.get(self.at).ok_or("truncated record")?;
            self.at += 1;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err("varint too long".to_string())
    }

    fn slice(&mut self, len: u64) -> Result<&[u8], String> {
        let len = usize::try_from(len).map_err(|_| "record too long")?;
        let end = self.at.checked_add(len).ok_or("record too long")?;
        let slice = self.bytes.get(self.at..end).ok_or("truncated record")?;
        self.at = end;
        Ok(slice)
    }

    fn text(&mut self, len: u64) -> Result<String, String> {
        String::from_utf8(self.slice(len)?.to_vec()).map_err(|_| "record is not UTF-8".to_string())
    }
}

/// Decodes a chunk's records; `first_seq` is the row's first sequence number.
pub fn decode(bytes: &[u8], first_seq: i64) -> Result<Vec<RawEvent>, String> {
    let mut records = Records { bytes, at: 0 };
    let mut out = Vec::new();
    let (mut seq, mut us) = (first_seq, 0i64);
    while records.at < bytes.len() {
        seq = seq.wrapping_add(unzigzag(records.varint()?));
        us = us.wrapping_add(unzigzag(records.varint()?));
        let (name, raw) = match records.varint()? {
            0 => (None, false),
            n => {
                let field = records.slice(n - 1)?;
                let text = |name: &[u8]| {
                    String::from_utf8(name.to_vec()).map_err(|_| "name is not UTF-8".to_string())
                };
                match field {
                    [RAW_DATA, 0] => (None, true),
                    [RAW_DATA, 1, name @ ..] => (Some(text(name)?), true),
                    _ => (Some(text(field)?), false),
                }
            }
        };
        let len = records.varint()?;
        let seq = u64::try_from(seq).unwrap_or(0);
        let received_at = Duration::from_micros(u64::try_from(us).unwrap_or(0));
        out.push(if raw {
            RawEvent::from_bytes(seq, received_at, name, records.slice(len)?.to_vec())
        } else {
            RawEvent {
                seq,
                received_at,
                event: name,
                data: records.text(len)?,
                bytes: None,
            }
        });
    }
    Ok(out)
}

/// A chunk being encoded: its first sequence number, its events, its records.
struct Chunk {
    first_seq: i64,
    count: i64,
    records: Vec<u8>,
    /// The last record's (seq, µs), which the next one is a delta from.
    prev: (i64, i64),
}

/// Encodes events as the records of chunks of up to [`CHUNK_TARGET`] bytes. `redact` passes
/// every data through the redaction policy (as a write does; a migration or a repack copies
/// stored data as it is), and fails closed: data that cannot be redacted, or JSON that would not
/// parse back, is an error and no chunk is made.
fn encode<'a>(
    events: impl IntoIterator<Item = &'a RawEvent>,
    redact: bool,
) -> StoreResult<Vec<Chunk>> {
    let mut chunks = Vec::new();
    let mut current: Option<Chunk> = None;
    for event in events {
        let data = if redact {
            try_redacted_json(&event.data).map_err(StoreError::redaction("event data"))?
        } else {
            std::borrow::Cow::Borrowed(event.data.as_str())
        };
        // Bytes that are not UTF-8 are kept as they came, unless redaction had to change their
        // text (then the redacted text is what is kept).
        let (data, raw): (&[u8], bool) = match (&event.bytes, &data) {
            (Some(bytes), std::borrow::Cow::Borrowed(_)) => (bytes, true),
            _ => (data.as_bytes(), false),
        };
        let chunk = current.get_or_insert_with(|| {
            let seq = i64::try_from(event.seq).unwrap_or(i64::MAX);
            Chunk {
                first_seq: seq,
                count: 0,
                records: Vec::new(),
                prev: (seq, 0),
            }
        });
        chunk.prev = push_record(&mut chunk.records, chunk.prev, event, data, raw);
        chunk.count += 1;
        if chunk.records.len() >= CHUNK_TARGET {
            chunks.extend(current.take());
        }
    }
    chunks.extend(current);
    Ok(chunks)
}

fn insert_chunk(
    conn: &Connection,
    request_id: i64,
    chunk: &Chunk,
    level: Level,
) -> StoreResult<()> {
    conn.prepare_cached(
        "INSERT OR REPLACE INTO events (request_id, first_seq, count, raw_bytes, data) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![
        request_id,
        chunk.first_seq,
        chunk.count,
        i64::try_from(chunk.records.len()).unwrap_or(i64::MAX),
        codec::pack(&chunk.records, level),
    ])?;
    Ok(())
}

/// Writes raw events of one request (their data redacted), in chunks, inside the caller's
/// transaction.
pub fn insert<'a>(
    conn: &Connection,
    request_id: i64,
    events: impl IntoIterator<Item = &'a RawEvent>,
    level: Level,
) -> StoreResult<()> {
    for chunk in encode(events, true)? {
        insert_chunk(conn, request_id, &chunk, level)?;
    }
    Ok(())
}

/// Writes stored events again as they are (no redaction pass): for the migration.
pub fn insert_stored(conn: &Connection, request_id: i64, events: &[RawEvent]) -> StoreResult<()> {
    for chunk in encode(events, false)? {
        insert_chunk(conn, request_id, &chunk, Level::Kept)?;
    }
    Ok(())
}

/// One chunk row without its data.
struct ChunkMeta {
    first_seq: i64,
    count: i64,
    raw_bytes: i64,
}

fn chunk_metas(conn: &Connection, request_id: i64) -> StoreResult<Vec<ChunkMeta>> {
    let mut stmt = conn.prepare_cached(
        "SELECT first_seq, count, raw_bytes FROM events WHERE request_id = ?1 ORDER BY first_seq",
    )?;
    let rows = stmt.query_map([request_id], |row| {
        Ok(ChunkMeta {
            first_seq: row.get(0)?,
            count: row.get(1)?,
            raw_bytes: row.get(2)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn chunk_events(conn: &Connection, request_id: i64, first_seq: i64) -> StoreResult<Vec<RawEvent>> {
    let data: Vec<u8> = conn
        .prepare_cached("SELECT data FROM events WHERE request_id = ?1 AND first_seq = ?2")?
        .query_row(params![request_id, first_seq], |row| row.get(0))?;
    let records = codec::unpack(&data, MAX_CHUNK)
        .map_err(|e| StoreError::Damaged(format!("events of request {request_id}: {e}")))?;
    decode(&records, first_seq)
        .map_err(|e| StoreError::Damaged(format!("events of request {request_id}: {e}")))
}

/// Packs runs of small chunks of a finished request into chunks of up to [`CHUNK_TARGET`]
/// record bytes (inside the caller's transaction). Chunks already that large are not touched,
/// so the work is bounded by the small ones.
pub fn repack(conn: &Connection, request_id: i64) -> StoreResult<()> {
    let metas = chunk_metas(conn, request_id)?;
    let mut group: Vec<&ChunkMeta> = Vec::new();
    let mut size = 0i64;
    let target = i64::try_from(CHUNK_TARGET).unwrap_or(i64::MAX);
    for meta in metas.iter().chain(std::iter::once(&ChunkMeta {
        first_seq: i64::MAX,
        count: 0,
        raw_bytes: i64::MAX,
    })) {
        if size.saturating_add(meta.raw_bytes) > target {
            if group.len() > 1 {
                let mut events = Vec::new();
                for old in &group {
                    events.extend(chunk_events(conn, request_id, old.first_seq)?);
                    conn.prepare_cached(
                        "DELETE FROM events WHERE request_id = ?1 AND first_seq = ?2",
                    )?
                    .execute(params![request_id, old.first_seq])?;
                }
                for chunk in encode(&events, false)? {
                    insert_chunk(conn, request_id, &chunk, Level::Kept)?;
                }
            }
            group.clear();
            size = 0;
        }
        group.push(meta);
        size = size.saturating_add(meta.raw_bytes);
    }
    Ok(())
}

/// Events `offset..offset + limit` of a request, in order, decoding only the chunks they lie in.
pub fn page(
    conn: &Connection,
    request_id: i64,
    offset: u64,
    limit: u64,
) -> StoreResult<Vec<RawEvent>> {
    let mut out = Vec::new();
    let end = offset.saturating_add(limit);
    let mut at = 0u64;
    for meta in chunk_metas(conn, request_id)? {
        let count = u64::try_from(meta.count).unwrap_or(0);
        let (start, stop) = (at, at.saturating_add(count));
        at = stop;
        if stop <= offset {
            continue;
        }
        if start >= end {
            break;
        }
        let events = chunk_events(conn, request_id, meta.first_seq)?;
        let skip = usize::try_from(offset.saturating_sub(start)).unwrap_or(usize::MAX);
        let take = usize::try_from(end.min(stop) - start.max(offset)).unwrap_or(usize::MAX);
        out.extend(events.into_iter().skip(skip).take(take));
    }
    Ok(out)
}

/// Number of events stored for a request.
pub fn count(conn: &Connection, request_id: i64) -> StoreResult<u64> {
    let n: i64 = conn
        .prepare_cached("SELECT coalesce(sum(count), 0) FROM events WHERE request_id = ?1")?
        .query_row([request_id], |r| r.get(0))?;
    Ok(u64::try_from(n).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(seq: u64, ms: u64, name: Option<&str>, data: &str) -> RawEvent {
        RawEvent {
            seq,
            received_at: Duration::from_millis(ms),
            event: name.map(str::to_string),
            data: data.to_string(),
            bytes: None,
        }
    }

    #[test]
    fn records_round_trip_every_field() {
        let events = vec![
            event(
                3,
                20,
                Some("response.created"),
                r#"{"type":"response.created"}"#,
            ),
            event(4, 19, None, ""),
            event(9, 400_000, Some(""), "line one\nline two"),
            event(2, 0, Some("é"), "back in time"),
        ];
        let chunks = encode(&events, false).expect("encode");
        assert_eq!(chunks.len(), 1);
        assert_eq!((chunks[0].first_seq, chunks[0].count), (3, 4));
        assert_eq!(decode(&chunks[0].records, 3), Ok(events));
    }

    #[test]
    fn large_streams_split_into_chunks_near_the_target() {
        let data = "x".repeat(1000);
        let events: Vec<RawEvent> = (0..600).map(|k| event(k, k, None, &data)).collect();
        let chunks = encode(&events, false).expect("encode");
        let counts: Vec<i64> = chunks.iter().map(|c| c.count).collect();
        assert_eq!(counts, vec![261, 261, 78]);
        let back: Vec<RawEvent> = chunks
            .iter()
            .flat_map(|c| decode(&c.records, c.first_seq).unwrap_or_default())
            .collect();
        assert_eq!(back, events);
    }

    #[test]
    fn damaged_records_are_errors() {
        assert!(decode(&[0x80], 0).is_err());
        assert!(decode(&[0, 0, 0, 5, b'a'], 0).is_err());
        assert!(decode(&[0, 0, 2, 0xff, 0], 0).is_err());
    }

    proptest::proptest! {
        #[test]
        fn any_events_round_trip_through_records(
            events in proptest::collection::vec(
                (0u64..1 << 40, 0u64..1 << 40, proptest::option::of(".{0,12}"), ".{0,40}"),
                0..40,
            )
        ) {
            let events: Vec<RawEvent> = events
                .into_iter()
                .map(|(seq, us, name, data)| RawEvent {
                    seq,
                    received_at: Duration::from_micros(us),
                    event: name,
                    data, bytes: None,
                })
                .collect();
            let back: Vec<RawEvent> = encode(&events, false)
                .unwrap_or_default()
                .iter()
                .flat_map(|c| decode(&c.records, c.first_seq).unwrap_or_default())
                .collect();
            proptest::prop_assert_eq!(back, events);
        }

        #[test]
        fn damaged_records_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..200)) {
            let _ = decode(&bytes, 0);
            let _ = codec::unpack(&bytes, 1 << 20);
            let _ = codec::unpack_prefix(&bytes, 64);
        }
    }
}
