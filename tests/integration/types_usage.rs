//! One parser of server usage: a `response.completed` stream reports the same [`TokenUsage`]
//! whether its usage is in the Responses shape or the Chat Completions shape, and the session
//! browser reads a stored usage of either shape (or the reader's own) to the same counts, on a
//! real SQLite file.

use crate::support::db;

use std::time::Duration;

use pretty_assertions::assert_eq;
use promptwire::core::stream::{TokenUsage, read_all};
use promptwire::store::{
    NewRequest, NewSession, OutcomeRecord, Page, RecordedState, Source, Store,
};
use serde_json::{Value, json};

fn completed(usage: &Value) -> String {
    let data = json!({"type": "response.completed",
        "response": {"id": "resp_1", "usage": usage}});
    format!("event: response.completed\ndata: {data}\n\n")
}

fn responses_shape() -> Value {
    json!({"input_tokens": 1912,
        "input_tokens_details": {"cached_tokens": 1792, "cache_write_tokens": 64},
        "output_tokens": 12, "output_tokens_details": {"reasoning_tokens": 5},
        "total_tokens": 1924})
}

fn chat_shape() -> Value {
    json!({"prompt_tokens": 1912,
        "prompt_tokens_details": {"cached_tokens": 1792, "cache_write_tokens": 64},
        "completion_tokens": 12, "completion_tokens_details": {"reasoning_tokens": 5},
        "total_tokens": 1924})
}

const USAGE: TokenUsage = TokenUsage {
    input_tokens: 1912,
    cached_input_tokens: 1792,
    cache_write_input_tokens: 64,
    output_tokens: 12,
    reasoning_output_tokens: 5,
    total_tokens: 1924,
};

#[test]
fn a_stream_reports_the_same_usage_in_either_wire_shape() {
    let usages: Vec<Option<TokenUsage>> = [responses_shape(), chat_shape()]
        .iter()
        .map(|usage| {
            read_all(completed(usage).as_bytes(), Duration::ZERO)
                .1
                .usage
        })
        .collect();
    assert_eq!(usages, vec![Some(USAGE), Some(USAGE)]);
}

#[test]
fn the_browser_reads_every_stored_shape_to_the_same_counts() {
    let path = db::scratch_db("usage");
    let mut store = Store::open(&path).expect("open");
    let session = store
        .create_session(&NewSession {
            name: "usage".to_string(),
            source: Source::Proxy,
            provider: None,
            model: None,
            created_us: 0,
        })
        .expect("session");
    let reader_shape = serde_json::to_value(USAGE).expect("serialize");
    for usage in [responses_shape(), chat_shape(), reader_shape] {
        let id = store
            .add_request(
                session,
                &NewRequest::post(
                    "http://127.0.0.1:9/v1/responses",
                    br#"{"model":"m","input":[]}"#,
                ),
            )
            .expect("request");
        store
            .set_outcome(
                id,
                &OutcomeRecord {
                    state: RecordedState::Completed,
                    usage: Some(usage),
                    ..OutcomeRecord::default()
                },
            )
            .expect("outcome");
    }
    let counts: Vec<_> = store
        .request_rows(session, Page::ALL)
        .expect("rows")
        .into_iter()
        .map(|row| (row.input_tokens, row.cached_tokens, row.output_tokens))
        .collect();
    assert_eq!(counts, vec![(Some(1912), Some(1792), Some(12)); 3]);
}
