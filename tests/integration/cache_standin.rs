//! The real Codex CLI (0.171, `PROMPTWIRE_CODEX_BIN`) through `promptwire record` against
//! `tools/standin_upstream.py --cache breakpoints|prefix`, a stand-in that keeps a prompt cache
//! by one of the two models of WIRE_SPEC §19.1 and reports `cached_tokens` /
//! `cache_write_tokens` as the server would: two turns (`codex exec`, then `exec resume
//! --last`), and what the recording holds for each request — its response id, input, cached and
//! cache-write tokens — is exactly what the stand-in reported (its `usage.jsonl`). The second
//! turn reads the first one's cache under both models; only the breakpoint model reports writes.
//! And the stand-in's breakpoint rules as vectors over loopback HTTP (WIRE_SPEC §19.1): an
//! append reads the previous request's implicit breakpoint, a change after it falls back to it
//! (not to a longer unmarked prefix), explicit mode without a breakpoint reads and writes
//! nothing, an explicit breakpoint is written, and a comparison id brings a diagnosis.

use crate::support;

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use super::proxy_codex::{assert_ok, codex, codex_bin, codex_home_with, start_record, stop_server};
use pretty_assertions::assert_eq;
use promptwire::core::stream::UsageCounts;
use promptwire::store::{Page, Store};
use serde_json::Value;
use support::scratch;
use support::server::Server;

/// (response id, input, cached, cache-write tokens) of one request. The store keeps the
/// client's usage, in which an unreported cache-write count is 0: so is it here.
type Reported = (Option<String>, Option<i64>, Option<i64>, i64);

fn counts(response_id: Option<String>, usage: Option<&Value>) -> Reported {
    let u = usage.and_then(UsageCounts::from_value).unwrap_or_default();
    (
        response_id,
        u.input_tokens,
        u.cached_input_tokens,
        u.cache_write_input_tokens.unwrap_or(0),
    )
}

/// A tiktoken cache directory holding o200k_base (copied from the tiktoken-rs crate's own
/// asset, the file promptwire counts with), so that the stand-in, when the `tiktoken` module is
/// installed, counts tokens exactly as the simulator does without fetching anything.
fn tiktoken_cache() -> Option<std::path::PathBuf> {
    #[allow(
        clippy::disallowed_methods,
        reason = "test: where cargo keeps the crate sources"
    )]
    let home = std::env::var_os("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cargo")))?;
    let asset = std::fs::read_dir(home.join("registry/src"))
        .ok()?
        .flatten()
        .flat_map(|index| {
            std::fs::read_dir(index.path())
                .into_iter()
                .flatten()
                .flatten()
        })
        .filter(|d| d.file_name().to_string_lossy().starts_with("tiktoken-rs-"))
        .map(|d| d.path().join("assets/o200k_base.tiktoken"))
        .find(|p| p.exists())?;
    let dir = scratch("tiktoken-cache");
    // tiktoken names a cached file by the SHA-1 of its URL.
    let name = "fb374d419588a4632f3f557e76b4b70aebbca790";
    std::fs::copy(asset, dir.join(name)).ok()?;
    Some(dir)
}

/// Starts the stand-in with `--cache model`, recording into `dir`: (process, base URL, the
/// token counter it says it uses).
fn start_standin(dir: &Path, model: &str) -> (Server, String, String) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/standin_upstream.py");
    // The virtualenv .ci/run makes (with `tiktoken`), else the system's.
    #[allow(
        clippy::disallowed_methods,
        reason = "test: which Python runs the stand-in"
    )]
    let python = std::env::var_os("PROMPTWIRE_PYTHON").unwrap_or_else(|| "python3".into());
    let mut child = Command::new(python);
    if let Some(cache) = tiktoken_cache() {
        child.env("TIKTOKEN_CACHE_DIR", cache);
    }
    // The stand-in keeps its cache on the segments promptwire renders (`promptwire render`);
    // its cache rules are its own.
    let mut child = child
        .env("PROMPTWIRE_RENDER", env!("CARGO_BIN_EXE_promptwire"))
        .arg(script)
        .args(["--record", dir.to_str().expect("path"), "--cache", model])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn python3 tools/standin_upstream.py");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut next = || lines.next().expect("a line").expect("read");
    let port = next();
    let tokens = next();
    let port = port.strip_prefix("PORT=").expect("PORT= first").to_string();
    let tokens = tokens
        .strip_prefix("TOKENS=")
        .expect("TOKENS= next")
        .to_string();
    (Server(child), format!("http://127.0.0.1:{port}/v1"), tokens)
}

