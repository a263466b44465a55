//! The element pool: every distinct JSON element of a session (a setting, a tool list, an input
//! item) stored once, keyed by its digest as sent (key order counts), with its byte and token
//! counts computed once.

use std::collections::HashMap;

use serde_json::Value;

use super::canon::{Digest, digest};
use super::tokens::Tokenizer;

/// Index of an element in an [`ElementPool`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ElementId(pub u32);

/// One distinct element.
#[derive(Debug, Clone)]
pub struct Element {
    /// Digest as sent (key order counts).
    pub digest: Digest,
    /// Bytes of its compact JSON as sent.
    pub bytes: u64,
    /// o200k_base tokens of its compact JSON as sent.
    pub tokens: u64,
    /// The value as first seen.
    pub value: Value,
}

/// Distinct elements of a session, each hashed, serialized and tokenized once.
#[derive(Debug, Clone, Default)]
pub struct ElementPool {
    tokenizer: Tokenizer,
    elements: Vec<Element>,
    by_digest: HashMap<Digest, ElementId>,
}

impl ElementPool {
    /// An empty pool counting tokens with `tokenizer`.
    pub fn new(tokenizer: Tokenizer) -> Self {
        Self {
            tokenizer,
            elements: Vec::new(),
            by_digest: HashMap::new(),
        }
    }

    /// The id of `value`, adding it (cloned) when it is new.
    pub fn intern(&mut self, value: &Value) -> ElementId {
        let d = digest(value);
        match self.by_digest.get(&d) {
            Some(id) => *id,
            None => self.insert(d, value.clone()),
        }
    }

    /// The id of `value`, adding it (moved) when it is new.
    pub fn intern_owned(&mut self, value: Value) -> ElementId {
        let d = digest(&value);
        match self.by_digest.get(&d) {
            Some(id) => *id,
            None => self.insert(d, value),
        }
    }

    fn insert(&mut self, digest: Digest, value: Value) -> ElementId {
        // Serializing a `Value` into a String cannot fail (keys are strings, no I/O).
        let text = serde_json::to_string(&value).unwrap_or_default();
        let id = ElementId(u32::try_from(self.elements.len()).unwrap_or(u32::MAX));
        self.elements.push(Element {
            digest,
            bytes: text.len() as u64,
            tokens: self.tokenizer.count(&text),
            value,
        });
        self.by_digest.insert(digest, id);
        id
    }

    /// The element with this id.
    pub fn get(&self, id: ElementId) -> Option<&Element> {
        self.elements.get(id.0 as usize)
    }

    /// Whether `id` belongs to this pool.
    pub fn contains(&self, id: ElementId) -> bool {
        (id.0 as usize) < self.elements.len()
    }

    /// Bytes of an element (0 for an unknown id).
    pub fn bytes(&self, id: ElementId) -> u64 {
        self.get(id).map_or(0, |e| e.bytes)
    }

    /// Tokens of an element (0 for an unknown id).
    pub fn tokens(&self, id: ElementId) -> u64 {
        self.get(id).map_or(0, |e| e.tokens)
    }

    /// The value of an element (`null` for an unknown id).
    pub fn value(&self, id: ElementId) -> &Value {
        self.get(id).map_or(&Value::Null, |e| &e.value)
    }

    /// Number of distinct elements.
    pub fn len(&self) -> usize {
        self.elements.len()
    }

    /// Whether the pool is empty.
    pub fn is_empty(&self) -> bool {
        self.elements.is_empty()
    }

    /// The tokenizer the pool counts with.
    pub fn tokenizer(&self) -> Tokenizer {
        self.tokenizer
    }
}
