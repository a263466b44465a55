//! Re-send: a recorded request's exact body sent again to a live provider — the workbench's
//! current target column (its URL and headers, its wire: an HTTP body column over HTTP SSE, a
//! WebSocket frame column over a WebSocket, as the workbench's Send picks; the API key read
//! through the app's key lookup at send time) — through the one [`Sender`] on the app's network
//! runtime, consumed by the workbench Send's [`live::run`]. Its events stream into the Sessions
//! timeline, the recorded outcome stays beside the new one, and the new attempt is recorded as a
//! new request of the same session (the same recording `promptwire send --session` makes). Stop cancels the send's [`CancelToken`] at once, as the workbench's Send
//! does: the partial answer is recorded (as interrupted) and the session read again.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::{ReplaySpeed, ReplayState, ReplayUpdate, SessionEvent};
use crate::app::error::{AppError, AppResult};
use crate::app::event::AppEvent;
use crate::app::jobs::JobContext;
use crate::app::send::live::{self, UiChannel, UiStep};
use crate::app::send::{KeyLookup, wire_of};
use crate::app::state::AppState;
use crate::app::timeline::TimelineUpdate;
use crate::app::traffic::Origin;
use crate::core::compile::ask_why::set_comparison_response;
use crate::core::compile::{BodyValue, CompiledRequest};
use crate::core::rules::{BodyField, CompileRules};
use crate::core::stream::{Replay, Timing, TurnOutcome};
use crate::store::seed::open_seeded;
use crate::store::send_recording::StoredSend;
use crate::store::{OutcomeRecord, Page, SendRecording, Writer};
use crate::transport::recording::finish_recording;
use crate::transport::{CancelToken, SendOptions, Sender, Wire, resolve_headers};

/// Starts re-sending request `index` of the open session.
pub fn start(state: &mut AppState, index: usize) {
    let browser = &mut state.browser;
    let (Some(session), Some(row), Some(path)) = (
        state.sessions.open,
        state.sessions.rows.get(index),
        state.sessions.db_path.clone(),
    ) else {
        return;
    };
    let Some(view) = state.views.get(state.send.target) else {
        browser.error =
            Some("Re-send uses the workbench's provider: wait for the form to compile".to_string());
        return;
    };
    let Some(wire) = wire_of(view.view) else {
        browser.error = Some(
            "Re-send goes to the workbench's target column: pick a body or frame column"
                .to_string(),
        );
        return;
    };
    let target = Arc::clone(&view.compiled);
    let lookup = Arc::clone(&state.key_lookup);
    let (request, position) = (row.id, row.position);
    let model = row.model.clone().unwrap_or_default();
    // The request before it, whose recorded response "ask the server why" compares with.
    let compare_with = if browser.ask_why {
        index
            .checked_sub(1)
            .and_then(|i| state.sessions.rows.get(i))
            .map(|previous| previous.id)
    } else {
        None
    };
    super::replay::stop_running(&mut state.browser, &state.workers);
    let browser = &mut state.browser;
    let mut next = browser.replay.generation;
    let generation = next.bump();
    // Stop cancels this token at once (as the workbench's Send does); the job then records the
    // partial answer and still reports, so the session is read again.
    let cancel = CancelToken::new();
    browser.replay = ReplayState {
        generation: next,
        speed: ReplaySpeed::Original,
        request: Some((session, position)),
        resend: true,
        cancel: Some(cancel.clone()),
        ..ReplayState::default()
    };
    browser.timeline.clear();
    let options = state.settings.limits.send_options();
    let view_url = target.url.clone();
    let spawned = state.workers.spawn_network("resend", move |ctx| {
        resend_job(
            ctx,
            path,
            (session, request, compare_with),
            Target {
                compiled: target,
                wire,
                lookup,
            },
            (generation, cancel),
            options,
        )
    });
    match spawned {
        Ok(id) => {
            state.browser.replay.job = Some(id);
            let method = match wire {
                Wire::Http => "POST",
                Wire::WebSocket => "WS",
            };
            let url = view_url;
            crate::app::traffic::started(state, Origin::Resend, generation, method, &url, &model);
        }
        Err(e) => state.browser.error = Some(e),
    }
}

/// The recorded body, outcome and decoded stream, and the recording that will hold the new
/// attempt.
type Prepared = (
    CompiledRequest,
    Option<OutcomeRecord>,
    Option<TurnOutcome>,
    SendRecording,
);

/// The recorded stream of `request` read back through the one [`Replay`] (its stored events as
/// they were decoded when recorded, with its response headers, at once), for its items and
/// timings beside the new answer (None when nothing was streamed).
fn decode_recorded(
    store: &crate::store::Store,
    request: i64,
    recorded: Option<&OutcomeRecord>,
) -> AppResult<Option<TurnOutcome>> {
    let events = store.events(request, Page::ALL)?;
    if events.is_empty() {
        return Ok(None);
    }
    let headers = store.request(request)?.response_headers;
    let end = recorded
        .and_then(|r| r.total_us)
        .and_then(|us| u64::try_from(us).ok())
        .map(Duration::from_micros)
        .unwrap_or_default();
    Ok(Some(
        Replay::new(events, &headers, end, Timing::Instant).into_outcome(),
    ))
}

