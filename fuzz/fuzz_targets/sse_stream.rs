//! SSE decoder + event mapper: `promptwire::fuzzing::sse_stream`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| promptwire::fuzzing::sse_stream(data));
