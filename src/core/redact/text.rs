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
//! But every string and number inside an object under a credential container key — a key
//! ending in `credential(s)` or `secret(s)`, or `auth` — is a credential (`"credentials":
//! {"pw": …}`), unless that object is a JSON Schema (it has a `type`, `properties` or
//! `description` member), so a tool's parameters stay intact.
//! An array under a credential key (`"api_key": ["sk-…", "x"]`) has every string and number in
//! it replaced. A member name spelled with JSON escapes (`"pass\u0077ord"`) is matched on its
//! decoded name: such a name whose decoded form is plain (letters, digits, `_`, `-`) is written
//! decoded first, which is the same JSON.
//! One exact exception: the `token` of a logprob (an object that also has `logprob`) is text,
//! not a credential. JSON nested inside a JSON string (tool-call `arguments`) is conversation
//! content and only gets the shape rules.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Captures, Regex};

use super::REDACTED;
use super::checked::RedactError;

/// Query parameter names whose values are credentials (compared case-insensitively).
pub(super) const QUERY_NAMES: &str = r"key|api[-_]?key|x-api-key|token|access[-_]token|refresh[-_]token|id[-_]token|auth|auth[-_]token|session[-_]token|sig|signature|code|secret|client[-_]secret|password|passwd|pwd|x-amz-signature|x-amz-credential|x-amz-security-token|x-goog-signature|x-goog-credential";

/// Names that, followed by `=` or `:`, introduce a credential in free text.
pub(super) const ASSIGN_NAMES: &str = r"api[-_]?key|access[-_]?token|refresh[-_]?token|auth[-_]?token|client[-_]?secret|password|passwd|secret";

/// JSON member names whose scalar values are credentials.
const JSON_KEYS: &str = r"[A-Za-z0-9_\-]*(?:password|passwd|secret|token|api[-_]?key|apikey|private[-_]?key|secret[-_]?key|access[-_]?key)|pwd|authorization|proxy-authorization|cookie|set-cookie|credentials?";

/// The one pattern of every secret shape, one alternative per kind.
fn secrets_pattern() -> String {
    [
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
    .join("|")
}

/// JSON members whose value, when it is an object, holds credentials throughout: a key ending
/// in `credential(s)` or `secret(s)`, or exactly `auth` (case-insensitive).
const CONTAINERS_PATTERN: &str =
    r#""(?i-u:[A-Za-z0-9_\-]*(?:credentials?|secrets?)|auth)"[ \t\r\n]*:[ \t\r\n]*\{"#;

/// JSON member names (followed by `:`) that contain an escape (`\u…`): candidates for
/// [`decode_keys`].
const ESCAPED_KEY_PATTERN: &str = r#""(?:[^"\\]|\\.)*\\u(?:[^"\\]|\\.)*"[ \t\r\n]*:"#;

/// Arrays under a credential member name ([`JSON_KEYS`]).
fn arrays_pattern() -> String {
    format!(r#""(?i-u:{JSON_KEYS})"[ \t\r\n]*:[ \t\r\n]*\["#)
}

/// Literals of which every match of every pattern above contains at least one (ASCII
/// case-insensitively): `sk-`, `bearer`, `eyJ` (JWTs), `://` (URL user info), `\u` (escaped
/// member names, decoded before the key rules run), and a word of every credential name
/// ([`JSON_KEYS`], [`ASSIGN_NAMES`], [`QUERY_NAMES`], the containers): `pass` (`password`,
/// `passwd`), `pwd`, `secret`, `token`, `key`, `auth` (`authorization`, `auth`), `cookie`,
/// `credential`, `sig` (`sig`, `signature`), `code`. Text with none of them holds no credential
/// the policy knows, so it is passed through without running the patterns: most streamed
/// events are such text, and this one literal scan is what recording costs them.
const NEEDLES_PATTERN: &str =
    r"(?i-u:sk-|bearer|eyj|://|\\u|pass|pwd|secret|token|key|auth|cookie|credential|sig|code)";

/// The policy's patterns, built once. A pattern that failed to build keeps why, and every
/// checked redaction then refuses ([`RedactError::Pattern`]) instead of passing text through.
pub(super) struct Patterns {
    needles: Result<Regex, RedactError>,
    secrets: Result<Regex, RedactError>,
    containers: Result<Regex, RedactError>,
    arrays: Result<Regex, RedactError>,
    escaped_keys: Result<Regex, RedactError>,
}

impl Patterns {
    /// Builds both patterns from their sources.
    pub(super) fn build(secrets: &str, containers: &str) -> Self {
        let build = |name: &'static str, source: &str| {
            Regex::new(source).map_err(|e| RedactError::Pattern {
                name,
                reason: e.to_string(),
            })
        };
        Self {
            needles: build("needles", NEEDLES_PATTERN),
            secrets: build("secrets", secrets),
            containers: build("containers", containers),
            arrays: build("arrays", &arrays_pattern()),
            escaped_keys: build("escaped keys", ESCAPED_KEY_PATTERN),
        }
    }

    /// `text` with every credential the policy knows replaced, or why that cannot be done.
    pub(super) fn redact<'t>(&self, text: &'t str) -> Result<Cow<'t, str>, RedactError> {
        let needles = self.needles.as_ref().map_err(Clone::clone)?;
        let patterns = self.patterns()?;
        if !needles.is_match(text) {
            return Ok(Cow::Borrowed(text));
        }
        Ok(Self::redact_with(patterns, text))
    }

    /// The four patterns, or the first that failed to build.
    fn patterns(&self) -> Result<(&Regex, &Regex, &Regex, &Regex), RedactError> {
        match (
            &self.secrets,
            &self.containers,
            &self.arrays,
            &self.escaped_keys,
        ) {
            (Ok(re), Ok(containers), Ok(arrays), Ok(escaped_keys)) => {
                Ok((re, containers, arrays, escaped_keys))
            }
            (Err(e), _, _, _) | (_, Err(e), _, _) | (_, _, Err(e), _) | (_, _, _, Err(e)) => {
                Err(e.clone())
            }
        }
    }

    /// `text` redacted by the four patterns, whatever literals it holds.
    fn redact_with<'t>(
        (re, containers, arrays, escaped_keys): (&Regex, &Regex, &Regex, &Regex),
        text: &'t str,
    ) -> Cow<'t, str> {
        let text = decode_keys(escaped_keys, text);
        let text = and_then(text, |t| {
            redact_under(containers, t, |object| !is_schema(object))
        });
        let text = and_then(text, |t| redact_under(arrays, t, |_| true));
        and_then(text, |t| {
            if re.is_match(t) {
                re.replace_all(t, |caps: &Captures<'_>| replacement(t, caps))
            } else {
                Cow::Borrowed(t)
            }
        })
    }

    /// [`Self::redact`] without the literal prefilter (for the test that holds them equal).
    #[cfg(test)]
    pub(super) fn redact_unfiltered<'t>(&self, text: &'t str) -> Result<Cow<'t, str>, RedactError> {
        Ok(Self::redact_with(self.patterns()?, text))
    }
}

