//! `ClientIdentity`: how the client names itself in the request headers under the `codex` header
//! style — `originator`, the parts of `User-Agent`, `x-codex-beta-features`. Absent fields follow
//! the rules preset (and the shared captures for platform and terminal); body import fills them
//! from a captured headers file so a request's headers round-trip.

use serde::{Deserialize, Serialize};

use super::Setting;

/// The client's identity in headers. Every field is optional in a Prompt file.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientIdentity {
    /// `originator` and the `User-Agent` prefix: `codex_exec` is what `codex exec` sends (the
    /// Codex presets' default), the interactive client sends its own value (`codex_cli_rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub originator: Option<String>,
    /// `<os type> <os version>; <arch>` inside the `User-Agent` parentheses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<String>,
    /// The terminal's user agent after the platform (`xterm`, `iTerm.app/3.5.0`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminal: Option<String>,
    /// The trailing `(…)` of `User-Agent`: absent → `<originator>; <version>` for `codex_exec`
    /// and nothing otherwise; `null` → none; a string → that.
    #[serde(default, skip_serializing_if = "Setting::is_default")]
    pub user_agent_suffix: Setting<String>,
    /// `x-codex-beta-features`: absent → the preset's (`remote_compaction_v2`); `null` → not
    /// sent; a string → that.
    #[serde(default, skip_serializing_if = "Setting::is_default")]
    pub beta_features: Setting<String>,
}

impl ClientIdentity {
    /// True when nothing is set (the key is then left out of a saved Prompt file).
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }
}
