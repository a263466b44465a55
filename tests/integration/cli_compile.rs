//! The `compile` and `import-body` commands as a user runs them: exact output on success, and on
//! bad input exit status 1 with one line on stderr that names where the problem is — never a panic.

use crate::support::cli;
use crate::support::shared;

use cli::run;
use std::path::{Path, PathBuf};
use std::process::Output;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn scratch(name: &str, contents: &[u8]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli_compile");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let path = dir.join(name);
    std::fs::write(&path, contents).expect("write scratch file");
    path
}

fn example(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/prompts")
        .join(name)
        .display()
        .to_string()
}

/// Asserts a user error: exit 1, empty stdout, exactly one stderr line equal to `expected`.
fn assert_user_error(out: &Output, expected: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    assert_eq!(stderr.lines().collect::<Vec<_>>(), vec![expected]);
}

#[test]
fn compile_prints_the_exact_body_bytes() {
    let out = run(&["compile", &example("hello.json")], None);
    assert_eq!(out.status.code(), Some(0));
    let expected = r#"{"model":"gpt-5.5","stream":true,"input":[{"type":"message","id":"msg_d315eb5c-080c-557a-9edb-293a53b0a4a0","role":"developer","content":[{"type":"input_text","text":"You are a careful coding assistant. Answer briefly."}]},{"type":"message","role":"user","content":[{"type":"input_text","text":"What does `git rebase --onto` do?"}]}],"tools":[],"tool_choice":"auto","parallel_tool_calls":true,"reasoning":{"effort":"medium"},"store":false,"include":["reasoning.encrypted_content"],"prompt_cache_key":"0196a2c1-7b2e-7c11-9d40-5e1f0a3b8c77","text":{"verbosity":"low"}}"#;
    // Exactly the body bytes: no trailing newline.
    assert_eq!(String::from_utf8_lossy(&out.stdout), expected);
}

#[test]
fn compile_output_is_exactly_the_body_bytes_and_pretty_adds_a_newline() {
    let Some(dir) = shared::shared_fixtures("codex-cli-0.171") else {
        return;
    };
    // A compact capture: import it, compile it, and get the file's bytes back.
    let body = dir.join("standard-gpt-5.5-settings-three-requests/req_02.json");
    let captured = std::fs::read(&body).expect("read");
    let out = run(&["import-body", &body.display().to_string()], None);
    assert_eq!(out.status.code(), Some(0));
    let prompt = scratch("req02-prompt.json", &out.stdout)
        .display()
        .to_string();
    let out = run(&["compile", &prompt], None);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stdout == captured,
        "compile output differs from the captured bytes"
    );
    let pretty = run(&["compile", &prompt, "--pretty"], None);
    let value: Value = serde_json::from_slice(&captured).expect("JSON");
    let expected = format!(
        "{}\n",
        serde_json::to_string_pretty(&value).expect("pretty")
    );
    assert_eq!(String::from_utf8_lossy(&pretty.stdout), expected);
    // The frame and the headers are compact JSON too, with nothing after them.
    for flag in ["--ws", "--headers"] {
        let out = run(&["compile", &prompt, flag], None);
        assert_eq!(out.stdout.last(), Some(&b'}'), "{flag}");
    }
}

#[test]
fn compile_flags_override_what_the_prompt_records() {
    let out = run(
        &[
            "compile",
            &example("hello.json"),
            "--rules",
            "seed",
            "--dialect",
            "lite",
            "--provider",
            "azure",
        ],
        None,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let body: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        body,
        json!({
            "model": "gpt-5.5",
            "input": [
                {"type":"additional_tools","role":"developer","tools":[]},
                {"type":"message","role":"developer","content":[{"type":"input_text","text":"You are a careful coding assistant. Answer briefly."}]},
                {"type":"message","role":"user","content":[{"type":"input_text","text":"What does `git rebase --onto` do?"}]}
            ],
            "tool_choice": "auto",
            "parallel_tool_calls": false,
            "reasoning": {"effort":"medium","context":"all_turns"},
            "store": true,
            "stream": true,
            "include": ["reasoning.encrypted_content"],
            "prompt_cache_key": "0196a2c1-7b2e-7c11-9d40-5e1f0a3b8c77",
            "text": {"verbosity":"low"}
        })
    );
}

