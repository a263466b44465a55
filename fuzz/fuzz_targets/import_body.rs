//! Body import (`import-body`), then compile back: `promptwire::fuzzing::import_body`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| promptwire::fuzzing::import_body(data));