/// Two Codex turns through `record` against the stand-in: (what the recording holds, what the
/// stand-in reported), request by request.
fn record_two_turns(bin: &Path, name: &str, model: &str) -> (Vec<Reported>, Vec<Reported>) {
    let (recorded, reported, _, _) =
        record_turns(bin, name, model, &["Say hello.", "Say it again."]);
    (recorded, reported)
}

/// Codex turns (`exec`, then `exec resume --last` per further prompt) through `record` against
/// the stand-in: (what the recording holds, what the stand-in reported, the database, the
/// stand-in's token counter).
fn record_turns(
    bin: &Path,
    name: &str,
    model: &str,
    prompts: &[&str],
) -> (Vec<Reported>, Vec<Reported>, std::path::PathBuf, String) {
    let dir = scratch(name);
    let (_standin, upstream, tokens) = start_standin(&dir.join("standin"), model);
    assert!(
        ["o200k_base", "bytes/4"].contains(&tokens.as_str()),
        "{tokens}"
    );
    let db = dir.join("rec.sqlite");
    let work = dir.join("work");
    std::fs::create_dir_all(&work).expect("work dir");
    let (mut record, lines, addr) = start_record(&upstream, &db);
    let home = codex_home_with(&dir.join("home"), &format!("http://{addr}/v1"), "");
    let model_flag = ["-m", "gpt-5.6-sol"];
    let first: Vec<&str> = model_flag.iter().copied().chain([prompts[0]]).collect();
    assert_ok(&codex(bin, &home, &work, &first), "codex exec");
    for prompt in &prompts[1..] {
        let next: Vec<&str> = ["resume", "--last"]
            .into_iter()
            .chain(model_flag)
            .chain([*prompt])
            .collect();
        assert_ok(&codex(bin, &home, &work, &next), "codex exec resume");
    }
    stop_server(&mut record, lines);

    let store = Store::open(&db).expect("db");
    let mut recorded = Vec::new();
    for session in store.list_sessions(Page::ALL).expect("sessions") {
        for request in store.requests(session.id, Page::ALL).expect("requests") {
            let outcome = store.outcome(request.id).expect("read").expect("outcome");
            recorded.push(counts(outcome.response_id, outcome.usage.as_ref()));
        }
    }
    let reported: Vec<Reported> = std::fs::read_to_string(dir.join("standin/usage.jsonl"))
        .expect("usage.jsonl")
        .lines()
        .map(|line| {
            let line: Value = serde_json::from_str(line).expect("JSON line");
            counts(
                line["response_id"].as_str().map(str::to_string),
                line.get("usage"),
            )
        })
        .collect();
    (recorded, reported, db, tokens)
}

#[test]
fn codex_through_record_against_a_caching_standin_records_what_it_reported() {
    let Some(bin) = codex_bin() else {
        return;
    };
    for model in ["breakpoints", "prefix"] {
        let (recorded, reported) = record_two_turns(&bin, &format!("cache-{model}"), model);
        assert_eq!(recorded, reported, "{model}");
        assert!(reported.len() >= 2, "{model}: {reported:?}");
        // Turn 1 reads nothing; the next request reads what an earlier one left.
        let cached: Vec<i64> = reported.iter().map(|r| r.2.unwrap_or(-1)).collect();
        assert_eq!(cached[0], 0, "{model}: {reported:?}");
        assert!(cached[1..].iter().all(|&c| c > 0), "{model}: {reported:?}");
        let writes: Vec<i64> = reported.iter().map(|r| r.3).collect();
        match model {
            // The first request writes its implicit breakpoint.
            "breakpoints" => assert!(writes[0] > 0, "{reported:?}"),
            // Writes are free (and not reported).
            _ => assert_eq!(writes, vec![0; reported.len()]),
        }
    }
}

