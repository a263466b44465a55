//! `promptwire compile`: prints the exact body, WebSocket frame or headers a Prompt compiles to.

use std::io::Write as _;

use anyhow::Context as _;
use clap::Args;

use super::input::{display_name, read_text};
use crate::core::compile::compile;
use crate::core::models::ModelCatalog;
use crate::core::prompt::{AuthMode, Dialect, Prompt};
use crate::core::provider::{Provider, ProviderKind};
use crate::core::rules::CompileRules;

/// Arguments of `compile`.
#[derive(Debug, Args)]
pub struct CompileArgs {
    /// Prompt file, or `-` for standard input.
    prompt: String,
    /// Request shape; default: what the Prompt file records.
    #[arg(long, value_parser = ["standard", "lite", "auto"])]
    dialect: Option<String>,
    /// Provider behaviour; default: what the Prompt file records.
    #[arg(long, value_parser = ["openai", "azure", "compatible"])]
    provider: Option<String>,
    /// Rules preset; default: what the Prompt file records.
    #[arg(long, value_parser = CompileRules::PRESETS)]
    rules: Option<String>,
    /// Base URL of the provider (changes the URL and Azure detection).
    #[arg(long)]
    base_url: Option<String>,
    /// Authentication mode (ChatGPT-style auth makes OpenAI requests zstd-compressed).
    #[arg(long, value_parser = ["api-key", "chatgpt"])]
    auth: Option<String>,
    /// Print the WebSocket `response.create` frame instead of the HTTP body.
    #[arg(long, conflicts_with = "headers")]
    ws: bool,
    /// Print the request headers (as a JSON object, secrets redacted) instead of the body.
    #[arg(long)]
    headers: bool,
    /// Pretty-print (the default output is the exact compact bytes).
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

/// Runs `compile`.
pub fn run(args: &CompileArgs) -> anyhow::Result<()> {
    let text = read_text(&args.prompt, args.max_bytes)?;
    let prompt = Prompt::from_json_str(&text)
        .map_err(|e| anyhow::anyhow!("{}: {e}", display_name(&args.prompt)))?;
    let catalog = load_catalog(args.catalog.as_deref())?;
    let target = &prompt.compile;
    let dialect = match &args.dialect {
        Some(d) => Dialect::parse(d).unwrap_or_default(),
        None => target.dialect,
    };
    let kind = match &args.provider {
        Some(p) => ProviderKind::parse(p).unwrap_or(ProviderKind::Openai),
        None => target.provider,
    };
    let rules_name = args.rules.as_deref().unwrap_or(&target.rules);
    let rules = CompileRules::preset(rules_name)
        .with_context(|| format!("unknown rules preset `{rules_name}`"))?;
    let mut provider = Provider::preset(kind);
    if let Some(url) = args.base_url.as_ref().or(target.base_url.as_ref()) {
        provider.base_url = url.clone();
    }
    let mut prompt = prompt;
    if let Some(auth) = &args.auth {
        prompt.compile.auth = if auth == "chatgpt" {
            AuthMode::Chatgpt
        } else {
            AuthMode::ApiKey
        };
    }
    let model = catalog.lookup(&prompt.model);
    let compiled = compile(&prompt, &model, &provider, dialect, &rules)
        .map_err(|e| anyhow::anyhow!("{}: {e}", display_name(&args.prompt)))?;
    if args.explain {
        for note in &compiled.notes {
            eprintln!("note: {}: {}", note.path, note.message);
        }
    }
    let out = if args.headers {
        to_json(&compiled.headers_json(), args.pretty)
    } else if args.ws {
        to_json(&compiled.ws_frame(), args.pretty)
    } else if args.pretty {
        to_json(&compiled.body, true)
    } else {
        compiled.body_json.clone()
    };
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(&out)?;
    stdout.write_all(b"\n")?;
    Ok(())
}

/// The bundled catalog, or the one in `path`.
pub fn load_catalog(path: Option<&str>) -> anyhow::Result<ModelCatalog> {
    match path {
        None => Ok(ModelCatalog::bundled()),
        Some(path) => {
            let text =
                std::fs::read_to_string(path).with_context(|| format!("cannot read {path}"))?;
            ModelCatalog::from_json(&text).map_err(|e| anyhow::anyhow!("{path}: {e}"))
        }
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
