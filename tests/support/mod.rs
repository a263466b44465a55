//! The helpers every integration test shares, one tree (`tests/integration/main.rs` includes it
//! as `support`; `tests/ui_snapshots.rs` includes it too): scratch folders, the loopback
//! upstream, the `promptwire` binary as a child process, the shared fixtures and their CI rule.

pub mod cli;
pub mod compile;
pub mod db;
pub mod loopback;
pub mod otlp;
pub mod packed;
pub mod rss;
pub mod sample_har;
pub mod server;
pub mod shared;
pub mod ui;
pub mod upstream;
pub mod ws_standin;
pub mod xorshift;

use std::path::{Path, PathBuf};

/// `<target tmp>/<test module>`: the scratch folder of the test module (the file name of the
/// caller, e.g. `store_roundtrip` for `tests/integration/store_roundtrip.rs`), so modules that
/// share the one test binary never share scratch files.
#[track_caller]
pub fn module_scratch_root() -> PathBuf {
    let caller = std::panic::Location::caller().file();
    let module = Path::new(caller)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("tests");
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(module)
}

/// A fresh scratch folder `<target tmp>/<test module>/<name>-<pid>` (emptied if it was there).
///
/// # Panics
/// When the folder cannot be created.
#[track_caller]
pub fn scratch(name: &str) -> PathBuf {
    let dir = module_scratch_root().join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}