#[test]
fn compile_headers_are_redacted_json() {
    let out = run(&["compile", &example("lite-image.json"), "--headers"], None);
    assert_eq!(out.status.code(), Some(0));
    let headers: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        headers,
        json!({
            "version": "0.169.0",
            "x-codex-beta-features": "remote_compaction_v2",
            "x-codex-window-id": "0196a2c3-0000-7000-8000-0000000000ee:0",
            "x-codex-turn-metadata": "{\"session_id\":\"0196a2c3-0000-7000-8000-0000000000ee\",\"thread_id\":\"0196a2c3-0000-7000-8000-0000000000ee\",\"window_id\":\"0196a2c3-0000-7000-8000-0000000000ee:0\",\"window_number\":0,\"request_kind\":\"turn\",\"model\":\"gpt-6-sol\",\"reasoning_effort\":\"medium\"}",
            "x-openai-internal-codex-responses-lite": "true",
            "x-client-request-id": "0196a2c3-0000-7000-8000-0000000000ee",
            "session-id": "0196a2c3-0000-7000-8000-0000000000ee",
            "thread-id": "0196a2c3-0000-7000-8000-0000000000ee",
            "accept": "text/event-stream",
            "content-type": "application/json",
            "authorization": "Bearer <redacted>",
            "originator": "codex_exec",
            "user-agent": "codex_exec/0.169.0 (Debian 12.0.0; x86_64) xterm (codex_exec; 0.169.0)"
        })
    );
    // Names in the order the client adds them.
    let names: Vec<&str> = headers
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        names,
        [
            "version",
            "x-codex-beta-features",
            "x-codex-window-id",
            "x-codex-turn-metadata",
            "x-openai-internal-codex-responses-lite",
            "x-client-request-id",
            "session-id",
            "thread-id",
            "accept",
            "content-type",
            "authorization",
            "originator",
            "user-agent"
        ]
    );
}

#[test]
fn compile_ws_frame_and_stdin() {
    let text = std::fs::read(example("hello.json")).expect("read");
    let out = run(&["compile", "-", "--ws"], Some(&text));
    assert_eq!(out.status.code(), Some(0));
    let frame: Value = serde_json::from_slice(&out.stdout).expect("json");
    let keys: Vec<&str> = frame
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "type",
            "model",
            "stream",
            "input",
            "tools",
            "tool_choice",
            "parallel_tool_calls",
            "reasoning",
            "store",
            "include",
            "prompt_cache_key",
            "text"
        ]
    );
    assert_eq!(frame["type"], "response.create");
}

#[test]
fn import_body_then_compile_round_trips_through_files() {
    let body_path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/bodies/seed-azure-standard.json");
    let out = run(&["import-body", &body_path.display().to_string()], None);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    let prompt_path = scratch("imported-azure.json", &out.stdout);
    let out = run(&["compile", &prompt_path.display().to_string()], None);
    assert_eq!(out.status.code(), Some(0));
    let compiled: Value = serde_json::from_slice(&out.stdout).expect("json");
    let original: Value =
        serde_json::from_str(&std::fs::read_to_string(&body_path).expect("read")).expect("json");
    assert_eq!(compiled, original);
}

#[test]
fn malformed_json_names_line_and_column() {
    let path = scratch("malformed.json", b"{\"model\": \"gpt-5.5\",\n  \"input\": [\n    {\"type\": \"message\" \"role\": \"user\"}\n  ]\n}\n");
    let p = path.display().to_string();
    assert_user_error(
        &run(&["compile", &p], None),
        &format!("promptwire: {p}: invalid JSON at line 3, column 24: expected `,` or `}}`"),
    );
    assert_user_error(
        &run(&["import-body", &p], None),
        &format!("promptwire: {p}: invalid JSON at line 3, column 24: expected `,` or `}}`"),
    );
}

#[test]
fn tool_without_a_name_is_named_by_path() {
    let prompt = br#"{"model":"gpt-5.5","tools":[{"type":"function","name":"ok","parameters":{}},{"type":"function","description":"nameless","parameters":{}}]}"#;
    assert_user_error(
        &run(&["compile", "-"], Some(prompt)),
        "promptwire: stdin: tools[1].name: function tool has no `name`",
    );
    let body = br#"{"model":"gpt-6-sol","input":[{"type":"additional_tools","role":"developer","tools":[{"type":"custom","name":"","format":{"type":"text"}}]}]}"#;
    assert_user_error(
        &run(&["import-body", "-"], Some(body)),
        "promptwire: stdin: input[0].tools[0].name: custom tool has an empty `name`",
    );
}

#[test]
fn output_schema_that_is_not_an_object_is_rejected() {
    let prompt = br#"{"model":"gpt-5.5","output_schema":["answer"]}"#;
    assert_user_error(
        &run(&["compile", "-"], Some(prompt)),
        "promptwire: stdin: output_schema: the output schema must be a JSON object, got an array",
    );
}

