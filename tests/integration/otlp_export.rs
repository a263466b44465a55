//! The OTLP exporter against a loopback receiver the test starts (no backend needed): the
//! protobuf it writes decodes back to the spans it was given; JSON as an option; retry with
//! backoff on 503, none on 400, failures counted and never fatal, a full queue drops instead of
//! waiting; `record --otlp` exports each request while the proxy runs, with a header read from
//! the environment and never stored; `sessions export --all --otlp`.

use crate::support;

use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use promptwire::core::otel::map::Ended;
use promptwire::core::otel::{
    RequestFacts, SessionFacts, SpanOptions, request_spans, session_span,
};
use promptwire::core::stream::UsageCounts;
use promptwire::transport::otlp::{OtlpConfig, OtlpExporter, Protocol};
use serde_json::{Value, json};
use support::otlp::{Receiver, attr, decode, post};
use support::server::Server;
use support::upstream::{Reply, Upstream, paced, turn_events};

fn facts() -> (SessionFacts, Vec<RequestFacts>) {
    let session = SessionFacts {
        id: 3,
        name: "s".to_string(),
        source: "proxy".to_string(),
        created_us: 1_800_000_000_000_000,
        agent: None,
        place: None,
    };
    let created = session.created_us;
    let request = |id: i64, at: i64| RequestFacts {
        request_id: id,
        model: Some("gpt-5.5".to_string()),
        dialect: Some("standard".to_string()),
        provider: None,
        method: "POST".to_string(),
        url: "http://127.0.0.1:9/v1/responses".to_string(),
        status: Some(200),
        started_us: Some(created + at),
        total_us: Some(1_500_000),
        ended: Ended::Completed,
        response_id: Some(format!("resp_{id}")),
        server_model: Some("gpt-5.5".to_string()),
        usage: Some(UsageCounts {
            input_tokens: Some(5000),
            cached_input_tokens: Some(4096),
            cache_write_input_tokens: None,
            output_tokens: Some(50),
            reasoning_output_tokens: None,
            total_tokens: Some(5050),
        }),
        first_event_us: Some(10_000),
        first_text_us: Some(300_000),
        events: 9,
        reasoning_effort: None,
        prompt_cache_key: None,
        input: None,
        output_text: None,
    };
    (session, vec![request(1, 0), request(2, 2_000_000)])
}

fn spans() -> Vec<promptwire::core::otel::Span> {
    let (s, r) = facts();
    let mut all = vec![session_span(&s, &r, None)];
    all.extend(request_spans(&s, &r, None, SpanOptions::default(), None).expect("spans"));
    all
}

fn quick(url: &str) -> OtlpConfig {
    let mut config = OtlpConfig::new(url);
    config.batch_delay = Duration::from_millis(10);
    config.initial_backoff = Duration::from_millis(20);
    config.max_backoff = Duration::from_millis(100);
    config.request_timeout = Duration::from_secs(5);
    config
}

#[test]
fn the_protobuf_written_decodes_to_the_spans_given() {
    let receiver = Receiver::start(|_| 200);
    let mut config = quick(&receiver.base_url());
    config.headers = vec![("x-team".to_string(), "blue".to_string())];
    let exporter = OtlpExporter::start(config).expect("start");
    let given = spans();
    assert!(exporter.submit(given.clone()));
    let stats = exporter.shutdown(Duration::from_secs(10));
    assert_eq!((stats.exported_spans, stats.failed_spans), (3, 0));
    let received = receiver.received();
    assert_eq!(received.len(), 1, "one batch");
    assert_eq!(received[0].path, "/v1/traces");
    assert_eq!(
        received[0].header("content-type"),
        Some("application/x-protobuf")
    );
    assert_eq!(received[0].header("x-team"), Some("blue"));
    let decoded = decode(&received[0].body);
    let shape: Vec<Value> = decoded
        .iter()
        .map(|s| {
            json!({"trace": s.trace_id, "span": s.span_id, "parent": s.parent_span_id,
                "name": s.name, "kind": s.kind, "start": s.start_time_unix_nano,
                "end": s.end_time_unix_nano, "events": s.events.iter().map(|e| (&e.name, e.time_unix_nano)).collect::<Vec<_>>(),
                "model": attr(s, "gen_ai.request.model"), "cached": attr(s, "gen_ai.usage.cache_read.input_tokens")})
        })
        .collect();
    let expected: Vec<Value> = given
        .iter()
        .map(|s| {
            let a = |k: &str| s.attribute(k).map(|v| match v {
                promptwire::core::otel::AttrValue::Str(x) => x.clone(),
                promptwire::core::otel::AttrValue::Int(i) => i.to_string(),
                other => format!("{other:?}"),
            });
            json!({"trace": s.trace_id, "span": s.span_id,
                "parent": s.parent_span_id.map(|p| p.to_vec()).unwrap_or_default(),
                "name": s.name, "kind": if s.parent_span_id.is_some() { 3 } else { 1 },
                "start": s.start_unix_nanos, "end": s.end_unix_nanos,
                "events": s.events.iter().map(|e| (&e.name, e.time_unix_nanos)).collect::<Vec<_>>(),
                "model": a("gen_ai.request.model"), "cached": a("gen_ai.usage.cache_read.input_tokens")})
        })
        .collect();
    assert_eq!(shape, expected);
    assert_eq!(decoded[1].events.len(), 2, "first token and end of stream");
}