/// The policy's patterns.
pub(super) static PATTERNS: LazyLock<Patterns> =
    LazyLock::new(|| Patterns::build(&secrets_pattern(), CONTAINERS_PATTERN));

/// `text` with every credential the policy knows replaced by [`REDACTED`] (see the module
/// documentation for the rules). Text without any is returned unchanged, byte for byte.
/// For what is shown: should the policy not run, the whole text shows as [`REDACTED`]. What is
/// written or exported goes through [`super::try_redacted`] and its kin, which refuse instead.
pub fn redact_text(text: &str) -> String {
    redacted(text).into_owned()
}

/// [`redact_text`] without a copy when nothing is redacted (for text shown in bulk, such as
/// recorded events).
pub fn redacted(text: &str) -> Cow<'_, str> {
    PATTERNS.redact(text).unwrap_or(Cow::Borrowed(REDACTED))
}

/// Keys whose presence at the top of an object marks it as a JSON Schema (a tool's parameters),
/// which stays as it is.
const SCHEMA_KEYS: [&str; 3] = ["type", "properties", "description"];

/// `text` with every string and number inside each object or array that `re` finds opening
/// (the match's last byte is its `{` or `[`) replaced by `"<redacted>"`, the keys and structure
/// kept, for those `redact` says so: objects under a credential container key
/// ([`CONTAINERS_PATTERN`]) unless they are a JSON Schema ([`SCHEMA_KEYS`]), and every array
/// under a credential member name ([`arrays_pattern`]).
fn redact_under<'t>(re: &Regex, text: &'t str, redact: impl Fn(&str) -> bool) -> Cow<'t, str> {
    let mut out = String::new();
    let mut copied = 0;
    let mut search = 0;
    while let Some(m) = re.find_at(text, search) {
        let open = m.end() - 1;
        let Some(close) = object_end(text.as_bytes(), open) else {
            break;
        };
        let value = &text[open..close];
        if redact(value) {
            out.push_str(&text[copied..open]);
            redact_scalars(value, &mut out);
            copied = close;
        }
        search = close;
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// `step` applied to `text`, borrowed or owned: a borrowed result of an owned text is copied
/// back into it.
fn and_then<'t>(
    text: Cow<'t, str>,
    step: impl for<'a> Fn(&'a str) -> Cow<'a, str>,
) -> Cow<'t, str> {
    match text {
        Cow::Borrowed(text) => step(text),
        Cow::Owned(text) => match step(&text) {
            Cow::Borrowed(_) => Cow::Owned(text),
            Cow::Owned(changed) => Cow::Owned(changed),
        },
    }
}

