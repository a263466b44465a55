//! OpenTelemetry export controls (issue 33): the Record panel's "Also export to
//! OpenTelemetry" with the collector's endpoint and the live export's counters, the session
//! menu's "Export to OpenTelemetry…" entry, and its window (endpoint, content switch, Export,
//! progress and a result line). Reads `&AppState`, sends [`OtelCommand`]s.

use egui::Ui;

use crate::app::otel::OtelCommand;
use crate::app::{AppCommand, AppState, CommandSender};

fn send(tx: &CommandSender, command: OtelCommand) {
    tx.send(AppCommand::Otel(command));
}

/// The collector endpoint field (the setting, edited in place).
fn endpoint_field(ui: &mut Ui, state: &AppState, tx: &CommandSender) {
    let label = ui.label("OpenTelemetry endpoint");
    let mut endpoint = state.settings.otel.endpoint.clone();
    let field = ui
        .add(egui::TextEdit::singleline(&mut endpoint).hint_text("http://127.0.0.1:6006"))
        .labelled_by(label.id)
        .on_hover_text(
            "An OTLP/HTTP collector: Phoenix (http://127.0.0.1:6006), an OpenTelemetry \
             Collector (http://127.0.0.1:4318), Langfuse (…/api/public/otel). Headers for an \
             authenticated one come from OTEL_EXPORTER_OTLP_HEADERS.",
        );
    if field.changed() {
        send(tx, OtelCommand::SetEndpoint(endpoint));
    }
}

/// The Record panel's switch: also export each recorded request (from the proxy's next start).
pub fn record_option_ui(ui: &mut Ui, state: &AppState, tx: &CommandSender) {
    let running = state.record.proxy.is_active();
    ui.add_enabled_ui(!running, |ui| {
        let mut live = state.settings.otel.live;
        if ui
            .checkbox(&mut live, "Also export to OpenTelemetry")
            .on_hover_text("Each recorded request becomes a span as it completes")
            .changed()
        {
            send(tx, OtelCommand::SetLive(live));
        }
        if live {
            endpoint_field(ui, state, tx);
        }
    });
    if let Some(stats) = &state.otel.live {
        let text = format!("OpenTelemetry: {}", stats.line());
        if stats.failed_spans + stats.dropped_spans > 0 {
            ui.colored_label(ui.visuals().warn_fg_color, text);
        } else {
            ui.weak(text);
        }
    }
}

/// The session menu's entry.
pub fn session_menu_item(ui: &mut Ui, session: i64, tx: &CommandSender) {
    if ui.button("Export to OpenTelemetry…").clicked() {
        send(tx, OtelCommand::ShowExport(Some(session)));
    }
}

/// The export window, while a session's export is asked for.
pub fn export_window(ctx: &egui::Context, state: &AppState, tx: &CommandSender) {
    let Some(session) = state.otel.dialog else {
        return;
    };
    let mut open = true;
    egui::Window::new("Export to OpenTelemetry")
        .open(&mut open)
        .resizable(false)
        .collapsible(false)
        .show(ctx, |ui| {
            ui.label(format!(
                "Session #{session} as one trace: a span per request with its model, usage, \
                 cache tokens and the ledger's verdict."
            ));
            endpoint_field(ui, state, tx);
            let mut content = state.settings.otel.content;
            if ui
                .checkbox(&mut content, "Include message content (secrets redacted)")
                .changed()
            {
                send(tx, OtelCommand::SetContent(content));
            }
            let running = state.otel.job.is_some();
            ui.horizontal(|ui| {
                if ui
                    .add_enabled(!running, egui::Button::new("Export"))
                    .clicked()
                {
                    send(tx, OtelCommand::Export(vec![session]));
                }
                if running {
                    let (done, total) = state.otel.progress;
                    ui.add(
                        egui::ProgressBar::new(if total == 0 {
                            0.0
                        } else {
                            done as f32 / total as f32
                        })
                        .desired_width(160.0)
                        .text(format!("{done} of {total} sessions sent")),
                    );
                }
            });
            if let Some((line, failed)) = &state.otel.result {
                if *failed {
                    ui.colored_label(ui.visuals().error_fg_color, line);
                } else {
                    ui.label(line);
                }
            }
        });
    if !open {
        send(tx, OtelCommand::ShowExport(None));
    }
}
