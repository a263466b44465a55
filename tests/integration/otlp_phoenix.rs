//! OpenTelemetry export into a real Arize Phoenix (PyPI `arize-phoenix`, `phoenix serve` on
//! 127.0.0.1, started and stopped here; `.ci/run` installs it into a cached virtualenv and the
//! test fails under `CI=true` when it is missing).
//!
//! The real Codex CLI 0.169 capture `two-turns-tools-session` (six requests, two turns) goes
//! through `promptwire record` with an API key in its Authorization header, a cookie, and a key
//! pasted into the user's message:
//!
//! 1. `record --otlp URL --otlp-content`: each request's span is in Phoenix while the proxy still
//!    runs; at the stop the session's root span follows.
//! 2. The same capture recorded without export, then `sessions export ID --otlp URL
//!    --otlp-content`: read back through Phoenix's REST API (`/v1/projects/default/spans`), one
//!    span per request under the session's root, model and usage attributes equal to the stored
//!    ones, cache read tokens present, the ledger's verdict there, and no secret anywhere.

use crate::support;

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use promptwire::store::{Page, Store};
use serde_json::{Value, json};
use support::otlp::{Phoenix, phoenix_bin, post};
use support::server::Server;
use support::shared::shared_fixtures;
use support::upstream::{Reply, Step, Upstream};

const API_KEY: &str = "sk-proj-OTLPSECRETKEY0123456789abcdefABCDEF";
const PASTED_KEY: &str = "sk-proj-PASTEDKEY9876543210zyxwvutsrqpon";
const COOKIE: &str = "session=COOKIESECRET0123456789";

/// The capture's bodies (with a key pasted into the user's message) and streams.
fn capture(dir: &Path) -> Vec<(Vec<u8>, Vec<u8>)> {
    (0..6)
        .map(|k| {
            let body = std::fs::read_to_string(dir.join(format!("req_{k:02}.json"))).expect("body");
            let body = body.replace(
                "show me what is in this folder",
                &format!("show me what is in this folder (my key is {PASTED_KEY})"),
            );
            let sse = std::fs::read(dir.join(format!("resp_{k:02}.sse"))).expect("sse");
            (body.into_bytes(), sse)
        })
        .collect()
}

/// A stand-in upstream answering each capture body with its own stream (told apart by the
/// number of input items).
fn upstream(capture: &[(Vec<u8>, Vec<u8>)]) -> Upstream {
    let by_items: Vec<(usize, Vec<u8>)> = capture
        .iter()
        .map(|(body, sse)| {
            let v: Value = serde_json::from_slice(body).expect("json");
            (v["input"].as_array().map_or(0, Vec::len), sse.clone())
        })
        .collect();
    Upstream::start(move |r| {
        let v: Value = serde_json::from_slice(&r.body).unwrap_or_default();
        let n = v["input"].as_array().map_or(0, Vec::len);
        let sse = by_items
            .iter()
            .find(|(k, _)| *k == n)
            .map(|(_, s)| s.clone())
            .unwrap_or_default();
        Reply::sse(vec![Step::Send(sse.into())])
    })
}

/// Starts `record` (plus `extra`), sends the capture through it and reads a request and an
/// outcome line per request; the child, its remaining lines and the session id.
fn record_capture(
    db: &Path,
    upstream: &Upstream,
    capture: &[(Vec<u8>, Vec<u8>)],
    extra: &[&str],
) -> (
    Server,
    std::io::Lines<BufReader<std::process::ChildStdout>>,
    i64,
) {
    let base = upstream.base_url();
    let mut args = vec![
        "record",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        &base,
        "--db",
        db.to_str().expect("path"),
        "--session",
        "codex two turns",
        "--json",
    ];
    args.extend_from_slice(extra);
    let mut child = Server::spawn(&args);
    let mut lines = BufReader::new(child.0.stdout.take().expect("stdout")).lines();
    let first: Value =
        serde_json::from_str(&lines.next().expect("line").expect("read")).expect("json");
    let addr = first["listening"].as_str().expect("address").to_string();
    let mut session = 0;
    let bearer = format!("Bearer {API_KEY}");
    for (body, _) in capture {
        let (status, _) = post(
            &format!("http://{addr}/v1/responses"),
            body,
            &[("authorization", &bearer), ("cookie", COOKIE)],
        );
        assert_eq!(status, 200);
        for _ in 0..2 {
            let line: Value =
                serde_json::from_str(&lines.next().expect("line").expect("read")).expect("json");
            if let Some(s) = line["request"]["session"].as_i64() {
                session = s;
            }
        }
    }
    (child, lines, session)
}

/// The trace id (hex) of stored session `session` of `db`.
fn trace_of(db: &Path, session: i64) -> String {
    let created = Store::open(db)
        .expect("db")
        .session(session)
        .expect("session")
        .created_us;
    promptwire::core::otel::ids::hex(&promptwire::core::otel::ids::trace_id(session, created))
}