/// POSTs `body` to the stand-in at `base` (`http://127.0.0.1:PORT/v1`) and returns its
/// `response.completed` response object.
fn post(base: &str, body: &Value) -> Value {
    use std::io::{Read as _, Write as _};
    let addr = base
        .strip_prefix("http://")
        .and_then(|rest| rest.strip_suffix("/v1"))
        .expect("base URL");
    let data = serde_json::to_vec(body).expect("json");
    let mut stream = std::net::TcpStream::connect(addr).expect("connect");
    write!(
        stream,
        "POST /v1/responses HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        data.len()
    )
    .expect("write head");
    stream.write_all(&data).expect("write body");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("read");
    let line = answer
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|l| serde_json::from_str::<Value>(l).expect("event"))
        .find(|e| e["type"] == "response.completed")
        .expect("a completed event");
    line["response"].clone()
}

fn user(text: &str, breakpoint: bool) -> Value {
    let mut part = serde_json::json!({"type": "input_text", "text": text});
    if breakpoint {
        part["prompt_cache_breakpoint"] = serde_json::json!({"mode": "explicit"});
    }
    serde_json::json!({"type": "message", "role": "user", "content": [part]})
}

fn assistant(text: &str) -> Value {
    serde_json::json!({"type": "message", "role": "assistant",
        "content": [{"type": "output_text", "text": text}]})
}

/// (input, cached, written) of a response's usage.
fn figures(response: &Value) -> (i64, i64, i64) {
    let n = |p: &str| response.pointer(p).and_then(Value::as_i64).unwrap_or(-1);
    (
        n("/usage/input_tokens"),
        n("/usage/input_tokens_details/cached_tokens"),
        n("/usage/input_tokens_details/cache_write_tokens"),
    )
}

#[test]
fn the_standin_caches_at_breakpoints_only() {
    let dir = scratch("breakpoint-vectors");
    let (_standin, base, _) = start_standin(&dir, "breakpoints");
    let policy = "policy ".repeat(1200);
    let body = |input: Vec<Value>, options: Option<Value>| {
        let mut body = serde_json::json!({"model": "gpt-5.6-sol", "instructions": policy,
            "input": input, "stream": true, "prompt_cache_key": "thread-1"});
        if let Some(options) = options {
            body["prompt_cache_options"] = options;
        }
        body
    };
    // 1: nothing cached; the implicit breakpoint (the user message, the end) is written.
    let first = post(&base, &body(vec![user("Q1", false)], None));
    let (input1, cached, written) = figures(&first);
    assert!(input1 > 1024, "{first}");
    assert_eq!((cached, written), (0, input1));
    // 2: appended: reads request 1's breakpoint, writes the rest up to its own.
    let second = post(
        &base,
        &body(
            vec![user("Q1", false), assistant("A1"), user("Q2", false)],
            None,
        ),
    );
    let (input2, cached, written) = figures(&second);
    assert_eq!((cached, written), (input1, input2 - input1));
    // 3: the last message changed: back to request 1's breakpoint (the assistant message it
    // still shares is not read), and the server's diagnosis against request 2.
    let third = post(
        &base,
        &body(
            vec![user("Q1", false), assistant("A1"), user("Q3", false)],
            Some(serde_json::json!({"comparison_response_id": second["id"]})),
        ),
    );
    let (input3, cached, written) = figures(&third);
    assert_eq!((cached, written), (input1, input3 - input1));
    let diagnosis = &third["prompt_cache_diagnostics"];
    assert_eq!(
        (&diagnosis["type"], &diagnosis["reason"]),
        (
            &serde_json::json!("cache_miss"),
            &serde_json::json!("input_changed")
        )
    );
    assert_eq!(
        diagnosis["cache_missed_tokens"].as_i64().expect("missed")
            + diagnosis["comparison_reusable_tokens"]
                .as_i64()
                .expect("reusable"),
        input3
    );
    // 4: explicit mode without a breakpoint: nothing read or written.
    let fourth = post(
        &base,
        &body(
            vec![user("Q1", false), assistant("A1"), user("Q2", false)],
            Some(serde_json::json!({"mode": "explicit"})),
        ),
    );
    let (_, cached, written) = figures(&fourth);
    assert_eq!((cached, written), (0, 0));
    // 5: explicit mode, a breakpoint on a first message no earlier request had: nothing read,
    // the breakpoint written — up to it, not past it.
    let explicit = |answer: &str| {
        body(
            vec![user("Q5", true), assistant(answer)],
            Some(serde_json::json!({"mode": "explicit"})),
        )
    };
    let fifth = post(&base, &explicit("A9"));
    let (input5, cached, written) = figures(&fifth);
    assert_eq!(cached, 0, "{fifth}");
    assert!(written > 1024 && written < input5, "{fifth}");
    // 5b: the same breakpoint, another answer after it: read, nothing new written.
    let again = post(&base, &explicit("A8"));
    let (_, cached, rewritten) = figures(&again);
    assert_eq!((cached, rewritten), (written, 0));
    // 6: a comparison id the stand-in never answered.
    let sixth = post(
        &base,
        &body(
            vec![user("Q1", false)],
            Some(serde_json::json!({"comparison_response_id": "resp_unknown"})),
        ),
    );
    assert_eq!(
        sixth["prompt_cache_diagnostics"],
        serde_json::json!({"type": "comparison_response_not_found"})
    );
}

