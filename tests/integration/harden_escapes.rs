//! Terminal escape sequences in what the command line prints — a session name, a model string,
//! a header value — are printed escaped (`\u{1b}`), so a recorded name cannot drive the
//! user's terminal; JSON output stays JSON with the same values.

use crate::support;

use std::process::Command;

use pretty_assertions::assert_eq;
use promptwire::store::{NewRequest, NewSession, Source, Store};
use support::scratch;

fn promptwire(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_promptwire"))
        .args(args)
        .output()
        .expect("run promptwire");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn names_models_and_headers_are_printed_escaped() {
    let db = scratch("harden_escapes").join("s.sqlite");
    let mut store = Store::open(&db).expect("db");
    let session = store
        .create_session(&NewSession {
            name: "evil\x1b[2J\x1b]0;pwned\x07".to_string(),
            source: Source::Import,
            provider: None,
            model: Some("gpt\x1b[31m-red".to_string()),
            created_us: 0,
        })
        .expect("session");
    let headers = vec![("x-note".to_string(), "a\x1b[1mb".to_string())];
    store
        .add_request(
            session,
            &NewRequest {
                headers: &headers,
                started_us: Some(0),
                ..NewRequest::post(
                    "http://h/v1/responses",
                    br#"{"model":"gpt\u001b[31m-red","input":[]}"#,
                )
            },
        )
        .expect("request");
    drop(store);
    let db_arg = db.display().to_string();
    let (code, list) = promptwire(&["sessions", "list", "--db", &db_arg]);
    assert_eq!(code, Some(0));
    assert_eq!(
        list,
        "    1  evil\\u{1b}[2J\\u{1b}]0;pwned\\u{7}        import  gpt\\u{1b}[31m-red         1 req  1970-01-01T00:00:00.000Z  ! 1 without an answer\n"
    );
    let (code, show) = promptwire(&["sessions", "show", &session.to_string(), "--db", &db_arg]);
    assert_eq!(code, Some(0));
    assert_eq!(
        show.lines().take(2).collect::<Vec<_>>(),
        vec![
            "session 1  evil\\u{1b}[2J\\u{1b}]0;pwned\\u{7}  (import, gpt\\u{1b}[31m-red, created 1970-01-01T00:00:00.000Z)  ! 1 without an answer",
            "  #0    gpt\\u{1b}[31m-red     -        -        no answer     0 events        40 B",
        ]
    );
    // JSON output: the same values, still JSON.
    let (code, json) = promptwire(&["sessions", "list", "--json", "--db", &db_arg]);
    assert_eq!(code, Some(0));
    let listed: serde_json::Value = serde_json::from_str(&json).expect("json");
    assert_eq!(
        (listed[0]["name"].clone(), listed[0]["model"].clone()),
        (
            serde_json::json!("evil\x1b[2J\x1b]0;pwned\x07"),
            serde_json::json!("gpt\x1b[31m-red")
        )
    );
}
