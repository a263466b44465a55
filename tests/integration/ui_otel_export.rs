//! OpenTelemetry export in the app (egui_kittest, whole app, no GPU) against a loopback OTLP
//! receiver the test starts: the Record panel's "Also export to OpenTelemetry" with the
//! endpoint, a request through the proxy that becomes a span while the proxy runs (and the
//! panel's counter line); then the session's right-click "Export to OpenTelemetry…", its window,
//! Export, and the result line.

use crate::support::ui as ui_support;

use std::time::Duration;

use crate::support::otlp::{Receiver, attr, post};
use crate::support::upstream::{End, Reply, Upstream, pieces, sse_file};
use egui_kittest::kittest::Queryable as _;
use pretty_assertions::assert_eq;
use ui_support::{app_with, replace_text, scratch_dir, state, wait_until};

const BODY: &str = r#"{"model":"gpt-5.5","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hello"}]}],"stream":true}"#;

#[test]
fn the_record_panel_and_the_session_menu_export_to_opentelemetry() {
    let answer = sse_file("text-answer.sse");
    let upstream = Upstream::in_order(vec![Reply::answer(
        pieces(&answer, 3, Duration::from_millis(5)),
        End::Complete,
    )]);
    let receiver = Receiver::start(|_| 200);
    let db = scratch_dir("ui-otel").join("promptwire.sqlite");
    let mut harness = app_with((1500.0, 950.0), Some(db));
    ui_support::show_sessions(&mut harness);

    harness.get_by_label("Record").click();
    harness.run_steps(2);
    harness.get_by_label("Also export to OpenTelemetry").click();
    harness.run_steps(2);
    replace_text(&mut harness, "OpenTelemetry endpoint", &receiver.base_url());
    harness.run_steps(2);
    assert_eq!(
        (
            state(&harness).settings.otel.live,
            state(&harness).settings.otel.endpoint.clone()
        ),
        (true, receiver.base_url())
    );
    replace_text(&mut harness, "Listen address", "127.0.0.1:0");
    replace_text(&mut harness, "Upstream URL", &upstream.base_url());
    harness.get_by_label("Start proxy").click();
    wait_until(&mut harness, "proxy listening", |s| {
        s.record.proxy.addr.is_some()
    });
    let addr = state(&harness).record.proxy.addr.expect("address");
    let (status, _) = post(
        &format!("http://{addr}/v1/responses"),
        BODY.as_bytes(),
        &[("session_id", "otel-1")],
    );
    assert_eq!(status, 200);
    let spans = receiver.wait_for(Duration::from_secs(30), |s| !s.is_empty());
    assert_eq!(spans.len(), 1, "the request's span while the proxy runs");
    assert_eq!(
        attr(&spans[0], "gen_ai.request.model").as_deref(),
        Some("gpt-5.5")
    );
    wait_until(&mut harness, "live counters", |s| {
        s.otel.live.as_ref().is_some_and(|l| l.exported_spans == 1)
    });
    harness.get_by_label("OpenTelemetry: exported 1 span");
    let session = state(&harness).record.proxy.session.expect("session");
    harness.get_by_label("Stop proxy").click();
    wait_until(&mut harness, "proxy stopped", |s| {
        !s.record.proxy.is_active()
    });

    // The session's menu: Export to OpenTelemetry…
    let before = receiver.spans().len();
    wait_until(&mut harness, "session listed", move |s| {
        s.sessions.sessions.iter().any(|x| x.id == session)
    });
    harness.run_steps(2);
    harness
        .query_by_label_contains(&format!("#{session} "))
        .expect("the session's entry")
        .click_secondary();
    harness.run_steps(3);
    harness.get_by_label("Export to OpenTelemetry…").click();
    harness.run_steps(3);
    assert_eq!(state(&harness).otel.dialog, Some(session));
    harness.get_by_label("Export").click();
    wait_until(&mut harness, "export finished", |s| {
        s.otel.job.is_none() && s.otel.result.is_some()
    });
    let (line, failed) = state(&harness).otel.result.clone().expect("result");
    assert_eq!(
        (line, failed),
        (
            format!("exported 2 spans to {}/v1/traces", receiver.base_url()),
            false
        )
    );
    harness.run_steps(2);
    harness.get_by_label(&format!(
        "exported 2 spans to {}/v1/traces",
        receiver.base_url()
    ));
    // The root span and the request's span, the same ids as the live export's request span.
    let after = receiver.spans();
    assert_eq!(after.len(), before + 2);
    assert!(
        after[before..]
            .iter()
            .any(|s| s.span_id == spans[0].span_id)
    );
}
