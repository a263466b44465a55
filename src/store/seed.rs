//! The embedded default database: `sessions/promptwire.sqlite` in the source tree (the platform
//! data directory for an installed binary), created on first run and seeded from the sample
//! recordings in `sessions/samples/*.har`, which are compiled into the binary.

use std::path::{Path, PathBuf};

use super::error::{StoreError, StoreResult};
use super::{Page, Store};

/// The bundled sample recordings: (file name, HAR text).
pub const SAMPLES: &[(&str, &str)] = &[
    (
        "tool-calls.har",
        include_str!("../../sessions/samples/tool-calls.har"),
    ),
    (
        "lite-image.har",
        include_str!("../../sessions/samples/lite-image.har"),
    ),
    (
        "failing-stream.har",
        include_str!("../../sessions/samples/failing-stream.har"),
    ),
    (
        "cache-prefix-break.har",
        include_str!("../../sessions/samples/cache-prefix-break.har"),
    ),
];

/// Where the default database lives.
pub fn default_path() -> PathBuf {
    let source_tree = Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions");
    if source_tree.is_dir() {
        return source_tree.join("promptwire.sqlite");
    }
    let data = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .unwrap_or_else(|| PathBuf::from("."));
    data.join("promptwire").join("promptwire.sqlite")
}

/// Opens the database at `path`; when the file does not exist yet, creates it and imports the
/// bundled samples.
pub fn open_seeded(path: &Path) -> StoreResult<Store> {
    let fresh = !path.exists();
    if fresh && let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| StoreError::io(e, dir))?;
    }
    let mut store = Store::open(path)?;
    if fresh && store.list_sessions(Page::first(1))?.is_empty() {
        seed(&mut store)?;
    }
    Ok(store)
}

/// Imports the bundled samples into `store`.
pub fn seed(store: &mut Store) -> StoreResult<()> {
    for (name, text) in SAMPLES {
        let stem = name.trim_end_matches(".har");
        store.import_har(text, stem, Path::new(name))?;
    }
    Ok(())
}
