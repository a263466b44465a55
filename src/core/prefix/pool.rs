//! The element pool: every distinct JSON element of a session (a setting, a tool list, an input
//! item) stored once, keyed by its digest as sent (key order counts), with its compact byte count
//! computed once. A batch of elements (a body's input items) is hashed and measured on all cores.
//! Tokens are not counted here: the ledger counts the rendered prompt (`core::ledger::render`).

use std::collections::HashMap;

use rayon::prelude::*;
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
    /// An empty pool whose session counts tokens with `tokenizer`.
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

    /// The ids of `values` in order, adding (cloned) those that are new; new elements are
    /// hashed and measured in parallel.
    pub fn intern_all(&mut self, values: &[Value]) -> Vec<ElementId> {
        let digests: Vec<Digest> = values.par_iter().map(digest).collect();
        self.intern_batch(digests, |i| values[i].clone())
    }

    /// [`ElementPool::intern_all`] taking the values: new ones move into the pool.
    pub fn intern_all_owned(&mut self, values: Vec<Value>) -> Vec<ElementId> {
        let digests: Vec<Digest> = values.par_iter().map(digest).collect();
        let mut values: Vec<Option<Value>> = values.into_iter().map(Some).collect();
        self.intern_batch(digests, |i| values[i].take().unwrap_or(Value::Null))
    }

    /// Ids for values with these digests; `take(i)` yields value `i` the first time a digest is
    /// new (once per distinct new digest).
    fn intern_batch(
        &mut self,
        digests: Vec<Digest>,
        mut take: impl FnMut(usize) -> Value,
    ) -> Vec<ElementId> {
        // Slots: an existing id, or an index into `fresh` (new distinct values, in order).
        enum Slot {
            Known(ElementId),
            Fresh(usize),
        }
        let mut fresh: Vec<(Digest, Value)> = Vec::new();
        let mut fresh_at: HashMap<Digest, usize> = HashMap::new();
        let slots: Vec<Slot> = digests
            .iter()
            .enumerate()
            .map(|(i, d)| match self.by_digest.get(d) {
                Some(id) => Slot::Known(*id),
                None => Slot::Fresh(*fresh_at.entry(*d).or_insert_with(|| {
                    fresh.push((*d, take(i)));
                    fresh.len() - 1
                })),
            })
            .collect();
        let measured: Vec<u64> = fresh.par_iter().map(|(_, value)| measure(value)).collect();
        let first = self.elements.len();
        for ((digest, value), bytes) in fresh.into_iter().zip(measured) {
            self.push(digest, value, bytes);
        }
        slots
            .into_iter()
            .map(|slot| match slot {
                Slot::Known(id) => id,
                Slot::Fresh(k) => ElementId(u32::try_from(first + k).unwrap_or(u32::MAX)),
            })
            .collect()
    }

    fn insert(&mut self, digest: Digest, value: Value) -> ElementId {
        let bytes = measure(&value);
        self.push(digest, value, bytes)
    }

    fn push(&mut self, digest: Digest, value: Value, bytes: u64) -> ElementId {
        let id = ElementId(u32::try_from(self.elements.len()).unwrap_or(u32::MAX));
        self.elements.push(Element {
            digest,
            bytes,
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

    /// The tokenizer the session counts with.
    pub fn tokenizer(&self) -> Tokenizer {
        self.tokenizer
    }
}

/// Bytes of `value`'s compact JSON.
fn measure(value: &Value) -> u64 {
    let mut counter = ByteCount(0);
    // Writing a `Value` into a counter cannot fail (keys are strings, the writer never errs).
    let _ = serde_json::to_writer(&mut counter, value);
    counter.0
}

/// A writer that only counts.
struct ByteCount(u64);

impl std::io::Write for ByteCount {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn a_batch_interns_as_one_by_one_does() {
        let values = vec![
            json!({"type": "message", "content": "a"}),
            json!("text"),
            json!({"type": "message", "content": "a"}),
            json!({"content": "a", "type": "message"}),
            json!("text"),
            json!([1, 2, {"x": null}]),
        ];
        let mut one_by_one = ElementPool::new(Tokenizer::o200k());
        let expected: Vec<ElementId> = values.iter().map(|v| one_by_one.intern(v)).collect();
        let mut batch = ElementPool::new(Tokenizer::o200k());
        // A value seen before the batch keeps its id.
        assert_eq!(batch.intern(&values[1]), ElementId(0));
        let by_ref = batch.intern_all(&values);
        let mut owned = batch.clone();
        assert_eq!(owned.intern_all_owned(values.clone()), by_ref);
        assert_eq!(
            by_ref,
            vec![
                ElementId(1),
                ElementId(0),
                ElementId(1),
                ElementId(2),
                ElementId(0),
                ElementId(3)
            ]
        );
        assert_eq!(
            expected,
            vec![
                ElementId(0),
                ElementId(1),
                ElementId(0),
                ElementId(2),
                ElementId(1),
                ElementId(3)
            ]
        );
        let facts = |pool: &ElementPool, id: ElementId| {
            let e = pool.get(id).expect("element");
            (e.digest, e.bytes, e.value.clone())
        };
        for (i, value) in values.iter().enumerate() {
            let a = facts(&one_by_one, expected[i]);
            assert_eq!(facts(&batch, by_ref[i]), a);
            assert_eq!(facts(&owned, by_ref[i]), a);
            assert_eq!(&a.2, value);
        }
        assert_eq!((batch.len(), owned.len(), one_by_one.len()), (4, 4, 4));
    }
}
