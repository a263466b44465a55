//! The shapes in which catalogs list a model's options: ours (a list of ids) and Codex's own
//! (`codex debug models` and `$CODEX_HOME/models_cache.json`: objects such as
//! `{"id": "priority", "name": "Fast", …}` or `{"effort": "low", "description": …}`). Both read
//! into the same list of ids; an entry of neither shape is an error at its JSON path
//! (`models[0].service_tiers[1]: …`).

use std::fmt;

use serde::Deserializer;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// Reads a list whose entries are ids or objects carrying the id under `key`.
struct IdList {
    key: &'static str,
}

/// Reads one entry of an [`IdList`].
#[derive(Clone, Copy)]
struct IdEntry {
    key: &'static str,
}

impl<'de> Visitor<'de> for IdList {
    type Value = Vec<String>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a list of strings or of objects with a string `{}`",
            self.key
        )
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(id) = seq.next_element_seed(IdEntry { key: self.key })? {
            out.push(id);
        }
        Ok(out)
    }
}

impl<'de> DeserializeSeed<'de> for IdEntry {
    type Value = String;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<String, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for IdEntry {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a string or an object with a string `{}`", self.key)
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<String, E> {
        Ok(v.to_string())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<String, A::Error> {
        let mut id = None;
        while let Some(key) = map.next_key::<String>()? {
            if key == self.key {
                id = Some(map.next_value::<String>()?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        id.ok_or_else(|| serde::de::Error::custom(format!("missing field `{}`", self.key)))
    }
}

/// `service_tiers`: `["priority"]` or `[{"id": "priority", "name": "Fast", …}]`.
pub fn service_tier_ids<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    d.deserialize_seq(IdList { key: "id" })
}

/// `supported_reasoning_efforts` (`["low", …]`) or Codex's `supported_reasoning_levels`
/// (`[{"effort": "low", "description": …}]`).
pub fn effort_ids<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    d.deserialize_seq(IdList { key: "effort" })
}
