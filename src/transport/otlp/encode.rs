//! Spans ([`crate::core::otel::Span`]) as an OTLP `ExportTraceServiceRequest`, in the wire types
//! of `opentelemetry-proto` (generated from the official .proto files), encoded as protobuf (the
//! collectors' default) or as OTLP/JSON (hex ids, the crate's serde mapping).

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{
    AnyValue, ArrayValue, InstrumentationScope, KeyValue, any_value,
};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Status, span, status};
use prost::Message as _;

use crate::core::otel::{AttrValue, Span, SpanKind, SpanStatus};

/// The body encoding of an export request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protocol {
    /// `application/x-protobuf` (OTLP/HTTP's default).
    #[default]
    Protobuf,
    /// `application/json` (OTLP/JSON).
    Json,
}

impl Protocol {
    /// The `Content-Type` of a body in this encoding.
    pub fn content_type(self) -> &'static str {
        match self {
            Self::Protobuf => "application/x-protobuf",
            Self::Json => "application/json",
        }
    }
}

/// The instrumentation scope spans are reported under.
pub const SCOPE_NAME: &str = "promptwire";

fn any(value: &AttrValue) -> AnyValue {
    let value = match value {
        AttrValue::Str(s) => any_value::Value::StringValue(s.clone()),
        AttrValue::Int(i) => any_value::Value::IntValue(*i),
        AttrValue::Float(f) => any_value::Value::DoubleValue(*f),
        AttrValue::Bool(b) => any_value::Value::BoolValue(*b),
        AttrValue::StrArray(items) => any_value::Value::ArrayValue(ArrayValue {
            values: items
                .iter()
                .map(|s| AnyValue {
                    value: Some(any_value::Value::StringValue(s.clone())),
                })
                .collect(),
        }),
    };
    AnyValue { value: Some(value) }
}

fn key_values(attributes: &[(String, AttrValue)]) -> Vec<KeyValue> {
    attributes
        .iter()
        .map(|(k, v)| KeyValue {
            key: k.clone(),
            value: Some(any(v)),
            ..Default::default()
        })
        .collect()
}

fn proto_span(s: &Span) -> opentelemetry_proto::tonic::trace::v1::Span {
    opentelemetry_proto::tonic::trace::v1::Span {
        trace_id: s.trace_id.to_vec(),
        span_id: s.span_id.to_vec(),
        parent_span_id: s.parent_span_id.map(|p| p.to_vec()).unwrap_or_default(),
        name: s.name.clone(),
        kind: match s.kind {
            SpanKind::Internal => span::SpanKind::Internal,
            SpanKind::Client => span::SpanKind::Client,
        } as i32,
        start_time_unix_nano: s.start_unix_nanos,
        end_time_unix_nano: s.end_unix_nanos,
        attributes: key_values(&s.attributes),
        events: s
            .events
            .iter()
            .map(|e| span::Event {
                time_unix_nano: e.time_unix_nanos,
                name: e.name.clone(),
                attributes: key_values(&e.attributes),
                dropped_attributes_count: 0,
            })
            .collect(),
        status: Some(match &s.status {
            SpanStatus::Unset => Status::default(),
            SpanStatus::Error(message) => Status {
                message: message.clone(),
                code: status::StatusCode::Error as i32,
            },
        }),
        ..Default::default()
    }
}

/// The export request for `spans`, under a resource named `service_name` (`service.name`).
pub fn export_request(spans: &[Span], service_name: &str) -> ExportTraceServiceRequest {
    let resource = Resource {
        attributes: key_values(&[
            (
                "service.name".to_string(),
                AttrValue::Str(service_name.to_string()),
            ),
            (
                "service.version".to_string(),
                AttrValue::Str(env!("CARGO_PKG_VERSION").to_string()),
            ),
            (
                "telemetry.sdk.name".to_string(),
                AttrValue::Str("promptwire".to_string()),
            ),
        ]),
        ..Default::default()
    };
    ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            resource: Some(resource),
            scope_spans: vec![ScopeSpans {
                scope: Some(InstrumentationScope {
                    name: SCOPE_NAME.to_string(),
                    version: env!("CARGO_PKG_VERSION").to_string(),
                    ..Default::default()
                }),
                spans: spans.iter().map(proto_span).collect(),
                schema_url: String::new(),
            }],
            schema_url: String::new(),
        }],
    }
}

/// `spans` encoded as an export request body in `protocol`.
pub fn encode(spans: &[Span], service_name: &str, protocol: Protocol) -> Vec<u8> {
    let request = export_request(spans, service_name);
    match protocol {
        Protocol::Protobuf => request.encode_to_vec(),
        // Serializing plain structs to a Vec cannot fail.
        Protocol::Json => serde_json::to_vec(&request).unwrap_or_default(),
    }
}

/// Spans rejected by a collector's answer body (`partial_success.rejected_spans`), and its
/// message; `None` when the body says nothing of it.
pub fn rejected(body: &[u8], protocol: Protocol) -> Option<(i64, String)> {
    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceResponse;
    let response = match protocol {
        Protocol::Protobuf => ExportTraceServiceResponse::decode(body).ok()?,
        Protocol::Json => serde_json::from_slice(body).ok()?,
    };
    let partial = response.partial_success?;
    (partial.rejected_spans > 0 || !partial.error_message.is_empty())
        .then_some((partial.rejected_spans, partial.error_message))
}
