//! The real Codex CLI (0.171, `PROMPTWIRE_CODEX_BIN`) through `promptwire record` against
//! `tools/standin_upstream.py --cache breakpoints|prefix`, a stand-in that keeps a prompt cache
//! by one of the two models of WIRE_SPEC §19.1 and reports `cached_tokens` /
//! `cache_write_tokens` as the server would: two turns (`codex exec`, then `exec resume
//! --last`), and what the recording holds for each request — its response id, input, cached and
//! cache-write tokens — is exactly what the stand-in reported (its `usage.jsonl`). The second
//! turn reads the first one's cache under both models; only the breakpoint model reports writes.

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

/// Starts the stand-in with `--cache model`, recording into `dir`: (process, base URL, the
/// token counter it says it uses).
fn start_standin(dir: &Path, model: &str) -> (Server, String, String) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/standin_upstream.py");
    let mut child = Command::new("python3")
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
    let first: Vec<&str> = model_flag.iter().copied().chain(["Say hello."]).collect();
    assert_ok(&codex(bin, &home, &work, &first), "codex exec");
    let second: Vec<&str> = ["resume", "--last"]
        .into_iter()
        .chain(model_flag)
        .chain(["Say it again."])
        .collect();
    assert_ok(&codex(bin, &home, &work, &second), "codex exec resume");
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
    (recorded, reported)
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
