//! The embedded default database: `sessions/promptwire.sqlite` in the source tree (the platform
//! data directory for an installed binary), created on first run and seeded from the sample
//! recordings in `sessions/samples/*.har`, which are compiled into the binary.

use std::path::{Path, PathBuf};

use super::Store;
use super::error::{StoreError, StoreResult};

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
#[allow(
    clippy::disallowed_methods,
    reason = "the default database's place is the environment's (XDG_DATA_HOME, HOME)"
)]
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
/// bundled samples. The seeded file is built beside `path` and linked into place only if `path`
/// still does not exist, so concurrent first runs never seed twice.
pub fn open_seeded(path: &Path) -> StoreResult<Store> {
    if !path.exists() {
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| StoreError::io(e, dir))?;
        let building = dir.join(format!(
            ".{}.seeding-{}",
            path.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            unique_suffix()
        ));
        let seeded = Store::open(&building).and_then(|mut store| seed(&mut store));
        // Closing the last connection checkpoints the WAL into the file.
        let linked = seeded.and_then(|()| match std::fs::hard_link(&building, path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
            Err(e) => Err(StoreError::io(e, path)),
        });
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", building.display()));
        }
        linked?;
    }
    Store::open(path)
}

/// Process id and a per-process counter: distinct across concurrent first runs.
fn unique_suffix() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{}-{n}", std::process::id())
}

/// Imports the bundled samples into `store`.
pub fn seed(store: &mut Store) -> StoreResult<()> {
    for (name, text) in SAMPLES {
        let stem = name.trim_end_matches(".har");
        store.import_har(text, stem, Path::new(name))?;
    }
    Ok(())
}
