//! A named pipe (FIFO) that no program writes to, given to a command that reads a file
//! (`compile`, `stream`, `sessions import`): the command does not hang in `open` but ends within
//! seconds with one line naming the pipe; a FIFO whose writer comes a moment later is still read.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;

fn scratch_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("harden_fifo")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(status.success(), "mkfifo failed");
}

fn spawn(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn promptwire")
}

/// Waits at most `within` for `child`; a child still running then is killed and the test fails.
fn finish_within(mut child: Child, within: Duration) -> Output {
    let start = Instant::now();
    while child.try_wait().expect("try_wait").is_none() {
        if start.elapsed() > within {
            let _ = child.kill();
            let _ = child.wait();
            panic!("still running after {within:?}: it hangs on the FIFO");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

#[cfg(unix)]
#[test]
fn a_fifo_without_a_writer_does_not_hang_a_command() {
    let dir = scratch_dir("no_writer");
    let fifo = dir.join("pipe");
    mkfifo(&fifo);
    let fifo_arg = fifo.display().to_string();
    let db = dir.join("s.db").display().to_string();
    let shown =
        format!("{fifo_arg} is a named pipe that nothing was written to within 2 s (no writer)");
    for args in [
        vec!["compile", fifo_arg.as_str()],
        vec!["stream", fifo_arg.as_str()],
        vec!["sessions", "import", fifo_arg.as_str(), "--db", db.as_str()],
    ] {
        let out = finish_within(spawn(&args), Duration::from_secs(10));
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let stream = args[0] == "stream";
        let expected = if stream {
            format!("promptwire: reading {fifo_arg}: {shown}")
        } else {
            format!("promptwire: cannot read {fifo_arg}: {shown}")
        };
        assert_eq!(
            (out.status.code(), stderr.lines().last().map(str::to_string)),
            (Some(1), Some(expected)),
            "{args:?}: {stderr}"
        );
    }
}

#[cfg(unix)]
#[test]
#[allow(
    clippy::disallowed_methods,
    reason = "the FIFO's writer runs beside the command under test"
)]
fn a_fifo_whose_writer_comes_later_is_read() {
    let dir = scratch_dir("late_writer");
    let fifo = dir.join("pipe");
    mkfifo(&fifo);
    let prompt =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/prompts/hello.json"))
            .expect("hello prompt");
    let child = spawn(&["compile", &fifo.display().to_string()]);
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            let mut pipe = std::fs::OpenOptions::new()
                .write(true)
                .open(&fifo)
                .expect("open the FIFO for writing");
            pipe.write_all(&prompt).expect("write");
        })
    };
    let out = finish_within(child, Duration::from_secs(10));
    writer.join().expect("writer");
    let expected = Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .arg("compile")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/prompts/hello.json"))
        .output()
        .expect("compile the file");
    assert_eq!(
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned()
        ),
        (
            Some(0),
            String::from_utf8_lossy(&expected.stdout).into_owned()
        )
    );
}
