//! `promptwire import-body`: prints the Prompt that compiles back to a captured request body.

use std::io::Write as _;

use clap::Args;

use super::compile::load_catalog;
use super::input::{display_name, parse_json, read_text};
use crate::core::import::{CapturedHeaders, import_request};

/// Arguments of `import-body`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Captured body (JSON), or `-` for standard input.
    body: String,
    /// The headers captured with the body (`{"path","headers":{…}}`, a JSON object, or
    /// `name: value` lines): the Prompt then compiles to the same headers.
    #[arg(long, value_name = "HEADERS")]
    headers: Option<String>,
    /// Model catalog file to use instead of the bundled one.
    #[arg(long)]
    catalog: Option<String>,
    /// Largest accepted input, in bytes.
    #[arg(long, default_value_t = super::DEFAULT_MAX_BYTES)]
    max_bytes: u64,
}

/// Runs `import-body`.
pub fn run(args: &ImportArgs) -> anyhow::Result<()> {
    let text = read_text(&args.body, args.max_bytes)?;
    let body = parse_json(&args.body, &text)?;
    let catalog = load_catalog(args.catalog.as_deref(), args.max_bytes)?;
    if args.body == "-" && args.headers.as_deref() == Some("-") {
        anyhow::bail!("the body and the headers cannot both be read from standard input");
    }
    let headers = match &args.headers {
        Some(path) => {
            let text = read_text(path, args.max_bytes)?;
            Some(
                CapturedHeaders::parse(&text)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", display_name(path)))?,
            )
        }
        None => None,
    };
    let outcome = import_request(&body, headers.as_ref(), &catalog)
        .map_err(|e| anyhow::anyhow!("{}: {e}", display_name(&args.body)))?;
    if !outcome.overridden.is_empty() {
        eprintln!(
            "note: no rules preset reproduces {}; kept verbatim in body_overrides/body_omit",
            outcome.overridden.join(", ")
        );
    }
    let mut stdout = std::io::stdout().lock();
    // Credentials the body carried (secret fields) are printed redacted, like everywhere.
    let prompt = outcome.prompt.to_json_pretty();
    let shown = super::shown::shown(&prompt);
    if let Some(line) = redaction_warning(&prompt, &shown) {
        eprintln!("{line}");
    }
    stdout.write_all(shown.as_bytes())?;
    stdout.write_all(b"\n")?;
    Ok(())
}

/// Most redacted paths named in the warning; past it, the rest are counted.
const MAX_NAMED_PATHS: usize = 5;

/// The one warning line when printing redacted `prompt` as `shown` replaced values: which
/// (up to [`MAX_NAMED_PATHS`], then a count), and that the Prompt does not reproduce them.
fn redaction_warning(prompt: &str, shown: &str) -> Option<String> {
    if prompt == shown {
        return None;
    }
    let paths = match (
        serde_json::from_str::<serde_json::Value>(prompt),
        serde_json::from_str::<serde_json::Value>(shown),
    ) {
        (Ok(original), Ok(redacted)) => crate::core::redact::redacted_paths(&original, &redacted),
        _ => Vec::new(),
    };
    let what = match paths.len() {
        0 => "some values".to_string(),
        n if n <= MAX_NAMED_PATHS => paths.join(", "),
        n => format!(
            "{} and {} more",
            paths[..MAX_NAMED_PATHS].join(", "),
            n - MAX_NAMED_PATHS
        ),
    };
    let count = match paths.len() {
        0 | 1 => String::new(),
        n => format!("{n} values, "),
    };
    Some(format!(
        "promptwire: warning: credentials printed as <redacted> ({count}{what}): this Prompt will not reproduce those values of the captured body; fill them in before compiling it"
    ))
}
