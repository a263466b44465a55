//! Prompt parsing + compile under every preset, provider, dialect, auth and view: `promptwire::fuzzing::compile_prompt`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| promptwire::fuzzing::compile_prompt(data));
