//! The prefix view's what-if (issue 21 item 5): the user picks an edit (`KIND:ARGS`, the same
//! text `diff --what-if` takes, `core::cache::whatif`), and the open session's analysed prompt
//! is re-simulated under it on a worker — never on the UI thread. A result is kept only for
//! the session and the run it was asked for: opening another session cancels the job and
//! drops what it would report.

use std::sync::Arc;

use super::SessionEvent;
use crate::app::event::AppEvent;
use crate::app::jobs::JobId;
use crate::app::state::AppState;
use crate::core::format::grouped;
use crate::core::ledger::summary::usd;
use crate::core::ledger::{Edit, WhatIf};

/// The what-if kinds the picker offers: (`KIND` as `--what-if` spells it, button label, what
/// its argument is).
pub const KINDS: [(&str, &str, &str); 5] = [
    ("breakpoint-after", "breakpoint after item", "input item K"),
    ("ttl", "TTL", "duration, e.g. 12h"),
    ("undo-tools", "undo tools change", "request K"),
    ("move-instructions", "move instructions", "request K"),
    ("close-gap", "close idle gap", "request K"),
];

/// The what-if of the open session.
#[derive(Debug, Clone, Default)]
pub struct WhatIfState {
    /// The edit asked for last, as written (`breakpoint-after:3`).
    pub asked: Option<String>,
    /// The running job.
    pub job: Option<JobId>,
    /// Incremented per run and per session change (stale results are dropped).
    pub generation: u64,
    /// The session re-simulated under the edit.
    pub result: Option<Arc<WhatIf>>,
    /// Why the edit does not parse or apply.
    pub error: Option<String>,
}

/// Runs the what-if `text` (`KIND:ARGS`) over the open session's analysis, on a worker.
pub fn start(state: &mut AppState, text: String) {
    let w = &mut state.browser.whatif;
    if let Some(job) = w.job.take() {
        state.workers.cancel(job);
    }
    w.generation += 1;
    w.result = None;
    w.error = None;
    w.asked = Some(text.clone());
    let generation = w.generation;
    let edit = match text.parse::<Edit>() {
        Ok(edit) => edit,
        Err(e) => {
            w.error = Some(e.to_string());
            return;
        }
    };
    let (Some(session), Some(analysis)) = (state.sessions.open, state.browser.analysis.clone())
    else {
        state.browser.whatif.error = Some("no analysed session is open".to_string());
        return;
    };
    let spawned = state.workers.spawn("what-if", move |ctx| {
        let result = analysis
            .ledger
            .what_if(&analysis.prefix, &analysis.rules, &[edit])
            .map(Arc::new)
            .map_err(|e| e.to_string());
        if ctx.is_cancelled() {
            return;
        }
        ctx.report(AppEvent::Sessions(SessionEvent::WhatIfDone {
            session,
            generation,
            result,
        }));
    });
    match spawned {
        Ok(job) => state.browser.whatif.job = Some(job),
        Err(e) => state.browser.whatif.error = Some(e),
    }
}

/// A what-if finished: kept when it is the latest run on the open session.
pub fn done(
    state: &mut AppState,
    session: i64,
    generation: u64,
    result: Result<Arc<WhatIf>, String>,
) {
    let w = &mut state.browser.whatif;
    if state.sessions.open != Some(session) || w.generation != generation {
        return;
    }
    w.job = None;
    match result {
        Ok(r) => w.result = Some(r),
        Err(e) => w.error = Some(e),
    }
}

/// Another session opens (or none): the running what-if is cancelled, its result dropped.
pub fn forget(state: &mut AppState) {
    let w = &mut state.browser.whatif;
    if let Some(job) = w.job.take() {
        state.workers.cancel(job);
    }
    *w = WhatIfState {
        generation: w.generation + 1,
        ..WhatIfState::default()
    };
}

/// The headline: `what if breakpoint-after:0: paid $X -> $Y (saves $Z) · read A -> B tokens`
/// ("paid $X" is the ledger's).
pub fn headline(w: &WhatIf) -> String {
    let money = match (&w.before.cost_usd, &w.after.cost_usd) {
        (Some(b), Some(a)) => {
            let saved = b.paid - a.paid;
            let verb = if saved >= 0.0 { "saves" } else { "costs" };
            format!(
                "paid {} -> {} ({verb} {})",
                usd(b.paid),
                usd(a.paid),
                usd(saved.abs())
            )
        }
        _ => {
            let mut models = w.before.unpriced_models.clone();
            for m in &w.after.unpriced_models {
                if !models.contains(m) {
                    models.push(m.clone());
                }
            }
            format!("price unknown ({})", models.join(", "))
        }
    };
    format!(
        "what if {}: {money} · read {} -> {} tokens",
        w.edits.join(", "),
        grouped(w.before.read_tokens),
        grouped(w.after.read_tokens)
    )
}

/// Request `index`'s line: under the edit against the ledger: `(read, written, uncached)` of
/// each.
pub fn request_line(index: usize, baseline: [u64; 3], predicted: [u64; 3]) -> String {
    let [br, bw, bu] = baseline.map(grouped);
    let [r, w, u] = predicted.map(grouped);
    format!("request {index}: read {br} -> {r} · wrote {bw} -> {w} · uncached {bu} -> {u} tokens")
}
