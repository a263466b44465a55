//! OpenTelemetry export of a stored 1,000-request session (issue 33; the generated agent
//! session of `support/prefix_session.rs`, whose last body is about 2 MB, stored the way the app
//! stores sessions): reading it back, its ledger and the mapping to 1,001 spans, then the whole
//! export — read, map, encode, send in batches and wait for the collector — as `sessions export
//! ID --otlp URL` does it. Target: ≤ 2 s to a local Phoenix.
//!
//! The collector is `PROMPTWIRE_OTLP_BENCH_URL` when set (e.g. a local `phoenix serve`), else a
//! loopback receiver of the bench's own that answers 200. Prints medians of 5 rounds (a backend
//! that keeps span ids unique stores the first round and takes the others as duplicates).
//! `cargo bench --bench otlp_export`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use promptwire::core::otel::SpanOptions;
use promptwire::store::{
    NewRequest, NewSession, OutcomeRecord, RecordedState, ResponseMeta, Source, Store,
};
use promptwire::transport::otlp::encode::{Protocol, encode};
use promptwire::transport::otlp::{OtlpConfig, OtlpExporter, SessionForExport};
use serde_json::{Value, json};

#[path = "support/prefix_session.rs"]
mod prefix_session;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Bumped when the generated database changes.
const DB_NAME: &str = "otlp-export-bench-v1.sqlite";

/// Writes the generated session into `path`; its id.
fn build_db(path: &Path) {
    let synthetic = prefix_session::generate();
    let building = path.with_extension("building");
    let _ = std::fs::remove_file(&building);
    let mut store = Store::open(&building).expect("bench db");
    let session = store
        .create_session(&NewSession {
            name: "agent-1000".to_string(),
            source: Source::Proxy,
            provider: None,
            model: Some("gpt-5.5".to_string()),
            created_us: 1_700_000_000_000_000,
        })
        .expect("session");
    for (i, (head, items)) in synthetic.requests.iter().enumerate() {
        let mut body = synthetic.heads[*head].clone();
        body.insert(
            "input".to_string(),
            Value::Array(
                items
                    .iter()
                    .map(|id| synthetic.items[*id as usize].clone())
                    .collect(),
            ),
        );
        let bytes = serde_json::to_vec(&Value::Object(body)).expect("body");
        let id = store
            .add_request(
                session,
                &NewRequest {
                    dialect: Some("standard".to_string()),
                    provider: Some("openai".to_string()),
                    started_us: Some(1_700_000_000_000_000 + i as i64 * 20_000_000),
                    ..NewRequest::post("https://api.openai.com/v1/responses", &bytes)
                },
            )
            .expect("request");
        store
            .set_response(
                id,
                &ResponseMeta {
                    status: Some(200),
                    wait_us: Some(300_000),
                    total_us: Some(4_000_000),
                    ..ResponseMeta::default()
                },
            )
            .expect("response");
        let input = (bytes.len() / 4) as u64;
        store
            .set_outcome(
                id,
                &OutcomeRecord {
                    state: RecordedState::Completed,
                    response_id: Some(format!("resp_{i}")),
                    usage: Some(json!({"input_tokens": input,
                        "input_tokens_details": {"cached_tokens": input / 1024 * 1024},
                        "output_tokens": 200})),
                    events: 40,
                    first_event_us: Some(310_000),
                    first_text_us: Some(900_000),
                    total_us: Some(4_000_000),
                    ..OutcomeRecord::default()
                },
            )
            .expect("outcome");
    }
    drop(store);
    std::fs::rename(&building, path).expect("db in place");
    eprintln!(
        "built {}: last body {} bytes",
        path.display(),
        synthetic.body_bytes(synthetic.requests.len() - 1)
    );
}

fn db_path() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let path = dir.join(DB_NAME);
    if !path.exists() {
        build_db(&path);
    }
    path
}

/// A loopback OTLP/HTTP receiver answering 200 to every export request; its base URL.
#[allow(clippy::disallowed_methods)] // A stand-in server of the bench's own: threads of its own.
fn receiver() -> String {
    use std::io::{Read as _, Write as _};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut stream = stream;
                let mut buf = Vec::new();
                let mut chunk = [0u8; 65536];
                loop {
                    let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
                        match stream.read(&mut chunk) {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                        continue;
                    };
                    let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
                    let length: usize = head
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .and_then(|v| v.trim().parse().ok())
                        .unwrap_or(0);
                    while buf.len() < end + 4 + length {
                        match stream.read(&mut chunk) {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    }
                    buf.drain(..end + 4 + length);
                    if stream
                        .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
                        .is_err()
                    {
                        return;
                    }
                }
            });
        }
    });
    format!("http://{addr}")
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

#[allow(clippy::disallowed_methods)] // The bench's own configuration, read at its edge.
fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        eprintln!("otlp_export bench: run with `cargo bench --bench otlp_export`");
        return;
    }
    let path = db_path();
    let store = Store::open(&path).expect("db");
    let session = store
        .list_sessions(promptwire::store::Page::ALL)
        .expect("sessions")[0]
        .id;
    let (url, which) = match std::env::var("PROMPTWIRE_OTLP_BENCH_URL") {
        Ok(url) => (url, "the collector at PROMPTWIRE_OTLP_BENCH_URL"),
        Err(_) => (receiver(), "a loopback receiver"),
    };
    let options = SpanOptions::default();
    let (mut reads, mut encodes, mut totals) = (Vec::new(), Vec::new(), Vec::new());
    let mut spans_n = 0;
    let mut last = None;
    for _ in 0..5 {
        let started = Instant::now();
        let read = SessionForExport::read(&store, session, options).expect("read");
        let spans = read.all_spans(options).expect("spans");
        reads.push(started.elapsed().as_secs_f64());
        spans_n = spans.len();
        let t = Instant::now();
        let bytes = encode(&spans, "promptwire", Protocol::Protobuf).len();
        encodes.push((t.elapsed().as_secs_f64(), bytes));

        let started = Instant::now();
        let exporter = OtlpExporter::start(OtlpConfig::new(&url)).expect("exporter");
        let read = SessionForExport::read(&store, session, options).expect("read");
        exporter.submit_wait(read.all_spans(options).expect("spans"));
        let stats = exporter.shutdown(Duration::from_secs(60));
        totals.push(started.elapsed().as_secs_f64());
        last = Some(stats);
    }
    let encode_secs = median(encodes.iter().map(|e| e.0).collect());
    let rounds: Vec<String> = totals.iter().map(|t| format!("{:.0}", t * 1e3)).collect();
    println!(
        "otlp export of a 1,000-request session ({spans_n} spans) to {which}, median of 5: read + ledger + spans {:.0} ms; protobuf encode {:.1} ms ({:.1} MB); whole export (read, ledger, spans, send, collector answered) {:.0} ms (target <= 2000 ms; rounds: {} ms); last round: {}",
        median(reads) * 1e3,
        encode_secs * 1e3,
        encodes[0].1 as f64 / 1e6,
        median(totals) * 1e3,
        rounds.join(", "),
        last.map(|s| s.line()).unwrap_or_default(),
    );
}
