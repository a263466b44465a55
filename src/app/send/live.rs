//! How the app consumes a live send ([`crate::transport::send`]) — the one path of the
//! workbench's Send and the Sessions view's Re-send: a drain thread takes every
//! [`LiveEvent`] off the send's bounded queue, applies it to the send's recording
//! ([`record_live`], which only queues to the database's writer) and hands the timeline update
//! to a second, UI-reporting thread over an unbounded channel. So the network waits, at most, for
//! the drain thread; the drain never waits for the UI (a stream's size is bounded by the send
//! limits, so the UI channel is too). When the UI is gone, the send is cancelled (what arrived
//! is still recorded).

use std::sync::mpsc::{Receiver, Sender as StepSender, channel};

use crate::app::error::{AppError, AppResult};
use crate::app::timeline::TimelineUpdate;
use crate::store::SendRecording;
use crate::store::send_recording::StoredSend;
use crate::transport::recording::record_live;
use crate::transport::{CancelToken, LiveEvent, LiveSend, SendResult};

/// What the UI-reporting thread hands on, in order.
#[derive(Debug)]
pub enum UiStep {
    /// A timeline update.
    Live(TimelineUpdate),
    /// The writer stored an attempt's request (the sidebar can show it while it streams).
    Stored(StoredSend),
}

/// The UI-reporting channel: give the sender to the recording's `on_stored` before calling
/// [`run`].
pub struct UiChannel {
    tx: StepSender<Option<UiStep>>,
    rx: Receiver<Option<UiStep>>,
}

impl Default for UiChannel {
    fn default() -> Self {
        let (tx, rx) = channel();
        Self { tx, rx }
    }
}

impl UiChannel {
    /// A callback that reports each stored request to the UI (for [`SendRecording`]'s
    /// `on_stored`).
    pub fn on_stored(&self) -> std::sync::Arc<dyn Fn(StoredSend) + Send + Sync> {
        let tx = self.tx.clone();
        std::sync::Arc::new(move |stored| {
            let _ = tx.send(Some(UiStep::Stored(stored)));
        })
    }
}

/// Consumes `live` (see the module header): records into `recording`, reports each step with
/// `report` (false: the UI is gone) on its own thread. Returns the recording and the send's
/// result once both threads are done; every step was reported by then.
pub async fn run(
    live: LiveSend,
    recording: Option<SendRecording>,
    ui: UiChannel,
    report: impl FnMut(UiStep) -> bool + Send + 'static,
) -> AppResult<(Option<SendRecording>, SendResult)> {
    let UiChannel { tx, rx } = ui;
    let cancel = live.cancel.clone();
    let reporter = tokio::task::spawn_blocking(move || forward(&rx, &cancel, report));
    let drained = tokio::task::spawn_blocking(move || drain(live, recording, &tx)).await;
    // The reporter ends at the drain's end marker.
    let reported = reporter.await;
    let (recording, result) =
        drained.map_err(|e| AppError::Worker(format!("the send's drain failed: {e}")))?;
    reported.map_err(|e| AppError::Worker(format!("the send's reports failed: {e}")))?;
    let result =
        result.ok_or_else(|| AppError::Worker("the send ended without a result".to_string()))?;
    Ok((recording, result))
}

/// The drain thread: every event into the recording, its timeline update to the reporter;
/// ends (with the end marker) at `Done`.
fn drain(
    mut live: LiveSend,
    mut recording: Option<SendRecording>,
    ui: &StepSender<Option<UiStep>>,
) -> (Option<SendRecording>, Option<SendResult>) {
    let mut result = None;
    while let Some(event) = live.next_blocking() {
        if let Some(recording) = recording.as_mut() {
            record_live(recording, &event);
        }
        if let LiveEvent::Done(done) = event {
            result = Some(*done);
            break;
        }
        if let Some(update) = event
            .progress()
            .and_then(|e| TimelineUpdate::from_send_event(&e))
        {
            let _ = ui.send(Some(UiStep::Live(update)));
        }
    }
    let _ = ui.send(None);
    (recording, result)
}

/// The UI-reporting thread: reports until the end marker; stops the send when the UI is gone.
fn forward(
    steps: &Receiver<Option<UiStep>>,
    cancel: &CancelToken,
    mut report: impl FnMut(UiStep) -> bool,
) {
    let mut ui_gone = false;
    while let Ok(Some(step)) = steps.recv() {
        if !ui_gone && !report(step) {
            ui_gone = true;
            cancel.cancel();
        }
    }
}
