//! The command sender: how panels ask for changes. Panels hold a [`CommandSender`] (cheap to
//! clone) and never mutate [`AppState`](super::AppState); the app drains the matching
//! [`CommandReceiver`] once per frame and applies each command with `AppState::handle`.
//! Modelled on rerun's `re_viewer_context::CommandSender`, with a bounded channel (a full queue
//! drops the command and logs it rather than growing without limit).

use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};

use super::command::AppCommand;

/// Commands a frame may queue before further ones are dropped (a frame queues a handful).
pub const COMMAND_QUEUE: usize = 1024;

/// Sends [`AppCommand`]s to the app layer.
#[derive(Clone)]
pub struct CommandSender {
    tx: SyncSender<AppCommand>,
    ctx: Option<egui::Context>,
}

impl std::fmt::Debug for CommandSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CommandSender")
    }
}

/// The receiving end, drained by the app once per frame.
#[derive(Debug)]
pub struct CommandReceiver {
    rx: Receiver<AppCommand>,
}

/// A connected sender/receiver pair; `ctx` (when given) is asked to repaint after each send so
/// a command queued outside a frame is applied promptly.
pub fn command_channel(ctx: Option<egui::Context>) -> (CommandSender, CommandReceiver) {
    let (tx, rx) = sync_channel(COMMAND_QUEUE);
    (CommandSender { tx, ctx }, CommandReceiver { rx })
}

impl CommandSender {
    /// Queues `command`; when the queue is full the command is dropped and logged.
    pub fn send(&self, command: AppCommand) {
        match self.tx.try_send(command) {
            Ok(()) => {
                if let Some(ctx) = &self.ctx {
                    ctx.request_repaint();
                }
            }
            Err(TrySendError::Full(command)) => {
                // Only the command's kind: its payload may hold a header value or a URL with
                // credentials.
                let text = format!("{command:?}");
                let kind = text
                    .split(['(', '{', ' '])
                    .next()
                    .unwrap_or_default()
                    .to_string();
                eprintln!("promptwire: command queue full, dropped a {kind} command");
            }
            Err(TrySendError::Disconnected(_)) => {}
        }
    }

    /// Queues an edit of the prompt.
    pub fn edit(&self, edit: super::PromptEdit) {
        self.send(AppCommand::Edit(Box::new(edit)));
    }
}

impl CommandReceiver {
    /// The next queued command, if any.
    pub fn try_recv(&self) -> Option<AppCommand> {
        self.rx.try_recv().ok()
    }
}
