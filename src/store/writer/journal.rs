//! The writer's spill journal: when its queue or memory budget is full (the database is slower
//! than the network, locked or full), operations go on in the same order into an append-only
//! file beside the database (`NAME.journal-PID`, owner-only, created on first use) instead of
//! being dropped. Raw events are written to the file; the few other operations (rows, outcomes,
//! with their callbacks) wait in memory at their place in the order. The writer thread reads the
//! journal back once its queue is empty, so the order producers gave is kept: queue first, then
//! the journal, then the queue again once the journal is empty (the file is truncated then).
//! The file is bounded by a disk budget; past it, an operation is dropped and counted as before.
//! It is removed when the writer stops.

use std::collections::VecDeque;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{Op, RequestKey};
use crate::core::stream::RawEvent;

/// Bytes buffered in memory before they are written to the file.
const WRITE_BUFFER: usize = 256 << 10;

/// A journal entry's fixed header: key, seq, µs, name length, data length.
const HEADER: usize = 8 + 8 + 8 + 4 + 4;

/// Name length meaning "no `event:` name".
const NO_NAME: u32 = u32::MAX;

/// Why an operation could not be journaled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SpillError {
    /// The disk budget is used up.
    Budget,
    /// The file could not be created or written.
    Io,
}

impl SpillError {
    /// The reason recorded with what was lost.
    pub(super) fn reason(self) -> &'static str {
        match self {
            Self::Budget => {
                "the writer's queue and its journal's disk budget were full (the database could not keep up or could not be written)"
            }
            Self::Io => {
                "the writer's queue was full and its journal file could not be written (the database could not keep up or could not be written)"
            }
        }
    }
}

/// The journal file and what waits in it.
pub(super) struct Journal {
    path: PathBuf,
    budget: u64,
    file: Option<File>,
    /// Bytes not yet written to the file.
    buffer: Vec<u8>,
    /// Bytes in the file.
    file_len: u64,
    /// How far the writer has read (file offset).
    read: u64,
    /// Operations other than events, each at the file offset where it falls in the order.
    held: VecDeque<(u64, Op)>,
    /// Entries (events and held operations) not yet read back.
    entries: u64,
    /// True once the file could not be created or written (it is not tried again).
    broken: bool,
    /// Events journaled so far.
    spilled: u64,
}

/// What the writer takes from the journal in one go.
pub(super) enum Taken {
    /// Events in order (at most about the byte limit asked for).
    Events(Vec<(RequestKey, RawEvent)>),
    /// The next held operation.
    Op(Op),
    /// Nothing is left.
    Empty,
}

