//! The recording proxy in front of an upstream that speaks HTTP/2 (issue 20): a TLS server on
//! 127.0.0.1 the test starts (hyper's HTTP/2 server behind rustls, offering `h2` and `http/1.1`
//! by ALPN, certificate from the private CA of `tests/data/tls/`), trusted through
//! `ProxyOptions::upstream_ca` / `record --upstream-ca`. The upstream logs the HTTP version of
//! every request it got, so a proxy that fell back to HTTP/1.1 fails. Its answers — a real
//! Responses SSE stream in a few DATA frames, a JSON response object, a 429 with a JSON error —
//! reach a plain HTTP/1.1 client byte for byte, and are recorded exactly as the same answers
//! served over HTTP/1.1 by the loopback upstream of `support::upstream`; the HAR names HTTP/2.
//! Also through the same CA: the `record` binary (`--upstream-ca`, and its bad-file errors), the
//! WebSocket relay to a `wss://` upstream, and a live send (`SendOptions::ca`, `send --ca`);
//! without the CA each is refused (UnknownIssuer) and nothing reaches the upstream.

use crate::support;

use std::collections::VecDeque;
use std::convert::Infallible;
use std::io::{BufRead as _, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures_util::{SinkExt as _, StreamExt as _};
use http_body_util::BodyExt;
use hyper::body::Frame;
use hyper_util::rt::{TokioExecutor, TokioIo};
use pretty_assertions::assert_eq;
use promptwire::core::stream::http_error::classify_http_error;
use promptwire::core::stream::{StreamReader, read_all};
use promptwire::store::{OutcomeRecord, Page, RecordedState, Store};
use promptwire::transport::proxy::{ProxyEvent, ProxyOptions, ServerHandle, start_proxy};
use promptwire::transport::tls::ExtraRoots;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::{Value, json};
use support::scratch;
use support::server::Server;
use support::upstream::{End, Reply, Step, Upstream, pieces, sse_file, turn_events};
use tokio_tungstenite::tungstenite::Message;

/// `tests/data/tls/{name}`.
pub(crate) fn tls_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/tls")
        .join(name)
}

/// The test CA, as the proxy is given it.
fn test_ca() -> ExtraRoots {
    let path = tls_file("ca.pem");
    let pem = std::fs::read(&path).expect("ca.pem");
    ExtraRoots::from_pem(&pem, &path.display().to_string()).expect("test CA")
}

/// What the HTTP/2 upstream got: the connection's ALPN protocol, the request's HTTP version.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Seen {
    pub(crate) alpn: Option<String>,
    pub(crate) version: String,
    pub(crate) method: String,
    pub(crate) path: String,
    pub(crate) body: Vec<u8>,
}

/// A TLS upstream on 127.0.0.1 offering `h2` and `http/1.1` by ALPN and serving each connection
/// with the protocol agreed; `replies` answer the requests in order (whatever connection they
/// come on). Each `Step::Send` of a reply is one DATA frame (a pause before the next).
pub(crate) struct H2Upstream {
    addr: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
    /// Data frames handed to hyper, per reply.
    frames: Arc<Mutex<Vec<usize>>>,
    _stop: tokio::sync::oneshot::Sender<()>,
}

/// TLS with the test CA's leaf for 127.0.0.1 / localhost, offering `alpn`.
fn tls_acceptor(alpn: &[&[u8]]) -> tokio_rustls::TlsAcceptor {
    let certificates: Vec<CertificateDer<'static>> =
        CertificateDer::pem_file_iter(tls_file("leaf.pem"))
            .expect("leaf.pem")
            .collect::<Result<_, _>>()
            .expect("leaf certificate");
    let key = PrivateKeyDer::from_pem_file(tls_file("leaf.key")).expect("leaf.key");
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("versions")
    .with_no_client_auth()
    .with_single_cert(certificates, key)
    .expect("server certificate");
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    tokio_rustls::TlsAcceptor::from(Arc::new(config))
}

