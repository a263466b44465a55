//! `promptwire stream` end to end through the built binary: the JSON-lines contract, the readable
//! timeline, standard input, usage errors, and the shared Codex CLI 0.169 captures when present.

use crate::support::shared;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/sse")
        .join(name)
}

fn promptwire(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn promptwire");
    if let Some(bytes) = stdin {
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(bytes)
            .expect("write stdin");
    }
    child.wait_with_output().expect("wait")
}

fn json_lines(output: &Output) -> Vec<Value> {
    String::from_utf8(output.stdout.clone())
        .expect("utf8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect()
}

#[test]
fn json_lines_follow_the_contract() {
    let path = fixture("odd-framing-cr.sse");
    let output = promptwire(&["stream", path.to_str().expect("path"), "--json"], None);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(
        json_lines(&output),
        vec![
            json!({"seq": 0, "event": null, "type": "response.created", "mapped": "created", "unparsed": false}),
            json!({"seq": 1, "event": "response.output_text.delta", "type": "response.output_text.delta", "mapped": "output_text_delta", "unparsed": false}),
            json!({"seq": 2, "event": null, "type": null, "mapped": null, "unparsed": true}),
            json!({"seq": 3, "event": "response.output_text.delta", "type": null, "mapped": null, "unparsed": true}),
            json!({"seq": 4, "event": null, "type": "response.output_text.delta", "mapped": "output_text_delta", "unparsed": false}),
            json!({"seq": 5, "event": null, "type": "response.completed", "mapped": "completed", "unparsed": false}),
            json!({"outcome": "completed", "response_id": "resp_91f0aa3c5d2b", "usage": {
                "input_tokens": 12, "cached_input_tokens": 0, "cache_write_input_tokens": 0,
                "output_tokens": 2, "reasoning_output_tokens": 0, "total_tokens": 14},
                "text": "multi-line data"}),
        ]
    );
    // Key order is part of the contract.
    let stdout = String::from_utf8(output.stdout).expect("utf8");
    assert!(stdout.starts_with(
        "{\"seq\":0,\"event\":null,\"type\":\"response.created\",\"mapped\":\"created\",\"unparsed\":false}\n"
    ));
    assert!(
        stdout
            .lines()
            .last()
            .expect("outcome")
            .starts_with("{\"outcome\":\"completed\",\"response_id\":\"resp_91f0aa3c5d2b\",\"usage\":{\"input_tokens\":12,")
    );
}

#[test]
fn standard_input_and_failed_outcomes() {
    let bytes = std::fs::read(fixture("cut-off.sse")).expect("fixture");
    let output = promptwire(&["stream", "-", "--json"], Some(&bytes));
    assert_eq!(output.status.code(), Some(0));
    let lines = json_lines(&output);
    assert_eq!(lines.len(), 5);
    assert_eq!(
        lines[4],
        json!({"outcome": "failed", "error": "stream",
            "message": "stream closed before response.completed", "retry_after_ms": null})
    );
    let path = fixture("incomplete.sse");
    let output = promptwire(&["stream", path.to_str().expect("path"), "--json"], None);
    assert_eq!(
        json_lines(&output).last(),
        Some(&json!({"outcome": "failed", "error": "stream",
            "message": "Incomplete response returned, reason: max_output_tokens",
            "retry_after_ms": null}))
    );
    // Classified failures keep their class.
    let failed = b"data: {\"type\":\"response.failed\",\"response\":{\"error\":{\"code\":\"context_length_exceeded\",\"message\":\"Too long.\"}}}\n\n";
    let output = promptwire(&["stream", "-", "--json"], Some(failed));
    assert_eq!(
        json_lines(&output),
        vec![
            json!({"seq": 0, "event": null, "type": "response.failed", "mapped": null, "unparsed": false}),
            json!({"outcome": "failed", "error": "context_window_exceeded",
                "message": "context window exceeded: Too long.", "retry_after_ms": null}),
        ]
    );
}

#[test]
fn readable_timeline() {
    let path = fixture("tool-calls-crlf.sse");
    let output = promptwire(&["stream", path.to_str().expect("path")], None);
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8(output.stdout).expect("utf8");
    let lines: Vec<&str> = stdout.lines().collect();
    // One line per raw event, then the outcome block.
    assert_eq!(lines.len(), 26 + 8, "{stdout}");
    let event_line = |i: usize| {
        let line = lines[i];
        assert!(
            line.trim_start().starts_with(|c: char| c.is_ascii_digit()),
            "{line}"
        );
        line.split_once('#').expect("seq").1.to_string()
    };
    assert_eq!(
        event_line(0),
        "0     response.created                         created"
    );
    assert_eq!(
        event_line(4),
        "4     response.reasoning_summary_text.delta    reasoning_summary_delta [0] \" the config\""
    );
    assert_eq!(
        event_line(13),
        "13    response.custom_tool_call_input.delta    tool_call_input_delta ctc_9e07b1 \"*** Update File: src/config.rs\\n\""
    );
    assert_eq!(
        event_line(20),
        "20    response.function_call_arguments.delta   (ignored by clients)"
    );
    assert_eq!(
        lines[26..].to_vec(),
        vec![
            "outcome    completed resp_2b44e0a17c95",
            "usage      input 15120 (cached 14848, cache write 0), output 311 (reasoning 128), total 15431",
            lines[28],
            "items      reasoning rs_51d0c7, custom_tool_call ctc_9e07b1, function_call fc_40aa12",
            "tool call  apply_patch call_Qx81Lm \"*** Begin Patch\\n*** Update File: src/config.rs\\n@@\\n-    let path = \\\"config.toml\\\";\\n+    let path = default_config_path();\\n*** End Patch\"",
            "tool call  exec_command call_Vb27Ps \"{\\\"cmd\\\":\\\"cargo test config\\\"}\"",
            "summary    [0] \"**Locating the config loader**\"",
            "summary    [1] \"**Patching the default path**\"",
        ]
    );
    assert!(
        lines[28].starts_with("timing     26 events, first event "),
        "{}",
        lines[28]
    );
}

#[test]
fn usage_errors_exit_1() {
    let output = promptwire(&["stream", "/nonexistent/stream.sse"], None);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&output.stderr)
            .starts_with("promptwire: cannot read /nonexistent/stream.sse"),
        "{output:?}"
    );
    let output = promptwire(&["stream"], None);
    assert_eq!(output.status.code(), Some(1));
}

