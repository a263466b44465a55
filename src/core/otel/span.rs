//! The span model the mapping produces and the transport encodes: what OTLP carries of a span,
//! as plain data (no OpenTelemetry types in core).

/// An attribute value.
#[derive(Debug, Clone, PartialEq)]
pub enum AttrValue {
    /// A string.
    Str(String),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A boolean.
    Bool(bool),
    /// An array of strings.
    StrArray(Vec<String>),
}

impl AttrValue {
    /// The string, for a string value.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The integer, for an integer value.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Self::Int(i) => Some(*i),
            _ => None,
        }
    }
}

/// What a span stands for, as OTLP's `SpanKind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpanKind {
    /// Work inside the process (the session span).
    Internal,
    /// A call to a remote service (a request to the model).
    Client,
}

/// How a span ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpanStatus {
    /// Not set (a completed request).
    Unset,
    /// Failed, with a message.
    Error(String),
}

/// A timed event inside a span.
#[derive(Debug, Clone, PartialEq)]
pub struct SpanEvent {
    /// Event name.
    pub name: String,
    /// When, Unix nanoseconds.
    pub time_unix_nanos: u64,
    /// Its attributes.
    pub attributes: Vec<(String, AttrValue)>,
}

/// One span.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    /// Trace id (16 bytes, never all zero).
    pub trace_id: [u8; 16],
    /// Span id (8 bytes, never all zero).
    pub span_id: [u8; 8],
    /// The parent span, if any.
    pub parent_span_id: Option<[u8; 8]>,
    /// Span name.
    pub name: String,
    /// Kind.
    pub kind: SpanKind,
    /// Start, Unix nanoseconds.
    pub start_unix_nanos: u64,
    /// End, Unix nanoseconds (never before the start).
    pub end_unix_nanos: u64,
    /// Attributes, in the order they were added.
    pub attributes: Vec<(String, AttrValue)>,
    /// Events.
    pub events: Vec<SpanEvent>,
    /// Status.
    pub status: SpanStatus,
}

impl Span {
    /// The value of attribute `key`, if set.
    pub fn attribute(&self, key: &str) -> Option<&AttrValue> {
        self.attributes
            .iter()
            .find_map(|(k, v)| (k == key).then_some(v))
    }
}

/// Attributes under construction: `None` values are skipped.
#[derive(Debug, Default)]
pub(crate) struct Attrs(pub(crate) Vec<(String, AttrValue)>);

impl Attrs {
    pub(crate) fn str(&mut self, key: &str, value: impl Into<String>) {
        self.0.push((key.to_string(), AttrValue::Str(value.into())));
    }

    pub(crate) fn opt_str(&mut self, key: &str, value: Option<&str>) {
        if let Some(v) = value {
            self.str(key, v);
        }
    }

    pub(crate) fn int(&mut self, key: &str, value: i64) {
        self.0.push((key.to_string(), AttrValue::Int(value)));
    }

    pub(crate) fn uint(&mut self, key: &str, value: u64) {
        self.int(key, i64::try_from(value).unwrap_or(i64::MAX));
    }

    pub(crate) fn opt_uint(&mut self, key: &str, value: Option<u64>) {
        if let Some(v) = value {
            self.uint(key, v);
        }
    }

    pub(crate) fn float(&mut self, key: &str, value: f64) {
        self.0.push((key.to_string(), AttrValue::Float(value)));
    }

    pub(crate) fn bool(&mut self, key: &str, value: bool) {
        self.0.push((key.to_string(), AttrValue::Bool(value)));
    }

    pub(crate) fn strs(&mut self, key: &str, values: Vec<String>) {
        self.0.push((key.to_string(), AttrValue::StrArray(values)));
    }
}
