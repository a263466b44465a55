//! How the rendered prompt is counted, as data (WIRE_SPEC §19.2): the tokens each kind of segment
//! adds besides its text (role and channel markers), what an opaque part (encrypted reasoning, a
//! compaction item, an image) is estimated at, and which earlier reasoning the server still
//! renders. Text is counted with o200k_base; the rest is fitted to the server's own
//! `input_tokens` on real Codex sessions (issue 34: 34 public rollouts, 1,132 requests, the
//! growth between consecutive requests explained to a median of 1 token), one row per model
//! family ([`Counting::for_model`]): the one place to calibrate it.
//!
//! What the rendering of a request adds that a recording may not hold — the tools a rollout
//! never records, the request's own framing — is the constant part; the ledger anchors it on the
//! first request whose `input_tokens` the server reported (and says so).

use serde::{Deserialize, Serialize};

/// The counting rules of one model family. [`Counting::default`] is the gpt-5.5 row (also used
/// for families with no row of their own).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Counting {
    /// Tokens a message adds besides its text: `<|start|>`, the role, `<|message|>`, `<|end|>`.
    pub message_tokens: u64,
    /// Tokens a function call adds besides its name and arguments.
    pub call_tokens: u64,
    /// Tokens a custom tool call (freeform input) adds besides its name and input.
    pub custom_call_tokens: u64,
    /// Tokens a tool output adds besides its text.
    pub output_tokens: u64,
    /// Tokens each run of consecutive calls adds (once, at its first call).
    pub run_tokens: u64,
    /// Tokens a run of two or more calls (parallel calls) adds once more.
    pub parallel_tokens: u64,
    /// Tokens of the framing of the tool section (`## functions`, `namespace functions {`, `}`).
    pub tools_frame_tokens: u64,
    /// Tokens a rendered setting adds besides its text (the system message's lines).
    pub setting_tokens: u64,
    /// Encrypted reasoning: estimated reasoning tokens per byte of its base64 content …
    pub reasoning_tokens_per_byte: f64,
    /// … plus this (negative: the envelope of ~900 bytes carries no tokens) …
    pub reasoning_offset: f64,
    /// … plus these markers per reasoning item rendered.
    pub reasoning_marker_tokens: u64,
    /// Whether the server renders the reasoning of turns before the latest user message (the
    /// GPT-5.6 family does; earlier families drop it, so a new user turn breaks the prefix at
    /// the previous turn's first reasoning item).
    pub keeps_earlier_reasoning: bool,
    /// Estimated tokens per byte of an encrypted compaction item (after its envelope).
    pub compaction_tokens_per_byte: f64,
    /// Bytes of a compaction item's envelope (carrying no tokens).
    pub compaction_envelope_bytes: u64,
    /// Tokens of an image at `detail: "low"`.
    pub image_low_tokens: u64,
    /// Tokens of an image whose size is not known (an estimate).
    pub image_tokens: u64,
    /// Tokens every request adds (the system message's constant part).
    pub request_tokens: u64,
}

impl Default for Counting {
    fn default() -> Self {
        GPT_5_5
    }
}

/// gpt-5.3 … gpt-5.5 (fitted on 763 requests; mean |residual| under a token per step).
const GPT_5_5: Counting = Counting {
    message_tokens: 6,
    call_tokens: 8,
    custom_call_tokens: 6,
    output_tokens: 8,
    run_tokens: 7,
    parallel_tokens: 16,
    tools_frame_tokens: 12,
    setting_tokens: 2,
    reasoning_tokens_per_byte: 0.1631,
    reasoning_offset: -151.0,
    reasoning_marker_tokens: 2,
    keeps_earlier_reasoning: false,
    compaction_tokens_per_byte: 1.0 / 4.3,
    compaction_envelope_bytes: 830,
    image_low_tokens: 85,
    image_tokens: 765,
    request_tokens: 0,
};

