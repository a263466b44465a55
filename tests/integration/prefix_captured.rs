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
            // Resumed with workspace-write: the new policy is appended, the prefix holds up to
            // the first turn's reasoning, which gpt-5.5's server no longer renders at a new
            // user turn (expected).
            (
                RowKind::Turn,
                Some(2),
                false,
                Some((
                    "/input/4/encrypted_content".to_string(),
                    Source::Reasoning,
                    Change::Edited
                )),
                vec![Cause::ReasoningDropped]
            ),
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

/// The same conversation as the bodies Codex sent and as its rollout (`sessions import`): the
/// same rows — kinds, the turn each is compared with, kept or broken, the causes — with the
/// rollout's tools marked not recorded (never compared, never blamed).
#[test]
fn a_rollout_gives_the_rows_of_the_bodies_it_records() {
    use promptwire::core::rollout::Limits;
    use promptwire::store::{DEFAULT_MAX_ROLLOUT_BYTES, Page, Store};
    for name in [
        "codex-0.171-standard-sandbox-switch-to-lite",
        "codex-0.169-lite-sandbox-switch-to-standard",
        "codex-0.171-lite-resume-same-model",
    ] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/rollouts")
            .join(name);
        let rollout = std::fs::read_dir(&dir)
            .expect("dir")
            .flatten()
            .map(|e| e.path())
            .find(|p| {
                p.extension().is_some_and(|x| x == "jsonl")
                    && p.to_string_lossy().contains("rollout-")
            })
            .expect("a rollout");
        let scratch =
            crate::support::module_scratch_root().join(format!("{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&scratch);
        std::fs::create_dir_all(&scratch).expect("dir");
        let mut store = Store::open(scratch.join("r.sqlite")).expect("db");
        store
            .import_rollout_file(&rollout, DEFAULT_MAX_ROLLOUT_BYTES, &Limits::default())
            .expect("import");
        let session = store.list_sessions(Page::ALL).expect("sessions")[0].id;
        let mut from_rollout = Session::default();
        promptwire::store::prefix_input::push_stored_session(&mut from_rollout, &store, session)
            .expect("stored");
        let l = ledger::ledger(&from_rollout, &Rules::bundled());
        // A rollout does not record a turn's tools (a compaction's `tools: []` and a Lite
        // request's tool item it does): never blamed where they are not recorded.
        for r in &l.rows {
            let causes = r
                .verdict
                .as_ref()
                .map(|v| v.causes.clone())
                .unwrap_or_default();
            assert!(
                !(r.not_recorded.contains(&"tools") && causes.contains(&Cause::ToolsChanged)),
                "{name} request {}",
                r.index
            );
        }
        let of_rollout: Vec<(RowKind, Option<usize>, bool, Vec<Cause>)> = l
            .rows
            .iter()
            .map(|r| {
                let v = r.verdict.as_ref();
                (
                    r.kind,
                    r.previous,
                    v.is_none_or(|v| v.prefix_kept),
                    v.map(|v| v.causes.clone()).unwrap_or_default(),
                )
            })
            .collect();
        // The bodies' rows, less what only the tools tell (the rollout never blames them).
        // (kind, previous, kept, causes, broke in the tools).
        type BodyRow = (RowKind, Option<usize>, bool, Vec<Cause>, bool);
        let of_bodies: Vec<BodyRow> = verdicts(name)
            .into_iter()
            .map(|(kind, previous, kept, brk, causes)| {
                let at_tools = brk.as_ref().is_some_and(|b| b.1 == Source::Tools);
                let causes: Vec<Cause> = causes
                    .into_iter()
                    .filter(|c| *c != Cause::ToolsChanged)
                    .collect();
                (kind, previous, kept, causes, at_tools)
            })
            .collect();
        assert_eq!(of_rollout.len(), of_bodies.len(), "{name}");
        for (i, (r, b)) in of_rollout.iter().zip(&of_bodies).enumerate() {
            // Kinds and pairing agree; so do the verdict and causes, except for a compaction
            // request, whose own settings (Lite raises its effort) the rollout does not record.
            assert_eq!((r.0, r.1), (b.0, b.1), "{name} request {i}");
            if b.0 != RowKind::Compaction {
                assert_eq!(&r.3, &b.3, "{name} request {i}");
                // Kept or broken alike, unless the bodies broke in the tools the rollout lacks.
                if !b.4 {
                    assert_eq!(r.2, b.2, "{name} request {i}");
                }
            }
        }
    }
}
