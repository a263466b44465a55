//! The Record panel's upstream CA file on the whole app (egui_kittest, no GPU): a file that is
//! not a PEM certificate, or is missing, is the panel's error and no proxy starts; the test CA
//! of `tests/data/tls/` lets the proxy started from the panel relay a request to the HTTP/2 TLS
//! upstream of `proxy_h2.rs` and record it (over HTTP/2). The path is kept in the settings.

use crate::proxy_h2::{H2Upstream, cases, reply_bytes, tls_file};
use crate::support::ui as ui_support;

use std::path::PathBuf;

use egui::accesskit::Role;
use egui::{Key, Modifiers};
use egui_kittest::kittest::Queryable as _;
use pretty_assertions::assert_eq;
use promptwire::store::{Page, RecordedState, Store};
use serde_json::json;
use ui_support::{App, app_with, replace_text, scratch_dir, state, wait_until};

/// Opens the Record panel and fills its fields.
fn fill_panel(harness: &mut App, upstream: &str, ca: &str) {
    harness.get_by_label("Record").click();
    harness.run_steps(2);
    replace_text(harness, "Listen address", "127.0.0.1:0");
    replace_text(harness, "Upstream URL", upstream);
    replace_text(harness, "Upstream CA file", ca);
}

/// Clicks Start proxy and waits for the start to fail; the error it shows.
fn start_fails(harness: &mut App) -> Option<String> {
    harness.get_by_label("Start proxy").click();
    wait_until(harness, "start refused", |s| {
        s.record.proxy.error.is_some() && !s.record.proxy.is_active()
    });
    let error = state(harness).record.proxy.error.clone();
    harness.run_steps(2);
    if let Some(error) = &error {
        harness.get_by_label(error);
    }
    error
}

#[test]
fn a_bad_upstream_ca_file_is_the_panels_error_and_nothing_starts() {
    let dir = scratch_dir("ui-proxy-bad-ca");
    let not_pem = dir.join("not-a-ca.pem");
    std::fs::write(&not_pem, "this is not a certificate\n").expect("write");
    let missing = dir.join("missing.pem");
    let mut harness = app_with((1500.0, 950.0), Some(dir.join("promptwire.sqlite")));
    fill_panel(
        &mut harness,
        "https://127.0.0.1:9/v1",
        &not_pem.display().to_string(),
    );
    let first = start_fails(&mut harness);
    replace_text(
        &mut harness,
        "Upstream CA file",
        &missing.display().to_string(),
    );
    let second = start_fails(&mut harness);
    assert_eq!(
        (first, second, state(&harness).record.proxy.addr),
        (
            Some(format!(
                "upstream CA file: {}: no PEM `CERTIFICATE` in it",
                not_pem.display()
            )),
            Some(format!(
                "upstream CA file: cannot read {}: No such file or directory (os error 2)",
                missing.display()
            )),
            None
        )
    );
    // The path is kept in the settings (persisted with them), as typed last.
    assert_eq!(state(&harness).settings.upstream_ca, Some(missing));
    // Emptied, the field sets no CA.
    harness.get_by_label("Upstream CA file").focus();
    harness.run_steps(1);
    harness.key_press_modifiers(Modifiers::COMMAND, Key::A);
    harness.run_steps(1);
    harness.key_press(Key::Backspace);
    harness.run_steps(4);
    assert_eq!(state(&harness).settings.upstream_ca, None::<PathBuf>);
}

#[test]
fn the_upstream_ca_file_lets_the_panels_proxy_record_an_h2_upstream() {
    let (_, reply) = cases().swap_remove(0);
    let h2 = H2Upstream::start(vec![reply.clone()]);
    let db = scratch_dir("ui-proxy-ca").join("promptwire.sqlite");
    let mut harness = app_with((1500.0, 950.0), Some(db.clone()));
    let ca = tls_file("ca.pem");
    fill_panel(&mut harness, &h2.base_url(), &ca.display().to_string());
    harness
        .get_by_role_and_label(Role::Button, "Start proxy")
        .click();
    wait_until(&mut harness, "proxy listening", |s| {
        s.record.proxy.addr.is_some() || s.record.proxy.error.is_some()
    });
    assert_eq!(state(&harness).record.proxy.error, None);
    let addr = state(&harness).record.proxy.addr.expect("address");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let (status, body) = runtime.block_on(async {
        let response = reqwest::Client::new()
            .post(format!("http://{addr}/v1/responses"))
            .header("content-type", "application/json")
            .header("session_id", "ca-1")
            .body(json!({"model": "gpt-5.5", "input": "hi", "stream": true}).to_string())
            .send()
            .await
            .expect("answer");
        let status = response.status().as_u16();
        (status, response.bytes().await.expect("body").to_vec())
    });
    assert_eq!((status, body), (200, reply_bytes(&reply)));
    assert_eq!(
        h2.seen()
            .iter()
            .map(|s| (s.alpn.as_deref(), s.version.as_str()))
            .collect::<Vec<_>>(),
        vec![(Some("h2"), "HTTP/2.0")]
    );
    wait_until(&mut harness, "outcome recorded", |s| {
        s.record.proxy.finished == 1
    });
    harness.get_by_label("Stop proxy").click();
    wait_until(&mut harness, "proxy stopped", |s| {
        !s.record.proxy.is_active()
    });
    let store = Store::open(&db).expect("db");
    let session = store
        .list_sessions(Page::ALL)
        .expect("sessions")
        .into_iter()
        .find(|s| s.name.ends_with(" · session:ca-1"))
        .expect("the recorded session");
    let rows = store.requests(session.id, Page::ALL).expect("rows");
    let outcome = store.outcome(rows[0].id).expect("read").expect("outcome");
    let extra = store.request(rows[0].id).expect("row").extra;
    assert_eq!(
        (
            rows.len(),
            outcome.state,
            extra.as_ref().and_then(|e| e.get("http_version")).cloned()
        ),
        (1, RecordedState::Completed, Some(json!("HTTP/2.0")))
    );
    assert_eq!(state(&harness).settings.upstream_ca, Some(ca));
}

/// At 1024×700 the Record panel's rows stay inside the window: the CA row (field and Browse…)
/// once ran past the pane and widened the panel's content, so the limits line and the replay
/// timing were cut at the window's edge.
#[test]
fn the_record_panel_fits_the_window_at_1024x700() {
    let mut harness = app_with(
        (1024.0, 700.0),
        Some(scratch_dir("ui-record-fits").join("s.db")),
    );
    harness.get_by_label("Record").click();
    harness.run_steps(3);
    for label in [
        "Browse…",
        "records up to 64 MiB per event, 1024 MiB per answer",
        "instant (no waits)",
        "Start proxy",
    ] {
        // Inside the window's width (the pane scrolls up and down, not sideways).
        let rect = harness.get_by_label(label).rect();
        let screen = harness.ctx.content_rect();
        assert!(
            rect.left() >= screen.left() && rect.right() <= screen.right(),
            "{label:?} is cut: {rect:?}"
        );
    }
}
