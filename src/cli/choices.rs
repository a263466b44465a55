//! The closed sets of the command line as `clap::ValueEnum`s: `--dialect`, `--provider`,
//! `--auth` and `sessions list --with`. clap rejects any other value with its usage error (exit status 1, see `cli::run`),
//! and the parsed value is the core type itself, so no value is dropped on the way. (`--timing`
//! takes a speed such as `4x` too, so it stays a parser of `Timing`, in `replay.rs`.)
//!
//! The variants carry `//` comments, not doc comments: clap would show doc comments as each
//! value's help and change the `--help` text.

use clap::ValueEnum;

use crate::core::prompt::{AuthMode, Dialect};
use crate::core::provider::ProviderKind;
use crate::store::SessionStatus;

/// `--dialect standard|lite|auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DialectArg {
    // The full request shape.
    Standard,
    // The Lite shape.
    Lite,
    // Whatever the model's catalog entry says.
    Auto,
}

impl From<DialectArg> for Dialect {
    fn from(arg: DialectArg) -> Self {
        match arg {
            DialectArg::Standard => Self::Standard,
            DialectArg::Lite => Self::Lite,
            DialectArg::Auto => Self::Auto,
        }
    }
}

/// `--provider openai|azure|compatible`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProviderArg {
    // OpenAI.
    Openai,
    // Azure OpenAI.
    Azure,
    // Any OpenAI-compatible server.
    Compatible,
}

impl From<ProviderArg> for ProviderKind {
    fn from(arg: ProviderArg) -> Self {
        match arg {
            ProviderArg::Openai => Self::Openai,
            ProviderArg::Azure => Self::Azure,
            ProviderArg::Compatible => Self::Compatible,
        }
    }
}

/// `--auth api-key|chatgpt`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AuthArg {
    // An API key from the provider's environment variable.
    ApiKey,
    // ChatGPT sign-in.
    Chatgpt,
}

impl From<AuthArg> for AuthMode {
    fn from(arg: AuthArg) -> Self {
        match arg {
            AuthArg::ApiKey => Self::ApiKey,
            AuthArg::Chatgpt => Self::Chatgpt,
        }
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn names<T: ValueEnum>() -> Vec<String> {
        T::value_variants()
            .iter()
            .filter_map(|v| v.to_possible_value())
            .map(|v| v.get_name().to_string())
            .collect()
    }

    #[test]
    fn each_value_is_the_core_type_of_the_same_name() {
        assert_eq!(names::<DialectArg>(), ["standard", "lite", "auto"]);
        let dialects: Vec<&str> = DialectArg::value_variants()
            .iter()
            .map(|v| Dialect::from(*v).id())
            .collect();
        assert_eq!(dialects, ["standard", "lite", "auto"]);
        assert_eq!(names::<ProviderArg>(), ["openai", "azure", "compatible"]);
        let kinds: Vec<&str> = ProviderArg::value_variants()
            .iter()
            .map(|v| ProviderKind::from(*v).id())
            .collect();
        assert_eq!(kinds, ["openai", "azure", "compatible"]);
        assert_eq!(names::<AuthArg>(), ["api-key", "chatgpt"]);
        let auths: Vec<AuthMode> = AuthArg::value_variants()
            .iter()
            .map(|v| AuthMode::from(*v))
            .collect();
        assert_eq!(auths, [AuthMode::ApiKey, AuthMode::Chatgpt]);
    }
}

/// `sessions list --with failed|interrupted`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WithArg {
    // A failed request.
    Failed,
    // An interrupted request.
    Interrupted,
}

impl From<WithArg> for SessionStatus {
    fn from(arg: WithArg) -> Self {
        match arg {
            WithArg::Failed => Self::Failed,
            WithArg::Interrupted => Self::Interrupted,
        }
    }
}
