//! A re-send's two outcomes side by side: the recorded one (its stored outcome, with its items
//! from the recorded stream decoded) and the new one (the live timeline's outcome) — state,
//! events, usage with cached tokens, duration, time to first event, output items, and the whole
//! text of each, wrapped in its own scroll area. Above the timeline in the replay pane: closed
//! at first in a short pane, and scrolling inside the room the timeline leaves it.

use std::time::Duration;

use egui::{RichText, Ui};

use crate::app::AppState;
use crate::app::timeline::FailureInfo;
use crate::core::stream::{TurnOutcome, TurnState};
use crate::store::OutcomeRecord;

/// Height of each side's text before it scrolls.
const TEXT_HEIGHT: f32 = 120.0;

/// One side of the comparison, as text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OutcomeSide {
    /// `completed`, `failed (class)`, `open`.
    pub state: String,
    /// Events seen.
    pub events: String,
    /// `input (cached) / output` tokens.
    pub usage: String,
    /// To the end of the turn.
    pub duration: String,
    /// To the first event.
    pub first_event: String,
    /// Output items by type (a call with its name).
    pub items: String,
    /// The whole output text.
    pub text: String,
}

fn ms(d: Option<Duration>) -> String {
    d.map_or_else(|| "–".to_string(), |d| format!("{} ms", d.as_millis()))
}

fn us(us: Option<i64>) -> String {
    ms(us
        .and_then(|us| u64::try_from(us).ok())
        .map(Duration::from_micros))
}

fn items_of(outcome: &TurnOutcome) -> String {
    if outcome.output_items.is_empty() {
        return "none".to_string();
    }
    let mut names = outcome.tool_calls.iter().filter_map(|c| c.name.as_deref());
    let items: Vec<String> = outcome
        .output_items
        .iter()
        .map(|item| {
            let kind = item.type_name();
            match kind {
                "function_call" | "custom_tool_call" => match names.next() {
                    Some(name) => format!("{kind} {name}"),
                    None => kind.to_string(),
                },
                _ => kind.to_string(),
            }
        })
        .collect();
    items.join(", ")
}

fn state_of(outcome: &TurnOutcome) -> String {
    match &outcome.state {
        TurnState::Open => "open".to_string(),
        TurnState::Completed { .. } => "completed".to_string(),
        TurnState::Failed(e) => format!("failed ({})", e.class()),
    }
}

impl OutcomeSide {
    /// The recorded side: its stored outcome, with items from its decoded stream.
    pub fn recorded(record: &OutcomeRecord, decoded: Option<&TurnOutcome>) -> Self {
        let mut state = record.state.to_string();
        if let Some(class) = &record.error_class {
            state.push_str(&format!(" ({class})"));
        }
        let usage = record
            .usage
            .as_ref()
            .map(crate::store::summary::usage_tokens)
            .and_then(|(input, cached, output)| {
                Some(format!(
                    "{} in ({} cached) / {} out",
                    input?,
                    cached.unwrap_or(0),
                    output?
                ))
            })
            .unwrap_or_else(|| "not reported".to_string());
        Self {
            state,
            events: record.events.to_string(),
            usage,
            duration: us(record.total_us),
            first_event: us(record.first_event_us),
            items: decoded.map_or_else(|| "–".to_string(), items_of),
            text: record.text.clone(),
        }
    }

    /// The re-sent side: the live outcome, and why the send did not complete (a Stop is
    /// `cancelled`) when the stream itself did not say.
    pub fn resent(outcome: &TurnOutcome, failure: Option<&FailureInfo>) -> Self {
        let usage = outcome.usage.as_ref().map_or_else(
            || "not reported".to_string(),
            |u| {
                format!(
                    "{} in ({} cached) / {} out",
                    u.input_tokens, u.cached_input_tokens, u.output_tokens
                )
            },
        );
        let state = match (&outcome.state, failure) {
            (TurnState::Failed(_), _) | (_, None) => state_of(outcome),
            (_, Some(failure)) => format!("failed ({})", failure.class),
        };
        Self {
            state,
            events: outcome.events.to_string(),
            usage,
            duration: ms(outcome.timings.total),
            first_event: ms(outcome.timings.first_event),
            items: items_of(outcome),
            text: outcome.text.clone(),
        }
    }
}

/// Draws the two outcomes of a re-send side by side (nothing for a plain replay).
pub fn outcomes_ui(ui: &mut Ui, state: &AppState) {
    let replay = &state.browser.replay;
    if !replay.resend {
        return;
    }
    let recorded = replay
        .recorded
        .as_deref()
        .map(|r| OutcomeSide::recorded(r, replay.recorded_outcome.as_deref()));
    let timeline = &state.browser.timeline;
    let resent = timeline
        .outcome()
        .map(|outcome| OutcomeSide::resent(outcome, timeline.failure()));
    let room = ui.available_height();
    egui::CollapsingHeader::new("Recorded vs re-sent")
        .id_salt("resend_outcomes")
        // Closed at first in a short pane (1024×700): open, its rows left the timeline under
        // it no event row. The bar above has both outcomes in a line.
        .default_open(room >= OPEN_ROOM)
        .show(ui, |ui| {
            egui::ScrollArea::vertical()
                .id_salt("resend_outcomes_scroll")
                .max_height((room - TIMELINE_KEEP).max(MIN_HEIGHT))
                .min_scrolled_height(MIN_HEIGHT)
                .auto_shrink([false, true])
                .show(ui, |ui| sides_ui(ui, recorded.as_ref(), resent.as_ref()));
        });
}

/// The pane's room under the replay bar from which the comparison starts open.
const OPEN_ROOM: f32 = 200.0;

/// Room the open comparison leaves the timeline under it (its header, bars, table header and
/// two event rows); the comparison scrolls inside the rest.
const TIMELINE_KEEP: f32 = 125.0;

/// The open comparison's least height (about two of its rows).
const MIN_HEIGHT: f32 = 40.0;

/// The two outcomes, row by row, and their whole texts.
fn sides_ui(ui: &mut Ui, recorded: Option<&OutcomeSide>, resent: Option<&OutcomeSide>) {
    let blank = OutcomeSide::default();
    let (a, b) = (recorded.unwrap_or(&blank), resent.unwrap_or(&blank));
    egui::Grid::new("resend_outcomes_grid")
        .num_columns(3)
        .striped(true)
        .show(ui, |ui| {
            ui.label("");
            ui.strong("recorded");
            ui.strong("re-sent");
            ui.end_row();
            let rows: [(&str, &String, &String); 6] = [
                ("state", &a.state, &b.state),
                ("events", &a.events, &b.events),
                ("tokens", &a.usage, &b.usage),
                ("duration", &a.duration, &b.duration),
                ("first event", &a.first_event, &b.first_event),
                ("items", &a.items, &b.items),
            ];
            for (name, left, right) in rows {
                ui.weak(name);
                ui.label(format!("recorded {name}: {left}"));
                ui.label(format!("re-sent {name}: {right}"));
                ui.end_row();
            }
        });
    ui.columns(2, |columns| {
        let sides = [(a, "recorded text"), (b, "re-sent text")];
        for (k, (ui, (side, title))) in columns.iter_mut().zip(sides).enumerate() {
            ui.weak(title);
            egui::ScrollArea::vertical()
                .id_salt(("resend_text", k))
                .max_height(TEXT_HEIGHT)
                .auto_shrink([false, true])
                .show(ui, |ui| {
                    ui.add(egui::Label::new(RichText::new(&side.text).monospace()).wrap());
                });
        }
    });
}
