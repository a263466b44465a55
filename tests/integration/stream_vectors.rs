//! WIRE_SPEC §15 vectors 5–13, 36 and 37, every `response.failed` class (§14.1), the retry-after
//! parse (§14.2) and every termination rule of §13, asserted as whole values.
//!
//! `client_view` is what a client's channel carries: the mapped events in order, then the error
//! that ended the turn, if it failed.

use std::time::Duration;

use pretty_assertions::assert_eq;
use promptwire::core::items::{ContentItem, CustomToolCallItem, MessageItem, ResponseItem};
use promptwire::core::json::JsonMap;
use promptwire::core::stream::errors::{
    CYBER_POLICY_FALLBACK, IDLE_TIMEOUT, parse_try_again_in, retry_after_hint,
};
use promptwire::core::stream::events::{ModelVerification, SafetyBuffering, header_events};
use promptwire::core::stream::{
    MappedEvent, StreamError, StreamReader, TokenUsage, TurnState, read_all,
};
use serde_json::{Value, json};

fn frame(data: &Value) -> String {
    let kind = data["type"].as_str().unwrap_or("message");
    format!("event: {kind}\ndata: {data}\n\n")
}

fn stream_of(frames: &[Value]) -> String {
    frames.iter().map(frame).collect()
}

/// Mapped events in order, then the error that ended the turn.
fn client_view(frames: &[Value]) -> Vec<Result<MappedEvent, StreamError>> {
    let (entries, outcome) = read_all(stream_of(frames).as_bytes(), Duration::ZERO);
    let mut out: Vec<Result<MappedEvent, StreamError>> =
        entries.into_iter().flat_map(|e| e.mapped).map(Ok).collect();
    if let Some(error) = outcome.error() {
        out.push(Err(error.clone()));
    }
    out
}

fn assistant(text: &str, phase: Option<&str>) -> ResponseItem {
    ResponseItem::Message(MessageItem {
        id: None,
        role: "assistant".to_string(),
        content: vec![ContentItem::OutputText {
            text: text.to_string(),
            extra: JsonMap::new(),
        }],
        phase: phase.map(str::to_string),
        metadata: None,
        extra: JsonMap::new(),
    })
}

fn completed(id: &str) -> MappedEvent {
    MappedEvent::Completed {
        response_id: id.to_string(),
        token_usage: None,
        end_turn: None,
        cache_diagnostics: None,
    }
}

fn failed(error: Value) -> Value {
    json!({"type": "response.failed", "sequence_number": 3,
        "response": {"id": "resp_f1", "object": "response", "status": "failed", "error": error}})
}

fn stream_error(message: &str) -> StreamError {
    StreamError::stream(message)
}

// §15 vector 5.
#[test]
fn parses_items_and_completed() {
    let frames = [
        json!({"type": "response.output_item.done", "item": {"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": "Hello"}], "phase": "commentary"}}),
        json!({"type": "response.output_item.done", "item": {"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": "World"}]}}),
        json!({"type": "response.completed", "response": {"id": "resp1"}}),
    ];
    assert_eq!(
        client_view(&frames),
        vec![
            Ok(MappedEvent::OutputItemDone(Box::new(assistant(
                "Hello",
                Some("commentary")
            )))),
            Ok(MappedEvent::OutputItemDone(Box::new(assistant(
                "World", None
            )))),
            Ok(completed("resp1")),
        ]
    );
}

// §15 vector 6.
#[test]
fn error_when_missing_completed() {
    let frames = [
        json!({"type": "response.output_item.done", "item": {"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": "Hello"}]}}),
    ];
    assert_eq!(
        client_view(&frames),
        vec![
            Ok(MappedEvent::OutputItemDone(Box::new(assistant(
                "Hello", None
            )))),
            Err(stream_error("stream closed before response.completed")),
        ]
    );
}

