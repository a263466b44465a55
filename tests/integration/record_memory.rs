//! Memory follows the limits, not the answer: a gzip-compressed answer of 1 KB text deltas
//! through `record`, read by a client as fast as loopback allows; the peak RSS of `record`
//! (`VmHWM` from `/proc`) stays under 300 MiB, whatever the answer's size, and every event is
//! stored. The answer is 256 MB by default (bounded in time in a debug build);
//! `PROMPTWIRE_RECORD_MEMORY_MB=1000` runs the 1 GB case.
//!
//! The compressed body is made without compressing a gigabyte: one 1 MB block of events is
//! deflated once with a full flush (a self-contained segment), repeated, and closed with the
//! last event and the gzip trailer (its CRC combined from the block's).

use crate::support;

use std::io::{BufRead as _, Read as _, Write as _};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use promptwire::store::{Page, RecordedState, Store};
use serde_json::{Value, json};
use support::rss::MIB;
use support::scratch;

/// The bound the issue sets for a 1 GB answer at the default limits.
const BOUND: u64 = 300 * MIB;

/// Events in one repeated block (about 1 MB of SSE).
const BLOCK_EVENTS: usize = 1000;

fn sse(kind: &str, data: &Value) -> Vec<u8> {
    format!("event: {kind}\ndata: {data}\n\n").into_bytes()
}

/// Raw deflate of `bytes`, flushed so that the segment stands alone (`finish`: the last one).
fn deflate(bytes: &[u8], finish: bool) -> Vec<u8> {
    let mut compress = flate2::Compress::new(flate2::Compression::fast(), false);
    let mut out = Vec::with_capacity(bytes.len() / 4 + 1024);
    let flush = if finish {
        flate2::FlushCompress::Finish
    } else {
        flate2::FlushCompress::Full
    };
    loop {
        let consumed = usize::try_from(compress.total_in()).expect("size");
        let status = compress
            .compress_vec(&bytes[consumed..], &mut out, flush)
            .expect("deflate");
        if usize::try_from(compress.total_in()).expect("size") == bytes.len()
            && (status == flate2::Status::StreamEnd || (!finish && out.len() < out.capacity()))
        {
            return out;
        }
        out.reserve(64 * 1024);
    }
}

/// The gzip answer: `blocks` copies of a 1 MB block of deltas, then `response.completed`. Its
/// pieces (to be written in turn) and the number of events.
fn answer(blocks: usize) -> (Vec<Arc<Vec<u8>>>, usize, u64) {
    let mut block = Vec::new();
    for i in 0..BLOCK_EVENTS {
        block.extend(sse(
            "response.output_text.delta",
            &json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0,
                    "content_index": 0, "delta": "y".repeat(900), "sequence_number": i}),
        ));
    }
    let last = sse(
        "response.completed",
        &json!({"type": "response.completed", "response": {"id": "resp_mem", "status": "completed"}}),
    );
    let mut crc = flate2::Crc::new();
    let mut block_crc = flate2::Crc::new();
    block_crc.update(&block);
    for _ in 0..blocks {
        crc.combine(&block_crc);
    }
    crc.update(&last);
    let size = (block.len() * blocks + last.len()) as u64;
    let header = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    let mut tail = deflate(&last, true);
    tail.extend_from_slice(&crc.sum().to_le_bytes());
    tail.extend_from_slice(&(size as u32).to_le_bytes());
    let segment = Arc::new(deflate(&block, false));
    let mut pieces = vec![Arc::new(header)];
    pieces.extend(std::iter::repeat_n(segment, blocks));
    pieces.push(Arc::new(tail));
    (pieces, blocks * BLOCK_EVENTS + 1, size)
}

