//! The OpenTelemetry options `record` and `sessions export` share (`--otlp-header NAME=$VAR`,
//! `--otlp-content`, `--otlp-protocol protobuf|json`) and `sessions export ID… | --all --otlp
//! URL`: each session as one trace, with a line per session and a closing line with what the
//! collector accepted (`--json`: `{"otlp":URL,"sessions":[…],"exported_spans",…}`). Exit status 1
//! when any span could not be exported.

use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use serde_json::json;

use crate::core::otel::SpanOptions;
use crate::store::{Page, Store};
use crate::transport::otlp::headers::{env_headers, resolve_header};
use crate::transport::otlp::{OtlpConfig, OtlpExporter, Protocol, SessionForExport};

/// `--otlp-protocol`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum ProtocolArg {
    // OTLP/HTTP protobuf.
    #[default]
    Protobuf,
    // OTLP/HTTP JSON.
    Json,
}

/// The process environment: where `--otlp-header NAME=$VAR` values and
/// `OTEL_EXPORTER_OTLP_HEADERS` come from.
#[allow(
    clippy::disallowed_methods,
    reason = "the CLI's edge: header values are read from the environment, never from arguments"
)]
fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Options of an OpenTelemetry export.
#[derive(Debug, Clone, Args)]
pub struct OtlpArgs {
    /// A header for an authenticated collector, as NAME=$ENV_VAR (e.g.
    /// 'Authorization=Bearer $PHOENIX_API_KEY'): the value is read from the environment, never
    /// stored. Repeatable. OTEL_EXPORTER_OTLP_HEADERS is read too.
    #[arg(long = "otlp-header", value_name = "NAME=$VAR")]
    pub headers: Vec<String>,
    /// Put message content (input and output, secrets redacted) into the spans.
    #[arg(long = "otlp-content")]
    pub content: bool,
    /// OTLP/HTTP body encoding.
    #[arg(long = "otlp-protocol", value_enum, default_value_t = ProtocolArg::Protobuf)]
    pub protocol: ProtocolArg,
}

impl OtlpArgs {
    /// The exporter configuration for collector `url` (headers resolved from the environment).
    pub fn config(&self, url: &str) -> anyhow::Result<OtlpConfig> {
        let mut config = OtlpConfig::new(url);
        config.protocol = match self.protocol {
            ProtocolArg::Protobuf => Protocol::Protobuf,
            ProtocolArg::Json => Protocol::Json,
        };
        config.headers = env_headers(&process_env);
        for spec in &self.headers {
            let (name, value) = resolve_header(spec, &process_env)
                .map_err(|e| anyhow::anyhow!("--otlp-header {e}"))?;
            config
                .headers
                .retain(|(n, _)| !n.eq_ignore_ascii_case(&name));
            config.headers.push((name, value));
        }
        Ok(config)
    }

    /// What goes into the spans.
    pub fn options(&self) -> SpanOptions {
        SpanOptions {
            content: self.content,
        }
    }
}

/// How long a stored export waits for the collector at the end.
const FLUSH_TIMEOUT: Duration = Duration::from_secs(120);

/// Exports sessions `ids` (every session when `all`) of `store` to collector `url`.
pub fn export_sessions(
    store: &Store,
    ids: &[i64],
    all: bool,
    url: &str,
    otlp: &OtlpArgs,
    json_out: bool,
) -> anyhow::Result<()> {
    let ids: Vec<i64> = if all {
        store
            .list_sessions(Page::ALL)?
            .into_iter()
            .map(|s| s.id)
            .rev()
            .collect()
    } else {
        ids.to_vec()
    };
    if ids.is_empty() {
        anyhow::bail!("export --otlp needs session ids or --all");
    }
    let config = otlp.config(url)?;
    let traces = config.url.clone();
    let options = otlp.options();
    let started = Instant::now();
    let exporter = OtlpExporter::start(config)?;
    let mut sessions = Vec::new();
    for id in &ids {
        let read = SessionForExport::read(store, *id, options)?;
        let spans = read.all_spans(options)?;
        let n = spans.len();
        if !json_out {
            let note = read
                .ledger_note
                .as_deref()
                .map(|n| format!(" (no ledger: {n})"))
                .unwrap_or_default();
            eprintln!(
                "session {id}: {}, {}{note}",
                crate::core::format::count(read.requests.len() as u64, "request"),
                crate::core::format::count(n as u64, "span")
            );
        }
        sessions.push(json!({"session": id, "requests": read.requests.len(), "spans": n, "trace_id": crate::core::otel::ids::hex(&spans[0].trace_id)}));
        exporter.submit_wait(spans);
    }
    let stats = exporter.shutdown(FLUSH_TIMEOUT);
    let millis = started.elapsed().as_millis();
    if json_out {
        let mut line = json!({"otlp": traces, "sessions": sessions, "millis": millis});
        if let (Some(map), Ok(serde_json::Value::Object(s))) =
            (line.as_object_mut(), serde_json::to_value(&stats))
        {
            map.extend(s);
        }
        println!("{line}");
    } else {
        println!(
            "{} of {} to {traces} in {millis} ms",
            stats.line(),
            crate::core::format::count(ids.len() as u64, "session")
        );
    }
    if stats.failed_spans > 0 || stats.dropped_spans > 0 || stats.pending_spans > 0 {
        anyhow::bail!(
            "not every span was exported: {}",
            stats
                .last_error
                .as_deref()
                .unwrap_or("the collector did not answer in time")
        );
    }
    Ok(())
}
