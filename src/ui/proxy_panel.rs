//! The Record panel (issue 11): a right-hand panel, opened with the Record toggle beside the
//! Workbench | Sessions tabs, as a Proxyman / mitmproxy user expects the capture switch next to
//! the flow list. It starts and stops the recording proxy (listen address, loopback by default
//! with a warning for any other; upstream from a provider preset or typed), shows where it
//! listens, how many requests it saw and how many failed, and its notes; an upstream behind a
//! private CA is trusted through an upstream CA file (kept in the settings, as `record
//! --upstream-ca` takes it; a file that cannot be used is the panel's error and nothing
//! starts). Under it, what to paste into a client (Codex's `config.toml` entry or `codex -c …`,
//! `OPENAI_BASE_URL`, a curl line: `core::setup_lines`, as `promptwire record` prints them), each
//! with a Copy button. The requests themselves appear live in the Traffic view. Below, the replay endpoint serves the session open in the
//! Sessions view at a chosen pace. Reads `&AppState`, sends [`RecordCommand`]s.

use egui::{RichText, Ui};

use crate::app::proxy::{RecordCommand, ServerKind, ServerView, is_exposed};
use crate::app::session_view::{MainView, SessionCommand};
use crate::app::{AppCommand, AppState, CommandSender};
use crate::transport::replay::Timing;
use crate::ui::widgets::count;

/// The default listen address (loopback; a fixed port so a client's config can name it).
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8787";
/// The default listen address of the replay endpoint.
pub const DEFAULT_REPLAY_LISTEN: &str = "127.0.0.1:8788";

/// The Record panel's widget state.
#[derive(Debug)]
pub struct RecordUi {
    /// The panel is shown.
    pub open: bool,
    /// Proxy listen address being typed.
    pub listen: String,
    /// Upstream base URL being typed (or filled from a preset).
    pub upstream: String,
    /// Upstream CA file being typed (or chosen with Browse…); empty: none.
    pub upstream_ca: String,
    /// The settings' change count (`RecordState::upstream_ca_changes`) `upstream_ca` was last
    /// filled from; `None`: not yet (the saved setting is shown on the first frame).
    pub upstream_ca_seen: Option<u64>,
    /// Replay endpoint listen address.
    pub replay_listen: String,
    /// Replay pace.
    pub timing: Timing,
}

impl Default for RecordUi {
    fn default() -> Self {
        Self {
            open: false,
            listen: DEFAULT_LISTEN.to_string(),
            upstream: "https://api.openai.com/v1".to_string(),
            upstream_ca: String::new(),
            upstream_ca_seen: None,
            replay_listen: DEFAULT_REPLAY_LISTEN.to_string(),
            timing: Timing::Original,
        }
    }
}

/// The Record toggle (shows whether the proxy runs).
pub fn record_toggle(ui: &mut Ui, state: &AppState, record: &mut RecordUi) {
    ui.separator();
    let text = if state.record.proxy.is_active() {
        RichText::new("Record").color(ui.visuals().error_fg_color)
    } else {
        RichText::new("Record")
    };
    if ui
        .selectable_label(record.open, text)
        .on_hover_text("Record a real client through a local proxy, or replay a session to it")
        .clicked()
    {
        record.open = !record.open;
    }
}

/// The panel's contents.
pub fn record_panel_ui(
    ui: &mut Ui,
    state: &AppState,
    record: &mut RecordUi,
    limits_open: &mut bool,
    tx: &CommandSender,
) {
    egui::ScrollArea::vertical().show(ui, |ui| {
        ui.heading("Recording proxy");
        proxy_section(ui, state, record, tx);
        ui.horizontal_wrapped(|ui| {
            super::limits_window::limits_button(ui, state, limits_open);
            ui.weak(limits_line(state));
        });
        ui.separator();
        ui.heading("Replay endpoint");
        replay_section(ui, state, record, tx);
    });
}