/// `text` with every member name that is spelled with escapes and decodes to a plain name
/// (ASCII letters, digits, `_`, `-`) written decoded, so the key rules see the name a JSON
/// parser sees (`"pass\u0077ord"` is `"password"`). Same JSON; text without `\u` is untouched.
fn decode_keys<'t>(re: &Regex, text: &'t str) -> Cow<'t, str> {
    if !text.contains("\\u") {
        return Cow::Borrowed(text);
    }
    let mut changed = false;
    let out = re.replace_all(text, |caps: &Captures<'_>| {
        let whole = caps.get(0).map_or("", |m| m.as_str());
        let Some(close) = whole.rfind('"') else {
            return whole.to_string();
        };
        match serde_json::from_str::<String>(&whole[..=close]) {
            Ok(name)
                if !name.is_empty()
                    && name
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') =>
            {
                changed = true;
                format!("\"{name}\"{}", &whole[close + 1..])
            }
            _ => whole.to_string(),
        }
    });
    if changed {
        Cow::Owned(out.into_owned())
    } else {
        Cow::Borrowed(text)
    }
}

/// What [`walk`] meets in JSON text: a string (`start..end`, quotes included) at nesting depth
/// `depth`, or a closing bracket after which the depth is `depth`.
enum Token {
    Str {
        start: usize,
        end: usize,
        depth: usize,
    },
    Close {
        end: usize,
        depth: usize,
    },
}

/// Walks JSON text from `start`, skipping over strings, telling `visit` of each string and each
/// closing bracket until it breaks; `None` when the text ends first (or a string is not closed).
fn walk<R>(bytes: &[u8], start: usize, mut visit: impl FnMut(Token) -> Option<R>) -> Option<R> {
    let mut depth = 0usize;
    let mut i = start;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let end = string_end(bytes, i)?;
                if let Some(found) = visit(Token::Str {
                    start: i,
                    end,
                    depth,
                }) {
                    return Some(found);
                }
                i = end;
            }
            b'{' | b'[' => {
                depth += 1;
                i += 1;
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                i += 1;
                if let Some(found) = visit(Token::Close { end: i, depth }) {
                    return Some(found);
                }
            }
            _ => i += 1,
        }
    }
    None
}

/// The end (exclusive) of the JSON object or array starting at `start`, skipping strings;
/// `None` when it is not closed.
fn object_end(bytes: &[u8], start: usize) -> Option<usize> {
    walk(bytes, start, |token| match token {
        Token::Close { end, depth: 0 } => Some(end),
        _ => None,
    })
}

/// The end (exclusive) of the JSON string whose opening quote is at `start`.
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// True when a key of [`SCHEMA_KEYS`] is a member of `object` itself (not of a nested one).
fn is_schema(object: &str) -> bool {
    let bytes = object.as_bytes();
    walk(bytes, 0, |token| match token {
        Token::Str {
            start,
            end,
            depth: 1,
        } if is_key(bytes, end) && SCHEMA_KEYS.contains(&&object[start + 1..end - 1]) => Some(()),
        _ => None,
    })
    .is_some()
}

/// True when the string ending at `end` is followed by `:` (a member name, not a value).
fn is_key(bytes: &[u8], end: usize) -> bool {
    bytes[end..]
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|b| *b == b':')
}

/// Appends `object` to `out` with every string value and number replaced by `"<redacted>"`.
fn redact_scalars(object: &str, out: &mut String) {
    let bytes = object.as_bytes();
    let mut i = 0;
    let mut copied = 0;
    while i < bytes.len() {
        let b = bytes[i];
        // The scalar starting here (its end, and whether it is a value rather than a key).
        let (end, value) = if b == b'"' {
            let Some(end) = string_end(bytes, i) else {
                break;
            };
            (end, !is_key(bytes, end))
        } else if b == b'-' || b.is_ascii_digit() {
            let end = bytes[i..]
                .iter()
                .position(|c| !(c.is_ascii_digit() || b".eE+-".contains(c)))
                .map_or(bytes.len(), |n| i + n);
            (end, true)
        } else {
            i += 1;
            continue;
        };
        if value {
            out.push_str(&object[copied..i]);
            out.push('"');
            out.push_str(REDACTED);
            out.push('"');
            copied = end;
        }
        i = end;
    }
    out.push_str(&object[copied..]);
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
