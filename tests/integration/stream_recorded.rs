//! Recorded streams in `tests/data/sse/` read to whole `TurnOutcome`s: output items, text,
//! reasoning summaries and content, tool-call inputs, usage, server model, verifications, and
//! timings from the arrival times passed in.

use std::path::Path;
use std::time::Duration;

use pretty_assertions::assert_eq;
use promptwire::core::items::ResponseItem;
use promptwire::core::stream::events::ModelVerification;
use promptwire::core::stream::outcome::{Gap, TextPart, Timings, ToolCall};
use promptwire::core::stream::{
    StreamError, StreamReader, TokenUsage, TurnOutcome, TurnState, read_all,
};
use serde_json::json;

fn recorded(name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/sse")
            .join(name),
    )
    .expect("fixture")
}

fn outcome_of(name: &str) -> TurnOutcome {
    read_all(&recorded(name), Duration::ZERO).1
}

fn item(value: serde_json::Value) -> ResponseItem {
    ResponseItem::from_value(value).expect("item")
}

/// Timings when every event arrived at time zero.
fn instant_timings() -> Timings {
    Timings {
        first_event: Some(Duration::ZERO),
        first_text: None,
        last_event: Some(Duration::ZERO),
        longest_gap: Some(Gap {
            after_seq: 0,
            duration: Duration::ZERO,
        }),
        total: Some(Duration::ZERO),
    }
}

fn part(index: i64, item_id: Option<&str>, text: &str, done: bool) -> TextPart {
    TextPart {
        index,
        item_id: item_id.map(str::to_string),
        text: text.to_string(),
        done,
    }
}

#[test]
fn text_answer() {
    let text = "`git rebase --onto` moves a range of commits to a new base: the commits after the \
                old base are replayed on top of the new one.";
    assert_eq!(
        outcome_of("text-answer.sse"),
        TurnOutcome {
            state: TurnState::Completed {
                response_id: "resp_7f3a91c2d04e".to_string(),
                end_turn: Some(true),
            },
            output_items: vec![item(json!({"type": "message", "id": "msg_0c81f2aa9b3d",
                "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "annotations": [], "logprobs": [], "text": text}],
                "phase": "final_answer"}))],
            text: text.to_string(),
            usage: Some(TokenUsage {
                input_tokens: 2210,
                cached_input_tokens: 1920,
                cache_write_input_tokens: 256,
                output_tokens: 58,
                reasoning_output_tokens: 12,
                total_tokens: 2268,
            }),
            server_model: Some("gpt-5.5-2026-10-01".to_string()),
            events: 21,
            timings: Timings {
                first_text: Some(Duration::ZERO),
                ..instant_timings()
            },
            ..TurnOutcome::default()
        }
    );
}

#[test]
fn reasoning_and_tool_calls_over_crlf_with_keep_alives() {
    let patch = "*** Begin Patch\n*** Update File: src/config.rs\n@@\n-    let path = \
                 \"config.toml\";\n+    let path = default_config_path();\n*** End Patch";
    assert_eq!(
        outcome_of("tool-calls-crlf.sse"),
        TurnOutcome {
            state: TurnState::Completed {
                response_id: "resp_2b44e0a17c95".to_string(),
                end_turn: None,
            },
            output_items: vec![
                item(json!({"type": "reasoning", "id": "rs_51d0c7", "summary": [
                    {"type": "summary_text", "text": "**Locating the config loader**"},
                    {"type": "summary_text", "text": "**Patching the default path**"}],
                    "encrypted_content": "gAAAAABpZ3Jvd2luZy1zdW1tYXJ5LWJsb2I="})),
                item(
                    json!({"type": "custom_tool_call", "id": "ctc_9e07b1", "status": "completed",
                    "call_id": "call_Qx81Lm", "name": "apply_patch", "input": patch})
                ),
                item(
                    json!({"type": "function_call", "id": "fc_40aa12", "status": "completed",
                    "name": "exec_command", "arguments": "{\"cmd\":\"cargo test config\"}",
                    "call_id": "call_Vb27Ps"})
                ),
            ],
            reasoning_summaries: vec![
                part(0, Some("rs_51d0c7"), "**Locating the config loader**", true),
                part(1, Some("rs_51d0c7"), "**Patching the default path**", true),
            ],
            tool_calls: vec![
                ToolCall {
                    item_id: Some("ctc_9e07b1".to_string()),
                    call_id: Some("call_Qx81Lm".to_string()),
                    name: Some("apply_patch".to_string()),
                    arguments: patch.to_string(),
                    done: true,
                },
                ToolCall {
                    item_id: Some("fc_40aa12".to_string()),
                    call_id: Some("call_Vb27Ps".to_string()),
                    name: Some("exec_command".to_string()),
                    arguments: "{\"cmd\":\"cargo test config\"}".to_string(),
                    done: true,
                },
            ],
            usage: Some(TokenUsage {
                input_tokens: 15120,
                cached_input_tokens: 14848,
                cache_write_input_tokens: 0,
                output_tokens: 311,
                reasoning_output_tokens: 128,
                total_tokens: 15431,
            }),
            events: 26,
            timings: instant_timings(),
            ..TurnOutcome::default()
        }
    );
}

