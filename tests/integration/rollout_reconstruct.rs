//! Codex rollouts made with the real Codex CLI (0.169 and 0.171, `codex exec` then
//! `codex exec resume --last`; standard and Lite models, a sandbox change, model switches with
//! compaction) against tools/standin_upstream.py, with the request bodies the
//! stand-in received (tests/data/rollouts, see its README): each reconstructed request's `input`
//! equals the captured body's item for item, ids included, wherever the rollout records the item,
//! and the items it rebuilds (base-instructions message, compaction prompt) match in keys, id and
//! text as far as the fixtures' elision allows; the rebuilt settings (reasoning, include, text,
//! parallel_tool_calls, …) and the body's key order equal the captured ones; the usage of each
//! request is what the stand-in reported; the model, the kind of call and the order match; the
//! same rollout for the OpenAI provider keeps Codex's passthrough metadata. Also: a truncated last line, unknown lines, the `token_count` fallback of older
//! files, and bad input.

use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use promptwire::core::compile::lite::instructions_message_id;
use promptwire::core::items::PASSTHROUGH_KEY;
use promptwire::core::rollout::{
    Limits, RequestKind, RolloutError, UsageSource, looks_like_rollout, parse,
};
use promptwire::core::stream::TokenUsage;
use serde_json::{Value, json};

fn data_dirs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rollouts");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("tests/data/rollouts")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    assert_eq!(dirs.len(), 3, "the three captured sessions");
    dirs
}

fn rollout_file(dir: &Path) -> PathBuf {
    std::fs::read_dir(dir)
        .expect("dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("rollout-"))
        })
        .expect("a rollout file")
}

/// What the stand-in answered: (request number, response id, usage), in order.
fn standin_usage(dir: &Path) -> Vec<(usize, String, TokenUsage)> {
    let text = std::fs::read_to_string(dir.join("usage.jsonl")).expect("usage.jsonl");
    text.lines()
        .map(|line| {
            let v: Value = serde_json::from_str(line).expect("json");
            let u = &v["usage"];
            let n = |p: &str| u.pointer(p).and_then(Value::as_i64).unwrap_or(0);
            (
                v["request"].as_u64().expect("request") as usize,
                v["response_id"].as_str().expect("response id").to_string(),
                TokenUsage {
                    input_tokens: n("/input_tokens"),
                    cached_input_tokens: n("/input_tokens_details/cached_tokens"),
                    cache_write_input_tokens: 0,
                    output_tokens: n("/output_tokens"),
                    reasoning_output_tokens: n("/output_tokens_details/reasoning_tokens"),
                    total_tokens: n("/total_tokens"),
                },
            )
        })
        .collect()
}

fn captured_body(dir: &Path, n: usize) -> Value {
    let bytes = std::fs::read(dir.join(format!("req_{n:02}.json"))).expect("body");
    serde_json::from_slice(&bytes).expect("body json")
}

fn request_kind(body: &Value) -> RequestKind {
    let meta = body["client_metadata"]["x-codex-turn-metadata"]
        .as_str()
        .and_then(|t| serde_json::from_str::<Value>(t).ok())
        .unwrap_or_default();
    match meta["request_kind"].as_str() {
        Some("compaction") => RequestKind::Compaction,
        _ => RequestKind::Turn,
    }
}

