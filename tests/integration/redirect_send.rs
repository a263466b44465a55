//! Redirects of a live send, against real loopback servers: within the same origin the redirect
//! is followed with every header; to another origin (another port, or another host name for the
//! same address) nothing is sent there and the send ends as `redirect_refused`, its message
//! naming the target with credentials redacted.

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use crate::support::upstream::{End, Reply, Upstream, pieces, sse_file};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

const KEY: &str = "sk-redirectKEY0123456789";

/// A Prompt whose provider-side headers must never reach another host.
fn prompt() -> std::path::PathBuf {
    let hello = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/prompts/hello.json");
    let mut prompt: Value =
        serde_json::from_str(&std::fs::read_to_string(hello).expect("read")).expect("json");
    prompt["headers"] = json!({"x-goog-api-key": "GOOGKEY-redirect", "x-tenant": "t1"});
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("redirect_send");
    std::fs::create_dir_all(&dir).expect("dir");
    // One file per call: the tests of this binary run on parallel threads of one process, and a
    // shared name let one test read the file while another was rewriting it.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = dir.join(format!("prompt-{}-{call}.json", std::process::id()));
    std::fs::write(&path, prompt.to_string()).expect("write");
    path
}

fn send(base: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .args([
            "send",
            prompt().to_str().expect("path"),
            "--provider",
            "openai",
        ])
        .args([
            "--base-url",
            base,
            "--no-record",
            "--json",
            "--max-retries",
            "2",
        ])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .expect("run send")
}

fn redirect_to(location: &str) -> Reply {
    Reply::status(307, &[("location", location)], &json!({}))
}

fn last_line(out: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.lines().last().expect("a line")).expect("json line")
}

fn stream() -> Reply {
    Reply::answer(
        pieces(&sse_file("text-answer.sse"), 3, Duration::from_millis(1)),
        End::Complete,
    )
}

#[test]
fn a_redirect_to_another_port_is_refused_and_nothing_reaches_it() {
    let other = Upstream::in_order(vec![stream()]);
    let target = format!(
        "{}/responses?sig=SIG-secret",
        other.base_url().replace("http://", "http://u:PW@")
    );
    let first = Upstream::in_order(vec![redirect_to(&target)]);
    let out = send(&first.base_url());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let shown = target
        .replace(":PW@", ":<redacted>@")
        .replace("SIG-secret", "<redacted>");
    assert_eq!(
        last_line(&out),
        json!({
            "outcome": "failed",
            "error": "redirect_refused",
            "message": format!("the server redirected to another origin; promptwire does not send the provider's headers (API key, configured headers, query parameters) to another host — point the base URL there if you trust it: {shown}"),
            "retry_after_ms": null,
        })
    );
    assert_eq!(first.received().len(), 1, "sent once: not retried");
    assert_eq!(
        other.received().len(),
        0,
        "nothing reached the other origin"
    );
}

#[test]
fn a_redirect_to_another_host_name_of_the_same_address_is_refused() {
    // `localhost` and `127.0.0.1` are different origins even on the same port: followed, the
    // redirect would reach this same server.
    let redirected = std::sync::atomic::AtomicBool::new(false);
    let server = Upstream::start(move |received| {
        if redirected.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return stream();
        }
        let port = received
            .header("host")
            .and_then(|host| host.rsplit(':').next())
            .expect("a host header with the port");
        redirect_to(&format!("http://localhost:{port}/v1/responses"))
    });
    let addr = server.addr;
    let out = send(&format!("http://{addr}/v1"));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(last_line(&out)["error"], json!("redirect_refused"));
    let message = last_line(&out)["message"]
        .as_str()
        .expect("message")
        .to_string();
    assert_eq!(
        message.rsplit(": ").next(),
        Some(format!("http://localhost:{}/v1/responses", addr.port()).as_str())
    );
    assert_eq!(server.received().len(), 1, "the redirect was not followed");
}

