//! The turn loop from the command line, end to end through the built binary against a loopback
//! upstream this test starts (the shared test server of `stream_http`): a first `send` answered
//! with tool calls, `send --session ID --continue --tool-output …` answered with text, then
//! `--continue --user …`; the upstream receives exactly the bodies the Codex client would send,
//! they are recorded in one session, and `diff --session ID` reports every pair kept. Also
//! `send PROMPT --session ID` (a first request added to an existing session) and the refusals.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use crate::support::upstream::{End, Reply, Upstream, pieces, sse_file};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn scratch(name: &str) -> PathBuf {
    let dir = crate::support::module_scratch_root().join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn hello_prompt() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/prompts/hello.json")
        .display()
        .to_string()
}

fn promptwire(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .args(args)
        .env_remove("OPENAI_API_KEY")
        .output()
        .expect("run promptwire")
}

fn ok_stdout(out: &Output) -> String {
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).expect("utf-8")
}

fn json_lines(out: &Output) -> Vec<Value> {
    ok_stdout(out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect()
}

fn reply(name: &str) -> Reply {
    Reply::answer(
        pieces(&sse_file(name), 3, Duration::from_millis(5)),
        End::Complete,
    )
}

fn body(server: &Upstream, index: usize) -> Value {
    serde_json::from_slice(&server.received()[index].body).expect("request body is JSON")
}

fn sessions(db: &str) -> Vec<Value> {
    let out = promptwire(&["sessions", "list", "--db", db, "--json"]);
    serde_json::from_str(&ok_stdout(&out)).expect("sessions list")
}

#[test]
fn continue_builds_the_next_requests_of_the_session() {
    let dir = scratch("send_continue");
    let db = dir.join("loop.sqlite").display().to_string();
    let output_file = dir.join("cargo-test.txt");
    std::fs::write(&output_file, "test config::tests::default_path ... ok\n").expect("write");
    let server = Upstream::in_order(vec![
        reply("tool-calls-crlf.sse"),
        reply("text-answer.sse"),
        reply("text-answer.sse"),
    ]);
    let base = server.base_url();
    let common = ["--provider", "compatible", "--db", &db, "--json"];

    // Turn 1: the model answers with a custom tool call and a function call.
    let first =
        promptwire(&[&["send", &hello_prompt(), "--base-url", &base], &common[..]].concat());
    let lines = json_lines(&first);
    assert_eq!(
        lines.last().map(|l| l["outcome"].clone()),
        Some(json!("completed"))
    );
    let listed = sessions(&db);
    assert_eq!(listed.len(), 1);
    let session = listed[0]["id"].as_i64().expect("session id").to_string();

    // Turn 1, request 2: the tool outputs (one from a file, one left to the placeholder; both
    // get an `fco_` id, as Codex gives every output it adds).
    let output_arg = format!("call_Vb27Ps=@{}", output_file.display());
    let second = promptwire(
        &[
            &[
                "send",
                "--session",
                &session,
                "--continue",
                "--tool-output",
                &output_arg,
            ],
            &common[..],
        ]
        .concat(),
    );
    let lines = json_lines(&second);
    assert_eq!(
        lines[0],
        json!({"continue": {"previous_request": 0, "added_items": 5, "prefix_kept": true,
            "break": null, "causes": [], "reusable_tokens": lines[0]["continue"]["previous_tokens"],
            "previous_tokens": lines[0]["continue"]["previous_tokens"]}})
    );
    assert_eq!(
        lines.last().map(|l| l["outcome"].clone()),
        Some(json!("completed"))
    );

    // What the upstream received: request 1's body, its input grown by the echoed output items
    // (as Codex 0.169 echoes them: `status` after `type`, reasoning `content: null`) and the
    // outputs.
    let mut expected = body(&server, 0);
    let input = expected["input"].as_array_mut().expect("input");
    input.extend([
        json!({"type":"reasoning","id":"rs_51d0c7","summary":[
            {"type":"summary_text","text":"**Locating the config loader**"},
            {"type":"summary_text","text":"**Patching the default path**"}],
            "content":null,"encrypted_content":"gAAAAABpZ3Jvd2luZy1zdW1tYXJ5LWJsb2I="}),
        json!({"type":"custom_tool_call","id":"ctc_9e07b1","status":"completed","call_id":"call_Qx81Lm",
            "name":"apply_patch","input":"*** Begin Patch\n*** Update File: src/config.rs\n@@\n-    let path = \"config.toml\";\n+    let path = default_config_path();\n*** End Patch"}),
        json!({"type":"function_call","status":"completed","id":"fc_40aa12","name":"exec_command",
            "arguments":"{\"cmd\":\"cargo test config\"}","call_id":"call_Vb27Ps"}),
        json!({"type":"custom_tool_call_output","id":codex_id(&body(&server, 1), 5, "fco_"),
            "call_id":"call_Qx81Lm","output":"(no output: edit this tool output before sending)"}),
        json!({"type":"function_call_output","id":codex_id(&body(&server, 1), 6, "fco_"),"call_id":"call_Vb27Ps",
            "output":"test config::tests::default_path ... ok\n"}),
    ]);
    let second_body = body(&server, 1);
    assert_eq!(second_body, expected);
    // The exact bytes, key order of every item included (the literals above are in wire order).
    assert_eq!(
        String::from_utf8_lossy(&server.received()[1].body),
        serde_json::to_string(&expected).expect("serialize")
    );

    // Turn 2: a new user message after the text answer.
    let third = promptwire(
        &[
            &[
                "send",
                "--session",
                &session,
                "--continue",
                "--user",
                "and the docs?",
            ],
            &common[..],
        ]
        .concat(),
    );
    let lines = json_lines(&third);
    assert_eq!(lines[0]["continue"]["added_items"], json!(2));
    let mut expected = second_body.clone();
    let input = expected["input"].as_array_mut().expect("input");
    input.extend([
        json!({"type":"message","status":"completed","id":"msg_0c81f2aa9b3d","role":"assistant",
            "content":[{"type":"output_text","text":lines_text(&sse_file("text-answer.sse")),
                "annotations":[],"logprobs":[]}],"phase":"final_answer"}),
        json!({"type":"message","id":codex_id(&body(&server, 2), 8, "msg_"),"role":"user",
            "content":[{"type":"input_text","text":"and the docs?"}]}),
    ]);
    assert_eq!(
        String::from_utf8_lossy(&server.received()[2].body),
        serde_json::to_string(&expected).expect("serialize")
    );

    // One session of three requests; every pair keeps the prefix.
    let listed = sessions(&db);
    assert_eq!((listed.len(), listed[0]["requests"].clone()), (1, json!(3)));
    let diff = promptwire(&["diff", "--session", &session, "--db", &db, "--json"]);
    let report: Value = serde_json::from_str(&ok_stdout(&diff)).expect("diff JSON");
    let verdicts: Vec<(Value, Value, Value, Value)> = report["pairs"]
        .as_array()
        .expect("pairs")
        .iter()
        .map(|p| {
            (
                p["from"].clone(),
                p["to"].clone(),
                p["prefix_kept"].clone(),
                p["causes"].clone(),
            )
        })
        .collect();
    assert_eq!(
        verdicts,
        vec![
            (json!(0), json!(1), json!(true), json!([])),
            // The continued turn's new user message: the server stops rendering the first
            // turn's reasoning there (expected, not a break).
            (
                json!(1),
                json!(2),
                json!(false),
                json!(["reasoning_dropped"])
            ),
        ]
    );
}

/// The id of `body.input[index]`, checked to be `{prefix}{uuid v7}` as Codex makes them.
fn codex_id(body: &Value, index: usize, prefix: &str) -> String {
    let id = body["input"][index]["id"]
        .as_str()
        .expect("an id")
        .to_string();
    let uuid = id
        .strip_prefix(prefix)
        .and_then(|u| uuid::Uuid::parse_str(u).ok());
    assert_eq!(uuid.map(|u| u.get_version_num()), Some(7), "{id}");
    id
}

/// The text of the `output_text.done` event of a recorded stream.
fn lines_text(sse: &[u8]) -> String {
    let text = String::from_utf8_lossy(sse);
    text.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str::<Value>(d).ok())
        .find(|v| v["type"] == "response.output_text.done")
        .and_then(|v| v["text"].as_str().map(str::to_string))
        .expect("output_text.done")
}

