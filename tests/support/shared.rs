//! The one rule for a test that cannot run here, and the one helper that finds the shared
//! fixtures beside the repository (`../shared/fixtures/…` relative to `CARGO_MANIFEST_DIR`,
//! `../../shared` for a worktree one level deeper, or under `$PROMPTWIRE_SHARED_DIR`), for every
//! test that reads them. When what a test needs is missing (the shared fixtures, the Codex CLI,
//! a read-only folder as root) it is skipped with a message ([`skip`]) — except under `CI=true`,
//! where it fails loudly: a CI run must never pass without having run every test.

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
    skip(&format!("{} is absent", candidates[0].display()));
    None
}

/// True when the environment variable `CI` is `true` (or `1`).
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// A test cannot run here because `why` (something it needs is missing): outside CI it says so on
/// standard error and the caller returns (the test skips); under `CI=true` it fails.
///
/// # Panics
/// Under `CI=true`.
#[track_caller]
pub fn skip(why: &str) {
    assert!(!in_ci(), "{why}: under CI=true every test must run");
    eprintln!("skipped: {why}");
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
