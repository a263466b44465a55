//! The session list: a search field (name, model, text inside bodies; applied on Enter), one
//! page of sessions, newest first (a subagent's session indented under its parent's), and the
//! paging buttons.

use egui::{Key, RichText, TextEdit, Ui};

use super::{SessionsUi, send};
use crate::app::session_view::{SESSIONS_PAGE, SessionCommand};
use crate::app::{AppState, CommandSender};
use crate::core::stream::limits::human_size;
use crate::store::nested;

/// How far a subagent's entry is indented under its parent, per level.
const AGENT_INDENT: f32 = 14.0;

/// Deepest indentation shown (a deeper subagent is drawn at this depth).
const MAX_AGENT_DEPTH: usize = 4;

/// Longest search text (it becomes a LIKE pattern over every stored item).
const MAX_SEARCH_CHARS: usize = 200;

/// Draws the list.
pub fn list_ui(ui: &mut Ui, state: &AppState, sui: &mut SessionsUi, tx: &CommandSender) {
    ui.add_space(4.0);
    let label = ui.strong("Search sessions");
    let response = ui
        .add(
            TextEdit::singleline(&mut sui.search)
                .hint_text("/ name, model, text")
                .char_limit(MAX_SEARCH_CHARS)
                .desired_width(f32::INFINITY),
        )
        .labelled_by(label.id);
    if sui.focus_search {
        response.request_focus();
        sui.focus_search = false;
    }
    if response.lost_focus() && ui.input(|i| i.key_pressed(Key::Enter)) {
        send(tx, SessionCommand::Search(sui.search.clone()));
    }
    if !state.sessions.search.is_empty() {
        ui.horizontal(|ui| {
            ui.label(RichText::new(format!("matching “{}”", state.sessions.search)).small());
            if ui.small_button("Clear").clicked() {
                sui.search.clear();
                send(tx, SessionCommand::Search(String::new()));
            }
        });
    }
    super::filters::session_filter_ui(ui, state, sui, tx);
    super::session_edit::pending_ui(ui, state, sui, tx);
    ui.separator();
    if state.sessions.db_path.is_none() {
        ui.label("No session database.");
        return;
    }
    if state.sessions.open.is_none()
        && let Some(error) = &state.sessions.error
    {
        ui.colored_label(ui.visuals().error_fg_color, error);
    }
    egui::ScrollArea::vertical()
        .id_salt("session_list_scroll")
        .auto_shrink(false)
        .max_height(ui.available_height() - 52.0)
        .show(ui, |ui| {
            if state.sessions.sessions.is_empty() {
                ui.weak("No sessions.");
            }
            // Each subagent under its parent (when both are on the page), indented, its kind
            // first; one whose parent is elsewhere names it.
            let sessions = &state.sessions.sessions;
            for (index, depth) in nested(sessions) {
                let session = &sessions[index];
                let kind = session.agent.as_ref().and_then(|a| a.kind.as_deref());
                let mut text = match (kind, depth, session.parent_session) {
                    (Some(kind), 0, Some(parent)) => format!("{kind} of #{parent} · "),
                    (Some(kind), _, _) => format!("{kind} · "),
                    (None, _, _) => String::new(),
                };
                text.push_str(&format!(
                    "#{} {} · {} req · {}",
                    session.id,
                    super::session_edit::shown_name(session),
                    session.requests,
                    session.model.as_deref().unwrap_or("?"),
                ));
                // Only recorded interruptions: a request without an answer yet may be live.
                if session.interrupted > 0 {
                    text.push_str(&format!(" · ! {} interrupted", session.interrupted));
                }
                let open = state.sessions.open == Some(session.id);
                // The name cut to the pane's width (the whole of it on hover), its date under it.
                let indent = AGENT_INDENT * depth.min(MAX_AGENT_DEPTH) as f32;
                let button = egui::Button::selectable(open, text.as_str())
                    .wrap_mode(egui::TextWrapMode::Truncate);
                let date = RichText::new(super::session_edit::date_text(session.created_us))
                    .small()
                    .weak();
                let entry = if depth == 0 {
                    let entry = ui.add(button).on_hover_text(&text);
                    ui.label(date);
                    entry
                } else {
                    // A subagent's entry, indented under its parent's.
                    let entry = ui
                        .horizontal(|ui| {
                            ui.add_space(indent);
                            ui.add(button).on_hover_text(&text)
                        })
                        .inner;
                    ui.horizontal(|ui| {
                        ui.add_space(indent);
                        ui.label(date);
                    });
                    entry
                };
                if entry.clicked() && !open {
                    send(tx, SessionCommand::Open(session.id));
                }
                super::session_edit::entry_ui(ui, &entry, session, sui, tx);
            }
        });
    ui.horizontal(|ui| {
        let offset = state.sessions.page_offset;
        if ui
            .add_enabled(offset > 0, egui::Button::new("‹ Newer"))
            .clicked()
        {
            send(
                tx,
                SessionCommand::Page(offset.saturating_sub(SESSIONS_PAGE)),
            );
        }
        if ui
            .add_enabled(state.sessions.more, egui::Button::new("Older ›"))
            .clicked()
        {
            send(tx, SessionCommand::Page(offset + SESSIONS_PAGE));
        }
        let shown = state.sessions.sessions.len() as u64;
        if shown > 0 {
            ui.weak(format!("{}–{}", offset + 1, offset + shown));
        }
    });
    // The database and its size on a line of their own, cut to the pane (whole path on hover):
    // beside the page buttons the size was cut off at the list's default width.
    if let Some(path) = &state.sessions.db_path {
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        let size = state
            .sessions
            .db_bytes
            .map(|bytes| format!(" · {} on disk", human_size(bytes)))
            .unwrap_or_default();
        ui.add(
            egui::Label::new(egui::RichText::new(format!("Database: {name}{size}")).weak())
                .truncate(),
        )
        .on_hover_text(path.display().to_string());
    }
}
