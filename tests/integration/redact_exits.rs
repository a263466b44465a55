//! Every kind of secret the redaction policy knows, planted into real sends and a real recording
//! through loopback servers, and every output byte scanned for it: standard output and error of
//! `compile`, `import-body` (a captured body and its headers), `send` (a streamed answer with `set-cookie`, and a 401 that echoes
//! `Bearer sk-…`), `record`, `sessions list/show/export` (HAR, JSON Lines, `--bodies`),
//! `replay` and `diff`, and the SQLite file with its `-wal` and `-shm`. The wire still carries
//! every secret (checked at the servers); organization, project and account ids stay visible and
//! are marked as identifying.

use crate::support;
use crate::support::cli;

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::scratch;
use support::server::Server;
use support::upstream::{Reply, Upstream, paced, turn_events};

/// The API key (environment variable) — the 401 answer echoes it as `Bearer …`.
const KEY: &str = "sk-plantedKEY0123456789";

/// Every planted secret, by kind.
const SECRETS: [(&str, &str); 18] = [
    ("api key", KEY),
    ("URL password", "URLPASSWORD42"),
    ("x-auth-token", "XAUTHTOKEN42"),
    ("cookie", "COOKIEVALUE42"),
    ("x-goog-api-key", "GOOGKEY42"),
    ("custom Bearer header", "CUSTOMBEARER42"),
    ("body password", "BODYPASSWORD42"),
    ("body token", "BODYTOKEN42"),
    ("body secret", "BODYSECRET42"),
    ("set-cookie", "SETCOOKIE42"),
    ("query key", "QUERYKEY42"),
    ("query token", "QUERYTOKEN42"),
    ("query sig", "QUERYSIG42"),
    ("proxied Authorization", "sk-proxiedKEY0123456789"),
    ("upstream URL password", "UPSTREAMPASS42"),
    ("the test upstream's own set-cookie", "cookie-secret-42"),
    ("authorization-extra header", "ABCDSECRET42"),
    ("scalar in a nested credentials object", "NESTEDPW42"),
];

/// Identifying values: shown (and marked), never redacted.
const IDENTIFYING: [(&str, &str); 3] = [
    ("OpenAI-Organization", "org-IDENT42"),
    ("OpenAI-Project", "proj_IDENT42"),
    ("ChatGPT-Account-ID", "acct-IDENT42"),
];

/// Everything printed or written, with where it came from.
#[derive(Default)]
struct Outputs(Vec<(String, Vec<u8>)>);

impl Outputs {
    fn add(&mut self, what: &str, bytes: &[u8]) {
        self.0.push((what.to_string(), bytes.to_vec()));
    }

    fn add_run(&mut self, what: &str, out: &Output) {
        self.add(&format!("{what} stdout"), &out.stdout);
        self.add(&format!("{what} stderr"), &out.stderr);
    }

    fn add_dir(&mut self, what: &str, dir: &Path) {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .expect("read dir")
            .map(|e| e.expect("entry").path())
            .collect();
        files.sort();
        assert!(!files.is_empty(), "{what}: no files in {}", dir.display());
        for file in files {
            let bytes = std::fs::read(&file).expect("read file");
            self.add(&format!("{what} {}", file.display()), &bytes);
        }
    }

    /// Asserts that no planted secret appears anywhere.
    fn assert_clean(&self) {
        let mut found = Vec::new();
        for (what, bytes) in &self.0 {
            for (kind, secret) in SECRETS {
                if bytes.windows(secret.len()).any(|w| w == secret.as_bytes()) {
                    found.push(format!("{kind} ({secret}) in {what}"));
                }
            }
        }
        assert_eq!(found, Vec::<String>::new());
    }
}

