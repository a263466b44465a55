//! The anatomy (issue 30) on real Codex traffic: our own captures of Codex CLI 0.171
//! (tests/data/codex-0.171) and the real rollouts of ../shared (fails under `CI=true` without
//! them). Each request's parts add up to the ledger's tokens, by source and part by part; the
//! unused tools are exactly the offered tools the session never calls; a compaction is found
//! with its before and after, its cost and its re-warm, and close compactions are a loop; the
//! CLI prints the library's anatomy; agents come from the headers and bodies (a captured
//! subagent), and its rollouts import as linked sessions.

use crate::support;

use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use promptwire::core::anatomy::{self, Anatomy, Compaction};
use promptwire::core::ledger::{self, Ledger, Rules};
use promptwire::core::models::ModelCatalog;
use promptwire::core::prefix::{RequestMeta, Session};
use promptwire::core::rollout::Limits;
use promptwire::store::{DEFAULT_MAX_ROLLOUT_BYTES, Page, Store};
use serde_json::{Value, json};
use support::shared::shared_fixtures;

fn data(case: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/codex-0.171")
        .join(case)
}

fn bodies(case: &str, names: &[&str]) -> Vec<PathBuf> {
    names.iter().map(|n| data(case).join(n)).collect()
}

/// The session of `files` (bodies in order), its ledger and anatomy.
fn analyse(files: &[PathBuf]) -> (Session, Ledger, Anatomy) {
    let mut session = Session::default();
    for f in files {
        let body: Value = serde_json::from_slice(&std::fs::read(f).expect("body")).expect("json");
        session
            .push_body(&body, RequestMeta::default())
            .expect("push");
    }
    let ledger = ledger::ledger(&session, &Rules::bundled());
    let anatomy = anatomy::with_catalog(&session, &ledger, &ModelCatalog::bundled());
    (session, ledger, anatomy)
}

/// Every request's sources, and its parts, add up to the ledger's tokens.
fn assert_adds_up(ledger: &Ledger, anatomy: &Anatomy, what: &str) {
    assert_eq!(anatomy.requests.len(), ledger.rows.len(), "{what}");
    for (r, row) in anatomy.requests.iter().zip(&ledger.rows) {
        assert_eq!(
            (r.index, r.by_source.total(), r.tokens),
            (row.index, row.tokens, row.tokens),
            "{what}: request {} by source",
            row.index
        );
        let parts = anatomy::parts(ledger, r);
        let (tokens, cached) = parts
            .iter()
            .fold((0, 0), |(t, c), p| (t + p.tokens, c + p.cached_tokens));
        assert_eq!(
            (tokens, cached),
            (row.tokens, r.cached),
            "{what}: request {} part by part",
            row.index
        );
    }
}

#[test]
fn a_tool_call_session_adds_up_and_names_its_unused_tools() {
    let files = bodies(
        "standard-gpt-5.5-tool-call",
        &["req_00.json", "req_01.json"],
    );
    let (_, ledger, anatomy) = analyse(&files);
    assert_adds_up(&ledger, &anatomy, "tool call");
    let tools: Vec<(&str, bool, usize)> = anatomy
        .tools
        .iter()
        .map(|t| (t.name.as_str(), t.called, t.offered_in))
        .collect();
    assert_eq!(
        tools,
        vec![
            ("exec_command", true, 2),
            ("write_stdin", false, 2),
            ("request_user_input", false, 2),
            ("apply_patch", false, 2),
            ("view_image", false, 2),
            ("get_goal", false, 2),
            ("create_goal", false, 2),
            ("update_goal", false, 2),
            ("tool_search", false, 2),
            ("web_search", false, 2),
        ]
    );
    // The unused tools are exactly the offered tools never called (largest first), each with its
    // definition's tokens in every request.
    let mut unused: Vec<(String, u64, u64)> = anatomy
        .findings
        .unused_tools
        .iter()
        .map(|t| (t.name.clone(), t.tokens_per_request, t.tokens_total))
        .collect();
    let mut expected: Vec<(String, u64, u64)> = anatomy
        .tools
        .iter()
        .enumerate()
        .filter(|(_, t)| !t.called)
        .map(|(k, t)| {
            let per: Vec<u64> = anatomy
                .requests
                .iter()
                .filter_map(|r| r.tools.iter().find(|u| u.tool as usize == k))
                .map(|u| u.tokens)
                .collect();
            (t.name.clone(), per[per.len() - 1], per.iter().sum())
        })
        .collect();
    expected.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
    unused.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
    assert_eq!(unused, expected);
    assert_eq!(unused.len(), 9);
    // The one tool output: the exec_command call's, at input item 6 of the second request.
    let outputs: Vec<(String, usize, usize, String, usize)> = anatomy
        .findings
        .largest_outputs
        .iter()
        .map(|o| {
            (
                o.tool.clone(),
                o.request,
                o.item,
                o.pointer.clone(),
                o.carried_by,
            )
        })
        .collect();
    assert_eq!(
        outputs,
        vec![("exec_command".into(), 1, 6, "/input/6/output".into(), 1)]
    );
    assert!(anatomy.compactions.is_empty());
    // gpt-5.5's window from the bundled catalog, and 90 % of it.
    assert_eq!(
        (anatomy.context_window, anatomy.auto_compact_tokens),
        (Some(272_000), Some(244_800))
    );
}

