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