fn ok(what: &str, out: &Output) {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The Prompt file: identifying and credential headers, secret body fields.
fn planted_prompt(dir: &Path) -> PathBuf {
    let hello = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/prompts/hello.json");
    let mut prompt: Value =
        serde_json::from_str(&std::fs::read_to_string(hello).expect("read")).expect("json");
    let mut headers = serde_json::Map::new();
    for (name, value) in IDENTIFYING {
        headers.insert(name.to_string(), json!(value));
    }
    headers.insert("x-auth-token".into(), json!("XAUTHTOKEN42"));
    headers.insert("cookie".into(), json!("sid=COOKIEVALUE42"));
    headers.insert("x-goog-api-key".into(), json!("GOOGKEY42"));
    headers.insert("x-custom-auth".into(), json!("Bearer CUSTOMBEARER42"));
    headers.insert("authorization-extra".into(), json!("ABCDSECRET42"));
    prompt["headers"] = Value::Object(headers);
    prompt["body_overrides"] = json!({
        "password": "BODYPASSWORD42",
        "token": "BODYTOKEN42",
        "client_metadata": {"deep": {"secret": "BODYSECRET42"}},
        "credentials": {"pw": "NESTEDPW42"},
    });
    let path = dir.join("planted.json");
    std::fs::write(&path, prompt.to_string()).expect("write prompt");
    path
}

/// An upstream answering a stream with `set-cookie` and identifying headers first, then a 401
/// that echoes the key.
fn upstream() -> Upstream {
    let events = turn_events("resp_planted", "all good");
    let count = Arc::new(AtomicUsize::new(0));
    Upstream::start(move |_| {
        if count.fetch_add(1, Ordering::SeqCst) == 0 {
            let mut reply = Reply::sse(paced(&events, Duration::from_millis(1)));
            reply.headers.push((
                "set-cookie".into(),
                "session=SETCOOKIE42; Path=/; HttpOnly".into(),
            ));
            reply
                .headers
                .push(("openai-organization".into(), "org-IDENT42".into()));
            reply
        } else {
            Reply::json(
                401,
                &json!({"error": {
                    "message": format!("Incorrect API key provided: Bearer {KEY}. Check it."),
                    "type": "invalid_request_error",
                    "code": "invalid_api_key",
                }})
                .to_string(),
            )
        }
    })
}

fn send(prompt: &Path, base: &str, db: &Path, json: bool) -> Output {
    let mut args = vec![
        "send".to_string(),
        prompt.display().to_string(),
        "--provider".into(),
        "openai".into(),
        "--base-url".into(),
        base.into(),
        "--db".into(),
        db.display().to_string(),
        "--max-retries".into(),
        "0".into(),
    ];
    if json {
        args.push("--json".into());
    }
    Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .args(&args)
        .env("OPENAI_API_KEY", KEY)
        .stdin(Stdio::null())
        .output()
        .expect("run send")
}

/// One request through `record`, with a key in the query, credential headers and body fields.
fn record(db: &Path, upstream: &Upstream, outputs: &mut Outputs) {
    // An upstream with credentials is refused — with an error that does not print them.
    let refused = Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .args(["record", "--listen", "127.0.0.1:0", "--upstream"])
        .arg(format!("http://bob:UPSTREAMPASS42@{}/v1", upstream.addr))
        .args(["--db", db.to_str().expect("path"), "--json"])
        .stdin(Stdio::null())
        .output()
        .expect("run record");
    assert_ne!(
        refused.status.code(),
        Some(0),
        "an upstream with credentials is refused"
    );
    outputs.add_run("record (refused upstream)", &refused);
    let target = format!("http://{}/v1", upstream.addr);
    let mut child = Server(
        Command::new(env!("CARGO_BIN_EXE_promptwire"))
            .args(["record", "--listen", "127.0.0.1:0", "--upstream", &target])
            .args(["--db", db.to_str().expect("path"), "--json"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn record"),
    );
    let mut lines = BufReader::new(child.0.stdout.take().expect("stdout")).lines();
    let first = lines.next().expect("a line").expect("read");
    let addr = serde_json::from_str::<Value>(&first).expect("json")["listening"]
        .as_str()
        .expect("address")
        .to_string();
    let mut printed = first.into_bytes();
    let url = format!(
        "http://{addr}/v1/responses?api-version=2025&key=QUERYKEY42&token=QUERYTOKEN42&sig=QUERYSIG42"
    );
    let body = json!({"model": "gpt-5.5", "input": "hi", "stream": true,
        "password": "BODYPASSWORD42", "metadata": {"token": "BODYTOKEN42", "secret": "BODYSECRET42"}});
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let status = runtime.block_on(async {
        let response = reqwest::Client::new()
            .post(&url)
            .header("content-type", "application/json")
            .header("authorization", "Bearer sk-proxiedKEY0123456789")
            .header("x-auth-token", "XAUTHTOKEN42")
            .header("cookie", "sid=COOKIEVALUE42")
            .header("x-goog-api-key", "GOOGKEY42")
            .header("x-custom-auth", "Bearer CUSTOMBEARER42")
            .header("openai-project", "proj_IDENT42")
            .body(body.to_string())
            .send()
            .await
            .expect("response");
        let status = response.status().as_u16();
        let _ = response.bytes().await;
        status
    });
    assert_eq!(status, 401, "the upstream answers with the 401 echo");
    // The request line and its outcome, then stop.
    for _ in 0..2 {
        printed.extend(lines.next().expect("line").expect("read").into_bytes());
    }
    child.terminate();
    for line in lines {
        printed.extend(line.expect("read").into_bytes());
    }
    let mut stderr = Vec::new();
    std::io::Read::read_to_end(child.0.stderr.as_mut().expect("stderr"), &mut stderr)
        .expect("stderr");
    assert_eq!(child.0.wait().expect("wait").code(), Some(0));
    outputs.add("record stdout", &printed);
    outputs.add("record stderr", &stderr);
}

#[test]
fn no_planted_secret_survives_any_exit() {
    let dir = scratch("exits");
    let db = dir.join("planted.sqlite");
    let prompt = planted_prompt(&dir);
    let upstream = upstream();
    let base = format!("http://alice:URLPASSWORD42@{}/v1", upstream.addr);
    let mut outputs = Outputs::default();
    let prompt_arg = prompt.display().to_string();

    for flags in [
        vec!["--headers"],
        vec!["--headers", "--pretty"],
        vec![],
        vec!["--pretty"],
        vec!["--ws"],
    ] {
        let mut args = vec!["compile", prompt_arg.as_str(), "--base-url", &base];
        args.extend(flags.iter().copied());
        let out = cli::run(&args, None);
        ok("compile", &out);
        outputs.add_run(&format!("compile {flags:?}"), &out);
    }
    let headers = cli::run(
        &["compile", &prompt_arg, "--base-url", &base, "--headers"],
        None,
    );
    let shown: Value = serde_json::from_slice(&headers.stdout).expect("headers json");
    for (name, value) in IDENTIFYING {
        assert_eq!(shown[name.to_ascii_lowercase()], json!(value), "{name}");
    }
    assert_eq!(shown["x-custom-auth"], json!("Bearer <redacted>"));
    assert_eq!(shown["cookie"], json!("sid=<redacted>"));
    assert_eq!(shown["x-goog-api-key"], json!("<redacted>"));
    assert_eq!(shown["x-auth-token"], json!("<redacted>"));
    assert_eq!(shown["authorization-extra"], json!("<redacted>"));
    assert_eq!(shown["authorization"], json!("Bearer <redacted>"));
    assert_eq!(
        String::from_utf8_lossy(&headers.stderr).lines().count(),
        3,
        "one identifying note per identifying header"
    );

    let out = send(&prompt, &base, &db, true);
    ok("send --json", &out);
    outputs.add_run("send --json", &out);
    let out = send(&prompt, &base, &db, false);
    ok("send (401)", &out);
    let echo_shown = String::from_utf8_lossy(&out.stdout).into_owned();
    outputs.add_run("send (401)", &out);

    // The wire carried the real values.
    let received = upstream.received();
    assert_eq!(received.len(), 2);
    for (name, value) in [
        ("authorization", format!("Bearer {KEY}")),
        ("x-goog-api-key", "GOOGKEY42".to_string()),
        ("cookie", "sid=COOKIEVALUE42".to_string()),
        ("x-custom-auth", "Bearer CUSTOMBEARER42".to_string()),
        ("x-auth-token", "XAUTHTOKEN42".to_string()),
        ("authorization-extra", "ABCDSECRET42".to_string()),
        ("openai-organization", "org-IDENT42".to_string()),
    ] {
        assert_eq!(received[0].header(name), Some(value.as_str()), "{name}");
    }
    let wire_body: Value = serde_json::from_slice(&received[0].body).expect("wire body");
    assert_eq!(wire_body["credentials"], json!({"pw": "NESTEDPW42"}));

    // A captured body and its headers, with the same secrets, imported back into a Prompt.
    let captured = dir.join("captured.json");
    std::fs::write(
        &captured,
        json!({
            "model": "gpt-5.5",
            "input": [{"type": "message", "role": "user",
                "content": [{"type": "input_text", "text": format!("my key is {KEY}")}]}],
            "password": "BODYPASSWORD42",
            "credentials": {"pw": "NESTEDPW42"},
        })
        .to_string(),
    )
    .expect("write body");
    let captured_headers = dir.join("captured-headers.txt");
    std::fs::write(
        &captured_headers,
        format!(
            "authorization: Bearer {KEY}\nauthorization-extra: ABCDSECRET42\nx-auth-token: XAUTHTOKEN42\ncookie: sid=COOKIEVALUE42\n"
        ),
    )
    .expect("write headers");
    let out = cli::run(
        &[
            "import-body",
            &captured.display().to_string(),
            "--headers",
            &captured_headers.display().to_string(),
        ],
        None,
    );
    ok("import-body", &out);
    outputs.add_run("import-body", &out);
    assert!(
        String::from_utf8_lossy(&out.stderr).lines().any(|l| l
            .starts_with("promptwire: warning: credentials printed as <redacted> (")
            && l.contains("body_overrides.credentials.pw")
            && l.ends_with("this Prompt will not reproduce those values of the captured body; fill them in before compiling it")),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let proxied = Upstream::start({
        let events = turn_events("resp_proxied", "ok");
        let count = Arc::new(AtomicUsize::new(0));
        let echo = upstream_echo();
        move |_| match count.fetch_add(1, Ordering::SeqCst) {
            0 => echo.clone(),
            _ => Reply::sse(paced(&events, Duration::from_millis(1))),
        }
    });
    record(&db, &proxied, &mut outputs);
    let wire = &proxied.received()[0];
    assert_eq!(wire.header("x-goog-api-key"), Some("GOOGKEY42"));
    assert!(wire.path.contains("key=QUERYKEY42"), "{}", wire.path);

    let db_arg = db.display().to_string();
    // A HAR file someone else exported without redaction, imported.
    let har = planted_har(&dir);
    let out = cli::run(
        &[
            "sessions",
            "import",
            har.to_str().expect("path"),
            "--db",
            &db_arg,
        ],
        None,
    );
    ok("sessions import", &out);
    outputs.add_run("sessions import", &out);
    // `--continue` cannot reuse a URL whose credentials were never stored: it says so.
    let out = cli::run(
        &[
            "send",
            "--provider",
            "openai",
            "--session",
            "1",
            "--continue",
            "--db",
            &db_arg,
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let port = upstream.addr.port();
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "promptwire: session 1's URL had credentials, which are never stored; give --base-url: http://alice:<redacted>@127.0.0.1:{port}/v1/responses\n"
        )
    );
    outputs.add_run("send --continue", &out);
    let list = cli::run(&["sessions", "list", "--db", &db_arg, "--json"], None);
    ok("sessions list", &list);
    outputs.add_run("sessions list", &list);
    let sessions: Vec<i64> = serde_json::from_slice::<Value>(&list.stdout)
        .expect("json")
        .as_array()
        .expect("array")
        .iter()
        .map(|s| s["id"].as_i64().expect("id"))
        .collect();
    assert_eq!(sessions.len(), 4, "two sends, one recording, one import");
    for id in sessions {
        let id = id.to_string();
        for args in [
            vec!["sessions", "show", &id, "--db", &db_arg],
            vec!["sessions", "show", &id, "--db", &db_arg, "--json"],
            vec![
                "replay",
                "--session",
                &id,
                "--db",
                &db_arg,
                "--timing",
                "instant",
            ],
            vec![
                "replay",
                "--session",
                &id,
                "--db",
                &db_arg,
                "--timing",
                "instant",
                "--json",
            ],
            vec!["diff", "--session", &id, "--db", &db_arg],
        ] {
            let out = cli::run(&args, None);
            outputs.add_run(&args.join(" "), &out);
        }
        let har = dir.join(format!("s{id}.har"));
        let jsonl = dir.join(format!("s{id}.jsonl"));
        let bodies = dir.join(format!("s{id}-bodies"));
        for (flag, path) in [("--har", &har), ("--jsonl", &jsonl), ("--bodies", &bodies)] {
            // Without `--no-redact` and with it: the database holds no credential to export.
            for extra in [None, Some("--no-redact")] {
                let mut args = vec!["sessions", "export", &id, "--db", &db_arg, flag];
                let path_arg = path.display().to_string();
                args.push(&path_arg);
                args.extend(extra);
                let out = cli::run(&args, None);
                ok(&args.join(" "), &out);
                outputs.add_run(&args.join(" "), &out);
                if path.is_dir() {
                    outputs.add_dir(&args.join(" "), path);
                } else {
                    outputs.add(&args.join(" "), &std::fs::read(path).expect("export"));
                }
            }
        }
    }
    for suffix in ["", "-wal", "-shm"] {
        let file = PathBuf::from(format!("{}{suffix}", db.display()));
        if let Ok(bytes) = std::fs::read(&file) {
            outputs.add(&file.display().to_string(), &bytes);
        }
    }
    outputs.assert_clean();
    assert!(
        echo_shown.contains("Incorrect API key provided: Bearer <redacted>. Check it."),
        "the echo is shown, redacted: {echo_shown}"
    );
    assert_identifying_marked(&dir);
}

/// A HAR 1.2 file with every kind of secret in clear: URL password and query key, credential
/// headers both ways, body fields, a 401 body echoing the key, and the outcome's error message.
fn planted_har(dir: &Path) -> PathBuf {
    let echo = format!("Incorrect API key provided: Bearer {KEY}");
    let har = json!({"log": {"version": "1.2", "creator": {"name": "other", "version": "1"},
    "entries": [{
        "startedDateTime": "2026-11-30T10:00:00.000Z",
        "time": 5,
        "request": {
            "method": "POST",
            "url": "http://alice:URLPASSWORD42@127.0.0.1:9/v1/responses?key=QUERYKEY42&token=QUERYTOKEN42&sig=QUERYSIG42",
            "httpVersion": "HTTP/1.1",
            "headers": [
                {"name": "authorization", "value": format!("Bearer {KEY}")},
                {"name": "cookie", "value": "sid=COOKIEVALUE42"},
                {"name": "x-goog-api-key", "value": "GOOGKEY42"},
                {"name": "x-auth-token", "value": "XAUTHTOKEN42"},
                {"name": "x-custom-auth", "value": "Bearer CUSTOMBEARER42"},
                {"name": "openai-organization", "value": "org-IDENT42"},
            ],
            "postData": {"mimeType": "application/json", "text": json!({
                "model": "gpt-5.5", "input": "hi", "password": "BODYPASSWORD42",
                "token": "BODYTOKEN42", "nested": {"secret": "BODYSECRET42"}}).to_string()},
        },
        "response": {
            "status": 401,
            "headers": [{"name": "set-cookie", "value": "session=SETCOOKIE42; Path=/"}],
            "content": {"mimeType": "application/json",
                "text": json!({"error": {"message": echo}}).to_string()},
        },
        "timings": {"send": 0, "wait": 4, "receive": 1},
        "_promptwire": {"outcome": {"state": "failed", "error_class": "unexpected_status",
            "error_message": echo, "text": ""}},
    }]}});
    let path = dir.join("planted.har");
    std::fs::write(&path, har.to_string()).expect("write har");
    path
}

/// A 401 that echoes the proxied key (Bearer) and the URL with its query.
fn upstream_echo() -> Reply {
    Reply::json(
        401,
        &json!({"error": {
            "message": "Incorrect API key provided: Bearer sk-proxiedKEY0123456789 for /v1/responses?key=QUERYKEY42&token=QUERYTOKEN42&sig=QUERYSIG42",
            "code": "invalid_api_key",
        }})
        .to_string(),
    )
}

/// The identifying headers of the first send are in its HAR, value kept, marked by a comment.
fn assert_identifying_marked(dir: &Path) {
    // Session 1 is the first send.
    let har: Value =
        serde_json::from_slice(&std::fs::read(dir.join("s1.har")).expect("har")).expect("json");
    let headers = &har["log"]["entries"][0]["request"]["headers"];
    let marked: Vec<Value> = headers
        .as_array()
        .expect("headers")
        .iter()
        .filter(|h| h.get("comment").is_some())
        .cloned()
        .collect();
    let note = promptwire::core::redact::IDENTIFYING_NOTE;
    assert_eq!(
        marked,
        vec![
            json!({"name": "openai-organization", "value": "org-IDENT42", "comment": note}),
            json!({"name": "openai-project", "value": "proj_IDENT42", "comment": note}),
            json!({"name": "chatgpt-account-id", "value": "acct-IDENT42", "comment": note}),
        ]
    );
    let response = &har["log"]["entries"][0]["response"]["headers"];
    assert!(
        response.as_array().expect("headers").contains(
            &json!({"name": "openai-organization", "value": "org-IDENT42", "comment": note})
        ),
        "{response}"
    );
}
