//! The prefix analysis on request bodies captured from the real Codex CLI (tests/data/rollouts,
//! made with tools/standin_upstream.py): a sandbox change is appended and keeps the prefix; the
//! compaction request Codex sends before a model switch is named `compaction_request` (standard:
//! its `tools: []` is the break; Lite: its raised reasoning effort); the rebuilt history after
//! the switch breaks at the model. Every pair's verdict is compared whole.

use std::path::Path;

use pretty_assertions::assert_eq;
use promptwire::core::prefix::{Break, BreakAt, Cause, ChangeKind, RequestMeta, Session, Warning};
use serde_json::Value;

/// (kept, break, causes, warnings) of every consecutive pair of a captured session.
type Verdict = (bool, Option<Break>, Vec<Cause>, Vec<Warning>);

fn verdicts(dir: &str) -> Vec<Verdict> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/rollouts")
        .join(dir);
    let mut session = Session::default();
    for n in 0.. {
        let Ok(bytes) = std::fs::read(dir.join(format!("req_{n:02}.json"))) else {
            break;
        };
        let body: Value = serde_json::from_slice(&bytes).expect("captured body");
        session
            .push_body(&body, RequestMeta::default())
            .expect("a usable body");
    }
    session
        .consecutive_pairs()
        .into_iter()
        .map(|p| (p.prefix_kept, p.break_at, p.causes, p.warnings))
        .collect()
}

fn kept(warnings: Vec<Warning>) -> Verdict {
    (true, None, vec![], warnings)
}

fn broken(at: BreakAt, path: &str, change: ChangeKind, causes: Vec<Cause>) -> Verdict {
    let brk = Break {
        at,
        index: None,
        path: Some(path.to_string()),
        change,
        also_changed: vec![],
    };
    (
        false,
        Some(brk),
        causes,
        vec![Warning::ClientMetadataChanged],
    )
}

/// The turn's metadata changes with each new turn (a resume is a new turn).
const NEW_TURN: Warning = Warning::ClientMetadataChanged;

#[test]
fn codex_0_171_standard_sandbox_change_then_switch_to_lite() {
    let switch = vec![
        Cause::ModelChanged,
        Cause::ReasoningChanged,
        Cause::DialectChanged,
        Cause::InputRewritten,
        Cause::CompactionRequest,
    ];
    assert_eq!(
        verdicts("codex-0.171-standard-sandbox-switch-to-lite"),
        vec![
            kept(vec![]),
            kept(vec![]),
            // Resumed with workspace-write: the new policy is appended, the prefix holds.
            kept(vec![NEW_TURN]),
            kept(vec![]),
            broken(
                BreakAt::Tools,
                "/tools/0",
                ChangeKind::Removed,
                vec![Cause::ToolsChanged, Cause::CompactionRequest]
            ),
            broken(BreakAt::Model, "/model", ChangeKind::Value, switch),
            kept(vec![]),
        ]
    );
}

#[test]
fn codex_0_169_lite_sandbox_change_then_switch_to_standard() {
    let switch = vec![
        Cause::ModelChanged,
        Cause::ReasoningChanged,
        Cause::DialectChanged,
        Cause::InputRewritten,
        Cause::CompactionRequest,
    ];
    assert_eq!(
        verdicts("codex-0.169-lite-sandbox-switch-to-standard"),
        vec![
            kept(vec![]),
            kept(vec![NEW_TURN]),
            kept(vec![]),
            kept(vec![]),
            // Lite keeps its tools in input[0]; the compaction request raised the effort.
            broken(
                BreakAt::Reasoning,
                "/reasoning/effort",
                ChangeKind::Value,
                vec![Cause::ReasoningChanged, Cause::CompactionRequest]
            ),
            broken(BreakAt::Model, "/model", ChangeKind::Value, switch),
        ]
    );
}
