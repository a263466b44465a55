//! Importing Codex rollouts into a real SQLite file: stored bodies and usage equal what the
//! rollout parser rebuilt (itself checked against the captured bodies in rollout_reconstruct),
//! imports are idempotent by thread id (a folder of 200 rollouts, twice), a folder import reports
//! progress and stops when cancelled, secrets are redacted, the source folder is never written,
//! and the CLI contract of `sessions import ROLLOUT|DIR` and of `sessions show` on an imported
//! rollout (what was recorded verbatim, what reconstructed, unknown lines, a cut last line).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, Ordering};

use pretty_assertions::assert_eq;
use promptwire::core::rollout::{Limits, parse};
use promptwire::store::{DEFAULT_MAX_ROLLOUT_BYTES, FolderProgress, Page, Store};
use serde_json::{Value, json};

// Shared with benches/rollout.rs; the test uses the folder helpers only.
#[allow(dead_code)]
#[path = "../../benches/support/rollout_folder.rs"]
mod rollout_folder;
use rollout_folder::{capture, captures, make_folder};

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("rollout_store")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Every file under `dir` with its bytes and modification time.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (Vec<u8>, std::time::SystemTime)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d)
            .expect("read dir")
            .filter_map(Result::ok)
        {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let meta = std::fs::metadata(&p).expect("meta");
                out.insert(
                    p.clone(),
                    (
                        std::fs::read(&p).expect("read"),
                        meta.modified().expect("mtime"),
                    ),
                );
            }
        }
    }
    out
}

#[test]
fn stored_sessions_equal_the_parsed_rollouts() {
    let dir = scratch("equal");
    let db = dir.join("db.sqlite");
    let mut store = Store::open(&db).expect("db");
    let before: Vec<_> = captures()
        .iter()
        .map(|p| snapshot(p.parent().expect("dir")))
        .collect();
    for path in captures() {
        let imports = store
            .import_rollout_file(&path, DEFAULT_MAX_ROLLOUT_BYTES, &Limits::default())
            .expect("import");
        assert_eq!(imports.len(), 1);
        let import = &imports[0];
        let bytes = std::fs::read(&path).expect("read");
        let parsed = parse(&bytes, &Limits::default()).expect("parse");
        let session = &parsed.sessions[0];
        assert_eq!(
            (import.thread_id.as_str(), import.requests, import.skipped),
            (session.thread_id.as_str(), session.requests.len(), false)
        );
        let id = import.session_id.expect("a session");
        let stored = store.requests(id, Page::ALL).expect("requests");
        assert_eq!(stored.len(), session.requests.len());
        for (row, request) in stored.iter().zip(&session.requests) {
            let body = store.body(row.id).expect("body");
            let expected = session.body(request);
            assert_eq!(body.value.as_ref(), Some(&expected));
            assert_eq!(body.bytes, serde_json::to_vec(&expected).expect("bytes"));
            assert_eq!(row.body_bytes as usize, body.bytes.len());
            let outcome = store.outcome(row.id).expect("outcome").expect("usage");
            assert_eq!(
                outcome.usage,
                Some(serde_json::to_value(request.usage).expect("usage"))
            );
            assert_eq!(outcome.response_id, request.response_id);
            let record = store.request(row.id).expect("record");
            let rollout = &record.extra.expect("extra")["rollout"];
            assert_eq!(
                (
                    &rollout["reconstructed_items"],
                    &rollout["thread_id"],
                    &rollout["kind"]
                ),
                (
                    &json!(request.reconstructed_items),
                    &json!(session.thread_id),
                    &serde_json::to_value(request.kind).expect("kind")
                )
            );
            assert_eq!(row.started_us, request.sent_at_ms.map(|ms| ms * 1000));
        }
        // Again: the thread is known, nothing is written.
        let again = store
            .import_rollout_file(&path, DEFAULT_MAX_ROLLOUT_BYTES, &Limits::default())
            .expect("again");
        assert_eq!((again[0].skipped, again[0].session_id), (true, None));
    }
    assert_eq!(store.list_sessions(Page::ALL).expect("list").len(), 3);
    let after: Vec<_> = captures()
        .iter()
        .map(|p| snapshot(p.parent().expect("dir")))
        .collect();
    assert!(before == after, "the rollout folders were not touched");
}

