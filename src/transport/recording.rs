//! Feeds a live send into the session store: [`record_live`] for each [`LiveEvent`] as it
//! arrives, [`finish_recording`] with the [`SendResult`] at the end. The one way the app's Send,
//! the Sessions Re-send and the CLI's `send` record, whatever the wire (HTTP or WebSocket).

use std::time::Duration;

use crate::store::send_recording::StoredSend;
use crate::store::{AttemptRecord, SendRecording, StoreResult};

use super::{LiveEvent, SendError, SendResult};

/// Accounts for one live event of a send (it queues to the database's writer; it does not wait
/// on SQLite). [`LiveEvent::Done`] is recorded by [`finish_recording`].
pub fn record_live(recording: &mut SendRecording, event: &LiveEvent) {
    match event {
        LiveEvent::AttemptStarted { .. } => recording.attempt_started(),
        LiveEvent::Response { at, .. } => recording.response_received(*at),
        LiveEvent::Entry(entry) => recording.raw_event(&entry.raw),
        LiveEvent::HeaderEvents(_) | LiveEvent::Retrying { .. } | LiveEvent::Done(_) => {}
    }
}

/// [`record_live`] for an event the caller is done with: an entry nobody else holds gives its
/// raw event to the recording instead of a copy.
pub fn record_live_owned(recording: &mut SendRecording, event: LiveEvent) {
    match event {
        LiveEvent::Entry(entry) => match std::sync::Arc::try_unwrap(entry) {
            Ok(entry) => recording.raw_event_owned(entry.raw),
            Err(shared) => recording.raw_event(&shared.raw),
        },
        other => record_live(recording, &other),
    }
}

/// How long the end of a send waits for the database's writer to commit its recording.
pub const RECORDING_FLUSH_TIMEOUT: Duration = Duration::from_secs(30);

/// Hands the writer every attempt's response and outcome and waits (up to
/// [`RECORDING_FLUSH_TIMEOUT`]) until they are committed; returns where they were stored. Call it
/// off the async workers: it waits. It takes the result: each attempt's outcome (the whole
/// answer's text) moves into the store's record instead of being copied.
pub fn finish_recording(recording: SendRecording, result: SendResult) -> StoreResult<StoredSend> {
    let attempts: Vec<AttemptRecord> = result
        .attempts
        .into_iter()
        .map(|attempt| AttemptRecord {
            status: attempt.status,
            headers: attempt.response_headers.clone(),
            http_version: attempt.http_version.clone(),
            http_error_body: match &attempt.error {
                Some(SendError::Http(e)) => Some(e.to_string()),
                _ => None,
            },
            elapsed: attempt.elapsed,
            error: attempt.error.as_ref().map(|e| (e.class(), e.to_string())),
            outcome: attempt.outcome,
        })
        .collect();
    recording.finish(attempts, RECORDING_FLUSH_TIMEOUT)
}
