//! `promptwire diff` as a user runs it: the whole `--json` report and the human lines for a
//! hand-made session (tests/data/prefix), the real Codex CLI 0.169 captures when `../shared` is
//! present, and user errors (exit 1, one line on stderr).

use crate::support::cli;
use crate::support::shared;

use cli::run;
use std::path::{Path, PathBuf};
use std::process::Output;

use pretty_assertions::assert_eq;
use promptwire::core::prefix::{Cause, Warning};
use serde_json::{Value, json};

const CAUSES: &[Cause] = &[
    Cause::ModelChanged,
    Cause::ReasoningChanged,
    Cause::TextChanged,
    Cause::ToolsChanged,
    Cause::ToolsReordered,
    Cause::InstructionsChanged,
    Cause::DialectChanged,
    Cause::InputItemEdited,
    Cause::InputItemsRemoved,
    Cause::InputRewritten,
    Cause::CompactionRequest,
];
const WARNINGS: &[Warning] = &[
    Warning::PromptCacheKeyChanged,
    Warning::ClientMetadataChanged,
    Warning::IdleGap,
];

/// (explanation, fix) of a cause or warning code.
fn vocabulary(code: &str) -> (&'static str, Option<&'static str>) {
    let cause = CAUSES.iter().find(|c| c.as_str() == code);
    let warning = WARNINGS.iter().find(|w| w.as_str() == code);
    match (cause, warning) {
        (Some(c), _) => (c.explanation(), c.fix()),
        (None, Some(w)) => (w.explanation(), w.fix()),
        (None, None) => panic!("unknown code {code}"),
    }
}

/// An expected `--json` report written with codes only: each pair gets the `notes` of its
/// causes and warnings, and each break without `change` a value change with no derived field.
fn with_notes(mut report: Value) -> Value {
    for pair in report["pairs"].as_array_mut().expect("pairs") {
        if let Some(b) = pair["break"].as_object_mut() {
            b.entry("change").or_insert(json!("value"));
            b.entry("also_changed").or_insert(json!([]));
        }
        let codes: Vec<String> = ["causes", "warnings"]
            .iter()
            .flat_map(|k| pair[*k].as_array().cloned().unwrap_or_default())
            .filter_map(|c| c.as_str().map(String::from))
            .collect();
        let notes: Vec<Value> = codes
            .iter()
            .map(|code| {
                let (explanation, fix) = vocabulary(code);
                json!({"code": code, "explanation": explanation, "fix": fix})
            })
            .collect();
        pair["notes"] = Value::Array(notes);
    }
    report
}

/// The human note lines under a pair.
fn note_lines(codes: &[&str]) -> String {
    codes
        .iter()
        .map(|code| {
            let (explanation, fix) = vocabulary(code);
            let fix = fix.map(|f| format!(" Fix: {f}")).unwrap_or_default();
            format!("    {code}: {explanation}{fix}\n")
        })
        .collect()
}

fn data(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/prefix")
        .join(name)
        .display()
        .to_string()
}

/// A case folder of the shared Codex CLI 0.169 captures (None outside CI when absent).
fn shared_0169(dir: &str) -> Option<PathBuf> {
    shared::shared_fixtures(&format!("codex-cli-0.169/{dir}"))
}

fn json_out(out: &Output) -> Value {
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    let mut value: Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    // The cache simulation's part of the report is checked whole in cache_cli.rs.
    if let Some(map) = value.as_object_mut() {
        map.shift_remove("requests");
        map.shift_remove("hazards");
    }
    if let Some(summary) = value.get_mut("summary").and_then(Value::as_object_mut) {
        summary.shift_remove("cost_usd");
        summary.shift_remove("cache_tokens");
    }
    value
}

