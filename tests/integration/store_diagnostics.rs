//! The server's `prompt_cache_diagnostics` kept with a recording: a request recorded through
//! the proxy whose answer carried them (real HTTP on 127.0.0.1) has them beside the ledger's
//! prediction when the stored session is analysed — in the library's rows and in
//! `diff --session --json` (`requests[].reported.diagnostics`) — as when the answer files are
//! given to `diff`.

use crate::support;

use std::time::Duration;

use bytes::Bytes;
use pretty_assertions::assert_eq;
use promptwire::core::ledger::{self, Rules};
use promptwire::core::prefix::Session;
use promptwire::core::stream::PromptCacheDiagnostics;
use promptwire::store::prefix_input::push_stored_session;
use promptwire::store::{Page, Store};
use serde_json::{Value, json};
use support::scratch;
use support::upstream::{Reply, Upstream, paced, post_responses};

/// An answer with usage and, for the second request, the server's diagnosis.
fn answer(n: usize) -> Vec<Bytes> {
    let mut response = json!({"id": format!("resp_{n}"), "status": "completed",
        "usage": {"input_tokens": 1500, "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": 1505}});
    if n == 1 {
        response["prompt_cache_diagnostics"] = json!({"type": "cache_miss",
            "reason": "tools_changed", "cache_missed_tokens": 1500,
            "comparison_reusable_tokens": 0});
    }
    let completed = json!({"type": "response.completed", "response": response});
    vec![Bytes::from(format!(
        "event: response.completed\ndata: {completed}\n\n"
    ))]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_servers_diagnosis_is_kept_with_the_recording() {
    let counter = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let upstream = Upstream::start(move |_| {
        let n = counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Reply::sse(paced(&answer(n), Duration::ZERO))
    });
    let db = scratch("store_diagnostics").join("rec.sqlite");
    let (proxy, _events) = support::upstream::recording_proxy(&upstream.base_url(), &db).await;
    let text = "a long instruction ".repeat(200);
    let first = json!({"model": "gpt-5.5", "instructions": text, "input": "one",
                       "prompt_cache_key": "k", "stream": true});
    let mut second = first.clone();
    second["tools"] = json!([{"type": "function", "name": "f", "parameters": {}}]);
    second["prompt_cache_options"] = json!({"comparison_response_id": "resp_0"});
    for body in [&first, &second] {
        assert_eq!(post_responses(&proxy.base_url(), body).await.0, 200);
    }
    proxy.stop();
    proxy.stopped().await;

    let store = Store::open(&db).expect("db");
    let session_id = store.list_sessions(Page::ALL).expect("sessions")[0].id;
    let mut session = Session::default();
    push_stored_session(&mut session, &store, session_id).expect("read");
    let ledger = ledger::ledger(&session, &Rules::bundled());
    let diagnosis = PromptCacheDiagnostics::CacheMiss {
        reason: Some("tools_changed".to_string()),
        cache_missed_tokens: Some(1500),
        comparison_reusable_tokens: Some(0),
    };
    let got: Vec<Option<PromptCacheDiagnostics>> = ledger
        .rows
        .iter()
        .map(|r| r.reported.as_ref().and_then(|s| s.diagnostics.clone()))
        .collect();
    assert_eq!(got, vec![None, Some(diagnosis)]);
    drop(store);

    let out = std::process::Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .args([
            "diff",
            "--session",
            &session_id.to_string(),
            "--json",
            "--db",
        ])
        .arg(&db)
        .output()
        .expect("diff");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    let printed: Vec<Value> = report["requests"]
        .as_array()
        .expect("requests")
        .iter()
        .map(|r| r["reported"]["diagnostics"].clone())
        .collect();
    assert_eq!(
        printed,
        vec![
            Value::Null,
            json!({"type": "cache_miss", "reason": "tools_changed", "cache_missed_tokens": 1500,
                   "comparison_reusable_tokens": 0})
        ]
    );
}