#[test]
fn folder_import_of_200_rollouts_is_idempotent_and_reports_progress() {
    let dir = scratch("folder");
    let sessions_dir = dir.join("codex-home/sessions");
    make_folder(&sessions_dir, 200);
    let before = snapshot(&sessions_dir);
    let mut store = Store::open(dir.join("db.sqlite")).expect("db");
    let never = AtomicBool::new(false);
    let mut seen = Vec::new();
    let report = store
        .import_rollout_dir(
            &sessions_dir,
            DEFAULT_MAX_ROLLOUT_BYTES,
            &Limits::default(),
            &mut |p| seen.push(p.clone()),
            &never,
        )
        .expect("import");
    assert_eq!(report.failed, vec![]);
    assert!(!report.cancelled);
    assert_eq!(report.rollouts.iter().filter(|r| !r.skipped).count(), 200);
    assert_eq!(seen.len(), 200);
    assert_eq!(
        seen.last(),
        Some(&FolderProgress {
            done: 200,
            total: 200,
            imported: 200,
            skipped: 0,
            failed: 0
        })
    );
    assert!(seen.windows(2).all(|w| w[1].done == w[0].done + 1));
    let listed = store.list_sessions(Page::ALL).expect("list");
    assert_eq!(listed.len(), 200);
    let requests: i64 = listed.iter().map(|s| s.requests).sum();
    // Copies of the three captures in turn: 7, 5 and 8 requests.
    assert_eq!(requests, 67 * 7 + 67 * 5 + 66 * 8);

    // The second run imports nothing.
    let mut seen = Vec::new();
    let again = store
        .import_rollout_dir(
            &sessions_dir,
            DEFAULT_MAX_ROLLOUT_BYTES,
            &Limits::default(),
            &mut |p| seen.push(p.clone()),
            &never,
        )
        .expect("again");
    assert_eq!(again.rollouts.iter().filter(|r| r.skipped).count(), 200);
    assert_eq!(
        seen.last(),
        Some(&FolderProgress {
            done: 200,
            total: 200,
            imported: 0,
            skipped: 200,
            failed: 0
        })
    );
    assert_eq!(store.list_sessions(Page::ALL).expect("list").len(), 200);
    assert!(
        before == snapshot(&sessions_dir),
        "the folder was not touched"
    );
}

#[test]
fn cancel_stops_between_files_and_a_later_run_finishes() {
    let dir = scratch("cancel");
    let sessions_dir = dir.join("sessions");
    make_folder(&sessions_dir, 12);
    let mut store = Store::open(dir.join("db.sqlite")).expect("db");
    let cancel = AtomicBool::new(false);
    let report = store
        .import_rollout_dir(
            &sessions_dir,
            DEFAULT_MAX_ROLLOUT_BYTES,
            &Limits::default(),
            &mut |p| {
                if p.done == 5 {
                    cancel.store(true, Ordering::Relaxed);
                }
            },
            &cancel,
        )
        .expect("import");
    assert!(report.cancelled);
    assert_eq!(report.rollouts.len(), 5);
    assert_eq!(store.list_sessions(Page::ALL).expect("list").len(), 5);
    let never = AtomicBool::new(false);
    let rest = store
        .import_rollout_dir(
            &sessions_dir,
            DEFAULT_MAX_ROLLOUT_BYTES,
            &Limits::default(),
            &mut |_| {},
            &never,
        )
        .expect("rest");
    let counts = (
        rest.rollouts.iter().filter(|r| r.skipped).count(),
        rest.rollouts.iter().filter(|r| !r.skipped).count(),
    );
    assert_eq!(counts, (5, 7));
    assert_eq!(store.list_sessions(Page::ALL).expect("list").len(), 12);
}