#[test]
fn custom_tool_input_is_assembled_from_deltas_before_the_item_is_done() {
    let bytes = recorded("tool-calls-crlf.sse");
    let done_at = {
        let needle = b"\"type\":\"response.custom_tool_call_input.done\"";
        bytes
            .windows(needle.len())
            .position(|w| w == needle)
            .expect("done event")
    };
    let mut reader = StreamReader::new();
    reader.push(&bytes[..done_at], Duration::ZERO);
    assert_eq!(
        reader.outcome().tool_calls,
        vec![ToolCall {
            item_id: Some("ctc_9e07b1".to_string()),
            call_id: Some("call_Qx81Lm".to_string()),
            name: Some("apply_patch".to_string()),
            arguments: "*** Begin Patch\n*** Update File: src/config.rs\n@@\n-    let path = \
                        \"config.toml\";\n+    let path = default_config_path();\n*** End Patch"
                .to_string(),
            done: false,
        }]
    );
}

#[test]
fn failures_keep_what_arrived() {
    assert_eq!(
        outcome_of("failed-rate-limit.sse"),
        TurnOutcome {
            state: TurnState::Failed(StreamError::Retryable {
                message: "Rate limit reached for gpt-5.5 on tokens per min (TPM): Limit 200000, \
                          Used 199210, Requested 4410. Please try again in 1.324s. Visit the \
                          rate-limits page to learn more."
                    .to_string(),
                retry_after: Some(Duration::from_millis(1324)),
            }),
            text: "Checking".to_string(),
            events: 3,
            timings: Timings {
                first_text: Some(Duration::ZERO),
                ..instant_timings()
            },
            ..TurnOutcome::default()
        }
    );
    assert_eq!(
        outcome_of("incomplete.sse"),
        TurnOutcome {
            state: TurnState::Failed(StreamError::stream(
                "Incomplete response returned, reason: max_output_tokens"
            )),
            text: "The migration touches 41 files".to_string(),
            events: 5,
            timings: Timings {
                first_text: Some(Duration::ZERO),
                ..instant_timings()
            },
            ..TurnOutcome::default()
        }
    );
    assert_eq!(
        outcome_of("cut-off.sse"),
        TurnOutcome {
            state: TurnState::Failed(StreamError::stream(
                "stream closed before response.completed"
            )),
            text: "Running the suite".to_string(),
            events: 4,
            timings: Timings {
                first_text: Some(Duration::ZERO),
                ..instant_timings()
            },
            ..TurnOutcome::default()
        }
    );
    // A failure followed by a completion: the completion wins.
    assert_eq!(
        outcome_of("failed-then-completed.sse"),
        TurnOutcome {
            state: TurnState::Completed {
                response_id: "resp_0d6c2e9ab183".to_string(),
                end_turn: None,
            },
            text: "Recovered.".to_string(),
            usage: Some(TokenUsage {
                input_tokens: 90,
                output_tokens: 3,
                total_tokens: 93,
                ..TokenUsage::default()
            }),
            events: 4,
            timings: Timings {
                first_text: Some(Duration::ZERO),
                ..instant_timings()
            },
            ..TurnOutcome::default()
        }
    );
}

