//! HAR import into a store, read back and re-exported: `promptwire::fuzzing::har_import`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| promptwire::fuzzing::har_import(data));
