//! Generates the bundled sample recordings `sessions/samples/*.har` (run with
//! `cargo run --example session_samples`). Each session compiles Prompts from `assets/prompts/`
//! with the real compiler, pairs every request with an SSE stream written here, records both
//! into an in-memory store, and exports the session as HAR 1.2 (no secrets: keys never reach the
//! compiled headers).

use std::path::Path;
use std::time::Duration;

use promptwire::core::compile::compile;
use promptwire::core::models::ModelCatalog;
use promptwire::core::prefix::tokens::Tokenizer;
use promptwire::core::prompt::Prompt;
use promptwire::core::provider::Provider;
use promptwire::core::rules::CompileRules;
use promptwire::core::stream::{ErrorClass, SseDecoder, StreamReader};
use promptwire::store::{NewSession, OutcomeRecord, RecordedState, ResponseMeta, Source, Store};
use serde_json::{Value, json};

/// Start of the recordings: 2026-11-20T10:00:00Z.
const T0_US: i64 = 1_795_168_800_000_000;

fn event(name: &str, seq: &mut u64, mut data: Value) -> String {
    if let Some(map) = data.as_object_mut() {
        let mut out = serde_json::Map::new();
        out.insert("type".to_string(), json!(name));
        out.insert("sequence_number".to_string(), json!(*seq));
        for (k, v) in std::mem::take(map) {
            out.insert(k, v);
        }
        *map = out;
    }
    *seq += 1;
    format!("event: {name}\ndata: {data}\n\n")
}

fn usage(input: u64, cached: u64, output: u64) -> Value {
    json!({"input_tokens": input, "input_tokens_details": {"cached_tokens": cached}, "output_tokens": output, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": input + output})
}

/// A streamed text answer.
fn text_stream(resp: &str, msg: &str, words: &[&str], usage: Value) -> String {
    let mut seq = 0;
    let mut out = event(
        "response.created",
        &mut seq,
        json!({"response": {"id": resp, "status": "in_progress"}}),
    );
    out += &event(
        "response.output_item.added",
        &mut seq,
        json!({"output_index": 0, "item": {"id": msg, "type": "message", "status": "in_progress", "role": "assistant", "content": []}}),
    );
    for w in words {
        out += &event(
            "response.output_text.delta",
            &mut seq,
            json!({"item_id": msg, "output_index": 0, "content_index": 0, "delta": w}),
        );
    }
    let text: String = words.concat();
    out += &event(
        "response.output_item.done",
        &mut seq,
        json!({"output_index": 0, "item": {"id": msg, "type": "message", "status": "completed", "role": "assistant", "content": [{"type": "output_text", "annotations": [], "text": text}]}}),
    );
    out += &event(
        "response.completed",
        &mut seq,
        json!({"response": {"id": resp, "status": "completed", "end_turn": true, "usage": usage}}),
    );
    out
}

/// A streamed function call.
fn tool_stream(resp: &str, id: &str, call: &str, name: &str, args: &str, usage: Value) -> String {
    let mut seq = 0;
    let mut out = event(
        "response.created",
        &mut seq,
        json!({"response": {"id": resp, "status": "in_progress"}}),
    );
    out += &event(
        "response.output_item.added",
        &mut seq,
        json!({"output_index": 0, "item": {"id": id, "type": "function_call", "status": "in_progress", "name": name, "call_id": call, "arguments": ""}}),
    );
    let (a, b) = args.split_at(args.len() / 2);
    for part in [a, b] {
        out += &event(
            "response.function_call_arguments.delta",
            &mut seq,
            json!({"item_id": id, "output_index": 0, "delta": part}),
        );
    }
    out += &event(
        "response.output_item.done",
        &mut seq,
        json!({"output_index": 0, "item": {"id": id, "type": "function_call", "status": "completed", "name": name, "call_id": call, "arguments": args}}),
    );
    out += &event(
        "response.completed",
        &mut seq,
        json!({"response": {"id": resp, "status": "completed", "end_turn": false, "usage": usage}}),
    );
    out
}

struct Recorder<'a> {
    store: &'a mut Store,
    session: i64,
    clock_us: i64,
}

impl Recorder<'_> {
    /// Records one turn: `prompt` with its input cut to `input_len` items, answered by `sse`
    /// (HTTP `status`; a non-2xx status makes `sse` the error body).
    fn turn(
        &mut self,
        prompt: &Prompt,
        input_len: usize,
        status: u16,
        sse: &str,
    ) -> Result<(), Box<dyn std::error::Error>> {
        let mut prompt = prompt.clone();
        prompt.input.truncate(input_len);
        let model = ModelCatalog::bundled().lookup(&prompt.model);
        let target = &prompt.compile;
        let rules = CompileRules::preset(&target.rules).ok_or("unknown rules preset")?;
        let provider = Provider::preset(target.provider);
        let compiled = compile(&prompt, &model, &provider, target.dialect, &rules)?;
        let request = self
            .store
            .add_compiled(self.session, &compiled, Some(self.clock_us))?;
        let wait = Duration::from_millis(420);
        let mut events = Vec::new();
        let outcome;
        let mut body = None;
        if (200..300).contains(&status) {
            let mut decoder = SseDecoder::new();
            let mut reader = StreamReader::new();
            let mut at = wait;
            for chunk in sse.split_inclusive("\n\n") {
                at += Duration::from_millis(35);
                events.extend(decoder.push(chunk.as_bytes(), at));
                reader.push(chunk.as_bytes(), at);
            }
            events.extend(decoder.finish(at));
            reader.finish(at);
            outcome = OutcomeRecord::from_turn(reader.outcome());
        } else {
            body = Some(sse.to_string());
            outcome = OutcomeRecord {
                state: RecordedState::Failed,
                error_class: Some(ErrorClass::Unknown("http".to_string())),
                error_message: Some(format!("HTTP {status}")),
                ..OutcomeRecord::default()
            };
        }
        let total = events.last().map_or(wait, |e| e.received_at);
        self.store.add_events(request, &events)?;
        let micros = |d: Duration| i64::try_from(d.as_micros()).unwrap_or(i64::MAX);
        self.store.set_response(
            request,
            &ResponseMeta {
                status: Some(status),
                headers: vec![
                    (
                        "content-type".to_string(),
                        if body.is_some() {
                            "application/json"
                        } else {
                            "text/event-stream"
                        }
                        .to_string(),
                    ),
                    (
                        "x-request-id".to_string(),
                        format!("req_sample_{request:04}"),
                    ),
                ],
                body: body.map(String::into_bytes),
                wait_us: Some(micros(wait)),
                total_us: Some(micros(total)),
                http_version: None,
                extra: None,
            },
        )?;
        self.store.set_outcome(request, &outcome)?;
        self.clock_us += 45_000_000;
        Ok(())
    }
}

