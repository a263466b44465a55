//! Every file argument is bounded while it is read, not by the size the file reports: devices
//! (`/dev/zero`) and pipes (a spawned `yes`) stop at the limit with one clear line and exit 1,
//! quickly and without reading the endless source to the end; `--max-bytes u64::MAX` does not
//! wrap to a zero-byte read; and reading up to the limit costs about the limit in memory, not
//! the doubled buffer `read_to_end` grows.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;

use crate::support::rss;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_promptwire"))
}

fn scratch_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("cli_bounded_input")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Runs `cmd` with its standard input from `stdin`, and checks it took under 20 s.
fn run_timed(mut cmd: Command, stdin: Stdio) -> Output {
    let start = Instant::now();
    let out = cmd
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("run promptwire");
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "took {:?}",
        start.elapsed()
    );
    out
}

fn assert_user_error(out: &Output, expected: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    assert_eq!(stderr.lines().collect::<Vec<_>>(), vec![expected]);
}

fn hello() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/prompts/hello.json")
        .display()
        .to_string()
}

#[test]
fn a_device_stops_at_the_limit() {
    let mut cmd = bin();
    cmd.args(["compile", "/dev/zero", "--max-bytes", "1000"]);
    assert_user_error(
        &run_timed(cmd, Stdio::null()),
        "promptwire: /dev/zero is larger than the limit of 1000 bytes (raise it with --max-bytes)",
    );
    // The default limit (32 MiB) holds as well.
    let mut cmd = bin();
    cmd.args(["compile", "/dev/zero"]);
    assert_user_error(
        &run_timed(cmd, Stdio::null()),
        "promptwire: /dev/zero is larger than the limit of 32.0 MiB (raise it with --max-bytes)",
    );
    let mut cmd = bin();
    cmd.args(["diff", "/dev/zero", &hello(), "--max-bytes", "4096"]);
    assert_user_error(
        &run_timed(cmd, Stdio::null()),
        "promptwire: /dev/zero is larger than the limit of 4.0 KiB (raise it with --max-bytes)",
    );
}

#[test]
fn sessions_import_of_a_device_stops_at_the_limit() {
    let dir = scratch_dir("sessions");
    let db = dir.join("s.db");
    let mut cmd = bin();
    cmd.args(["sessions", "import", "/dev/zero", "--max-bytes", "65536"])
        .arg("--db")
        .arg(&db);
    assert_user_error(
        &run_timed(cmd, Stdio::null()),
        "promptwire: /dev/zero is larger than the limit of 64.0 KiB (raise it with --max-bytes)",
    );
    // Nothing was imported.
    let out = bin()
        .args(["sessions", "list", "--json", "--db"])
        .arg(&db)
        .output()
        .expect("list");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "[]\n");
}

#[test]
fn an_endless_pipe_on_stdin_stops_at_the_limit() {
    let mut yes = Command::new("yes")
        .arg("[")
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn yes");
    let pipe = yes.stdout.take().expect("yes stdout");
    let mut cmd = bin();
    cmd.args(["import-body", "-", "--max-bytes", "100000"]);
    let out = run_timed(cmd, Stdio::from(pipe));
    yes.kill().expect("stop yes");
    yes.wait().expect("reap yes");
    assert_user_error(
        &out,
        "promptwire: standard input is larger than the limit of 97.7 KiB (raise it with --max-bytes)",
    );
}

#[test]
fn an_endless_pipe_as_a_path_stops_at_the_limit() {
    // Exactly the shell's `import-body <(yes '[')`: a /dev/fd path that reports size 0.
    let script = format!(
        "exec '{}' import-body <(yes '[') --max-bytes 2048",
        env!("CARGO_BIN_EXE_promptwire")
    );
    let mut cmd = Command::new("bash");
    cmd.args(["-c", &script]);
    let out = run_timed(cmd, Stdio::null());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    let line = stderr.trim_end();
    let path = line
        .strip_prefix("promptwire: ")
        .and_then(|l| {
            l.strip_suffix(" is larger than the limit of 2.0 KiB (raise it with --max-bytes)")
        })
        .unwrap_or_else(|| panic!("unexpected stderr: {stderr}"));
    assert!(path.starts_with("/dev/fd/"), "{path}");
    assert_eq!(stderr.lines().count(), 1);
}

#[test]
fn the_largest_limit_does_not_wrap_to_zero() {
    let body = std::fs::read(hello()).expect("read hello.json");
    let expected = bin().args(["compile", &hello()]).output().expect("compile");
    assert_eq!(expected.status.code(), Some(0));
    let mut child = bin()
        .args(["compile", "-", "--max-bytes", "18446744073709551615"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(&body)
        .expect("write body");
    let out = child.wait_with_output().expect("wait");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&expected.stdout)
    );
}

/// Reading a device up to a 128 MiB limit holds about the limit, not the 256 MiB buffer (and the
/// copies of each doubling) `read_to_end` grew for the byte past it: 2.66 GB for 1 GiB before.
#[test]
fn reading_up_to_the_limit_costs_about_the_limit() {
    const LIMIT: u64 = 128 * rss::MIB;
    let dir = scratch_dir("memory");
    let mut cmd = bin();
    cmd.args(["sessions", "import", "/dev/zero", "--max-bytes"])
        .arg(LIMIT.to_string())
        .arg("--db")
        .arg(dir.join("m.db"));
    let (out, peak) = rss::run_measured(cmd);
    assert_user_error(
        &out,
        "promptwire: /dev/zero is larger than the limit of 128.0 MiB (raise it with --max-bytes)",
    );
    // The limit once, a little of it again at most, and the binary's own footprint.
    let bound = LIMIT + LIMIT / 4 + rss::BASELINE;
    assert!(
        peak > LIMIT && peak <= bound,
        "peak RSS {} MiB, bound {} MiB",
        peak >> 20,
        bound >> 20
    );
}