#[test]
fn secrets_in_a_rollout_are_redacted() {
    let dir = scratch("secrets");
    let key = "sk-proj-Abc123Def456Ghi789Jkl";
    let source = capture("0.171-standard");
    let text = std::fs::read_to_string(source).expect("read");
    let text = text.replacen(
        "list the files here",
        &format!("list the files here, my key is {key}"),
        1,
    );
    assert!(text.contains(key));
    let path = dir.join("rollout-2026-11-30T16-01-25-01a22d30-89fc-70b3-b345-55a7c2d15602.jsonl");
    std::fs::write(&path, &text).expect("write");
    let db = dir.join("db.sqlite");
    {
        let mut store = Store::open(&db).expect("db");
        let imports = store
            .import_rollout_file(&path, DEFAULT_MAX_ROLLOUT_BYTES, &Limits::default())
            .expect("import");
        let id = imports[0].session_id.expect("session");
        let first = store.requests(id, Page::ALL).expect("requests")[0].id;
        let body = store.body(first).expect("body").value.expect("json");
        let texts: Vec<Value> = body["input"]
            .as_array()
            .expect("input")
            .iter()
            .filter_map(|i| i.pointer("/content/0/text").cloned())
            .filter(|t| t.as_str().is_some_and(|s| s.starts_with("list the files")))
            .collect();
        assert_eq!(
            texts,
            vec![json!("list the files here, my key is sk-<redacted>")]
        );
    }
    for suffix in ["", "-wal"] {
        let file = PathBuf::from(format!("{}{suffix}", db.display()));
        if let Ok(bytes) = std::fs::read(&file) {
            assert!(
                !bytes.windows(key.len()).any(|w| w == key.as_bytes()),
                "{} holds the key",
                file.display()
            );
        }
    }
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .args(args)
        .output()
        .expect("run promptwire")
}

