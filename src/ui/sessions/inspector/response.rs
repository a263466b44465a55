//! The inspector's Response tab: HTTP status and timings, the response headers, the recorded
//! outcome (state, error class and message, response id, server model, what the recording
//! lost), the usage with cached and cache-write tokens, its cost in dollars, and the output
//! text or error body.
//!
//! The cost is the session ledger's row (`core::ledger`, priced with the bundled price
//! table on the analysis worker — the figures the Sessions prefix view sums): what the
//! request's input paid, what it would have with every reusable token read, and what the
//! difference lost; "price unknown" for a model without a checked price. Nothing is priced on
//! the UI thread.

use crate::core::ledger::summary::usd;
use egui::{Label, RichText, Ui};

use super::request::headers_grid;
use crate::app::AppState;
use crate::app::session_view::inspect::Inspected;
use crate::core::format::grouped;
use crate::store::summary::status_label;

fn millis(us: Option<i64>) -> String {
    us.map_or_else(|| "-".to_string(), |us| format!("{} ms", us / 1000))
}

fn count(n: Option<i64>) -> String {
    n.and_then(|n| u64::try_from(n).ok())
        .map_or_else(|| "-".to_string(), grouped)
}

/// The usage lines (`input`, `cached`, `cache write`, `output`, `reasoning`, `total`).
pub fn usage_lines(found: &Inspected) -> Vec<(&'static str, String)> {
    let Some(usage) = &found.usage else {
        return Vec::new();
    };
    vec![
        ("input", count(usage.input_tokens)),
        ("cached", count(usage.cached_input_tokens)),
        ("cache write", count(usage.cache_write_input_tokens)),
        ("output", count(usage.output_tokens)),
        ("reasoning", count(usage.reasoning_output_tokens)),
        ("total", count(usage.total_tokens)),
    ]
}

/// The request's cost, as the session analysis priced it: the line (`input: paid $0.1234 ·
/// ideal $0.0500 · lost $0.0734`, or why there is none: `price unknown (gpt-5.4)`) and a note
/// on what it covers.
pub fn cost_lines(state: &AppState, found: &Inspected) -> (String, Option<String>) {
    let browser = &state.browser;
    let Some(analysis) = browser
        .analysis
        .as_ref()
        .filter(|a| a.session == found.session)
    else {
        let why = if browser.analyzing {
            "analysing the session…"
        } else {
            "unknown (the session is not analysed)"
        };
        return (why.to_string(), None);
    };
    // The selected row is the request shown (else look it up: no scan in the usual case).
    let index = state
        .browser
        .selected
        .filter(|&i| {
            state
                .sessions
                .rows
                .get(i)
                .is_some_and(|r| r.id == found.request)
        })
        .or_else(|| {
            state
                .sessions
                .rows
                .iter()
                .position(|r| r.id == found.request)
        });
    let Some(row) = index.and_then(|index| analysis.row(index)) else {
        return (
            "unknown (not in the session's ledger yet)".to_string(),
            None,
        );
    };
    match &row.cost_usd {
        Some(d) => (
            format!(
                "input: paid {} · ideal {} · lost {}",
                usd(d.paid),
                usd(d.ideal),
                usd(d.lost)
            ),
            Some(format!(
                "{} under the {} cache, bundled prices, {}; output tokens not included",
                row.model,
                row.cache_model.as_str(),
                if row.is_reported() {
                    "from the server's usage"
                } else {
                    "from the estimate (no usage recorded)"
                }
            )),
        ),
        None if row.prediction.undetermined => (
            "not determined: it continues a response the recording does not have".to_string(),
            None,
        ),
        None => (format!("price unknown ({})", row.model), None),
    }
}

/// Draws the tab; `cost` is [`cost_lines`]'s.
pub fn response_ui(ui: &mut Ui, found: &Inspected, cost: (String, Option<String>)) {
    let summary = &found.record.summary;
    egui::ScrollArea::vertical()
        .id_salt("inspector_response")
        .auto_shrink(false)
        .show(ui, |ui| {
            ui.label(format!(
                "Status: {} · headers after {} · done after {}",
                status_label(summary.status),
                millis(summary.wait_us),
                millis(summary.total_us)
            ));
            egui::CollapsingHeader::new(format!(
                "Headers ({})",
                found.record.response_headers.len()
            ))
            .id_salt("inspector_response_headers")
            .default_open(true)
            .show(ui, |ui| {
                headers_grid(
                    ui,
                    "inspector_response_headers_grid",
                    &found.record.response_headers,
                );
            });
            match &found.outcome {
                None => {
                    ui.weak("No outcome recorded.");
                }
                Some(outcome) => {
                    let mut line = format!("Outcome: {}", outcome.state.as_str());
                    if let Some(class) = &outcome.error_class {
                        line.push_str(&format!(" ({})", class.as_str()));
                    }
                    ui.label(line);
                    if let Some(message) = &outcome.error_message {
                        ui.colored_label(ui.visuals().error_fg_color, message);
                    }
                    if let Some(id) = &outcome.response_id {
                        ui.label(RichText::new(format!("response id {id}")).monospace());
                    }
                    if let Some(model) = &outcome.server_model {
                        ui.label(format!("server model {model}"));
                    }
                    if let Some(gap) = outcome.recording_gap() {
                        ui.colored_label(ui.visuals().warn_fg_color, gap);
                    }
                }
            }
            let usage = usage_lines(found);
            if !usage.is_empty() {
                ui.strong("Usage");
                egui::Grid::new("inspector_usage")
                    .num_columns(2)
                    .striped(true)
                    .show(ui, |ui| {
                        for (name, value) in usage {
                            ui.label(name);
                            ui.label(RichText::new(value).monospace());
                            ui.end_row();
                        }
                    });
            }
            ui.strong("Cost");
            let (line, note) = cost;
            ui.label(RichText::new(line).monospace());
            if let Some(note) = note {
                ui.label(RichText::new(note).small().weak());
            }
            let body = found.record.response_text();
            let text = found
                .outcome
                .as_ref()
                .map(|o| o.text.as_str())
                .filter(|t| !t.is_empty())
                .or(body.as_deref());
            if let Some(text) = text {
                ui.strong("Output");
                // Bounded: a long answer is cut here (the Events tab has every event).
                let shown: String = text.chars().take(20_000).collect();
                ui.add(Label::new(RichText::new(shown).monospace()).wrap());
            }
        });
}