// §15 vector 7: completion ends the reading although the stream never ends.
#[test]
fn emits_completed_without_stream_end() {
    let mut reader = StreamReader::new();
    let first = stream_of(&[json!({"type": "response.completed", "response": {"id": "resp1"}})]);
    let entries = reader.push(first.as_bytes(), Duration::from_millis(5));
    let mapped: Vec<MappedEvent> = entries.into_iter().flat_map(|e| e.mapped).collect();
    assert_eq!(mapped, vec![completed("resp1")]);
    assert!(reader.is_done());
    // The connection stays open and more bytes arrive: nothing more is read.
    let later = stream_of(&[json!({"type": "response.output_text.delta", "delta": "late"})]);
    assert_eq!(
        reader.push(later.as_bytes(), Duration::from_millis(9)),
        vec![]
    );
    assert_eq!(reader.finish(Duration::from_millis(10)), vec![]);
    assert_eq!(
        reader.outcome().state,
        TurnState::Completed {
            response_id: "resp1".to_string(),
            end_turn: None
        }
    );
    assert_eq!(reader.outcome().text, "");
}

// §15 vector 8.
#[test]
fn error_when_error_event() {
    let message = "Rate limit reached for gpt-5.5 in project proj_Xy on tokens per min (TPM): Limit \
                   40000, Used 38000, Requested 9000. Please try again in 11.054s. See the \
                   rate-limit guide for details.";
    let frames = [failed(
        json!({"code": "rate_limit_exceeded", "message": message}),
    )];
    assert_eq!(
        client_view(&frames),
        vec![Err(StreamError::Retryable {
            message: message.to_string(),
            retry_after: Some(Duration::from_secs_f64(11.054)),
        })]
    );
}

// §15 vector 9.
#[test]
fn retry_after_parsing() {
    let cases: [(&str, Option<Duration>); 8] = [
        (
            "Rate limit reached. Please try again in 28ms. Thanks.",
            Some(Duration::from_millis(28)),
        ),
        (
            "Limit 100, Used 99. Please try again in 1.898s.",
            Some(Duration::from_secs_f64(1.898)),
        ),
        (
            "Rate limit exceeded. Try again in 35 seconds.",
            Some(Duration::from_secs(35)),
        ),
        ("TRY AGAIN IN 2 second", Some(Duration::from_secs(2))),
        // Milliseconds are truncated to an integer.
        ("try again in 1.5ms", Some(Duration::from_millis(1))),
        ("try again in   7 s", Some(Duration::from_secs(7))),
        // The first occurrence that matches wins; one without a number does not match.
        (
            "try again in a moment, or try again in 3s",
            Some(Duration::from_secs(3)),
        ),
        ("try again in 5 minutes", None),
    ];
    for (message, expected) in cases {
        assert_eq!(parse_try_again_in(message), expected, "{message}");
        let error =
            serde_json::from_value(json!({"code": "rate_limit_exceeded", "message": message}))
                .expect("error body");
        assert_eq!(retry_after_hint(&error), expected, "{message}");
    }
    // Any other code: no delay, even with the phrase.
    let other =
        serde_json::from_value(json!({"code": "server_error", "message": "try again in 3s"}))
            .expect("error body");
    assert_eq!(retry_after_hint(&other), None);
    assert_eq!(
        client_view(&[failed(
            json!({"code": "server_error", "message": "try again in 3s"})
        )]),
        vec![Err(StreamError::Retryable {
            message: "try again in 3s".to_string(),
            retry_after: None
        })]
    );
}

