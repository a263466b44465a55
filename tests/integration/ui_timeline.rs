//! The timeline model and panel, fed from real recorded SSE bytes (`tests/data/sse/` and, when
//! present, the Codex 0.169 captures' `resp_*.sse`): rows, filters, gap statistics and attempts
//! as whole values; then the panel through egui_kittest (no GPU), where clicks and typing become
//! `TimelineCommand`s that the test applies, as the app shell will, and what is on screen is
//! checked by label.

use crate::support::shared;

use std::path::Path;
use std::time::Duration;

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
use pretty_assertions::assert_eq;
use promptwire::app::timeline::{
    Badge, FailureInfo, GapStats, TimelineCommand, TimelineModel, TimelineUpdate,
};
use promptwire::core::stream::{ErrorClass, StreamReader, TimelineEntry, read_all};
use promptwire::ui::timeline::{TimelinePanelState, timeline_ui};

fn sse(name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/sse")
            .join(name),
    )
    .expect("SSE fixture")
}

/// Decodes `bytes` event by event, the k-th event arriving at `times[k]` (later events at the
/// last time), as a live stream would.
fn paced_entries(bytes: &[u8], times: &[Duration]) -> Vec<TimelineEntry> {
    let text = String::from_utf8_lossy(bytes).replace("\r\n", "\n");
    let mut reader = StreamReader::new();
    let mut entries = Vec::new();
    let last = times.last().copied().unwrap_or_default();
    for (k, event) in text.split_inclusive("\n\n").enumerate() {
        let at = times.get(k).copied().unwrap_or(last);
        entries.extend(reader.push(event.as_bytes(), at));
    }
    entries.extend(reader.finish(last));
    entries
}

fn model_of(name: &str) -> TimelineModel {
    let (entries, outcome) = read_all(&sse(name), Duration::from_millis(33));
    TimelineModel::from_entries(entries, outcome)
}

fn visible(model: &TimelineModel) -> Vec<(u64, String, Option<Badge>, String)> {
    (0..model.visible_len())
        .filter_map(|i| model.visible_row(i))
        .map(|(_, r)| {
            (
                r.entry.raw.seq,
                r.type_key.clone(),
                r.badge,
                r.preview.clone(),
            )
        })
        .collect()
}

#[test]
fn rows_filters_and_selection_from_a_recorded_tool_call_stream() {
    let mut model = model_of("tool-calls-crlf.sse");
    assert_eq!((model.rows().len(), model.visible_len()), (26, 26));
    model.handle(&TimelineCommand::SetFilterText(
        "OUTPUT_ITEM.DONE".to_string(),
    ));
    assert_eq!(
        visible(&model),
        vec![
            (
                10,
                "response.output_item.done".to_string(),
                None,
                "reasoning rs_51d0c7".to_string()
            ),
            (
                18,
                "response.output_item.done".to_string(),
                None,
                "custom_tool_call ctc_9e07b1 apply_patch".to_string()
            ),
            (
                24,
                "response.output_item.done".to_string(),
                None,
                "function_call fc_40aa12 exec_command".to_string()
            ),
        ]
    );
    model.handle(&TimelineCommand::SetFilterText(String::new()));
    for kind in [
        "response.created",
        "response.output_item.added",
        "response.output_item.done",
        "response.reasoning_summary_part.added",
        "response.reasoning_summary_text.delta",
        "response.reasoning_summary_text.done",
        "response.custom_tool_call_input.delta",
        "response.custom_tool_call_input.done",
        "response.completed",
    ] {
        model.handle(&TimelineCommand::SetTypeShown(kind.to_string(), false));
    }
    let ignored = |seq: u64| {
        (
            seq,
            "response.function_call_arguments.delta".to_string(),
            Some(Badge::Ignored),
            String::new(),
        )
    };
    let mut expected = vec![ignored(20), ignored(21), ignored(22)];
    expected.push((
        23,
        "response.function_call_arguments.done".to_string(),
        Some(Badge::Ignored),
        String::new(),
    ));
    assert_eq!(visible(&model), expected);
    model.handle(&TimelineCommand::ShowAllTypes);
    assert_eq!(model.visible_len(), 26);

    assert!(model.follows_tail());
    model.handle(&TimelineCommand::Select(Some(25)));
    assert_eq!(
        (model.selected(), model.follows_tail()),
        (Some(25), false),
        "selecting pauses the tail"
    );
    assert_eq!(
        model.selected_row().map(|r| r.preview.clone()),
        Some("resp_2b44e0a17c95 · 15120 in (14848 cached) · 311 out".to_string())
    );
    model.handle(&TimelineCommand::Select(Some(26)));
    assert_eq!(
        model.selected(),
        None,
        "a row that does not exist selects nothing"
    );
    let counts: Vec<(String, usize)> = model
        .type_counts()
        .map(|(k, n)| (k.to_string(), n))
        .collect();
    assert_eq!(counts.iter().map(|(_, n)| n).sum::<usize>(), 26);
}