#[test]
fn bad_items_and_fields_name_their_path() {
    let cases: [(&[u8], &str); 4] = [
        (br#"{"model":"gpt-5.5","input":[{"type":"function_call","name":"f","arguments":"{}"}]}"#,
         "promptwire: stdin: input[0].call_id: missing field `call_id`"),
        (br#"{"model":"gpt-5.5","input":[{"type":"message","role":"user","content":[{"type":"input_text"}]}]}"#,
         "promptwire: stdin: input[0].content[0].text: missing field `text`"),
        (br#"{"model":"gpt-5.5","client_metadata":{"n":1}}"#,
         "promptwire: stdin: client_metadata.n: client_metadata values must be strings, got a number"),
        (br#"{"model":"gpt-5.5","headers":{"Authorization":"Bearer sk-123"}}"#,
         "promptwire: stdin: headers.Authorization: secret headers are not stored in Prompt files; set the provider's API-key environment variable instead"),
    ];
    for (input, expected) in cases {
        assert_user_error(&run(&["compile", "-"], Some(input)), expected);
    }
    assert_user_error(
        &run(&["import-body", "-"], Some(br#"{"input":[]}"#)),
        "promptwire: stdin: model: the body has no `model`",
    );
}

#[test]
fn fifty_megabyte_body_is_refused_clearly() {
    let mut body = Vec::with_capacity(50 * 1024 * 1024 + 64);
    body.extend_from_slice(br#"{"model":"gpt-5.5","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":""#);
    body.resize(50 * 1024 * 1024, b'a');
    body.extend_from_slice(br#""}]}]}"#);
    let path = scratch("fifty.json", &body);
    let p = path.display().to_string();
    assert_user_error(
        &run(&["import-body", &p], None),
        &format!(
            "promptwire: {p} is 50.0 MiB, larger than the limit of 32.0 MiB (raise it with --max-bytes)"
        ),
    );
    assert_user_error(
        &run(&["import-body", "-"], Some(&body)),
        "promptwire: standard input is larger than the limit of 32.0 MiB (raise it with --max-bytes)",
    );
    std::fs::remove_file(path).expect("clean up");
    // The limit is the user's to set.
    let hello = example("hello.json");
    let size = std::fs::metadata(&hello).expect("stat").len();
    assert_user_error(
        &run(&["compile", &hello, "--max-bytes", "100"], None),
        &format!(
            "promptwire: {hello} is {size} bytes, larger than the limit of 100 bytes (raise it with --max-bytes)"
        ),
    );
    let limit = size.to_string();
    assert_eq!(
        run(&["compile", &hello, "--max-bytes", &limit], None)
            .status
            .code(),
        Some(0)
    );
}

#[test]
fn usage_errors_exit_1() {
    let out = run(&["compile", "x.json", "--dialect", "bogus"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid value 'bogus'"));
    let out = run(&["compile", "/nonexistent/prompt.json"], None);
    assert_user_error(
        &out,
        "promptwire: cannot read /nonexistent/prompt.json: No such file or directory (os error 2)",
    );
}

#[test]
fn explain_gives_a_note_for_every_field_lite_changes_in_hello_json() {
    let out = run(
        &[
            "compile",
            &example("hello.json"),
            "--dialect",
            "lite",
            "--explain",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .collect::<Vec<_>>(),
        [
            // Standard sends `tools: []` for a prompt without tools; Lite leaves it out.
            "note: tools: left out: a Lite request has no top-level `tools` (a standard request sends `tools: []`)",
            // No tools: nothing is said to be grouped in a namespace.
            "note: input[0]: added: an `additional_tools` developer item with an empty list (no tools to offer)",
            // codex-0.169 standard already sends the instructions as input[0]'s developer message.
            "note: input[1]: moved: the base instructions' developer message comes after the tools item (a standard request has it at input[0])",
            "note: input[2]: moved: the prompt's items start here, after the 2 added item(s)",
            "note: reasoning.context: added: all_turns — Lite always asks the model to keep its reasoning across turns",
            "note: parallel_tool_calls: false: Lite requests never ask for parallel tool calls",
            "note: headers.x-openai-internal-codex-responses-lite: added: tells the server this is a Responses Lite request (a standard request has no such header)",
        ]
    );
}

/// `prompt` compiled with `promptwire compile … [--catalog catalog]`, as a JSON value.
fn compiled_body(prompt: &Path, catalog: Option<&Path>) -> Value {
    let prompt = prompt.display().to_string();
    let catalog = catalog.map(|c| c.display().to_string());
    let mut args = vec!["compile", prompt.as_str()];
    if let Some(catalog) = &catalog {
        args.extend(["--catalog", catalog.as_str()]);
    }
    let out = run(&args, None);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON body")
}

#[test]
fn catalog_printed_by_codex_debug_models_is_accepted_and_used() {
    let Some(dir) = shared::shared_fixtures("codex-cli-0.171") else {
        return;
    };
    let fixture = dir.join("codex-debug-models.json");
    let prompt = scratch(
        "sol62.json",
        br#"{"model":"gpt-6.2-sol","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}],"compile":{"dialect":"auto","rules":"codex-0.171","provider":"compatible"}}"#,
    );
    let user = json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]});
    // As Codex prints it, the catalog gives gpt-6.2-sol what the bundled one does: Lite, low.
    let lite = json!({
        "model": "gpt-6.2-sol",
        "stream": true,
        "input": [
            {"type": "additional_tools",
             "id": promptwire::core::compile::lite::additional_tools_id("", b"[]"),
             "role": "developer", "tools": []},
            user
        ],
        "tool_choice": "auto",
        "parallel_tool_calls": false,
        "reasoning": {"effort": "low", "context": "all_turns"},
        "store": false,
        "include": ["reasoning.encrypted_content"],
        "text": {"verbosity": "low"}
    });
    assert_eq!(compiled_body(&prompt, Some(&fixture)), lite);
    assert_eq!(compiled_body(&prompt, None), lite);

    // The same printed catalog with gpt-6.2-sol's capabilities changed: the body follows it, so
    // --catalog is read and wins over the bundled entry.
    let mut catalog: Value =
        serde_json::from_slice(&std::fs::read(&fixture).expect("read the fixture")).expect("JSON");
    let models = catalog["models"].as_array_mut().expect("models");
    let sol = models
        .iter_mut()
        .find(|m| m["slug"] == "gpt-6.2-sol")
        .expect("gpt-6.2-sol in the fixture");
    sol["use_responses_lite"] = json!(false);
    sol["default_reasoning_level"] = json!("high");
    sol["default_verbosity"] = json!("medium");
    let changed = scratch(
        "codex-debug-models-changed.json",
        &serde_json::to_vec(&catalog).expect("serialize"),
    );
    assert_eq!(
        compiled_body(&prompt, Some(&changed)),
        json!({
            "model": "gpt-6.2-sol",
            "stream": true,
            "input": [user],
            "tools": [],
            "tool_choice": "auto",
            "parallel_tool_calls": true,
            "reasoning": {"effort": "high"},
            "store": false,
            "include": ["reasoning.encrypted_content"],
            "text": {"verbosity": "medium"}
        })
    );
}

#[test]
fn unreadable_catalog_is_refused_with_its_json_path() {
    let catalog = scratch(
        "bad-catalog.json",
        br#"{"models":[{"slug":"gpt-6.2-sol","service_tiers":[{"name":"Fast"}]}]}"#,
    );
    let path = catalog.display().to_string();
    let out = run(
        &["compile", &example("hello.json"), "--catalog", &path],
        None,
    );
    assert_user_error(
        &out,
        &format!(
            "promptwire: {path}: model catalog: models[0].service_tiers[0]: missing field `id`"
        ),
    );
}

#[test]
fn import_body_with_headers_then_compile_headers_reproduces_them() {
    let Some(dir) = shared::shared_fixtures("codex-cli-0.171") else {
        return;
    };
    let case = dir.join("lite-gpt-6.2-sol");
    let body = case.join("req_00.json").display().to_string();
    let headers = case.join("req_00.headers.json").display().to_string();
    let out = run(&["import-body", &body, "--headers", &headers], None);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let prompt = scratch("sol62-imported.json", &out.stdout);
    let out = run(
        &["compile", &prompt.display().to_string(), "--headers"],
        None,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The captured headers, transport headers (host, content-length) aside, byte for byte:
    // names, order and values, Authorization still redacted.
    let captured: Value =
        serde_json::from_str(&std::fs::read_to_string(&headers).expect("read")).expect("JSON");
    let mut expected = captured["headers"].as_object().expect("headers").clone();
    expected.shift_remove("host");
    expected.shift_remove("content-length");
    assert_eq!(expected["authorization"], json!("Bearer <redacted>"));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        serde_json::to_string(&expected).expect("json")
    );
}

#[test]
fn unreadable_headers_file_is_named() {
    let body = scratch("hb.json", br#"{"model":"gpt-5.5","input":[]}"#);
    let headers = scratch(
        "hb.headers.json",
        br#"{"path":"/v1/responses","headers":{"accept":1}}"#,
    );
    let h = headers.display().to_string();
    let out = run(
        &["import-body", &body.display().to_string(), "--headers", &h],
        None,
    );
    assert_user_error(
        &out,
        &format!("promptwire: {h}: headers.accept: header values must be strings, got a number"),
    );
}