// §15 vector 10 and the rest of §14.1, in the order the checks are made.
#[test]
fn every_failed_class() {
    let cases: Vec<(Value, StreamError)> = vec![
        (
            json!({"code": "context_length_exceeded",
                "message": "Your input exceeds the context window of this model.\nShorten it."}),
            StreamError::ContextWindowExceeded {
                message: "Your input exceeds the context window of this model.\nShorten it."
                    .to_string(),
            },
        ),
        (
            json!({"code": "insufficient_quota", "message": "You exceeded your current quota."}),
            StreamError::QuotaExceeded {
                message: "You exceeded your current quota.".to_string(),
            },
        ),
        (
            json!({"code": "usage_not_included"}),
            StreamError::UsageNotIncluded {
                message: String::new(),
            },
        ),
        (
            json!({"type": "invalid_request_error", "code": "cyber_policy",
                "message": "This request was flagged for cyber policy."}),
            StreamError::CyberPolicy {
                message: "This request was flagged for cyber policy.".to_string(),
            },
        ),
        (
            json!({"code": "cyber_policy", "message": "   "}),
            StreamError::CyberPolicy {
                message: CYBER_POLICY_FALLBACK.to_string(),
            },
        ),
        (
            json!({"code": "cyber_policy"}),
            StreamError::CyberPolicy {
                message: CYBER_POLICY_FALLBACK.to_string(),
            },
        ),
        (
            json!({"code": "invalid_prompt", "message": "Invalid prompt: limited for safety reasons."}),
            StreamError::InvalidRequest {
                message: "Invalid prompt: limited for safety reasons.".to_string(),
            },
        ),
        (
            json!({"code": "bio_policy", "message": "Flagged by the bio policy."}),
            StreamError::InvalidRequest {
                message: "Flagged by the bio policy.".to_string(),
            },
        ),
        (
            json!({"code": "invalid_prompt"}),
            StreamError::InvalidRequest {
                message: "Invalid request.".to_string(),
            },
        ),
        (
            json!({"code": "server_is_overloaded", "message": "Busy."}),
            StreamError::ServerOverloaded {
                message: "Busy.".to_string(),
            },
        ),
        (
            json!({"code": "slow_down"}),
            StreamError::ServerOverloaded {
                message: String::new(),
            },
        ),
        (
            json!({"message": "Something went wrong."}),
            StreamError::Retryable {
                message: "Something went wrong.".to_string(),
                retry_after: None,
            },
        ),
        // Only exact codes count: the message is never inspected.
        (
            json!({"code": "context_length", "message": "context_length_exceeded"}),
            StreamError::Retryable {
                message: "context_length_exceeded".to_string(),
                retry_after: None,
            },
        ),
        (
            json!({}),
            StreamError::Retryable {
                message: String::new(),
                retry_after: None,
            },
        ),
        (
            json!("an error string"),
            stream_error("response.failed event received"),
        ),
        (
            json!({"code": 429}),
            stream_error("response.failed event received"),
        ),
    ];
    for (error, expected) in cases {
        let view = client_view(&[failed(error.clone())]);
        assert_eq!(view, vec![Err(expected)], "error {error}");
    }
    for frame in [
        json!({"type": "response.failed"}),
        json!({"type": "response.failed", "response": {"id": "resp_x", "status": "failed"}}),
        json!({"type": "response.failed", "response": {"id": "resp_x", "error": null}}),
    ] {
        assert_eq!(
            client_view(std::slice::from_ref(&frame)),
            vec![Err(stream_error("response.failed event received"))],
            "{frame}"
        );
    }
}

#[test]
fn class_names_and_retryability() {
    let table = [
        (
            StreamError::ContextWindowExceeded {
                message: String::new(),
            },
            "context_window_exceeded",
            false,
        ),
        (
            StreamError::QuotaExceeded {
                message: String::new(),
            },
            "quota_exceeded",
            false,
        ),
        (
            StreamError::UsageNotIncluded {
                message: String::new(),
            },
            "usage_not_included",
            false,
        ),
        (
            StreamError::CyberPolicy {
                message: String::new(),
            },
            "cyber_policy",
            false,
        ),
        (
            StreamError::InvalidRequest {
                message: String::new(),
            },
            "invalid_request",
            false,
        ),
        (
            StreamError::ServerOverloaded {
                message: String::new(),
            },
            "server_overloaded",
            false,
        ),
        (
            StreamError::Retryable {
                message: String::new(),
                retry_after: Some(Duration::from_secs(2)),
            },
            "retryable",
            true,
        ),
        (stream_error("x"), "stream", true),
    ];
    for (error, class, retryable) in table {
        assert_eq!(
            (error.class().as_str(), error.is_retryable()),
            (class, retryable),
            "{error:?}"
        );
    }
    assert_eq!(
        StreamError::Retryable {
            message: "m".to_string(),
            retry_after: Some(Duration::from_secs(2))
        }
        .retry_after(),
        Some(Duration::from_secs(2))
    );
}

