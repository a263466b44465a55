//! The content hash and varint lists every stored body uses, and the rebuild of a body written by
//! schema 2 (read once more by the schema 4 migration): its non-input fields as one ordered JSON
//! object, the position of `input` among the keys, and the ordered list of input items.
//! [`rebuild`] puts them back into the same JSON value, keys in the same order. Bodies are cut
//! into pieces since schema 3 (`pieces.rs`).

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
    fn schema_2_parts_rebuild_with_keys_in_order() {
        let fields = r#"{"model":"m","instructions":"i","tools":[],"stream":true}"#;
        let items = vec![r#"{"type":"message","b":1,"a":2}"#.to_string()];
        let value = rebuild(Some(fields), Some(2), &items).unwrap_or_default();
        assert_eq!(
            serde_json::to_string(&value).unwrap_or_default(),
            r#"{"model":"m","instructions":"i","input":[{"type":"message","b":1,"a":2}],"tools":[],"stream":true}"#
        );
        assert_eq!(rebuild(None, None, &[]), Err("no fields".to_string()));
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
