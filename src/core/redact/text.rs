//! Credentials inside free text and JSON text: one pass of one regular expression, each
//! alternative a kind of secret, so any text (a body, an error message, a URL, a header value)
//! is redacted the same way wherever it is shown, stored or exported.
//!
//! By shape, anywhere: `sk-…` keys (8+ characters after `sk-`), `Bearer …` tokens (8+), JWTs
//! (`eyJ….….…`), `Authorization: Basic …`, URL user info (`scheme://user:PASS@` keeps the user,
//! a lone `scheme://TOKEN@` is redacted whole) and credential query parameters (`?key=`,
//! `&token=`, `&sig=`, `&code=`, …).
//!
//! By name: assignments such as `api_key=…`, `OPENAI_API_KEY: …`, `password=…`,
//! `client_secret: …`; and JSON members whose key names a credential, at any depth, matched
//! case-insensitively: a key ending in `password`, `passwd`, `secret`, `token` (singular: usage
//! `*_tokens` and `max_output_tokens` never match), `api_key`/`api-key`/`apikey`,
//! `private_key`, `secret_key`, `access_key`, or exactly `pwd`, `authorization`, `cookie`,
//! `set-cookie`, `credential(s)`. Only scalar values (strings, numbers) are replaced; objects and
//! arrays under such a key are walked, not dropped (a tool schema's `password` property stays).
//! One exact exception: the `token` of a logprob (an object that also has `logprob`) is text,
//! not a credential. JSON nested inside a JSON string (tool-call `arguments`) is conversation
//! content and only gets the shape rules.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Captures, Regex};

use super::REDACTED;

/// Query parameter names whose values are credentials (compared case-insensitively).
const QUERY_NAMES: &str = r"key|api[-_]?key|x-api-key|token|access[-_]token|refresh[-_]token|id[-_]token|auth|auth[-_]token|session[-_]token|sig|signature|code|secret|client[-_]secret|password|passwd|pwd|x-amz-signature|x-amz-credential|x-amz-security-token|x-goog-signature|x-goog-credential";

/// Names that, followed by `=` or `:`, introduce a credential in free text.
const ASSIGN_NAMES: &str = r"api[-_]?key|access[-_]?token|refresh[-_]?token|auth[-_]?token|client[-_]?secret|password|passwd|secret";

/// JSON member names whose scalar values are credentials.
const JSON_KEYS: &str = r"[A-Za-z0-9_\-]*(?:password|passwd|secret|token|api[-_]?key|apikey|private[-_]?key|secret[-_]?key|access[-_]?key)|pwd|authorization|proxy-authorization|cookie|set-cookie|credentials?";

static SECRETS: LazyLock<Option<Regex>> = LazyLock::new(|| {
    let pattern = [
        r"(?P<sk>(?-u:\b)sk-[A-Za-z0-9_\-]{8,})".to_string(),
        r"(?P<bearer>(?-u:\b)(?i-u:bearer)[ \t\r\n]+)[A-Za-z0-9._~+/=\-]{7,}[A-Za-z0-9_~+/=\-]".to_string(),
        r#"(?P<basic>(?i-u:authorization)["']?[ \t\r\n]*[:=][ \t\r\n]*["']?(?i-u:basic)[ \t\r\n]+)[A-Za-z0-9+/=]{4,}"#
            .to_string(),
        r"(?P<jwt>(?-u:\b)eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*)".to_string(),
        r#"(?P<scheme>(?-u:\b)[A-Za-z][A-Za-z0-9+.\-]*://)(?P<user>[^[ \t\r\n]/?#@:"'<>\\]*)(?P<pass>:[^[ \t\r\n]/?#@"'<>\\]*)?@"#
            .to_string(),
        format!(r#"(?P<qname>[?&;](?i-u:{QUERY_NAMES})=)[^&#[ \t\r\n]"'<>()\\]*"#),
        format!(r#""(?P<jkey>(?i-u:{JSON_KEYS}))"(?P<jsep>[ \t\r\n]*:[ \t\r\n]*)(?:"(?P<jval>(?:[^"\\]|\\.)*)"|-?[0-9][0-9.eE+\-]*)"#),
        format!(
            r#"(?P<assign>(?-u:\b)(?:[A-Za-z0-9]+[-_])*(?i-u:{ASSIGN_NAMES})["']?[ \t]*[:=][ \t]*["']?)[^[ \t\r\n]"'&,;{{}}\[\]<>\\]+"#
        ),
    ]
    .join("|");
    Regex::new(&pattern).ok()
});

/// `text` with every credential the policy knows replaced by [`REDACTED`] (see the module
/// documentation for the rules). Text without any is returned unchanged, byte for byte.
pub fn redact_text(text: &str) -> String {
    redacted(text).into_owned()
}

/// [`redact_text`] without a copy when nothing is redacted (for text written in bulk, such as
/// recorded events).
pub fn redacted(text: &str) -> Cow<'_, str> {
    let Some(re) = SECRETS.as_ref() else {
        return Cow::Borrowed(text);
    };
    if !re.is_match(text) {
        return Cow::Borrowed(text);
    }
    re.replace_all(text, |caps: &Captures<'_>| replacement(text, caps))
}

fn replacement(text: &str, caps: &Captures<'_>) -> String {
    let whole = caps.get(0).map_or("", |m| m.as_str());
    if caps.name("sk").is_some() {
        return format!("sk-{REDACTED}");
    }
    if caps.name("jwt").is_some() {
        return REDACTED.to_string();
    }
    if let Some(scheme) = caps.name("scheme") {
        let user = caps.name("user").map_or("", |m| m.as_str());
        return match caps.name("pass") {
            Some(_) => format!("{}{user}:{REDACTED}@", scheme.as_str()),
            None if user.is_empty() => whole.to_string(),
            None => format!("{}{REDACTED}@", scheme.as_str()),
        };
    }
    if let Some(key) = caps.name("jkey") {
        if key.as_str().eq_ignore_ascii_case("token")
            && let Some(m) = caps.get(0)
            && is_logprob(text, m.start(), m.end())
        {
            return whole.to_string();
        }
        let sep = caps.name("jsep").map_or(":", |m| m.as_str());
        let value = caps.name("jval").map_or("", |m| m.as_str());
        if value.contains(REDACTED) {
            return whole.to_string();
        }
        // An authorization value keeps its scheme, as in a header.
        let scheme = value
            .split_once(' ')
            .map(|(scheme, _)| scheme)
            .filter(|s| {
                ["bearer", "basic"]
                    .iter()
                    .any(|k| s.eq_ignore_ascii_case(k))
            })
            .map(|s| format!("{s} "))
            .unwrap_or_default();
        return format!("\"{}\"{sep}\"{scheme}{REDACTED}\"", key.as_str());
    }
    let prefix = ["bearer", "basic", "qname", "assign"]
        .iter()
        .find_map(|name| caps.name(name))
        .map_or("", |m| m.as_str());
    if whole.len() == prefix.len() {
        // Nothing after the name (`?token=&…`, or already `<redacted>`).
        return whole.to_string();
    }
    format!("{prefix}{REDACTED}")
}

/// True when the JSON member at `start..end` sits in an object that also has a `logprob`
/// member (looked for between the enclosing braces).
fn is_logprob(text: &str, start: usize, end: usize) -> bool {
    let before = &text[..start];
    let before = &before[before.rfind('{').map_or(0, |i| i + 1)..];
    let after = &text[end..];
    let after = &after[..after.find('}').unwrap_or(after.len())];
    before.contains("\"logprob\"") || after.contains("\"logprob\"")
}
