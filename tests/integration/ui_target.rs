//! One compile target: the GUI compiles a Prompt with the target the file records — the same
//! bytes `promptwire compile` prints — and importing a real captured body sets the top bar to
//! the target it records.

use crate::support::ui as ui_support;

use std::path::Path;
use std::process::Command;

use egui_kittest::kittest::Queryable as _;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use ui_support::{
    app, app_with, fully_visible, open_through_dialog, scratch_dir, shared_fixture, state,
    wait_for_compile, wait_until,
};

/// What `promptwire compile FILE` prints: exactly the body bytes.
fn cli_compile(path: &Path) -> Vec<u8> {
    let out = Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .arg("compile")
        .arg(path)
        .output()
        .expect("run promptwire compile");
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn the_gui_and_the_cli_compile_identical_bytes_for_the_same_prompt_file() {
    let dir = scratch_dir("ui_target");
    let hello: Value = serde_json::from_str(include_str!("../../assets/prompts/hello.json"))
        .expect("example is JSON");
    // The example with each compile input set away from its default.
    let mut recorded = hello.clone();
    recorded["compile"] = json!({
        "dialect": "lite",
        "rules": "seed",
        "provider": "azure",
        "base_url": "https://team.openai.azure.com/openai/v1",
        "auth": "chatgpt"
    });
    let mut chatgpt_openai = hello.clone();
    chatgpt_openai["compile"] =
        json!({"dialect": "standard", "provider": "openai", "auth": "chatgpt"});
    let cases = [
        ("hello.json", hello, "Standard · OpenAI · HTTP body"),
        ("recorded.json", recorded, "Lite · Azure · HTTP body"),
        (
            "chatgpt.json",
            chatgpt_openai,
            "Standard · OpenAI · HTTP body",
        ),
    ];
    let mut harness = app();
    for (name, prompt, label) in cases {
        let path = dir.join(name);
        std::fs::write(&path, serde_json::to_vec_pretty(&prompt).expect("json")).expect("write");
        open_through_dialog(&mut harness, &path);
        let view = &state(&harness).views[0];
        assert_eq!(view.label, label, "{name}");
        assert_eq!(
            String::from_utf8_lossy(view.export_text().as_bytes()),
            String::from_utf8_lossy(&cli_compile(&path)),
            "{name}"
        );
    }
    // ChatGPT sign-in on OpenAI: the GUI sends zstd, and says so.
    let view = &state(&harness).views[0];
    let compressed = view.compiled.compressed_body.as_ref().expect("zstd body");
    harness.get_by_label_contains(&format!(
        "(zstd {} B of {} B JSON)",
        compressed.len(),
        view.compiled.body_json.len()
    ));
}

#[test]
fn importing_a_real_captured_body_at_1024x700_compiles_it_with_the_target_it_records() {
    let Some(path) = shared_fixture("codex-cli-0.169/lite-gpt-6-sol/req_0.json") else {
        return;
    };
    let text = std::fs::read_to_string(&path).expect("fixture");
    let captured: Value = serde_json::from_str(&text).expect("fixture is JSON");
    let mut harness = app_with((1024.0, 700.0), None);
    harness.get_by_label("Import body…").click();
    harness.run_steps(3);
    harness.get_by_label("Request body (JSON)").focus();
    harness.run_steps(1);
    harness.get_by_label("Request body (JSON)").type_text(&text);
    harness.run_steps(3);
    // The editor scrolls; the buttons stay on screen.
    assert!(fully_visible(&harness, "Import"), "Import button on screen");
    assert!(fully_visible(&harness, "Cancel"), "Cancel button on screen");
    harness.get_by_label("Import").click();
    wait_until(&mut harness, "import", |s| s.dialog.is_none());
    wait_for_compile(&mut harness);
    let state = state(&harness);
    assert_eq!(
        state.status.text,
        "Imported the body as a lite request (codex-0.169 rules, compatible provider)"
    );
    // The request column is compiled with that target: exactly the captured body.
    assert_eq!(state.views[0].label, "Lite · compatible · HTTP body");
    assert_eq!(
        Value::Object((*state.views[0].compiled.body).clone()),
        captured
    );
    // And the top bar shows it.
    assert_eq!(
        harness.get_by_label("Dialect").value().as_deref(),
        Some("Lite")
    );
    assert_eq!(
        harness.get_by_label("Rules").value().as_deref(),
        Some("codex-0.169")
    );
}
