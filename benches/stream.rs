//! Benchmark: decode + map a generated recorded stream of 200,000 events (about 35 MB; mostly
//! `response.output_text.delta`, some large `response.output_item.done`) pushed in 16 KiB chunks
//! the way network reads arrive. Target: ≥ 150 MB/s. For comparison, in the same run: our SSE
//! framing alone, and the same chunks through plain `eventsource-stream` + `serde_json::Value`
//! and through plain `eventsource-stream` alone (no JSON).

use std::hint::black_box;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use eventsource_stream::Eventsource as _;
use futures_util::Stream;
use promptwire::core::stream::{SseDecoder, StreamReader};
use serde_json::json;

/// Events in the generated stream (about 35 MB with the framing real servers use).
const TARGET_EVENTS: usize = 200_000;

/// Size of the chunks the stream is pushed in (a typical network read).
const CHUNK_BYTES: usize = 16 * 1024;

/// Text fragments the deltas cycle through (short, like real tokens).
const WORDS: [&str; 12] = [
    "The ",
    "build ",
    "failed ",
    "because ",
    "`cargo` ",
    "could ",
    "not ",
    "find ",
    "the ",
    "crate \"serde\"",
    ".\n",
    "Next, ",
];

/// Appends one `event:`/`data:` frame.
fn push(out: &mut String, events: &mut usize, data: serde_json::Value) {
    let kind = data["type"].as_str().unwrap_or_default().to_string();
    out.push_str("event: ");
    out.push_str(&kind);
    out.push_str("\ndata: ");
    out.push_str(&data.to_string());
    out.push_str("\n\n");
    *events += 1;
}

/// About 200,000 events: blocks of 1,900 text deltas, each closed by the assistant message item
/// holding their text; every 20th block also a reasoning item with ~400 KB of encrypted content.
fn generated_stream() -> (Vec<u8>, usize) {
    let mut out = String::with_capacity(40 * 1024 * 1024);
    let mut events = 0;
    push(
        &mut out,
        &mut events,
        json!({"type":"response.created","sequence_number":0,
            "response":{"id":"resp_bench","object":"response","status":"in_progress","output":[]}}),
    );
    let encrypted = "gAAAAABpQ3Vx".repeat(34_000);
    let mut seq = 1;
    let mut block = 0;
    while events < TARGET_EVENTS {
        let item_id = format!("msg_{block}");
        let mut text = String::new();
        for i in 0..1900 {
            let word = WORDS[(i + block) % WORDS.len()];
            text.push_str(word);
            push(
                &mut out,
                &mut events,
                json!({"type":"response.output_text.delta","item_id":item_id,"output_index":0,
                    "content_index":0,"delta":word,"sequence_number":seq}),
            );
            seq += 1;
        }
        push(
            &mut out,
            &mut events,
            json!({"type":"response.output_item.done","output_index":0,"sequence_number":seq,
                "item":{"id":item_id,"type":"message","status":"completed","role":"assistant",
                    "content":[{"type":"output_text","annotations":[],"text":text}]}}),
        );
        seq += 1;
        if block % 20 == 0 {
            push(
                &mut out,
                &mut events,
                json!({"type":"response.output_item.done","output_index":1,"sequence_number":seq,
                    "item":{"id":format!("rs_{block}"),"type":"reasoning","summary":[
                        {"type":"summary_text","text":"**Reading the log** before changing code"}],
                        "encrypted_content":encrypted}}),
            );
            seq += 1;
        }
        block += 1;
    }
    push(
        &mut out,
        &mut events,
        json!({"type":"response.completed","sequence_number":seq,
            "response":{"id":"resp_bench","status":"completed","usage":{"input_tokens":5000,
            "input_tokens_details":{"cached_tokens":4096},"output_tokens":200000,
            "output_tokens_details":{"reasoning_tokens":0},"total_tokens":205000}}}),
    );
    (out.into_bytes(), events)
}

/// Ours: `StreamReader` (core/stream/sse.rs framing + mapping + accumulation).
fn ours(chunks: &[&[u8]]) -> usize {
    let mut reader = StreamReader::new();
    let mut entries = 0;
    for chunk in chunks {
        entries += reader.push(chunk, Duration::ZERO).len();
    }
    entries += reader.finish(Duration::ZERO).len();
    assert!(reader.outcome().response_id().is_some());
    entries
}

/// Ours, SSE framing only: `SseDecoder` (lines read in batches).
fn ours_decode_only(chunks: &[&[u8]]) -> usize {
    let mut decoder = SseDecoder::new();
    let mut events = 0;
    for chunk in chunks {
        events += decoder.push(chunk, Duration::ZERO).len();
    }
    events + decoder.finish(Duration::ZERO).len()
}

/// Plain: `eventsource-stream` over the same chunks, each `data` parsed as `serde_json::Value`
/// (`parse_json`), or only framed.
fn plain(chunks: &[&[u8]], parse_json: bool) -> usize {
    let source = futures_util::stream::iter(chunks.iter().map(Ok::<_, std::convert::Infallible>));
    let mut events = source.eventsource();
    let mut cx = Context::from_waker(Waker::noop());
    let mut parsed = 0;
    // `iter` never returns Pending, so polling in a loop drives it to the end.
    while let Poll::Ready(Some(event)) = Pin::new(&mut events).poll_next(&mut cx) {
        let event = event.expect("valid SSE");
        if parse_json {
            let value: serde_json::Value = serde_json::from_str(&event.data).expect("valid JSON");
            black_box(&value);
        } else {
            black_box(&event);
        }
        parsed += 1;
    }
    parsed
}

fn stream_bench(c: &mut Criterion) {
    let (bytes, events) = generated_stream();
    let chunks: Vec<&[u8]> = bytes.chunks(CHUNK_BYTES).collect();
    eprintln!(
        "stream: {} bytes, {events} events, {} chunks of {CHUNK_BYTES} bytes",
        bytes.len(),
        chunks.len()
    );
    assert_eq!(ours(&chunks), events);
    assert_eq!(ours_decode_only(&chunks), events);
    assert_eq!(plain(&chunks, true), events);
    let mut group = c.benchmark_group("stream_200k_events");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.bench_function("promptwire_decode_map", |b| {
        b.iter(|| black_box(ours(black_box(&chunks))))
    });
    group.bench_function("promptwire_decode_only", |b| {
        b.iter(|| black_box(ours_decode_only(black_box(&chunks))))
    });
    group.bench_function("plain_eventsource_serde_value", |b| {
        b.iter(|| black_box(plain(black_box(&chunks), true)))
    });
    group.bench_function("eventsource_framing_only", |b| {
        b.iter(|| black_box(plain(black_box(&chunks), false)))
    });
    group.finish();
}

criterion_group!(benches, stream_bench);
criterion_main!(benches);
