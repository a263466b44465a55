//! `BodyValue`: a compiled body as a JSON object, materialized the first time something reads it
//! (the prompt items' cached values put in place of their placeholders) and shared — one
//! allocation, one materialization — by every view whose body is the same. Compiling six views of
//! a 1 MiB prompt then costs one serialization per item and one byte assembly per view; the
//! object form is paid for only by a reader that wants a tree.

use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use serde::{Serialize, Serializer};

use super::body::BuiltBody;
use crate::core::json::JsonMap;

/// The body object, keys in wire order, materialized on first use.
#[derive(Clone)]
pub struct BodyValue {
    inner: Arc<Inner>,
}

struct Inner {
    /// `None` for a body given as an object (e.g. a recorded one): `value` is then set.
    built: Option<BuiltBody>,
    input_overridden: bool,
    value: OnceLock<Arc<JsonMap>>,
}

impl BodyValue {
    /// A body whose object form is materialized from `built` when read.
    pub(super) fn new(built: BuiltBody, input_overridden: bool) -> Self {
        Self {
            inner: Arc::new(Inner {
                built: Some(built),
                input_overridden,
                value: OnceLock::new(),
            }),
        }
    }

    /// A body that is already an object (a recorded body sent again as stored).
    pub fn from_map(map: JsonMap) -> Self {
        Self {
            inner: Arc::new(Inner {
                built: None,
                input_overridden: false,
                value: OnceLock::from(Arc::new(map)),
            }),
        }
    }

    /// The built body it materializes from.
    pub(super) fn built(&self) -> Option<&BuiltBody> {
        self.inner.built.as_ref()
    }

    /// The object, shared (materialized first if nothing read it yet): a view that keeps the
    /// body holds this instead of a copy.
    pub fn shared(&self) -> Arc<JsonMap> {
        let inner = &*self.inner;
        Arc::clone(inner.value.get_or_init(|| Arc::new(inner.materialize())))
    }

    /// True when both share one body (identical views of one compile batch).
    pub fn ptr_eq(a: &Self, b: &Self) -> bool {
        Arc::ptr_eq(&a.inner, &b.inner)
    }
}

impl Inner {
    fn materialize(&self) -> JsonMap {
        self.built
            .as_ref()
            .map(|built| built.materialize(self.input_overridden))
            .unwrap_or_default()
    }
}

impl Deref for BodyValue {
    type Target = JsonMap;

    fn deref(&self) -> &JsonMap {
        let inner = &*self.inner;
        inner.value.get_or_init(|| Arc::new(inner.materialize()))
    }
}

impl PartialEq for BodyValue {
    fn eq(&self, other: &Self) -> bool {
        Self::ptr_eq(self, other) || **self == **other
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
