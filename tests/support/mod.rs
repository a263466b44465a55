//! Helpers shared by the proxy and replay tests.

pub mod server;
pub mod upstream;
