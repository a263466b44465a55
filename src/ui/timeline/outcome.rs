//! The outcome beside the timeline: state, assembled text, reasoning summaries, every output item
//! (function call arguments pretty-printed), usage split into uncached input, cached input,
//! cache-write, output and reasoning tokens, timings, and — when it failed — the failure class,
//! message, retry decision and Retry-After, with every attempt.
//!
//! Bounded per frame whatever the stream's size: at most [`MAX_LISTED`] items, summaries and
//! attempts are listed and at most [`MAX_TEXT_BYTES`] of text laid out, with a count of the rest.

use crate::core::format::count;
use egui::{Grid, RichText, Ui};

use super::{clip, secs};
use crate::app::timeline::{FailureInfo, TimelineModel};
use crate::core::items::{ContentItem, ResponseItem};
use crate::core::redact::redacted;
use crate::core::stream::{TokenUsage, TurnOutcome, TurnState};

/// Most items (and summary parts, attempts) listed.
pub const MAX_LISTED: usize = 50;
/// Most bytes of assembled text laid out.
pub const MAX_TEXT_BYTES: usize = 32 * 1024;

/// Draws the outcome (the live one while streaming).
pub fn outcome_ui(ui: &mut Ui, model: &TimelineModel) {
    let outcome = model.current_outcome();
    ui.heading("Outcome");
    ui.label(state_text(model, outcome));
    if let Some(failure) = model.failure() {
        failure_ui(ui, failure);
    }
    if model.attempts().len() > 1 || model.attempts().iter().any(|a| a.failure.is_some()) {
        attempts_ui(ui, model);
    }
    if !outcome.text.is_empty() {
        ui.strong("Text");
        ui.label(RichText::new(clip(&outcome.text, MAX_TEXT_BYTES)));
    }
    if !outcome.reasoning_summaries.is_empty() {
        ui.strong("Reasoning summaries");
        for part in outcome.reasoning_summaries.iter().take(MAX_LISTED) {
            ui.label(format!("• {}", part.text));
        }
        more_ui(ui, outcome.reasoning_summaries.len());
    }
    if !outcome.output_items.is_empty() {
        ui.strong("Output items");
        for (i, item) in outcome.output_items.iter().take(MAX_LISTED).enumerate() {
            ui.push_id(("timeline_output_item", i), |ui| item_ui(ui, item));
        }
        more_ui(ui, outcome.output_items.len());
    }
    if let Some(line) = server_cache_line(outcome) {
        ui.label(line);
    }
    if let Some(usage) = &outcome.usage {
        usage_ui(ui, usage);
    }
    timings_ui(ui, outcome);
}

fn state_text(model: &TimelineModel, outcome: &TurnOutcome) -> String {
    match (&outcome.state, model.is_live()) {
        (TurnState::Completed { response_id, .. }, _) => format!("completed · {response_id}"),
        (TurnState::Failed(_), _) => "failed".to_string(),
        (TurnState::Open, true) => format!("streaming… {}", count(outcome.events, "event")),
        (TurnState::Open, false) if model.attempts().is_empty() => "not sent".to_string(),
        (TurnState::Open, false) => "stopped (partial outcome)".to_string(),
    }
}

/// A failure in words: its class and message, or "cancelled by you" for a send the user
/// stopped (not "cancelled: cancelled").
pub fn failure_text(failure: &FailureInfo) -> String {
    let message = redacted(&failure.message);
    if failure.class == crate::core::stream::ErrorClass::Cancelled && message == "cancelled" {
        return "cancelled by you".to_string();
    }
    format!("{}: {message}", failure.class)
}

fn failure_ui(ui: &mut Ui, failure: &FailureInfo) {
    ui.colored_label(ui.visuals().error_fg_color, failure_text(failure));
    let decision = match (failure.retried_after, failure.retryable) {
        (Some(delay), _) => format!("retried after {}", secs(delay)),
        (None, true) => "retryable; not retried (retries used up or delay too long)".to_string(),
        (None, false) => "not retryable".to_string(),
    };
    let retry_after = failure.retry_after.map_or_else(|| "none".to_string(), secs);
    ui.label(format!("retry: {decision} · Retry-After: {retry_after}"));
}

