//! Fuzz target bodies: one function per target, taking arbitrary bytes. The cargo-fuzz targets
//! in `fuzz/` are one-line calls of these, and `tests/integration/fuzz_regressions.rs` runs the saved inputs
//! of `fuzz/regressions/<target>/` through the very same functions, so a crash found by the
//! fuzzer stays a test on stable Rust.
//!
//! Each function handles every input without panicking: bad input is an `Err` the function
//! drops. A panic is a bug — either in the code under test or a broken invariant asserted here
//! (each module documents the invariants it checks).

mod prefix;
mod prompt;
mod store;
mod stream;

pub use prefix::prefix_pair;
pub use prompt::{compile_prompt, import_body};
pub use store::{har_import, rollout_import};
pub use stream::sse_stream;

/// A target's body: any bytes in, a panic only on a bug.
pub type Target = fn(&[u8]);

/// Every target: its name (the `fuzz/fuzz_targets/<name>.rs` file, the `fuzz/corpus/<name>/`
/// and `fuzz/regressions/<name>/` folders) and its function.
pub const TARGETS: &[(&str, Target)] = &[
    ("sse_stream", sse_stream),
    ("import_body", import_body),
    ("compile_prompt", compile_prompt),
    ("har_import", har_import),
    ("rollout_import", rollout_import),
    ("prefix_pair", prefix_pair),
];

/// Byte that separates the two parts of a two-part input (a body and its headers, two bodies):
/// it cannot occur in JSON text, so either part is still a valid seed on its own.
pub const SEPARATOR: u8 = 0;

/// Splits `data` at the first [`SEPARATOR`]: the part before, and the part after if any.
pub fn split_pair(data: &[u8]) -> (&[u8], Option<&[u8]>) {
    match data.iter().position(|b| *b == SEPARATOR) {
        Some(at) => (&data[..at], Some(&data[at + 1..])),
        None => (data, None),
    }
}

/// The bundled model catalog, parsed once per process.
fn catalog() -> &'static crate::core::models::ModelCatalog {
    static CATALOG: std::sync::OnceLock<crate::core::models::ModelCatalog> =
        std::sync::OnceLock::new();
    CATALOG.get_or_init(crate::core::models::ModelCatalog::bundled)
}
