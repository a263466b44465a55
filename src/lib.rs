//! promptwire: see exactly what an LLM agent sends to the OpenAI Responses API (the way the Codex
//! agent builds requests) and what comes back.
//!
//! Layers (arrows point one way): `ui` → `app` → {`transport`} → `core`; `cli` → `core`.
//! `core` is pure: no I/O, no async, no clock.
//! See `DESIGN.md` in the shared docs for the full architecture.

pub mod app;
pub mod cli;
pub mod core;
pub mod store;
pub mod transport;
pub mod ui;

/// Fuzz target bodies (`fuzz/`, `tests/integration/fuzz_regressions.rs`): not part of the API.
#[doc(hidden)]
pub mod fuzzing;
