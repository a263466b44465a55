//! Peak resident memory of a child process, for the tests that bound it.

use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// One MiB.
pub const MIB: u64 = 1024 * 1024;

/// The binary's own footprint (runtime, TLS roots, SQLite, the allocator's arenas) allowed on
/// top of what a bound counts: a debug build idles at about 35 MiB.
pub const BASELINE: u64 = 48 * MIB;

/// Peak resident memory of the running process `pid`, in bytes (`VmHWM`), if it is still there.
fn peak_rss(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Runs `cmd` (standard input empty, output captured), sampling its peak RSS every 5 ms until it
/// exits; returns the output and the last peak seen (a lower bound, missing at most the last
/// 5 ms; `VmHWM` never decreases, so only growth in those 5 ms is missed).
///
/// # Panics
/// When the command cannot be spawned or waited for.
pub fn run_measured(mut cmd: Command) -> (Output, u64) {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn promptwire");
    let pid = child.id();
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let done = Arc::clone(&done);
        std::thread::spawn(move || {
            let mut peak = 0;
            while !done.load(Ordering::Acquire) {
                if let Some(now) = peak_rss(pid) {
                    peak = peak.max(now);
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            peak
        })
    };
    let out = child.wait_with_output().expect("wait");
    done.store(true, Ordering::Release);
    (out, sampler.join().expect("sampler"))
}

/// Asserts that `peak` was measured (non-zero) and stays within the binary's own footprint
/// ([`BASELINE`]) plus twice `limit`; `name` says which case failed.
///
/// # Panics
/// When it does not.
pub fn assert_within_twice(name: &str, peak: u64, limit: u64) {
    assert_within_twice_and(name, peak, limit, 0);
}

/// The store writer's own footprint while it records a send: its thread, its SQLite connection
/// (page cache, WAL index) and its zstd contexts with the prepared dictionary. Measured on this
/// machine as about 25 MiB over a send not recording at a 16 MiB response limit and 32 MiB at
/// 32 MiB: mostly fixed, not a copy of what streamed (the events the writer holds are bounded
/// by `store::send_recording::HELD_EVENT_BYTES`).
pub const RECORDING_FOOTPRINT: u64 = 24 * MIB;

/// [`assert_within_twice`] with `extra` bytes of a fixed footprint allowed on top.
///
/// # Panics
/// When it does not.
pub fn assert_within_twice_and(name: &str, peak: u64, limit: u64, extra: u64) {
    let bound = 2 * limit + BASELINE + extra;
    assert!(
        peak > 0 && peak <= bound,
        "{name}: peak RSS {} MiB, bound {} MiB",
        peak >> 20,
        bound >> 20
    );
}