/// Tokens (o200k_base) of the body `prompt` compiles to with its input cut to `input_len` items:
/// the sample's stand-in for the server's `input_tokens`.
fn body_tokens(prompt: &Prompt, input_len: usize) -> Result<u64, Box<dyn std::error::Error>> {
    let mut prompt = prompt.clone();
    prompt.input.truncate(input_len);
    let model = ModelCatalog::bundled().lookup(&prompt.model);
    let target = &prompt.compile;
    let rules = CompileRules::preset(&target.rules).ok_or("unknown rules preset")?;
    let compiled = compile(
        &prompt,
        &model,
        &Provider::preset(target.provider),
        target.dialect,
        &rules,
    )?;
    let text = String::from_utf8(compiled.body_json.clone())?;
    Ok(Tokenizer::o200k().count(&text))
}

/// What the server reports cached when a whole earlier prompt of `tokens` is reused: nothing
/// under 1,024 tokens, else the prompt in whole 128-token blocks.
fn cached_blocks(tokens: u64) -> u64 {
    if tokens < 1024 { 0 } else { tokens / 128 * 128 }
}

/// Working guidance appended to the sample's base instructions (written for the sample; about
/// 750 tokens, which takes the prompt past the 1,024-token caching floor).
const AGENT_GUIDE: &str = include_str!("session_samples_guide.txt");

fn load(name: &str) -> Result<Prompt, Box<dyn std::error::Error>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/prompts")
        .join(name);
    Ok(Prompt::from_json_str(&std::fs::read_to_string(path)?)?)
}