fn attempts_ui(ui: &mut Ui, model: &TimelineModel) {
    ui.strong("Attempts");
    for attempt in model.attempts().iter().take(MAX_LISTED) {
        let status = attempt
            .status
            .map_or_else(|| "no response".to_string(), |s| format!("HTTP {s}"));
        let mut line = format!(
            "#{} {status} · {}",
            attempt.number,
            count(attempt.events as u64, "event")
        );
        if let Some(f) = &attempt.failure {
            line.push_str(&format!(" · {}", failure_text(f)));
            if let Some(delay) = f.retried_after {
                line.push_str(&format!(" · retried after {}", secs(delay)));
            }
        }
        ui.label(line);
    }
    more_ui(ui, model.attempts().len());
}

/// "… N more" after a list cut at [`MAX_LISTED`].
fn more_ui(ui: &mut Ui, len: usize) {
    if len > MAX_LISTED {
        ui.weak(format!("… {} more", len - MAX_LISTED));
    }
}

fn item_ui(ui: &mut Ui, item: &ResponseItem) {
    let id = item.id().unwrap_or("");
    match item {
        ResponseItem::FunctionCall(call) => {
            ui.label(format!(
                "function_call {id} · {} ({})",
                call.name, call.call_id
            ));
            ui.label(RichText::new(pretty_arguments(&call.arguments)).monospace());
        }
        ResponseItem::CustomToolCall(call) => {
            ui.label(format!(
                "custom_tool_call {id} · {} ({})",
                call.name, call.call_id
            ));
            ui.label(RichText::new(&call.input).monospace());
        }
        ResponseItem::Message(message) => {
            ui.label(format!("message {id} · {}", message.role));
            for part in &message.content {
                if let Some(text) = ContentItem::text(part) {
                    ui.label(text);
                }
            }
        }
        ResponseItem::Reasoning(reasoning) => {
            let encrypted = reasoning.encrypted_content.as_ref().map_or(0, String::len);
            ui.label(format!(
                "reasoning {id} · {} · {encrypted} bytes encrypted",
                count(reasoning.summary.len() as u64, "summary part")
            ));
        }
        other => {
            ui.label(format!("{} {id}", other.type_name()));
        }
    }
}

/// Function arguments pretty-printed when they are JSON, else as they came.
pub fn pretty_arguments(arguments: &str) -> String {
    serde_json::from_str::<serde_json::Value>(arguments)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| arguments.to_string())
}

/// Input tokens not read from the cache: `input_tokens - cached_input_tokens`, saturating (the
/// values come from the server: cached may exceed input, either may be at `i64`'s limits), and
/// never below zero.
pub fn uncached_input(usage: &TokenUsage) -> i64 {
    usage
        .input_tokens
        .saturating_sub(usage.cached_input_tokens)
        .max(0)
}

/// `server cache: miss — input_changed, 2,048 tokens affected (read 0, wrote 4,096)`: the
/// response's `prompt_cache_diagnostics` with what its usage says was read from and written to
/// the cache. `None` when the response carries no diagnostics.
pub fn server_cache_line(outcome: &TurnOutcome) -> Option<String> {
    let diagnosis = outcome.cache_diagnostics.as_ref()?.describe();
    Some(match &outcome.usage {
        Some(usage) => format!(
            "server cache: {diagnosis} (read {}, wrote {})",
            usage.cached_input_tokens, usage.cache_write_input_tokens
        ),
        None => format!("server cache: {diagnosis}"),
    })
}