#[test]
fn gap_statistics_follow_receive_times() {
    // text-answer.sse arriving with a first event at 120 ms, 10 ms steps, and 800 ms of silence
    // before event 6.
    let mut times = Vec::new();
    let mut t = Duration::from_millis(120);
    for k in 0..64 {
        if k == 6 {
            t += Duration::from_millis(800);
        }
        times.push(t);
        t += Duration::from_millis(10);
    }
    let entries = paced_entries(&sse("text-answer.sse"), &times);
    let first_text_seq = entries
        .iter()
        .position(|e| e.mapped_kind() == Some("output_text_delta"))
        .expect("a text delta");
    let last = entries.last().expect("events").raw.received_at;
    let mut model = TimelineModel::new();
    model.apply(TimelineUpdate::AttemptStarted { attempt: 1 });
    for entry in entries {
        model.apply(TimelineUpdate::Entry(Box::new(entry)));
    }
    assert_eq!(
        model.gaps(),
        GapStats {
            first_event: Some(Duration::from_millis(120)),
            first_text: Some(times[first_text_seq]),
            longest_gap: Some((5, Duration::from_millis(810))),
            last_event: Some(last),
        }
    );
    assert!(model.is_live());
    assert!(
        !model.current_outcome().text.is_empty(),
        "the live outcome grows per event"
    );
}

#[test]
fn attempts_record_the_retry_decision() {
    let (entries, outcome) = read_all(&sse("failed-rate-limit.sse"), Duration::ZERO);
    let failure = FailureInfo {
        class: ErrorClass::Retryable,
        message: "rate limited".to_string(),
        retry_after: Some(Duration::from_millis(1324)),
        retried_after: Some(Duration::from_millis(1324)),
        retryable: true,
    };
    let mut model = TimelineModel::new();
    model.apply(TimelineUpdate::AttemptStarted { attempt: 1 });
    model.apply(TimelineUpdate::Response {
        status: 200,
        at: Duration::from_millis(5),
    });
    for entry in entries.clone() {
        model.apply(TimelineUpdate::Entry(Box::new(entry)));
    }
    model.apply(TimelineUpdate::Retrying {
        failure: failure.clone(),
    });
    model.apply(TimelineUpdate::AttemptStarted { attempt: 2 });
    let (ok_entries, ok_outcome) = read_all(&sse("text-answer.sse"), Duration::ZERO);
    for entry in ok_entries {
        model.apply(TimelineUpdate::Entry(Box::new(entry)));
    }
    model.apply(TimelineUpdate::Finished {
        outcome: Box::new(ok_outcome.clone()),
        failure: None,
    });
    let attempts: Vec<(u32, Option<u16>, usize, Option<FailureInfo>)> = model
        .attempts()
        .iter()
        .map(|a| (a.number, a.status, a.events, a.failure.clone()))
        .collect();
    assert_eq!(
        attempts,
        vec![
            (1, Some(200), entries.len(), Some(failure)),
            (2, None, ok_outcome.events as usize, None),
        ]
    );
    assert_eq!(model.rows()[entries.len()].attempt, 2);
    assert_eq!(model.outcome(), Some(&ok_outcome));
    assert!(matches!(
        outcome.state,
        promptwire::core::stream::TurnState::Failed(_)
    ));
}

/// The panel with its model; commands are applied after each frame, as the shell will.
struct Panel {
    model: TimelineModel,
    ui: TimelinePanelState,
    copied: Vec<String>,
}

fn harness(model: TimelineModel) -> Harness<'static, Panel> {
    let mut harness = Harness::builder()
        .with_size(egui::vec2(1400.0, 800.0))
        .build_ui_state(
            |ui, panel: &mut Panel| {
                for command in timeline_ui(ui, &panel.model, &mut panel.ui) {
                    if let TimelineCommand::CopyText(text) = &command {
                        panel.copied.push(text.clone());
                    }
                    panel.model.handle(&command);
                }
            },
            Panel {
                model,
                ui: TimelinePanelState::default(),
                copied: Vec::new(),
            },
        );
    harness.run();
    harness
}

