//! Repeated keys in a JSON text, at any depth. JSON parsers (serde_json here, like Codex's) keep
//! the last value of a repeated key without a word; an imported body or a Prompt file with one
//! is read that way too, so the readers say so: [`duplicate_keys`] finds where.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// A key found more than once in one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateKey {
    /// Path of the object (`input[0].content[0]`; empty for the top level).
    pub path: String,
    /// The repeated key.
    pub key: String,
}

impl fmt::Display for DuplicateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.path.is_empty() {
            "the top level"
        } else {
            &self.path
        };
        write!(
            f,
            "key `{}` repeated at {at}: the last value is used",
            self.key
        )
    }
}

/// The repeated keys of the JSON `text`, in document order, at most `limit` of them (and a
/// count of all); `None` when `text` is not JSON.
pub fn duplicate_keys(text: &str, limit: usize) -> Option<(Vec<DuplicateKey>, usize)> {
    let found = RefCell::new((Vec::new(), 0usize));
    let walk = Walk {
        path: String::new(),
        found: &found,
        limit,
    };
    let mut deserializer = serde_json::Deserializer::from_str(text);
    walk.deserialize(&mut deserializer).ok()?;
    deserializer.end().ok()?;
    Some(found.into_inner())
}

struct Walk<'f> {
    path: String,
    found: &'f RefCell<(Vec<DuplicateKey>, usize)>,
    limit: usize,
}

impl Walk<'_> {
    fn child(&self, path: String) -> Self {
        Walk {
            path,
            found: self.found,
            limit: self.limit,
        }
    }
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JSON")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen: HashSet<Cow<'de, str>> = HashSet::new();
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            let path = if self.path.is_empty() {
                key.to_string()
            } else {
                format!("{}.{key}", self.path)
            };
            if seen.contains(&key) {
                let mut found = self.found.borrow_mut();
                found.1 += 1;
                if found.0.len() < self.limit {
                    found.0.push(DuplicateKey {
                        path: self.path.clone(),
                        key: key.to_string(),
                    });
                }
            } else {
                seen.insert(key);
            }
            map.next_value_seed(self.child(path))?;
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0usize;
        while seq
            .next_element_seed(self.child(format!("{}[{index}]", self.path)))?
            .is_some()
        {
            index += 1;
        }
        Ok(())
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(text: &str) -> Option<(Vec<(String, String)>, usize)> {
        duplicate_keys(text, 2)
            .map(|(found, all)| (found.into_iter().map(|d| (d.path, d.key)).collect(), all))
    }

    #[test]
    fn repeated_keys_are_found_at_every_depth_with_their_path() {
        let text = r#"{"a":1,"input":[{"type":"m","content":[{"text":"x","text":"y"}]}],"a":2,
            "meta":{"k":{"z":1,"z":2}},"list":[[{"q":1,"q":1,"q":1}]]}"#;
        assert_eq!(
            keys(text),
            Some((
                vec![
                    ("input[0].content[0]".to_string(), "text".to_string()),
                    (String::new(), "a".to_string()),
                ],
                5
            ))
        );
        assert_eq!(
            keys(r#"{"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}]}"#),
            Some((vec![], 0))
        );
        assert_eq!(
            keys("[1, {\"\\u0061\":1, \"a\":2}]"),
            Some((vec![("[1]".to_string(), "a".to_string())], 1))
        );
        assert_eq!(keys("{\"a\":"), None);
        assert_eq!(keys("{} x"), None);
    }

    #[test]
    fn the_message_names_the_key_and_where() {
        let top = DuplicateKey {
            path: String::new(),
            key: "model".to_string(),
        };
        let nested = DuplicateKey {
            path: "input[3]".to_string(),
            key: "call_id".to_string(),
        };
        assert_eq!(
            (top.to_string(), nested.to_string()),
            (
                "key `model` repeated at the top level: the last value is used".to_string(),
                "key `call_id` repeated at input[3]: the last value is used".to_string()
            )
        );
    }
}
