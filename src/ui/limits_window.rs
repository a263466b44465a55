//! The Limits window: the largest event and answer, the idle timeout, the overall deadline and
//! the retries that Send, Re-send and the recording proxy apply (the CLI's `--max-event-bytes`,
//! `--max-response-bytes`, `--idle-timeout-secs`, `--deadline`, `--max-retries`).

use egui::{DragValue, Ui};

use crate::app::limits::Limits;
use crate::app::{AppCommand, AppState, CommandSender};

/// A "Limits…" button that opens or closes the window; its tooltip lists the limits in force.
pub fn limits_button(ui: &mut Ui, state: &AppState, open: &mut bool) {
    let button = ui.selectable_label(*open, "Limits…").on_hover_text(format!(
        "Limits on what comes back: {}",
        state.settings.limits.summary()
    ));
    if button.clicked() {
        *open = !*open;
    }
}

/// The window (when `open`); every change applies at once (to the next send or proxy start).
pub fn limits_window(ctx: &egui::Context, state: &AppState, open: &mut bool, tx: &CommandSender) {
    let mut limits = state.settings.limits;
    egui::Window::new("Limits")
        .open(open)
        .resizable(false)
        .collapsible(false)
        .show(ctx, |ui| {
            egui::Grid::new("limits_grid")
                .num_columns(2)
                .spacing([12.0, 6.0])
                .show(ui, |ui| {
                    row(
                        ui,
                        "Largest event",
                        &mut limits.max_event_mib,
                        Limits::MIB_RANGE,
                        " MiB",
                    );
                    let answer = &mut limits.max_response_mib;
                    row(ui, "Largest answer", answer, Limits::MIB_RANGE, " MiB");
                    let idle = &mut limits.idle_timeout_secs;
                    row(ui, "Idle timeout", idle, Limits::IDLE_RANGE, " s");
                    let deadline = &mut limits.deadline_mins;
                    row(
                        ui,
                        "Send deadline",
                        deadline,
                        Limits::DEADLINE_RANGE,
                        " min",
                    );
                    row(
                        ui,
                        "Retries",
                        &mut limits.max_retries,
                        Limits::RETRY_RANGE,
                        "",
                    );
                });
            ui.add_space(4.0);
            ui.weak(
                "An answer past a size limit, the idle timeout or the deadline ends as \
                 limit_exceeded or timeout, with what arrived kept and recorded. Through the \
                 recording proxy the client still receives every byte; only the recording stops.",
            );
            if ui.button("Defaults").clicked() {
                limits = Limits::default();
            }
        });
    if limits != state.settings.limits {
        tx.send(AppCommand::SetLimits(limits));
    }
}

/// One labelled number in `range`; the value widget is labelled by the row's label (for screen
/// readers and tests).
fn row<N: egui::emath::Numeric>(
    ui: &mut Ui,
    label: &str,
    value: &mut N,
    range: std::ops::RangeInclusive<N>,
    suffix: &str,
) {
    let label = ui.label(label);
    ui.add(DragValue::new(value).range(range).suffix(suffix))
        .labelled_by(label.id);
    ui.end_row();
}
