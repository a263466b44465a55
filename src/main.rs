//! The `promptwire` binary: with no arguments (or only `--db PATH`, the session database to open)
//! it opens the desktop workbench; with a subcommand
//! it is the command-line twin ([`promptwire::cli`]).

// Compiling, rendering and recording megabytes of JSON is allocation-heavy; mimalloc serves
// small allocations far faster than the system allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let db = promptwire::ui::window::db_argument(&args);
    if args.len() > 1 && db.is_none() {
        return promptwire::cli::run(args);
    }
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("promptwire")
            .with_inner_size([1400.0, 860.0])
            .with_min_inner_size([1024.0, 700.0])
            .with_drag_and_drop(true),
        ..Default::default()
    };
    let result = eframe::run_native(
        "promptwire",
        options,
        Box::new(move |cc| {
            Ok(Box::new(match db {
                Some(db) => promptwire::ui::PromptwireApp::on_db(cc, db),
                None => promptwire::ui::PromptwireApp::new(cc),
            }))
        }),
    );
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("promptwire: cannot open the window: {e}");
            eprintln!(
                "promptwire: the command line works without a display; see `promptwire --help`"
            );
            std::process::ExitCode::from(1)
        }
    }
}
