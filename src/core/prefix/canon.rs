//! Canonical forms of a JSON value, where key order never counts: a 128-bit structural hash, the
//! canonical JSON text (keys sorted, compact), and the JSON pointer of the first difference
//! between two values.

use std::hash::Hasher as _;

use serde::ser::{Serialize, SerializeMap as _, SerializeSeq as _, Serializer};
use serde_json::Value;
use siphasher::sip128::{Hasher128 as _, SipHasher13};

/// A 128-bit hash of a JSON value that ignores object key order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest(pub u128);

/// Hashes `value` structurally: each kind is tagged, strings and keys are length-prefixed, and
/// object entries are fed in sorted key order. Two values get the same digest exactly when they
/// are equal as JSON values (up to a 2^-128 collision chance).
pub fn digest(value: &Value) -> Digest {
    // Fixed keys: digests are stable across runs, so a store may keep them.
    let mut hasher = SipHasher13::new_with_keys(0x7072_6f6d_7074_7769, 0x7265_2d70_7265_6669);
    feed(&mut hasher, value);
    Digest(hasher.finish128().as_u128())
}

fn feed(hasher: &mut SipHasher13, value: &Value) {
    match value {
        Value::Null => hasher.write_u8(0),
        Value::Bool(b) => hasher.write_u8(if *b { 2 } else { 1 }),
        Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                hasher.write_u8(3);
                hasher.write_u64(u);
            } else if let Some(i) = n.as_i64() {
                hasher.write_u8(4);
                hasher.write_i64(i);
            } else {
                hasher.write_u8(5);
                hasher.write_u64(n.as_f64().unwrap_or(f64::NAN).to_bits());
            }
        }
        Value::String(s) => {
            hasher.write_u8(6);
            feed_str(hasher, s);
        }
        Value::Array(items) => {
            hasher.write_u8(7);
            hasher.write_u64(items.len() as u64);
            for item in items {
                feed(hasher, item);
            }
        }
        Value::Object(map) => {
            hasher.write_u8(8);
            hasher.write_u64(map.len() as u64);
            for (key, value) in sorted_entries(map) {
                feed_str(hasher, key);
                feed(hasher, value);
            }
        }
    }
}

fn feed_str(hasher: &mut SipHasher13, s: &str) {
    hasher.write_u64(s.len() as u64);
    hasher.write(s.as_bytes());
}

fn sorted_entries(map: &serde_json::Map<String, Value>) -> Vec<(&str, &Value)> {
    let mut entries: Vec<(&str, &Value)> = map.iter().map(|(k, v)| (k.as_str(), v)).collect();
    entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
    entries
}

/// `value` as canonical JSON: object keys sorted, no whitespace. Its length equals the length of
/// `value`'s compact JSON in any key order.
pub fn canonical_json(value: &Value) -> String {
    // Serializing a `Value` into a String cannot fail (keys are strings, no I/O).
    serde_json::to_string(&Canonical(value)).unwrap_or_default()
}

/// Serializes a value with its object keys sorted.
struct Canonical<'a>(&'a Value);

impl Serialize for Canonical<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(&Canonical(item))?;
                }
                seq.end()
            }
            Value::Object(map) => {
                let mut out = serializer.serialize_map(Some(map.len()))?;
                for (key, value) in sorted_entries(map) {
                    out.serialize_entry(key, &Canonical(value))?;
                }
                out.end()
            }
            scalar => scalar.serialize(serializer),
        }
    }
}

/// Escapes one JSON pointer segment (RFC 6901: `~` → `~0`, `/` → `~1`).
pub fn escape_pointer_segment(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// The JSON pointer, relative to the two values, of their first difference; `None` when they are
/// equal as JSON values.
///
/// Object keys are visited in `new`'s order, then the keys only `old` has; arrays index by index,
/// and an array that is a prefix of the other differs at the first extra index. A difference of
/// kind (or of scalar value) is reported where it occurs.
pub fn first_difference(old: &Value, new: &Value) -> Option<String> {
    let mut path = String::new();
    if diff_into(old, new, &mut path) {
        Some(path)
    } else {
        None
    }
}

fn diff_into(old: &Value, new: &Value, path: &mut String) -> bool {
    match (old, new) {
        (Value::Array(a), Value::Array(b)) => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                let len = path.len();
                path.push('/');
                path.push_str(&i.to_string());
                if diff_into(x, y, path) {
                    return true;
                }
                path.truncate(len);
            }
            if a.len() != b.len() {
                path.push('/');
                path.push_str(&a.len().min(b.len()).to_string());
                return true;
            }
            false
        }
        (Value::Object(a), Value::Object(b)) => {
            let keys = b.keys().chain(a.keys().filter(|key| !b.contains_key(*key)));
            for key in keys {
                let len = path.len();
                path.push('/');
                path.push_str(&escape_pointer_segment(key));
                match (a.get(key), b.get(key)) {
                    (Some(x), Some(y)) => {
                        if diff_into(x, y, path) {
                            return true;
                        }
                    }
                    _ => return true,
                }
                path.truncate(len);
            }
            false
        }
        _ => old != new,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn key_order_never_counts() {
        let a = json!({"b": 1, "a": {"y": [1, {"q": null, "p": true}], "x": "s"}});
        let b = json!({"a": {"x": "s", "y": [1, {"p": true, "q": null}]}, "b": 1});
        assert_eq!(digest(&a), digest(&b));
        assert_eq!(canonical_json(&a), canonical_json(&b));
        assert_eq!(
            canonical_json(&a),
            r#"{"a":{"x":"s","y":[1,{"p":true,"q":null}]},"b":1}"#
        );
        assert_eq!(first_difference(&a, &b), None);
    }

    #[test]
    fn kinds_and_structure_are_told_apart() {
        let values = [
            json!(null),
            json!(false),
            json!(true),
            json!(0),
            json!(-1),
            json!(1.5),
            json!(""),
            json!("0"),
            json!([]),
            json!([[]]),
            json!({}),
            json!({"": ""}),
            json!(["a", "b"]),
            json!(["ab"]),
            json!({"a": "b"}),
            json!({"ab": ""}),
        ];
        for (i, x) in values.iter().enumerate() {
            for (j, y) in values.iter().enumerate() {
                assert_eq!(digest(x) == digest(y), i == j, "{x} vs {y}");
            }
        }
    }

    #[test]
    fn canonical_length_equals_compact_length() {
        let v = json!({"z": "é\"\n", "a": [1, 2.5, {"k/~": "v"}]});
        let compact = serde_json::to_string(&v).expect("serialize");
        assert_eq!(canonical_json(&v).len(), compact.len());
    }

    #[test]
    fn first_difference_paths() {
        let a = json!({"type": "message", "content": [{"type": "input_text", "text": "hi"}]});
        let b = json!({"content": [{"text": "ho", "type": "input_text"}], "type": "message"});
        assert_eq!(first_difference(&a, &b).as_deref(), Some("/content/0/text"));
        let c = json!({"content": [{"type": "input_text", "text": "hi"}, {}], "type": "message"});
        assert_eq!(first_difference(&a, &c).as_deref(), Some("/content/1"));
        let d = json!({"type": "message", "content": [{"type": "input_text", "text": "hi"}], "a/b~": 1});
        assert_eq!(first_difference(&a, &d).as_deref(), Some("/a~1b~0"));
        assert_eq!(first_difference(&d, &a).as_deref(), Some("/a~1b~0"));
        assert_eq!(
            first_difference(&json!(1), &json!("1")).as_deref(),
            Some("")
        );
    }
}