#[test]
fn reconstructed_inputs_equal_the_captured_bodies() {
    for dir in data_dirs() {
        let bytes = std::fs::read(rollout_file(&dir)).expect("rollout");
        assert!(looks_like_rollout(&bytes));
        let rollout = parse(&bytes, &Limits::default()).expect("parse");
        assert_eq!(rollout.truncated_last_line, None);
        assert_eq!(rollout.unknown, vec![], "{}", dir.display());
        assert_eq!(rollout.sessions.len(), 1);
        let session = &rollout.sessions[0];
        let standin = standin_usage(&dir);
        // Every call the stand-in answered, in order, and nothing else.
        let ids: Vec<Option<String>> = session
            .requests
            .iter()
            .map(|r| r.response_id.clone())
            .collect();
        let expected_ids: Vec<Option<String>> =
            standin.iter().map(|(_, id, _)| Some(id.clone())).collect();
        assert_eq!(ids, expected_ids, "{}", dir.display());
        let (mut reconstructed, mut expected_reconstructed) = (0, 0);
        for (request, (n, _, usage)) in session.requests.iter().zip(&standin) {
            let captured = captured_body(&dir, *n);
            let body = session.body(request);
            let ours = body["input"].as_array().expect("input").clone();
            // The captured input, with the items the rollout does not record taken from ours
            // (checked separately below).
            let mut expected = captured["input"].as_array().expect("input").clone();
            assert_eq!(ours.len(), expected.len(), "{} request {n}", dir.display());
            for &i in &request.reconstructed_items {
                let what = format!("{} request {n} item {i}", dir.display());
                check_rebuilt_item(&ours[i], &expected[i], &session.thread_id, &what);
                expected[i] = ours[i].clone();
                reconstructed += 1;
            }
            assert_eq!(ours, expected, "{} request {n}", dir.display());
            assert_eq!(request.usage, Some(*usage), "{} request {n}", dir.display());
            assert_eq!(request.usage_source, UsageSource::TokenUsageRecord);
            assert_eq!(body["model"], captured["model"], "request {n}");
            assert_eq!(request.kind, request_kind(&captured), "request {n}");
            if request.kind == RequestKind::Compaction {
                assert_eq!(body.get("tools"), captured.get("tools"));
                assert_eq!(body["parallel_tool_calls"], json!(false));
            }
            assert_eq!(body["prompt_cache_key"], captured["prompt_cache_key"]);
            // The body's fields in Codex's order, less what the rollout does not record.
            let keys = |b: &Value| -> Vec<String> {
                b.as_object()
                    .map(|m| m.keys().cloned().collect())
                    .unwrap_or_default()
            };
            let expected_keys: Vec<String> = keys(&captured)
                .into_iter()
                .filter(|k| !request.not_recorded.contains(&k.as_str()))
                .collect();
            assert_eq!(keys(&body), expected_keys, "{} request {n}", dir.display());
            // The settings rebuilt from turn_context, the rules preset and the catalog.
            for key in [
                "stream",
                "tool_choice",
                "parallel_tool_calls",
                "reasoning",
                "store",
                "include",
                "text",
            ] {
                if captured.get(key).is_some() {
                    let mut expected = captured.get(key).cloned();
                    // One known difference: Codex 0.169 sent its Lite compaction call (gpt-6-sol,
                    // on the switch to gpt-5.5) with effort `high`. Nothing in the rollout says
                    // so (every turn_context has effort null, the catalog default is `medium`),
                    // so the rebuilt call has the default; asserted, so a change shows.
                    if key == "reasoning"
                        && request.kind == RequestKind::Compaction
                        && session.cli_version.as_deref() == Some("0.169.0")
                    {
                        assert_eq!(
                            expected,
                            Some(json!({"effort": "high", "context": "all_turns"}))
                        );
                        expected = Some(json!({"effort": "medium", "context": "all_turns"}));
                    }
                    assert_eq!(
                        body.get(key),
                        expected.as_ref(),
                        "{} request {n}: {key}",
                        dir.display()
                    );
                    assert!(
                        request.reconstructed_fields.contains(&key),
                        "{} request {n}: {key} is marked reconstructed",
                        dir.display()
                    );
                }
            }
            // What the rollout lacks: a standard request's base-instructions message (Lite
            // records its prefix), and a compaction request's handoff prompt.
            expected_reconstructed +=
                usize::from(captured["input"][0]["type"] != json!("additional_tools"))
                    + usize::from(request.kind == RequestKind::Compaction);
        }
        assert_eq!(reconstructed, expected_reconstructed, "{}", dir.display());
    }
}

/// `<N chars elided>`: a string the fixture's editing replaced (README), and its length N.
fn elided_len(text: &str) -> Option<usize> {
    text.strip_prefix('<')?
        .strip_suffix(" chars elided>")?
        .parse()
        .ok()
}

/// The texts of a message's content parts.
fn texts(item: &Value) -> Vec<&str> {
    item["content"]
        .as_array()
        .map(|parts| parts.iter().filter_map(|p| p["text"].as_str()).collect())
        .unwrap_or_default()
}

