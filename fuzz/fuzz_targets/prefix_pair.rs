//! Cache-prefix analysis of a pair of bodies: `promptwire::fuzzing::prefix_pair`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| promptwire::fuzzing::prefix_pair(data));