#[test]
fn the_cli_prints_the_librarys_anatomy() {
    let files = bodies(
        "standard-gpt-5.5-tool-call",
        &["req_00.json", "req_01.json"],
    );
    let (_, ledger, anatomy) = analyse(&files);
    let args: Vec<&str> = ["anatomy", "--json"]
        .into_iter()
        .chain(files.iter().map(|f| f.to_str().expect("utf-8")))
        .collect();
    let out = support::cli::run(&args, None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: Value = serde_json::from_slice(&out.stdout).expect("json");
    let requests: Vec<Value> = anatomy
        .requests
        .iter()
        .map(|r| {
            json!({
                "index": r.index,
                "kind": r.kind,
                "model": r.model,
                "tokens": r.tokens,
                "cached": r.cached,
                "by_source": r.by_source,
                "tools": r.tools.iter().map(|u| {
                    let t = &anatomy.tools[u.tool as usize];
                    json!({"name": t.name, "tokens": u.tokens, "called": t.called})
                }).collect::<Vec<_>>(),
            })
        })
        .collect();
    assert_eq!(got["requests"], json!(requests));
    assert_eq!(got["tools_unused"], json!(anatomy.findings.unused_tools));
    assert_eq!(got["compactions"], json!([]));
    // One agent: the thread the bodies' client_metadata names, with the ledger's figures.
    let thread = "01a22d2e-1e12-7572-a9bb-3a07cdc8e803";
    let paid: f64 = ledger
        .rows
        .iter()
        .filter_map(|r| r.cost_usd)
        .map(|d| d.paid)
        .sum();
    let agents = got["agents"].as_array().expect("agents");
    assert_eq!(agents.len(), 1);
    assert_eq!(
        (
            &agents[0]["thread"],
            &agents[0]["parent"],
            &agents[0]["kind"],
            &agents[0]["requests"],
            &agents[0]["tokens"],
        ),
        (
            &json!(thread),
            &Value::Null,
            &Value::Null,
            &json!(2),
            &json!(ledger.rows.iter().map(|r| r.input_tokens()).sum::<u64>()),
        )
    );
    let cost = agents[0]["cost_usd"].as_f64().expect("priced");
    assert!((cost - paid).abs() < 1e-9, "{cost} vs {paid}");
    // One request's parts: the same as the library's.
    let out = support::cli::run(&[&args[..], &["--request", "1"]].concat(), None);
    let got: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        got["parts"],
        json!(anatomy::parts(&ledger, &anatomy.requests[1]))
    );
}

