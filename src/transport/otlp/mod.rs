//! OpenTelemetry export (issue 33): recordings sent as OTLP/HTTP traces to the observability
//! backend a team already runs (Arize Phoenix, Langfuse, Jaeger or Tempo behind a collector).
//!
//! - [`encode`]: `core::otel` spans as an OTLP `ExportTraceServiceRequest` in the
//!   `opentelemetry-proto` wire types, protobuf or JSON.
//! - [`exporter`]: the bounded queue, batching and retry with backoff on a thread of its own;
//!   failures counted, never fatal.
//! - [`session`]: a stored session (facts, ledger) as spans.
//! - [`live`]: `record --otlp`: each recorded request exported as it completes.
//! - [`headers`]: `Name=$ENV_VAR` headers for authenticated collectors, read from the
//!   environment, never stored.

pub mod encode;
pub mod exporter;
pub mod headers;
pub mod live;
pub mod session;

pub use encode::Protocol;
pub use exporter::{OtlpConfig, OtlpError, OtlpExporter, OtlpStats, traces_url};
pub use live::LiveExport;
pub use session::{SessionForExport, SessionSpansError};
