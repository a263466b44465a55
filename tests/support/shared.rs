//! The shared fixtures beside the repository (`../shared/fixtures/…`, relative to
//! `CARGO_MANIFEST_DIR`, or under `$PROMPTWIRE_SHARED_DIR`), for the tests that read them. When the directory is missing a test is
//! skipped with a message — except under `CI=true`, where it fails loudly: a CI run must never
//! pass without having read the real captures.

// Each test binary that includes this module uses only some of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// `../shared/fixtures/<sub>`, or None (after saying so) when it is absent outside CI.
///
/// # Panics
/// When the directory is absent and the environment variable `CI` is `true`.
pub fn shared_fixtures(sub: &str) -> Option<PathBuf> {
    // A checkout that does not sit beside `shared` (a git worktree elsewhere) can point at it.
    let root = std::env::var_os("PROMPTWIRE_SHARED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"));
    let dir = root.join("fixtures").join(sub);
    if dir.is_dir() {
        return Some(dir);
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!(
            "{} is missing: under CI=true the shared fixtures are required",
            dir.display()
        );
    }
    eprintln!("skipped: {} is absent", dir.display());
    None
}

/// The request bodies (`req_*.json`, headers files excluded) in every case folder under `dir`,
/// sorted.
pub fn request_bodies(dir: &Path) -> Vec<PathBuf> {
    let mut bodies = Vec::new();
    for case in std::fs::read_dir(dir).expect("read fixtures") {
        let case = case.expect("entry").path();
        if !case.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(&case).expect("read case") {
            let file = file.expect("entry").path();
            let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name.starts_with("req_") && name.ends_with(".json") && !name.contains("headers") {
                bodies.push(file);
            }
        }
    }
    bodies.sort();
    bodies
}

/// The captured headers file beside a body (`req_N.headers.json` or `req_N.headers`), if any.
pub fn headers_beside(body: &Path) -> Option<PathBuf> {
    let stem = body.file_stem()?.to_str()?;
    let dir = body.parent()?;
    [format!("{stem}.headers.json"), format!("{stem}.headers")]
        .into_iter()
        .map(|name| dir.join(name))
        .find(|p| p.is_file())
}