/// A rebuilt item against the captured one: the same keys in the same order, `type`, `role` and
/// content-part types equal; an `id` exactly where Codex sent one; the text compared as far as
/// the fixtures allow.
///
/// The fixtures' editing replaced every string longer than 160 characters by
/// `<N chars elided>`, in the rollout and in the bodies alike, so a rebuilt text is compared:
/// exactly when both sides are un-elided; by length when one side is elided (the compaction
/// prompt we rebuild is whole, the captured one elided: its N must be our length); not at all
/// when both are elided (the base instructions: `session_meta` records one text and the body
/// another, and elided we can only see their lengths). The `id` of the base-instructions
/// message is uuid v5 of its text, so it can equal Codex's only when the texts are the
/// originals: with both texts whole the ids must be equal; otherwise ours must be the
/// compiler's id for our text (`msg_<uuid v5(thread namespace, text)>`), with Codex's prefix.
fn check_rebuilt_item(ours: &Value, captured: &Value, thread: &str, what: &str) {
    let keys = |v: &Value| -> Vec<String> {
        v.as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    };
    assert_eq!(keys(ours), keys(captured), "{what}: keys");
    assert_eq!(
        (&ours["type"], &ours["role"]),
        (&captured["type"], &captured["role"]),
        "{what}"
    );
    let part_types = |v: &Value| -> Vec<Value> {
        v["content"]
            .as_array()
            .map(|parts| parts.iter().map(|p| p["type"].clone()).collect())
            .unwrap_or_default()
    };
    assert_eq!(part_types(ours), part_types(captured), "{what}: content");
    let (our_texts, their_texts) = (texts(ours), texts(captured));
    let mut all_whole = true;
    for (a, b) in our_texts.iter().zip(&their_texts) {
        match (elided_len(a), elided_len(b)) {
            (None, None) => assert_eq!(a, b, "{what}: text"),
            (None, Some(n)) => assert_eq!(a.chars().count(), n, "{what}: text length"),
            (Some(n), None) => assert_eq!(n, b.chars().count(), "{what}: text length"),
            (Some(_), Some(_)) => {}
        }
        all_whole &= elided_len(a).is_none() && elided_len(b).is_none();
    }
    match (ours.get("id"), captured.get("id")) {
        (None, None) => {}
        (Some(a), Some(b)) if all_whole => assert_eq!(a, b, "{what}: id"),
        (Some(a), Some(b)) => {
            let text = our_texts.first().copied().unwrap_or_default();
            assert_eq!(
                a.as_str(),
                Some(instructions_message_id(thread, text).as_str()),
                "{what}: id"
            );
            assert_eq!(id_prefix(a), id_prefix(b), "{what}: id prefix");
        }
        (a, b) => panic!("{what}: id {a:?}, Codex sent {b:?}"),
    }
}

fn id_prefix(id: &Value) -> Option<&str> {
    id.as_str()?.split_once('_').map(|p| p.0)
}

/// Every item the rollout records (response items and compaction replacement histories), as
/// written, keyed by its compact JSON without the passthrough metadata.
fn recorded_items(lines: &[String]) -> std::collections::HashMap<String, String> {
    let mut out = std::collections::HashMap::new();
    let mut add = |item: &Value| {
        let mut without = item.clone();
        if let Some(map) = without.as_object_mut() {
            map.shift_remove(PASSTHROUGH_KEY);
        }
        out.insert(without.to_string(), item.to_string());
    };
    for line in lines {
        let v: Value = serde_json::from_str(line).expect("line");
        match v["type"].as_str() {
            Some("response_item") => add(&v["payload"]),
            Some("compacted") => {
                for item in v["payload"]["replacement_history"]
                    .as_array()
                    .into_iter()
                    .flatten()
                {
                    add(item);
                }
            }
            _ => {}
        }
    }
    out
}

