//! How a request body is stored: split into its non-input fields (an ordered JSON object,
//! content-addressed so identical tools/instructions are stored once per database), the position
//! of `input` among the keys, and the ordered list of input items, each content-addressed by a
//! 128-bit hash of its compact JSON. [`rebuild`] puts them back into the same JSON value, keys in
//! the same order; bytes that a compact rendering would not reproduce are kept verbatim.

use serde_json::Value;
use siphasher::sip128::{Hasher128 as _, SipHasher13};

use crate::core::json::JsonMap;

/// A content hash: SipHash-1-3, 128 bits, fixed keys (stable across runs and machines).
pub type ContentHash = [u8; 16];

/// Hashes JSON text.
pub fn content_hash(text: &str) -> ContentHash {
    let mut hasher = SipHasher13::new_with_keys(0x7077_7374_6f72_6531, 0x6974_656d_732d_7631);
    std::hash::Hasher::write(&mut hasher, text.as_bytes());
    hasher.finish128().as_bytes()
}

/// A body taken apart for storage.
#[derive(Debug, Clone, PartialEq)]
pub struct SplitBody {
    /// Compact JSON of the body without `input` (keys in order); `None` when the body is not a
    /// JSON object.
    pub fields_json: Option<String>,
    /// Index of `input` among the body's keys, when `input` is an array.
    pub input_at: Option<usize>,
    /// Compact JSON of each input item, in order.
    pub items: Vec<String>,
    /// The original bytes, when rebuilding would not reproduce them exactly.
    pub verbatim: Option<Vec<u8>>,
}

/// Splits body bytes for storage.
pub fn split(bytes: &[u8]) -> SplitBody {
    let verbatim_only = || SplitBody {
        fields_json: None,
        input_at: None,
        items: Vec::new(),
        verbatim: Some(bytes.to_vec()),
    };
    let Ok(Value::Object(map)) = serde_json::from_slice::<Value>(bytes) else {
        return verbatim_only();
    };
    let mut fields = JsonMap::with_capacity(map.len());
    let mut input_at = None;
    let mut items = Vec::new();
    for (index, (key, value)) in map.into_iter().enumerate() {
        match value {
            Value::Array(list) if key == "input" => {
                input_at = Some(index);
                items = list.iter().map(Value::to_string).collect();
            }
            other => {
                fields.insert(key, other);
            }
        }
    }
    let fields_json = Value::Object(fields).to_string();
    let mut split = SplitBody {
        fields_json: Some(fields_json),
        input_at,
        items,
        verbatim: None,
    };
    match rebuild_bytes(&split) {
        Ok(rebuilt) if rebuilt == bytes => {}
        _ => split.verbatim = Some(bytes.to_vec()),
    }
    split
}

/// The body value from its stored parts.
pub fn rebuild(
    fields_json: Option<&str>,
    input_at: Option<usize>,
    items: &[String],
) -> Result<Value, String> {
    let Some(fields_json) = fields_json else {
        return Err("no fields".to_string());
    };
    let fields: JsonMap = serde_json::from_str(fields_json).map_err(|e| e.to_string())?;
    let input = || -> Result<Value, String> {
        items
            .iter()
            .map(|text| serde_json::from_str::<Value>(text).map_err(|e| e.to_string()))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array)
    };
    let mut out = JsonMap::with_capacity(fields.len() + 1);
    let mut placed = false;
    for (index, (key, value)) in fields.into_iter().enumerate() {
        if input_at == Some(index) {
            out.insert("input".to_string(), input()?);
            placed = true;
        }
        out.insert(key, value);
    }
    if input_at.is_some() && !placed {
        out.insert("input".to_string(), input()?);
    }
    Ok(Value::Object(out))
}

fn rebuild_bytes(split: &SplitBody) -> Result<Vec<u8>, String> {
    let value = rebuild(split.fields_json.as_deref(), split.input_at, &split.items)?;
    serde_json::to_vec(&value).map_err(|e| e.to_string())
}

/// Appends `value` as an unsigned LEB128 varint.
pub fn push_varint(out: &mut Vec<u8>, mut value: u64) {
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// Decodes a list of LEB128 varints.
pub fn read_varints(bytes: &[u8]) -> Result<Vec<u64>, String> {
    let mut out = Vec::new();
    let mut value: u64 = 0;
    let mut shift = 0u32;
    for &byte in bytes {
        if shift >= 64 {
            return Err("varint too long".to_string());
        }
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            out.push(value);
            value = 0;
            shift = 0;
        } else {
            shift += 7;
        }
    }
    if shift != 0 {
        return Err("truncated varint".to_string());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_and_rebuild_keep_order_and_bytes() {
        let body = br#"{"model":"m","instructions":"i","input":[{"type":"message","b":1,"a":2}],"tools":[],"stream":true}"#;
        let s = split(body);
        assert_eq!(s.verbatim, None);
        assert_eq!(s.input_at, Some(2));
        let value = rebuild(s.fields_json.as_deref(), s.input_at, &s.items).unwrap_or_default();
        assert_eq!(
            serde_json::to_vec(&value).unwrap_or_default(),
            body.to_vec()
        );
    }

    #[test]
    fn pretty_or_invalid_bodies_are_kept_verbatim() {
        let pretty = b"{\n  \"input\": []\n}";
        assert_eq!(split(pretty).verbatim.as_deref(), Some(&pretty[..]));
        assert_eq!(
            split(b"not json").verbatim.as_deref(),
            Some(&b"not json"[..])
        );
    }

    #[test]
    fn varints_round_trip() {
        let mut buf = Vec::new();
        for v in [0u64, 1, 127, 128, 300, u64::MAX] {
            push_varint(&mut buf, v);
        }
        assert_eq!(
            read_varints(&buf).unwrap_or_default(),
            vec![0, 1, 127, 128, 300, u64::MAX]
        );
    }
}
