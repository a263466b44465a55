//! Trace and span ids derived from stored ids (SipHash-1-3 with fixed keys): the same session
//! gives the same trace wherever and however often it is exported, so a backend that keeps span
//! ids unique takes a second export of it as the same spans.

use std::hash::Hasher as _;

use siphasher::sip128::{Hasher128 as _, SipHasher13};

/// The trace of session `session_id` created at `created_us` (the creation time tells two
/// databases' session 1 apart).
pub fn trace_id(session_id: i64, created_us: i64) -> [u8; 16] {
    let mut h = SipHasher13::new_with_keys(0x7072_6f6d_7074_7769, 0x7265_2f74_7261_6365);
    h.write(b"promptwire/session");
    h.write_i64(session_id);
    h.write_i64(created_us);
    let bytes = h.finish128().as_bytes();
    nonzero16(bytes)
}

/// The session's root span in `trace`.
pub fn session_span_id(trace: &[u8; 16]) -> [u8; 8] {
    span_of(trace, b"session", 0)
}

/// The session span of subagent session `session_id` in its run's `trace`.
pub fn agent_span_id(trace: &[u8; 16], session_id: i64) -> [u8; 8] {
    span_of(trace, b"agent", session_id)
}

/// The span of stored request `request_id` in `trace`.
pub fn request_span_id(trace: &[u8; 16], request_id: i64) -> [u8; 8] {
    span_of(trace, b"request", request_id)
}

fn span_of(trace: &[u8; 16], what: &[u8], id: i64) -> [u8; 8] {
    let mut h = SipHasher13::new_with_keys(0x7370_616e_2f70_726f, 0x6d70_7477_6972_6521);
    h.write(trace);
    h.write(what);
    h.write_i64(id);
    let n = h.finish();
    let bytes = n.to_be_bytes();
    if n == 0 {
        [0, 0, 0, 0, 0, 0, 0, 1]
    } else {
        bytes
    }
}

fn nonzero16(mut bytes: [u8; 16]) -> [u8; 16] {
    if bytes.iter().all(|b| *b == 0) {
        bytes[15] = 1;
    }
    bytes
}

/// Lower-case hex of `bytes` (how OTLP/JSON and backends spell ids).
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}
