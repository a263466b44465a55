//! `import-body` prints the Prompt of a captured body with its credentials redacted, and says so:
//! one warning line on standard error naming the redacted paths (counted past five) and that the
//! Prompt will not reproduce those values. A body without credentials prints no such line, and
//! its Prompt compiles back to the captured body.

use crate::support::cli;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

/// The warning lines of a run's standard error.
fn warnings(out: &std::process::Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.starts_with("promptwire: warning: credentials"))
        .map(str::to_string)
        .collect()
}

fn body(extra: Value) -> Vec<u8> {
    let mut body = json!({
        "model": "gpt-5.5",
        "instructions": "be brief",
        "input": [{"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": "hi"}]}],
        "stream": true,
    });
    if let (Some(body), Value::Object(extra)) = (body.as_object_mut(), extra) {
        body.extend(extra);
    }
    body.to_string().into_bytes()
}

#[test]
fn a_redacted_prompt_is_announced_with_its_paths() {
    let out = cli::run(
        &["import-body", "-"],
        Some(&body(json!({
            "password": "BODYPASSWORD42",
            "credentials": {"pw": "NESTEDPW42"},
        }))),
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        warnings(&out),
        vec![
            "promptwire: warning: credentials printed as <redacted> (2 values, \
             body_overrides.password, body_overrides.credentials.pw): this Prompt will not \
             reproduce those values of the captured body; fill them in before compiling it"
                .to_string()
        ]
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("BODYPASSWORD42") && !stdout.contains("NESTEDPW42"));
    let prompt: Value = serde_json::from_str(&stdout).expect("prompt json");
    assert_eq!(
        prompt["body_overrides"],
        json!({"password": "<redacted>", "credentials": {"pw": "<redacted>"}})
    );
}

#[test]
fn one_path_is_named_alone_and_many_are_counted() {
    let out = cli::run(
        &["import-body", "-"],
        Some(&body(json!({"instructions": "key sk-abcdefgh12345678"}))),
    );
    assert_eq!(
        warnings(&out),
        vec![
            "promptwire: warning: credentials printed as <redacted> (base_instructions): this \
             Prompt will not reproduce those values of the captured body; fill them in before \
             compiling it"
                .to_string()
        ]
    );
    let out = cli::run(
        &["import-body", "-"],
        Some(&body(
            json!({"secrets": {"a": "1", "b": "2", "c": "3", "d": "4", "e": "5", "f": "6", "g": "7"}}),
        )),
    );
    assert_eq!(
        warnings(&out),
        vec![
            "promptwire: warning: credentials printed as <redacted> (7 values, \
             body_overrides.secrets.a, body_overrides.secrets.b, body_overrides.secrets.c, \
             body_overrides.secrets.d, body_overrides.secrets.e and 2 more): this Prompt will \
             not reproduce those values of the captured body; fill them in before compiling it"
                .to_string()
        ]
    );
}

#[test]
fn a_body_without_credentials_prints_no_warning_and_compiles_back() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("redact_import_body");
    std::fs::create_dir_all(&dir).expect("dir");
    let captured = body(json!({}));
    let out = cli::run(&["import-body", "-"], Some(&captured));
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(warnings(&out), Vec::<String>::new());
    let prompt = dir.join("clean.json");
    std::fs::write(&prompt, &out.stdout).expect("write prompt");
    let compiled = cli::run(&["compile", &prompt.display().to_string()], None);
    assert_eq!(
        compiled.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&compiled.stderr)
    );
    let back: Value = serde_json::from_slice(&compiled.stdout).expect("compiled json");
    let captured: Value = serde_json::from_slice(&captured).expect("captured json");
    assert_eq!(back, captured);
}