/// Human output without the cache simulation's lines (checked in cache_cli.rs).
fn without_cache_lines(stdout: &[u8]) -> String {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter(|l| {
            !l.starts_with("cache: ") && !l.starts_with("hazard ") && !l.starts_with("finding ")
        })
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Asserts a user error: exit 1, empty stdout, exactly one stderr line equal to `expected`.
fn assert_user_error(out: &Output, expected: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    assert_eq!(stderr.lines().collect::<Vec<_>>(), vec![expected]);
}

/// The hand-made session: 0 → 1 appends a turn (client_metadata in another key order), 1 → 2
/// edits an earlier tool output and changes the cache key, 2 → 3 switches to a Lite model.
fn session_args() -> Vec<String> {
    let mut args = vec!["diff".to_string()];
    args.extend((0..4).map(|i| data(&format!("req_{i}.json"))));
    for usage in ["resp_0.sse", "resp_1.sse", "resp_2.json", "resp_3.json"] {
        args.push("--usage".to_string());
        args.push(data(usage));
    }
    args
}

#[test]
fn json_report_of_a_hand_made_session() {
    let mut args = session_args();
    args.push("--json".to_string());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_eq!(
        json_out(&run(&args, None)),
        with_notes(json!({
            "pairs": [
                {
                    "from": 0, "to": 1, "prefix_kept": true, "break": null,
                    "causes": [], "warnings": [],
                    "reusable_bytes": 808, "reusable_tokens": 205, "reported_cached_tokens": 1152, "warmup": false, "undetermined": null
                },
                {
                    "from": 1, "to": 2, "prefix_kept": false,
                    "break": {"at": "input", "index": 2, "path": "/input/2/output"},
                    "causes": ["input_item_edited"], "warnings": ["prompt_cache_key_changed"],
                    "reusable_bytes": 715, "reusable_tokens": 180, "reported_cached_tokens": 0, "warmup": false, "undetermined": null
                },
                {
                    "from": 2, "to": 3, "prefix_kept": false,
                    "break": {"at": "model", "index": null, "path": "/model"},
                    "causes": ["model_changed", "reasoning_changed", "dialect_changed"],
                    "warnings": ["client_metadata_changed"],
                    "reusable_bytes": 0, "reusable_tokens": 0, "reported_cached_tokens": null, "warmup": false, "undetermined": null
                }
            ],
            "summary": {
                "requests": 4, "warmups": 0, "undetermined": 0, "breaks": 2, "input_tokens": 1146, "reusable_tokens": 385,
                "reported_cached_tokens": 1152
            }
        }))
    );
}

#[test]
fn human_report_is_one_line_per_pair_and_a_summary() {
    let args = session_args();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run(&args, None);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        without_cache_lines(&out.stdout),
        format!(
            "0 -> 1: kept; reusable 205 of 205 tokens (808 bytes); server cached 1152\n\
             1 -> 2: BROKEN at input[2] /input/2/output (input_item_edited); reusable 180 of 258 \
             tokens (715 bytes); server cached 0; warnings: prompt_cache_key_changed\n{}\
             2 -> 3: BROKEN at model /model (model_changed, reasoning_changed, dialect_changed); \
             reusable 0 of 302 tokens (0 bytes); warnings: client_metadata_changed\n{}\
             session: 4 requests, 2 breaks, 1146 input tokens, 385 reusable, 1152 reported cached; \
             misses: 0 tokens, $0.0000\n",
            note_lines(&["input_item_edited", "prompt_cache_key_changed"]),
            note_lines(&[
                "model_changed",
                "reasoning_changed",
                "dialect_changed",
                "client_metadata_changed"
            ]),
        )
    );
}

#[test]
fn chosen_pairs_and_timestamps() {
    let (r0, r1, r3) = (data("req_0.json"), data("req_1.json"), data("req_3.json"));
    let out = run(
        &[
            "diff",
            &r0,
            &r1,
            &r3,
            "--pair",
            "0:2",
            "--pair",
            "1:1",
            "--sent-at-ms",
            "1000,2000,902000",
            "--json",
        ],
        None,
    );
    assert_eq!(
        json_out(&out),
        with_notes(json!({
            "pairs": [
                {
                    "from": 0, "to": 2, "prefix_kept": false,
                    "break": {"at": "model", "index": null, "path": "/model"},
                    "causes": ["model_changed", "reasoning_changed", "dialect_changed", "input_item_edited"],
                    "warnings": ["prompt_cache_key_changed", "client_metadata_changed"],
                    "reusable_bytes": 0, "reusable_tokens": 0, "reported_cached_tokens": null, "warmup": false, "undetermined": null
                },
                {
                    "from": 1, "to": 1, "prefix_kept": true, "break": null,
                    "causes": [], "warnings": [],
                    "reusable_bytes": 1011, "reusable_tokens": 258, "reported_cached_tokens": null, "warmup": false, "undetermined": null
                }
            ],
            "summary": {
                "requests": 3, "warmups": 0, "undetermined": 0, "breaks": 1, "input_tokens": 844, "reusable_tokens": 205,
                "reported_cached_tokens": null
            }
        }))
    );
    // The consecutive pairs: 15 minutes between requests 1 and 2 is an idle gap.
    let out = run(
        &[r0.as_str(), &r1, &r3].iter().fold(
            vec!["diff", "--sent-at-ms", "1000,2000,902000"],
            |mut v, a| {
                v.push(a);
                v
            },
        ),
        None,
    );
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        text.lines().nth(1),
        Some(
            "1 -> 2: BROKEN at model /model (model_changed, reasoning_changed, dialect_changed, \
             input_item_edited); reusable 0 of 258 tokens (0 bytes); warnings: \
             prompt_cache_key_changed, client_metadata_changed, idle_gap (gap 900 s)"
        )
    );
}

