//! `BodyValue`: a compiled body as a JSON object, built from the body's exact bytes the first time
//! something reads it, and shared (one allocation, one parse) by every view whose body is the same.
//! Compiling six views of a 1 MiB prompt then costs one serialization per item and one byte
//! assembly per view; the object form is paid for only by a reader that wants a tree.

use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use serde::{Serialize, Serializer};

use crate::core::json::JsonMap;

/// The body object, keys in wire order, materialized on first use.
#[derive(Clone)]
pub struct BodyValue {
    inner: Arc<Inner>,
}

struct Inner {
    bytes: Vec<u8>,
    value: OnceLock<JsonMap>,
}

impl BodyValue {
    /// A body whose object form is parsed from `bytes` (the compiler's own JSON) when read.
    pub fn from_bytes(bytes: Vec<u8>) -> Self {
        Self {
            inner: Arc::new(Inner {
                bytes,
                value: OnceLock::new(),
            }),
        }
    }

    /// True when both share one body (identical views of one compile batch).
    pub fn ptr_eq(a: &Self, b: &Self) -> bool {
        Arc::ptr_eq(&a.inner, &b.inner)
    }
}

impl Deref for BodyValue {
    type Target = JsonMap;

    fn deref(&self) -> &JsonMap {
        self.inner.value.get_or_init(|| {
            // The bytes are the compiler's serialization of an object: parsing cannot fail, and
            // `preserve_order` keeps the wire key order.
            serde_json::from_slice(&self.inner.bytes).unwrap_or_default()
        })
    }
}

impl PartialEq for BodyValue {
    fn eq(&self, other: &Self) -> bool {
        Self::ptr_eq(self, other) || self.inner.bytes == other.inner.bytes
    }
}

impl fmt::Debug for BodyValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl Serialize for BodyValue {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(serializer)
    }
}
