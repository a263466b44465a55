//! Where the selected request of an imported Codex rollout came from: which input items and
//! body fields were recorded verbatim and which reconstructed, what the rollout does not record,
//! and (from the session's first request) the unknown lines kept and a truncated last line.
//! Read-only: it draws the `extra.rollout` the browser rows already carry, with the same lines
//! as `sessions show` ([`crate::core::rollout::provenance`]).

use egui::Ui;

use crate::app::AppState;
use crate::core::rollout::provenance;

/// Draws the provenance of the selected request, when it was imported from a rollout; nothing
/// otherwise.
pub fn provenance_ui(ui: &mut Ui, state: &AppState) {
    let browser = &state.browser;
    let Some(row) = browser.selected.and_then(|i| state.sessions.rows.get(i)) else {
        return;
    };
    let Some(rollout) = row
        .rollout
        .as_ref()
        .filter(|r| provenance::is_rollout(Some(r)))
    else {
        return;
    };
    let mut lines = provenance::request_lines(rollout);
    if let Some(first) = state
        .sessions
        .rows
        .iter()
        .find(|r| r.position == 0)
        .and_then(|r| r.rollout.as_ref())
    {
        lines.extend(provenance::file_lines(first));
    }
    egui::CollapsingHeader::new(format!(
        "Request #{}: imported from a Codex rollout — recorded vs reconstructed",
        row.position
    ))
    .id_salt("rollout_provenance")
    .default_open(false)
    .show(ui, |ui| {
        for line in &lines {
            ui.label(line);
        }
    });
}