#[test]
fn real_pair_keeps_its_prefix_despite_client_metadata_key_order() {
    let Some(dir) = shared_0169("two-requests-local-provider") else {
        return;
    };
    let (a, b) = (dir.join("req_0.json"), dir.join("req_1.json"));
    // The premise: the two client_metadata maps list their keys in another order.
    let keys = |p: &Path| -> Vec<String> {
        let v: Value = serde_json::from_slice(&std::fs::read(p).expect("read")).expect("json");
        v["client_metadata"]
            .as_object()
            .expect("client_metadata")
            .keys()
            .cloned()
            .collect()
    };
    assert_ne!(keys(&a), keys(&b));
    let out = run(
        &[
            "diff",
            &a.display().to_string(),
            &b.display().to_string(),
            "--json",
        ],
        None,
    );
    assert_eq!(
        json_out(&out),
        with_notes(json!({
            "pairs": [{
                "from": 0, "to": 1, "prefix_kept": true, "break": null,
                "causes": [], "warnings": [],
                "reusable_bytes": 9515, "reusable_tokens": 2167, "reported_cached_tokens": null, "warmup": false, "undetermined": null
            }],
            "summary": {
                "requests": 2, "warmups": 0, "undetermined": 0, "breaks": 0, "input_tokens": 4418, "reusable_tokens": 2167,
                "reported_cached_tokens": null
            }
        }))
    );
}

