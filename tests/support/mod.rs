//! Helpers shared by the proxy and replay tests.

pub mod upstream;
