//! A live send that asks for compression (Codex 0.171's `accept-encoding: zstd,gzip`) against an
//! HTTP/1.1 upstream on 127.0.0.1 the test starts, which answers compressed: a gzip SSE stream
//! in chunks, a zstd one, a gzip 429, one in an encoding promptwire does not decode (`br`) and a
//! gzip bomb. Each turn's outcome and events are what the same plain bytes give; the undecodable
//! one fails as `content_encoding` and the bomb as `limit_exceeded`, never read as plain bytes.

use std::io::Write as _;
use std::time::Duration;

use bytes::Bytes;
use pretty_assertions::assert_eq;
use promptwire::core::rules::CompileRules;
use promptwire::core::stream::http_error::classify_http_error;
use promptwire::core::stream::{StreamError, StreamLimits, read_all};
use promptwire::store::OutcomeRecord;
use promptwire::transport::{CancelToken, HttpSender, SendError, SendOptions, SendResult};
use serde_json::json;

use crate::support::upstream::{Reply, Step, Upstream, joined, turn_events};

/// The limit on an answer in these tests: the bomb decodes far past it.
const LIMIT: u64 = 1024 * 1024;

fn gzip(plain: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(plain).expect("gzip");
    e.finish().expect("gzip")
}

/// `status` of `content_type` with `Content-Encoding: encoding`, sending `wire` in `parts`.
fn encoded(status: u16, content_type: &str, encoding: &str, wire: &[u8], parts: usize) -> Reply {
    let size = wire.len().div_ceil(parts).max(1);
    Reply {
        status,
        headers: vec![
            ("content-type".to_string(), content_type.to_string()),
            ("content-encoding".to_string(), encoding.to_string()),
        ],
        steps: wire
            .chunks(size)
            .map(|c| Step::Send(Bytes::copy_from_slice(c)))
            .collect(),
    }
}

/// One live send of a small prompt, compiled as Codex 0.171 sends it, to `base_url`.
async fn send(base_url: &str) -> SendResult {
    let (request, headers) = crate::support::compile::compatible_request(
        base_url,
        "Compress that.",
        &CompileRules::codex_0_171(),
    );
    let options = SendOptions {
        max_retries: 0,
        limits: StreamLimits {
            max_response_bytes: LIMIT,
            ..StreamLimits::default()
        },
        ..SendOptions::default()
    };
    HttpSender::new(&request.url, options)
        .expect("sender")
        .send(&request, &headers, &CancelToken::new(), |_| {})
        .await
}

/// An outcome as compared: untimed.
fn untimed(outcome: &promptwire::core::stream::TurnOutcome) -> OutcomeRecord {
    let mut outcome = OutcomeRecord::from_turn(outcome);
    outcome.first_event_us = None;
    outcome.first_text_us = None;
    outcome.total_us = None;
    outcome
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compressed_answers_to_a_live_send_are_read_decoded() {
    let gz_plain = joined(&turn_events("resp_send_gz", "Read through gzip in pieces"));
    let zs_plain = joined(&turn_events("resp_send_zs", "Read through zstd"));
    let error =
        json!({"error": {"message": "Invalid value for 'input'.", "type": "invalid_request_error",
                                 "code": "invalid_value"}})
        .to_string();
    let bomb = {
        // One SSE event whose data is 16 MiB of one letter: a few KiB gzipped.
        let mut body = b"event: response.output_text.delta\ndata: ".to_vec();
        body.extend(std::iter::repeat_n(b'a', 16 * 1024 * 1024));
        body.extend_from_slice(b"\n\n");
        gzip(&body)
    };
    let upstream = Upstream::in_order(vec![
        encoded(200, "text/event-stream", "gzip", &gzip(&gz_plain), 7),
        encoded(
            200,
            "text/event-stream",
            "zstd",
            &zstd::encode_all(&zs_plain[..], 3).expect("zstd"),
            3,
        ),
        encoded(400, "application/json", "gzip", &gzip(error.as_bytes()), 1),
        encoded(200, "text/event-stream", "br", b"\x1b\x2f\x00not brotli", 1),
        encoded(200, "text/event-stream", "gzip", &bomb, 4),
    ]);
    let base = format!("{}/v1", upstream.base_url());
    let mut results = Vec::new();
    for _ in 0..5 {
        results.push(send(&base).await);
    }
    // Every request asked for compression.
    let asked: Vec<Option<String>> = upstream
        .received()
        .iter()
        .map(|r| r.header("accept-encoding").map(str::to_string))
        .collect();
    assert_eq!(asked, vec![Some("zstd,gzip".to_string()); 5]);

    // The streams: what the plain bytes give, event for event.
    for (result, plain) in results[..2].iter().zip([&gz_plain, &zs_plain]) {
        let (entries, expected) = read_all(plain, Duration::ZERO);
        let attempt = result.last().expect("attempt");
        let events: Vec<(Option<String>, String)> = attempt
            .entries
            .iter()
            .map(|e| (e.raw.event.clone(), e.raw.data.clone()))
            .collect();
        let plain_events: Vec<(Option<String>, String)> = entries
            .into_iter()
            .map(|e| (e.raw.event, e.raw.data))
            .collect();
        assert_eq!(
            (&result.error, untimed(&attempt.outcome), events),
            (&None, untimed(&expected), plain_events)
        );
    }
    // The error: classified on its decoded body.
    let expected = classify_http_error(400, &[], &error, &format!("{base}/responses"));
    assert_eq!(results[2].error, Some(SendError::Http(expected)));
    // An encoding it does not decode, and the bomb: failed, never read as plain bytes.
    let failures: Vec<(Option<SendError>, u64)> = results[3..]
        .iter()
        .map(|r| (r.error.clone(), r.last().expect("attempt").outcome.events))
        .collect();
    assert_eq!(
        failures,
        vec![
            (
                Some(SendError::Stream(StreamError::ContentEncoding {
                    message: "the answer could not be read: Content-Encoding `br` is not \
                              decoded by promptwire"
                        .to_string()
                })),
                0
            ),
            (
                Some(SendError::Stream(StreamError::LimitExceeded {
                    message: format!("not decoded: the gzip answer decodes to over {LIMIT} bytes")
                })),
                0
            ),
        ]
    );
}