/// What the recording keeps of each answer.
fn limits_line(state: &AppState) -> String {
    let limits = state.settings.limits.clamped();
    format!(
        "records up to {} MiB per event, {} MiB per answer",
        limits.max_event_mib, limits.max_response_mib
    )
}

fn proxy_section(ui: &mut Ui, state: &AppState, record: &mut RecordUi, tx: &CommandSender) {
    let proxy = &state.record.proxy;
    ui.add_enabled_ui(!proxy.is_active(), |ui| {
        let label = ui.label("Listen address");
        ui.text_edit_singleline(&mut record.listen)
            .labelled_by(label.id);
        listen_warning(ui, &record.listen);
        ui.horizontal(|ui| {
            ui.label("Upstream");
            egui::ComboBox::from_id_salt("upstream_preset")
                .selected_text("from provider")
                .show_ui(ui, |ui| {
                    for preset in &state.settings.providers {
                        if ui.selectable_label(false, &preset.label).clicked() {
                            record.upstream = preset.provider.base_url.clone();
                        }
                    }
                });
        });
        let label = ui.label("Upstream URL");
        ui.add(
            egui::TextEdit::singleline(&mut record.upstream).hint_text("https://api.openai.com/v1"),
        )
        .labelled_by(label.id);
        upstream_ca_field(ui, state, record, tx);
    });
    super::otel_export::record_option_ui(ui, state, tx);
    if proxy.is_active() {
        if ui.button("Stop proxy").clicked() {
            tx.send(AppCommand::Record(RecordCommand::Stop(ServerKind::Proxy)));
        }
    } else if ui.button("Start proxy").clicked() {
        tx.send(AppCommand::Record(RecordCommand::StartProxy {
            listen: record.listen.clone(),
            upstream: record.upstream.clone(),
        }));
    }
    server_state(ui, proxy, "Point the client's base_url at");
    if proxy.is_active() && state.browser.view != MainView::Traffic {
        // The requests it handles are listed there as they pass (Ctrl+3).
        let shown = match state.traffic.len() {
            0 => "Show the Traffic view".to_string(),
            n => format!("Show the Traffic view ({})", count(n as u64, "request")),
        };
        let link = ui
            .link(shown)
            .on_hover_text("Every request the proxy handles, live, newest at the top (Ctrl+3)");
        link.widget_info(|| {
            egui::WidgetInfo::labeled(egui::accesskit::Role::Link, true, "Show the Traffic view")
        });
        if link.clicked() {
            tx.send(AppCommand::Sessions(SessionCommand::ShowView(
                MainView::Traffic,
            )));
        }
    }
    setup_ui(ui, proxy, &record.listen, tx);
}

/// What to paste into a client, for the address the proxy listens on (or, before it starts,
/// the one typed): each snippet of `core::setup_lines` wrapped whole (the URL is never cut) with
/// a Copy button.
fn setup_ui(ui: &mut Ui, proxy: &ServerView, listen: &str, tx: &CommandSender) {
    let running = proxy.addr.filter(|_| proxy.is_active());
    let typed = listen
        .trim()
        .parse::<std::net::SocketAddr>()
        .ok()
        .filter(|a| a.port() != 0);
    let Some(addr) = running.or(typed) else {
        return;
    };
    egui::CollapsingHeader::new("Point a client here")
        .id_salt("client_setup")
        .default_open(true)
        .show(ui, |ui| {
            if running.is_none() {
                ui.weak("For the address above, once the proxy runs:");
            }
            for snippet in crate::core::setup_lines::setup_snippets(addr) {
                snippet_ui(ui, &snippet, tx);
            }
        });
}

