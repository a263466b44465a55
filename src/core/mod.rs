//! The core: pure functions over plain data — Prompt model, model catalog, providers, compile
//! rules, the request compiler and body import. No egui, no tokio, no reqwest, no I/O, no clock.

pub mod anatomy;
pub mod codex_config;
pub mod compile;
pub mod error;
pub mod export;
pub mod format;
pub mod import;
pub mod items;
pub mod json;
pub mod json_diff;
pub mod ledger;
pub mod models;
pub mod otel;
pub mod prefix;
pub mod pretty;
pub mod prompt;
pub mod provider;
pub mod redact;
pub mod rollout;
pub mod rules;
pub mod seq_diff;
pub mod session_label;
pub mod setup_lines;
pub mod stream;
pub mod target;
pub mod tools;
pub mod turn_loop;
