//! Variants of the bundled sample recordings for the session tests: a sample HAR
//! (`sessions/samples/*.har`) renamed and edited request by request (its body as a JSON value,
//! its whole HAR entry), then written back as HAR text for `Store::import_har`.

use serde_json::Value;

/// The sample `file` (e.g. `tool-calls.har`) as session `name`, each request edited by
/// `edit(position, body, entry)`; the body is written back into the entry after the edit.
pub fn variant(file: &str, name: &str, edit: impl Fn(usize, &mut Value, &mut Value)) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("sessions/samples")
        .join(file);
    let text = std::fs::read_to_string(&path).expect("sample HAR");
    let mut har: Value = serde_json::from_str(&text).expect("sample HAR is JSON");
    let entries = har
        .pointer_mut("/log/entries")
        .and_then(Value::as_array_mut)
        .expect("entries");
    for (position, entry) in entries.iter_mut().enumerate() {
        if let Some(session) = entry.pointer_mut("/_promptwire/session") {
            session["name"] = Value::String(name.to_string());
        }
        let body_text = entry
            .pointer("/request/postData/text")
            .and_then(Value::as_str)
            .expect("body");
        let mut body: Value = serde_json::from_str(body_text).expect("body is JSON");
        edit(position, &mut body, entry);
        let body_text = serde_json::to_string(&body).expect("body");
        entry["request"]["postData"]["text"] = Value::String(body_text);
    }
    serde_json::to_string(&har).expect("HAR")
}

/// Sets the `cached_tokens` the response of `entry` reports, in its SSE text and in its
/// recorded outcome.
pub fn set_cached_tokens(entry: &mut Value, cached: u64) {
    if let Some(Value::String(sse)) = entry.pointer_mut("/response/content/text") {
        let start = sse.find("\"cached_tokens\":").expect("usage in the stream") + 16;
        let end = start
            + sse[start..]
                .find(|c: char| !c.is_ascii_digit())
                .expect("a number");
        sse.replace_range(start..end, &cached.to_string());
    }
    if let Some(usage) = entry.pointer_mut("/_promptwire/outcome/usage") {
        usage["cached_input_tokens"] = Value::from(cached);
    }
}

/// Sets the `input_tokens` and `cached_tokens` the response of `entry` reports, in its SSE
/// text and in its recorded outcome (a variant whose bodies grew reports what they now hold).
pub fn set_usage(entry: &mut Value, input: u64, cached: u64) {
    set_cached_tokens(entry, cached);
    if let Some(Value::String(sse)) = entry.pointer_mut("/response/content/text") {
        let start = sse.find("\"input_tokens\":").expect("usage in the stream") + 15;
        let end = start
            + sse[start..]
                .find(|c: char| !c.is_ascii_digit())
                .expect("a number");
        sse.replace_range(start..end, &input.to_string());
    }
    if let Some(usage) = entry.pointer_mut("/_promptwire/outcome/usage") {
        usage["input_tokens"] = Value::from(input);
    }
}

/// The request bodies of a HAR's entries, in order.
pub fn bodies(har: &str) -> Vec<Value> {
    let har: Value = serde_json::from_str(har).expect("HAR");
    har.pointer("/log/entries")
        .and_then(Value::as_array)
        .expect("entries")
        .iter()
        .map(|e| {
            let text = e
                .pointer("/request/postData/text")
                .and_then(Value::as_str)
                .expect("body");
            serde_json::from_str(text).expect("body is JSON")
        })
        .collect()
}

/// The rendered tokens of each body of a HAR, as the ledger counts them (what a server whose
/// count agreed would report as `input_tokens`).
pub fn estimated_tokens(har: &str) -> Vec<u64> {
    let mut session = promptwire::core::prefix::Session::default();
    for body in bodies(har) {
        session
            .push_body(&body, promptwire::core::prefix::RequestMeta::default())
            .expect("body");
    }
    promptwire::core::ledger::ledger(&session, &promptwire::core::ledger::Rules::bundled())
        .rows
        .iter()
        .map(|r| r.tokens)
        .collect()
}

/// The tool-calls sample with a long developer message shared by every request (a prefix kept
/// and cacheable past 1,024 tokens), named `name`; each response reports the input tokens the
/// ledger counts for its request (a server that counts as the estimate does) and `cached[i]`
/// cached tokens.
pub fn long_prefix_session(name: &str, cached: [u64; 3]) -> String {
    let long = "Follow the repository's conventions. ".repeat(400);
    let grow = |body: &mut Value| {
        let text = body
            .pointer_mut("/input/0/content/0/text")
            .expect("developer text");
        *text = Value::String(format!("{long}{}", text.as_str().unwrap_or("")));
    };
    let grown = variant("tool-calls.har", name, |_, body, _| grow(body));
    let input = estimated_tokens(&grown);
    variant("tool-calls.har", name, |position, body, entry| {
        grow(body);
        set_usage(entry, input[position], cached[position]);
    })
}

/// What the ledger predicts each body of a HAR reads from the cache (no server figures).
pub fn predicted_reads(har: &str) -> Vec<u64> {
    let mut session = promptwire::core::prefix::Session::default();
    for body in bodies(har) {
        session
            .push_body(&body, promptwire::core::prefix::RequestMeta::default())
            .expect("body");
    }
    promptwire::core::ledger::ledger(&session, &promptwire::core::ledger::Rules::bundled())
        .rows
        .iter()
        .map(|r| r.prediction.predicted.read_tokens)
        .collect()
}
