//! The replay endpoint: serves a recording to a real client.

/// Default smallest share of the recorded prompt an incoming request must keep to match.
pub const DEFAULT_MIN_SIMILARITY: f64 = 0.5;
