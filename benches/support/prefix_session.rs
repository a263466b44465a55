//! A generated agent session for the prefix-analysis benchmark and its memory check: 1,000
//! requests whose last body is about 2 MB, held the way a content-addressed store holds it —
//! each distinct item once, each request as its top-level fields plus item indices.
//!
//! The session grows by two items per request (a tool call and its output, or a user and an
//! assistant message), and breaks its prefix a few times on the way: an earlier tool output is
//! edited (request 250), the tools are reordered (500), the cache key changes (750, a warning
//! only) and the model changes (900).

use serde_json::{Map, Value, json};

/// Number of requests.
pub const REQUESTS: usize = 1000;

/// The session: distinct items and heads and, per request, which head and items it uses.
pub struct SyntheticSession {
    /// Every distinct input item.
    pub items: Vec<Value>,
    /// Every distinct head: top-level fields without `input`.
    pub heads: Vec<Map<String, Value>>,
    /// Per request: index into `heads` and indices into `items`.
    pub requests: Vec<(usize, Vec<u32>)>,
}

impl SyntheticSession {
    /// Compact JSON bytes of request `i`'s body (for reporting the size).
    pub fn body_bytes(&self, i: usize) -> usize {
        let (head, ids) = &self.requests[i];
        let mut body = self.heads[*head].clone();
        body.insert(
            "input".to_string(),
            Value::Array(
                ids.iter()
                    .map(|id| self.items[*id as usize].clone())
                    .collect(),
            ),
        );
        serde_json::to_vec(&Value::Object(body)).map_or(0, |b| b.len())
    }
}

/// Deterministic pseudo-random words (xorshift), so every run generates the same session.
struct Words(u64);

impl Words {
    const VOCABULARY: &'static [&'static str] = &[
        "fn",
        "let",
        "mut",
        "impl",
        "struct",
        "crate::core",
        "Result<()>",
        "error[E0308]:",
        "mismatched",
        "types",
        "src/lib.rs:42:7",
        "warning:",
        "unused",
        "import",
        "cargo",
        "test",
        "passed",
        "failed",
        "assert_eq!",
        "left",
        "right",
        "the",
        "build",
        "log",
        "shows",
        "a",
        "panic",
        "at",
        "index",
        "out",
        "of",
        "bounds",
        "thread",
        "main",
        "{",
        "}",
        "=>",
        "Some(x)",
        "None",
        "Vec<String>",
        "HashMap",
        "serde_json::Value",
        "tokio::spawn",
        "await",
        "async",
        "reqwest",
        "0x7f3a",
        "12345",
        "ok",
        "Ok(())",
    ];

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn text(&mut self, bytes: usize) -> String {
        let mut out = String::with_capacity(bytes + 16);
        while out.len() < bytes {
            let word = Self::VOCABULARY[(self.next() % Self::VOCABULARY.len() as u64) as usize];
            out.push_str(word);
            out.push(if self.next().is_multiple_of(9) {
                '\n'
            } else {
                ' '
            });
        }
        out
    }
}

fn tools(reordered: bool) -> Value {
    let mut tools: Vec<Value> = (0..20)
        .map(|i| {
            json!({"type": "function", "name": format!("tool_{i}"),
                "description": "A tool that does one thing well and reports what it did.",
                "strict": false,
                "parameters": {"type": "object", "properties": {"path": {"type": "string"},
                    "line": {"type": "integer"}}, "required": ["path"], "additionalProperties": false}})
        })
        .collect();
    if reordered {
        tools.swap(3, 4);
    }
    Value::Array(tools)
}

/// The head of request `i`; `client_metadata.turn_id` changes every ten requests.
fn head(i: usize, instructions: &str) -> Map<String, Value> {
    let model = if i >= 900 { "gpt-5.5-mini" } else { "gpt-5.5" };
    let key = if i >= 750 { "thread-b" } else { "thread-a" };
    let mut head = Map::new();
    head.insert("model".into(), json!(model));
    head.insert("instructions".into(), json!(instructions));
    head.insert("stream".into(), json!(true));
    head.insert("tools".into(), tools(i >= 500));
    head.insert("tool_choice".into(), json!("auto"));
    head.insert("parallel_tool_calls".into(), json!(true));
    head.insert("reasoning".into(), json!({"effort": "medium"}));
    head.insert("store".into(), json!(false));
    head.insert("include".into(), json!(["reasoning.encrypted_content"]));
    head.insert("prompt_cache_key".into(), json!(key));
    head.insert("text".into(), json!({"verbosity": "low"}));
    head.insert(
        "client_metadata".into(),
        json!({"session_id": "s", "turn_id": format!("t{}", i / 10)}),
    );
    head
}

/// Generates the session.
pub fn generate() -> SyntheticSession {
    let mut words = Words(0x9e37_79b9_7f4a_7c15);
    let instructions = words.text(8_000);
    let mut items: Vec<Value> = Vec::new();
    let mut history: Vec<u32> = Vec::new();
    let mut requests = Vec::with_capacity(REQUESTS);
    let mut heads: Vec<Map<String, Value>> = Vec::new();
    let push = |items: &mut Vec<Value>, value: Value| {
        items.push(value);
        (items.len() - 1) as u32
    };
    let first = push(
        &mut items,
        json!({"type": "message", "role": "user",
        "content": [{"type": "input_text", "text": words.text(600)}]}),
    );
    history.push(first);
    for i in 0..REQUESTS {
        if i == 250 {
            // An earlier tool output is edited in place.
            let edited = json!({"type": "function_call_output", "call_id": "call_5",
                "output": words.text(1_000)});
            history[10] = push(&mut items, edited);
        }
        if i.is_multiple_of(10) {
            heads.push(head(i, &instructions));
        }
        requests.push((heads.len() - 1, history.clone()));
        // The model's answer and the client's next item.
        if i % 5 == 4 {
            let a = push(
                &mut items,
                json!({"type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": words.text(600)}]}),
            );
            let u = push(
                &mut items,
                json!({"type": "message", "role": "user",
                "content": [{"type": "input_text", "text": words.text(300)}]}),
            );
            history.extend([a, u]);
        } else {
            let call_id = format!("call_{i}");
            let c = push(
                &mut items,
                json!({"type": "function_call", "name": "shell",
                "arguments": format!("{{\"cmd\":\"sed -n {i},+40p src/lib.rs\"}}"),
                "call_id": call_id}),
            );
            let o = push(
                &mut items,
                json!({"type": "function_call_output", "call_id": call_id,
                "output": words.text(2_050)}),
            );
            history.extend([c, o]);
        }
    }
    SyntheticSession {
        items,
        heads,
        requests,
    }
}
