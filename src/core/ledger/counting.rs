//! How the rendered prompt is counted, as data (WIRE_SPEC §19.2): the tokens each kind of segment
//! adds besides its text (role and channel markers), what an opaque part (encrypted reasoning, a
//! compaction item, an image) is estimated at, and a constant per request. Text is counted with
//! o200k_base; everything here is an estimate of the server's own rendering, which is not
//! published, and is the one place to calibrate it against the server's `input_tokens`.

use serde::{Deserialize, Serialize};

/// The counting rules. [`Counting::default`] holds the harmony format's markers.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Counting {
    /// Tokens a message adds besides its text: `<|start|>`, the role, `<|message|>`, `<|end|>`.
    pub message_tokens: u64,
    /// Tokens a tool call adds besides its name and arguments (`<|start|>assistant<|channel|>
    /// commentary to=functions.NAME <|constrain|>json<|message|>` … `<|call|>`).
    pub call_tokens: u64,
    /// Tokens a tool output adds besides its text (`<|start|>functions.NAME to=assistant
    /// <|channel|>commentary<|message|>` … `<|end|>`).
    pub output_tokens: u64,
    /// Tokens of the framing of the tool section (`## functions`, `namespace functions {`, `}`).
    pub tools_frame_tokens: u64,
    /// Tokens a rendered setting adds besides its text (the system message's lines).
    pub setting_tokens: u64,
    /// Estimated tokens per byte of encrypted reasoning content (base64).
    pub reasoning_tokens_per_byte: f64,
    /// Estimated tokens per byte of an encrypted compaction item.
    pub compaction_tokens_per_byte: f64,
    /// Tokens of an image at `detail: "low"`.
    pub image_low_tokens: u64,
    /// Tokens of an image at any other detail (its size is not known: an estimate).
    pub image_tokens: u64,
    /// Tokens every request adds (the system message's constant part).
    pub request_tokens: u64,
}

impl Default for Counting {
    fn default() -> Self {
        Self {
            message_tokens: 4,
            call_tokens: 9,
            output_tokens: 8,
            tools_frame_tokens: 12,
            setting_tokens: 2,
            reasoning_tokens_per_byte: 0.1875,
            compaction_tokens_per_byte: 0.1875,
            image_low_tokens: 85,
            image_tokens: 765,
            request_tokens: 0,
        }
    }
}

impl Counting {
    /// Estimated tokens of an opaque blob of `bytes` at `per_byte` tokens a byte.
    pub fn opaque(bytes: usize, per_byte: f64) -> u64 {
        (bytes as f64 * per_byte).round() as u64
    }
}