#[test]
fn a_compaction_is_found_with_its_before_after_cost_and_rewarm() {
    let files = bodies("compaction-model-switch", &["req_00.json", "req_01.json"]);
    let (_, ledger, anatomy) = analyse(&files);
    assert_adds_up(&ledger, &anatomy, "compaction");
    let (c, after) = (&ledger.rows[0], &ledger.rows[1]);
    assert_eq!(
        anatomy.compactions,
        vec![Compaction {
            index: 0,
            recorded: true,
            tokens_before: c.input_tokens(),
            tokens_after: Some(after.input_tokens()),
            after: Some(1),
            cost_usd: c.cost_usd.map(|d| d.paid),
            read_tokens: Some(c.read_tokens()),
            rewarm_tokens: after.write_tokens() + after.uncached_tokens(),
            rewarm_usd: after.cost_usd.map(|d| d.paid),
            rewarm_requests: 1,
            in_loop: false,
        }]
    );
    // The compaction request offers no tools; its checkpoint message is compaction.
    assert_eq!(anatomy.requests[0].tools, vec![]);
    assert!(
        anatomy.requests[0]
            .by_source
            .get(anatomy_source("compaction"))
            > 0
    );
    // Compacting again one turn later is a loop: both compactions are flagged.
    let looped = bodies(
        "compaction-model-switch",
        &["req_00.json", "req_01.json", "req_00.json", "req_01.json"],
    );
    let (_, _, anatomy) = analyse(&looped);
    let flags: Vec<(usize, bool)> = anatomy
        .compactions
        .iter()
        .map(|c| (c.index, c.in_loop))
        .collect();
    assert_eq!(flags, vec![(0, true), (2, true)]);
}

fn anatomy_source(name: &str) -> promptwire::core::ledger::Source {
    *promptwire::core::ledger::Source::ALL
        .iter()
        .find(|s| s.as_str() == name)
        .expect("a source")
}