#[test]
fn json_is_an_option() {
    let receiver = Receiver::start(|_| 200);
    let mut config = quick(&receiver.base_url());
    config.protocol = Protocol::Json;
    let exporter = OtlpExporter::start(config).expect("start");
    let given = spans();
    exporter.submit(given.clone());
    let stats = exporter.shutdown(Duration::from_secs(10));
    assert_eq!(stats.exported_spans, 3);
    let received = receiver.received();
    assert_eq!(received[0].header("content-type"), Some("application/json"));
    let body: Value = serde_json::from_slice(&received[0].body).expect("OTLP/JSON");
    let span = &body["resourceSpans"][0]["scopeSpans"][0]["spans"][1];
    assert_eq!(
        span["traceId"],
        json!(promptwire::core::otel::ids::hex(&given[1].trace_id))
    );
    assert_eq!(span["name"], json!("chat gpt-5.5"));
}

#[test]
fn retries_with_backoff_and_counts_failures_never_failing() {
    // 503 twice, then accepted.
    let flaky = Receiver::start(|n| if n < 2 { 503 } else { 200 });
    let exporter = OtlpExporter::start(quick(&flaky.base_url())).expect("start");
    exporter.submit(spans());
    let stats = exporter.shutdown(Duration::from_secs(10));
    assert_eq!(
        (stats.exported_spans, stats.failed_spans, stats.retries),
        (3, 0, 2)
    );
    assert_eq!(flaky.received().len(), 3);

    // 400 is not retried.
    let refusing = Receiver::start(|_| 400);
    let exporter = OtlpExporter::start(quick(&refusing.base_url())).expect("start");
    exporter.submit(spans());
    let stats = exporter.shutdown(Duration::from_secs(10));
    assert_eq!(
        (stats.exported_spans, stats.failed_spans, stats.retries),
        (0, 3, 0)
    );
    assert!(
        stats
            .last_error
            .as_deref()
            .is_some_and(|e| e.starts_with("HTTP 400")),
        "{stats:?}"
    );

    // Nobody listening: every try fails, counted.
    let port = support::otlp::free_port();
    let mut config = quick(&format!("http://127.0.0.1:{port}"));
    config.max_attempts = 3;
    let exporter = OtlpExporter::start(config).expect("start");
    exporter.submit(spans());
    let stats = exporter.shutdown(Duration::from_secs(10));
    assert_eq!(
        (stats.exported_spans, stats.failed_spans, stats.retries),
        (0, 3, 2)
    );
}

#[test]
fn a_full_queue_drops_and_never_waits() {
    // A collector that never answers within the test: the queue fills.
    let port = support::otlp::free_port();
    let listener = std::net::TcpListener::bind(("127.0.0.1", port)).expect("bind");
    let mut config = quick(&format!("http://127.0.0.1:{port}"));
    config.queue_spans = 4;
    let exporter = OtlpExporter::start(config).expect("start");
    let started = Instant::now();
    let mut accepted = 0;
    for _ in 0..1000 {
        if exporter.submit(spans()[..1].to_vec()) {
            accepted += 1;
        }
    }
    assert!(
        started.elapsed() < Duration::from_millis(500),
        "submit never waits"
    );
    assert_eq!(accepted, 4);
    assert_eq!(exporter.stats().dropped_spans, 996);
    drop(listener);
}

