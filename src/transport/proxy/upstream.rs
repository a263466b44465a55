//! How the HTTP relay reaches its upstream. A loopback `http://` upstream (a local model
//! server, a stand-in, a second proxy) is reached with the relay's own HTTP/1.1 client
//! ([`super::h1`]), read *in the task that reads the answer*: everything one socket read
//! delivered is decoded and handed over at once, so one small chunk per event costs a few
//! comparisons (reqwest drives its connection in a task of its own and hands every chunk
//! across, several microseconds each; hyper's connection decodes one chunk per hand-over —
//! `benches/proxy.rs` measures the relay). One connection per request: on loopback a connect
//! costs tens of microseconds.
//!
//! Every other upstream goes through reqwest (TLS with the web's roots and any extra ones given,
//! HTTP/2 when the server offers it by ALPN, the environment's proxy settings), where the
//! network, not the hand-over, bounds the speed.

use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt as _;
use futures_util::stream::BoxStream;
use hyper::header::HeaderMap;

use crate::transport::http::{error_chain, is_loopback_host};
use crate::transport::tls::ExtraRoots;

/// A response head from the upstream, with its body still to come.
pub(crate) struct UpstreamResponse {
    /// Its status.
    pub(crate) status: hyper::StatusCode,
    /// The HTTP version it came over (HTTP/2 when the upstream offered it by ALPN).
    pub(crate) version: hyper::Version,
    /// Its headers, in order.
    pub(crate) headers: HeaderMap,
    /// Its body, chunk by chunk, pulled as it is read (an error ends it).
    pub(crate) body: BoxStream<'static, Result<Bytes, String>>,
}

/// The relay's way to its upstream.
pub(crate) enum UpstreamClient {
    /// reqwest: TLS, HTTP/2, proxies.
    Reqwest(reqwest::Client),
    /// The relay's own HTTP/1.1 client, read by the reader (loopback `http://` upstreams).
    Loopback {
        /// Longest wait for the connection.
        connect_timeout: Duration,
    },
}

impl UpstreamClient {
    /// The client for `upstream`, trusting `ca` besides the web's roots.
    pub(crate) fn for_upstream(
        upstream: &reqwest::Url,
        connect_timeout: Duration,
        ca: Option<&ExtraRoots>,
    ) -> Result<Self, String> {
        let loopback = upstream.host_str().is_some_and(is_loopback_host);
        if loopback && upstream.scheme() == "http" {
            return Ok(Self::Loopback { connect_timeout });
        }
        // The proxy forwards exactly what it gets: no redirects followed, no decompression,
        // no system proxy for a loopback upstream.
        let mut builder = reqwest::Client::builder()
            .connect_timeout(connect_timeout)
            .redirect(reqwest::redirect::Policy::none())
            .tcp_nodelay(true);
        if loopback {
            builder = builder.no_proxy();
        }
        if let Some(ca) = ca {
            builder = ca.add_to_reqwest(builder)?;
        }
        builder
            .build()
            .map(Self::Reqwest)
            .map_err(|e| error_chain(&e))
    }

    /// Sends `method url` with `headers` (already stripped of hop-by-hop ones) and `body`;
    /// resolves when the response head arrives.
    pub(crate) async fn send(
        &self,
        method: hyper::Method,
        url: &reqwest::Url,
        headers: HeaderMap,
        body: Bytes,
    ) -> Result<UpstreamResponse, String> {
        match self {
            Self::Reqwest(client) => {
                let response = client
                    .request(method, url.as_str())
                    .headers(headers)
                    .body(body)
                    .send()
                    .await
                    .map_err(|e| error_chain(&e))?;
                Ok(UpstreamResponse {
                    status: response.status(),
                    version: response.version(),
                    headers: response.headers().clone(),
                    body: response
                        .bytes_stream()
                        .map(|chunk| chunk.map_err(|e| error_chain(&e)))
                        .boxed(),
                })
            }
            Self::Loopback { connect_timeout } => {
                super::h1::send(*connect_timeout, method, url, headers, body).await
            }
        }
    }
}