/// Codex sends `internal_chat_message_metadata_passthrough` to the OpenAI provider only
/// (WIRE_SPEC §1 step 2, `core_vectors` vector 30): the 0.169 rollout, whose items carry it,
/// rebuilt for `model_provider: "openai"` keeps every item exactly as recorded (the serialized
/// item is what Codex sends); rebuilt for the stand-in provider it drops the metadata, as the
/// captured bodies show (checked above), and says so.
#[test]
fn passthrough_metadata_is_kept_for_the_openai_provider_only() {
    let dir = data_dirs()
        .into_iter()
        .find(|d| d.to_string_lossy().contains("codex-0.169"))
        .expect("the 0.169 rollout");
    let lines = lines_of(&dir);
    let openai_lines: Vec<String> = lines
        .iter()
        .map(|l| {
            l.replace(
                "\"model_provider\":\"standin\"",
                "\"model_provider\":\"openai\"",
            )
        })
        .collect();
    assert_ne!(openai_lines, lines, "the provider was changed");
    let standin = parse(lines.join("\n").as_bytes(), &Limits::default()).expect("parse");
    let openai = parse(openai_lines.join("\n").as_bytes(), &Limits::default()).expect("parse");
    let (standin, openai) = (&standin.sessions[0], &openai.sessions[0]);
    let recorded = recorded_items(&lines);
    assert_eq!(standin.requests.len(), openai.requests.len());
    let mut kept = 0;
    for (n, (s, o)) in standin.requests.iter().zip(&openai.requests).enumerate() {
        let (s_body, o_body) = (standin.body(s), openai.body(o));
        let (s_input, o_input) = (
            s_body["input"].as_array().expect("input"),
            o_body["input"].as_array().expect("input"),
        );
        assert_eq!(s_input.len(), o_input.len(), "request {n}");
        assert_eq!(s.reconstructed_items, o.reconstructed_items);
        for (i, (si, oi)) in s_input.iter().zip(o_input).enumerate() {
            assert!(si.get(PASSTHROUGH_KEY).is_none(), "request {n} item {i}");
            let expected = if s.reconstructed_items.contains(&i) {
                si.to_string()
            } else {
                recorded
                    .get(&si.to_string())
                    .cloned()
                    .unwrap_or_else(|| panic!("request {n} item {i} is a recorded item"))
            };
            kept += usize::from(oi.get(PASSTHROUGH_KEY).is_some());
            assert_eq!(oi.to_string(), expected, "request {n} item {i}");
        }
    }
    assert!(kept >= 20, "items sent with their metadata: {kept}");
    assert_eq!(openai.item_rules, Vec::<String>::new());
    assert_eq!(
        standin.item_rules,
        vec![format!(
            "{PASSTHROUGH_KEY}: dropped: passthrough metadata is only sent to the OpenAI provider"
        )]
    );
    assert_eq!(
        (standin.rules.as_str(), openai.rules.as_str()),
        ("codex-0.169", "codex-0.169")
    );
}

/// The rollout's lines, for building variants.
fn lines_of(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(rollout_file(dir))
        .expect("rollout")
        .lines()
        .map(str::to_string)
        .collect()
}

fn first_dir() -> PathBuf {
    data_dirs().remove(0)
}

#[test]
fn a_truncated_last_line_imports_what_is_complete() {
    let lines = lines_of(&first_dir());
    let whole = parse(lines.join("\n").as_bytes(), &Limits::default()).expect("whole");
    // Cut the file in the middle of the line that records the second call's usage.
    let cut = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.contains("\"type\":\"token_usage_record\""))
        .nth(1)
        .map(|(i, _)| i)
        .expect("two calls");
    let mut text = lines[..cut].join("\n");
    text.push('\n');
    text.push_str(&lines[cut][..lines[cut].len() / 2]);
    let partial = parse(text.as_bytes(), &Limits::default()).expect("partial");
    let truncated = partial.truncated_last_line.clone().expect("reported");
    assert_eq!(
        (truncated.line, truncated.bytes),
        (cut + 1, lines[cut].len() / 2)
    );
    let session = &partial.sessions[0];
    assert_eq!(session.requests.len(), 1);
    assert_eq!(session.requests[0], whole.sessions[0].requests[0]);
}

#[test]
fn unknown_lines_and_payloads_are_kept() {
    let mut lines = lines_of(&first_dir());
    let future_line = json!({"timestamp": "2026-11-30T16:01:25.600Z", "type": "future_thing", "payload": {"x": 1}});
    let future_event = json!({"timestamp": "2026-11-30T16:01:25.601Z", "type": "event_msg", "payload": {"type": "hologram_started", "y": 2}});
    let future_item = json!({"timestamp": "2026-11-30T16:01:25.602Z", "type": "response_item", "payload": {"type": "hologram", "z": 3}});
    let original = parse(lines.join("\n").as_bytes(), &Limits::default()).expect("parse");
    let items_before = lines[..3]
        .iter()
        .filter(|l| l.contains("\"type\":\"response_item\""))
        .count();
    lines.insert(3, future_line.to_string());
    lines.insert(4, future_event.to_string());
    lines.insert(5, future_item.to_string());
    let rollout = parse(lines.join("\n").as_bytes(), &Limits::default()).expect("parse");
    let kept: Vec<(usize, String, Option<String>, Value)> = rollout
        .unknown
        .iter()
        .map(|u| {
            (
                u.line,
                u.line_type.clone(),
                u.payload_type.clone(),
                u.value.clone(),
            )
        })
        .collect();
    assert_eq!(
        kept,
        vec![
            (4, "future_thing".to_string(), None, future_line),
            (
                5,
                "event_msg".to_string(),
                Some("hologram_started".to_string()),
                future_event
            ),
            (
                6,
                "response_item".to_string(),
                Some("hologram".to_string()),
                future_item
            ),
        ]
    );
    // An unknown item is part of the history Codex sends: the first request carries it.
    let session = &rollout.sessions[0];
    let body = session.body(&session.requests[0]);
    let before = &original.sessions[0];
    let mut expected = before.body(&before.requests[0])["input"].clone();
    expected
        .as_array_mut()
        .expect("input")
        .insert(items_before, json!({"type": "hologram", "z": 3}));
    assert_eq!(body["input"], expected);
}