/// (predicted read, predicted write) per request of every recorded session, in recorded order,
/// by the simulator with the stand-in's model for the slug Codex sends.
fn predictions(db: &Path, model: &str) -> Vec<(u64, u64)> {
    use promptwire::core::ledger::models::CacheModelRow;
    use promptwire::core::ledger::{self, CacheKind, CacheModels, Rules};
    use promptwire::core::prefix::Session;
    let store = Store::open(db).expect("db");
    let mut session = Session::default();
    for s in &store.list_sessions(Page::ALL).expect("sessions") {
        promptwire::store::prefix_input::push_stored_session(&mut session, &store, s.id)
            .expect("stored session");
    }
    let kind = match model {
        "prefix" => CacheKind::Prefix,
        _ => CacheKind::Breakpoints,
    };
    let models = CacheModels {
        models: vec![CacheModelRow::new("gpt-5.6-sol", kind)],
    };
    let rules = Rules {
        cache_models: models,
        ..Rules::bundled()
    };
    ledger::ledger(&session, &rules)
        .rows
        .iter()
        .map(|r| {
            (
                r.prediction.predicted.read_tokens,
                r.prediction.predicted.write_tokens,
            )
        })
        .collect()
}

/// Three Codex turns through `record` against the caching stand-in, under each model: for
/// every request the simulator's predicted read / written tokens are the stand-in's
/// `cached_tokens` / `cache_write_tokens` (0 when it reports none: the prefix model's writes
/// are free). Needs the stand-in to count o200k_base (Python `tiktoken`, which `.ci/run`
/// installs into the `PROMPTWIRE_PYTHON` virtualenv), as the simulator does.
#[test]
fn cache_standin_predictions_equal_what_the_standin_reported() {
    let Some(bin) = codex_bin() else {
        return;
    };
    for model in ["breakpoints", "prefix"] {
        let (recorded, reported, db, tokens) = record_turns(
            &bin,
            &format!("cache-predict-{model}"),
            model,
            &["Say hello.", "Say it again.", "And once more."],
        );
        if tokens != "o200k_base" {
            support::shared::skip(
                "the stand-in counts bytes/4 (no Python tiktoken): its figures cannot equal o200k predictions",
            );
            return;
        }
        assert_eq!(recorded, reported, "{model}");
        assert!(reported.len() >= 3, "{model}: {reported:?}");
        let server: Vec<(u64, u64)> = reported
            .iter()
            .map(|r| {
                (
                    u64::try_from(r.2.unwrap_or(-1)).expect("cached"),
                    u64::try_from(r.3).expect("written"),
                )
            })
            .collect();
        assert_eq!(predictions(&db, model), server, "{model}");
    }
}