#[test]
fn real_rollouts_add_up_and_their_compactions_are_found() {
    let Some(dir) = shared_fixtures("real-rollouts") else {
        return;
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("real-rollouts")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    assert!(files.len() >= 30, "{} rollouts", files.len());
    let db = support::scratch("rollouts").join("a.sqlite");
    let mut store = Store::open(&db).expect("store");
    let mut found = Vec::new();
    let mut expected = Vec::new();
    for file in &files {
        let before = store.list_sessions(Page::ALL).expect("sessions").len();
        store
            .import_rollout_file(file, DEFAULT_MAX_ROLLOUT_BYTES, &Limits::default())
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let sessions = store.list_sessions(Page::ALL).expect("sessions");
        assert_eq!(sessions.len(), before + 1, "{}", file.display());
        let id = sessions.iter().map(|s| s.id).max().expect("id");
        let mut session = Session::default();
        promptwire::store::prefix_input::push_stored_session(&mut session, &store, id)
            .expect("stored");
        let ledger = ledger::ledger(&session, &Rules::bundled());
        let anatomy = anatomy::with_catalog(&session, &ledger, &ModelCatalog::bundled());
        let name = file.display().to_string();
        assert_adds_up(&ledger, &anatomy, &name);
        let text = std::fs::read_to_string(file).expect("rollout");
        let compacted = text
            .lines()
            .filter(|l| l.contains(r#""type":"compacted""#))
            .count();
        expected.push((name.clone(), compacted));
        found.push((name.clone(), anatomy.compactions.len()));
        for c in &anatomy.compactions {
            let after = c.tokens_after.expect("a turn after it");
            assert!(
                after * 4 < c.tokens_before,
                "{name}: compaction at {} kept {after} of {} tokens",
                c.index,
                c.tokens_before
            );
        }
    }
    assert_eq!(found, expected);
    assert_eq!(expected.iter().map(|(_, n)| n).sum::<usize>(), 3);
}

/// Our capture of Codex 0.171 spawning a subagent (`subagent-collab-spawn`, HTTP): the tags its
/// headers carry, the agents the bodies make (the child's request its own agent under the
/// root, its tokens added to the root's totals), and its two rollouts imported as two linked
/// sessions.
#[test]
fn a_captured_subagent_is_tagged_and_linked() {
    use promptwire::core::anatomy::AgentTag;
    const ROOT: &str = "01a250c6-7bea-7823-a3bb-1ecb0acc575a";
    const CHILD: &str = "01a250c6-7d4f-7a11-a5bf-90617d24f9ac";
    let case = "subagent-collab-spawn";
    let tags: Vec<Option<AgentTag>> = ["req_00", "req_01", "req_02", "req_03"]
        .iter()
        .map(|n| {
            let captured: Value = serde_json::from_slice(
                &std::fs::read(data(case).join(format!("{n}.headers.json"))).expect("headers"),
            )
            .expect("json");
            let headers: Vec<(String, String)> = captured["headers"]
                .as_object()
                .expect("headers")
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect();
            AgentTag::from_request(headers.iter().map(|(k, v)| (k.as_str(), v.as_str())), None)
        })
        .collect();
    let root = AgentTag {
        thread: ROOT.into(),
        ..AgentTag::default()
    };
    let child = AgentTag {
        thread: CHILD.into(),
        parent: Some(ROOT.into()),
        kind: Some("collab_spawn".into()),
    };
    assert_eq!(
        tags,
        vec![
            Some(root.clone()),
            Some(root.clone()),
            Some(child.clone()),
            Some(root.clone())
        ]
    );

    // The CLI on the four bodies: two agents, by the threads the bodies name.
    let files = bodies(
        case,
        &["req_00.json", "req_01.json", "req_02.json", "req_03.json"],
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .arg("anatomy")
        .args(&files)
        .arg("--json")
        .output()
        .expect("anatomy");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed: Value = serde_json::from_slice(&out.stdout).expect("json");
    let (_, ledger, _) = analyse(&files);
    let tokens =
        |rows: &[usize]| -> u64 { rows.iter().map(|&i| ledger.rows[i].input_tokens()).sum() };
    let shape: Vec<Value> = printed["agents"]
        .as_array()
        .expect("agents")
        .iter()
        .map(|a| {
            json!([
                a["thread"],
                a["parent"],
                a["kind"],
                a["depth"],
                a["requests"],
                a["tokens"],
                a["total"]["requests"],
                a["total"]["tokens"]
            ])
        })
        .collect();
    assert_eq!(
        shape,
        vec![
            json!([
                ROOT,
                null,
                null,
                0,
                3,
                tokens(&[0, 1, 3]),
                4,
                tokens(&[0, 1, 2, 3])
            ]),
            json!([
                CHILD,
                ROOT,
                "collab_spawn",
                1,
                1,
                tokens(&[2]),
                1,
                tokens(&[2])
            ]),
        ]
    );

    // Its rollouts: two sessions, the child linked to the root, its kind from the session
    // source (`thread_spawn` is Codex's `collab_spawn`).
    let dir = support::scratch("anatomy-subagent-rollouts");
    let db = dir.join("r.sqlite");
    let mut store = Store::open(&db).expect("db");
    let report = store
        .import_rollout_dir(
            &data(case).join("rollouts"),
            DEFAULT_MAX_ROLLOUT_BYTES,
            &Limits::default(),
            &mut |_| {},
            &std::sync::atomic::AtomicBool::new(false),
        )
        .expect("import");
    assert_eq!(report.rollouts.len(), 2, "{report:?}");
    let sessions = store.list_sessions(Page::ALL).expect("list");
    let linked: Vec<(Option<AgentTag>, Option<i64>, i64)> = sessions
        .iter()
        .map(|s| (s.agent.clone(), s.parent_session, s.requests))
        .collect();
    let root_id = sessions
        .iter()
        .find(|s| s.agent.as_ref() == Some(&root))
        .expect("root session")
        .id;
    assert_eq!(
        linked,
        vec![(Some(child), Some(root_id), 1), (Some(root), None, 3)]
    );
    // Exported to OpenTelemetry, the child's spans go into the root's trace, under its span.
    let (child_facts, _) = store.otel_facts(sessions[0].id, false).expect("facts");
    let root_created = sessions[1].created_us;
    assert_eq!(
        child_facts.place,
        Some(promptwire::core::otel::AgentPlace {
            root: (root_id, root_created),
            parent: root_id
        })
    );
    let (root_facts, _) = store.otel_facts(root_id, false).expect("facts");
    assert_eq!(root_facts.place, None);
    assert_eq!(child_facts.trace_id(), root_facts.trace_id());
    assert_eq!(child_facts.span_ids().1, Some(root_facts.span_ids().0));
}