/// One snippet: its title and a Copy button, then its text (monospace, wrapped, selectable).
fn snippet_ui(ui: &mut Ui, snippet: &crate::core::setup_lines::SetupSnippet, tx: &CommandSender) {
    ui.horizontal(|ui| {
        let copy = ui.small_button("Copy");
        let label = format!("Copy {}", snippet.title);
        copy.widget_info(|| {
            egui::WidgetInfo::labeled(egui::accesskit::Role::Button, true, label.clone())
        });
        if copy
            .on_hover_text(format!("Copy this to the clipboard: {}", snippet.title))
            .clicked()
        {
            ui.ctx().copy_text(snippet.text.clone());
            tx.send(AppCommand::Notify(format!("Copied: {}", snippet.title)));
        }
        ui.add(egui::Label::new(RichText::new(snippet.title).strong()).wrap());
    });
    // Wrapped inside the frame (its margins inside the pane: nothing runs past its edge).
    egui::Frame::group(ui.style()).show(ui, |ui| {
        ui.add(egui::Label::new(RichText::new(&snippet.text).monospace()).wrap());
    });
}

/// The upstream CA file: a path typed (kept in the settings as it changes) or chosen with
/// Browse…, which fills the field from the settings.
fn upstream_ca_field(ui: &mut Ui, state: &AppState, record: &mut RecordUi, tx: &CommandSender) {
    let changes = state.record.upstream_ca_changes;
    if record.upstream_ca_seen != Some(changes) {
        record.upstream_ca = state
            .settings
            .upstream_ca
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        record.upstream_ca_seen = Some(changes);
    }
    let label = ui.label("Upstream CA file");
    // Browse… at the right, the field in the rest: the row never runs past the pane (a wider
    // row widened the whole panel's content, and its other lines were cut at the edge).
    let row = egui::vec2(ui.available_width(), ui.spacing().interact_size.y);
    ui.allocate_ui_with_layout(
        row,
        egui::Layout::right_to_left(egui::Align::Center),
        |ui| {
            if ui.button("Browse…").clicked() {
                tx.send(AppCommand::Record(RecordCommand::BrowseUpstreamCa));
            }
            let field = ui
                .add(
                    egui::TextEdit::singleline(&mut record.upstream_ca)
                        .hint_text("PEM file of a private CA (optional)")
                        .desired_width(ui.available_width()),
                )
                .labelled_by(label.id)
                .on_hover_text(
                    "Root certificates trusted for the upstream besides the web's: an upstream \
                 behind a private or corporate CA (record --upstream-ca)",
                );
            if field.changed() {
                tx.send(AppCommand::Record(RecordCommand::SetUpstreamCa(
                    record.upstream_ca.clone(),
                )));
            }
        },
    );
}

fn replay_section(ui: &mut Ui, state: &AppState, record: &mut RecordUi, tx: &CommandSender) {
    let replay = &state.record.replay;
    let session = state.sessions.open;
    // A running endpoint names the session it serves (fixed at its start), not the one open
    // in the Sessions view now.
    match (replay.is_active(), replay.serving, session) {
        (true, Some(id), _) => ui.label(format!("Serves session #{id}")),
        (_, _, Some(id)) => ui.label(format!("Will serve session #{id} (open in Sessions)")),
        _ => ui.weak("Open a session in the Sessions view to replay it"),
    };
    ui.add_enabled_ui(!replay.is_active(), |ui| {
        ui.horizontal(|ui| {
            let label = ui.label("Replay listen address");
            ui.text_edit_singleline(&mut record.replay_listen)
                .labelled_by(label.id);
        });
        listen_warning(ui, &record.replay_listen);
        ui.horizontal_wrapped(|ui| {
            ui.label("Timing");
            for (timing, label) in [
                (Timing::Original, "as recorded"),
                (Timing::Speed(4.0), "4× faster"),
                (Timing::Instant, "instant (no waits)"),
            ] {
                if ui
                    .selectable_label(record.timing == timing, label)
                    .clicked()
                {
                    record.timing = timing;
                }
            }
        });
    });
    if replay.is_active() {
        if ui.button("Stop replay endpoint").clicked() {
            tx.send(AppCommand::Record(RecordCommand::Stop(ServerKind::Replay)));
        }
    } else if let Some(session) = session
        && ui.button("Start replay endpoint").clicked()
    {
        tx.send(AppCommand::Record(RecordCommand::StartReplay {
            session,
            listen: record.replay_listen.clone(),
            timing: record.timing,
        }));
    }
    server_state(ui, replay, "Point the client at");
}