impl H2Upstream {
    pub(crate) fn start(replies: Vec<Reply>) -> Self {
        let acceptor = tls_acceptor(&[b"h2", b"http/1.1"]);

        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let addr = listener.local_addr().expect("addr");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let frames = Arc::new(Mutex::new(Vec::new()));
        let replies = Arc::new(Mutex::new(VecDeque::from(replies)));
        let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
        let (log, frame_log) = (Arc::clone(&seen), Arc::clone(&frames));
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .expect("runtime");
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                loop {
                    tokio::select! {
                        _ = &mut stopped => break,
                        accepted = listener.accept() => {
                            let Ok((tcp, _)) = accepted else { continue };
                            let connection = Connection {
                                replies: Arc::clone(&replies),
                                seen: Arc::clone(&log),
                                frames: Arc::clone(&frame_log),
                            };
                            tokio::spawn(connection.serve(acceptor.clone(), tcp));
                        }
                    }
                }
            });
        });
        Self {
            addr,
            seen,
            frames,
            _stop: stop,
        }
    }

    pub(crate) fn base_url(&self) -> String {
        format!("https://127.0.0.1:{}/v1", self.addr.port())
    }

    pub(crate) fn seen(&self) -> Vec<Seen> {
        self.seen.lock().expect("log").clone()
    }

    fn frames(&self) -> Vec<usize> {
        self.frames.lock().expect("log").clone()
    }
}

type ReplyBody = http_body_util::combinators::BoxBody<Bytes, Infallible>;

/// One accepted connection of the HTTP/2 upstream.
struct Connection {
    replies: Arc<Mutex<VecDeque<Reply>>>,
    seen: Arc<Mutex<Vec<Seen>>>,
    frames: Arc<Mutex<Vec<usize>>>,
}

