//! `promptwire diff` as a user runs it: the whole `--json` report and the human lines for a
//! hand-made session (tests/data/prefix), the real Codex CLI 0.169 captures when `../shared` is
//! present, and user errors (exit 1, one line on stderr).

//! `promptwire diff` as a user runs it: the whole `--json` pairs and the human lines for a
//! hand-made session (tests/data/prefix), the real Codex CLI 0.169 captures when `../shared` is
//! present, a stored session with recorded usage and timing, and user errors (exit 1, one line on
//! stderr). Token figures are the ledger's (`promptwire::core::ledger`, the same library code
//! on the same bodies): the CLI prints what the one ledger holds; the verdicts (kept, where,
//! which causes) are written here.

use crate::support::cli;
use crate::support::shared;

use cli::run;
use std::path::{Path, PathBuf};
use std::process::Output;

use pretty_assertions::assert_eq;
use promptwire::core::ledger::{self, Cause, Counting, PairVerdict, Rules};
use promptwire::core::prefix::{RequestMeta, Session};
use serde_json::{Value, json};

/// The cause a code names.
fn cause(code: &str) -> Cause {
    let all = [
        Cause::ModelChanged,
        Cause::PromptCacheKeyChanged,
        Cause::ServiceTierChanged,
        Cause::ReasoningEffortChanged,
        Cause::VerbosityChanged,
        Cause::TextFormatChanged,
        Cause::ToolsChanged,
        Cause::ContextCompacted,
        Cause::InputChanged,
        Cause::ReasoningDropped,
        Cause::IdleGap,
        Cause::RoutingOverflow,
        Cause::NoBreakpoint,
        Cause::ServerShortfall,
    ];
    *all.iter()
        .find(|c| c.as_str() == code)
        .unwrap_or_else(|| panic!("unknown code {code}"))
}

/// The `notes` of a pair with these causes and warnings.
fn notes(codes: &[&str]) -> Value {
    Value::Array(
        codes
            .iter()
            .map(|code| {
                let c = cause(code);
                json!({"code": code, "explanation": c.explanation(), "fix": c.fix()})
            })
            .collect(),
    )
}

/// The human note lines under a pair.
fn note_lines(codes: &[&str]) -> String {
    codes
        .iter()
        .map(|code| {
            let c = cause(code);
            let fix = c.fix().map(|f| format!(" Fix: {f}")).unwrap_or_default();
            format!("    {code}: {}{fix}\n", c.explanation())
        })
        .collect()
}

/// The ledger's rows of `files` (bodies), with no usage: their verdicts, by the library.
fn library(files: &[String]) -> Vec<Option<PairVerdict>> {
    let mut session = Session::default();
    for f in files {
        let body: Value = serde_json::from_slice(&std::fs::read(f).expect("read")).expect("json");
        session
            .push_body(&body, RequestMeta::default())
            .expect("body");
    }
    ledger::ledger(&session, &Rules::bundled())
        .rows
        .into_iter()
        .map(|r| r.verdict)
        .collect()
}

/// A pair's `--json` view, its token figures from `v`.
#[allow(clippy::too_many_arguments, reason = "one pair's fields written out")]
fn pair(
    v: &PairVerdict,
    kind: &str,
    brk: Value,
    causes: &[&str],
    warnings: &[&str],
    cached: Value,
    lost: Value,
) -> Value {
    let codes: Vec<&str> = causes.iter().chain(warnings).copied().collect();
    json!({
        "from": v.from, "to": v.to, "kind": kind, "prefix_kept": v.prefix_kept, "break": brk,
        "causes": causes, "warnings": warnings, "notes": notes(&codes),
        "reusable_tokens": v.reusable_tokens, "shared_tokens": v.shared_tokens,
        "from_tokens": v.from_tokens, "to_tokens": v.to_tokens,
        "reported_cached_tokens": cached, "lost_usd": lost, "not_recorded": [],
    })
}

