//! The HTTP relay: each request goes upstream with its method, path, query, headers (hop-by-hop
//! ones aside) and body bytes unchanged; the answer comes back with its status, headers and body
//! chunks as they arrive — the body is pulled from the upstream only as the client reads it,
//! never gathered. `POST …/responses` and `…/responses/compact` are recorded on the way.
//!
//! Failures reach the client as they happened: a status and error body are passed through; a
//! stream cut by the upstream is cut for the client too (the body ends with an error, so the
//! client sees a broken transfer); an upstream that cannot be reached gives `502` with a JSON
//! error naming the cause. Each is recorded with its class.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use serde_json::json;

use super::exchange::{Exchange, Sink, body_dialect};
use super::listen::{Body, full};
use super::upstream::UpstreamClient;
use super::wire::{
    decode_body, forwarded_headers, header_pairs, is_hop_by_hop, is_responses_path, session_key,
    upstream_url,
};
use super::{ProxyEvent, ProxyOptions};
use crate::core::redact::redact_url;
use crate::core::stream::ErrorClass;
use crate::store::NewRequest;
pub(crate) use crate::transport::http::error_chain;

/// Forwards requests to one upstream and records them into one sink.
pub(crate) struct Relay {
    pub(super) upstream: reqwest::Url,
    pub(super) client: UpstreamClient,
    pub(super) sink: Arc<Sink>,
    pub(super) max_body_bytes: usize,
    pub(super) idle_timeout: Duration,
    /// Memory shared by every request body being read or held.
    pub(super) body_budget: super::budget::BodyBudget,
    /// The WebSocket relay's TLS connector when the upstream has extra roots (`None`: the
    /// web's roots, tokio-tungstenite's default).
    pub(super) ws_tls: Option<tokio_tungstenite::Connector>,
}

