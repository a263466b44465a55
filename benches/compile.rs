//! Benchmark: one 1 MiB prompt with 500 input items compiled to all six views (standard and Lite
//! × OpenAI, Azure, compatible) under every rules preset. Target: ≤ 10 ms for all six. The body's
//! object form is built only when read (`BodyValue`), so this measures the bytes a view sends.

use criterion::{Criterion, criterion_group, criterion_main};

// The same allocator as the promptwire binary.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
use promptwire::core::compile::{compile, compile_views};
use promptwire::core::models::ModelCatalog;
use promptwire::core::prompt::{Dialect, Prompt};
use promptwire::core::provider::{Provider, ProviderKind};
use promptwire::core::rules::CompileRules;
use serde_json::json;

/// A prompt of about 1 MiB: 20 tools and 500 items (messages, reasoning, calls, outputs).
fn big_prompt() -> Prompt {
    let mut items = Vec::new();
    let filler = "The build log shows a warning about an unused import in src/lib.rs. ".repeat(55);
    for i in 0..125 {
        items.push(
            json!({"type":"message","id":format!("msg_{i}"),"role":"user",
            "content":[{"type":"input_text","text":format!("Step {i}: {filler}")}]}),
        );
        items.push(json!({"type":"reasoning","id":format!("rs_{i}"),
            "summary":[{"type":"summary_text","text":"**Checking** the next file"}],
            "content":null,"encrypted_content":"gAAAA".repeat(60)}));
        items.push(
            json!({"type":"function_call","status":"completed","id":format!("fc_{i}"),
            "name":"shell","arguments":format!("{{\"cmd\":\"sed -n {i},+40p src/lib.rs\"}}"),
            "call_id":format!("call_{i}")}),
        );
        items.push(
            json!({"type":"function_call_output","id":format!("fco_{i}"),
            "call_id":format!("call_{i}"),"output":filler}),
        );
    }
    let tools: Vec<_> = (0..20)
        .map(|i| json!({"type":"function","name":format!("tool_{i}"),
            "description":"A tool that does one thing well and reports what it did.","strict":false,
            "parameters":{"type":"object","properties":{"path":{"type":"string"},"line":{"type":"integer"}},
            "required":["path"],"additionalProperties":false}}))
        .collect();
    let text = json!({
        "model": "gpt-5.5",
        "base_instructions": "You are a coding agent. ".repeat(400),
        "input": items,
        "tools": tools,
        "prompt_cache_key": "0196c000-0000-7000-8000-000000000001",
        "thread_id": "0196c000-0000-7000-8000-000000000001",
    })
    .to_string();
    Prompt::from_json_str(&text).expect("bench prompt parses")
}

fn compile_six(c: &mut Criterion) {
    let prompt = big_prompt();
    let size = serde_json::to_vec(&prompt).map(|v| v.len()).unwrap_or(0);
    eprintln!("prompt: {} items, {size} bytes", prompt.input.len());
    let catalog = ModelCatalog::bundled();
    let model = catalog.lookup(&prompt.model);
    let providers: Vec<Provider> = ProviderKind::ALL
        .into_iter()
        .map(Provider::preset)
        .collect();
    let views: Vec<(&Provider, Dialect)> = [Dialect::Standard, Dialect::Lite]
        .into_iter()
        .flat_map(|d| providers.iter().map(move |p| (p, d)))
        .collect();
    for rules in [
        CompileRules::codex_0_169(),
        CompileRules::codex_0_171(),
        CompileRules::seed(),
    ] {
        c.bench_function(
            &format!("compile_views_six_1MiB_500_items/{}", rules.name),
            |b| {
                b.iter(|| {
                    let compiled = compile_views(&prompt, &model, &rules, &views).expect("compile");
                    compiled.iter().map(|c| c.body_json.len()).sum::<usize>()
                })
            },
        );
        // What a viewer pays on top: every view's object form read once (identical views share
        // one, materialized from the cached item values).
        c.bench_function(
            &format!("compile_views_six_and_read_bodies/{}", rules.name),
            |b| {
                b.iter(|| {
                    let compiled = compile_views(&prompt, &model, &rules, &views).expect("compile");
                    compiled.iter().map(|c| c.body.len()).sum::<usize>()
                })
            },
        );
        c.bench_function(
            &format!("compile_six_separately_1MiB_500_items/{}", rules.name),
            |b| {
                b.iter(|| {
                    views
                        .iter()
                        .map(|(p, d)| compile(&prompt, &model, p, *d, &rules).expect("compile"))
                        .map(|c| c.body_json.len())
                        .sum::<usize>()
                })
            },
        );
    }
}

criterion_group!(benches, compile_six);
criterion_main!(benches);
