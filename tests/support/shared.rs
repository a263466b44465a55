//! The one helper that finds the shared fixtures beside the repository (`../shared/fixtures/…`
//! relative to `CARGO_MANIFEST_DIR`, `../../shared` for a worktree one level deeper, or under
//! `$PROMPTWIRE_SHARED_DIR`), for every test that reads them. When they are missing a test is
//! skipped with a message — except under `CI=true`, where it fails loudly: a CI run must never
//! pass without having read the real captures. Include it with
//! `#[path = "support/shared.rs"] mod shared;`.
#![allow(
    clippy::disallowed_methods,
    reason = "the shared-data rule reads CI and the data's location from the environment"
)]
// Each test binary that includes this module uses only some of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// `../shared/fixtures/<sub>` (a folder or a file), or None (after saying so) when it is absent
/// outside CI.
///
/// # Panics
/// When it is absent and the environment variable `CI` is `true` (or `1`).
pub fn shared_fixtures(sub: &str) -> Option<PathBuf> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    // A checkout that does not sit beside `shared` (a git worktree elsewhere) can point at it.
    let roots: Vec<PathBuf> = match std::env::var_os("PROMPTWIRE_SHARED_DIR") {
        Some(dir) => vec![PathBuf::from(dir)],
        None => vec![manifest.join("../shared"), manifest.join("../../shared")],
    };
    let candidates: Vec<PathBuf> = roots
        .iter()
        .map(|root| root.join("fixtures").join(sub))
        .collect();
    if let Some(found) = candidates.iter().find(|p| p.exists()) {
        return Some(found.clone());
    }
    let in_ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    assert!(
        !in_ci,
        "{} is missing: under CI=true the shared fixtures are required",
        candidates[0].display()
    );
    eprintln!("skipped: {} is absent", candidates[0].display());
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
