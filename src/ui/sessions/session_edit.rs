//! Session list entries' names, dates and edits: a proxy session is shown by its label (client,
//! first user message, time — `core::session_label`), the grouping key its stored name ends in
//! on hover; an older one named by a UUID by what is known (client, time — the full name and id
//! on hover); right-click renames or deletes;
//! a delete asks first and, once done, stays undoable (the Undo bar) until the app closes or the
//! next delete.

use egui::{Response, TextEdit, Ui};

use super::{SessionsUi, send};
use crate::app::session_view::SessionCommand;
use crate::app::{AppState, CommandSender};
use crate::core::session_label::listed_label;
use crate::store::SessionSummary;

/// True when `word` looks like a UUID (8-4-4-4-12 hex digits).
fn is_uuid(word: &str) -> bool {
    let parts: Vec<&str> = word.split('-').collect();
    parts.len() == 5
        && parts
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(p, n)| p.len() == n && p.chars().all(|c| c.is_ascii_hexdigit()))
}

/// The date and time a session was created (`2026-12-02 14:03`, UTC).
pub fn date_text(created_us: i64) -> String {
    chrono::DateTime::from_timestamp_micros(created_us)
        .map_or_else(String::new, |t| t.format("%Y-%m-%d %H:%M").to_string())
}

/// The name a session is listed by: its stored name, except a proxy session's label (and a
/// replay's `replay of <label>`) without the grouping key the name ends in, and an older proxy
/// session whose name holds a UUID (`proxy session:0199…`), shown as `proxy <client> <time>`
/// with the UUID's last digits.
pub fn shown_name(session: &SessionSummary) -> String {
    if let Some(label) = listed_label(&session.source, &session.name) {
        return label.to_string();
    }
    if session.source != "proxy" {
        return session.name.clone();
    }
    let Some(uuid) = session
        .name
        .split(|c: char| c.is_whitespace() || c == ':')
        .find(|w| is_uuid(w))
    else {
        return session.name.clone();
    };
    let client = session.provider.as_deref().unwrap_or("client");
    let time = chrono::DateTime::from_timestamp_micros(session.created_us)
        .map_or_else(String::new, |t| t.format("%H:%M").to_string());
    format!("proxy {client} {time} …{}", &uuid[uuid.len() - 6..])
}

/// The entry's hover text, right-click menu, inline rename field and delete confirmation.
pub fn entry_ui(
    ui: &mut Ui,
    entry: &Response,
    session: &SessionSummary,
    sui: &mut SessionsUi,
    tx: &CommandSender,
) {
    let entry = entry.clone().on_hover_text(format!(
        "#{} {} ({}, {})",
        session.id,
        session.name,
        session.source,
        date_text(session.created_us)
    ));
    entry.context_menu(|ui| {
        if ui.button("Rename…").clicked() {
            sui.filters.renaming = Some((session.id, session.name.clone()));
        }
        if ui.button("Delete…").clicked() {
            sui.filters.confirm_delete = Some(session.id);
        }
        crate::ui::otel_export::session_menu_item(ui, session.id, tx);
    });
    if let Some((id, name)) = &mut sui.filters.renaming
        && *id == session.id
    {
        let mut done = None;
        ui.horizontal(|ui| {
            let field = ui.add(
                TextEdit::singleline(name)
                    .desired_width(140.0)
                    .char_limit(200),
            );
            if field.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter))
                || ui.button("Rename").clicked()
            {
                done = Some(true);
            }
            if ui.button("Cancel").clicked() {
                done = Some(false);
            }
        });
        match done {
            Some(true) => {
                send(tx, SessionCommand::Rename(*id, name.clone()));
                sui.filters.renaming = None;
            }
            Some(false) => sui.filters.renaming = None,
            None => {}
        }
    }
    if sui.filters.confirm_delete == Some(session.id) {
        ui.horizontal_wrapped(|ui| {
            ui.label(format!("Delete #{}?", session.id));
            if ui.button("Delete").clicked() {
                send(tx, SessionCommand::Delete(session.id));
                sui.filters.confirm_delete = None;
            }
            if ui.button("Keep").clicked() {
                sui.filters.confirm_delete = None;
            }
        });
    }
}

/// The Undo bar of the last delete, and a file import under way.
pub fn pending_ui(ui: &mut Ui, state: &AppState, _sui: &mut SessionsUi, tx: &CommandSender) {
    if let Some(path) = &state.sessions.importing {
        // The import job's progress ("Importing name: 40%") once it reports, and its Cancel.
        let job = state
            .sessions
            .import_job
            .and_then(|id| state.workers.running.iter().find(|j| j.id == id));
        ui.horizontal_wrapped(|ui| {
            ui.spinner();
            match job.and_then(|j| j.progress.as_deref()) {
                Some(progress) => ui.label(progress),
                None => ui.label(format!("Importing {}…", path.display())),
            };
            if let Some(job) = job
                && ui
                    .button("Cancel")
                    .on_hover_text("Stop the import: nothing of it is kept")
                    .clicked()
            {
                tx.send(crate::app::AppCommand::CancelJob(job.id));
            }
        });
    }
    let Some(pending) = &state.sessions.pending_delete else {
        return;
    };
    ui.horizontal_wrapped(|ui| {
        ui.label(format!("Deleted #{} {}", pending.session, pending.name));
        if ui.button("Undo").clicked() {
            send(tx, SessionCommand::UndoDelete);
        }
    });
}