fn usage_ui(ui: &mut Ui, usage: &TokenUsage) {
    ui.strong("Usage (tokens)");
    Grid::new("timeline_usage").striped(true).show(ui, |ui| {
        let uncached = uncached_input(usage);
        for (name, value) in [
            ("uncached input", uncached),
            ("cached input", usage.cached_input_tokens),
            ("cache write", usage.cache_write_input_tokens),
            ("output", usage.output_tokens),
            ("reasoning (in output)", usage.reasoning_output_tokens),
            ("total", usage.total_tokens),
        ] {
            ui.label(name);
            ui.label(RichText::new(value.to_string()).monospace());
            ui.end_row();
        }
    });
}

fn timings_ui(ui: &mut Ui, outcome: &TurnOutcome) {
    let t = &outcome.timings;
    let mut parts = Vec::new();
    if let Some(d) = t.first_event {
        parts.push(format!("first event {}", secs(d)));
    }
    if let Some(d) = t.first_text {
        parts.push(format!("first text {}", secs(d)));
    }
    if let Some(gap) = t.longest_gap {
        parts.push(format!(
            "longest gap {} after #{}",
            secs(gap.duration),
            gap.after_seq
        ));
    }
    if let Some(d) = t.total {
        parts.push(format!("total {}", secs(d)));
    }
    if !parts.is_empty() {
        ui.strong("Timings");
        ui.label(parts.join(" · "));
    }
}

#[cfg(test)]
mod tests {
    use egui_kittest::Harness;
    use egui_kittest::kittest::Queryable as _;

    use super::*;

    fn usage(input_tokens: i64, cached_input_tokens: i64) -> TokenUsage {
        TokenUsage {
            input_tokens,
            cached_input_tokens,
            ..TokenUsage::default()
        }
    }

    #[test]
    fn the_server_cache_line_joins_the_diagnosis_and_the_usage() {
        use crate::core::stream::PromptCacheDiagnostics;
        let miss = PromptCacheDiagnostics::CacheMiss {
            reason: Some("input_changed".to_string()),
            cache_missed_tokens: Some(2048),
            comparison_reusable_tokens: None,
        };
        let with_usage = TurnOutcome {
            cache_diagnostics: Some(miss.clone()),
            usage: Some(TokenUsage {
                cached_input_tokens: 1024,
                cache_write_input_tokens: 3000,
                ..usage(5000, 1024)
            }),
            ..TurnOutcome::default()
        };
        let without_usage = TurnOutcome {
            cache_diagnostics: Some(PromptCacheDiagnostics::CacheHit),
            ..TurnOutcome::default()
        };
        assert_eq!(
            [
                server_cache_line(&with_usage),
                server_cache_line(&without_usage),
                server_cache_line(&TurnOutcome::default()),
            ],
            [
                Some(
                    "server cache: miss — input_changed, 2,048 tokens affected (read 1024, wrote 3000)"
                        .to_string()
                ),
                Some("server cache: hit".to_string()),
                None,
            ]
        );
    }

    #[test]
    fn uncached_input_saturates_on_server_values() {
        let cases = [
            (usage(100, 40), 60),
            (usage(40, 100), 0),
            (usage(i64::MIN, 1), 0),
            (usage(i64::MAX, i64::MIN), i64::MAX),
            (usage(i64::MIN, i64::MAX), 0),
            (usage(i64::MAX, -1), i64::MAX),
        ];
        let got: Vec<i64> = cases.iter().map(|(u, _)| uncached_input(u)).collect();
        let want: Vec<i64> = cases.iter().map(|(_, w)| *w).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn the_usage_grid_draws_extreme_values_without_panicking() {
        let value = TokenUsage {
            input_tokens: i64::MIN,
            cached_input_tokens: i64::MAX,
            cache_write_input_tokens: 7,
            output_tokens: 11,
            reasoning_output_tokens: 3,
            total_tokens: 13,
        };
        let mut harness = Harness::new_ui(move |ui| usage_ui(ui, &value));
        harness.run();
        harness.get_by_label("uncached input");
        // The uncached row shows 0, not a negative number or a wrapped one.
        harness.get_by_label("0");
        harness.get_by_label(&i64::MAX.to_string());
    }
}
