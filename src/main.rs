//! The `promptwire` binary: a thin shell over [`promptwire::cli`].

fn main() -> std::process::ExitCode {
    promptwire::cli::run(std::env::args_os())
}