#[test]
fn real_tools_session_with_reported_cached_tokens() {
    let Some(dir) = shared_0169("two-turns-tools-session") else {
        return;
    };
    let mut args = vec!["diff".to_string(), "--json".to_string()];
    for i in 0..6 {
        args.push(dir.join(format!("req_0{i}.json")).display().to_string());
    }
    for i in 0..6 {
        args.push("--usage".to_string());
        args.push(dir.join(format!("resp_0{i}.sse")).display().to_string());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let kept = |from: usize, bytes: u64, tokens: u64, cached: u64, warnings: Value| {
        json!({
            "from": from, "to": from + 1, "prefix_kept": true, "break": null,
            "causes": [], "warnings": warnings,
            "reusable_bytes": bytes, "reusable_tokens": tokens, "reported_cached_tokens": cached, "warmup": false, "undetermined": null
        })
    };
    assert_eq!(
        json_out(&run(&args, None)),
        with_notes(json!({
            "pairs": [
                kept(0, 7070, 1702, 6912, json!([])),
                kept(1, 7548, 1878, 7040, json!([])),
                // A new turn: turn_id in client_metadata changes; the prefix holds.
                kept(2, 8130, 2092, 7232, json!(["client_metadata_changed"])),
                kept(3, 8646, 2274, 7360, json!([])),
                kept(4, 9124, 2454, 7488, json!([])),
            ],
            "summary": {
                "requests": 6, "warmups": 0, "undetermined": 0, "breaks": 0, "input_tokens": 13041, "reusable_tokens": 10400,
                "reported_cached_tokens": 36032
            }
        }))
    );
}

#[test]
fn stored_session_with_recorded_usage_and_timing() {
    use promptwire::store::{NewRequest, NewSession, OutcomeRecord, RecordedState, Source, Store};
    let db = Path::new(env!("CARGO_TARGET_TMPDIR")).join("prefix_cli_store.sqlite");
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
    }
    let id = {
        let mut store = Store::open(&db).expect("create database");
        let id = store
            .create_session(&NewSession {
                name: "prefix demo".to_string(),
                source: Source::Import,
                provider: None,
                model: Some("gpt-5.5".to_string()),
                created_us: 0,
            })
            .expect("session");
        // Request 3 comes 15 minutes after request 2: an idle gap.
        let started_us = [1_000_000, 2_000_000, 3_000_000, 903_000_000];
        for (i, started) in started_us.into_iter().enumerate() {
            let body = std::fs::read(data(&format!("req_{i}.json"))).expect("read body");
            let request = store
                .add_request(
                    id,
                    &NewRequest {
                        started_us: Some(started),
                        ..NewRequest::post("http://127.0.0.1/v1/responses", &body)
                    },
                )
                .expect("request");
            if i == 1 {
                let outcome = OutcomeRecord {
                    state: RecordedState::Completed,
                    usage: Some(json!({"input_tokens": 1302, "cached_input_tokens": 1152})),
                    ..OutcomeRecord::default()
                };
                store.set_outcome(request, &outcome).expect("outcome");
            }
        }
        id
    };
    let out = run(
        &[
            "diff",
            "--session",
            &id.to_string(),
            "--db",
            &db.display().to_string(),
            "--json",
        ],
        None,
    );
    assert_eq!(
        json_out(&out),
        with_notes(json!({
            "pairs": [
                {
                    "from": 0, "to": 1, "prefix_kept": true, "break": null,
                    "causes": [], "warnings": [],
                    "reusable_bytes": 808, "reusable_tokens": 205, "reported_cached_tokens": 1152, "warmup": false, "undetermined": null
                },
                {
                    "from": 1, "to": 2, "prefix_kept": false,
                    "break": {"at": "input", "index": 2, "path": "/input/2/output"},
                    "causes": ["input_item_edited"], "warnings": ["prompt_cache_key_changed"],
                    "reusable_bytes": 715, "reusable_tokens": 180, "reported_cached_tokens": null, "warmup": false, "undetermined": null
                },
                {
                    "from": 2, "to": 3, "prefix_kept": false,
                    "break": {"at": "model", "index": null, "path": "/model"},
                    "causes": ["model_changed", "reasoning_changed", "dialect_changed"],
                    "warnings": ["client_metadata_changed", "idle_gap"],
                    "reusable_bytes": 0, "reusable_tokens": 0, "reported_cached_tokens": null, "warmup": false, "undetermined": null
                }
            ],
            "summary": {
                "requests": 4, "warmups": 0, "undetermined": 0, "breaks": 2, "input_tokens": 1146, "reusable_tokens": 385,
                "reported_cached_tokens": 1152
            }
        }))
    );
    // Two stored requests side by side: the verdict, then the aligned elements.
    let (id_arg, db_arg) = (id.to_string(), db.display().to_string());
    let pair_args = [
        "diff",
        "--session",
        &id_arg,
        "--db",
        &db_arg,
        "--requests",
        "1,2",
    ];
    let out = run(&pair_args, None);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "1 -> 2: BROKEN at input[2] /input/2/output (input_item_edited); reusable 180 of 258 \
             tokens (715 bytes); warnings: prompt_cache_key_changed\n{}\
             \x20 = /model … /input/1 (9 elements)\n\
             \x20 ~ /input/2\n\
             \x20     -   \"output\": \"main.rs\\nrouter.rs\\nhandlers/\\n\"\n\
             \x20     +   \"output\": \"main.rs\\nrouter.rs\\n\"\n\
             \x20 = /input/3 … /input/4 (2 elements)\n\
             \x20 + /input/5\n\
             \x20 + /input/6\n",
            note_lines(&["input_item_edited", "prompt_cache_key_changed"])
        )
    );
    let mut json_args = pair_args.to_vec();
    json_args.push("--json");
    let value = json_out(&run(&json_args, None));
    let mut bodies = promptwire::core::prefix::Session::default();
    for i in 0..3 {
        let body: Value =
            serde_json::from_slice(&std::fs::read(data(&format!("req_{i}.json"))).expect("read"))
                .expect("json");
        bodies
            .push_body(&body, promptwire::core::prefix::RequestMeta::default())
            .expect("body");
    }
    let diff = bodies.pair_diff(1, 2).expect("diff");
    assert_eq!(
        value["diff"],
        serde_json::to_value(&diff).expect("diff json")
    );
    let kinds: Vec<(Value, Value)> = value["diff"]["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| (r["kind"].clone(), r["to_pointer"].clone()))
        .collect();
    let expected: Vec<(Value, Value)> = [
        "/model",
        "/reasoning",
        "/text",
        "/tools",
        "/parallel_tool_calls",
        "/tool_choice",
        "/instructions",
        "/input/0",
        "/input/1",
    ]
    .iter()
    .map(|p| (json!("same"), json!(p)))
    .chain([
        (json!("changed"), json!("/input/2")),
        (json!("same"), json!("/input/3")),
        (json!("same"), json!("/input/4")),
        (json!("added"), json!("/input/5")),
        (json!("added"), json!("/input/6")),
    ])
    .collect();
    assert_eq!(kinds, expected);
    assert_eq!(value["pair"]["break"]["path"], json!("/input/2/output"));
    let out = run(
        &[
            "diff",
            "--session",
            &id_arg,
            "--db",
            &db_arg,
            "--requests",
            "1,7",
        ],
        None,
    );
    assert_user_error(
        &out,
        "promptwire: --requests 1,7: the session has 4 requests (0 to 3)",
    );
    assert_user_error(
        &run(
            &[
                "diff",
                "--session",
                "999",
                "--db",
                &db.display().to_string(),
            ],
            None,
        ),
        &format!(
            "promptwire: {}",
            promptwire::store::StoreError::NoSession(999)
        ),
    );
    let missing = Path::new(env!("CARGO_TARGET_TMPDIR")).join("no-such.sqlite");
    assert_user_error(
        &run(
            &[
                "diff",
                "--session",
                "1",
                "--db",
                &missing.display().to_string(),
            ],
            None,
        ),
        &format!("promptwire: no database at {}", missing.display()),
    );
}

