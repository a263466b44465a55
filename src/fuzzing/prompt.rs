//! Targets `import_body` (body import, what `promptwire import-body` does) and `compile_prompt`
//! (Prompt parsing and compile under every rules preset, provider, dialect, auth and view).
//!
//! Invariants checked:
//! - an imported body compiles back, under the target the Prompt records, to the same JSON
//!   value (the import's contract: whatever no preset reproduces is kept as an override);
//! - a Prompt file saves and loads back to the same Prompt;
//! - compiling several views at once gives what separate compiles give.

use serde_json::Value;

use super::{catalog, split_pair};
use crate::core::compile::{compile, compile_views};
use crate::core::import::{CapturedHeaders, import_request};
use crate::core::json_diff::align;
use crate::core::prompt::{AuthMode, Dialect, Prompt};
use crate::core::provider::{Provider, ProviderKind};
use crate::core::rules::CompileRules;
use crate::core::target::{TargetOverrides, compile_for, resolve_target};

/// Input: a captured body (JSON), optionally followed by [`super::SEPARATOR`] and the headers
/// captured with it (any format `import-body --headers` reads). Imports, then compiles back.
pub fn import_body(data: &[u8]) {
    let _ = try_import_body(data);
}

/// Input: a Prompt file. Parses it, then compiles it under every rules preset, provider kind,
/// dialect and auth mode, all views at once and each alone, and lines the views up as the
/// workbench does.
pub fn compile_prompt(data: &[u8]) {
    let _ = try_compile_prompt(data);
}

fn try_import_body(data: &[u8]) -> Result<(), String> {
    let (body, headers) = split_pair(data);
    let body: Value = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    let headers = match headers {
        Some(text) => {
            let text = std::str::from_utf8(text).map_err(|e| e.to_string())?;
            Some(CapturedHeaders::parse(text).map_err(|e| e.to_string())?)
        }
        None => None,
    };
    let outcome = import_request(&body, headers.as_ref(), catalog()).map_err(|e| e.to_string())?;
    let prompt = outcome.prompt;
    check_file_round_trip(&prompt);
    let target = resolve_target(&prompt.compile, &TargetOverrides::default())
        .expect("an imported Prompt records a known rules preset");
    let model = catalog().lookup(&prompt.model);
    let compiled = compile_for(&prompt, &model, &target)
        .expect("an imported Prompt compiles under the target it records");
    assert_eq!(
        Value::Object((*compiled.body).clone()),
        body,
        "the imported Prompt does not compile back to the body"
    );
    Ok(())
}

fn try_compile_prompt(data: &[u8]) -> Result<(), String> {
    let text = std::str::from_utf8(data).map_err(|e| e.to_string())?;
    let prompt = Prompt::from_json_str(text).map_err(|e| e.to_string())?;
    check_file_round_trip(&prompt);
    let model = catalog().lookup(&prompt.model);

    // What `promptwire compile` does without flags.
    if let Ok(target) = resolve_target(&prompt.compile, &TargetOverrides::default()) {
        let _ = compile_for(&prompt, &model, &target);
    }

    let providers = [
        ProviderKind::Openai,
        ProviderKind::Azure,
        ProviderKind::Compatible,
    ]
    .map(Provider::preset);
    let dialects = [Dialect::Auto, Dialect::Standard, Dialect::Lite];
    let views: Vec<(&Provider, Dialect)> = providers
        .iter()
        .flat_map(|p| dialects.iter().map(move |d| (p, *d)))
        .collect();
    for name in CompileRules::PRESETS {
        let rules = CompileRules::preset(name).expect("a listed preset exists");
        for auth in [AuthMode::ApiKey, AuthMode::Chatgpt] {
            let mut prompt = prompt.clone();
            prompt.compile.auth = auth;
            let Ok(all) = compile_views(&prompt, &model, &rules, &views) else {
                continue;
            };
            for (compiled, (provider, dialect)) in all.iter().zip(&views) {
                let alone = compile(&prompt, &model, provider, *dialect, &rules)
                    .expect("a view that compiles with the others compiles alone");
                assert_eq!(compiled, &alone, "compile_views differs from compile");
                let _ = (compiled.ws_frame(), compiled.headers_json());
            }
            let bodies: Vec<Value> = all
                .iter()
                .map(|c| Value::Object((*c.body).clone()))
                .collect();
            let _ = align(&bodies.iter().map(Some).collect::<Vec<_>>());
        }
    }
    Ok(())
}

/// A Prompt saves and loads back to itself.
fn check_file_round_trip(prompt: &Prompt) {
    let reloaded =
        Prompt::from_json_str(&prompt.to_json_pretty()).expect("a saved Prompt loads back");
    assert_eq!(
        &reloaded, prompt,
        "the Prompt file format does not round trip"
    );
}