/// A break's `--json` view.
fn brk(v: &PairVerdict, pointer: &str, source: &str, change: &str) -> Value {
    let d = v.divergence.as_ref().expect("a break");
    json!({"part": d.part, "token": d.token, "pointer": pointer, "source": source, "change": change})
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

/// The `pairs` of a `--json` report (the rows' part is checked whole in cache_cli.rs).
fn json_out(out: &Output) -> Value {
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    let value: Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    value["pairs"].clone()
}

/// The pair lines of the human output (the rows' lines are checked in cache_cli.rs).
fn pair_lines(stdout: &[u8]) -> String {
    String::from_utf8_lossy(stdout)
        .lines()
        .take_while(|l| !l.starts_with("session: "))
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

fn hand_made() -> Vec<String> {
    (0..4).map(|i| data(&format!("req_{i}.json"))).collect()
}

/// What request 2 of the hand-made session lost, by the documented rules: the server counted
/// 1,390 input tokens and read none (resp_2.json); what it shares with request 1, scaled to the
/// server's count, could have been read from 1,024 in 128-token steps at gpt-5.5's cached rate
/// ($5 / $0.50 per million, assets/prices.json).
fn lost_of_request_2(v2: &PairVerdict) -> f64 {
    let input = 1390.0;
    let shared = (v2.shared_tokens as f64 * input / v2.to_tokens as f64).round();
    let read = if shared >= 1024.0 {
        1024.0 + ((shared - 1024.0) / 128.0).floor() * 128.0
    } else {
        0.0
    };
    let paid = input * 5.0 / 1e6;
    let ideal = (read * 0.5 + (input - read) * 5.0) / 1e6;
    paid - ideal
}

#[test]
fn json_report_of_a_hand_made_session() {
    let mut args = session_args();
    args.push("--json".to_string());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let v = library(&hand_made());
    let (v1, v2, v3) = (
        v[1].as_ref().expect("1"),
        v[2].as_ref().expect("2"),
        v[3].as_ref().expect("3"),
    );
    let mut got = json_out(&run(&args, None));
    let lost = lost_of_request_2(v2);
    let shown = got[1]["lost_usd"].as_f64().expect("a loss");
    assert!(
        lost > 0.0 && (shown - lost).abs() < 1e-12,
        "{shown} vs {lost}"
    );
    got[1]["lost_usd"] = Value::Null;
    assert_eq!(
        got,
        json!([
            // A turn appended (client_metadata in another key order: not rendered).
            pair(v1, "turn", Value::Null, &[], &[], json!(1152), json!(0.0)),
            // An earlier tool output edited, and another cache key: what it shares with the
            // turn before it (scaled to the server's count) was lost.
            pair(
                v2,
                "turn",
                brk(v2, "/input/2/output", "tool_outputs", "edited"),
                &["prompt_cache_key_changed", "input_changed"],
                &[],
                json!(0),
                Value::Null
            ),
            // A Lite model: its tools in a namespace, the request's history trimmed.
            pair(
                v3,
                "turn",
                brk(v3, "/input/0/tools/0/type", "tools", "edited"),
                &["model_changed", "tools_changed", "input_changed"],
                &[],
                Value::Null,
                json!(0.0)
            ),
        ])
    );
}

#[test]
fn human_report_is_one_line_per_pair() {
    let args = session_args();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run(&args, None);
    assert_eq!(out.status.code(), Some(0));
    let v = library(&hand_made());
    let g = promptwire::core::format::grouped;
    let (v1, v2, v3) = (
        v[1].as_ref().expect("1"),
        v[2].as_ref().expect("2"),
        v[3].as_ref().expect("3"),
    );
    let token = |v: &PairVerdict| g(v.divergence.as_ref().expect("break").token);
    assert_eq!(
        pair_lines(&out.stdout),
        format!(
            "0 -> 1: kept; reusable {} of {} tokens; server cached 1,152\n\
             1 -> 2: BROKEN at /input/2/output (tool_outputs, token {}) (prompt_cache_key_changed, \
             input_changed); reusable {} of {} tokens; server cached 0; lost {}\n{}\
             2 -> 3: BROKEN at /input/0/tools/0/type (tools, token {}) (model_changed, \
             tools_changed, input_changed); reusable {} of {} tokens\n{}",
            g(v1.reusable_tokens),
            g(v1.from_tokens),
            token(v2),
            g(v2.reusable_tokens),
            g(v2.from_tokens),
            promptwire::core::ledger::summary::usd(lost_of_request_2(v2)),
            note_lines(&["prompt_cache_key_changed", "input_changed"]),
            token(v3),
            g(v3.reusable_tokens),
            g(v3.from_tokens),
            note_lines(&["model_changed", "tools_changed", "input_changed"]),
        )
    );
}

#[test]
fn chosen_pairs_and_an_idle_gap_from_timestamps() {
    let (r0, r1, r3) = (data("req_0.json"), data("req_1.json"), data("req_3.json"));
    let out = run(
        &[
            "diff", &r0, &r1, &r3, "--pair", "0:2", "--pair", "1:1", "--json",
        ],
        None,
    );
    let session = {
        let mut s = Session::default();
        for f in [&r0, &r1, &r3] {
            let body: Value =
                serde_json::from_slice(&std::fs::read(f).expect("read")).expect("json");
            s.push_body(&body, RequestMeta::default()).expect("body");
        }
        s
    };
    let counting = Counting::default();
    let (a, b) = (
        ledger::compare_pair(&session, &counting, 0, 2),
        ledger::compare_pair(&session, &counting, 1, 1),
    );
    // A chosen pair is no row of the ledger: no kind, no server figures, nothing lost.
    let chosen = |v: &PairVerdict, brk: Value, causes: &[&str]| {
        let mut p = pair(v, "", brk, causes, &[], Value::Null, Value::Null);
        p["kind"] = Value::Null;
        p
    };
    assert_eq!(
        json_out(&out),
        json!([
            chosen(
                &a,
                brk(&a, "/input/0/tools/0/type", "tools", "edited"),
                &[
                    "model_changed",
                    "prompt_cache_key_changed",
                    "tools_changed",
                    "input_changed"
                ]
            ),
            chosen(&b, Value::Null, &[]),
        ])
    );
    // 31 minutes between two turns of one conversation: past the prefix model's retention (30
    // minutes, as measured on real sessions), the cache expired — an idle gap, which loses the
    // kept prefix.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("prefix_cli_gap");
    std::fs::create_dir_all(&dir).expect("dir");
    let msg = |role: &str, text: &str| json!({"type": "message", "role": role, "content": [{"type": "input_text", "text": text}]});
    let long = "the build of crate number seven failed again; ".repeat(300);
    let files: Vec<String> = [
        vec![msg("user", &long)],
        vec![
            msg("user", &long),
            msg("assistant", "Fixed."),
            msg("user", "Thanks."),
        ],
    ]
    .iter()
    .enumerate()
    .map(|(i, items)| {
        let path = dir.join(format!("gap_{i}.json"));
        let body = json!({"model": "gpt-5.5", "input": items, "prompt_cache_key": "t"});
        std::fs::write(&path, body.to_string()).expect("write");
        path.display().to_string()
    })
    .collect();
    let out = run(
        &["diff", &files[0], &files[1], "--sent-at-ms", "1000,1862000"],
        None,
    );
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    let v = library(&files);
    let v1 = v[1].as_ref().expect("1");
    let g = promptwire::core::format::grouped;
    // The ledger's row for it: what the expired cache cost.
    let mut session = Session::default();
    for (f, sent) in files.iter().zip([1000, 1_862_000]) {
        let body: Value = serde_json::from_slice(&std::fs::read(f).expect("read")).expect("json");
        let meta = RequestMeta {
            sent_at_ms: Some(sent),
            ..RequestMeta::default()
        };
        session.push_body(&body, meta).expect("body");
    }
    let row = ledger::ledger(&session, &Rules::bundled()).rows[1].clone();
    let lost = row.cost_usd.expect("priced").lost;
    assert!(lost > 0.0);
    assert_eq!(
        text.lines().next(),
        Some(
            format!(
                "0 -> 1: kept; reusable {} of {} tokens; lost {}; also: idle_gap (gap 1861 s)",
                g(v1.reusable_tokens),
                g(v1.from_tokens),
                promptwire::core::ledger::summary::usd(lost)
            )
            .as_str()
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
    let files = [a.display().to_string(), b.display().to_string()];
    let out = run(&["diff", &files[0], &files[1], "--json"], None);
    let v = library(&files);
    let v1 = v[1].as_ref().expect("1");
    assert_eq!(v1.reusable_tokens, v1.from_tokens);
    // An unknown model: no price, so no dollars.
    assert_eq!(
        json_out(&out),
        json!([pair(
            v1,
            "turn",
            Value::Null,
            &[],
            &[],
            Value::Null,
            Value::Null
        )])
    );
}

#[test]
fn real_tools_session_keeps_every_prefix() {
    let Some(dir) = shared_0169("two-turns-tools-session") else {
        return;
    };
    let files: Vec<String> = (0..6)
        .map(|i| dir.join(format!("req_0{i}.json")).display().to_string())
        .collect();
    let mut args = vec!["diff".to_string(), "--json".to_string()];
    args.extend(files.iter().cloned());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let v = library(&files);
    // Every request keeps the one before it — calls echoed with their `status`, a new turn's
    // metadata — and loses nothing; only the new user turn parts where the server stops
    // rendering the earlier turn's reasoning (reasoning_dropped: expected, no loss).
    let mut dropped = 0;
    let want: Vec<Value> = v[1..]
        .iter()
        .map(|v| {
            let v = v.as_ref().expect("verdict");
            if v.prefix_kept {
                assert_eq!(v.reusable_tokens, v.from_tokens);
                return pair(v, "turn", Value::Null, &[], &[], Value::Null, json!(0.0));
            }
            dropped += 1;
            assert_eq!(v.causes, [Cause::ReasoningDropped]);
            let d = v.divergence.as_ref().expect("where");
            pair(
                v,
                "turn",
                brk(v, &d.pointer, "reasoning", "edited"),
                &["reasoning_dropped"],
                &[],
                Value::Null,
                json!(0.0),
            )
        })
        .collect();
    assert_eq!(dropped, 1, "one new user turn");
    assert_eq!(json_out(&run(&args, None)), Value::Array(want));
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
    let v = library(&hand_made());
    let (v1, v2, v3) = (
        v[1].as_ref().expect("1"),
        v[2].as_ref().expect("2"),
        v[3].as_ref().expect("3"),
    );
    // Request 1's usage: 1,302 input, 1,152 cached — the whole of request 0 as the server
    // counts it; request 3 comes 15 minutes after request 2, on another model (nothing of
    // request 2 could be read there: no idle gap to report).
    let json = json_out(&out);
    let lost1 = json[0]["lost_usd"].clone();
    assert_eq!(
        json,
        json!([
            pair(v1, "turn", Value::Null, &[], &[], json!(1152), lost1),
            pair(
                v2,
                "turn",
                brk(v2, "/input/2/output", "tool_outputs", "edited"),
                &["prompt_cache_key_changed", "input_changed"],
                &[],
                Value::Null,
                json!(0.0)
            ),
            pair(
                v3,
                "turn",
                brk(v3, "/input/0/tools/0/type", "tools", "edited"),
                &["model_changed", "tools_changed", "input_changed"],
                &[],
                Value::Null,
                json!(0.0)
            ),
        ])
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
            "1 -> 2: BROKEN at /input/2/output (tool_outputs, token {}) (prompt_cache_key_changed, \
             input_changed); reusable {} of {} tokens\n{}\
             \x20 = /model … /input/1 (9 elements)\n\
             \x20 ~ /input/2\n\
             \x20     -   \"output\": \"main.rs\\nrouter.rs\\nhandlers/\\n\"\n\
             \x20     +   \"output\": \"main.rs\\nrouter.rs\\n\"\n\
             \x20 = /input/3 … /input/4 (2 elements)\n\
             \x20 + /input/5\n\
             \x20 + /input/6\n",
            promptwire::core::format::grouped(v2.divergence.as_ref().expect("break").token),
            promptwire::core::format::grouped(v2.reusable_tokens),
            promptwire::core::format::grouped(v2.from_tokens),
            note_lines(&["prompt_cache_key_changed", "input_changed"])
        )
    );
    let mut json_args = pair_args.to_vec();
    json_args.push("--json");
    let out = run(&json_args, None);
    assert_eq!(out.status.code(), Some(0));
    let value: Value = serde_json::from_slice(&out.stdout).expect("JSON");
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
    assert_eq!(value["pair"]["break"]["pointer"], json!("/input/2/output"));
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
    assert_eq!(json_out(&out)[0]["prefix_kept"], json!(true));
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
