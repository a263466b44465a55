//! The ledger on request bodies captured from the real Codex CLI (tests/data/rollouts, made with
//! tools/standin_upstream.py): a sandbox change is appended and keeps the prefix; the compaction
//! request Codex sends before a model switch is a compaction (`context_compacted`, compared with
//! the turn before it: standard drops its tools, Lite raises its effort), never a tools change;
//! the rebuilt history after the switch is compared with the last turn before the compaction and
//! breaks at the model. Every row's verdict is compared whole.

use std::path::Path;

use pretty_assertions::assert_eq;
use promptwire::core::ledger::{self, Cause, Change, RowKind, Rules, Source};
use promptwire::core::prefix::{RequestMeta, Session};
use serde_json::Value;

/// (kind, previous, kept, (pointer, source, change) of the break, causes) of every row.
type Verdict = (
    RowKind,
    Option<usize>,
    bool,
    Option<(String, Source, Change)>,
    Vec<Cause>,
);

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
    let l = ledger::ledger(&session, &Rules::bundled());
    assert!(
        l.hazards.iter().all(|h| h.code != "tools_changed"),
        "{:?}",
        l.hazards
    );
    l.rows
        .iter()
        .map(|r| {
            let v = r.verdict.as_ref();
            (
                r.kind,
                r.previous,
                v.is_none_or(|v| v.prefix_kept),
                v.and_then(|v| v.divergence.as_ref())
                    .map(|d| (d.pointer.clone(), d.source, d.change)),
                v.map(|v| v.causes.clone()).unwrap_or_default(),
            )
        })
        .collect()
}

fn kept(kind: RowKind, previous: usize) -> Verdict {
    (kind, Some(previous), true, None, vec![])
}

#[test]
fn codex_0_171_standard_sandbox_change_then_switch_to_lite() {
    assert_eq!(
        verdicts("codex-0.171-standard-sandbox-switch-to-lite"),
        vec![
            (RowKind::First, None, true, None, vec![]),
            kept(RowKind::Turn, 0),
            kept(RowKind::Turn, 1),
            // Resumed with workspace-write: the new policy is appended, the prefix holds.
            kept(RowKind::Turn, 2),
            kept(RowKind::Turn, 3),
            // The compaction request drops the tools: expected, not a tools change.
            (
                RowKind::Compaction,
                Some(4),
                false,
                Some(("/tools".to_string(), Source::Tools, Change::Removed)),
                vec![Cause::ContextCompacted]
            ),
            // The rebuilt history on the Lite model, against the last turn before compaction.
            (
                RowKind::AfterCompaction,
                Some(4),
                false,
                Some((
                    "/reasoning/effort".to_string(),
                    Source::Other,
                    Change::Edited
                )),
                vec![
                    Cause::ModelChanged,
                    Cause::ReasoningEffortChanged,
                    Cause::ContextCompacted
                ]
            ),
            kept(RowKind::Turn, 6),
        ]
    );
}

#[test]
fn codex_0_169_lite_sandbox_change_then_switch_to_standard() {
    assert_eq!(
        verdicts("codex-0.169-lite-sandbox-switch-to-standard"),
        vec![
            (RowKind::First, None, true, None, vec![]),
            kept(RowKind::Turn, 0),
            kept(RowKind::Turn, 1),
            kept(RowKind::Turn, 2),
            kept(RowKind::Turn, 3),
            // Lite keeps its tools in input[0]; the compaction request raised the effort.
            (
                RowKind::Compaction,
                Some(4),
                false,
                Some((
                    "/reasoning/effort".to_string(),
                    Source::Other,
                    Change::Edited
                )),
                vec![Cause::ReasoningEffortChanged, Cause::ContextCompacted]
            ),
            // Standard gpt-5.5 after Lite: other tools (a flat list, not a namespace).
            (
                RowKind::AfterCompaction,
                Some(4),
                false,
                Some(("/tools/0/type".to_string(), Source::Tools, Change::Edited)),
                vec![Cause::ModelChanged, Cause::ContextCompacted]
            ),
        ]
    );
}

#[test]
fn codex_0_171_lite_resume_keeps_every_prefix() {
    let rows = verdicts("codex-0.171-lite-resume-same-model");
    let mut want = vec![(RowKind::First, None, true, None, vec![])];
    want.extend((1..rows.len()).map(|i| kept(RowKind::Turn, i - 1)));
    assert_eq!(rows, want);
}
