//! Bad values in the files `compile` and `import-body` read (issue 15): a key repeated at any
//! depth is named in a warning (its last value is used, as JSON parsers do), and a type error
//! never echoes a huge bad value — the one stderr line keeps its head and tail and says how much
//! was cut.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use pretty_assertions::assert_eq;

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli_bad_values");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir.join(name)
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .args(args)
        .output()
        .expect("run promptwire")
}

fn warnings(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.starts_with("promptwire: warning:"))
        .map(str::to_string)
        .collect()
}

#[test]
fn repeated_keys_at_any_depth_are_warned_about() {
    let prompt = scratch("repeated.prompt.json");
    std::fs::write(
        &prompt,
        r#"{"model": "gpt-5.5", "input": [{"type": "message", "role": "user", "role": "user",
            "content": [{"type": "input_text", "text": "first", "text": "second"}]}]}"#,
    )
    .expect("write");
    let path = prompt.display().to_string();
    let out = run(&["compile", &path]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        warnings(&out),
        vec![
            format!(
                "promptwire: warning: {path}: key `role` repeated at input[0]: the last value is used"
            ),
            format!(
                "promptwire: warning: {path}: key `text` repeated at input[0].content[0]: the last value is used"
            ),
        ]
    );
    let body: serde_json::Value = serde_json::from_slice(&out.stdout).expect("body");
    assert_eq!(
        body["input"][0]["content"][0]["text"],
        serde_json::json!("second")
    );

    let captured = scratch("repeated.body.json");
    let mut text = String::from(r#"{"model":"gpt-5.5","model":"gpt-5.5","input":["#);
    let items: Vec<String> = (0..12)
        .map(|i| {
            format!(
                r#"{{"type":"message","role":"user","content":[{{"type":"input_text","text":"{i}"}}],"content":[{{"type":"input_text","text":"x"}}]}}"#
            )
        })
        .collect();
    text.push_str(&items.join(","));
    text.push_str("]}");
    std::fs::write(&captured, text).expect("write");
    let path = captured.display().to_string();
    let out = run(&["import-body", &path]);
    assert_eq!(out.status.code(), Some(0));
    let mut want = vec![format!(
        "promptwire: warning: {path}: key `model` repeated at the top level: the last value is used"
    )];
    want.extend((0..9).map(|i| {
        format!(
            "promptwire: warning: {path}: key `content` repeated at input[{i}]: the last value is used"
        )
    }));
    want.push(format!("promptwire: warning: {path}: 3 more repeated keys"));
    assert_eq!(warnings(&out), want);
}

#[test]
fn a_type_error_on_a_huge_value_is_one_short_line() {
    let prompt = scratch("huge.prompt.json");
    let value = "y".repeat(2_000_000);
    std::fs::write(
        &prompt,
        format!(r#"{{"model": "gpt-5.5", "input": "{value}"}}"#),
    )
    .expect("write");
    let path = prompt.display().to_string();
    let out = run(&["compile", &path]);
    assert_eq!(out.status.code(), Some(1));
    let message = format!(r#"invalid type: string "{value}", expected a sequence"#);
    let chars = message.chars().count();
    let head: String = message.chars().take(200).collect();
    let tail: String = message.chars().skip(chars - 60).collect();
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "promptwire: {path}: input: {head}… ({} characters cut, {} bytes in all) …{tail}\n",
            chars - 260,
            message.len()
        )
    );
}