fn prepare(
    path: &std::path::Path,
    (session, request, compare_with): (i64, i64, Option<i64>),
    target: &CompiledRequest,
    on_stored: Arc<dyn Fn(StoredSend) + Send + Sync>,
) -> AppResult<Prepared> {
    let store = open_seeded(path)?;
    let mut body = store.body(request)?;
    let Some(serde_json::Value::Object(mut map)) = body.value else {
        return Err(AppError::StoredBody {
            request,
            what: "the stored body is not a JSON object",
        });
    };
    // Ask the server why: compare with the previous request's recorded response.
    if let Some(previous) = compare_with {
        let response = store
            .outcome(previous)?
            .and_then(|o| o.response_id)
            .ok_or(AppError::NoPreviousResponse)?;
        let order = CompileRules::preset(&target.rules)
            .map_or_else(|| BodyField::ALL.to_vec(), |rules| rules.field_order);
        set_comparison_response(&mut map, &order, &response);
        body.bytes = serde_json::to_vec(&map)?;
    }
    let recorded = store.outcome(request)?;
    let decoded = decode_recorded(&store, request, recorded.as_ref())?;
    // The target's URL and headers with the recorded body, sent as stored (uncompressed).
    let mut compiled = target.clone();
    compiled.body = BodyValue::from_map(map);
    compiled.body_json = body.bytes;
    compiled.compressed_body = None;
    compiled
        .headers
        .retain(|h| !h.name.eq_ignore_ascii_case("content-encoding"));
    compiled.notes.clear();
    store.session(session)?;
    let writer = Writer::open(store.path())?;
    drop(store);
    let recording = SendRecording::into_session(&writer, session, &compiled, Some(on_stored))?;
    Ok((compiled, recorded, decoded, recording))
}

/// Where Re-send goes: the workbench's target column, its wire, and the key lookup.
struct Target {
    compiled: Arc<CompiledRequest>,
    wire: Wire,
    lookup: KeyLookup,
}

async fn resend_job(
    ctx: JobContext,
    path: PathBuf,
    (session, request, compare_with): (i64, i64, Option<i64>),
    target: Target,
    (generation, cancel): (u64, CancelToken),
    options: SendOptions,
) -> JobContext {
    let report = move |ctx: &JobContext, update| {
        ctx.report(AppEvent::Sessions(SessionEvent::Replay {
            generation,
            update,
        }))
    };
    let Target {
        compiled: target,
        wire,
        lookup,
    } = target;
    let ui = UiChannel::default();
    let on_stored = ui.on_stored();
    let prepared = tokio::task::spawn_blocking(move || {
        prepare(&path, (session, request, compare_with), &target, on_stored)
    })
    .await;
    let (compiled, recorded, decoded, recording) = match prepared {
        Ok(Ok(prepared)) => prepared,
        Ok(Err(e)) => {
            report(&ctx, ReplayUpdate::Resent(Err(e)));
            return ctx;
        }
        Err(e) => {
            report(
                &ctx,
                ReplayUpdate::Resent(Err(AppError::Worker(e.to_string()))),
            );
            return ctx;
        }
    };
    if !report(
        &ctx,
        ReplayUpdate::Started {
            recorded: recorded.map(Box::new),
            status: None,
        },
    ) {
        return ctx;
    }
    if let Some(decoded) = decoded {
        report(&ctx, ReplayUpdate::RecordedOutcome(Box::new(decoded)));
    }
    // The same preparation and the same words as the workbench's Send (a missing key
    // included: `AppError::MissingApiKey`).
    let sender = resolve_headers(&compiled, |env| lookup(env))
        .and_then(|headers| {
            Sender::new(wire, &compiled.url, options).map(|sender| (sender, headers))
        })
        .map_err(AppError::from);
    let (sender, headers) = match sender {
        Ok(ready) => ready,
        Err(e) => {
            report(&ctx, ReplayUpdate::Resent(Err(e)));
            return ctx;
        }
    };
    let live = sender.start(
        &tokio::runtime::Handle::current(),
        Arc::new(compiled),
        headers,
        cancel,
    );
    let reporter = ctx.clone();
    let consumed = live::run(live, Some(recording), ui, move |step| match step {
        UiStep::Live(update) => report(&reporter, ReplayUpdate::Live(update)),
        UiStep::Stored(stored) => report(&reporter, ReplayUpdate::ResendStored(stored)),
    })
    .await;
    // The end, off the async workers: the final update, the recording's commit (this waits for
    // the writer), and the report.
    let end = ctx.clone();
    let ended = tokio::task::spawn_blocking(move || {
        let (recording, result) = consumed?;
        report(&end, ReplayUpdate::Live(TimelineUpdate::finished(&result)));
        let recorded = match recording {
            Some(recording) => finish_recording(recording, result)
                .map(|stored| stored.session)
                .map_err(|e| AppError::Reported(format!("{e:#}"))),
            None => Err(AppError::Reported("the send was not recorded".to_string())),
        };
        report(&end, ReplayUpdate::Resent(recorded));
        Ok(())
    })
    .await
    .map_err(|e| AppError::Worker(e.to_string()))
    .and_then(|r: AppResult<()>| r);
    if let Err(e) = ended {
        report(&ctx, ReplayUpdate::Resent(Err(e)));
    }
    ctx
}