impl Connection {
    async fn serve(self, acceptor: tokio_rustls::TlsAcceptor, tcp: tokio::net::TcpStream) {
        // A client that does not trust the certificate ends here.
        let Ok(tls) = acceptor.accept(tcp).await else {
            return;
        };
        let alpn = tls
            .get_ref()
            .1
            .alpn_protocol()
            .map(|p| String::from_utf8_lossy(p).into_owned());
        let h2 = alpn.as_deref() == Some("h2");
        let this = Arc::new(self);
        let service =
            hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                let this = Arc::clone(&this);
                let alpn = alpn.clone();
                async move { Ok::<_, Infallible>(this.answer(req, alpn).await) }
            });
        let io = TokioIo::new(tls);
        if h2 {
            let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                .serve_connection(io, service)
                .await;
        } else {
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(io, service)
                .await;
        }
    }

    async fn answer(
        &self,
        req: hyper::Request<hyper::body::Incoming>,
        alpn: Option<String>,
    ) -> hyper::Response<ReplyBody> {
        let version = format!("{:?}", req.version());
        let (parts, body) = req.into_parts();
        let body = body
            .collect()
            .await
            .map(|b| b.to_bytes())
            .unwrap_or_default();
        self.seen.lock().expect("log").push(Seen {
            alpn,
            version,
            method: parts.method.to_string(),
            path: parts.uri.path().to_string(),
            body: body.to_vec(),
        });
        let reply = self.replies.lock().expect("replies").pop_front();
        let reply = reply.unwrap_or_else(|| Reply::json(500, r#"{"error":"no reply left"}"#));
        let sends = reply
            .steps
            .iter()
            .filter(|s| matches!(s, Step::Send(_)))
            .count();
        self.frames.lock().expect("log").push(sends);
        let steps = reply.steps.into_iter();
        let stream = futures_util::stream::unfold(steps, |mut steps| async move {
            loop {
                match steps.next()? {
                    Step::Send(bytes) => return Some((Ok(Frame::data(bytes)), steps)),
                    Step::Sleep(pause) => tokio::time::sleep(pause).await,
                    Step::Wait(..) | Step::Cut | Step::Reset => {
                        panic!("the HTTP/2 upstream sends and pauses only")
                    }
                }
            }
        });
        let mut response =
            hyper::Response::new(BodyExt::boxed(http_body_util::StreamBody::new(stream)));
        *response.status_mut() = hyper::StatusCode::from_u16(reply.status).expect("status");
        for (name, value) in &reply.headers {
            response.headers_mut().append(
                hyper::header::HeaderName::from_bytes(name.as_bytes()).expect("name"),
                hyper::header::HeaderValue::from_str(value).expect("value"),
            );
        }
        response
    }
}

/// The bytes a reply sends.
pub(crate) fn reply_bytes(reply: &Reply) -> Vec<u8> {
    reply
        .steps
        .iter()
        .flat_map(|s| match s {
            Step::Send(b) => b.to_vec(),
            _ => Vec::new(),
        })
        .collect()
}

/// A non-streaming response object.
fn json_response() -> Value {
    json!({
        "id": "resp_h2_json",
        "object": "response",
        "created_at": 1_790_000_000,
        "status": "completed",
        "model": "gpt-5.5-2026-10-01",
        "output": [
            {"type": "message", "id": "msg_h2", "role": "assistant", "status": "completed",
             "content": [{"type": "output_text", "text": "One piece, over HTTP/2.", "annotations": []}]}
        ],
        "usage": {
            "input_tokens": 4200,
            "input_tokens_details": {"cached_tokens": 4096},
            "output_tokens": 9,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 4209
        }
    })
}

fn rate_limited() -> Value {
    json!({"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}})
}

/// The three answers, in the order the client asks for them.
pub(crate) fn cases() -> Vec<(&'static str, Reply)> {
    let sse = sse_file("text-answer.sse");
    vec![
        (
            "sse",
            Reply::answer(pieces(&sse, 4, Duration::from_millis(5)), End::Complete),
        ),
        (
            "json",
            Reply::json(200, &json_response().to_string()).with_length(),
        ),
        (
            "429",
            Reply::status(429, &[("retry-after", "7")], &rate_limited()).with_length(),
        ),
    ]
}

fn request_body(name: &str) -> String {
    json!({"model": "gpt-5.5", "input": format!("case {name}"), "stream": name == "sse"})
        .to_string()
}

/// What the client got for one case.
#[derive(Debug, Clone, PartialEq)]
struct Got {
    status: u16,
    content_type: Option<String>,
    body: Vec<u8>,
}

/// A recorded run: what the client got, and the database.
struct Run {
    got: Vec<Got>,
    db: PathBuf,
}

/// Starts a proxy in front of `upstream` (trusting `ca`), asks for every case over HTTP/1.1,
/// waits for every outcome to be stored and stops it.
async fn run_cases(name: &str, upstream: &str, ca: Option<ExtraRoots>) -> Run {
    let db = scratch(name).join("proxy.sqlite");
    let mut options = ProxyOptions::new("127.0.0.1:0", upstream, Some(db.clone()));
    options.upstream_ca = ca;
    let (handle, mut rx) = start_proxy(options).await.expect("proxy");
    let got = ask_every_case(&handle).await;
    let mut recorded = 0;
    while recorded < got.len() {
        match tokio::time::timeout(Duration::from_secs(10), rx.recv()).await {
            Ok(Some(ProxyEvent::Recorded { .. })) => recorded += 1,
            Ok(Some(_)) => {}
            other => panic!("outcomes not all recorded ({recorded}): {other:?}"),
        }
    }
    handle.stop();
    handle.stopped().await;
    Run { got, db }
}

async fn ask_every_case(handle: &ServerHandle) -> Vec<Got> {
    // Plain HTTP/1.1 on the client's side of the proxy.
    let client = reqwest::Client::builder()
        .http1_only()
        .build()
        .expect("client");
    let mut got = Vec::new();
    for (name, _) in cases() {
        let response = client
            .post(format!("{}/v1/responses", handle.base_url()))
            .header("content-type", "application/json")
            .header("session_id", "thread-h2")
            .body(request_body(name))
            .send()
            .await
            .expect("answer");
        assert_eq!(response.version(), reqwest::Version::HTTP_11);
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let body = response.bytes().await.expect("whole body").to_vec();
        got.push(Got {
            status,
            content_type,
            body,
        });
    }
    got
}

/// A stored outcome without its timings (which differ from run to run).
fn untimed(mut outcome: OutcomeRecord) -> OutcomeRecord {
    outcome.first_event_us = None;
    outcome.first_text_us = None;
    outcome.total_us = None;
    outcome
}

/// What one stored request says: its status, outcome (untimed) and raw events.
#[derive(Debug, Clone, PartialEq)]
struct Stored {
    status: Option<u16>,
    outcome: OutcomeRecord,
    events: Vec<(Option<String>, String)>,
}

/// Every request of the one session in `db`; the session is not flagged.
fn stored(db: &Path) -> Vec<Stored> {
    let store = Store::open(db).expect("db");
    let sessions = store.list_sessions(Page::ALL).expect("sessions");
    assert_eq!(sessions.len(), 1, "one session: {sessions:?}");
    assert_eq!(
        (sessions[0].interrupted, sessions[0].unfinished()),
        (0, None),
        "a clean run is not flagged"
    );
    store
        .requests(sessions[0].id, Page::ALL)
        .expect("rows")
        .into_iter()
        .map(|row| Stored {
            status: row.status,
            outcome: untimed(store.outcome(row.id).expect("read").expect("outcome")),
            events: store
                .events(row.id, Page::ALL)
                .expect("events")
                .into_iter()
                .map(|e| (e.event, e.data))
                .collect(),
        })
        .collect()
}

/// The outcome the same bytes give read without any proxy: the SSE stream through core's
/// reader, the JSON object through its JSON mapping, the 429 through the error classifier.
fn expected_outcome(name: &str, got: &Got) -> OutcomeRecord {
    match name {
        "sse" => OutcomeRecord::from_turn(&read_all(&got.body, Duration::ZERO).1),
        "json" => {
            let mut reader = StreamReader::new();
            reader.push_json(&got.body, Duration::ZERO).expect("json");
            reader.finish(Duration::ZERO);
            OutcomeRecord::from_turn(reader.outcome())
        }
        _ => {
            let text = String::from_utf8_lossy(&got.body);
            let headers = [("retry-after".to_string(), "7".to_string())];
            let error = classify_http_error(got.status, &headers, &text, "");
            OutcomeRecord {
                state: RecordedState::Failed,
                error_class: Some(error.class()),
                ..OutcomeRecord::default()
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_h2_upstream_is_relayed_byte_for_byte_and_recorded_as_over_http1() {
    let cases = cases();
    let replies: Vec<Reply> = cases.iter().map(|(_, r)| r.clone()).collect();
    let h2 = H2Upstream::start(replies.clone());
    let h1 = Upstream::in_order(replies.clone());

    let over_h2 = run_cases("over-h2", &h2.base_url(), Some(test_ca())).await;
    let over_h1 = run_cases("over-h1", &h1.base_url(), None).await;

    // Every request reached the upstream over HTTP/2, agreed by ALPN, unchanged.
    let expected_seen: Vec<Seen> = cases
        .iter()
        .map(|(name, _)| Seen {
            alpn: Some("h2".to_string()),
            version: "HTTP/2.0".to_string(),
            method: "POST".to_string(),
            path: "/v1/responses".to_string(),
            body: request_body(name).into_bytes(),
        })
        .collect();
    assert_eq!(h2.seen(), expected_seen);
    // The SSE stream left the upstream as four DATA frames, the others as one each.
    assert_eq!(h2.frames(), vec![4, 1, 1]);

    // The HTTP/1.1 client got exactly the upstream's bytes, as through an HTTP/1.1 upstream.
    let expected_got: Vec<Got> = cases
        .iter()
        .map(|(_, reply)| Got {
            status: reply.status,
            content_type: reply
                .headers
                .iter()
                .find(|(n, _)| n == "content-type")
                .map(|(_, v)| v.clone()),
            body: reply_bytes(reply),
        })
        .collect();
    assert_eq!(over_h2.got, expected_got);
    assert_eq!(over_h1.got, expected_got);

    // Stored: what the same bytes give without a proxy, and the same as over HTTP/1.1.
    let stored_h2 = stored(&over_h2.db);
    let stored_h1 = stored(&over_h1.db);
    assert_eq!(stored_h2, stored_h1);
    let outcomes: Vec<OutcomeRecord> = stored_h2.iter().map(|s| s.outcome.clone()).collect();
    let expected: Vec<OutcomeRecord> = cases
        .iter()
        .zip(&over_h2.got)
        .map(|((name, _), got)| untimed(expected_outcome(name, got)))
        .collect();
    assert_eq!(
        outcomes
            .iter()
            .map(|o| (
                o.state,
                o.response_id.clone(),
                o.error_class.clone(),
                o.usage.clone(),
                o.text.clone()
            ))
            .collect::<Vec<_>>(),
        expected
            .iter()
            .map(|o| (
                o.state,
                o.response_id.clone(),
                o.error_class.clone(),
                o.usage.clone(),
                o.text.clone()
            ))
            .collect::<Vec<_>>()
    );
    assert_eq!(
        stored_h2.iter().map(|s| s.status).collect::<Vec<_>>(),
        vec![Some(200), Some(200), Some(429)]
    );
    // The stream completed with its usage; the JSON answer is its mapping; the 429 is a rate
    // limit (`retry_limit`, retried after the server's delay).
    assert_eq!(
        outcomes
            .iter()
            .map(|o| (o.state, o.response_id.as_deref(), o.usage.is_some()))
            .collect::<Vec<_>>(),
        vec![
            (RecordedState::Completed, Some("resp_7f3a91c2d04e"), true),
            (RecordedState::Completed, Some("resp_h2_json"), true),
            (RecordedState::Failed, None, false),
        ]
    );
    assert_eq!(
        outcomes[2].error_class,
        Some(promptwire::core::stream::ErrorClass::RetryLimit)
    );

    // The HAR says which HTTP the upstream answered over, and keeps it through an import.
    let h2_versions = vec![("HTTP/2.0".to_string(), "HTTP/2.0".to_string()); 3];
    let h1_versions = vec![("HTTP/1.1".to_string(), "HTTP/1.1".to_string()); 3];
    assert_eq!(har_versions(&over_h2.db), h2_versions);
    assert_eq!(har_versions(&over_h1.db), h1_versions);
    let store = Store::open(&over_h2.db).expect("db");
    let session = store.list_sessions(Page::ALL).expect("sessions")[0].id;
    let har = store.export_har(session, true).expect("har");
    let imported_db = over_h2.db.with_file_name("imported.sqlite");
    let mut imported = Store::open(&imported_db).expect("db");
    imported
        .import_har(
            &serde_json::to_string(&har).expect("har text"),
            "h2",
            &over_h2.db.with_file_name("h2.har"),
        )
        .expect("import");
    drop(imported);
    assert_eq!(har_versions(&imported_db), h2_versions);
}

/// (request, response) `httpVersion` of every HAR entry of the first session in `db`.
fn har_versions(db: &Path) -> Vec<(String, String)> {
    let store = Store::open(db).expect("db");
    let session = store.list_sessions(Page::ALL).expect("sessions")[0].id;
    let har = store.export_har(session, true).expect("har");
    har["log"]["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| {
            let version = |side: &str| e[side]["httpVersion"].as_str().unwrap_or("?").to_string();
            (version("request"), version("response"))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_ca_the_upstream_is_not_trusted() {
    let h2 = H2Upstream::start(vec![Reply::json(200, "{}")]);
    let options = ProxyOptions::new("127.0.0.1:0", &h2.base_url(), None);
    let (handle, _rx) = start_proxy(options).await.expect("proxy");
    let response = reqwest::Client::new()
        .post(format!("{}/v1/responses", handle.base_url()))
        .header("content-type", "application/json")
        .body(request_body("json"))
        .send()
        .await
        .expect("answer");
    let status = response.status().as_u16();
    let body: Value =
        serde_json::from_slice(&response.bytes().await.expect("body")).expect("json error");
    let message = body["error"]["message"].as_str().unwrap_or("").to_string();
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (502, Some("upstream_unreachable")),
        "{body}"
    );
    assert!(message.contains("UnknownIssuer"), "{message}");
    assert_eq!(h2.seen(), Vec::new(), "no request got through");
    handle.stop();
    handle.stopped().await;
}

#[test]
fn record_with_upstream_ca_relays_an_h2_upstream() {
    let (name, reply) = cases().swap_remove(0);
    let h2 = H2Upstream::start(vec![reply.clone()]);
    let db = scratch("record-ca").join("rec.sqlite");
    let ca = tls_file("ca.pem");
    let mut child = Server::spawn(&[
        "record",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        &h2.base_url(),
        "--upstream-ca",
        ca.to_str().expect("path"),
        "--db",
        db.to_str().expect("path"),
        "--json",
    ]);
    let mut lines = BufReader::new(child.0.stdout.take().expect("stdout")).lines();
    let first: Value =
        serde_json::from_str(&lines.next().expect("a line").expect("read")).expect("json");
    let addr = first["listening"].as_str().expect("address").to_string();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let (status, body) = runtime.block_on(async {
        let response = reqwest::Client::new()
            .post(format!("http://{addr}/v1/responses"))
            .header("content-type", "application/json")
            .body(request_body(name))
            .send()
            .await
            .expect("answer");
        let status = response.status().as_u16();
        (status, response.bytes().await.expect("body").to_vec())
    });
    assert_eq!((status, body), (200, reply_bytes(&reply)));
    let _request = lines.next().expect("request line").expect("read");
    let outcome: Value =
        serde_json::from_str(&lines.next().expect("outcome line").expect("read")).expect("json");
    let events = outcome["outcome"]["events"].clone();
    let id = outcome["outcome"]["id"].clone();
    assert_eq!(
        outcome,
        json!({"outcome": {"exchange": 1, "id": id, "status": 200, "state": "completed", "error": null, "events": events, "recording": "complete"}})
    );
    assert_eq!(
        h2.seen()
            .iter()
            .map(|s| s.version.as_str())
            .collect::<Vec<_>>(),
        vec!["HTTP/2.0"]
    );
    child.terminate();
    assert_eq!(child.0.wait().expect("wait").code(), Some(0));
}

#[test]
fn a_bad_upstream_ca_file_is_a_one_line_error_naming_it() {
    let dir = scratch("bad-ca");
    let not_pem = dir.join("not-a-ca.pem");
    std::fs::write(&not_pem, "this is not a certificate\n").expect("write");
    let cut = dir.join("cut.pem");
    let pem = std::fs::read(tls_file("ca.pem")).expect("ca.pem");
    std::fs::write(&cut, &pem[..pem.len() / 2]).expect("write");
    let missing = dir.join("missing.pem");
    let too_large = dir.join("huge.pem");
    std::fs::write(&too_large, vec![b'A'; 1024 * 1024 + 1]).expect("write");
    let db = dir.join("never.sqlite");
    let run = |ca: &Path| {
        support::cli::run(
            &[
                "record",
                "--listen",
                "127.0.0.1:0",
                "--upstream",
                "https://127.0.0.1:9/v1",
                "--upstream-ca",
                ca.to_str().expect("path"),
                "--db",
                db.to_str().expect("path"),
            ],
            None,
        )
    };
    let outcomes: Vec<(Option<i32>, String, String)> = [&not_pem, &cut, &missing, &too_large]
        .iter()
        .map(|ca| {
            let output = run(ca);
            (
                output.status.code(),
                String::from_utf8_lossy(&output.stdout).into_owned(),
                String::from_utf8_lossy(&output.stderr).into_owned(),
            )
        })
        .collect();
    let expected = vec![
        (
            Some(1),
            String::new(),
            format!(
                "promptwire: {}: no PEM `CERTIFICATE` in it\n",
                not_pem.display()
            ),
        ),
        (
            Some(1),
            String::new(),
            format!(
                "promptwire: {}: not a PEM certificate file (no `-----END CERTIFICATE-----` line)\n",
                cut.display()
            ),
        ),
        (
            Some(1),
            String::new(),
            format!(
                "promptwire: cannot read {}: No such file or directory (os error 2)\n",
                missing.display()
            ),
        ),
        (
            Some(1),
            String::new(),
            format!(
                "promptwire: {} is larger than 1.0 MiB, too large for a PEM certificate file\n",
                too_large.display()
            ),
        ),
    ];
    assert_eq!(outcomes, expected);
    assert!(!db.exists(), "nothing was created before the CA was read");
}

/// The `data:` JSON of each SSE event of a turn: what a WebSocket upstream sends as frames.
fn ws_frames(id: &str, text: &str) -> Vec<String> {
    turn_events(id, text)
        .iter()
        .map(|event| {
            let text = std::str::from_utf8(event).expect("utf8");
            text.lines()
                .find_map(|l| l.strip_prefix("data: "))
                .expect("data line")
                .to_string()
        })
        .collect()
}

/// A `wss://` upstream on 127.0.0.1 (the test CA's leaf): answers every text frame with
/// `ws_frames("resp_wss", …)`; logs the frames it got. Its `https://` base URL.
async fn wss_upstream(log: Arc<Mutex<Vec<String>>>) -> String {
    let acceptor = tls_acceptor(&[b"http/1.1"]);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (acceptor, log) = (acceptor.clone(), Arc::clone(&log));
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let Ok(mut ws) = tokio_tungstenite::accept_async(tls).await else {
                    return;
                };
                while let Some(Ok(message)) = ws.next().await {
                    let Message::Text(text) = message else {
                        continue;
                    };
                    log.lock().expect("log").push(text.to_string());
                    for frame in ws_frames("resp_wss", "over wss") {
                        if ws.send(Message::text(frame)).await.is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    format!("https://127.0.0.1:{}/v1", addr.port())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_websocket_relay_trusts_the_ca_too() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let upstream = wss_upstream(Arc::clone(&log)).await;
    let create = json!({"type": "response.create", "model": "gpt-5.5", "input": "over wss",
        "stream": true, "prompt_cache_key": "wss-thread"})
    .to_string();

    // Without the CA the upstream's certificate is refused, and so is the client's upgrade.
    let (untrusting, _rx) = start_proxy(ProxyOptions::new("127.0.0.1:0", &upstream, None))
        .await
        .expect("proxy");
    let refused =
        tokio_tungstenite::connect_async(format!("ws://{}/v1/responses", untrusting.local_addr()))
            .await;
    let status = match refused {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => response.status().as_u16(),
        other => panic!("the upgrade went through: {:?}", other.map(|(_, r)| r)),
    };
    assert_eq!(status, 502);
    untrusting.stop();
    untrusting.stopped().await;

    let db = scratch("wss").join("proxy.sqlite");
    let mut options = ProxyOptions::new("127.0.0.1:0", &upstream, Some(db.clone()));
    options.upstream_ca = Some(test_ca());
    let (handle, _rx) = start_proxy(options).await.expect("proxy");
    let (mut ws, response) =
        tokio_tungstenite::connect_async(format!("ws://{}/v1/responses", handle.local_addr()))
            .await
            .expect("upgrade");
    assert_eq!(response.status().as_u16(), 101);
    ws.send(Message::text(create.clone())).await.expect("send");
    let expected = ws_frames("resp_wss", "over wss");
    let got = support::ws_standin::read_texts(&mut ws, expected.len()).await;
    assert_eq!(got, expected);
    ws.close(None).await.expect("close");
    drop(ws);
    tokio::time::sleep(Duration::from_millis(100)).await;
    handle.stop();
    handle.stopped().await;
    assert_eq!(log.lock().expect("log").clone(), vec![create]);

    let store = Store::open(&db).expect("db");
    let session = store.list_sessions(Page::ALL).expect("sessions")[0].id;
    let rows = store.requests(session, Page::ALL).expect("rows");
    assert_eq!(rows.len(), 1);
    let outcome = store.outcome(rows[0].id).expect("read").expect("outcome");
    let events: Vec<String> = store
        .events(rows[0].id, Page::ALL)
        .expect("events")
        .into_iter()
        .map(|e| e.data)
        .collect();
    assert_eq!(
        (
            outcome.state,
            outcome.response_id.as_deref(),
            outcome.text.as_str(),
            events
        ),
        (
            RecordedState::Completed,
            Some("resp_wss"),
            "over wss",
            expected
        )
    );
}

/// A live send (`send --ca`) to the HTTP/2 upstream: the Prompt of the stream tests, compiled for
/// a compatible provider at `base_url`.
async fn live_send(base_url: &str, ca: Option<ExtraRoots>) -> promptwire::transport::SendResult {
    use promptwire::core::rules::CompileRules;
    use promptwire::transport::{CancelToken, HttpSender, SendOptions};
    let (request, headers) = crate::support::compile::compatible_request(
        base_url,
        "What does git rebase --onto do?",
        &CompileRules::codex_0_169(),
    );
    let options = SendOptions {
        max_retries: 0,
        ca,
        ..SendOptions::default()
    };
    let sender = HttpSender::new(&request.url, options).expect("sender");
    sender
        .send(&request, &headers, &CancelToken::new(), |_| {})
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_send_with_the_ca_streams_over_http2() {
    let (_, reply) = cases().swap_remove(0);
    let h2 = H2Upstream::start(vec![reply.clone()]);
    let untrusted = live_send(&h2.base_url(), None).await;
    let refused = untrusted
        .error
        .as_ref()
        .map(ToString::to_string)
        .unwrap_or_default();
    assert!(refused.contains("UnknownIssuer"), "{refused}");
    assert_eq!(h2.seen(), Vec::new());

    let result = live_send(&h2.base_url(), Some(test_ca())).await;
    assert_eq!(result.error, None);
    let expected = read_all(&reply_bytes(&reply), Duration::ZERO).1;
    let outcome = result.outcome().expect("outcome");
    assert_eq!(
        (&outcome.state, &outcome.text, outcome.usage.as_ref()),
        (&expected.state, &expected.text, expected.usage.as_ref())
    );
    assert_eq!(
        h2.seen()
            .iter()
            .map(|s| (s.alpn.as_deref(), s.version.as_str()))
            .collect::<Vec<_>>(),
        vec![(Some("h2"), "HTTP/2.0")]
    );
}

#[test]
fn send_with_the_ca_records_the_http2_version() {
    let (_, reply) = cases().swap_remove(0);
    let h2 = H2Upstream::start(vec![reply.clone()]);
    let db = scratch("send-ca-h2").join("send.sqlite");
    let prompt = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/prompts/hello.json");
    let output = support::cli::run(
        &[
            "send",
            prompt.to_str().expect("path"),
            "--provider",
            "compatible",
            "--base-url",
            &h2.base_url(),
            "--ca",
            tls_file("ca.pem").to_str().expect("path"),
            "--db",
            db.to_str().expect("path"),
            "--json",
        ],
        None,
    );
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        h2.seen()
            .iter()
            .map(|s| (s.alpn.as_deref(), s.version.as_str()))
            .collect::<Vec<_>>(),
        vec![(Some("h2"), "HTTP/2.0")]
    );
    // The stored row names the version it went over, as the proxy's rows do.
    let store = Store::open(&db).expect("db");
    let session = store.list_sessions(Page::ALL).expect("sessions")[0].id;
    let rows = store.requests(session, Page::ALL).expect("rows");
    let extra = store.request(rows[0].id).expect("row").extra;
    assert_eq!(
        (
            rows.len(),
            extra.as_ref().and_then(|e| e.get("http_version")).cloned()
        ),
        (1, Some(json!("HTTP/2.0")))
    );
    let expected = read_all(&reply_bytes(&reply), Duration::ZERO).1;
    let outcome = store.outcome(rows[0].id).expect("read").expect("outcome");
    assert_eq!(
        (outcome.state, outcome.text.clone()),
        (RecordedState::Completed, expected.text.clone())
    );
    drop(store);
    assert_eq!(
        har_versions(&db),
        vec![("HTTP/2.0".to_string(), "HTTP/2.0".to_string())]
    );
}
