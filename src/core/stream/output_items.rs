//! The output items of a recorded response exactly as the server sent them (raw JSON, its key
//! order kept), read from its raw events: what a later request that names the response in
//! `previous_response_id` continues from (the server prepends the response's input and these
//! items to the new ones — Codex's WebSocket transport works this way, WIRE_SPEC §9).
//!
//! The terminal event's `response.output` (streamed `response.completed` / `response.incomplete`,
//! or the one event of a JSON answer) is the server's own list and wins when it is not empty;
//! otherwise the items of the `response.output_item.done` events are taken, ordered by their
//! `output_index` (then by arrival). Events that do not parse are skipped: a broken stream gives
//! the items it got as far as it got.

use serde_json::Value;

use super::json_response::JSON_RESPONSE_EVENT;
use super::sse::RawEvent;

/// The output items of the response recorded as `events`, as JSON values.
pub fn output_items<'a>(events: impl IntoIterator<Item = &'a RawEvent>) -> Vec<Value> {
    let mut done: Vec<(u64, Value)> = Vec::new();
    for event in events {
        let json = event.event.as_deref() == Some(JSON_RESPONSE_EVENT);
        if !json && !mentions_items(&event.data) {
            continue;
        }
        let Ok(Value::Object(mut value)) = serde_json::from_str::<Value>(&event.data) else {
            continue;
        };
        let kind = value
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let response = if json {
            Some(&mut value)
        } else if matches!(
            kind.as_str(),
            "response.completed" | "response.incomplete" | "response.done"
        ) {
            value.get_mut("response").and_then(Value::as_object_mut)
        } else {
            None
        };
        if let Some(response) = response {
            if let Some(Value::Array(output)) = response.get_mut("output")
                && !output.is_empty()
            {
                return std::mem::take(output);
            }
            continue;
        }
        if kind == "response.output_item.done"
            && let Some(item) = value.remove("item")
        {
            let index = value
                .get("output_index")
                .and_then(Value::as_u64)
                .unwrap_or(u64::MAX);
            done.push((index, item));
        }
    }
    // A stable sort: items without an index keep their arrival order, after the others.
    done.sort_by_key(|(index, _)| *index);
    done.into_iter().map(|(_, item)| item).collect()
}

/// A cheap test before parsing: only events that can carry items are parsed.
fn mentions_items(data: &str) -> bool {
    data.contains("response.output_item.done")
        || data.contains("response.completed")
        || data.contains("response.incomplete")
        || data.contains("response.done")
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn event(seq: u64, data: Value) -> RawEvent {
        RawEvent {
            seq,
            received_at: Duration::ZERO,
            event: None,
            data: data.to_string(),
            bytes: None,
        }
    }

    #[test]
    fn items_of_done_events_in_output_order_with_their_key_order() {
        let call = r#"{"type":"function_call","id":"fc_1","call_id":"c1","name":"shell","arguments":"{}"}"#;
        let events = [
            event(
                0,
                json!({"type": "response.created", "response": {"id": "r"}}),
            ),
            RawEvent {
                data: format!(
                    r#"{{"type":"response.output_item.done","output_index":1,"item":{call}}}"#
                ),
                ..event(1, json!({}))
            },
            event(
                2,
                json!({"type": "response.output_item.done", "output_index": 0,
                       "item": {"type": "reasoning", "id": "rs_1", "summary": []}}),
            ),
            event(
                3,
                json!({"type": "response.completed", "response": {"id": "r", "output": []}}),
            ),
        ];
        let items = output_items(&events);
        assert_eq!(
            items.iter().map(Value::to_string).collect::<Vec<_>>(),
            vec![
                r#"{"type":"reasoning","id":"rs_1","summary":[]}"#.to_string(),
                call.to_string()
            ]
        );
        // Key order as sent (serde_json's preserve_order): the call's keys are not sorted.
        assert_eq!(items[1].to_string(), call);
    }

    #[test]
    fn the_terminal_output_wins_and_a_json_answer_gives_its_output() {
        let item = json!({"type": "message", "role": "assistant", "content": []});
        let events = [
            event(
                0,
                json!({"type": "response.output_item.done", "output_index": 0, "item": {"type": "other"}}),
            ),
            event(
                1,
                json!({"type": "response.completed", "response": {"id": "r", "output": [item]}}),
            ),
        ];
        assert_eq!(output_items(&events), vec![item.clone()]);
        let json_answer = RawEvent::json_response(
            json!({"id": "r", "object": "response", "output": [item]}).to_string(),
            Duration::ZERO,
        );
        assert_eq!(output_items([&json_answer]), vec![item]);
        assert_eq!(
            output_items(&[event(0, json!({"type": "error"}))]),
            Vec::<Value>::new()
        );
    }
}
