//! Forms of a JSON value for prefix analysis. The prompt is compared *as sent*: a 128-bit hash
//! that follows object key order ([`digest`]), the compact JSON text as sent, and the JSON
//! pointers of the differences between two values in the order they are sent
//! ([`differences`]). Only maps that are not part of the prompt (`client_metadata`) are compared
//! without regard to key order ([`digest_unordered`]); [`canonical_json`] sorts keys for callers
//! that want a key-order-free form.

use std::hash::Hasher as _;

use serde::ser::{Serialize, SerializeMap as _, SerializeSeq as _, Serializer};
use serde_json::Value;
use siphasher::sip128::{Hasher128 as _, SipHasher13};

/// A 128-bit hash of a JSON value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest(pub u128);

/// Hashes `value` as sent: each kind is tagged, strings and keys are length-prefixed, and object
/// entries are fed in their order. Two values get the same digest exactly when they serialize to
/// the same compact JSON (up to a 2^-128 collision chance): the same keys in another order are a
/// different prompt.
pub fn digest(value: &Value) -> Digest {
    digest_with(value, false)
}

/// Hashes `value` as a map: object entries are fed in sorted key order, so key order never
/// counts. For fields outside the prompt that are maps to their consumer (`client_metadata`).
pub fn digest_unordered(value: &Value) -> Digest {
    digest_with(value, true)
}

fn digest_with(value: &Value, sorted: bool) -> Digest {
    // Fixed keys: digests are stable across runs, so a store may keep them.
    let mut hasher = SipHasher13::new_with_keys(0x7072_6f6d_7074_7769, 0x7265_2d70_7265_6669);
    feed(&mut hasher, value, sorted);
    Digest(hasher.finish128().as_u128())
}

fn feed(hasher: &mut SipHasher13, value: &Value, sorted: bool) {
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
                feed(hasher, item, sorted);
            }
        }
        Value::Object(map) => {
            hasher.write_u8(8);
            hasher.write_u64(map.len() as u64);
            if sorted {
                for (key, value) in sorted_entries(map) {
                    feed_str(hasher, key);
                    feed(hasher, value, sorted);
                }
            } else {
                for (key, value) in map {
                    feed_str(hasher, key);
                    feed(hasher, value, sorted);
                }
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

/// `value` with its object keys sorted, no whitespace. Its length equals the length of `value`'s
/// compact JSON in any key order.
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

/// How a location differs between two values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// Another value (or another kind of value) at the same place.
    Value,
    /// Only the later value has this key or index.
    Added,
    /// Only the earlier value has this key or index.
    Removed,
    /// The same keys arrive in another order, from this key on (the serialized prompt differs
    /// even though the values are equal as maps).
    KeyOrder,
}

/// One difference between two values: where (a JSON pointer relative to them) and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// JSON pointer of the location.
    pub path: String,
    /// How it differs.
    pub kind: ChangeKind,
}

/// The first difference between two values in the order they are sent; `None` when they
/// serialize identically.
pub fn first_difference(old: &Value, new: &Value) -> Option<Difference> {
    differences(old, new, 1).into_iter().next()
}

/// Up to `limit` differences between two values, in the order they are sent.
///
/// Objects are walked entry by entry in position order: the same key at the same position is
/// descended into; at the first position where the keys differ, the object reports one
/// difference (a key only `old` has is `removed`, a key only `new` has is `added`, otherwise
/// `key_order` at `new`'s key) and nothing after it, since everything after it is shifted.
/// Arrays are walked index by index; extra indices are `added` or `removed`.
pub fn differences(old: &Value, new: &Value, limit: usize) -> Vec<Difference> {
    let mut out = Vec::new();
    let mut path = String::new();
    if limit > 0 {
        collect(old, new, &mut path, &mut out, limit);
    }
    out
}

fn push_segment(path: &mut String, segment: &str) {
    path.push('/');
    path.push_str(&escape_pointer_segment(segment));
}

