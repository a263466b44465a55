//! The replay bar above the timeline: replay the selected request at 1×, 4×, instant or step by
//! step (previous / next event), stop, and the recorded outcome beside the replayed one.

use crate::core::format::count;
use egui::{RichText, Ui};

use super::{millis, send};
use crate::app::session_view::{ReplaySpeed, SessionCommand};
use crate::app::{AppState, CommandSender};

/// The recorded outcome in one line (the whole text is in the side-by-side view).
pub fn recorded_text(recorded: &crate::store::OutcomeRecord) -> String {
    let mut text = format!("recorded: {}", recorded.state);
    if let Some(class) = &recorded.error_class {
        text.push_str(&format!(" ({class})"));
    }
    text.push_str(&format!(", {}", count(recorded.events, "event")));
    if let Some(usage) = &recorded.usage {
        let (input, cached, output) = crate::store::summary::usage_tokens(usage);
        if let (Some(input), Some(output)) = (input, output) {
            text.push_str(&format!(
                ", {input} in ({} cached) / {output} out",
                cached.unwrap_or(0)
            ));
        }
    }
    if recorded.total_us.is_some() {
        text.push_str(&format!(", {}", millis(recorded.total_us)));
    }
    if recorded.first_event_us.is_some() {
        text.push_str(&format!(
            ", first event {}",
            millis(recorded.first_event_us)
        ));
    }
    text
}

/// The re-sent outcome in one line, to read beside the recorded one (the whole text is in the
/// side-by-side view).
pub fn resent_text(outcome: &crate::core::stream::TurnOutcome) -> String {
    use crate::core::stream::TurnState;
    let state = match &outcome.state {
        TurnState::Open => "open".to_string(),
        TurnState::Completed { .. } => "completed".to_string(),
        TurnState::Failed(e) => format!("failed ({})", e.class()),
    };
    let mut text = format!("re-sent: {state}, {}", count(outcome.events, "event"));
    if let Some(usage) = &outcome.usage {
        text.push_str(&format!(
            ", {} in ({} cached) / {} out",
            usage.input_tokens, usage.cached_input_tokens, usage.output_tokens
        ));
    }
    if let Some(total) = outcome.timings.total {
        text.push_str(&format!(", {} ms", total.as_millis()));
    }
    if let Some(first) = outcome.timings.first_event {
        text.push_str(&format!(", first event {} ms", first.as_millis()));
    }
    text
}

/// Draws the bar.
pub fn replay_bar_ui(ui: &mut Ui, state: &AppState, tx: &CommandSender) {
    let browser = &state.browser;
    let replay = &browser.replay;
    // One row under the pane's "Replay" header: the controls, then what is replayed and its
    // recorded outcome cut at the pane's edge (whole on hover) — a wrapped second line took
    // one of the few event rows the timeline has at 1024×700.
    ui.horizontal_wrapped(|ui| {
        let selected = browser.selected.filter(|i| *i < state.sessions.rows.len());
        for speed in ReplaySpeed::ALL {
            let button = egui::Button::new(speed.label());
            if ui.add_enabled(selected.is_some(), button).clicked()
                && let Some(index) = selected
            {
                send(tx, SessionCommand::Replay(index, speed));
            }
        }
        let resend = egui::Button::new("Re-send");
        if ui
            .add_enabled(selected.is_some() && replay.job.is_none(), resend)
            .on_hover_text(
                "Send this request's recorded body again to the workbench's provider; the answer \
                 is recorded as a new request of this session",
            )
            .clicked()
            && let Some(index) = selected
        {
            send(tx, SessionCommand::Resend(index));
        }
        let mut ask = browser.ask_why;
        if ui
            .checkbox(&mut ask, "ask the server why")
            .on_hover_text(
                "Re-send with prompt_cache_options.comparison_response_id set to the previous \
                 request's recorded response: the answer carries prompt_cache_diagnostics",
            )
            .changed()
        {
            send(tx, SessionCommand::AskWhy(ask));
        }
        if replay.job.is_some() {
            ui.spinner();
            if replay.stopping {
                ui.label("Stopping — recording the partial answer…");
            } else if ui.button("Stop").clicked() {
                send(tx, SessionCommand::StopReplay);
            }
        }
        if replay.speed == ReplaySpeed::Step && replay.job.is_none() && replay.request.is_some() {
            if ui.button("‹ Previous event").clicked() {
                send(tx, SessionCommand::Step(-1));
            }
            if ui.button("Next event ›").clicked() {
                send(tx, SessionCommand::Step(1));
            }
            ui.label(format!("{} / {}", replay.shown, replay.buffer.len()));
        }
        let mut texts = Vec::new();
        if let Some((session, position)) = replay.request {
            texts.push(RichText::new(format!("session #{session} turn {position}")).weak());
        }
        if let Some(exchange) = replay.proxied {
            texts.push(RichText::new(format!("proxied request #{exchange} (live)")).weak());
        }
        if let Some(recorded) = &replay.recorded {
            texts.push(RichText::new(recorded_text(recorded)));
        }
        if replay.resend
            && let Some(outcome) = browser.timeline.outcome()
        {
            texts.push(RichText::new(resent_text(outcome)));
        }
        crate::ui::widgets::cut_texts_ui(ui, texts);
    });
}