impl Counting {
    /// The row of `model`'s family: gpt-5.1, gpt-5.2, gpt-5.3, gpt-5.4, gpt-5.5, and gpt-5.6 or
    /// later; `self` for any other model.
    pub fn for_model(&self, model: Option<&str>) -> Counting {
        let Some((major, minor)) = model.and_then(family_version) else {
            return *self;
        };
        let base = GPT_5_5;
        match (major, minor) {
            (5, 1) => Counting {
                message_tokens: 6,
                call_tokens: 10,
                custom_call_tokens: 2,
                output_tokens: 9,
                run_tokens: 0,
                parallel_tokens: 14,
                reasoning_tokens_per_byte: 1.0 / 6.2,
                reasoning_offset: -134.0,
                reasoning_marker_tokens: 30,
                ..base
            },
            (5, 2) => Counting {
                message_tokens: 3,
                call_tokens: 10,
                custom_call_tokens: 4,
                output_tokens: 10,
                run_tokens: 0,
                parallel_tokens: 14,
                reasoning_tokens_per_byte: 1.0 / 6.2,
                reasoning_offset: -134.0,
                reasoning_marker_tokens: 26,
                ..base
            },
            (5, 3) => Counting {
                message_tokens: 5,
                custom_call_tokens: 2,
                reasoning_tokens_per_byte: 0.1512,
                reasoning_offset: -127.0,
                ..base
            },
            (5, 4) => Counting {
                custom_call_tokens: 2,
                parallel_tokens: 17,
                reasoning_tokens_per_byte: 0.1436,
                reasoning_offset: -116.0,
                ..base
            },
            (5, 5) => base,
            (5, 6..) | (6.., _) => Counting {
                call_tokens: 5,
                custom_call_tokens: 1,
                output_tokens: 5,
                run_tokens: 14,
                reasoning_tokens_per_byte: 0.1530,
                reasoning_offset: -141.0,
                reasoning_marker_tokens: 1,
                keeps_earlier_reasoning: true,
                ..base
            },
            _ => *self,
        }
    }

    /// Estimated tokens of encrypted reasoning of `bytes` (its markers included).
    pub fn reasoning(&self, bytes: usize) -> u64 {
        let tokens = bytes as f64 * self.reasoning_tokens_per_byte + self.reasoning_offset;
        tokens.max(0.0).round() as u64 + self.reasoning_marker_tokens
    }

    /// Estimated tokens of an encrypted compaction item of `bytes`.
    pub fn compaction(&self, bytes: usize) -> u64 {
        let payload = (bytes as u64).saturating_sub(self.compaction_envelope_bytes);
        (payload as f64 * self.compaction_tokens_per_byte).round() as u64
    }

    /// A small code for the family row (so memoised segments of two families never mix).
    pub fn code(&self) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for v in [
            self.message_tokens,
            self.call_tokens,
            self.custom_call_tokens,
            self.output_tokens,
            self.run_tokens,
            self.parallel_tokens,
            self.reasoning_tokens_per_byte.to_bits(),
            self.reasoning_offset.to_bits(),
            self.reasoning_marker_tokens,
            u64::from(self.keeps_earlier_reasoning),
            self.image_tokens,
            self.request_tokens,
        ] {
            h = (h ^ v).wrapping_mul(0x0100_0000_01b3);
        }
        h
    }
}

/// `(major, minor)` of a `gpt-X.Y…` slug (`ns/` prefixes ignored); None for other names.
pub fn family_version(slug: &str) -> Option<(u64, u64)> {
    let name = slug.rsplit('/').next().unwrap_or(slug);
    let version = name.strip_prefix("gpt-")?;
    let digits = |s: &str| -> Option<u64> {
        let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
        s[..end].parse().ok()
    };
    let major = digits(version)?;
    let rest = &version[major.to_string().len()..];
    let minor = rest.strip_prefix('.').and_then(digits).unwrap_or(0);
    Some((major, minor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_have_their_rows() {
        let base = Counting::default();
        assert_eq!(base.for_model(Some("gpt-5.5")), GPT_5_5);
        assert!(base.for_model(Some("gpt-5.6-sol")).keeps_earlier_reasoning);
        assert!(base.for_model(Some("openai/gpt-6")).keeps_earlier_reasoning);
        assert_eq!(base.for_model(Some("gpt-5.2-codex")).message_tokens, 3);
        assert_eq!(base.for_model(Some("o3")), base);
        assert_eq!(base.for_model(None), base);
        // gpt-5.5: a 1,764-byte blob is ~137 reasoning tokens and its 2 markers.
        assert_eq!(base.reasoning(1764), 137 + 2);
        // An envelope alone is no reasoning.
        assert_eq!(base.reasoning(400), 2);
        assert_eq!(family_version("gpt-5.4-mini"), Some((5, 4)));
        assert_eq!(family_version("codex-mini"), None);
    }
}