fn collect(old: &Value, new: &Value, path: &mut String, out: &mut Vec<Difference>, limit: usize) {
    let report = |path: &str, kind, out: &mut Vec<Difference>| {
        out.push(Difference {
            path: path.to_string(),
            kind,
        });
    };
    match (old, new) {
        (Value::Array(a), Value::Array(b)) => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                let len = path.len();
                push_segment(path, &i.to_string());
                collect(x, y, path, out, limit);
                path.truncate(len);
                if out.len() >= limit {
                    return;
                }
            }
            let common = a.len().min(b.len());
            let kind = if b.len() > a.len() {
                ChangeKind::Added
            } else {
                ChangeKind::Removed
            };
            for i in common..a.len().max(b.len()) {
                if out.len() >= limit {
                    return;
                }
                let len = path.len();
                push_segment(path, &i.to_string());
                report(path, kind, out);
                path.truncate(len);
            }
        }
        (Value::Object(a), Value::Object(b)) => {
            let mut old_entries = a.iter();
            let mut new_entries = b.iter();
            loop {
                if out.len() >= limit {
                    return;
                }
                let len = path.len();
                match (old_entries.next(), new_entries.next()) {
                    (None, None) => return,
                    (Some((ka, x)), Some((kb, y))) if ka == kb => {
                        push_segment(path, kb);
                        collect(x, y, path, out, limit);
                    }
                    (Some((ka, _)), Some((kb, _))) => {
                        let (key, kind) = if !b.contains_key(ka) {
                            (ka, ChangeKind::Removed)
                        } else if !a.contains_key(kb) {
                            (kb, ChangeKind::Added)
                        } else {
                            (kb, ChangeKind::KeyOrder)
                        };
                        push_segment(path, key);
                        report(path, kind, out);
                        path.truncate(len);
                        return;
                    }
                    (Some((ka, _)), None) => {
                        push_segment(path, ka);
                        report(path, ChangeKind::Removed, out);
                    }
                    (None, Some((kb, _))) => {
                        push_segment(path, kb);
                        report(path, ChangeKind::Added, out);
                    }
                }
                path.truncate(len);
            }
        }
        (Value::Object(_) | Value::Array(_), _) | (_, Value::Object(_) | Value::Array(_)) => {
            report(path, ChangeKind::Value, out);
        }
        _ => {
            if old != new {
                report(path, ChangeKind::Value, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn first(old: &Value, new: &Value) -> Option<(String, ChangeKind)> {
        first_difference(old, new).map(|d| (d.path, d.kind))
    }

    #[test]
    fn key_order_counts_except_unordered() {
        let a = json!({"b": 1, "a": {"y": [1, {"q": null, "p": true}], "x": "s"}});
        let b = json!({"a": {"x": "s", "y": [1, {"p": true, "q": null}]}, "b": 1});
        assert_ne!(digest(&a), digest(&b));
        assert_eq!(digest_unordered(&a), digest_unordered(&b));
        assert_eq!(digest(&a), digest(&a.clone()));
        assert_eq!(canonical_json(&a), canonical_json(&b));
        assert_eq!(
            canonical_json(&a),
            r#"{"a":{"x":"s","y":[1,{"p":true,"q":null}]},"b":1}"#
        );
        assert_eq!(
            first(&a, &b),
            Some(("/a".to_string(), ChangeKind::KeyOrder))
        );
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
                assert_eq!(first_difference(x, y).is_none(), i == j, "{x} vs {y}");
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
    fn difference_paths_in_sent_order() {
        let a = json!({"type": "message", "content": [{"type": "input_text", "text": "hi"}]});
        let b = json!({"type": "message", "content": [{"type": "input_text", "text": "ho"}]});
        let value = |p: &str| Some((p.to_string(), ChangeKind::Value));
        assert_eq!(first(&a, &b), value("/content/0/text"));
        let reordered =
            json!({"content": [{"type": "input_text", "text": "hi"}], "type": "message"});
        assert_eq!(
            first(&a, &reordered),
            Some(("/content".to_string(), ChangeKind::KeyOrder))
        );
        let c = json!({"type": "message", "content": [{"type": "input_text", "text": "hi"}, {}]});
        assert_eq!(
            first(&a, &c),
            Some(("/content/1".to_string(), ChangeKind::Added))
        );
        assert_eq!(
            first(&c, &a),
            Some(("/content/1".to_string(), ChangeKind::Removed))
        );
        let d = json!({"type": "message", "content": [{"type": "input_text", "text": "hi"}], "a/b~": 1});
        assert_eq!(
            first(&a, &d),
            Some(("/a~1b~0".to_string(), ChangeKind::Added))
        );
        assert_eq!(
            first(&d, &a),
            Some(("/a~1b~0".to_string(), ChangeKind::Removed))
        );
        let e = json!({"id": "x", "type": "message"});
        let f = json!({"role": "user", "type": "message"});
        assert_eq!(
            first(&e, &f),
            Some(("/id".to_string(), ChangeKind::Removed))
        );
        assert_eq!(first(&json!(1), &json!("1")), value(""));
        let g = json!({"id": "m1", "content": [{"text": "a"}, {"text": "b"}]});
        let h = json!({"id": "m2", "content": [{"text": "A"}, {"text": "B"}]});
        assert_eq!(
            differences(&g, &h, 10)
                .into_iter()
                .map(|d| d.path)
                .collect::<Vec<_>>(),
            ["/id", "/content/0/text", "/content/1/text"]
        );
        assert_eq!(differences(&g, &h, 2).len(), 2);
    }
}
