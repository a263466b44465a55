//! Saved fuzz inputs (`fuzz/regressions/<target>/`): crashes the fuzzers found, minimized, and
//! tricky inputs worth keeping. Each runs through the same `promptwire::fuzzing` function as its
//! cargo-fuzz target (see `fuzz/README.md`), on stable Rust, and must be handled without a panic
//! and within a time bound. Every target has a folder with at least one input; a folder that
//! names no target fails, so a renamed target cannot leave its inputs silently unrun.
#![allow(clippy::disallowed_methods, reason = "a test runs its own threads")]

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use promptwire::fuzzing::{TARGETS, Target};

/// Longest time one input may take (a debug build, on a machine shared with other builds; the
/// fuzzers themselves stop an input after 30 s of an optimized build).
const TIME_BOUND: Duration = Duration::from_secs(60);

fn regressions_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions")
}

/// The files of `dir`, sorted.
fn inputs(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    files
}

/// Runs `input` through `run` on its own thread; the error says what went wrong.
fn run_one(run: Target, input: Vec<u8>) -> Result<Duration, String> {
    let (done, finished) = mpsc::channel();
    let worker = std::thread::spawn(move || {
        let start = Instant::now();
        run(&input);
        let _ = done.send(start.elapsed());
    });
    match finished.recv_timeout(TIME_BOUND) {
        Ok(took) => {
            let _ = worker.join();
            Ok(took)
        }
        // The sender was dropped without a send: the target panicked.
        Err(mpsc::RecvTimeoutError::Disconnected) => Err(match worker.join() {
            Err(panic) => panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "panicked".to_string()),
            Ok(()) => "ended without a result".to_string(),
        }),
        // The worker is left running; the test fails.
        Err(mpsc::RecvTimeoutError::Timeout) => Err(format!("took longer than {TIME_BOUND:?}")),
    }
}

#[test]
fn every_target_has_saved_inputs_and_every_folder_a_target() {
    let dir = regressions_dir();
    assert!(dir.is_dir(), "{} is missing", dir.display());
    let mut folders: Vec<String> = std::fs::read_dir(&dir)
        .expect("read fuzz/regressions")
        .map(|entry| entry.expect("directory entry"))
        .filter(|entry| entry.path().is_dir())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    folders.sort();
    let mut targets: Vec<String> = TARGETS.iter().map(|(name, _)| name.to_string()).collect();
    targets.sort();
    pretty_assertions::assert_eq!(folders, targets);
    for (name, _) in TARGETS {
        assert!(
            !inputs(&dir.join(name)).is_empty(),
            "fuzz/regressions/{name} holds no input"
        );
    }
}

#[test]
fn saved_inputs_run_without_panic_within_the_time_bound() {
    let dir = regressions_dir();
    let mut failures = Vec::new();
    let mut count = 0;
    for (name, run) in TARGETS {
        let folder = dir.join(name);
        assert!(folder.is_dir(), "{} is missing", folder.display());
        for path in inputs(&folder) {
            let input = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            count += 1;
            if let Err(problem) = run_one(*run, input) {
                failures.push(format!(
                    "{name}/{}: {problem}",
                    path.file_name().unwrap_or_default().to_string_lossy()
                ));
            }
        }
    }
    assert!(count > 0, "no saved input ran");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