// §15 vector 11.
#[test]
fn table_driven_event_kinds() {
    let done = json!({"type": "response.completed", "response": {"id": "c", "usage": {
        "input_tokens": 0, "input_tokens_details": null, "output_tokens": 0,
        "output_tokens_details": null, "total_tokens": 0}, "output": []}});
    let zero = MappedEvent::Completed {
        response_id: "c".to_string(),
        token_usage: Some(TokenUsage::default()),
        end_turn: None,
        cache_diagnostics: None,
    };
    let cases = [
        (
            json!({"type": "response.created", "response": {}}),
            vec![Ok(MappedEvent::Created), Ok(zero.clone())],
        ),
        (
            json!({"type": "response.output_item.done", "item": {"type": "message",
                "role": "assistant", "content": [{"type": "output_text", "text": "hi"}]}}),
            vec![
                Ok(MappedEvent::OutputItemDone(Box::new(assistant("hi", None)))),
                Ok(zero.clone()),
            ],
        ),
        (
            json!({"type": "response.new_tool_event"}),
            vec![Ok(zero.clone())],
        ),
    ];
    for (event, expected) in cases {
        assert_eq!(
            client_view(&[event.clone(), done.clone()]),
            expected,
            "{event}"
        );
    }
}

// §15 vector 12.
#[test]
fn parses_tool_call_input_deltas() {
    let frames = [
        json!({"type": "response.custom_tool_call_input.delta", "item_id": "ctc_1",
            "call_id": "call_1", "delta": "*** Begin"}),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1",
            "delta": "{\"a\":"}),
        json!({"type": "response.custom_tool_call_input.delta", "call_id": "call_2",
            "delta": "x"}),
        // Neither id: nothing.
        json!({"type": "response.custom_tool_call_input.delta", "delta": "y"}),
        json!({"type": "response.completed", "response": {"id": "resp_t"}}),
    ];
    assert_eq!(
        client_view(&frames),
        vec![
            Ok(MappedEvent::ToolCallInputDelta {
                item_id: "ctc_1".to_string(),
                call_id: Some("call_1".to_string()),
                delta: "*** Begin".to_string(),
            }),
            Ok(MappedEvent::ToolCallInputDelta {
                item_id: "call_2".to_string(),
                call_id: Some("call_2".to_string()),
                delta: "x".to_string(),
            }),
            Ok(completed("resp_t")),
        ]
    );
}

// §15 vector 13.
#[test]
fn server_model_rules() {
    // The `response.model` body field is ignored.
    assert_eq!(
        client_view(&[
            json!({"type": "response.created", "response": {"id": "r", "model": "gpt-5.5"}}),
            json!({"type": "response.completed", "response": {"id": "r", "model": "gpt-5.5"}}),
        ]),
        vec![Ok(MappedEvent::Created), Ok(completed("r"))]
    );
    // `response.headers` (any case) gives ServerModel before Created; repeated values are not
    // reported again; a change is.
    assert_eq!(
        client_view(&[
            json!({"type": "response.created", "response": {"id": "r",
                "headers": {"OpenAI-Model": "gpt-5.5-a"}}}),
            json!({"type": "response.in_progress", "response": {"id": "r",
                "headers": {"openai-model": "gpt-5.5-a"}}}),
            json!({"type": "response.in_progress", "headers": {"X-OpenAI-Model": ["gpt-5.5-b", "x"]}}),
            json!({"type": "response.completed", "response": {"id": "r"}}),
        ]),
        vec![
            Ok(MappedEvent::ServerModel("gpt-5.5-a".to_string())),
            Ok(MappedEvent::Created),
            Ok(MappedEvent::ServerModel("gpt-5.5-b".to_string())),
            Ok(completed("r")),
        ]
    );
    // Both present: `response.headers` wins over the top-level `headers`.
    assert_eq!(
        client_view(&[
            json!({"type": "response.created", "headers": {"openai-model": "top"},
                "response": {"id": "r", "headers": {"openai-model": "inner"}}}),
            json!({"type": "response.completed", "response": {"id": "r"}}),
        ]),
        vec![
            Ok(MappedEvent::ServerModel("inner".to_string())),
            Ok(MappedEvent::Created),
            Ok(completed("r")),
        ]
    );
    // The HTTP header gives no ModelVerifications; the model header gives ServerModel.
    let headers = [
        (
            "openai-verification-recommendation".to_string(),
            "trusted_access_for_cyber".to_string(),
        ),
        ("OpenAI-Model".to_string(), "gpt-5.5".to_string()),
        ("x-models-etag".to_string(), "W/\"3\"".to_string()),
        ("x-reasoning-included".to_string(), "true".to_string()),
    ];
    assert_eq!(
        header_events(&headers),
        vec![
            MappedEvent::ServerModel("gpt-5.5".to_string()),
            MappedEvent::ModelsEtag("W/\"3\"".to_string()),
            MappedEvent::ServerReasoningIncluded(true),
        ]
    );
    // `response.metadata`: known values only, no duplicates; unknown or a bare string: nothing.
    let metadata = |value: Value| {
        client_view(&[json!({"type": "response.metadata",
            "metadata": {"openai_verification_recommendation": value}})])
    };
    let closed = Err(stream_error("stream closed before response.completed"));
    assert_eq!(
        metadata(json!([
            "trusted_access_for_cyber",
            "other",
            "trusted_access_for_cyber"
        ])),
        vec![
            Ok(MappedEvent::ModelVerifications(vec![
                ModelVerification::TrustedAccessForCyber
            ])),
            closed.clone()
        ]
    );
    assert_eq!(metadata(json!(["unknown"])), vec![closed.clone()]);
    assert_eq!(
        metadata(json!("trusted_access_for_cyber")),
        vec![closed.clone()]
    );
    assert_eq!(
        client_view(&[json!({"type": "response.metadata",
            "metadata": {"openai_chatgpt_moderation_metadata": {"flagged": true}}})]),
        vec![
            Ok(MappedEvent::TurnModerationMetadata(
                json!({"flagged": true})
            )),
            closed
        ]
    );
}