/// The shared Codex CLI 0.169 captures, when `../shared` is there: every `data:` line is one JSON
/// line, and each turn completes with the response id and usage the capture holds.
#[test]
fn shared_captures_when_present() {
    let Some(dir) = shared::shared_fixtures("codex-cli-0.169/two-turns-tools-session") else {
        return;
    };
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).expect("dir") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|x| x != "sse") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("capture");
        let data_lines: Vec<Value> = text
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .map(|d| serde_json::from_str(d).expect("capture data is JSON"))
            .collect();
        let completed = data_lines
            .iter()
            .find(|d| d["type"] == "response.completed")
            .expect("capture has a completion");
        let usage = &completed["response"]["usage"];
        let text: String = data_lines
            .iter()
            .filter(|d| d["type"] == "response.output_text.delta")
            .filter_map(|d| d["delta"].as_str())
            .collect();
        let output = promptwire(&["stream", path.to_str().expect("path"), "--json"], None);
        let lines = json_lines(&output);
        assert_eq!(lines.len(), data_lines.len() + 1, "{}", path.display());
        for (line, data) in lines.iter().zip(&data_lines) {
            assert_eq!(line["type"], data["type"], "{}", path.display());
            assert_eq!(line["unparsed"], json!(false));
        }
        assert_eq!(
            lines.last(),
            Some(&json!({"outcome": "completed",
                "response_id": completed["response"]["id"],
                "usage": {
                    "input_tokens": usage["input_tokens"],
                    "cached_input_tokens": usage["input_tokens_details"]["cached_tokens"],
                    "cache_write_input_tokens": 0,
                    "output_tokens": usage["output_tokens"],
                    "reasoning_output_tokens": usage["output_tokens_details"]["reasoning_tokens"],
                    "total_tokens": usage["total_tokens"]},
                "text": text})),
            "{}",
            path.display()
        );
        checked += 1;
    }
    assert!(checked > 0);
}
