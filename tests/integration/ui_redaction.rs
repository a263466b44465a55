//! The app shows, copies and exports no credential (the whole app in egui_kittest, a real
//! loopback server): with a base URL holding a password, a custom `Bearer` header and a cookie in
//! the target's headers, the headers column, the URL line, the column copies and the JSON and HAR
//! exports carry none of them, while the organization header stays visible with its note; a send
//! answered by a 401 that echoes the key shows the failure with the key redacted, everywhere on
//! screen. The server still receives every real value.

use crate::support::ui as ui_support;

use std::sync::Arc;

use crate::support::upstream::{Reply, Upstream};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
use pretty_assertions::assert_eq;
use promptwire::app::files::export_bytes;
use promptwire::app::send::KeyLookup;
use promptwire::app::settings::{Column, ColumnDialect, ExportKind, ViewKind};
use promptwire::app::{AppCommand, PromptEdit};
use promptwire::core::redact::IDENTIFYING_NOTE;
use promptwire::ui::PromptwireApp;
use serde_json::json;
use ui_support::{App, scratch_dir, state, wait_for_compile, wait_until};

const KEY: &str = "sk-uiKEY0123456789abcdef";
const SECRETS: [&str; 4] = [KEY, "URLPASSWORD42", "CUSTOMBEARER42", "COOKIEVALUE42"];

fn assert_no_secret_on_screen(harness: &App) {
    for secret in SECRETS {
        assert_eq!(
            harness.query_all_by_label_contains(secret).count(),
            0,
            "{secret} is on screen"
        );
    }
}

fn assert_no_secret_in(what: &str, bytes: &[u8]) {
    for secret in SECRETS {
        assert!(
            !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
            "{secret} in {what}: {}",
            String::from_utf8_lossy(bytes)
        );
    }
}

#[test]
fn views_copies_exports_and_errors_show_no_credential() {
    let echo = json!({"error": {"message": format!("Incorrect API key provided: Bearer {KEY}."),
        "code": "invalid_api_key"}});
    let server = Upstream::in_order(vec![Reply::status(401, &[], &echo)]);
    let db = scratch_dir("ui-redaction").join("promptwire.sqlite");
    let lookup: KeyLookup = Arc::new(|name| (name == "OPENAI_API_KEY").then(|| KEY.to_string()));
    let mut harness = Harness::builder()
        .with_size(egui::vec2(1500.0, 950.0))
        .build_eframe(move |cc| PromptwireApp::with_db(cc, Some(db)).with_key_lookup(lookup));
    wait_for_compile(&mut harness);
    let base = server
        .base_url()
        .replace("http://", "http://alice:URLPASSWORD42@");
    let mut target = state(&harness).prompt.compile.clone();
    target.base_url = Some(base.clone());
    target.headers = vec![
        ("x-custom-auth".into(), "Bearer CUSTOMBEARER42".into()),
        ("cookie".into(), "sid=COOKIEVALUE42".into()),
        ("openai-organization".into(), "org-IDENT42".into()),
    ];
    let sender = harness.state().sender();
    sender.send(AppCommand::Edit(Box::new(PromptEdit::Target(target))));
    sender.send(AppCommand::SetColumns(vec![
        Column {
            dialect: ColumnDialect::Standard,
            provider: None,
            view: ViewKind::Body,
        },
        Column {
            dialect: ColumnDialect::Standard,
            provider: None,
            view: ViewKind::Headers,
        },
    ]));
    wait_until(&mut harness, "compiled with the planted target", |s| {
        s.views_are_current() && s.views.len() == 2 && s.views[1].compiled.url.contains("alice:")
    });

    let headers = &state(&harness).views[1];
    let shown = serde_json::to_value(&*headers.value).expect("json");
    assert_eq!(shown["x-custom-auth"], json!("Bearer <redacted>"));
    assert_eq!(shown["cookie"], json!("sid=<redacted>"));
    assert_eq!(shown["authorization"], json!("Bearer <redacted>"));
    assert_eq!(shown["openai-organization"], json!("org-IDENT42"));
    harness.get_by_label(&format!("openai-organization: {IDENTIFYING_NOTE}"));
    assert!(
        harness
            .query_all_by_label_contains("POST http://alice:<redacted>@127.0.0.1:")
            .count()
            >= 2,
        "the URL line of each column, password redacted"
    );
    assert_no_secret_on_screen(&harness);
    for column in 0..2 {
        let view = &state(&harness).views[column];
        assert_no_secret_in("a column copy", view.export_text().as_bytes());
        assert_no_secret_in(
            "a curl copy",
            promptwire::core::export::curl_command(&view.compiled)
                .expect("curl")
                .as_bytes(),
        );
        for kind in [ExportKind::Json, ExportKind::Har] {
            let bytes = export_bytes(state(&harness), kind, column).expect("export");
            assert_no_secret_in(&format!("{kind:?} export of column {column}"), &bytes);
        }
    }

    harness.get_by_label("Send").click();
    wait_until(&mut harness, "the send failed", |s| {
        s.send.job.is_none() && s.send.timeline.failure().is_some()
    });
    harness.run_steps(3);
    let received = server.received();
    assert_eq!(received.len(), 1);
    assert_eq!(
        received[0].header("x-custom-auth"),
        Some("Bearer CUSTOMBEARER42")
    );
    assert_eq!(received[0].header("cookie"), Some("sid=COOKIEVALUE42"));
    let failure = state(&harness)
        .send
        .timeline
        .failure()
        .expect("failure")
        .clone();
    assert_eq!(failure.class.as_str(), "unexpected_status");
    assert!(
        harness
            .query_all_by_label_contains("Incorrect API key provided: Bearer <redacted>.")
            .count()
            >= 1,
        "the echo is shown, redacted"
    );
    assert_no_secret_on_screen(&harness);
    assert_no_secret_in("the status line", state(&harness).status.text.as_bytes());
}