#[test]
fn a_redirect_within_the_origin_is_followed_with_every_header() {
    let server = Upstream::in_order(vec![redirect_to("/v1/moved/responses"), stream()]);
    let out = send(&server.base_url());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(last_line(&out)["outcome"], json!("completed"));
    let received = server.received();
    assert_eq!(received.len(), 2);
    assert_eq!(
        (received[1].method.as_str(), received[1].path.as_str()),
        ("POST", "/v1/moved/responses")
    );
    for (name, value) in [
        ("authorization", format!("Bearer {KEY}")),
        ("x-goog-api-key", "GOOGKEY-redirect".to_string()),
        ("x-tenant", "t1".to_string()),
    ] {
        assert_eq!(received[1].header(name), Some(value.as_str()), "{name}");
    }
    assert_eq!(received[1].body, received[0].body);
}

/// A provider from a Codex `config.toml` — key variable, `http_headers`, `env_http_headers`,
/// `query_params` — sends everything to its own host, and nothing to the host it is redirected
/// to; the send ends `redirect_refused` after one attempt.
#[test]
fn a_codex_config_provider_sends_nothing_to_the_host_it_is_redirected_to() {
    use promptwire::core::codex_config::{ImportedProvider, providers_from_config};
    use promptwire::core::compile::compile;
    use promptwire::core::models::ModelCatalog;
    use promptwire::core::prompt::{Dialect, Prompt};
    use promptwire::core::rules::CompileRules;
    use promptwire::transport::{CancelToken, HttpSender, SendOptions, resolve_headers};

    let other = Upstream::in_order(vec![stream()]);
    let first = Upstream::in_order(vec![redirect_to(&format!(
        "{}/responses",
        other.base_url()
    ))]);
    let config = format!(
        r#"
[model_providers.corp]
name = "Corp gateway"
base_url = "{}"
env_key = "CORP_KEY"
http_headers = {{ "x-static-token" = "STATIC-secret" }}
env_http_headers = {{ "x-tenant-key" = "TENANT_KEY" }}
query_params = {{ "api-key" = "QUERY-secret" }}
wire_api = "responses"
"#,
        first.base_url()
    );
    let providers = providers_from_config(&config).expect("config");
    let [ImportedProvider::Provider { provider, .. }] = providers.as_slice() else {
        panic!("one provider: {providers:?}");
    };
    let prompt =
        Prompt::from_json_str(&std::fs::read_to_string(prompt()).expect("read")).expect("prompt");
    let model = ModelCatalog::bundled().lookup(&prompt.model);
    let compiled = compile(
        &prompt,
        &model,
        provider,
        Dialect::Auto,
        &CompileRules::codex_0_169(),
    )
    .expect("compile");
    let headers = resolve_headers(&compiled, |env| match env {
        "CORP_KEY" => Some(KEY.to_string()),
        "TENANT_KEY" => Some("TENANT-secret".to_string()),
        _ => None,
    })
    .expect("headers");
    let sender = HttpSender::new(&compiled.url, SendOptions::default()).expect("sender");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let result = runtime.block_on(sender.send(&compiled, &headers, &CancelToken::new(), |_| {}));
    assert_eq!(result.attempts.len(), 1);
    assert_eq!(
        result.error.as_ref().map(|e| e.class()),
        Some(promptwire::core::stream::ErrorClass::RedirectRefused)
    );
    assert_eq!(
        other.received().len(),
        0,
        "nothing reached the other origin"
    );
    let sent = &first.received()[0];
    assert_eq!(
        (sent.method.as_str(), sent.path.as_str()),
        ("POST", "/v1/responses?api-key=QUERY-secret")
    );
    for (name, value) in [
        ("authorization", format!("Bearer {KEY}")),
        ("x-static-token", "STATIC-secret".to_string()),
        ("x-tenant-key", "TENANT-secret".to_string()),
        ("x-goog-api-key", "GOOGKEY-redirect".to_string()),
    ] {
        assert_eq!(sent.header(name), Some(value.as_str()), "{name}");
    }
}