impl Journal {
    /// A journal beside `db` (nothing is created until something is spilled).
    pub(super) fn new(db: &Path, budget: u64) -> Self {
        let name = db
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "promptwire".to_string());
        let path = db.with_file_name(format!("{name}.journal-{}", std::process::id()));
        Self {
            path,
            budget,
            file: None,
            buffer: Vec::new(),
            file_len: 0,
            read: 0,
            held: VecDeque::new(),
            entries: 0,
            broken: false,
            spilled: 0,
        }
    }

    /// Entries waiting.
    pub(super) fn entries(&self) -> u64 {
        self.entries
    }

    /// Events journaled so far (counted under the journal's lock, not the status's).
    pub(super) fn spilled(&self) -> u64 {
        self.spilled
    }

    /// Bytes of events waiting (file and buffer).
    pub(super) fn bytes(&self) -> u64 {
        self.file_len + self.buffer.len() as u64 - self.read
    }

    fn end(&self) -> u64 {
        self.file_len + self.buffer.len() as u64
    }

    /// Appends `op` (an event to the file, anything else held in memory at its place).
    pub(super) fn push(&mut self, op: Op) -> Result<(), SpillError> {
        match op {
            Op::Event { key, event } => {
                if self.broken {
                    return Err(SpillError::Io);
                }
                let name = event.event.as_deref().unwrap_or("");
                // The data as received (bytes that are not UTF-8 too).
                let data = event.data_bytes();
                let size = HEADER + name.len() + data.len();
                if self.end() + size as u64 > self.budget {
                    return Err(SpillError::Budget);
                }
                let Ok(name_len) = u32::try_from(name.len()) else {
                    return Err(SpillError::Budget);
                };
                let Ok(data_len) = u32::try_from(data.len()) else {
                    return Err(SpillError::Budget);
                };
                let buffer = &mut self.buffer;
                buffer.extend_from_slice(&key.0.to_le_bytes());
                buffer.extend_from_slice(&event.seq.to_le_bytes());
                let us = u64::try_from(event.received_at.as_micros()).unwrap_or(u64::MAX);
                buffer.extend_from_slice(&us.to_le_bytes());
                buffer.extend_from_slice(
                    &(if event.event.is_some() {
                        name_len
                    } else {
                        NO_NAME
                    })
                    .to_le_bytes(),
                );
                buffer.extend_from_slice(&data_len.to_le_bytes());
                buffer.extend_from_slice(name.as_bytes());
                buffer.extend_from_slice(data);
                self.entries += 1;
                self.spilled += 1;
                if self.buffer.len() >= WRITE_BUFFER && self.write_out().is_err() {
                    // What was buffered is kept in memory; nothing more is taken.
                    self.broken = true;
                }
                Ok(())
            }
            other => {
                let at = self.end();
                self.held.push_back((at, other));
                self.entries += 1;
                Ok(())
            }
        }
    }

    /// Writes the buffer to the file (created owner-only on first use).
    fn write_out(&mut self) -> std::io::Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        if self.file.is_none() {
            let mut options = std::fs::OpenOptions::new();
            options.read(true).write(true).create(true).truncate(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt as _;
                options.mode(0o600);
            }
            self.file = Some(options.open(&self.path)?);
        }
        let Some(file) = self.file.as_ref() else {
            return Ok(());
        };
        write_all_at(file, &self.buffer, self.file_len)?;
        self.file_len += self.buffer.len() as u64;
        self.buffer.clear();
        Ok(())
    }

    /// Takes the next events (up to about `max_bytes`, never past a held operation) or the next
    /// held operation. The file is truncated once everything in it is read.
    pub(super) fn take(&mut self, max_bytes: usize) -> Taken {
        if self.entries == 0 {
            return Taken::Empty;
        }
        if let Some((at, _)) = self.held.front()
            && *at <= self.read
            && let Some((_, op)) = self.held.pop_front()
        {
            self.entries -= 1;
            self.truncate_if_done();
            return Taken::Op(op);
        }
        let stop = self
            .held
            .front()
            .map_or(self.end(), |(at, _)| *at)
            .min(self.read + max_bytes.max(HEADER) as u64);
        let mut out = Vec::new();
        // One read for the whole piece; an entry larger than the piece is read alone.
        let block = self
            .bytes_at(self.read, usize::try_from(stop - self.read).unwrap_or(0))
            .unwrap_or_default();
        let mut at = 0usize;
        while let Some((entry, len)) = parse(&block[at..]).or_else(|| {
            if !out.is_empty() {
                return None;
            }
            let header = self.bytes_at(self.read, HEADER)?;
            let len = entry_len(&header)?;
            let whole = self.bytes_at(self.read, len)?;
            parse(&whole)
        }) {
            out.push(entry);
            at += len;
            self.read += len as u64;
            self.entries -= 1;
            if self.read >= stop || at >= block.len() {
                break;
            }
        }
        if out.is_empty() {
            // Unreadable (the file was damaged under us): what is left cannot be read back.
            self.entries = self.held.len() as u64;
            self.read = self.end();
        }
        self.truncate_if_done();
        Taken::Events(out)
    }

    /// `len` bytes at logical offset `at` (from the file or the buffer).
    fn bytes_at(&self, at: u64, len: usize) -> Option<Vec<u8>> {
        let end = at.checked_add(len as u64)?;
        if end > self.end() {
            return None;
        }
        let mut out = vec![0u8; len];
        let mut filled = 0usize;
        if at < self.file_len {
            let in_file = (self.file_len - at).min(len as u64) as usize;
            read_exact_at(self.file.as_ref()?, &mut out[..in_file], at).ok()?;
            filled = in_file;
        }
        if filled < len {
            let from = usize::try_from(at + filled as u64 - self.file_len).ok()?;
            out[filled..].copy_from_slice(self.buffer.get(from..from + (len - filled))?);
        }
        Some(out)
    }

    /// Once everything is read: the file is emptied, the offsets start again.
    fn truncate_if_done(&mut self) {
        if self.entries == 0 && self.held.is_empty() {
            if let Some(file) = &self.file
                && file.set_len(0).is_err()
            {
                self.broken = true;
            }
            self.file_len = 0;
            self.read = 0;
            self.buffer.clear();
        }
    }

    /// Everything still held (shutting down): the operations in memory, the events counted.
    pub(super) fn abandon(&mut self) -> (Vec<Op>, u64) {
        let ops: Vec<Op> = self.held.drain(..).map(|(_, op)| op).collect();
        let events = self.entries - ops.len() as u64;
        self.entries = 0;
        self.truncate_if_done();
        (ops, events)
    }

    /// Removes the file (the writer stops).
    pub(super) fn remove(&mut self) {
        if self.file.take().is_some() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// The whole length of the entry whose header is `header`.
fn entry_len(header: &[u8]) -> Option<usize> {
    let half = |at: usize| -> Option<u32> {
        Some(u32::from_le_bytes(header.get(at..at + 4)?.try_into().ok()?))
    };
    let name_len = match half(24)? {
        NO_NAME => 0,
        n => n as usize,
    };
    Some(HEADER + name_len + half(28)? as usize)
}

/// The entry at the start of `bytes` and its length, when it is there whole.
fn parse(bytes: &[u8]) -> Option<((RequestKey, RawEvent), usize)> {
    let word = |at: usize| -> Option<u64> {
        Some(u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?))
    };
    let len = entry_len(bytes.get(..HEADER)?)?;
    let body = bytes.get(HEADER..len)?;
    let named = bytes.get(24..28)? != NO_NAME.to_le_bytes();
    let name_len = if named {
        u32::from_le_bytes(bytes.get(24..28)?.try_into().ok()?) as usize
    } else {
        0
    };
    let (name, data) = body.split_at(name_len);
    let event = RawEvent::from_bytes(
        word(8)?,
        Duration::from_micros(word(16)?),
        named.then(|| String::from_utf8_lossy(name).into_owned()),
        data.to_vec(),
    );
    Some(((RequestKey(word(0)?), event), len))
}

#[cfg(unix)]
fn write_all_at(file: &File, bytes: &[u8], at: u64) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt as _;
    file.write_all_at(bytes, at)
}

#[cfg(unix)]
fn read_exact_at(file: &File, out: &mut [u8], at: u64) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt as _;
    file.read_exact_at(out, at)
}

#[cfg(windows)]
fn write_all_at(file: &File, mut bytes: &[u8], mut at: u64) -> std::io::Result<()> {
    use std::os::windows::fs::FileExt as _;
    while !bytes.is_empty() {
        let n = file.seek_write(bytes, at)?;
        bytes = &bytes[n..];
        at += n as u64;
    }
    Ok(())
}

#[cfg(windows)]
fn read_exact_at(file: &File, mut out: &mut [u8], mut at: u64) -> std::io::Result<()> {
    use std::os::windows::fs::FileExt as _;
    while !out.is_empty() {
        let n = file.seek_read(out, at)?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        out = &mut out[n..];
        at += n as u64;
    }
    Ok(())
}