/// A JSON error answer in the Responses API's shape, from the proxy itself.
pub(crate) fn error_response(status: StatusCode, code: &str, message: &str) -> Response<Body> {
    let body = json!({"error": {"message": message, "type": "promptwire_proxy", "code": code}});
    let mut response = Response::new(full(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    response
}

/// Reads a request body, at most `limit` bytes (no shared budget).
pub(crate) async fn read_body(body: Incoming, limit: usize) -> Result<Bytes, Response<Body>> {
    super::budget::read_body_within(body, limit, None)
        .await
        .map(|(bytes, _)| bytes)
}

impl Relay {
    pub(super) fn new(
        upstream: reqwest::Url,
        options: &ProxyOptions,
        sink: Arc<Sink>,
    ) -> Result<Self, String> {
        let ca = options.upstream_ca.as_ref();
        let client = UpstreamClient::for_upstream(&upstream, options.connect_timeout, ca)?;
        let ws_tls = ca
            .map(|roots| roots.rustls_client_config())
            .transpose()?
            .map(tokio_tungstenite::Connector::Rustls);
        Ok(Self {
            upstream,
            client,
            sink,
            max_body_bytes: options.max_body_bytes,
            idle_timeout: options.idle_timeout,
            body_budget: super::budget::BodyBudget::new(options.body_budget_bytes),
            ws_tls,
        })
    }

    /// Serves one request from connection `connection`.
    pub(super) async fn handle(
        self: Arc<Self>,
        req: Request<Incoming>,
        connection: u64,
    ) -> Response<Body> {
        if req.method() == hyper::Method::CONNECT {
            return error_response(
                StatusCode::METHOD_NOT_ALLOWED,
                "connect_refused",
                "promptwire record is a reverse proxy for one upstream API, not a forward proxy: \
                 CONNECT is refused",
            );
        }
        if super::wire::has_dot_segment(req.uri().path()) {
            return error_response(
                StatusCode::BAD_REQUEST,
                "bad_path",
                "the path has a `.` or `..` segment, which could leave the upstream's base path",
            );
        }
        if is_websocket_upgrade(&req) {
            return super::ws::relay(self, req, connection).await;
        }
        let (parts, body) = req.into_parts();
        let path_and_query = parts
            .uri
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .to_string();
        let url = upstream_url(&self.upstream, &path_and_query);
        let record = parts.method == hyper::Method::POST && is_responses_path(parts.uri.path());
        // The body's budget is held until the answer's head is returned (the body has gone
        // upstream by then).
        let (raw, _budget) = match super::budget::read_body_within(
            body,
            self.max_body_bytes,
            Some(&self.body_budget),
        )
        .await
        {
            Ok(read) => read,
            Err(response) => return response,
        };
        let exchange = record.then(|| self.begin(&parts.headers, &raw, &url, connection));
        if !record {
            self.sink.emit(ProxyEvent::Passthrough {
                method: parts.method.to_string(),
                path: parts.uri.path().to_string(),
            });
        }

        let parsed = match reqwest::Url::parse(&url) {
            Ok(parsed) => parsed,
            Err(e) => {
                return error_response(
                    StatusCode::BAD_REQUEST,
                    "bad_path",
                    &format!("the path does not make an upstream URL: {e}"),
                );
            }
        };
        let sent = self.client.send(
            parts.method.clone(),
            &parsed,
            forwarded_headers(&parts.headers),
            raw,
        );
        let response = match tokio::time::timeout(self.idle_timeout, sent).await {
            Ok(Ok(response)) => response,
            Ok(Err(e)) => {
                let message = format!("upstream unreachable: {e}");
                if let Some(mut exchange) = exchange {
                    exchange.fail(ErrorClass::Stream, message.clone());
                    exchange.finish();
                }
                return error_response(StatusCode::BAD_GATEWAY, "upstream_unreachable", &message);
            }
            Err(_) => {
                let message = format!(
                    "no response headers from the upstream within {} s",
                    self.idle_timeout.as_secs_f64()
                );
                if let Some(mut exchange) = exchange {
                    exchange.fail(ErrorClass::RequestTimeout, message.clone());
                    exchange.finish();
                }
                return error_response(StatusCode::GATEWAY_TIMEOUT, "upstream_timeout", &message);
            }
        };
        let status = response.status;
        let mut builder = Response::builder().status(status.as_u16());
        let connection_tokens = super::wire::connection_tokens(&response.headers);
        for (name, value) in &response.headers {
            if name != hyper::header::CONTENT_LENGTH && is_hop_by_hop(name, &connection_tokens) {
                continue;
            }
            builder = builder.header(name, value);
        }
        let mut exchange = exchange;
        if let Some(exchange) = exchange.as_mut() {
            exchange.response(status.as_u16(), header_pairs(&response.headers));
            exchange.http_version(response.version);
        }
        let body = super::pump::relay_body(response.body, exchange, self.idle_timeout);
        builder.body(body).unwrap_or_else(|e| {
            error_response(
                StatusCode::BAD_GATEWAY,
                "bad_upstream_response",
                &format!("the upstream's response cannot be relayed: {e}"),
            )
        })
    }

    /// Starts recording a request: decoded body, headers, session key.
    fn begin(
        &self,
        headers: &hyper::HeaderMap,
        raw: &Bytes,
        url: &str,
        connection: u64,
    ) -> Exchange {
        let encoding = headers
            .get(hyper::header::CONTENT_ENCODING)
            .and_then(|v| v.to_str().ok());
        let (stored, extra) = match decode_body(raw, encoding, self.max_body_bytes) {
            Ok(decoded) => {
                let extra =
                    encoding.map(|e| json!({"content_encoding": e, "wire_body_bytes": raw.len()}));
                (decoded, extra)
            }
            Err(e) => {
                self.sink.emit(ProxyEvent::Note(format!("{url}: {e}")));
                (
                    raw.to_vec(),
                    Some(json!({"content_encoding": encoding, "decode_error": e.to_string()})),
                )
            }
        };
        let value: Option<serde_json::Value> = serde_json::from_slice(&stored).ok();
        let key = session_key(headers, value.as_ref(), connection);
        let header_list = header_pairs(headers);
        self.sink.begin(
            &key,
            &NewRequest {
                dialect: body_dialect(value.as_ref()),
                rules: None,
                provider: None,
                method: "POST".to_string(),
                url: redact_url(url),
                body: &stored,
                headers: &header_list,
                extra,
                started_us: Some(super::exchange::now_us()),
            },
        )
    }
}

/// True for a WebSocket upgrade request (`Connection: upgrade` and `Upgrade: websocket`).
pub(crate) fn is_websocket_upgrade<B>(req: &Request<B>) -> bool {
    let has = |name: hyper::header::HeaderName, token: &str| {
        req.headers()
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .any(|t| t.trim().eq_ignore_ascii_case(token))
    };
    has(hyper::header::CONNECTION, "upgrade") && has(hyper::header::UPGRADE, "websocket")
}
