//! How the HTTP relay reaches its upstream. A loopback `http://` upstream (a local model
//! server, a stand-in, a second proxy) is reached with hyper's HTTP/1.1 client connection
//! driven *in the task that reads the answer*: each HTTP chunk is decoded and handed over
//! without waking another task, so one small chunk per event costs well under a microsecond
//! (reqwest drives its connection in a task of its own and hands every chunk across, several
//! microseconds each — `benches/proxy.rs` measures both). One connection per request: on
//! loopback a connect costs tens of microseconds.
//!
//! Every other upstream goes through reqwest (TLS with the web's roots and any extra ones given,
//! HTTP/2 when the server offers it by ALPN, the environment's proxy settings), where the
//! network, not the hand-over, bounds the speed.

use std::time::Duration;

use std::future::Future as _;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_util::StreamExt as _;
use futures_util::stream::BoxStream;
use hyper::body::Body as _;
use hyper::header::{HOST, HeaderMap, HeaderValue};
use hyper_util::rt::TokioIo;

use super::pump::Joined;
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
    /// hyper's HTTP/1.1 connection, polled by the reader (loopback `http://` upstreams).
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
                send_loopback(*connect_timeout, method, url, headers, body).await
            }
        }
    }
}

async fn send_loopback(
    connect_timeout: Duration,
    method: hyper::Method,
    url: &reqwest::Url,
    mut headers: HeaderMap,
    body: Bytes,
) -> Result<UpstreamResponse, String> {
    let host = url.host_str().unwrap_or("127.0.0.1");
    let port = url.port_or_known_default().unwrap_or(80);
    let address = format!(
        "{}:{port}",
        host.trim_start_matches('[').trim_end_matches(']')
    );
    let tcp = tokio::time::timeout(connect_timeout, tokio::net::TcpStream::connect(&address))
        .await
        .map_err(|_| format!("connecting to {address} took longer than {connect_timeout:?}"))?
        .map_err(|e| format!("error sending request for url ({url}): {e}"))?;
    let _ = tcp.set_nodelay(true);
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake::<_, http_body_util::Full<Bytes>>(TokioIo::new(tcp))
            .await
            .map_err(|e| error_chain(&e))?;
    let target = match url.query() {
        Some(query) => format!("{}?{query}", url.path()),
        None => url.path().to_string(),
    };
    let authority = match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_string(),
    };
    if !headers.contains_key(HOST) {
        let value = HeaderValue::from_str(&authority).map_err(|e| e.to_string())?;
        headers.insert(HOST, value);
    }
    let mut request = hyper::Request::new(http_body_util::Full::new(body));
    *request.method_mut() = method;
    *request.uri_mut() = target.parse().map_err(|e: hyper::http::uri::InvalidUri| {
        format!("the upstream path {target} is not a valid request target: {e}")
    })?;
    *request.headers_mut() = headers;
    let mut conn = Box::pin(conn);
    let send = sender.send_request(request);
    tokio::pin!(send);
    // The connection is polled here until the head arrives, then by the body's reader. It may
    // finish first (an answer that fit one read, then the upstream closed): the response is
    // still there to take.
    let mut conn_done = false;
    let response = tokio::select! {
        biased;
        response = &mut send => response,
        _ = &mut conn => {
            conn_done = true;
            (&mut send).await
        }
    }
    .map_err(|e| error_chain(&e))?;
    let (parts, incoming) = response.into_parts();
    let body = LoopbackBody {
        incoming,
        conn: (!conn_done).then_some(conn),
        _sender: sender,
        held: None,
        ended: false,
    };
    Ok(UpstreamResponse {
        status: parts.status,
        version: parts.version,
        headers: parts.headers,
        body: body.boxed(),
    })
}

/// The connection of a loopback request.
type LoopbackConn = hyper::client::conn::http1::Connection<
    TokioIo<tokio::net::TcpStream>,
    http_body_util::Full<Bytes>,
>;

/// A loopback answer's body, read with its connection polled in the same task. Every chunk
/// already decodable from what the socket delivered is joined into one piece (up to
/// [`MAX_PIECE_BYTES`]): they arrived together, and the reader records and relays them once.
struct LoopbackBody {
    incoming: hyper::body::Incoming,
    conn: Option<Pin<Box<LoopbackConn>>>,
    /// Kept so the connection is not closed before the body is read.
    _sender: hyper::client::conn::http1::SendRequest<http_body_util::Full<Bytes>>,
    /// A failure after data already joined: handed over next.
    held: Option<String>,
    ended: bool,
}

/// Largest piece a loopback body hands over at once.
const MAX_PIECE_BYTES: usize = 64 * 1024;

impl LoopbackBody {
    /// The next data frame: the body is polled, then (when it has nothing) the connection,
    /// which decodes what the socket has into it, then the body again.
    fn poll_data(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Bytes, String>>> {
        let mut conn_polled = false;
        loop {
            match Pin::new(&mut self.incoming).poll_frame(cx) {
                Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                    Ok(data) => return Poll::Ready(Some(Ok(data))),
                    // Trailers: nothing to relay as data.
                    Err(_) => continue,
                },
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(error_chain(&e)))),
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Pending if conn_polled => return Poll::Pending,
                Poll::Pending => {}
            }
            conn_polled = true;
            if let Some(conn) = self.conn.as_mut()
                && conn.as_mut().poll(cx).is_ready()
            {
                // The connection is done: the body has all it will get.
                self.conn = None;
            }
        }
    }
}

impl futures_util::Stream for LoopbackBody {
    type Item = Result<Bytes, String>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if let Some(message) = this.held.take() {
            this.ended = true;
            return Poll::Ready(Some(Err(message)));
        }
        if this.ended {
            return Poll::Ready(None);
        }
        let first = match this.poll_data(cx) {
            Poll::Ready(Some(Ok(data))) => data,
            Poll::Ready(Some(Err(message))) => {
                this.ended = true;
                return Poll::Ready(Some(Err(message)));
            }
            Poll::Ready(None) => {
                this.ended = true;
                return Poll::Ready(None);
            }
            Poll::Pending => return Poll::Pending,
        };
        let mut joined = Joined::new(first, MAX_PIECE_BYTES);
        while joined.len() < MAX_PIECE_BYTES {
            match this.poll_data(cx) {
                Poll::Ready(Some(Ok(data))) => joined.push(&data),
                Poll::Ready(Some(Err(message))) => {
                    this.held = Some(message);
                    break;
                }
                Poll::Ready(None) => {
                    this.ended = true;
                    break;
                }
                Poll::Pending => break,
            }
        }
        Poll::Ready(Some(Ok(joined.into_bytes())))
    }
}
