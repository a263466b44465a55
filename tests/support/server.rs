//! A `promptwire` server process (`record`, `replay --listen`) started by a test: killed when the
//! guard is dropped, so a failing test leaves no process behind.

use std::process::{Child, Command, Stdio};

/// The child process, killed on drop unless it already exited.
pub struct Server(pub Child);

impl Server {
    /// Starts the `promptwire` binary with `args`, stdin closed, stdout and stderr piped.
    ///
    /// # Panics
    /// When the binary cannot be started.
    pub fn spawn(args: &[&str]) -> Self {
        Self(
            Command::new(env!("CARGO_BIN_EXE_promptwire"))
                .args(args)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn promptwire"),
        )
    }

    /// Sends SIGTERM (a clean stop).
    pub fn terminate(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.0.id().to_string()])
            .status()
            .expect("kill");
        assert!(status.success());
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}
