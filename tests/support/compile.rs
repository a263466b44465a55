//! Compiling a Prompt with the target it records — what `promptwire compile` does without
//! flags (`core::target::resolve_target` and `compile_for`) — after checking that its file
//! format round-trips (save → load gives the same Prompt).

use pretty_assertions::assert_eq;
use promptwire::core::compile::CompiledRequest;
use promptwire::core::models::ModelCatalog;
use promptwire::core::prompt::Prompt;
use promptwire::core::target::{TargetOverrides, compile_for, resolve_target};

/// Compiles `prompt` with the dialect, provider (and its API-key variable), rules and auth it
/// records, after a save → load of its file.
///
/// # Panics
/// When the reloaded Prompt differs, its rules preset is unknown or the compile fails.
pub fn compile_recorded(prompt: &Prompt) -> CompiledRequest {
    let reloaded = Prompt::from_json_str(&prompt.to_json_pretty()).expect("saved prompt reloads");
    assert_eq!(&reloaded, prompt, "Prompt file format round trip");
    let target =
        resolve_target(&prompt.compile, &TargetOverrides::default()).expect("rules preset");
    let model = ModelCatalog::bundled().lookup(&prompt.model);
    compile_for(prompt, &model, &target).expect("compile")
}
