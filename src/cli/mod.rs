//! The command-line twin: argument parsing and dispatch to one module per subcommand. Every
//! subcommand prints machine-readable output on stdout; a user error is one line on stderr and
//! exit status 1; never a panic.

mod anatomy;
mod ca;
mod choices;
mod compile;
mod diff;
mod import;
mod input;
mod limits;
mod otlp;
mod out_lines;
mod pipe;
mod record;
mod render;
mod replay;
mod send;
mod sessions;
mod shown;
mod stream;

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Default limit on the size of a Prompt file or captured body.
pub const DEFAULT_MAX_BYTES: u64 = 32 * 1024 * 1024;

#[derive(Debug, Parser)]
#[command(
    name = "promptwire",
    version,
    about = "See exactly what an agent sends to the OpenAI Responses API, and what comes back."
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the exact request a Prompt compiles to (body, WebSocket frame or headers).
    Compile(compile::CompileArgs),
    /// Print the Prompt that compiles back to a captured request body.
    ImportBody(import::ImportArgs),
    /// Cache-prefix analysis across request bodies: where the prefix broke, why, what it cost.
    Diff(diff::DiffArgs),
    /// What fills each request's context, by source and tool; unused tools, compactions, agents.
    Anatomy(anatomy::AnatomyArgs),
    /// The prompt as the server renders it: each request's segments, their sources and tokens.
    Render(render::RenderArgs),
    /// Decode and map a recorded SSE stream: one line per raw event, then the outcome.
    Stream(stream::StreamArgs),
    /// Send a Prompt live and print the streamed timeline and outcome.
    Send(send::SendArgs),
    /// Browse, export, import and delete recorded sessions.
    Sessions(sessions::SessionsArgs),
    /// Recording proxy: point a real client at it; every request and event is recorded.
    Record(record::RecordArgs),
    /// Replay a recorded session: print its streams with their timing, or serve it (--listen).
    Replay(replay::ReplayArgs),
}

/// Parses `args` and runs the subcommand; returns the process exit code.
pub fn run<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(err) => {
            let code = if err.use_stderr() { 1 } else { 0 };
            let _ = err.print();
            return ExitCode::from(code);
        }
    };
    let result = match cli.command {
        Some(Command::Compile(args)) => compile::run(&args),
        Some(Command::ImportBody(args)) => import::run(&args),
        Some(Command::Diff(args)) => diff::run(&args),
        Some(Command::Anatomy(args)) => anatomy::run(&args),
        Some(Command::Render(args)) => render::run(&args),
        Some(Command::Stream(args)) => stream::run(&args),
        Some(Command::Send(args)) => send::run(&args),
        Some(Command::Sessions(args)) => sessions::run(&args),
        Some(Command::Record(args)) => record::run(&args),
        Some(Command::Replay(args)) => replay::run(&args),
        None => {
            use clap::CommandFactory as _;
            let _ = Cli::command().print_help();
            Ok(())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            let message = format!("{err:#}");
            eprintln!("promptwire: {}", shown::shown(&message));
            ExitCode::from(1)
        }
    }
}

/// A reader that closed our standard output early (`| head`) is not an error.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
