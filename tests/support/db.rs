//! A scratch database path for the store tests: `<target tmp>/<test module>/<name>.sqlite`, with
//! any file (and `-wal`, `-shm`) a previous run left there removed.

use std::path::PathBuf;

/// The path of a fresh scratch database named `name`.
///
/// # Panics
/// When the folder cannot be created.
#[track_caller]
pub fn scratch_db(name: &str) -> PathBuf {
    let dir = super::module_scratch_root();
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let path = dir.join(format!("{name}.sqlite"));
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    path
}
