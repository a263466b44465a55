//! The integration tests, one binary (ripgrep's layout: `autotests = false` in Cargo.toml): one
//! module per file in this folder, and the one `support` tree in `tests/support/` that they all
//! use. A new test file gets one `mod` line here, in sorted order. The image snapshot tests
//! (`tests/ui_snapshots.rs`, feature `snapshots`) are a second binary.

#![allow(
    clippy::disallowed_methods,
    reason = "tests run their own threads (servers, samplers) and read CI and fixture locations from the environment"
)]

#[path = "../support/mod.rs"]
mod support;

mod cache_cli;
mod cache_options;
mod cache_sim;
mod cache_standin;
mod cache_ui;
mod cache_usage_paths;
mod cli_bad_values;
mod cli_bounded_input;
mod cli_compile;
mod codex_0171;
mod core_catalog;
mod core_compaction;
mod core_compile;
mod core_items;
mod core_props;
mod core_roundtrip;
mod core_seed;
mod core_vectors;
mod diff_linear;
mod fuzz_regressions;
mod harden_bodies;
mod harden_budget;
mod harden_escapes;
mod harden_fifo;
mod harden_record;
mod harden_redact;
mod prefix_captured;
mod prefix_causes;
mod prefix_cli;
mod prefix_report;
mod proxy_answer_shapes;
mod proxy_cli;
mod proxy_codex;
mod proxy_codex_ws;
mod proxy_compressed;
mod proxy_h2;
mod proxy_hardening;
mod proxy_http;
mod proxy_names;
mod proxy_sdk;
mod proxy_store_trouble;
mod proxy_ws;
mod record_setup;
mod redact_exits;
mod redact_fail_closed;
mod redact_import_body;
mod redact_policy;
mod redirect_send;
mod replay_cli;
mod replay_endpoint;
mod replay_lazy;
mod replay_same_times;
mod replay_stored_events;
mod rollout_reconstruct;
mod rollout_store;
mod rollout_ui;
mod send_compressed;
mod send_continue;
mod send_same_rows;
mod sessions_model_diff;
mod sessions_model_send;
mod sse_parity;
mod store_cli;
mod store_crash;
mod store_growth;
mod store_har_timings;
mod store_import_kill;
mod store_interrupted;
mod store_listing;
mod store_migrate_v4;
mod store_pieces;
mod store_prefix_server;
mod store_private;
mod store_proxy_interrupted;
mod store_readonly;
mod store_roundtrip;
mod store_search;
mod store_send;
mod store_writer;
mod stream_cli;
mod stream_decoding;
mod stream_errors;
mod stream_http;
mod stream_limits;
mod stream_recorded;
mod stream_vectors;
mod turn_loop;
mod types_cli_values;
mod types_store;
mod types_undo;
mod types_usage;
mod ui_ask_why;
mod ui_cache_form;
mod ui_diff;
mod ui_editing;
mod ui_file_dialog;
mod ui_fixes;
mod ui_imports;
mod ui_inspector;
mod ui_inspector_pane;
mod ui_layout;
mod ui_open;
mod ui_polish;
mod ui_proxy;
mod ui_proxy_ca;
mod ui_redaction;
mod ui_send;
mod ui_session_names;
mod ui_sessions;
mod ui_sessions_small;
mod ui_target;
mod ui_timeline;
mod ui_traffic;
mod ui_workbench;
mod ws_send;
