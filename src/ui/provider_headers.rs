//! The sidebar's "Extra headers" field: static headers the prompt's provider sends with every
//! request (`CompileTarget::headers`, saved in the Prompt file), one `Name: value` per line.
//! Secret headers (Authorization, api-key, cookies…) are refused — keys come from the API key
//! variable at send time and are never stored.

use egui::Ui;

use crate::app::{AppState, CommandSender, PromptEdit};
use crate::core::redact::is_secret_header;

/// Longest header text accepted, in bytes.
pub const MAX_HEADERS_TEXT: usize = 16 * 1024;

/// The field's text buffer (kept while what it says differs from the prompt, e.g. mid-typing).
#[derive(Debug, Default)]
pub struct HeadersBuffer {
    text: String,
    error: Option<String>,
}

/// `Name: value` lines → headers; names with a secret are refused.
pub fn parse_headers(text: &str) -> Result<Vec<(String, String)>, String> {
    if text.len() > MAX_HEADERS_TEXT {
        return Err(format!("more than {MAX_HEADERS_TEXT} bytes of headers"));
    }
    let mut headers = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let Some((name, value)) = line.split_once(':') else {
            return Err(format!("line {}: expected `Name: value`", i + 1));
        };
        let name = name.trim();
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(format!("line {}: `{name}` is not a header name", i + 1));
        }
        if is_secret_header(name) {
            return Err(format!(
                "line {}: {name} carries a secret; use the API key variable (keys are never stored)",
                i + 1
            ));
        }
        headers.push((name.to_string(), value.trim().to_string()));
    }
    Ok(headers)
}

fn render(headers: &[(String, String)]) -> String {
    headers
        .iter()
        .map(|(n, v)| format!("{n}: {v}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Draws the field; a valid change edits the prompt's target.
pub fn headers_ui(ui: &mut Ui, state: &AppState, buffer: &mut HeadersBuffer, tx: &CommandSender) {
    let current = &state.prompt.compile.headers;
    if buffer.error.is_none() && parse_headers(&buffer.text).ok().as_ref() != Some(current) {
        buffer.text = render(current);
    }
    let changed = super::widgets::labelled_multiline(
        ui,
        "Extra headers",
        &mut buffer.text,
        2,
        true,
        "Static headers sent with every request, one `Name: value` per line (saved in the Prompt file; no secrets)",
    );
    if changed {
        match parse_headers(&buffer.text) {
            Ok(headers) => {
                buffer.error = None;
                if &headers != current {
                    let mut target = state.prompt.compile.clone();
                    target.headers = headers;
                    tx.edit(PromptEdit::Target(target));
                }
            }
            Err(e) => buffer.error = Some(e),
        }
    }
    if let Some(error) = &buffer.error {
        super::widgets::error_line(ui, error);
    }
}
