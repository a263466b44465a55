//! HAR import never stores a negative or overflowing time: timings beyond a century or below
//! zero are unknown, sums saturate, and negative times in promptwire's own `_promptwire.outcome`
//! are dropped.

use std::path::Path;

use pretty_assertions::assert_eq;
use promptwire::store::{Page, Store};
use serde_json::{Value, json};

fn sample() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions/samples/tool-calls.har");
    serde_json::from_str(&std::fs::read_to_string(path).expect("sample")).expect("json")
}

fn import(har: &Value) -> (Option<i64>, Option<i64>, Option<i64>) {
    let mut store = Store::open_in_memory().expect("store");
    let (session, _) = store
        .import_har(&har.to_string(), "t", Path::new("t.har"))
        .expect("import");
    let first = store.requests(session, Page::ALL).expect("requests")[0].clone();
    let outcome = store.outcome(first.id).expect("outcome").expect("some");
    (first.wait_us, first.total_us, outcome.total_us)
}

#[test]
fn huge_and_negative_timings_are_unknown_not_wrapped() {
    let mut har = sample();
    let entry = &mut har["log"]["entries"][0];
    entry["timings"] = json!({"send": 0, "wait": 1e300, "receive": 9.2e18});
    entry["_promptwire"]["outcome"]["total_us"] = json!(-46744073709551616i64);
    let (wait, total, outcome_total) = import(&har);
    assert_eq!((wait, total, outcome_total), (None, None, None));

    // The largest accepted timings add up without overflow.
    let mut har = sample();
    let century_ms = 100.0 * 365.0 * 24.0 * 3600.0 * 1000.0;
    har["log"]["entries"][0]["timings"] =
        json!({"send": 0, "wait": century_ms, "receive": century_ms});
    let (wait, total, _) = import(&har);
    let century_us = 3_153_600_000_000_000i64;
    assert_eq!((wait, total), (Some(century_us), Some(2 * century_us)));
}
