//! A WebSocket stand-in for the Responses API, as Codex's WebSocket transport talks to it: every
//! `response.create` frame gets `response.created`, its output items (`output_item.added` /
//! `.done`) and `response.completed` with the output and a usage; a `generate: false` warm-up
//! gets no output. A request whose last item is a user message asking to "Run a command" is
//! answered with an `exec_command` function call; one asking to "Delegate" with Codex's
//! `collaboration.spawn_agent` call, whose output is answered with `wait_agent`; any other turn
//! with an assistant message.
//! Response ids count up across connections (`resp_ws_000`, …) and every frame received is
//! kept, so a test can hold the recording against what the upstream saw.

use std::sync::{Arc, Mutex};

use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use super::loopback;

/// A running stand-in.
pub struct WsStandIn {
    addr: std::net::SocketAddr,
    received: Arc<Mutex<Vec<Value>>>,
}

impl WsStandIn {
    /// Starts it on 127.0.0.1.
    pub fn start() -> Self {
        let received = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&received);
        let counter = Arc::new(Mutex::new(0usize));
        let addr = loopback::spawn(move |listener| async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (log, counter) = (Arc::clone(&log), Arc::clone(&counter));
                tokio::spawn(async move {
                    let Ok(mut ws) = tokio_tungstenite::accept_async(stream).await else {
                        return;
                    };
                    while let Some(Ok(message)) = ws.next().await {
                        let Message::Text(text) = message else {
                            continue;
                        };
                        let Ok(request) = serde_json::from_str::<Value>(&text) else {
                            continue;
                        };
                        if request["type"] != "response.create" {
                            continue;
                        }
                        log.lock().expect("log").push(request.clone());
                        let n = {
                            let mut c = counter.lock().expect("counter");
                            *c += 1;
                            *c - 1
                        };
                        for frame in answer(&request, n) {
                            if ws.send(Message::text(frame.to_string())).await.is_err() {
                                return;
                            }
                        }
                    }
                });
            }
        });
        Self { addr, received }
    }

    /// The provider base URL (`http://ADDR/v1`; Codex derives `ws://ADDR/v1/responses`).
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Every `response.create` received, in order.
    pub fn received(&self) -> Vec<Value> {
        self.received.lock().expect("log").clone()
    }
}

/// The frames answering request number `n`.
fn answer(request: &Value, n: usize) -> Vec<Value> {
    let id = format!("resp_ws_{n:03}");
    let warmup = request["generate"] == json!(false);
    let last = request["input"]
        .as_array()
        .and_then(|items| items.last())
        .cloned()
        .unwrap_or(Value::Null);
    let asks_for_a_command = last["type"] == "message"
        && last["role"] == "user"
        && last.to_string().contains("Run a command");
    let delegates = last["type"] == "message"
        && last["role"] == "user"
        && last.to_string().contains("Delegate");
    let output_of = |prefix: &str| {
        last["type"] == "function_call_output"
            && last["call_id"]
                .as_str()
                .is_some_and(|id| id.starts_with(prefix))
    };
    // Codex 0.171's collaboration tools (`-c features.multi_agent_v2=true`): spawn a subagent,
    // then wait for it, then answer.
    let collaboration = |name: &str, arguments: &str| {
        json!({"type": "function_call", "id": format!("fc_{n:03}"), "status": "completed",
               "call_id": format!("call_{name}_{n:03}"), "name": name,
               "namespace": "collaboration", "arguments": arguments})
    };
    let items: Vec<Value> = if warmup {
        Vec::new()
    } else if delegates {
        vec![collaboration(
            "spawn_agent",
            r#"{"task_name":"check","message":"Say hello.","fork_turns":"none"}"#,
        )]
    } else if output_of("call_spawn_agent_") {
        vec![collaboration("wait_agent", r#"{"timeout_ms":10000}"#)]
    } else if asks_for_a_command {
        vec![
            json!({"type": "function_call", "id": format!("fc_{n:03}"), "status": "completed",
                    "call_id": format!("call_{n:03}"), "name": "exec_command",
                    "arguments": "{\"cmd\":\"echo promptwire\"}"}),
        ]
    } else {
        vec![
            json!({"type": "message", "id": format!("msg_{n:03}"), "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": "Done over WS.", "annotations": []}]}),
        ]
    };
    let input_tokens = 1000 + n as u64;
    let mut frames = vec![json!({"type": "response.created",
                                 "response": {"id": id, "status": "in_progress"}})];
    for (index, item) in items.iter().enumerate() {
        frames.push(
            json!({"type": "response.output_item.added", "output_index": index, "item": item}),
        );
        frames.push(
            json!({"type": "response.output_item.done", "output_index": index, "item": item}),
        );
    }
    frames.push(json!({"type": "response.completed", "response": {
        "id": id, "status": "completed", "output": items,
        "usage": {"input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": input_tokens + 5}}}));
    frames
}

/// The next `count` text frames `ws` receives, as text.
///
/// # Panics
/// When the socket ends or errs first, or a frame is not text.
pub async fn read_texts<S, E>(ws: &mut S, count: usize) -> Vec<String>
where
    S: futures_util::Stream<Item = Result<Message, E>> + Unpin,
    E: std::fmt::Debug,
{
    let mut got = Vec::new();
    while got.len() < count {
        match ws.next().await.expect("frame").expect("ok") {
            Message::Text(text) => got.push(text.to_string()),
            other => panic!("unexpected {other:?}"),
        }
    }
    got
}