#[test]
fn safety_buffering_comes_before_the_events_own_mapping() {
    let frames = [
        json!({"type": "response.output_text.delta", "delta": "ok",
            "safety_buffering": {"use_cases": ["cyber"], "reasons": ["r1"]}}),
        json!({"type": "response.in_progress", "safety_buffering": {"use_cases": [], "reasons": [],
            "retry_model": "gpt-5.5"}}),
        // Malformed: no event.
        json!({"type": "response.in_progress", "safety_buffering": {"use_cases": "cyber"}}),
        json!({"type": "response.completed", "response": {"id": "r"}}),
    ];
    assert_eq!(
        client_view(&frames),
        vec![
            Ok(MappedEvent::SafetyBuffering(SafetyBuffering {
                use_cases: vec!["cyber".to_string()],
                reasons: vec!["r1".to_string()],
                retry_model: None,
            })),
            Ok(MappedEvent::OutputTextDelta("ok".to_string())),
            Ok(MappedEvent::SafetyBuffering(SafetyBuffering {
                use_cases: vec![],
                reasons: vec![],
                retry_model: Some("gpt-5.5".to_string()),
            })),
            Ok(completed("r")),
        ]
    );
}

#[test]
fn reasoning_and_item_events() {
    let frames = [
        json!({"type": "response.output_item.added", "item": {"type": "custom_tool_call",
            "id": "ctc_1", "call_id": "call_1", "name": "apply_patch", "input": ""}}),
        // An item that does not parse is dropped (the entry keeps a note).
        json!({"type": "response.output_item.added", "item": {"type": "function_call", "name": 3}}),
        json!({"type": "response.output_item.done", "item": {"type": "compaction_trigger"}}),
        json!({"type": "response.reasoning_summary_part.added", "summary_index": 1}),
        json!({"type": "response.reasoning_summary_text.delta", "delta": "**Plan**", "summary_index": 1}),
        json!({"type": "response.reasoning_text.delta", "delta": "think", "content_index": 0}),
        // Required fields missing: nothing.
        json!({"type": "response.reasoning_summary_text.delta", "delta": "x"}),
        json!({"type": "response.reasoning_text.delta", "delta": "x"}),
        json!({"type": "response.reasoning_summary_text.done", "item_id": "rs_1", "summary_index": 0}),
        json!({"type": "response.created"}),
        json!({"type": "response.output_text.delta"}),
        json!({"type": "response.completed", "response": {"id": "r", "end_turn": false}}),
    ];
    assert_eq!(
        client_view(&frames),
        vec![
            Ok(MappedEvent::OutputItemAdded(Box::new(
                ResponseItem::CustomToolCall(CustomToolCallItem {
                    id: Some("ctc_1".to_string()),
                    status: None,
                    call_id: "call_1".to_string(),
                    name: "apply_patch".to_string(),
                    namespace: None,
                    input: String::new(),
                    metadata: None,
                    extra: JsonMap::new(),
                })
            ))),
            Ok(MappedEvent::OutputItemDone(Box::new(
                ResponseItem::CompactionTrigger
            ))),
            Ok(MappedEvent::ReasoningSummaryPartAdded { summary_index: 1 }),
            Ok(MappedEvent::ReasoningSummaryDelta {
                delta: "**Plan**".to_string(),
                summary_index: 1
            }),
            Ok(MappedEvent::ReasoningContentDelta {
                delta: "think".to_string(),
                content_index: 0
            }),
            Ok(MappedEvent::Completed {
                response_id: "r".to_string(),
                token_usage: None,
                end_turn: Some(false),
                cache_diagnostics: None,
            }),
        ]
    );
    let (entries, _) = read_all(stream_of(&frames[1..2]).as_bytes(), Duration::ZERO);
    assert_eq!(
        entries[0].note.as_deref(),
        Some("item does not parse, dropped: name: invalid type: integer `3`, expected a string")
    );
}