#[test]
fn a_body_from_standard_input() {
    let body = std::fs::read(data("req_1.json")).expect("read");
    let out = run(&["diff", &data("req_0.json"), "-", "--json"], Some(&body));
    assert_eq!(json_out(&out)["pairs"][0]["prefix_kept"], json!(true));
}

#[test]
fn user_errors_are_one_line() {
    let r0 = data("req_0.json");
    let bad = Path::new(env!("CARGO_TARGET_TMPDIR")).join("prefix_cli_bad.json");
    std::fs::write(&bad, "{\n  \"model\": \"x\",\n  oops\n}").expect("write");
    let bad = bad.display().to_string();
    assert_user_error(
        &run(&["diff", &bad], None),
        &format!("promptwire: {bad}: invalid JSON at line 3, column 3: key must be a string"),
    );
    assert_user_error(
        &run(&["diff", &r0, "-"], Some(b"{\"model\": 1}")),
        "promptwire: stdin: model: model must be a string, got a number",
    );
    assert_user_error(
        &run(&["diff", &r0, "-"], Some(b"[]")),
        "promptwire: stdin: $: a request body must be a JSON object, got an array",
    );
    assert_user_error(
        &run(&["diff", &r0, "--usage", &r0], None),
        &format!("promptwire: {r0}: the response has no `usage`"),
    );
    let cut = Path::new(env!("CARGO_TARGET_TMPDIR")).join("prefix_cli_cut.sse");
    let created = "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"r\"}}\n\n";
    std::fs::write(&cut, created).expect("write");
    let cut = cut.display().to_string();
    assert_user_error(
        &run(&["diff", &r0, "--usage", &cut], None),
        &format!("promptwire: {cut}: the stream has no `response.completed` event with usage"),
    );
    assert_user_error(
        &run(&["diff", &r0, &r0, "--usage", &data("resp_0.sse")], None),
        "promptwire: expected one --usage file per body (2), got 1",
    );
    assert_user_error(
        &run(&["diff", &r0, "--pair", "0:1"], None),
        "promptwire: --pair 0:1: the session has 1 request (0 to 0)",
    );
    assert_user_error(
        &run(&["diff", &r0, "--sent-at-ms", "1,2"], None),
        "promptwire: expected one --sent-at-ms value per body (1), got 2",
    );
    assert_user_error(
        &run(&["diff", "-", "-"], Some(b"{}")),
        "promptwire: standard input (`-`) can be read only once",
    );
    let missing = data("missing.json");
    let out = run(&["diff", &missing], None);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);
    // A malformed option value is a usage error (clap), exit 1.
    assert_eq!(
        run(&["diff", &r0, "--pair", "01"], None).status.code(),
        Some(1)
    );
}
