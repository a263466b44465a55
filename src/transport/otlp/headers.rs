//! Headers for authenticated collectors, given as `Name=$ENV_VAR` (or `Name=Bearer ${ENV_VAR}`):
//! the value is read from the environment when the exporter starts and never stored. A literal
//! value is accepted only for headers that carry no credential; `OTEL_EXPORTER_OTLP_HEADERS`
//! (`k=v,k2=v2`, the OpenTelemetry SDKs' variable) is read as well.

use crate::core::redact::is_secret_header;

/// A header spec that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderSpecError {
    /// Not `Name=value`.
    #[error("`{0}`: expected Name=$ENV_VAR")]
    Shape(String),
    /// A variable that is not set.
    #[error("{name}: environment variable {var} is not set")]
    Unset {
        /// Header name.
        name: String,
        /// Variable name.
        var: String,
    },
    /// A credential written on the command line.
    #[error(
        "{0}: a credential must come from the environment (write {0}=$VARIABLE, not the value)"
    )]
    Literal(String),
}

/// Resolves one `Name=value` spec, expanding `$VAR` and `${VAR}` through `lookup`.
pub fn resolve_header(
    spec: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<(String, String), HeaderSpecError> {
    let (name, template) = spec
        .split_once('=')
        .filter(|(n, _)| !n.trim().is_empty())
        .ok_or_else(|| HeaderSpecError::Shape(spec.to_string()))?;
    let name = name.trim().to_string();
    let mut value = String::new();
    let mut used_variable = false;
    let mut rest = template;
    while let Some(at) = rest.find('$') {
        value.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (var, tail) = if let Some(inner) = after.strip_prefix('{') {
            match inner.find('}') {
                Some(end) => (&inner[..end], &inner[end + 1..]),
                None => return Err(HeaderSpecError::Shape(spec.to_string())),
            }
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..end], &after[end..])
        };
        if var.is_empty() {
            value.push('$');
            rest = after;
            continue;
        }
        let found = lookup(var).ok_or_else(|| HeaderSpecError::Unset {
            name: name.clone(),
            var: var.to_string(),
        })?;
        value.push_str(&found);
        used_variable = true;
        rest = tail;
    }
    value.push_str(rest);
    if !used_variable && is_secret_header(&name) {
        return Err(HeaderSpecError::Literal(name));
    }
    Ok((name, value.trim().to_string()))
}

/// Headers of `OTEL_EXPORTER_OTLP_HEADERS` (`k=v,k2=v2`, values percent-decoded as the
/// specification says), when set.
pub fn env_headers(lookup: &dyn Fn(&str) -> Option<String>) -> Vec<(String, String)> {
    let Some(text) = lookup("OTEL_EXPORTER_OTLP_HEADERS") else {
        return Vec::new();
    };
    text.split(',')
        .filter_map(|pair| {
            let (k, v) = pair.split_once('=')?;
            let k = k.trim();
            (!k.is_empty()).then(|| (k.to_string(), percent_decode(v.trim())))
        })
        .collect()
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Some(b) = std::str::from_utf8(&bytes[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "KEY" => Some("s3cret".to_string()),
            "OTEL_EXPORTER_OTLP_HEADERS" => Some("a=1, b=x%20y".to_string()),
            _ => None,
        }
    }

    #[test]
    fn variables_are_expanded_and_literal_credentials_refused() {
        assert_eq!(
            resolve_header("Authorization=Bearer $KEY", &env),
            Ok(("Authorization".to_string(), "Bearer s3cret".to_string()))
        );
        assert_eq!(
            resolve_header("api_key=${KEY}", &env),
            Ok(("api_key".to_string(), "s3cret".to_string()))
        );
        assert_eq!(
            resolve_header("x-project=demo", &env),
            Ok(("x-project".to_string(), "demo".to_string()))
        );
        assert_eq!(
            resolve_header("Authorization=Bearer abc", &env),
            Err(HeaderSpecError::Literal("Authorization".to_string()))
        );
        assert_eq!(
            resolve_header("Authorization=$NOPE", &env),
            Err(HeaderSpecError::Unset {
                name: "Authorization".to_string(),
                var: "NOPE".to_string()
            })
        );
        assert_eq!(
            resolve_header("novalue", &env),
            Err(HeaderSpecError::Shape("novalue".to_string()))
        );
        assert_eq!(
            env_headers(&env),
            vec![
                ("a".to_string(), "1".to_string()),
                ("b".to_string(), "x y".to_string())
            ]
        );
    }
}