fn session(
    store: &mut Store,
    name: &str,
    model: &str,
    start_us: i64,
) -> Result<i64, Box<dyn std::error::Error>> {
    Ok(store.create_session(&NewSession {
        name: name.to_string(),
        source: Source::Send,
        provider: Some("openai".to_string()),
        model: Some(model.to_string()),
        created_us: start_us,
    })?)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions/samples");
    std::fs::create_dir_all(&out_dir)?;
    let mut store = Store::open_in_memory()?;

    // 1. A multi-turn, tool-using session: the prompt's history replayed turn by turn.
    let tools = load("tools-session.json")?;
    let start = T0_US;
    let id = session(&mut store, "tool-calls", &tools.model, start)?;
    let mut rec = Recorder {
        store: &mut store,
        session: id,
        clock_us: start,
    };
    rec.turn(
        &tools,
        1,
        200,
        &tool_stream(
            "resp_s1_01",
            "fc_7d21e0",
            "call_A1",
            "shell",
            r#"{"cmd":"find src -name '*.rs' | wc -l"}"#,
            usage(body_tokens(&tools, 1)?, 0, 41),
        ),
    )?;
    rec.turn(
        &tools,
        4,
        200,
        &text_stream(
            "resp_s1_02",
            "msg_9e0b11",
            &["There are ", "14 Rust files ", "in src/."],
            usage(
                body_tokens(&tools, 4)?,
                cached_blocks(body_tokens(&tools, 1)?),
                12,
            ),
        ),
    )?;
    rec.turn(
        &tools,
        6,
        200,
        &tool_stream(
            "resp_s1_03",
            "fc_80aa12",
            "call_B2",
            "shell",
            r#"{"cmd":"wc -c src/*.rs | sort -n | tail -2"}"#,
            usage(1990, 1920, 38),
        ),
    )?;

    // 2. A Lite session (the model uses Responses Lite).
    let lite = load("lite-image.json")?;
    let start = T0_US + 3_600_000_000;
    let id = session(&mut store, "lite-image", &lite.model, start)?;
    let mut rec = Recorder {
        store: &mut store,
        session: id,
        clock_us: start,
    };
    rec.turn(
        &lite,
        1,
        200,
        &text_stream(
            "resp_s2_01",
            "msg_l1",
            &["Yes: the footer ", "covers the submit ", "button by 24 px."],
            usage(2604, 0, 19),
        ),
    )?;

    // 3. Failing streams: a rate-limited turn, an HTTP 500, then a stream cut off mid-answer.
    let hello = load("hello.json")?;
    let start = T0_US + 7_200_000_000;
    let id = session(&mut store, "failing-stream", &hello.model, start)?;
    let mut rec = Recorder {
        store: &mut store,
        session: id,
        clock_us: start,
    };
    let mut seq = 0;
    let failed = event(
        "response.created",
        &mut seq,
        json!({"response": {"id": "resp_s3_01", "status": "in_progress"}}),
    ) + &event(
        "response.failed",
        &mut seq,
        json!({"response": {"id": "resp_s3_01", "status": "failed", "error": {"code": "rate_limit_exceeded", "message": "Rate limit reached for requests per min (RPM). Please try again in 2.5s."}}}),
    );
    rec.turn(&hello, hello.input.len(), 200, &failed)?;
    rec.turn(&hello, hello.input.len(), 500, r#"{"error":{"message":"The server had an error while processing your request.","type":"server_error"}}"#)?;
    let full = text_stream(
        "resp_s3_03",
        "msg_h3",
        &["Hello", " there, ", "how can"],
        usage(900, 0, 9),
    );
    let cut: String = full.split_inclusive("\n\n").take(4).collect();
    rec.turn(&hello, hello.input.len(), 200, &cut)?;

    // 4. A cache-prefix break: the instructions are edited between turns 2 and 3. The base
    // instructions are as long as a real agent's, so the prompt is past the 1,024-token caching
    // floor, and the usage each turn reports is what the server would: the body's tokens, the
    // previous request's prompt cached in 128-token blocks while the prefix holds, 0 after the
    // break.
    let mut long = tools.clone();
    long.base_instructions = format!("{}\n\n{AGENT_GUIDE}", long.base_instructions);
    let tools = long;
    let mut edited = tools.clone();
    let start = T0_US + 10_800_000_000;
    let id = session(&mut store, "cache-prefix-break", &tools.model, start)?;
    let mut rec = Recorder {
        store: &mut store,
        session: id,
        clock_us: start,
    };
    rec.turn(
        &tools,
        1,
        200,
        &tool_stream(
            "resp_s4_01",
            "fc_7d21e0",
            "call_A1",
            "shell",
            r#"{"cmd":"find src -name '*.rs' | wc -l"}"#,
            usage(body_tokens(&tools, 1)?, 0, 41),
        ),
    )?;
    rec.turn(
        &tools,
        4,
        200,
        &text_stream(
            "resp_s4_02",
            "msg_9e0b11",
            &["There are ", "14 Rust files ", "in src/."],
            usage(
                body_tokens(&tools, 4)?,
                cached_blocks(body_tokens(&tools, 1)?),
                12,
            ),
        ),
    )?;
    edited.base_instructions = format!("{} Answer in one sentence.", edited.base_instructions);
    rec.turn(
        &edited,
        6,
        200,
        &text_stream(
            "resp_s4_03",
            "msg_c4",
            &["src/main.rs ", "is the largest."],
            usage(body_tokens(&edited, 6)?, 0, 9),
        ),
    )?;

    for session in store.list_sessions(promptwire::store::Page::ALL)? {
        let har = store.export_har(session.id, true)?;
        let path = out_dir.join(format!("{}.har", session.name));
        std::fs::write(&path, serde_json::to_string_pretty(&har)? + "\n")?;
        println!("{} ({} requests)", path.display(), session.requests);
    }
    Ok(())
}