/// An upstream answering every request with `pieces`, gzip-encoded and chunked.
fn gzip_upstream(pieces: Vec<Arc<Vec<u8>>>) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let pieces = pieces.clone();
            std::thread::spawn(move || {
                let mut stream = stream;
                let mut head = Vec::new();
                let mut buf = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let text = String::from_utf8_lossy(&head).to_ascii_lowercase();
                let length: usize = text
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or(0);
                let at = head.windows(4).position(|w| w == b"\r\n\r\n").unwrap_or(0) + 4;
                let mut got = head.len() - at;
                while got < length {
                    match stream.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => got += n,
                    }
                }
                let reply = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-encoding: gzip\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n";
                if stream.write_all(reply).is_err() {
                    return;
                }
                for piece in pieces {
                    let mut chunk = format!("{:x}\r\n", piece.len()).into_bytes();
                    chunk.extend_from_slice(&piece);
                    chunk.extend_from_slice(b"\r\n");
                    if stream.write_all(&chunk).is_err() {
                        return;
                    }
                }
                let _ = stream.write_all(b"0\r\n\r\n");
            });
        }
    });
    format!("http://{addr}/v1")
}

/// Peak resident memory of process `pid` (`VmHWM`), if it is still there.
fn peak_rss(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(target_os = "linux")]
#[test]
fn a_large_gzip_answer_is_recorded_within_a_fixed_memory_bound() {
    let megabytes: usize = std::env::var("PROMPTWIRE_RECORD_MEMORY_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256);
    let (pieces, events, size) = answer(megabytes);
    let upstream = gzip_upstream(pieces);
    let db = scratch("record_memory").join("rec.sqlite");
    let mut child = Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .args(["record", "--json", "--listen", "127.0.0.1:0", "--upstream"])
        .arg(&upstream)
        .arg("--db")
        .arg(&db)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn record");
    let pid = child.id();
    let peak = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (peak, done) = (Arc::clone(&peak), Arc::clone(&done));
        std::thread::spawn(move || {
            while !done.load(Ordering::Acquire) {
                if let Some(now) = peak_rss(pid) {
                    peak.fetch_max(now, Ordering::AcqRel);
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let mut stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    let mut first = String::new();
    stdout.read_line(&mut first).expect("first line");
    let first: Value = serde_json::from_str(&first).expect("json line");
    let addr = first["listening"].as_str().expect("address").to_string();
    let started = Instant::now();
    let mut socket = std::net::TcpStream::connect(&addr).expect("connect");
    let body = json!({"model": "gpt-5.5", "input": "memory", "stream": true}).to_string();
    let head = format!(
        "POST /v1/responses HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\naccept-encoding: gzip\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    socket.write_all(head.as_bytes()).expect("request");
    let mut buf = vec![0u8; 1 << 20];
    let mut read = 0u64;
    loop {
        match socket.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => read += n as u64,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => panic!("read: {e}"),
        }
    }
    let relayed = started.elapsed();
    // Stopped once the client has it all: the writer drains what it holds first.
    let _ = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status();
    let waited = Instant::now();
    while child.try_wait().expect("try_wait").is_none() {
        assert!(
            waited.elapsed() < Duration::from_secs(300),
            "record did not stop"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    done.store(true, Ordering::Release);
    sampler.join().expect("sampler");
    let peak = peak.load(Ordering::Acquire);
    eprintln!(
        "record_memory: {} MB answer ({events} events, {} compressed bytes relayed in {relayed:?}): peak RSS {} MiB",
        size / 1_000_000,
        read,
        peak >> 20
    );
    assert!(
        peak > 0 && peak <= BOUND,
        "peak RSS {} MiB, bound {} MiB",
        peak >> 20,
        BOUND >> 20
    );
    let store = Store::open(&db).expect("db");
    let session = store.list_sessions(Page::ALL).expect("sessions")[0].id;
    let id = store.requests(session, Page::ALL).expect("requests")[0].id;
    let outcome = store.outcome(id).expect("read").expect("outcome");
    assert_eq!(
        (
            store.event_count(id).expect("count"),
            outcome.state,
            outcome.lost_events
        ),
        (events as u64, RecordedState::Completed, 0)
    );
}