/// Spans of trace `trace` in Phoenix's default project, waiting up to `timeout` for `n`.
fn spans_of(phoenix: &Phoenix, trace: &str, n: usize, timeout: Duration) -> Vec<Value> {
    let deadline = Instant::now() + timeout;
    loop {
        let spans: Vec<Value> = phoenix
            .spans("default")
            .into_iter()
            .filter(|s| s["context"]["trace_id"].as_str() == Some(trace))
            .collect();
        if spans.len() >= n || Instant::now() > deadline {
            return spans;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn assert_no_secret(text: &str) {
    for secret in [
        API_KEY,
        PASTED_KEY,
        "OTLPSECRETKEY",
        "PASTEDKEY9876543210",
        "COOKIESECRET",
    ] {
        assert!(!text.contains(secret), "{secret} reached Phoenix");
    }
}

#[test]
fn recordings_reach_a_real_phoenix_live_and_from_the_store() {
    let Some(bin) = phoenix_bin() else { return };
    let Some(dir) = shared_fixtures("codex-cli-0.169/two-turns-tools-session") else {
        return;
    };
    let scratch = support::scratch("phoenix");
    let phoenix_dir = scratch.join("phoenix");
    std::fs::create_dir_all(&phoenix_dir).expect("dir");
    let phoenix = Phoenix::start(&bin, &phoenix_dir);
    let capture = capture(&dir);
    let upstream = upstream(&capture);

    // 1. Live: the spans arrive while the proxy runs.
    let live_db = scratch.join("live.sqlite");
    let (mut child, mut lines, live_session) = record_capture(
        &live_db,
        &upstream,
        &capture,
        &["--otlp", &phoenix.url, "--otlp-content"],
    );
    let live_trace = trace_of(&live_db, live_session);
    let live = spans_of(&phoenix, &live_trace, 6, Duration::from_secs(60));
    assert_eq!(live.len(), 6, "request spans while the proxy runs");
    assert!(
        matches!(child.0.try_wait(), Ok(None)),
        "the proxy is still running"
    );
    child.terminate();
    let otlp: Value =
        serde_json::from_str(&lines.next().expect("line").expect("read")).expect("json");
    assert_eq!(otlp["otlp"]["exported_spans"], 7, "{otlp}");
    assert_eq!(otlp["otlp"]["failed_spans"], 0, "{otlp}");
    assert_eq!(child.0.wait().expect("wait").code(), Some(0));
    let live = spans_of(&phoenix, &live_trace, 7, Duration::from_secs(30));
    assert_eq!(live.len(), 7, "and the session's root span at the stop");
    assert_no_secret(&serde_json::to_string(&live).expect("json"));

    // 2. Stored: a recorded session exported with `sessions export --otlp`.
    let db = scratch.join("stored.sqlite");
    let (child, _lines, session) = record_capture(&db, &upstream, &capture, &[]);
    child.terminate();
    drop(child);
    let out = support::cli::run(
        &[
            "sessions",
            "export",
            &session.to_string(),
            "--otlp",
            &phoenix.url,
            "--otlp-content",
            "--db",
            db.to_str().expect("path"),
            "--json",
        ],
        None,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(result["exported_spans"], 7, "{result}");
    let trace = trace_of(&db, session);
    assert_eq!(result["sessions"][0]["trace_id"], json!(trace));
    let spans = spans_of(&phoenix, &trace, 7, Duration::from_secs(30));
    assert_eq!(spans.len(), 7);
    let all = serde_json::to_string(&spans).expect("json");
    assert_no_secret(&all);
    assert!(
        all.contains("show me what is in this folder"),
        "content was asked for"
    );

    let roots: Vec<&Value> = spans.iter().filter(|s| s["parent_id"].is_null()).collect();
    assert_eq!(roots.len(), 1, "one root");
    let root_id = roots[0]["context"]["span_id"].clone();
    let trace = roots[0]["context"]["trace_id"].clone();
    let mut requests: Vec<&Value> = spans.iter().filter(|s| !s["parent_id"].is_null()).collect();
    requests.sort_by_key(|s| s["attributes"]["promptwire.request.index"].as_i64());
    let store = Store::open(&db).expect("db");
    let rows = store.request_rows(session, Page::ALL).expect("rows");
    assert_eq!(rows.len(), 6);
    let seen: Vec<Value> = requests
        .iter()
        .map(|s| {
            let a = &s["attributes"];
            serde_json::json!({
                "parent": s["parent_id"], "trace": s["context"]["trace_id"], "name": s["name"],
                "model": a["gen_ai.request.model"], "op": a["gen_ai.operation.name"],
                "provider": a["gen_ai.provider.name"],
                "input": a["gen_ai.usage.input_tokens"], "output": a["gen_ai.usage.output_tokens"],
                "cached": a["gen_ai.usage.cache_read.input_tokens"],
                "effort": a["gen_ai.request.reasoning_effort"],
            })
        })
        .collect();
    let stored: Vec<Value> = rows
        .iter()
        .map(|r| {
            serde_json::json!({
                "parent": root_id, "trace": trace, "name": "chat gpt-5.5",
                "model": r.model, "op": "chat", "provider": "openai",
                "input": r.input_tokens, "output": r.output_tokens, "cached": r.cached_tokens,
                "effort": "medium",
            })
        })
        .collect();
    assert_eq!(seen, stored);
    // The ledger's verdict is on each request after the first.
    for s in &requests[1..] {
        let a = &s["attributes"];
        assert!(a["promptwire.prefix.kept"].is_boolean(), "{a}");
        assert!(a["promptwire.predicted.read_tokens"].is_i64(), "{a}");
    }
    assert!(
        requests
            .iter()
            .any(|s| s["attributes"]["gen_ai.usage.cache_read.input_tokens"].as_i64() > Some(0)),
        "cache read tokens present"
    );
}