/// `record --otlp` with `--otlp-header 'Authorization=Bearer $VAR'` from the environment.
fn spawn_record(args: &[&str], token: &str) -> Server {
    Server(
        Command::new(env!("CARGO_BIN_EXE_promptwire"))
            .args(args)
            .env("PW_TEST_OTLP_TOKEN", token)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn"),
    )
}

#[test]
fn record_otlp_exports_each_request_while_the_proxy_runs() {
    const TOKEN: &str = "otlp-token-0123456789abcdef";
    let receiver = Receiver::start(|_| 200);
    let events = turn_events("resp_live", "exported live");
    let upstream = Upstream::start(move |_| Reply::sse(paced(&events, Duration::from_millis(2))));
    let db = support::scratch("record-otlp").join("rec.sqlite");
    let mut child = spawn_record(
        &[
            "record",
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            &upstream.base_url(),
            "--db",
            db.to_str().expect("path"),
            "--json",
            "--otlp",
            &receiver.base_url(),
            "--otlp-header",
            "Authorization=Bearer $PW_TEST_OTLP_TOKEN",
        ],
        TOKEN,
    );
    let mut lines = BufReader::new(child.0.stdout.take().expect("stdout")).lines();
    let first: Value =
        serde_json::from_str(&lines.next().expect("line").expect("read")).expect("json");
    let addr = first["listening"].as_str().expect("address").to_string();
    let body = json!({"model": "gpt-5.5", "input": "hi", "stream": true}).to_string();
    for k in 1..=2 {
        let (status, _) = post(
            &format!("http://{addr}/v1/responses"),
            body.as_bytes(),
            &[(
                "authorization",
                "Bearer sk-proj-NEVERSTORED0123456789abcdef",
            )],
        );
        assert_eq!(status, 200);
        let spans = receiver.wait_for(Duration::from_secs(30), |s| s.len() >= k);
        assert_eq!(spans.len(), k, "request {k}'s span while the proxy runs");
        assert!(matches!(child.0.try_wait(), Ok(None)));
    }
    let spans = receiver.spans();
    assert_eq!(
        attr(&spans[0], "gen_ai.response.id").as_deref(),
        Some("resp_live")
    );
    assert_eq!(
        attr(&spans[0], "gen_ai.request.model").as_deref(),
        Some("gpt-5.5")
    );
    assert_eq!(
        receiver.received()[0].header("authorization"),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    child.terminate();
    let rest: Vec<Value> = lines
        .map_while(Result::ok)
        .filter_map(|l| serde_json::from_str(&l).ok())
        .collect();
    let otlp = rest
        .iter()
        .find(|l| l.get("otlp").is_some())
        .expect("otlp line");
    let stopped = rest.last().expect("the last line");
    let sessions = stopped["sessions"].as_array().map_or(0, Vec::len);
    assert!(sessions >= 1, "{stopped}");
    assert_eq!(
        otlp["otlp"]["exported_spans"],
        json!(2 + sessions),
        "two requests and a root span per session"
    );
    assert_eq!(otlp["otlp"]["failed_spans"], 0);
    assert_eq!(child.0.wait().expect("wait").code(), Some(0));
    assert_eq!(receiver.spans().len(), 2 + sessions);
    // The token was read from the environment and never written.
    let bytes = std::fs::read(&db).expect("db");
    assert!(!bytes.windows(TOKEN.len()).any(|w| w == TOKEN.as_bytes()));

    // The same database exported again, all sessions: the same trace and span ids.
    let again = Receiver::start(|_| 200);
    let out = Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .args([
            "sessions",
            "export",
            "--all",
            "--otlp",
            &again.base_url(),
            "--db",
            db.to_str().expect("path"),
            "--json",
        ])
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ids = |spans: Vec<opentelemetry_proto::tonic::trace::v1::Span>| {
        let mut ids: Vec<(Vec<u8>, Vec<u8>)> =
            spans.into_iter().map(|s| (s.trace_id, s.span_id)).collect();
        ids.sort();
        ids
    };
    assert_eq!(ids(again.spans()), ids(receiver.spans()));
}

#[test]
fn a_literal_credential_header_is_refused() {
    let out = support::cli::run(
        &[
            "sessions",
            "export",
            "1",
            "--otlp",
            "http://127.0.0.1:9",
            "--otlp-header",
            "Authorization=Bearer abc",
            "--db",
            support::scratch("literal")
                .join("x.sqlite")
                .to_str()
                .expect("path"),
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "promptwire: --otlp-header Authorization: a credential must come from the environment (write Authorization=$VARIABLE, not the value)"
    );
}
