//! The agent turn loop: from one request's [`Prompt`] and the [`TurnOutcome`] that answered it,
//! the next request's Prompt, built the way the Codex client builds it — and a check that the
//! new request keeps the prompt-cache prefix of the previous one.
//!
//! The next input is, in order:
//!
//! 1. the previous input, untouched;
//! 2. the response's output items exactly as they arrived in `response.output_item.done`
//!    (reasoning with its `encrypted_content`, calls and messages with their `status`): they are
//!    parsed into [`ResponseItem`]s, whose serialization and the rules preset decide field order
//!    and null-vs-omitted, as for any other item — nothing here re-types them;
//! 3. one `function_call_output` per `function_call` and one `custom_tool_call_output` per
//!    `custom_tool_call`, in call order, with the output the caller gives for that call id (or
//!    [`PLACEHOLDER_OUTPUT`]);
//! 4. optionally a new user message (a new turn of the conversation).
//!
//! Everything else in the Prompt (model, tools, settings, cache key) carries over; a new turn may
//! bring its own `client_metadata` (Codex puts per-turn ids there). Ids of the items the client
//! creates (Codex 0.169 gives outputs `fco_…` and messages `msg_…` ids made from the clock) are
//! passed in by the caller: this module reads no clock.
//!
//! Pure: no I/O.

use std::collections::HashSet;

use serde_json::Value;

use super::items::{
    ContentItem, CustomToolCallOutputItem, FunctionCallOutputItem, MessageItem, ResponseItem,
    ToolOutput,
};
use super::json::JsonMap;
use super::ledger::{Counting, PairVerdict, compare_pair};
use super::prefix::{PrefixError, RequestMeta, Session, Tokenizer};
use super::prompt::Prompt;
use super::stream::{TurnOutcome, TurnState};

/// The output sent for a call the caller gave no output for.
pub const PLACEHOLDER_OUTPUT: &str = "(no output: edit this tool output before sending)";

/// The output the client gives for one tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct CallOutput {
    /// The call it answers (`call_id` of the `function_call` / `custom_tool_call`).
    pub call_id: String,
    /// The output text.
    pub output: String,
    /// Id of the output item (`fco_…`), if the client gives one.
    pub id: Option<String>,
}

/// A new user message that starts the next turn.
#[derive(Debug, Clone, PartialEq)]
pub struct UserMessage {
    /// Its text (one `input_text` part).
    pub text: String,
    /// Item id (`msg_…`), if the client gives one.
    pub id: Option<String>,
}

/// What the client adds after the response's items.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Continuation {
    /// Outputs of the response's tool calls, by call id; calls not listed get
    /// [`PLACEHOLDER_OUTPUT`].
    pub outputs: Vec<CallOutput>,
    /// A user message appended after the outputs.
    pub user_message: Option<UserMessage>,
    /// `client_metadata` of the next request (a new turn); `None` keeps the previous one.
    pub client_metadata: Option<JsonMap>,
}

/// The kinds of item the client adds to the next request, each with its own id prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddedItem {
    /// A `function_call_output` / `custom_tool_call_output` (`fco_…`).
    ToolOutput,
    /// A user message (`msg_…`).
    UserMessage,
}

/// The id Codex 0.169 gives an item it adds: `fco_{uuid}` / `msg_{uuid}`, the uuid a v7 the
/// caller made from its clock (this module reads none).
pub fn codex_item_id(kind: AddedItem, uuid: uuid::Uuid) -> String {
    let prefix = match kind {
        AddedItem::ToolOutput => "fco",
        AddedItem::UserMessage => "msg",
    };
    format!("{prefix}_{uuid}")
}

impl Continuation {
    /// What the client adds after `outcome`, as the Codex client builds it — the one way the CLI
    /// and the app build it: an output for every tool call of the response in call order (the
    /// text given for its call id, [`PLACEHOLDER_OUTPUT`] otherwise), then `user` when given;
    /// each gets an id made by [`codex_item_id`] from `uuid()` (pass `uuid::Uuid::now_v7` for
    /// Codex's ids). Outputs for call ids the response did not make (or given twice) are kept,
    /// without an id, so that [`next_prompt`] refuses them.
    pub fn answering(
        outcome: &TurnOutcome,
        outputs: Vec<(String, String)>,
        user: Option<String>,
        mut uuid: impl FnMut() -> uuid::Uuid,
    ) -> Self {
        let mut given: Vec<Option<(String, String)>> = outputs.into_iter().map(Some).collect();
        let mut list: Vec<CallOutput> = pending_calls(outcome)
            .into_iter()
            .map(|call| {
                let text = given
                    .iter_mut()
                    .find(|g| g.as_ref().is_some_and(|(id, _)| *id == call.call_id))
                    .and_then(Option::take)
                    .map_or_else(|| PLACEHOLDER_OUTPUT.to_string(), |(_, text)| text);
                CallOutput {
                    call_id: call.call_id,
                    output: text,
                    id: Some(codex_item_id(AddedItem::ToolOutput, uuid())),
                }
            })
            .collect();
        list.extend(
            given
                .into_iter()
                .flatten()
                .map(|(call_id, output)| CallOutput {
                    call_id,
                    output,
                    id: None,
                }),
        );
        Self {
            outputs: list,
            user_message: user.map(|text| UserMessage {
                text,
                id: Some(codex_item_id(AddedItem::UserMessage, uuid())),
            }),
            client_metadata: None,
        }
    }
}

