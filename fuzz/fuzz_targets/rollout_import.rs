//! Codex rollout import into a store, read back and re-exported: `promptwire::fuzzing::rollout_import`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| promptwire::fuzzing::rollout_import(data));