// §15 vector 36.
#[test]
fn parses_cache_write_token_usage() {
    let frames = [
        json!({"type": "response.completed", "response": {"id": "resp_u", "usage": {
        "input_tokens": 100, "input_tokens_details": {"cached_tokens": 40, "cache_write_tokens": 60},
        "output_tokens": 10, "output_tokens_details": {"reasoning_tokens": 5}, "total_tokens": 110}}}),
    ];
    assert_eq!(
        client_view(&frames),
        vec![Ok(MappedEvent::Completed {
            response_id: "resp_u".to_string(),
            token_usage: Some(TokenUsage {
                input_tokens: 100,
                cached_input_tokens: 40,
                cache_write_input_tokens: 60,
                output_tokens: 10,
                reasoning_output_tokens: 5,
                total_tokens: 110,
            }),
            end_turn: None,
            cache_diagnostics: None,
        })]
    );
}

#[test]
fn usage_details_rules() {
    let usage = |usage: Value| {
        client_view(&[
            json!({"type": "response.completed", "response": {"id": "r", "usage": usage}}),
        ])
    };
    // Details absent or null: zeros.
    assert_eq!(
        usage(json!({"input_tokens": 7, "output_tokens": 2, "total_tokens": 9})),
        vec![Ok(MappedEvent::Completed {
            response_id: "r".to_string(),
            token_usage: Some(TokenUsage {
                input_tokens: 7,
                output_tokens: 2,
                total_tokens: 9,
                ..TokenUsage::default()
            }),
            end_turn: None,
            cache_diagnostics: None,
        })]
    );
    // Details present without `cached_tokens`: the completion does not parse.
    assert_eq!(
        usage(
            json!({"input_tokens": 7, "input_tokens_details": {}, "output_tokens": 2,
            "total_tokens": 9})
        ),
        vec![Err(stream_error(
            "failed to parse ResponseCompleted: missing field `cached_tokens`"
        ))]
    );
}

// §15 vector 37.
#[test]
fn parses_reasoning_summary_done() {
    let frames = [
        json!({"type": "response.reasoning_summary_text.done", "item_id": "reasoning-1",
            "summary_index": 0, "text": "Checking"}),
    ];
    assert_eq!(
        client_view(&frames),
        vec![
            Ok(MappedEvent::ReasoningSummaryDone {
                item_id: "reasoning-1".to_string(),
                text: "Checking".to_string(),
                summary_index: 0,
            }),
            Err(stream_error("stream closed before response.completed")),
        ]
    );
}