/// A tool call of the response that the next request must answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingCall {
    /// Call id.
    pub call_id: String,
    /// Tool name.
    pub name: String,
    /// `function_call` or `custom_tool_call`.
    pub kind: &'static str,
    /// Function arguments (JSON text) or custom tool input.
    pub arguments: String,
}

/// Why the next request cannot be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TurnLoopError {
    /// The response did not complete; Codex retries such a request rather than continuing it.
    #[error("the response did not complete ({state}); only a completed response can be continued")]
    NotCompleted {
        /// `open` (cancelled or still streaming) or the failure message.
        state: String,
    },
    /// An output names a call id the response did not make.
    #[error(
        "tool output for call `{call_id}`: the response made no such call (its calls: {known})"
    )]
    UnknownCall {
        /// The call id given.
        call_id: String,
        /// The response's call ids, comma-separated (or `none`).
        known: String,
    },
    /// Two outputs for the same call.
    #[error("tool output for call `{0}` is given twice")]
    DuplicateOutput(String),
    /// No tool call to answer and no user message: the next request would repeat this one.
    #[error("the response made no tool calls: give a user message to continue")]
    NothingToSend,
}

/// The tool calls of a response, in order, that the next request answers.
pub fn pending_calls(outcome: &TurnOutcome) -> Vec<PendingCall> {
    outcome
        .output_items
        .iter()
        .filter_map(|item| match item {
            ResponseItem::FunctionCall(call) => Some(PendingCall {
                call_id: call.call_id.clone(),
                name: call.name.clone(),
                kind: "function_call",
                arguments: call.arguments.clone(),
            }),
            ResponseItem::CustomToolCall(call) => Some(PendingCall {
                call_id: call.call_id.clone(),
                name: call.name.clone(),
                kind: "custom_tool_call",
                arguments: call.input.clone(),
            }),
            _ => None,
        })
        .collect()
}

/// Builds the next request's Prompt from the previous one and the response that answered it.
pub fn next_prompt(
    previous: &Prompt,
    outcome: &TurnOutcome,
    continuation: &Continuation,
) -> Result<Prompt, TurnLoopError> {
    match &outcome.state {
        TurnState::Completed { .. } => {}
        TurnState::Open => {
            return Err(TurnLoopError::NotCompleted {
                state: "no response.completed".to_string(),
            });
        }
        TurnState::Failed(err) => {
            return Err(TurnLoopError::NotCompleted {
                state: format!("failed: {err}"),
            });
        }
    }
    let calls = pending_calls(outcome);
    check_outputs(&calls, &continuation.outputs)?;
    if calls.is_empty() && continuation.user_message.is_none() {
        return Err(TurnLoopError::NothingToSend);
    }
    let mut next = previous.clone();
    next.input
        .reserve(outcome.output_items.len() + calls.len() + 1);
    next.input.extend(outcome.output_items.iter().cloned());
    for call in &calls {
        let given = continuation
            .outputs
            .iter()
            .find(|o| o.call_id == call.call_id);
        let text = given.map_or(PLACEHOLDER_OUTPUT, |o| o.output.as_str());
        let id = given.and_then(|o| o.id.clone());
        next.input.push(output_item(call, text, id));
    }
    if let Some(message) = &continuation.user_message {
        next.input.push(user_message(message));
    }
    if let Some(metadata) = &continuation.client_metadata {
        next.client_metadata = Some(metadata.clone());
    }
    Ok(next)
}

fn check_outputs(calls: &[PendingCall], outputs: &[CallOutput]) -> Result<(), TurnLoopError> {
    let mut seen = HashSet::new();
    for output in outputs {
        if !calls.iter().any(|c| c.call_id == output.call_id) {
            let known: Vec<&str> = calls.iter().map(|c| c.call_id.as_str()).collect();
            return Err(TurnLoopError::UnknownCall {
                call_id: output.call_id.clone(),
                known: if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                },
            });
        }
        if !seen.insert(output.call_id.as_str()) {
            return Err(TurnLoopError::DuplicateOutput(output.call_id.clone()));
        }
    }
    Ok(())
}

