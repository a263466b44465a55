//! Running the `promptwire` binary as a user does, for the command-line tests.

use std::io::Write as _;
use std::process::{Command, Output, Stdio};

/// Runs `promptwire args…`, feeding `stdin` (if any; else an empty stdin), and waits for it.
///
/// # Panics
/// When the binary cannot be spawned or waited for.
pub fn run(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn promptwire");
    if let Some(input) = stdin {
        // The command may stop reading early (size limit): a broken pipe here is expected.
        let _ = child.stdin.take().expect("stdin").write_all(input);
    }
    drop(child.stdin.take());
    child.wait_with_output().expect("wait")
}
