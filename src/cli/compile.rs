//! `promptwire compile`: prints the exact body, WebSocket frame or headers a Prompt compiles to.

use std::io::Write as _;

use clap::Args;

use super::choices::{AuthArg, DialectArg, ProviderArg};
use super::input::{display_name, read_text, warn_duplicate_keys};
use crate::core::compile::CompiledRequest;
use crate::core::models::ModelCatalog;
use crate::core::prompt::{AuthMode, Dialect, Prompt};
use crate::core::provider::ProviderKind;
use crate::core::redact::{IDENTIFYING_NOTE, redacted};
use crate::core::rules::CompileRules;
use crate::core::target::{TargetOverrides, compile_for, resolve_target};

/// Arguments of `compile`.
#[derive(Debug, Args)]
pub struct CompileArgs {
    /// Prompt file, or `-` for standard input.
    prompt: String,
    /// Request shape; default: what the Prompt file records.
    #[arg(long, value_enum)]
    dialect: Option<DialectArg>,
    /// Provider behaviour; default: what the Prompt file records.
    #[arg(long, value_enum)]
    provider: Option<ProviderArg>,
    /// Rules preset; default: what the Prompt file records.
    #[arg(long, value_parser = CompileRules::PRESETS)]
    rules: Option<String>,
    /// Base URL of the provider (changes the URL and Azure detection).
    #[arg(long)]
    base_url: Option<String>,
    /// Authentication mode (ChatGPT-style auth makes OpenAI requests zstd-compressed).
    #[arg(long, value_enum)]
    auth: Option<AuthArg>,
    /// Print the WebSocket `response.create` frame instead of the HTTP body.
    #[arg(long, conflicts_with = "headers")]
    ws: bool,
    /// Print the request headers (as a JSON object, secrets redacted) instead of the body.
    #[arg(long)]
    headers: bool,
    /// Pretty-print, ending with a newline (the default output is the exact compact bytes, with
    /// no newline added).
    #[arg(long)]
    pretty: bool,
    /// Print why fields were changed or left out, on standard error.
    #[arg(long)]
    explain: bool,
    /// Model catalog file to use instead of the bundled one.
    #[arg(long)]
    catalog: Option<String>,
    /// Largest accepted input, in bytes.
    #[arg(long, default_value_t = super::DEFAULT_MAX_BYTES)]
    max_bytes: u64,
}

/// How to compile a Prompt file: each choice overrides what the file records.
#[derive(Debug, Default)]
pub struct TargetChoice<'a> {
    /// Standard, Lite or follow the model.
    pub dialect: Option<Dialect>,
    /// OpenAI, Azure or compatible.
    pub provider: Option<ProviderKind>,
    /// Rules preset name.
    pub rules: Option<&'a str>,
    /// Base URL of the provider.
    pub base_url: Option<&'a str>,
    /// API key or ChatGPT sign-in.
    pub auth: Option<AuthMode>,
    /// Model catalog file.
    pub catalog: Option<&'a str>,
}

/// Reads the Prompt file `path` (or `-`) and compiles it as `choice` says — the one path that
/// `compile` and `send` share.
pub fn load_and_compile(
    path: &str,
    max_bytes: u64,
    choice: &TargetChoice<'_>,
) -> anyhow::Result<(Prompt, CompiledRequest)> {
    let text = read_text(path, max_bytes)?;
    let prompt =
        Prompt::from_json_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", display_name(path)))?;
    warn_duplicate_keys(path, &text);
    compile_prompt(prompt, display_name(path), max_bytes, choice)
}

/// Compiles `prompt` (called `name` in messages) as `choice` says; `max_bytes` bounds the
/// catalog file it may read.
pub fn compile_prompt(
    mut prompt: Prompt,
    name: &str,
    max_bytes: u64,
    choice: &TargetChoice<'_>,
) -> anyhow::Result<(Prompt, CompiledRequest)> {
    let catalog = load_catalog(choice.catalog, max_bytes)?;
    let overrides = TargetOverrides {
        dialect: choice.dialect,
        provider: choice.provider,
        rules: choice.rules.map(str::to_string),
        base_url: choice.base_url.map(str::to_string),
        auth: choice.auth,
    };
    let target =
        resolve_target(&prompt.compile, &overrides).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
    prompt.compile.auth = target.auth;
    let model = catalog.lookup(&prompt.model);
    let compiled =
        compile_for(&prompt, &model, &target).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
    Ok((prompt, compiled))
}

/// Runs `compile`.
pub fn run(args: &CompileArgs) -> anyhow::Result<()> {
    let (_, compiled) = load_and_compile(
        &args.prompt,
        args.max_bytes,
        &TargetChoice {
            dialect: args.dialect.map(Dialect::from),
            provider: args.provider.map(ProviderKind::from),
            rules: args.rules.as_deref(),
            base_url: args.base_url.as_deref(),
            auth: args.auth.map(AuthMode::from),
            catalog: args.catalog.as_deref(),
        },
    )?;
    if args.explain {
        for note in &compiled.notes {
            eprintln!("note: {}: {}", note.path, note.message);
        }
    }
    if args.headers {
        for name in compiled.identifying_headers() {
            eprintln!("note: header {name}: {IDENTIFYING_NOTE}");
        }
    }
    let mut stdout = std::io::stdout().lock();
    if !args.pretty && !args.headers && !args.ws {
        // Exactly the body bytes as sent (before any compression): nothing added. Only a
        // credential the Prompt itself carries (a secret body field) is shown redacted.
        stdout.write_all(&shown(&compiled.body_json))?;
        return Ok(());
    }
    let out = if args.headers {
        to_json(&compiled.headers_json(), args.pretty)
    } else if args.ws {
        to_json(&compiled.ws_frame(), args.pretty)
    } else {
        to_json(&compiled.body, true)
    };
    stdout.write_all(&shown(&out))?;
    // Only pretty output ends with a newline; compact JSON is exactly the value's bytes.
    if args.pretty {
        stdout.write_all(b"\n")?;
    }
    Ok(())
}

/// The bundled catalog, or the one in `path` (ours, `codex debug models` output, or Codex's
/// `models_cache.json`), read with at most `max_bytes`.
pub fn load_catalog(path: Option<&str>, max_bytes: u64) -> anyhow::Result<ModelCatalog> {
    match path {
        None => Ok(ModelCatalog::bundled()),
        Some(path) => {
            let text = read_text(path, max_bytes)?;
            ModelCatalog::from_json(&text)
                .map_err(|e| anyhow::anyhow!("{}: {e}", display_name(path)))
        }
    }
}

/// JSON bytes as printed: credentials redacted by the one policy (a no-op on real bodies).
fn shown(bytes: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    match std::str::from_utf8(bytes).map(redacted) {
        Ok(std::borrow::Cow::Owned(text)) => std::borrow::Cow::Owned(text.into_bytes()),
        _ => std::borrow::Cow::Borrowed(bytes),
    }
}

fn to_json<T: serde::Serialize>(value: &T, pretty: bool) -> Vec<u8> {
    let result = if pretty {
        serde_json::to_vec_pretty(value)
    } else {
        serde_json::to_vec(value)
    };
    result.unwrap_or_default()
}