#[test]
fn panel_shows_events_outcome_and_usage_and_selects_a_row() {
    let mut harness = harness(model_of("tool-calls-crlf.sse"));
    harness.get_by_label("26 of 26 events");
    harness.get_by_label("completed · resp_2b44e0a17c95");
    // Usage split: uncached 15120 − 14848 = 272.
    for label in [
        "uncached input",
        "272",
        "cached input",
        "14848",
        "cache write",
        "311",
        "128",
        "15431",
    ] {
        harness.get_by_label(label);
    }
    harness.get_by_label("• **Locating the config loader**");
    harness.get_by_label("function_call fc_40aa12 · exec_command (call_Vb27Ps)");
    harness.get_by_label("{\n  \"cmd\": \"cargo test config\"\n}");
    harness.get_by_label("Select an event to see its data.");

    // Rows 19 (added) and 24 (done) preview the same call: click the second.
    harness
        .get_all_by_label("function_call fc_40aa12 exec_command")
        .last()
        .expect("row 24")
        .click();
    harness.run();
    assert_eq!(harness.state().model.selected(), Some(24));
    harness.get_by_label("Event #24");
    harness.get_by_label("Paused");
    harness
        .get_by_role_and_label(egui::accesskit::Role::Button, "Copy")
        .click();
    harness.run();
    let raw = harness.state().model.rows()[24].entry.raw.data.clone();
    assert_eq!(harness.state().copied, vec![raw]);

    harness.get_by_label("Text").click();
    harness.run();
    assert!(harness.state().ui.json_as_text);

    harness.get_by_label("Paused").click();
    harness.run();
    assert!(harness.state().model.follows_tail());
    harness.get_by_label("Following");
}

#[test]
fn panel_filter_box_filters_the_table() {
    let mut harness = harness(model_of("tool-calls-crlf.sse"));
    harness
        .get_by_role_and_label(egui::accesskit::Role::TextInput, "Filter")
        .click();
    harness.run();
    harness
        .get_by_role_and_label(egui::accesskit::Role::TextInput, "Filter")
        .type_text("apply_patch");
    harness.run();
    assert_eq!(harness.state().model.filter_text(), "apply_patch");
    let shown: Vec<u64> = (0..harness.state().model.visible_len())
        .filter_map(|i| harness.state().model.visible_row(i))
        .map(|(_, r)| r.entry.raw.seq)
        .collect();
    assert_eq!(shown, vec![11, 18]);
    harness.get_by_label("2 of 26 events");
}

#[test]
fn panel_shows_a_failure_with_its_class_and_retry_decision() {
    let harness = harness(model_of("failed-rate-limit.sse"));
    harness.get_by_label("failed");
    harness.get_by_label(
        "retryable: Rate limit reached for gpt-5.5 on tokens per min (TPM): Limit 200000, Used 199210, Requested 4410. Please try again in 1.324s. Visit the rate-limits page to learn more.",
    );
    harness.get_by_label(
        "retry: retryable; not retried (retries used up or delay too long) · Retry-After: 1.324 s",
    );
    harness.get_by_label("Checking");
}

#[test]
fn panel_reads_every_codex_0169_capture_stream() {
    let Some(dir) = shared::shared_fixtures("codex-cli-0.169/two-turns-tools-session") else {
        return;
    };
    for k in 0..6 {
        let bytes = std::fs::read(dir.join(format!("resp_{k:02}.sse"))).expect("resp");
        let (entries, outcome) = read_all(&bytes, Duration::ZERO);
        let events = entries.len();
        let response_id = outcome.response_id().expect("completed").to_string();
        let harness = harness(TimelineModel::from_entries(entries, outcome));
        harness.get_by_label(&format!("{events} of {events} events"));
        harness.get_by_label(&format!("completed · {response_id}"));
    }
}

#[test]
fn keys_move_the_selection_among_shown_rows() {
    let mut harness = harness(model_of("tool-calls-crlf.sse"));
    harness
        .state_mut()
        .model
        .handle(&TimelineCommand::SetFilterText("output_item".to_string()));
    harness.run();
    let selected =
        |h: &Harness<'static, Panel>| h.state().model.selected_row().map(|r| r.entry.raw.seq);
    harness.key_press(egui::Key::J);
    harness.run();
    assert_eq!(selected(&harness), Some(1), "first shown row");
    harness.key_press(egui::Key::ArrowDown);
    harness.run();
    harness.key_press(egui::Key::J);
    harness.run();
    assert_eq!(selected(&harness), Some(11));
    harness.key_press(egui::Key::K);
    harness.run();
    assert_eq!(selected(&harness), Some(10));
    harness.get_by_label("Event #10");
    harness.key_press(egui::Key::End);
    harness.run();
    assert!(harness.state().model.follows_tail());
}

#[test]
fn rows_past_the_limit_only_count() {
    let (entries, outcome) = read_all(&sse("text-answer.sse"), Duration::ZERO);
    let mut model = TimelineModel::with_max_rows(10);
    model.apply(TimelineUpdate::AttemptStarted { attempt: 1 });
    for entry in entries.clone() {
        model.apply(TimelineUpdate::Entry(Box::new(entry)));
    }
    assert_eq!(
        (
            model.rows().len(),
            model.dropped(),
            model.attempts()[0].events
        ),
        (10, entries.len() as u64 - 10, entries.len())
    );
    // The live outcome still saw every event.
    assert_eq!(model.current_outcome().text, outcome.text);
    let harness = harness(model);
    harness.get_by_label(&format!(
        "{} more not kept (limit reached)",
        entries.len() - 10
    ));
}