fn output_item(call: &PendingCall, text: &str, id: Option<String>) -> ResponseItem {
    let output = ToolOutput::Text(text.to_string());
    if call.kind == "custom_tool_call" {
        ResponseItem::CustomToolCallOutput(CustomToolCallOutputItem {
            id,
            call_id: call.call_id.clone(),
            name: None,
            output,
            metadata: None,
            extra: JsonMap::new(),
        })
    } else {
        ResponseItem::FunctionCallOutput(FunctionCallOutputItem {
            id,
            call_id: Some(call.call_id.clone()),
            name: None,
            namespace: None,
            output,
            metadata: None,
            extra: JsonMap::new(),
        })
    }
}

fn user_message(message: &UserMessage) -> ResponseItem {
    ResponseItem::Message(MessageItem {
        id: message.id.clone(),
        role: "user".to_string(),
        content: vec![ContentItem::InputText {
            text: message.text.clone(),
            extra: JsonMap::new(),
        }],
        phase: None,
        metadata: None,
        extra: JsonMap::new(),
    })
}

/// The prefix verdict of two compiled request bodies (previous, next): whether the next prompt
/// begins with the previous one exactly, and if not where and why, on the rendered prompt
/// (see [`crate::core::ledger`]).
pub fn prefix_check(
    previous_body: &JsonMap,
    next_body: &JsonMap,
    tokenizer: Tokenizer,
) -> Result<PairVerdict, PrefixError> {
    let mut session = Session::new(tokenizer);
    session.push_body(
        &Value::Object(previous_body.clone()),
        RequestMeta::default(),
    )?;
    session.push_body(&Value::Object(next_body.clone()), RequestMeta::default())?;
    Ok(compare_pair(&session, &Counting::default(), 0, 1))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::core::stream::read_all;

    /// The fixture's response: a custom tool call `call_Qx81Lm`, then a function call
    /// `call_Vb27Ps`.
    fn tool_calls() -> TurnOutcome {
        let bytes = include_bytes!("../../tests/data/sse/tool-calls-crlf.sse");
        read_all(bytes, Duration::ZERO).1
    }

    /// Uuids 1, 2, 3… (the caller's clock, here a counter).
    fn counter() -> impl FnMut() -> uuid::Uuid {
        let mut next = 0u128;
        move || {
            next += 1;
            uuid::Uuid::from_u128(next)
        }
    }

    fn id(n: u128, kind: AddedItem) -> Option<String> {
        Some(codex_item_id(kind, uuid::Uuid::from_u128(n)))
    }

    #[test]
    fn answering_gives_every_call_an_output_and_an_id_in_call_order() {
        let outcome = tool_calls();
        let given = vec![("call_Vb27Ps".to_string(), "ok".to_string())];
        let continuation =
            Continuation::answering(&outcome, given, Some("next?".to_string()), counter());
        let expected = Continuation {
            outputs: vec![
                CallOutput {
                    call_id: "call_Qx81Lm".to_string(),
                    output: PLACEHOLDER_OUTPUT.to_string(),
                    id: id(1, AddedItem::ToolOutput),
                },
                CallOutput {
                    call_id: "call_Vb27Ps".to_string(),
                    output: "ok".to_string(),
                    id: id(2, AddedItem::ToolOutput),
                },
            ],
            user_message: Some(UserMessage {
                text: "next?".to_string(),
                id: id(3, AddedItem::UserMessage),
            }),
            client_metadata: None,
        };
        assert_eq!(continuation, expected);
        assert_eq!(
            id(1, AddedItem::ToolOutput).as_deref(),
            Some("fco_00000000-0000-0000-0000-000000000001")
        );
    }

    #[test]
    fn answering_keeps_unknown_and_repeated_outputs_so_next_prompt_refuses_them() {
        let outcome = tool_calls();
        let previous = Prompt::new("gpt-5.5");
        let unknown = Continuation::answering(
            &outcome,
            vec![("call_nope".to_string(), "x".to_string())],
            None,
            counter(),
        );
        assert_eq!(
            next_prompt(&previous, &outcome, &unknown).map(|_| ()),
            Err(TurnLoopError::UnknownCall {
                call_id: "call_nope".to_string(),
                known: "call_Qx81Lm, call_Vb27Ps".to_string(),
            })
        );
        let twice = Continuation::answering(
            &outcome,
            vec![
                ("call_Vb27Ps".to_string(), "a".to_string()),
                ("call_Vb27Ps".to_string(), "b".to_string()),
            ],
            None,
            counter(),
        );
        assert_eq!(
            next_prompt(&previous, &outcome, &twice).map(|_| ()),
            Err(TurnLoopError::DuplicateOutput("call_Vb27Ps".to_string()))
        );
    }
}