/// `(seq, event name, data type, mapped kind, unparsed)` of one timeline entry.
type EntrySummary<'a> = (u64, Option<&'a str>, Option<&'a str>, Option<&'a str>, bool);

#[test]
fn odd_framing_with_unparsed_entries() {
    let (entries, outcome) = read_all(&recorded("odd-framing-cr.sse"), Duration::ZERO);
    let summary: Vec<EntrySummary<'_>> = entries
        .iter()
        .map(|e| {
            (
                e.raw.seq,
                e.raw.event.as_deref(),
                e.data_type.as_deref(),
                e.mapped_kind(),
                e.is_unparsed(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            (0, None, Some("response.created"), Some("created"), false),
            (
                1,
                Some("response.output_text.delta"),
                Some("response.output_text.delta"),
                Some("output_text_delta"),
                false
            ),
            (2, None, None, None, true),
            (3, Some("response.output_text.delta"), None, None, true),
            (
                4,
                None,
                Some("response.output_text.delta"),
                Some("output_text_delta"),
                false
            ),
            (
                5,
                None,
                Some("response.completed"),
                Some("completed"),
                false
            ),
        ]
    );
    assert_eq!(
        entries[2].unparsed.as_deref(),
        Some("expected value at line 1 column 2")
    );
    assert_eq!(entries[2].raw.data, "[DONE]");
    assert_eq!(
        outcome,
        TurnOutcome {
            state: TurnState::Completed {
                response_id: "resp_91f0aa3c5d2b".to_string(),
                end_turn: None,
            },
            text: "multi-line data".to_string(),
            usage: Some(TokenUsage {
                input_tokens: 12,
                output_tokens: 2,
                total_tokens: 14,
                ..TokenUsage::default()
            }),
            events: 6,
            unparsed_events: 2,
            timings: Timings {
                first_text: Some(Duration::ZERO),
                ..instant_timings()
            },
            ..TurnOutcome::default()
        }
    );
}

#[test]
fn metadata_safety_buffering_reasoning_content_and_model_changes() {
    assert_eq!(
        outcome_of("metadata-safety.sse"),
        TurnOutcome {
            state: TurnState::Completed {
                response_id: "resp_58c7e1b2a90d".to_string(),
                end_turn: None,
            },
            text: "Port scanning lists open ports.".to_string(),
            reasoning_content: vec![part(
                0,
                None,
                "The user asks about port scanning; answer at a high level.",
                false
            )],
            usage: Some(TokenUsage {
                input_tokens: 840,
                cached_input_tokens: 0,
                cache_write_input_tokens: 0,
                output_tokens: 77,
                reasoning_output_tokens: 40,
                total_tokens: 917,
            }),
            server_model: Some("gpt-5.5-2026-10-01".to_string()),
            model_verifications: vec![ModelVerification::TrustedAccessForCyber],
            events: 8,
            timings: Timings {
                first_text: Some(Duration::ZERO),
                ..instant_timings()
            },
            ..TurnOutcome::default()
        }
    );
}

#[test]
fn timings_follow_the_arrival_times_passed_in() {
    let bytes = recorded("text-answer.sse");
    // Split after each event's blank line; event i arrives at 100 ms + i × 10 ms, except a
    // 400 ms stall before the first text delta.
    let mut ends: Vec<usize> = bytes
        .windows(2)
        .enumerate()
        .filter(|(_, w)| *w == b"\n\n")
        .map(|(i, _)| i + 2)
        .collect();
    ends.insert(0, 0);
    let mut reader = StreamReader::new();
    let mut at = Duration::from_millis(100);
    for (i, pair) in ends.windows(2).enumerate() {
        if i == 4 {
            at += Duration::from_millis(400);
        }
        reader.push(&bytes[pair[0]..pair[1]], at);
        at += Duration::from_millis(10);
    }
    assert!(reader.is_done());
    assert_eq!(
        reader.outcome().timings,
        Timings {
            first_event: Some(Duration::from_millis(100)),
            first_text: Some(Duration::from_millis(540)),
            last_event: Some(Duration::from_millis(700)),
            longest_gap: Some(Gap {
                after_seq: 3,
                duration: Duration::from_millis(410),
            }),
            total: Some(Duration::from_millis(700)),
        }
    );
}
