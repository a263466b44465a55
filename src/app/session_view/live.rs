//! A proxied request streamed live into the Sessions view's timeline (issue 11): while the
//! Record panel's proxy runs, the newest request it forwards takes over the timeline (unless a
//! replay or re-send is under way there) and its events are shown as they pass to the client.
//! The proxy's [`ProxyEvent`]s (request started, each event already decoded and mapped by the
//! proxy, the outcome with the turn as its reader put it together) become the same
//! [`TimelineUpdate`]s a replay makes; nothing is decoded again here.

use std::time::Duration;

use super::replay::failure_of;
use super::{ReplayState, SessionBrowser};
use crate::app::timeline::{FailureInfo, TimelineUpdate};
use crate::transport::proxy::ProxyEvent;

/// The proxied request the timeline follows.
#[derive(Debug, Default)]
pub struct LiveFollow {
    /// The proxy's exchange number followed.
    exchange: Option<u64>,
    /// The replay generation it took (another replay or re-send ends the following).
    generation: u64,
}

impl LiveFollow {
    /// The exchange shown, while the timeline still shows it.
    pub fn following(&self, browser: &SessionBrowser) -> Option<u64> {
        self.exchange
            .filter(|_| browser.replay.generation.is_current(self.generation))
    }
}

/// Applies one of the proxy's events to the timeline.
pub fn apply(live: &mut LiveFollow, browser: &mut SessionBrowser, event: &ProxyEvent) {
    match event {
        ProxyEvent::RequestStarted { exchange, .. } => {
            if browser.replay.job.is_some() {
                return;
            }
            let mut next = browser.replay.generation;
            let generation = next.bump();
            browser.replay = ReplayState {
                generation: next,
                proxied: Some(*exchange),
                ..ReplayState::default()
            };
            browser.timeline.clear();
            browser
                .timeline
                .apply(TimelineUpdate::AttemptStarted { attempt: 1 });
            *live = LiveFollow {
                exchange: Some(*exchange),
                generation,
            };
        }
        ProxyEvent::Event { exchange, entry } => {
            if live.following(browser) != Some(*exchange) {
                return;
            }
            // Decoded and mapped once, by the proxy: shown as it came.
            browser.timeline.push((**entry).clone());
        }
        ProxyEvent::Outcome {
            exchange,
            status,
            outcome,
            turn,
        } => {
            if live.following(browser) != Some(*exchange) {
                return;
            }
            if let Some(status) = *status {
                browser.timeline.apply(TimelineUpdate::Response {
                    status,
                    at: Duration::ZERO,
                });
            }
            let turn = turn.clone().unwrap_or_default();
            // An HTTP error (or a stream that never started) has no events: the recorded
            // outcome says why, rather than the reader's "ended early".
            let recorded = outcome.error_class.as_ref().map(|class| FailureInfo {
                class: class.clone(),
                message: outcome.error_message.clone().unwrap_or_default(),
                retry_after: None,
                retried_after: None,
                retryable: false,
            });
            let failure = match turn.events {
                0 => recorded.or_else(|| failure_of(&turn)),
                _ => failure_of(&turn).or(recorded),
            };
            browser.timeline.apply(TimelineUpdate::Finished {
                outcome: turn,
                failure,
            });
            live.exchange = None;
        }
        ProxyEvent::Stored { .. }
        | ProxyEvent::Recorded { .. }
        | ProxyEvent::NotRecorded { .. } => {}
        ProxyEvent::Note(_)
        | ProxyEvent::StoreProblem(_)
        | ProxyEvent::Passthrough { .. }
        | ProxyEvent::UpgradeFailed { .. } => {}
    }
}
