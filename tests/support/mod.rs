//! Helpers shared by the proxy and replay tests.

pub mod server;
pub mod upstream;

use std::path::{Path, PathBuf};

/// A fresh scratch folder `<target tmp>/<test binary>/<name>-<pid>` (emptied if it was there).
///
/// # Panics
/// When the folder cannot be created.
pub fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(env!("CARGO_CRATE_NAME"))
        .join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}