fn listen_warning(ui: &mut Ui, listen: &str) {
    if is_exposed(listen) {
        ui.colored_label(
            ui.visuals().warn_fg_color,
            "Warning: not a loopback address: other machines can reach it and its recordings",
        );
    }
}

fn server_state(ui: &mut Ui, server: &ServerView, point: &str) {
    if let Some(e) = &server.error {
        ui.colored_label(
            ui.visuals().error_fg_color,
            crate::core::redact::redacted(e).into_owned(),
        );
    }
    match (&server.base_url, server.is_active()) {
        (Some(url), true) => {
            ui.label(format!(
                "Listening on {}",
                server.addr.map_or_else(String::new, |a| a.to_string())
            ));
            // Wrapped, never cut (a long address ran past the pane's edge).
            ui.horizontal_wrapped(|ui| {
                ui.label(point);
                ui.add(egui::Label::new(RichText::new(url).code()).wrap());
            });
        }
        (None, true) => {
            ui.spinner();
        }
        _ => {
            // As many lines as a running server shows: starting it moves nothing below.
            ui.weak("Stopped");
            ui.horizontal_wrapped(|ui| {
                ui.weak(format!("{point}: (start it first)"));
            });
        }
    }
    ui.label(format!(
        "{} · {} in flight · {}",
        count(server.requests, "request"),
        server.requests.saturating_sub(server.finished),
        count(server.errors, "error")
    ));
    if server.incomplete > 0 {
        ui.colored_label(
            ui.visuals().warn_fg_color,
            format!(
                "{} recorded incompletely (the database was busy or full)",
                count(server.incomplete, "request")
            ),
        )
        .on_hover_text("The client got every byte; the recording of these requests lost events or could not be stored. The request rows say what was lost and why.");
    }
    if server.upgrade_failures > 0 {
        ui.colored_label(
            ui.visuals().warn_fg_color,
            format!(
                "{} failed (the client was told; see the notes below)",
                count(server.upgrade_failures, "WebSocket upgrade")
            ),
        )
        .on_hover_text("The upstream refused the upgrade, could not be reached, or the client's handshake was bad. Codex falls back to HTTP or retries.");
    }
    if let Some(limits) = &server.limits {
        ui.weak(format!(
            "Limits: head {} s · body pause {} s · whole request {} s · {} connections, {} per peer",
            limits.header_timeout.as_secs(),
            limits.body_timeout.as_secs(),
            limits.request_deadline.as_secs(),
            limits.max_connections,
            limits.max_per_peer,
        ))
        .on_hover_text("A client that sends too slowly is answered 408; when every slot is taken, a new connection takes the slot of one that waited longest without a request, so idle or dripping connections cannot lock clients out.");
    }
    if !server.passthrough.is_empty() {
        let total: u64 = server.passthrough.iter().map(|(_, n)| n).sum();
        let kinds: Vec<String> = server
            .passthrough
            .iter()
            .map(|(kind, n)| format!("{kind} ×{n}"))
            .collect();
        ui.label(format!(
            "{} passed through, not recorded: {}",
            count(total, "request"),
            kinds.join(" · ")
        ))
        .on_hover_text("Only POST …/responses and …/responses/compact are recorded; these other endpoints your client called were relayed unchanged.");
    }
    if let Some(problem) = &server.store_problem {
        ui.colored_label(
            ui.visuals().warn_fg_color,
            format!("Recording delayed: {problem}"),
        )
        .on_hover_text("The proxy keeps forwarding at full speed; what it records waits in memory and is written when the database frees up.");
    }
    for note in &server.notes {
        ui.label(RichText::new(crate::core::redact::redacted(note).into_owned()).small());
    }
}
