//! The closed sets of the command line (`--dialect`, `--provider`, `--auth`) are typed: an
//! unknown value is clap's usage error — exit status 1 (DESIGN.md: 1 on a user error), one
//! message naming the flag and the values it takes — before anything is read; a known value
//! reaches the compiled request.

use std::path::Path;
use std::process::{Command, Output};

use pretty_assertions::assert_eq;

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .args(args)
        .env_remove("OPENAI_API_KEY")
        .output()
        .expect("run promptwire")
}

fn refusal(flag: &str, value: &str, placeholder: &str, values: &str) -> (Option<i32>, String) {
    (
        Some(1),
        format!(
            "error: invalid value '{value}' for '{flag} <{placeholder}>'\n  \
             [possible values: {values}]\n\nFor more information, try '--help'.\n"
        ),
    )
}

fn outcome(out: &Output) -> (Option<i32>, String) {
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn unknown_values_are_usage_errors_never_dropped() {
    let cases = [
        (
            vec!["compile", "x.json", "--dialect", "bogus"],
            refusal("--dialect", "bogus", "DIALECT", "standard, lite, auto"),
        ),
        (
            vec!["compile", "x.json", "--provider", "bogus"],
            refusal(
                "--provider",
                "bogus",
                "PROVIDER",
                "openai, azure, compatible",
            ),
        ),
        (
            vec!["compile", "x.json", "--auth", "bogus"],
            refusal("--auth", "bogus", "AUTH", "api-key, chatgpt"),
        ),
        (
            vec!["send", "x.json", "--provider", "bogus"],
            refusal(
                "--provider",
                "bogus",
                "PROVIDER",
                "openai, azure, compatible",
            ),
        ),
        (
            vec![
                "send",
                "x.json",
                "--provider",
                "openai",
                "--dialect",
                "bogus",
            ],
            refusal("--dialect", "bogus", "DIALECT", "standard, lite, auto"),
        ),
    ];
    let got: Vec<_> = cases.iter().map(|(args, _)| outcome(&run(args))).collect();
    let want: Vec<_> = cases.into_iter().map(|(_, want)| want).collect();
    assert_eq!(got, want);
}

#[test]
fn known_values_reach_the_compiled_request() {
    let hello = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/prompts/hello.json")
        .display()
        .to_string();
    let headers = |args: &[&str]| -> serde_json::Value {
        let mut all = vec!["compile", hello.as_str(), "--headers"];
        all.extend_from_slice(args);
        let out = run(&all);
        assert_eq!(outcome(&out).0, Some(0), "{:?}", outcome(&out).1);
        serde_json::from_slice(&out.stdout).expect("headers JSON")
    };
    // ChatGPT-style auth against OpenAI compresses the body; an API key does not.
    let chatgpt = headers(&["--provider", "openai", "--auth", "chatgpt"]);
    let api_key = headers(&["--provider", "openai", "--auth", "api-key"]);
    assert_eq!(
        (
            chatgpt.get("content-encoding").cloned(),
            api_key.get("content-encoding").cloned()
        ),
        (Some(serde_json::json!("zstd")), None)
    );
}
