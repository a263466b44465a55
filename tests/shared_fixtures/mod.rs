//! Access to the real Codex CLI captures in `../shared/fixtures` (relative to the repository):
//! a test that needs them is skipped with a note when they are absent, and fails loudly instead
//! when `CI=true`, so a CI run never passes without them.

use std::path::{Path, PathBuf};

/// The shared fixture directory `rel` (e.g. `codex-cli-0.169/two-turns-tools-session`), or `None`
/// (with a note on stderr) when it is absent outside CI. Panics when absent and `CI=true`.
pub fn shared_fixture(rel: &str) -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/fixtures")
        .join(rel);
    if path.is_dir() {
        return Some(path);
    }
    let in_ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    assert!(
        !in_ci,
        "CI=true but the shared fixtures are missing: {}",
        path.display()
    );
    eprintln!("skipped: {} is absent", path.display());
    None
}
