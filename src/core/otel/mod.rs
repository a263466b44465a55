//! Recorded sessions as OpenTelemetry spans (issue 33), in the GenAI semantic conventions: one
//! trace per session, a root span for the session and one `chat {model}` span per request under
//! it, with the request's model, the answer's model, id and usage (cache read and write tokens
//! included), the first token and the end of the stream as span events, and the ledger's verdict
//! (prefix kept or broken, where, why; predicted read/write; paid/ideal/lost) under
//! `promptwire.*` attributes where the conventions have none.
//!
//! Pure: plain data in ([`SessionFacts`], [`RequestFacts`], the session's prefix input and its
//! [`Ledger`]), plain [`Span`]s out; the transport encodes them as OTLP. Message content goes in
//! only when asked ([`SpanOptions::content`]) and always through [`crate::core::redact`]'s
//! checked functions: a text that cannot be redacted is an error, never a span. Headers never go
//! in at all.
//!
//! Ids are derived from the stored ids (SipHash), so a session exported twice, or recorded live
//! and exported later, gives the same trace and span ids.
//!
//! - [`span`] — the span model (attributes, events, status).
//! - [`map`] — the mapping from a session to its spans.
//! - [`ids`] — trace and span ids.

pub mod ids;
pub mod map;
pub mod span;

pub use map::{AgentPlace, RequestFacts, SessionFacts, SpanOptions, request_spans, session_span};
pub use span::{AttrValue, Span, SpanEvent, SpanKind, SpanStatus};

#[cfg(test)]
mod tests;
