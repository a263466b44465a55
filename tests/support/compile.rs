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

/// A one-message Prompt (`user_text`, gpt-5.5, "Answer briefly.") compiled by `rules` for a
/// compatible provider at `base_url`, with its headers resolved (no secret): what the live-send
/// tests send to their loopback upstreams.
///
/// # Panics
/// When the compile or the headers fail.
pub fn compatible_request(
    base_url: &str,
    user_text: &str,
    rules: &promptwire::core::rules::CompileRules,
) -> (CompiledRequest, reqwest::header::HeaderMap) {
    use promptwire::core::prompt::Dialect;
    use promptwire::core::provider::{Provider, ProviderKind};
    let prompt = Prompt::from_json_str(
        &serde_json::json!({"model": "gpt-5.5", "base_instructions": "Answer briefly.",
            "input": [{"type": "message", "role": "user",
                       "content": [{"type": "input_text", "text": user_text}]}]})
        .to_string(),
    )
    .expect("prompt");
    let model = ModelCatalog::bundled().lookup(&prompt.model);
    let mut provider = Provider::preset(ProviderKind::Compatible);
    provider.base_url = base_url.to_string();
    let request =
        promptwire::core::compile::compile(&prompt, &model, &provider, Dialect::Auto, rules)
            .expect("compile");
    let headers = promptwire::transport::resolve_headers(&request, |_| None).expect("no secrets");
    (request, headers)
}
