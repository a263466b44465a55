//! Rollout folders for the rollout benchmark and tests: copies of the captured Codex rollouts
//! (tests/data/rollouts) with fresh thread ids, laid out as `$CODEX_HOME/sessions/YYYY/MM/DD`,
//! and a long synthetic rollout grown from a captured one.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// The captured rollout files, sorted.
pub fn captures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rollouts");
    let mut out = Vec::new();
    for dir in std::fs::read_dir(root)
        .expect("tests/data/rollouts")
        .flatten()
    {
        for file in std::fs::read_dir(dir.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            if file.file_name().to_string_lossy().starts_with("rollout-") {
                out.push(file.path());
            }
        }
    }
    out.sort();
    assert_eq!(out.len(), 3, "the three captured rollouts");
    out
}

/// The captured rollout whose folder name contains `name`.
pub fn capture(name: &str) -> PathBuf {
    captures()
        .into_iter()
        .find(|p| {
            p.parent()
                .and_then(|d| d.file_name())
                .is_some_and(|d| d.to_string_lossy().contains(name))
        })
        .expect("a captured rollout of that name")
}

/// Writes `count` rollouts under `dir/2026/11/30/`, copies of the captures with fresh thread ids
/// (`00000000-0000-7000-8000-<i>`).
pub fn make_folder(dir: &Path, count: usize) {
    let day = dir.join("2026/11/30");
    std::fs::create_dir_all(&day).expect("mkdir");
    let sources: Vec<(String, String)> = captures()
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).expect("read");
            let name = p.file_name().expect("name").to_string_lossy().into_owned();
            let thread =
                name[name.len() - ".jsonl".len() - 36..name.len() - ".jsonl".len()].to_string();
            (text, thread)
        })
        .collect();
    for i in 0..count {
        let (text, thread) = &sources[i % sources.len()];
        let new_thread = format!("00000000-0000-7000-8000-{i:012}");
        let text = text.replace(thread.as_str(), &new_thread);
        let name = format!("rollout-2026-11-30T16-00-{:02}-{new_thread}.jsonl", i % 60);
        std::fs::write(day.join(name), text).expect("write");
    }
}

/// A rollout of about `lines` lines: the first captured session's header, then tool-call turns
/// (a user message, then calls each recorded as reasoning, function call, usage record, output
/// of about 1 KB, token count), as Codex 0.171 writes them.
pub fn long_rollout(lines: usize) -> Vec<u8> {
    let text = std::fs::read_to_string(capture("0.171-standard")).expect("read");
    let mut out = String::new();
    out.push_str(text.lines().next().expect("session_meta"));
    out.push('\n');
    let mut n = 1;
    let mut call = 0usize;
    let push = |out: &mut String, n: &mut usize, kind: &str, payload: Value| {
        let line = json!({"timestamp": format!("2026-11-30T16:{:02}:{:02}.{:03}Z", (*n / 6000) % 60, (*n / 100) % 60, *n % 1000), "type": kind, "payload": payload});
        out.push_str(&line.to_string());
        out.push('\n');
        *n += 1;
    };
    let mut total = 0i64;
    while n < lines {
        if call.is_multiple_of(10) {
            push(
                &mut out,
                &mut n,
                "turn_context",
                json!({"turn_id": format!("turn-{call}"), "model": "gpt-5.5", "summary": "none"}),
            );
            push(
                &mut out,
                &mut n,
                "response_item",
                json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": format!("step {call}: run the next check")}]}),
            );
        }
        push(
            &mut out,
            &mut n,
            "response_item",
            json!({"type": "reasoning", "id": format!("rs_{call}"), "summary": [{"type": "summary_text", "text": "Planning next step"}], "content": null, "encrypted_content": format!("gAAAA{call:064}")}),
        );
        push(
            &mut out,
            &mut n,
            "response_item",
            json!({"type": "function_call", "status": "completed", "id": format!("fc_{call}"), "name": "exec_command", "arguments": format!("{{\"cmd\":\"cargo test --test t{call}\"}}"), "call_id": format!("call_{call}")}),
        );
        let input = 10_000 + (call as i64) * 300;
        total += input;
        let usage = json!({"input_tokens": input, "cached_input_tokens": input - 300, "cache_write_input_tokens": 0, "output_tokens": 40, "reasoning_output_tokens": 16, "total_tokens": input + 40});
        push(
            &mut out,
            &mut n,
            "token_usage_record",
            json!({"turn_id": format!("turn-{call}"), "response_id": format!("resp_{call}"), "usage": usage}),
        );
        let output: String = (0..20)
            .map(|i| format!("test t{call}::case_{i} ... ok\n"))
            .collect();
        push(
            &mut out,
            &mut n,
            "response_item",
            json!({"type": "function_call_output", "id": format!("fco_{call}"), "call_id": format!("call_{call}"), "output": output}),
        );
        push(
            &mut out,
            &mut n,
            "event_msg",
            json!({"type": "token_count", "info": {"total_token_usage": {"input_tokens": total}, "last_token_usage": usage}}),
        );
        call += 1;
    }
    out.into_bytes()
}
