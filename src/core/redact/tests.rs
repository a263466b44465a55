//! Whole-value tests of the redaction policy, one kind of secret at a time.

use pretty_assertions::assert_eq;

use super::*;

#[test]
fn keys_and_tokens_in_text() {
    assert_eq!(
        redact_text(r#"{"key":"sk-proj-abcdEFGH1234_xyz","auth":"Bearer eyJhbGciOi.J9"}"#),
        r#"{"key":"sk-<redacted>","auth":"Bearer <redacted>"}"#
    );
    assert_eq!(redact_text("no secrets, sk-short"), "no secrets, sk-short");
    assert_eq!(
        redact_text(r#"{"api-key":"0123456789abcdef"} api_key=AZ0123456789"#),
        r#"{"api-key":"<redacted>"} api_key=<redacted>"#
    );
    assert_eq!(
        redact_text("Incorrect API key provided: Bearer sk-live-0123456789. Check it."),
        "Incorrect API key provided: Bearer <redacted>. Check it."
    );
    assert_eq!(
        redact_text(
            "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U here"
        ),
        "token <redacted> here"
    );
    assert_eq!(
        redact_text("Authorization: Basic dXNlcjpwYXNz and basic information"),
        "Authorization: Basic <redacted> and basic information"
    );
    assert_eq!(
        redact_text("OPENAI_API_KEY=abc123 password: hunter2 client_secret=\"s3cr3t\""),
        "OPENAI_API_KEY=<redacted> password: <redacted> client_secret=\"<redacted>\""
    );
    // Prose that only names a credential is left alone.
    assert_eq!(
        redact_text("the API key is not set: export OPENAI_API_KEY"),
        "the API key is not set: export OPENAI_API_KEY"
    );
}

#[test]
fn urls_user_info_and_query_credentials() {
    assert_eq!(
        redact_url("http://user:PASS@127.0.0.1:8080/v1/responses"),
        "http://user:<redacted>@127.0.0.1:8080/v1/responses"
    );
    assert_eq!(
        redact_url("https://ghp_TOKEN123@example.test/v1"),
        "https://<redacted>@example.test/v1"
    );
    assert_eq!(
        redact_url("http://h/v1/responses?api-version=2025&api-key=abc&key=k2#f"),
        "http://h/v1/responses?api-version=2025&api-key=<redacted>&key=<redacted>#f"
    );
    assert_eq!(
        redact_url("http://h/r?token=t1&sig=s2&code=c3&keyword=kept&Access_Token=a4&password=p5"),
        "http://h/r?token=<redacted>&sig=<redacted>&code=<redacted>&keyword=kept&Access_Token=<redacted>&password=<redacted>"
    );
    assert_eq!(redact_url("/v1/responses"), "/v1/responses");
    assert_eq!(
        redact_url("http://127.0.0.1:9/v1/responses"),
        "http://127.0.0.1:9/v1/responses"
    );
    // Inside an error message, too.
    assert_eq!(
        redact_text("error sending request for url (http://u:pw@h:1/v1/responses?sig=zz)"),
        "error sending request for url (http://u:<redacted>@h:1/v1/responses?sig=<redacted>)"
    );
    // Redacting twice changes nothing more.
    let once = redact_url("http://u:pw@h/r?token=t");
    assert_eq!(redact_url(&once), once);
}

#[test]
fn json_fields_by_name_at_any_depth() {
    assert_eq!(
        redact_text(
            r#"{"model":"m","password":"p1","nested":{"Token":"t1","deep":[{"client_secret": "s1","refresh_token":42}]},"authToken":"a1","pwd":"w"}"#
        ),
        r#"{"model":"m","password":"<redacted>","nested":{"Token":"<redacted>","deep":[{"client_secret": "<redacted>","refresh_token":"<redacted>"}]},"authToken":"<redacted>","pwd":"<redacted>"}"#
    );
    // The Responses API's own fields never match.
    let own = r#"{"max_output_tokens":100,"prompt_cache_key":"k-123456789","token_budget":5,"usage":{"input_tokens":1,"cached_tokens":0,"output_tokens_details":{"reasoning_tokens":2}},"store":false}"#;
    assert_eq!(redact_text(own), own);
    // A tool schema's `password` property is an object: kept.
    let schema = r#"{"type":"function","parameters":{"properties":{"password":{"type":"string"}},"required":["password"]}}"#;
    assert_eq!(redact_text(schema), schema);
    // A logprob's token is text.
    let logprobs = r#"{"logprobs":[{"token":"Hello","logprob":-0.1,"top_logprobs":[{"token":"Hi","logprob":-2.0}]},{"bytes":[1],"logprob":-1,"token":"x"}]}"#;
    assert_eq!(redact_text(logprobs), logprobs);
    // An escaped quote inside a value does not end it.
    assert_eq!(
        redact_text(r#"{"secret":"a\"b","next":"kept"}"#),
        r#"{"secret":"<redacted>","next":"kept"}"#
    );
}

#[test]
fn headers_by_name() {
    let cases = [
        ("Authorization", "Bearer abc", "Bearer <redacted>"),
        (
            "proxy-authorization",
            "Basic dXNlcjpwYXNz",
            "Basic <redacted>",
        ),
        ("api-key", "0123456789", "<redacted>"),
        ("x-api-key", "k", "<redacted>"),
        ("x-goog-api-key", "AIzaSyA-1234", "<redacted>"),
        ("X-Auth-Token", "tok", "<redacted>"),
        ("x-amz-security-token", "tok", "<redacted>"),
        ("cf-access-client-secret", "s", "<redacted>"),
        ("ocp-apim-subscription-key", "s", "<redacted>"),
        (
            "cookie",
            "session=abc; theme=dark",
            "session=<redacted>; theme=<redacted>",
        ),
        (
            "Set-Cookie",
            "sid=abc123; Path=/; HttpOnly; Secure",
            "sid=<redacted>; Path=/; HttpOnly; Secure",
        ),
        ("idempotency-key", "k-1", "k-1"),
        ("x-trace", "t-1", "t-1"),
        ("accept", "text/event-stream", "text/event-stream"),
    ];
    for (name, value, shown) in cases {
        assert_eq!(redact_header(name, value), shown, "{name}: {value}");
    }
}

#[test]
fn headers_by_value_shape() {
    let cases = [
        (
            "x-custom-auth",
            "Bearer my-custom-token",
            "Bearer <redacted>",
        ),
        ("x-upstream", "Basic dXNlcjpwYXNz", "Basic <redacted>"),
        ("x-forward", "token abcdefgh12345", "token <redacted>"),
        ("x-reason", "token limit", "token limit"),
        ("x-key-holder", "sk-proj-0123456789abcdef", "sk-<redacted>"),
        (
            "x-session",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
            "<redacted>",
        ),
        (
            "x-callback",
            "http://u:pw@h/cb?sig=1",
            "http://u:<redacted>@h/cb?sig=<redacted>",
        ),
    ];
    for (name, value, shown) in cases {
        assert_eq!(redact_header(name, value), shown, "{name}: {value}");
    }
}

#[test]
fn identifying_headers_are_kept_and_marked() {
    for name in [
        "OpenAI-Organization",
        "openai-project",
        "ChatGPT-Account-ID",
    ] {
        assert!(is_identifying_header(name), "{name}");
        assert!(!is_secret_header(name), "{name}");
        assert_eq!(redact_header(name, "org-123"), "org-123");
    }
    assert!(!is_identifying_header("x-trace"));
    assert_eq!(
        redact_headers(&[
            ("cookie".to_string(), "a=1".to_string()),
            ("openai-project".to_string(), "proj_1".to_string()),
        ]),
        vec![
            ("cookie".to_string(), "a=<redacted>".to_string()),
            ("openai-project".to_string(), "proj_1".to_string()),
        ]
    );
}

#[test]
fn headers_that_contain_a_credential_word_anywhere() {
    let cases = [
        ("authorization-extra", "ABCDSECRET42", "<redacted>"),
        ("X-Authorization-Fallback", "ABCDSECRET42", "<redacted>"),
        ("x-api-key-2", "k", "<redacted>"),
        ("my_api_key_header", "k", "<redacted>"),
        ("x-apikey", "k", "<redacted>"),
        ("x-client-secret-v2", "s", "<redacted>"),
        ("x-password-hint", "p", "<redacted>"),
        // Rate-limit headers count tokens; they are not credentials.
        ("x-ratelimit-remaining-tokens", "149984", "149984"),
        ("x-ratelimit-limit-tokens", "150000", "150000"),
        ("x-ratelimit-reset-tokens", "6ms", "6ms"),
    ];
    for (name, value, shown) in cases {
        assert_eq!(redact_header(name, value), shown, "{name}: {value}");
    }
    let flags: Vec<(&str, bool)> = cases
        .iter()
        .map(|(name, _, _)| (*name, is_secret_header(name)))
        .collect();
    assert_eq!(
        flags,
        vec![
            ("authorization-extra", true),
            ("X-Authorization-Fallback", true),
            ("x-api-key-2", true),
            ("my_api_key_header", true),
            ("x-apikey", true),
            ("x-client-secret-v2", true),
            ("x-password-hint", true),
            ("x-ratelimit-remaining-tokens", false),
            ("x-ratelimit-limit-tokens", false),
            ("x-ratelimit-reset-tokens", false),
        ]
    );
}

#[test]
fn scalars_inside_a_credential_container_object() {
    assert_eq!(
        redact_text(
            r#"{"credentials": {"pw": "ABCDSECRET42", "n": 1234, "on": true}, "x": "kept"}"#
        ),
        r#"{"credentials": {"pw": "<redacted>", "n": "<redacted>", "on": true}, "x": "kept"}"#
    );
    // Nested objects and arrays inside, other container names, any case.
    assert_eq!(
        redact_text(
            r#"{"Client_Secrets":{"a":{"b":["s1",{"c":"s2"}]}},"auth":{"user":"bob","pass":"hunter2"},"secret":{"v":"s3"}}"#
        ),
        r#"{"Client_Secrets":{"a":{"b":["<redacted>",{"c":"<redacted>"}]}},"auth":{"user":"<redacted>","pass":"<redacted>"},"secret":{"v":"<redacted>"}}"#
    );
    // Escaped quotes and braces inside strings do not end the object early.
    assert_eq!(
        redact_text(r#"{"credentials":{"pw":"a\"}b{"},"after":"kept"}"#),
        r#"{"credentials":{"pw":"<redacted>"},"after":"kept"}"#
    );
    // A JSON Schema under such a key (a tool's parameters) stays as it is.
    let schema = r#"{"type":"function","name":"login","parameters":{"type":"object","properties":{"credentials":{"type":"object","description":"the user's login","properties":{"pw":{"type":"string","enum":["a","b"]}}}}}}"#;
    assert_eq!(redact_text(schema), schema);
    let described =
        r#"{"secrets":{"description":"names of the secrets to mount","default":"none"}}"#;
    assert_eq!(redact_text(described), described);
    // JSON inside a JSON string (tool-call arguments) is conversation content.
    let arguments = r#"{"arguments":"{\"credentials\":{\"pw\":\"x\"}}"}"#;
    assert_eq!(redact_text(arguments), arguments);
    // An unclosed object is left to the other rules.
    assert_eq!(
        redact_text(r#"{"credentials":{"pw":"x""#),
        r#"{"credentials":{"pw":"x""#
    );
}

#[test]
fn arrays_under_credential_keys_are_redacted_throughout() {
    assert_eq!(
        redact_text(r#"{"api_key":["sk-live-0123456789","x",42],"tags":["a"]}"#),
        r#"{"api_key":["<redacted>","<redacted>","<redacted>"],"tags":["a"]}"#
    );
    assert_eq!(
        redact_text(r#"{"auth":{"tokens" :[1]},"Password" : [ "p1", ["p2"] ]}"#),
        r#"{"auth":{"tokens" :["<redacted>"]},"Password" : [ "<redacted>", ["<redacted>"] ]}"#
    );
}

#[test]
fn keys_spelled_with_escapes_are_matched_on_their_decoded_name() {
    assert_eq!(
        redact_text(r#"{"pass\u0077ord":"hunter2","api\u005fkey":["k1"],"n\u0061me":"kept"}"#),
        r#"{"password":"<redacted>","api_key":["<redacted>"],"name":"kept"}"#
    );
    // A value is never taken for a key, and an escaped backslash is not an escape.
    assert_eq!(
        redact_text(r#"{"note":"pass\u0077ord","path":"C:\\u0077"}"#),
        r#"{"note":"pass\u0077ord","path":"C:\\u0077"}"#
    );
    // A name that decodes to something other than a plain name stays as written.
    assert_eq!(redact_text(r#"{"a\u0020b":"v"}"#), r#"{"a\u0020b":"v"}"#);
}

/// Pieces of text the generated inputs are made of: every shape and name the policy knows,
/// in several cases and spellings, and the JSON punctuation around them.
const PIECES: &[&str] = &[
    "sk-",
    "SK-",
    "abcdEFGH1234",
    "Bearer ",
    "bearer\t",
    "eyJ",
    "eyj",
    ".",
    "://",
    "https://",
    "user",
    ":",
    "@",
    "?",
    "&",
    ";",
    "=",
    "key",
    "KEY",
    "api_key",
    "Api-Key",
    "token",
    "TOKEN",
    "_tokens",
    "secret",
    "Secrets",
    "pass",
    "PASSWORD",
    "passwd",
    "pwd",
    "auth",
    "Authorization",
    "Basic ",
    "cookie",
    "Set-Cookie",
    "credential",
    "Credentials",
    "sig",
    "code",
    "\\u0077",
    "\\u",
    "\"",
    "{",
    "}",
    "[",
    "]",
    ",",
    " ",
    "\n",
    "logprob",
    "x",
    "0",
    "-1.5",
    "type",
    "properties",
    "é",
];

proptest::proptest! {
    /// The literal prefilter never changes what is redacted: any text made of the policy's
    /// shapes and names comes out the same with it and without it.
    #[test]
    fn the_literal_prefilter_changes_nothing(
        picks in proptest::collection::vec(0..PIECES.len(), 0..12)
    ) {
        let text: String = picks.iter().map(|&i| PIECES[i]).collect();
        let patterns = &*text::PATTERNS;
        proptest::prop_assert_eq!(
            patterns.redact(&text).expect("policy builds"),
            patterns.redact_unfiltered(&text).expect("policy builds")
        );
    }
}

/// Every credential name the patterns list, spelled as the alternatives allow (`[-_]?` as `_`,
/// `-` and nothing), in lower and upper case.
fn credential_names() -> Vec<String> {
    let json_names = "password|passwd|secret|token|api_key|apikey|private_key|secret_key|access_key|pwd|authorization|proxy-authorization|cookie|set-cookie|credential|credentials|auth|secrets";
    let mut names = Vec::new();
    for alt in [text::QUERY_NAMES, text::ASSIGN_NAMES, json_names]
        .iter()
        .flat_map(|list| list.split('|'))
    {
        for sep in ["_", "-", ""] {
            let name = alt.replace("[-_]?", sep).replace("[-_]", sep);
            names.push(name.to_ascii_uppercase());
            names.push(name);
        }
    }
    names
}

/// Every credential name in every place a pattern looks for one is redacted with the prefilter
/// as without it, and is redacted at all (so a name the prefilter's literals miss fails here).
#[test]
fn every_credential_name_passes_the_prefilter() {
    let templates = [
        r#"{"NAME":"abcdEFGH1234"}"#,
        r#"{"x_NAME": 12345}"#,
        "NAME=abcdEFGH1234",
        "my_NAME: abcdEFGH1234",
        "https://h/p?NAME=abcdEFGH1234",
        r#"{"NAME":{"pw":"hunter22"}}"#,
        r#"{"NAME":["hunter22"]}"#,
    ];
    let patterns = &*text::PATTERNS;
    let mut redacted_somewhere = 0;
    for name in credential_names() {
        for template in templates {
            let text = template.replace("NAME", &name);
            let unfiltered = patterns.redact_unfiltered(&text).expect("policy builds");
            assert_eq!(
                patterns.redact(&text).expect("policy builds"),
                unfiltered,
                "{text}"
            );
            redacted_somewhere += usize::from(unfiltered != text);
        }
    }
    // Not every name fits every template (a query name is not a JSON key); most do.
    assert!(redacted_somewhere > 300, "{redacted_somewhere}");
}

#[test]
fn text_without_any_needle_is_returned_as_it_is() {
    let event = r#"{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"xxxxxxxxxx","sequence_number":7}"#;
    assert!(matches!(redacted(event), std::borrow::Cow::Borrowed(e) if e == event));
    // And one needle brings the patterns in.
    let with_key = r#"{"type":"x","api_key":"abcdefgh12345678"}"#;
    assert_eq!(
        redact_text(with_key),
        r#"{"type":"x","api_key":"<redacted>"}"#
    );
}