// Termination: failed/incomplete are deferred to end of stream; a later completion wins.
#[test]
fn deferred_errors_and_a_later_completion() {
    let fail = failed(json!({"code": "server_is_overloaded"}));
    let done = json!({"type": "response.completed", "response": {"id": "resp_ok"}});
    let delta = json!({"type": "response.output_text.delta", "delta": "still here"});
    assert_eq!(
        client_view(&[fail.clone(), delta.clone(), done.clone()]),
        vec![
            Ok(MappedEvent::OutputTextDelta("still here".to_string())),
            Ok(completed("resp_ok")),
        ]
    );
    // Without the completion the deferred error ends the turn, after the later events.
    assert_eq!(
        client_view(&[fail.clone(), delta.clone()]),
        vec![
            Ok(MappedEvent::OutputTextDelta("still here".to_string())),
            Err(StreamError::ServerOverloaded {
                message: String::new()
            }),
        ]
    );
    // Two deferred errors: the last one is reported.
    let incomplete = json!({"type": "response.incomplete", "response": {"id": "r",
        "incomplete_details": {"reason": "max_output_tokens"}}});
    assert_eq!(
        client_view(&[fail, incomplete]),
        vec![Err(stream_error(
            "Incomplete response returned, reason: max_output_tokens"
        ))]
    );
    assert_eq!(
        client_view(&[json!({"type": "response.incomplete"})]),
        vec![Err(stream_error(
            "Incomplete response returned, reason: unknown"
        ))]
    );
    // The reader exposes the deferred error while the stream is still open.
    let mut reader = StreamReader::new();
    reader.push(
        frame(&json!({"type": "response.incomplete"})).as_bytes(),
        Duration::ZERO,
    );
    assert_eq!(
        reader.deferred_error(),
        Some(&stream_error(
            "Incomplete response returned, reason: unknown"
        ))
    );
    assert!(!reader.is_done());
}

#[test]
fn completion_that_does_not_parse() {
    let bad = json!({"type": "response.completed", "response": {"status": "completed"}});
    let message = "failed to parse ResponseCompleted: missing field `id`";
    assert_eq!(
        client_view(std::slice::from_ref(&bad)),
        vec![Err(stream_error(message))]
    );
    // Deferred like the others: a good completion afterwards wins.
    assert_eq!(
        client_view(&[
            bad.clone(),
            json!({"type": "response.completed", "response": {"id": "r2"}})
        ]),
        vec![Ok(completed("r2"))]
    );
    let (entries, _) = read_all(stream_of(&[bad]).as_bytes(), Duration::ZERO);
    assert_eq!(entries[0].error, Some(stream_error(message)));
    // A completion without `response` (or with null) is not a completion.
    assert_eq!(
        client_view(&[
            json!({"type": "response.completed"}),
            json!({"type": "response.completed", "response": null})
        ]),
        vec![Err(stream_error("stream closed before response.completed"))]
    );
    let wrong_type = json!({"type": "response.completed", "response": {"id": 12}});
    assert_eq!(
        client_view(&[wrong_type]),
        vec![Err(stream_error(
            "failed to parse ResponseCompleted: invalid type: integer `12`, expected a string"
        ))]
    );
}

#[test]
fn transport_errors_and_idle_timeout_end_the_turn_at_once() {
    let mut reader = StreamReader::new();
    let start = stream_of(&[
        failed(json!({"code": "insufficient_quota"})),
        json!({"type": "response.output_text.delta", "delta": "par"}),
    ]);
    reader.push(start.as_bytes(), Duration::from_millis(10));
    reader.fail(stream_error(IDLE_TIMEOUT), Duration::from_millis(300));
    // The transport error supersedes the deferred one; the partial text stays.
    assert_eq!(
        reader.outcome().state,
        TurnState::Failed(stream_error("idle timeout waiting for SSE"))
    );
    assert_eq!(reader.outcome().text, "par");
    assert_eq!(
        reader.outcome().timings.total,
        Some(Duration::from_millis(300))
    );
    // Nothing changes it afterwards.
    reader.fail(stream_error("later"), Duration::from_millis(400));
    assert_eq!(reader.finish(Duration::from_millis(500)), vec![]);
    assert_eq!(
        reader.outcome().state,
        TurnState::Failed(stream_error("idle timeout waiting for SSE"))
    );
}

#[test]
fn events_after_completion_in_the_same_chunk_are_not_read() {
    let bytes = stream_of(&[
        json!({"type": "response.completed", "response": {"id": "r"}}),
        json!({"type": "response.output_text.delta", "delta": "after"}),
        json!({"type": "response.failed"}),
    ]);
    let mut reader = StreamReader::new();
    let entries = reader.push(bytes.as_bytes(), Duration::ZERO);
    assert_eq!(entries.len(), 1);
    assert_eq!(reader.ignored_after_completion(), 2);
    assert_eq!(reader.outcome().text, "");
    assert_eq!(reader.outcome().response_id(), Some("r"));
}