#[test]
fn send_with_session_adds_a_first_request_to_it() {
    let dir = scratch("send_session");
    let db = dir.join("add.sqlite").display().to_string();
    let server = Upstream::in_order(vec![reply("text-answer.sse"), reply("text-answer.sse")]);
    let common = [
        "--provider",
        "compatible",
        "--base-url",
        &server.base_url(),
        "--db",
        &db,
    ];
    ok_stdout(&promptwire(
        &[&["send", &hello_prompt()], &common[..]].concat(),
    ));
    let session = sessions(&db)[0]["id"].as_i64().expect("id").to_string();
    let out = promptwire(
        &[
            &["send", &hello_prompt(), "--session", &session],
            &common[..],
        ]
        .concat(),
    );
    assert!(ok_stdout(&out).ends_with(&format!("recorded in session {session}\n")));
    let listed = sessions(&db);
    assert_eq!((listed.len(), listed[0]["requests"].clone()), (1, json!(2)));
    assert_eq!(body(&server, 0), body(&server, 1));
}

#[test]
fn continue_refusals_name_the_problem() {
    let dir = scratch("send_continue_refusals");
    let db = dir.join("r.sqlite").display().to_string();
    let server = Upstream::in_order(vec![reply("text-answer.sse")]);
    let common = ["--provider", "compatible", "--db", &db];
    ok_stdout(&promptwire(
        &[
            &["send", &hello_prompt(), "--base-url", &server.base_url()],
            &common[..],
        ]
        .concat(),
    ));
    let session = sessions(&db)[0]["id"].as_i64().expect("id").to_string();
    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec!["send", "--session", &session, "--continue"],
            "promptwire: session 1, request 0: the response made no tool calls: give a user message to continue".to_string(),
        ),
        (
            vec!["send", "--session", &session, "--continue", "--tool-output", "call_x=hi"],
            "promptwire: session 1, request 0: tool output for call `call_x`: the response made no such call (its calls: none)".to_string(),
        ),
        (
            vec!["send", "--session", &session, "--continue", "--tool-output", "nothing"],
            "promptwire: --tool-output `nothing`: expected CALL_ID=TEXT or CALL_ID=@FILE".to_string(),
        ),
        (
            vec!["send", "--session", "99", "--continue", "--user", "hi"],
            "promptwire: no session 99".to_string(),
        ),
    ];
    for (args, expected) in cases {
        let out = promptwire(&[&args[..], &common[..]].concat());
        assert_eq!(
            (
                out.status.code(),
                String::from_utf8_lossy(&out.stderr).trim_end().to_string()
            ),
            (Some(1), expected),
            "{args:?}"
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    }
    // `--continue` needs `--session` (a usage error, exit 1).
    let out = promptwire(&[
        "send",
        "--continue",
        "--user",
        "hi",
        "--provider",
        "compatible",
    ]);
    assert_eq!(out.status.code(), Some(1));
    // Only the first send reached the upstream.
    assert_eq!(server.received().len(), 1);
}