#[test]
fn older_files_without_usage_records_fall_back_to_token_count() {
    let dir = first_dir();
    let lines: Vec<String> = lines_of(&dir)
        .into_iter()
        .filter(|l| !l.contains("\"type\":\"token_usage_record\""))
        .collect();
    let rollout = parse(lines.join("\n").as_bytes(), &Limits::default()).expect("parse");
    let with_records =
        parse(lines_of(&dir).join("\n").as_bytes(), &Limits::default()).expect("parse");
    let fallback = &rollout.sessions[0].requests;
    let recorded = &with_records.sessions[0].requests;
    // The same calls with the same inputs and usage; repeated totals counted once.
    assert_eq!(fallback.len(), recorded.len());
    for (a, b) in fallback.iter().zip(recorded) {
        assert_eq!(
            (&a.input, a.usage, a.kind, a.usage_source),
            (&b.input, b.usage, b.kind, UsageSource::TokenCount)
        );
        assert_eq!(a.response_id, None);
    }
}

#[test]
fn bad_input_names_the_line() {
    let lines = lines_of(&first_dir());
    let limits = Limits {
        max_line_bytes: 1000,
    };
    let long = lines
        .iter()
        .position(|l| l.len() > 1000)
        .expect("a long line");
    assert_eq!(
        parse(lines.join("\n").as_bytes(), &limits),
        Err(RolloutError::LineTooLong {
            line: long + 1,
            limit: 1000
        })
    );
    let mut broken = lines.clone();
    broken[2] = "{not json".to_string();
    assert!(matches!(
        parse(broken.join("\n").as_bytes(), &Limits::default()),
        Err(RolloutError::InvalidJson { line: 3, .. })
    ));
    assert_eq!(
        parse(b"[1,2]\n", &Limits::default()),
        Err(RolloutError::InvalidLine {
            line: 1,
            message: "a rollout line must be a JSON object".to_string()
        })
    );
    let no_meta = json!({"timestamp": "2026-11-30T16:01:25.600Z", "type": "event_msg", "payload": {"type": "task_started"}});
    assert_eq!(
        parse(format!("{no_meta}\n").as_bytes(), &Limits::default()),
        Err(RolloutError::NoSessionMeta)
    );
    assert!(!looks_like_rollout(br#"{"log": {"entries": []}}"#));
}

/// Codex 0.171 does not send `session_meta.base_instructions` word for word: from an unelided
/// capture (its rollout and the request it sent), the rebuilt `input[0]` — text and derived id —
/// equals the request's, where the recorded text would differ by one bullet.
#[test]
fn the_base_instructions_are_rebuilt_as_codex_sends_them() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/codex-0.171/unelided-base-instructions");
    let rollout = std::fs::read_dir(&dir)
        .expect("dir")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .expect("the rollout");
    let sent: Value = serde_json::from_slice(&std::fs::read(dir.join("req_00.json")).expect("req"))
        .expect("json");
    let parsed = promptwire::core::rollout::parse(
        &std::fs::read(&rollout).expect("rollout"),
        &promptwire::core::rollout::Limits::default(),
    )
    .expect("parse");
    let session = &parsed.sessions[0];
    let request = &session.requests[0];
    let rebuilt = &session.items[request.input[0] as usize];
    assert_eq!(rebuilt, &sent["input"][0]);
    assert_eq!(request.reconstructed_items, vec![0]);
    // The recorded text is not what was sent.
    let recorded = std::fs::read_to_string(&rollout).expect("rollout");
    let meta: Value = serde_json::from_str(recorded.lines().next().expect("line")).expect("json");
    let text = meta["payload"]["base_instructions"]["text"]
        .as_str()
        .or_else(|| meta["payload"]["base_instructions"].as_str())
        .expect("text");
    assert_ne!(
        text,
        sent["input"][0]["content"][0]["text"]
            .as_str()
            .expect("sent")
    );
}
