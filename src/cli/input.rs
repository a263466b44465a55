//! Reading a JSON input argument (`FILE` or `-` for stdin) with a size limit, and turning JSON
//! syntax errors into messages with line and column.

use std::io::Read as _;
use std::path::Path;

use anyhow::{Context as _, bail};
use serde_json::Value;

use crate::core::error::PromptError;

/// Reads `arg` (a path, or `-` for stdin) as UTF-8 text of at most `max_bytes`.
pub fn read_text(arg: &str, max_bytes: u64) -> anyhow::Result<String> {
    let mut bytes = Vec::new();
    if arg == "-" {
        std::io::stdin()
            .lock()
            .take(max_bytes + 1)
            .read_to_end(&mut bytes)
            .context("reading standard input")?;
        if bytes.len() as u64 > max_bytes {
            bail!(
                "standard input is larger than the limit of {} (raise it with --max-bytes)",
                human_size(max_bytes)
            );
        }
    } else {
        let path = Path::new(arg);
        let size = std::fs::metadata(path)
            .with_context(|| format!("cannot read {arg}"))?
            .len();
        if size > max_bytes {
            bail!(
                "{arg} is {}, larger than the limit of {} (raise it with --max-bytes)",
                human_size(size),
                human_size(max_bytes)
            );
        }
        bytes = std::fs::read(path).with_context(|| format!("cannot read {arg}"))?;
    }
    String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!(
            "{}: not UTF-8 text (invalid byte at offset {})",
            display_name(arg),
            e.utf8_error().valid_up_to()
        )
    })
}

/// Parses JSON text, naming the line and column of a syntax error.
pub fn parse_json(arg: &str, text: &str) -> anyhow::Result<Value> {
    serde_json::from_str(text)
        .map_err(|e| anyhow::anyhow!("{}: {}", display_name(arg), PromptError::from_serde("", &e)))
}

/// `stdin` for `-`, else the path.
pub fn display_name(arg: &str) -> &str {
    if arg == "-" { "stdin" } else { arg }
}

/// Size in MiB/KiB/bytes for messages.
pub fn human_size(bytes: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    if bytes >= MIB {
        format!("{:.1} MiB", bytes as f64 / MIB as f64)
    } else if bytes >= 1024 {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    } else {
        format!("{bytes} bytes")
    }
}