#[test]
fn cli_imports_a_rollout_or_a_folder() {
    let dir = scratch("cli");
    let db = dir.join("db.sqlite");
    let db_arg = db.display().to_string();
    let file = captures()[0].display().to_string();
    let out = run(&["sessions", "import", &file, "--db", &db_arg, "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let value: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        value,
        json!({"rollouts": [{
            "path": file, "thread_id": "01a22d30-d7ba-7da0-aea2-5bd89727c902", "session": 1,
            "requests": 7, "skipped": false, "appended": 0, "unknown_lines": 0,
            "truncated_line": null
        }], "failed": []})
    );
    // The folder: the first thread is skipped, the others imported; progress on stderr.
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rollouts");
    let out = run(&[
        "sessions",
        "import",
        &folder.display().to_string(),
        "--db",
        &db_arg,
    ]);
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let (lite, standard) = (
        capture("0.171-lite").display().to_string(),
        capture("0.171-standard").display().to_string(),
    );
    assert_eq!(
        stdout,
        format!(
            "skipped {file}: thread 01a22d30-d7ba-7da0-aea2-5bd89727c902 was imported before, nothing new\n\
             imported session 2 (5 requests) from {lite}\n\
             imported session 3 (8 requests) from {standard}\n\
             2 imported, 1 skipped, 0 failed\n"
        )
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "importing rollouts: 1/3 (0 imported, 1 skipped, 0 failed)\n\
         importing rollouts: 2/3 (1 imported, 1 skipped, 0 failed)\n\
         importing rollouts: 3/3 (2 imported, 1 skipped, 0 failed)\n"
    );
    // A broken rollout: exit 1, one line naming the file and the line.
    let bad = dir.join("rollout-bad.jsonl");
    let first_line = std::fs::read_to_string(&captures()[0])
        .expect("read")
        .lines()
        .next()
        .expect("line")
        .to_string();
    std::fs::write(&bad, format!("{first_line}\n{{oops\n{first_line}\n")).expect("write");
    let out = run(&[
        "sessions",
        "import",
        &bad.display().to_string(),
        "--db",
        &db_arg,
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(out.stdout, b"");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        stderr,
        format!(
            "promptwire: line 2: not JSON (key must be a string at line 1 column 2): {}\n",
            bad.display()
        )
    );
}

#[test]
fn a_resume_in_a_linked_file_continues_the_same_session() {
    let dir = scratch("linked");
    let source = capture("0.171-standard");
    let text = std::fs::read_to_string(source).expect("read");
    let lines: Vec<&str> = text.lines().collect();
    // Split where the resumed turn starts (the second task_started); the linked file starts
    // with the thread's session_meta again.
    let cut = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.contains("\"type\":\"task_started\""))
        .nth(1)
        .map(|(i, _)| i)
        .expect("a resumed turn");
    let day = dir.join("sessions/2026/11/30");
    std::fs::create_dir_all(&day).expect("mkdir");
    let thread = "01a22d30-89fc-70b3-b345-55a7c2d15602";
    std::fs::write(
        day.join(format!("rollout-2026-11-30T16-01-25-{thread}.jsonl")),
        lines[..cut].join("\n") + "\n",
    )
    .expect("write");
    std::fs::write(
        day.join(format!("rollout-2026-11-30T16-05-00-{thread}.jsonl")),
        [lines[0]]
            .iter()
            .chain(&lines[cut..])
            .copied()
            .collect::<Vec<_>>()
            .join("\n")
            + "\n",
    )
    .expect("write");
    let mut store = Store::open(dir.join("db.sqlite")).expect("db");
    let never = AtomicBool::new(false);
    let report = store
        .import_rollout_dir(
            &dir.join("sessions"),
            DEFAULT_MAX_ROLLOUT_BYTES,
            &Limits::default(),
            &mut |_| {},
            &never,
        )
        .expect("import");
    assert_eq!(report.rollouts.len(), 1);
    let id = report.rollouts[0].session_id.expect("session");
    let whole = parse(text.as_bytes(), &Limits::default()).expect("parse");
    let session = &whole.sessions[0];
    let stored = store.requests(id, Page::ALL).expect("requests");
    let bodies: Vec<Value> = stored
        .iter()
        .map(|r| store.body(r.id).expect("body").value.expect("json"))
        .collect();
    let expected: Vec<Value> = session.requests.iter().map(|r| session.body(r)).collect();
    assert_eq!(bodies, expected);
}

/// `sessions show` says, under each imported request, what was recorded verbatim and what
/// reconstructed, and under the first the file's unknown lines and truncated last line.
#[test]
fn sessions_show_says_what_was_reconstructed() {
    let dir = scratch("show");
    let db = dir.join("db.sqlite").display().to_string();
    let source = capture("0.171-standard");
    let mut lines: Vec<String> = std::fs::read_to_string(&source)
        .expect("read")
        .lines()
        .map(str::to_string)
        .collect();
    lines.insert(
        3,
        r#"{"timestamp":"2026-11-30T16:01:25.600Z","type":"future_thing","payload":{"x":1}}"#
            .to_string(),
    );
    let cut = lines.last().expect("a line")[..40].to_string();
    lines.push(cut);
    let file = dir.join("rollout-2026-11-30T16-01-25-variant.jsonl");
    std::fs::write(&file, lines.join("\n")).expect("write");
    let path = file.display().to_string();
    let out = run(&["sessions", "import", &path, "--db", &db]);
    assert_eq!(out.status.code(), Some(0));
    let out = run(&["sessions", "show", "1", "--db", &db]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let shown: Vec<&str> = stdout.lines().collect();
    let block = |n: usize| -> Vec<String> {
        let start = shown
            .iter()
            .position(|l| l.starts_with(&format!("  #{n:<4} ")))
            .expect("the request's row");
        shown[start + 1..]
            .iter()
            .take_while(|l| !l.starts_with("  #"))
            .map(|l| l.to_string())
            .collect()
    };
    let rule = "        item rule: internal_chat_message_metadata_passthrough: dropped: passthrough metadata is only sent to the OpenAI provider";
    assert_eq!(
        block(0),
        vec![
            "        usage: 9,519 input (0 cached) · 40 output".to_string(),
            format!("        Codex rollout {path} line 14 (Codex 0.171.0), turn call, rebuilt under rules codex-0.171"),
            "        recorded verbatim: input 1-3 (rollout items), model (turn_context), usage (token_usage_record)".to_string(),
            "        reconstructed items: input[0] base-instructions message (session_meta, compiled id)".to_string(),
            "        reconstructed fields: include, parallel_tool_calls, prompt_cache_key, reasoning, store, stream, text, tool_choice (rules codex-0.171 with the model catalog)".to_string(),
            rule.to_string(),
            "        not recorded: tools, client_metadata".to_string(),
            "        unknown lines kept: 1 (stored with the first request)".to_string(),
            "          line 4: future_thing".to_string(),
            format!("        truncated: line {} (40 bytes) is incomplete (the session was still being written); imported what is complete", lines.len()),
        ]
    );
    // The compaction call: its handoff prompt is reconstructed, its tools are the rule's `[]`.
    assert_eq!(
        block(5),
        vec![
            "        usage: 8,536 input (7,808 cached) · 48 output".to_string(),
            format!("        Codex rollout {path} line 60 (Codex 0.171.0), compaction call, rebuilt under rules codex-0.171"),
            "        recorded verbatim: input 1-19 (rollout items), model (turn_context), usage (token_usage_record)".to_string(),
            "        reconstructed items: input[0] base-instructions message (session_meta, compiled id), input[20] compaction prompt (Codex's fixed text)".to_string(),
            "        reconstructed fields: include, parallel_tool_calls, prompt_cache_key, reasoning, store, stream, text, tool_choice, tools (rules codex-0.171 with the model catalog)".to_string(),
            rule.to_string(),
            "        not recorded: client_metadata".to_string(),
        ]
    );
    // A Lite call records its whole prefix: nothing of its input is reconstructed.
    assert_eq!(
        block(7)[2..4].to_vec(),
        vec![
            "        recorded verbatim: input 0-10 (rollout items), model (turn_context), usage (token_usage_record)".to_string(),
            "        reconstructed items: none".to_string(),
        ]
    );
}

/// A rollout imported while Codex was still writing it, then again when the thread is done:
/// the second import appends the turns the file gained (once: a third import adds nothing), and
/// the session then equals a fresh import of the finished file, request by request.
#[test]
fn a_rollout_imported_half_written_gains_its_later_turns() {
    let dir = scratch("grown");
    let full = captures()[0].clone();
    let text = std::fs::read_to_string(&full).expect("rollout");
    let lines: Vec<&str> = text.lines().collect();
    let name = full.file_name().expect("name");
    let growing = dir.join(name);
    // Half of it, the last line cut in the middle (as a reader sees a file being written).
    let half = lines.len() / 2;
    let mut partial = lines[..half].join("\n");
    partial.push('\n');
    partial.push_str(&lines[half][..lines[half].len() / 2]);
    std::fs::write(&growing, &partial).expect("write");
    let db = dir.join("db.sqlite");
    let db_arg = db.display().to_string();
    let path = growing.display().to_string();
    let import = || {
        let out = run(&["sessions", "import", &path, "--db", &db_arg, "--json"]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let value: Value = serde_json::from_slice(&out.stdout).expect("json");
        let r = &value["rollouts"][0];
        (
            r["session"].clone(),
            r["requests"].clone(),
            r["appended"].clone(),
            r["skipped"].clone(),
        )
    };
    let first = import();
    let before = first.1.as_u64().expect("requests");
    assert!(before > 0 && before < 7, "{first:?}");
    std::fs::write(&growing, &text).expect("finish");
    assert_eq!(
        import(),
        (json!(1), json!(0), json!(7 - before), json!(false))
    );
    assert_eq!(import(), (Value::Null, json!(0), json!(0), json!(true)));

    // The grown session holds what a fresh import of the finished file holds.
    let fresh = dir.join("fresh.sqlite");
    let mut store = Store::open(&fresh).expect("fresh");
    store
        .import_rollout_file(&growing, DEFAULT_MAX_ROLLOUT_BYTES, &Limits::default())
        .expect("import");
    drop(store);
    let rows = |db: &Path| -> Vec<(Value, Value, Option<Value>)> {
        let store = Store::open(db).expect("db");
        store
            .requests(1, Page::ALL)
            .expect("requests")
            .iter()
            .map(|r| {
                let body: Value =
                    serde_json::from_slice(&store.body(r.id).expect("body").bytes).expect("json");
                let line =
                    store.request(r.id).expect("request").extra.expect("extra")["rollout"]["line"]
                        .clone();
                let usage = store.outcome(r.id).expect("outcome").and_then(|o| o.usage);
                (line, body, usage)
            })
            .collect()
    };
    let grown = rows(&db);
    assert_eq!(grown.len(), 7);
    assert_eq!(grown, rows(&fresh));
}
